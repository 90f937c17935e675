//! The records of the logical stream, borrowed ([`Event`]) and owned ([`OwnedRecord`]), the
//! header, and the owned [`Profile`] (the crate docs, "Header", "Body records").
//!
//! [`Record`] and [`Frame`] are generic over their string type `S` and byte-payload type `B`, so
//! the same enum is the zero-copy event (`PerlStr<'a>`, `&'a [u8]`) and the owned model
//! (`PerlString`, `Vec<u8>`).

use core::fmt;

use crate::raw::ID_LEN;

/// A Perl string as stored: a flag byte (bit 0 = `SvUTF8`) and the bytes, borrowed.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PerlStr<'a> {
    /// The flag byte; the writer only emits 0 or 1, the reader looks at bit 0 only.
    pub flags: u8,
    /// The bytes (UTF-8 when `flags & 1`, otherwise Perl bytes, often Latin-1 or UTF-8).
    pub bytes: &'a [u8],
}

/// A Perl string as stored, owned.
#[derive(Clone, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct PerlString {
    /// The flag byte; bit 0 = `SvUTF8`.
    pub flags: u8,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// What the writer needs of a string: its flag byte and bytes.
pub trait PerlText {
    /// The flag byte.
    fn flags(&self) -> u8;
    /// The bytes.
    fn bytes(&self) -> &[u8];
    /// The string as text: the bytes as UTF-8 when valid, else each byte as a Latin-1 character
    /// (how Perl reads a byte string).
    fn to_text(&self) -> String {
        match std::str::from_utf8(self.bytes()) {
            Ok(s) => s.to_owned(),
            Err(_) => self.bytes().iter().map(|&b| char::from(b)).collect(),
        }
    }
}

impl PerlText for PerlStr<'_> {
    fn flags(&self) -> u8 {
        self.flags
    }
    fn bytes(&self) -> &[u8] {
        self.bytes
    }
}

impl PerlText for PerlString {
    fn flags(&self) -> u8 {
        self.flags
    }
    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl<'a> PerlStr<'a> {
    /// A byte string (flag 0).
    pub const fn bytes(bytes: &'a [u8]) -> Self {
        PerlStr { flags: 0, bytes }
    }
    /// True when the UTF-8 flag is set.
    pub fn is_utf8(&self) -> bool {
        self.flags & 1 != 0
    }
    /// An owned copy.
    pub fn to_owned(&self) -> PerlString {
        PerlString {
            flags: self.flags,
            bytes: self.bytes.to_vec(),
        }
    }
}

impl PerlString {
    /// A byte string (flag 0) from text.
    pub fn new(text: impl Into<Vec<u8>>) -> Self {
        PerlString {
            flags: 0,
            bytes: text.into(),
        }
    }
    /// A UTF-8 string (flag 1).
    pub fn utf8(text: &str) -> Self {
        PerlString {
            flags: 1,
            bytes: text.as_bytes().to_vec(),
        }
    }
    /// A borrowed view.
    pub fn as_str(&self) -> PerlStr<'_> {
        PerlStr {
            flags: self.flags,
            bytes: &self.bytes,
        }
    }
}

impl fmt::Debug for PerlStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.to_text())?;
        if self.flags != 0 {
            write!(f, "/{}", self.flags)?;
        }
        Ok(())
    }
}

/// The text: UTF-8 bytes as they are, other bytes as Latin-1 characters (how Perl reads a byte
/// string); the flag byte is not shown.
impl fmt::Display for PerlStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match std::str::from_utf8(self.bytes) {
            Ok(text) => f.pad(text),
            Err(_) => {
                for &b in self.bytes {
                    fmt::Write::write_char(f, char::from(b))?;
                }
                Ok(())
            }
        }
    }
}

/// As [`PerlStr`]'s `Display`.
impl fmt::Display for PerlString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.as_str(), f)
    }
}

impl fmt::Debug for PerlString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_str().fmt(f)
    }
}

/// One stack frame (the crate docs, Body records 3-6). Lines are the reader's `int`: the varint
/// bits as `i32`, so an unknown first line reads -1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Frame<S> {
    /// A Perl sub (tag 3).
    Sub {
        /// Package of the sub's glob.
        package: S,
        /// Sub name without the package.
        name: S,
        /// File of the current line.
        file: S,
        /// Current line.
        line: i32,
        /// Line of the sub's first statement, -1 when unknown.
        first_line: i32,
    },
    /// An XSUB (tag 5): no file or line.
    Xsub {
        /// Package.
        package: S,
        /// Sub name.
        name: S,
    },
    /// An eval STRING (tag 4); the file is `(eval N)`.
    Eval {
        /// File name.
        file: S,
        /// Line.
        line: i32,
    },
    /// The main program, or a require/do FILE (tag 6).
    Main {
        /// File name.
        file: S,
        /// Line.
        line: i32,
    },
}

/// One record of the logical stream body (the crate docs, Body records). Every record the real
/// writer emits has a variant; others are [`Record::Unknown`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Record<S, B> {
    /// Tag 1: a sample starts.
    SampleStart {
        /// Timer ticks since the previous sample (may be 0).
        weight: u32,
        /// Name of the last executed op, `_xsub` for an XSUB, empty for a synthetic sample.
        op_name: S,
    },
    /// Tags 3-6: a frame of the open sample, innermost first.
    Frame(Frame<S>),
    /// Tag 8: the source of eval STRING number `seq` (`(eval seq)`).
    EvalSource {
        /// The eval's text (a trailing `"\n;"` stripped by the writer).
        source: S,
        /// The eval sequence number.
        seq: u32,
    },
    /// Tag 2: the sample ends. `skipped` holds the bytes the length field covered (always empty
    /// from the real writer; the real reader skips them).
    SampleEnd {
        /// Bytes skipped by the reader.
        skipped: B,
    },
    /// Tag 198: a section starts.
    SectionStart {
        /// Section name.
        name: S,
    },
    /// Tag 199: a section ends.
    SectionEnd {
        /// Section name.
        name: S,
    },
    /// Tag 200: custom metadata written at run time.
    Metadata {
        /// Key.
        key: S,
        /// Value.
        value: S,
    },
    /// Tag 196: this file ends; the process continues in the next file.
    FileEnd,
    /// Tag 197: the process stopped profiling.
    StreamEnd,
    /// Any other tag: skipped by the real reader using the stored length.
    Unknown {
        /// The tag.
        tag: u8,
        /// The bytes the length field covered.
        payload: B,
    },
}

/// A borrowed record, as the [`Reader`](crate::Reader) yields it.
pub type Event<'a> = Record<PerlStr<'a>, &'a [u8]>;
/// An owned record.
pub type OwnedRecord = Record<PerlString, Vec<u8>>;
/// An owned frame.
pub type OwnedFrame = Frame<PerlString>;

impl<S> Frame<S> {
    /// The frame's tag.
    pub fn tag(&self) -> u8 {
        use crate::raw::tag;
        match self {
            Frame::Sub { .. } => tag::SUB_FRAME,
            Frame::Xsub { .. } => tag::XSUB_FRAME,
            Frame::Eval { .. } => tag::EVAL_FRAME,
            Frame::Main { .. } => tag::MAIN_FRAME,
        }
    }

    /// The file, for frames that have one.
    pub fn file(&self) -> Option<&S> {
        match self {
            Frame::Sub { file, .. } | Frame::Eval { file, .. } | Frame::Main { file, .. } => {
                Some(file)
            }
            Frame::Xsub { .. } => None,
        }
    }
}

/// The frame's name as a profile report shows it: `Package::name` for a sub or an XSUB, the file
/// (`t.pl`, `(eval 3)`) for an eval STRING or a main frame; no line, so that the samples of one
/// function share its name.
impl<S: fmt::Display> fmt::Display for Frame<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Frame::Sub { package, name, .. } | Frame::Xsub { package, name } => {
                write!(f, "{package}::{name}")
            }
            Frame::Eval { file, .. } | Frame::Main { file, .. } => write!(f, "{file}"),
        }
    }
}

impl<S> Frame<S> {
    /// The same frame with every string converted by `f`.
    pub fn map<'a, T>(&'a self, mut f: impl FnMut(&'a S) -> T) -> Frame<T> {
        match self {
            Frame::Sub {
                package,
                name,
                file,
                line,
                first_line,
            } => Frame::Sub {
                package: f(package),
                name: f(name),
                file: f(file),
                line: *line,
                first_line: *first_line,
            },
            Frame::Xsub { package, name } => Frame::Xsub {
                package: f(package),
                name: f(name),
            },
            Frame::Eval { file, line } => Frame::Eval {
                file: f(file),
                line: *line,
            },
            Frame::Main { file, line } => Frame::Main {
                file: f(file),
                line: *line,
            },
        }
    }
}

impl<S, B> Record<S, B> {
    /// The same record with every string converted by `fs` and every byte payload by `fb`.
    pub fn map<'a, T, C>(
        &'a self,
        mut fs: impl FnMut(&'a S) -> T,
        fb: impl FnOnce(&'a B) -> C,
    ) -> Record<T, C> {
        match self {
            Record::SampleStart { weight, op_name } => Record::SampleStart {
                weight: *weight,
                op_name: fs(op_name),
            },
            Record::Frame(f) => Record::Frame(f.map(fs)),
            Record::EvalSource { source, seq } => Record::EvalSource {
                source: fs(source),
                seq: *seq,
            },
            Record::SampleEnd { skipped } => Record::SampleEnd {
                skipped: fb(skipped),
            },
            Record::SectionStart { name } => Record::SectionStart { name: fs(name) },
            Record::SectionEnd { name } => Record::SectionEnd { name: fs(name) },
            Record::Metadata { key, value } => Record::Metadata {
                key: fs(key),
                value: fs(value),
            },
            Record::FileEnd => Record::FileEnd,
            Record::StreamEnd => Record::StreamEnd,
            Record::Unknown { tag, payload } => Record::Unknown {
                tag: *tag,
                payload: fb(payload),
            },
        }
    }
}

impl Frame<PerlStr<'_>> {
    /// An owned copy.
    pub fn to_owned(&self) -> OwnedFrame {
        self.map(PerlStr::to_owned)
    }
}

impl OwnedFrame {
    /// A borrowed view.
    pub fn as_ref(&self) -> Frame<PerlStr<'_>> {
        self.map(PerlString::as_str)
    }
}

impl Event<'_> {
    /// An owned copy.
    pub fn to_owned(&self) -> OwnedRecord {
        self.map(PerlStr::to_owned, |b| b.to_vec())
    }
}

impl OwnedRecord {
    /// A borrowed view.
    pub fn as_ref(&self) -> Event<'_> {
        self.map(PerlString::as_str, Vec::as_slice)
    }
}

/// Perl's version triple (header tag 201).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct PerlVersion {
    /// `PERL_REVISION` (5).
    pub revision: u32,
    /// `PERL_VERSION` (36).
    pub version: u32,
    /// `PERL_SUBVERSION` (0).
    pub subversion: u32,
}

/// A process id: 6 `uint32` in the writer's native byte order (pid, thread id, time, 3 random
/// numbers; R:436-449), kept as the 24 raw bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct ProcessId(pub [u8; ID_LEN]);

impl ProcessId {
    /// The six words read little-endian (the byte order of every machine the profiler runs on
    /// in practice; the real reader uses its own native order).
    pub fn words(&self) -> [u32; 6] {
        let mut out = [0u32; 6];
        for (i, w) in out.iter_mut().enumerate() {
            let b = &self.0[i * 4..i * 4 + 4];
            *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        out
    }

    /// An id from six words, stored little-endian.
    pub fn from_words(words: [u32; 6]) -> Self {
        let mut out = [0u8; ID_LEN];
        for (i, w) in words.iter().enumerate() {
            out[i * 4..i * 4 + 4].copy_from_slice(&w.to_le_bytes());
        }
        ProcessId(out)
    }

    /// The 48-hex-digit form used in file names and by the reader (`%08x` per word, T:282-290).
    pub fn hex(&self) -> String {
        self.words().iter().map(|w| format!("{w:08x}")).collect()
    }

    /// Parses the 48-hex-digit form.
    pub fn from_hex(hex: &str) -> Option<Self> {
        if hex.len() != 48 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let mut words = [0u32; 6];
        for (i, w) in words.iter_mut().enumerate() {
            *w = u32::from_str_radix(hex.get(i * 8..i * 8 + 8)?, 16).ok()?;
        }
        Some(ProcessId::from_words(words))
    }

    /// True for the all-zero id of "no parent".
    pub fn is_zero(&self) -> bool {
        self.0 == [0; ID_LEN]
    }
}

/// The 48-hex-digit form ([`ProcessId::hex`]).
impl fmt::Display for ProcessId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for w in self.words() {
            write!(f, "{w:08x}")?;
        }
        Ok(())
    }
}

/// `5.36.0`.
impl fmt::Display for PerlVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.revision, self.version, self.subversion)
    }
}

impl fmt::Debug for ProcessId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

/// Which process and which of its files this is (header tag 205).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Genealogy {
    /// The file's ordinal within its process, from 1.
    pub ordinal: u32,
    /// The parent's ordinal at fork time (0 for a root process).
    pub parent_ordinal: u32,
    /// This process.
    pub id: ProcessId,
    /// The parent process (all zero for a root process).
    pub parent_id: ProcessId,
}

/// The file header (the crate docs, Header). Fields the file lacks are `None`; a repeated
/// record keeps the last value, as the real reader does.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Header {
    /// Perl version (tag 201).
    pub perl_version: Option<PerlVersion>,
    /// Sampling interval in microseconds (tag 202).
    pub tick_duration_us: Option<u32>,
    /// Stack collection depth (tag 203).
    pub stack_depth: Option<u32>,
    /// Genealogy (tag 205).
    pub genealogy: Option<Genealogy>,
    /// Custom metadata given with `-metadata` (tag 200), in file order.
    pub metadata: Vec<(PerlString, PerlString)>,
}

/// How the logical stream is stored after the prologue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Container {
    /// Snappy packets (the default build, `-DSNAPPY=1`).
    #[default]
    Snappy,
    /// The logical stream as is (a build without Snappy).
    Plain,
}

/// One file, owned: its header and every body record in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Profile {
    /// How the stream is stored.
    pub container: Container,
    /// The header.
    pub header: Header,
    /// Body records in stream order.
    pub records: Vec<OwnedRecord>,
}

impl Profile {
    /// Reads a whole file into the owned model.
    pub fn parse(data: &[u8]) -> Result<Profile, crate::Error> {
        let mut reader = crate::Reader::from_slice(data)?;
        let mut records = Vec::new();
        while let Some(event) = reader.next_event()? {
            records.push(event.to_owned());
        }
        Ok(Profile {
            container: reader.container(),
            header: reader.header().clone(),
            records,
        })
    }

    /// Writes the file as the real writer would (same logical stream, lengths included).
    pub fn write<W: std::io::Write>(&self, out: W) -> std::io::Result<W> {
        let mut writer = crate::Writer::new(out, &self.header, self.container)?;
        for record in &self.records {
            writer.write(&record.as_ref())?;
        }
        writer.finish()
    }

    /// The file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        // Writing into a Vec cannot fail.
        self.write(Vec::new()).unwrap_or_default()
    }
}
