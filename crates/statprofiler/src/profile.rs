//! Samples in the format-neutral profile model of [`profcodec_profile`] (the default `profile`
//! feature): what `profcodec top` and `profcodec diff` read.
//!
//! # What the model holds
//!
//! Every sample the real reader returns ([`TraceReader`]) is one stack of the call tree with its
//! weight, as `Devel::StatProfiler::Report` aggregates them (`add_trace_file`):
//!
//! - **value types**: `samples` ([`Unit::Samples`]): the samples' weights, the timer ticks each
//!   stands for, which the report calls its sample counts; and `time` ([`Unit::Microseconds`]):
//!   the weight times the header's tick duration, where the header records one. `time` is the
//!   default value type when present. Both are measured as self values
//!   ([`Measured::SelfOnly`]): inclusive values are computed from the tree.
//! - **contexts**: one per process ([`IdKind::Process`] with the pid, the first word of the
//!   genealogy id), named after its main program (the file of the outermost main frame of its
//!   first sample that has one). A process's files (rotations) add to the same context; a file
//!   without a genealogy record gets the context of no process (the empty identifier tuple).
//! - **frames**, all [`FrameKind::Function`], named as the report names its subs:
//!   - a sub: function `Package::name`, the file of its current line (an eval STRING's file as
//!     the reader shows it, `qeval:<process id>/(eval N)`), that line, module `Package`. A
//!     special block (`BEGIN`, `UNITCHECK`, `CHECK`, `INIT`, `END`: one per `use`) or an
//!     anonymous sub (`__ANON__`) is named with its first line, `main::BEGIN@3`, as
//!     Devel::NYTProf names `BEGIN` blocks: a file holds many of them, which the report tells
//!     apart by their first line and the model by their name. Inside an eval STRING, where
//!     every eval starts at line 1, the name holds the eval too, `main::__ANON__@(eval 12):1`,
//!     as the report's sub key holds the eval's file;
//!   - an XSUB: function `Package::name`, module `Package`, no file or line;
//!   - a main program or `require`d file: function `<file>:main`, that file and line;
//!   - an eval STRING: function and file `qeval:<process id>/(eval N)`, and its line;
//!   - a sample whose last op is one of the report's *slow ops* (`sort`, `readline`,
//!     `waitpid`...: I/O, system calls, regular expressions; [`SLOW_OPS`]) gets an innermost
//!     frame `CORE::<op>` in the file of the sample's innermost frame, module `CORE`, as the
//!     report adds it ([`ProfileConverter::set_slow_op_frames`] turns this off).
//!
//!   Lines of 0 or less (an XSUB's -1) are not kept. A frame's line is the line it was at, so
//!   grouping by function sums a sub's lines, and grouping by line gives the report's per-line
//!   view.
//!
//! # Agreement with the report
//!
//! Grouped by function, a row's self value is the report's *exclusive* count of that sub, and
//! its inclusive value the report's *inclusive* count: both count a sample once per sub however
//! often the sub recurses in its stack. The total is the report's `total`. The report tells two
//! subs apart by file, name and first line (`uq_sub_name`); the model's function rows by file,
//! name and package, so two ordinary subs of one name in one file (a sub redefined at run time)
//! make one row (special blocks and anonymous subs carry their first line in their name). Grouped by line,
//! self values are the report's per-line exclusive counts; a line's inclusive value counts a
//! sample once where the report counts it once per frame at that line (recursion through the
//! same line). These are checked on every corpus file against the real reader's dumps
//! (`tests/profile.rs`).
//!
//! # Costs
//!
//! Memory is bounded by the distinct frames and call paths (and, while a file is read, by the
//! reader's window and the longest sample), never by the number of samples. Each sample's stack
//! is walked down the model's call tree from the root: a frame is compared (field by field,
//! nothing copied) with the frame at the same depth of the sample before while the two stacks
//! agree (a sampler's successive stacks share their outer frames), then with the few callees
//! already seen below its caller, and only a frame found by neither is keyed and looked up by
//! content. The sample's weight is added to a per-node counter that is handed to the model once
//! per process. Time is linear in the logical stream: each frame costs at most a bounded number
//! of comparisons and one lookup.
//!
//! ```
//! use profcodec_profile::{Order, Query};
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/statprofiler/features.statprof");
//! let profile = profcodec_statprofiler::to_profile(&std::fs::read(path)?)?;
//! let top = profile.top(&Query::new().value_type("samples").by(Order::Inclusive).limit(5))?;
//! for row in &top.rows {
//!     println!("{:>6} {:>6}  {}", row.self_value, row.inclusive.unwrap_or(0.0), row.name);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashMap;
use std::fmt::Write as _;

use profcodec_profile::{
    Context, ContextId, Frame as ModelFrame, FrameId, FrameKind, IdKind, Measured, ModelError,
    NodeId, Profile as ModelProfile, ProfileBuilder, StringId, Unit, ValueTypeId,
};

use crate::error::{Error, StreamPos};
use crate::model::{Frame, PerlStr, ProcessId};
use crate::read::packets::StreamSource;
use crate::read::{Reader, Trace, TraceReader, is_eval_file, reader_file_name};

/// The ops after which `Devel::StatProfiler::Report` adds a `CORE::<op>` frame (its `slowops`
/// default, `Devel::StatProfiler::Slowops`, made at build time from the `Opcode` op sets
/// `:base_io :filesys_read :filesys_write :filesys_open :sys_db :subprocess :others`, plus
/// `match subst substcont qr regcomp prtf crypt chdir flock ioctl socket getpeername ssockopt
/// bind connect listen accept shutdown gsockopt getsockname sleep sort pack unpack syscall dump
/// chroot dbmopen dbmclose lock sselect select`, less `fileno require dofile fork`), as perl
/// 5.36 expands them. Sorted, for a binary search.
pub const SLOW_OPS: &[&str] = &[
    "accept",
    "backtick",
    "bind",
    "binmode",
    "chdir",
    "chmod",
    "chown",
    "chroot",
    "close",
    "closedir",
    "connect",
    "crypt",
    "dbmclose",
    "dbmopen",
    "dump",
    "egrent",
    "ehostent",
    "enetent",
    "enterwrite",
    "eof",
    "eprotoent",
    "epwent",
    "eservent",
    "fcntl",
    "flock",
    "formline",
    "ftatime",
    "ftbinary",
    "ftblk",
    "ftchr",
    "ftctime",
    "ftdir",
    "fteexec",
    "fteowned",
    "fteread",
    "ftewrite",
    "ftfile",
    "ftis",
    "ftlink",
    "ftmtime",
    "ftpipe",
    "ftrexec",
    "ftrowned",
    "ftrread",
    "ftrwrite",
    "ftsgid",
    "ftsize",
    "ftsock",
    "ftsuid",
    "ftsvtx",
    "fttext",
    "fttty",
    "ftzero",
    "getc",
    "getlogin",
    "getpeername",
    "getsockname",
    "ggrent",
    "ggrgid",
    "ggrnam",
    "ghbyaddr",
    "ghbyname",
    "ghostent",
    "glob",
    "gnbyaddr",
    "gnbyname",
    "gnetent",
    "gpbyname",
    "gpbynumber",
    "gprotoent",
    "gpwent",
    "gpwnam",
    "gpwuid",
    "gsbyname",
    "gsbyport",
    "gservent",
    "gsockopt",
    "ioctl",
    "leavewrite",
    "link",
    "listen",
    "lock",
    "lstat",
    "match",
    "mkdir",
    "msgctl",
    "msgget",
    "msgrcv",
    "msgsnd",
    "open",
    "open_dir",
    "pack",
    "print",
    "prtf",
    "qr",
    "rcatline",
    "read",
    "readdir",
    "readline",
    "readlink",
    "recv",
    "regcomp",
    "rename",
    "rewinddir",
    "rmdir",
    "say",
    "seek",
    "seekdir",
    "select",
    "semctl",
    "semget",
    "semop",
    "send",
    "sgrent",
    "shmctl",
    "shmget",
    "shmread",
    "shmwrite",
    "shostent",
    "shutdown",
    "sleep",
    "snetent",
    "socket",
    "sort",
    "sprotoent",
    "spwent",
    "sselect",
    "sservent",
    "ssockopt",
    "stat",
    "subst",
    "substcont",
    "symlink",
    "syscall",
    "sysopen",
    "sysread",
    "sysseek",
    "system",
    "syswrite",
    "tell",
    "telldir",
    "truncate",
    "umask",
    "unlink",
    "unpack",
    "utime",
    "wait",
    "waitpid",
];

/// True when the report adds a `CORE::<op>` frame for `op` ([`SLOW_OPS`]).
pub fn is_slow_op(op: &[u8]) -> bool {
    SLOW_OPS
        .binary_search_by(|probe| probe.as_bytes().cmp(op))
        .is_ok()
}

/// Why a file could not be converted into the profile model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    /// The file could not be read (what was converted before the damage is kept).
    #[error(transparent)]
    Read(#[from] Error),
    /// The model refused an entry: more distinct strings, frames or call paths than its `u32`
    /// handles name.
    #[error("{source}: sample at {pos}")]
    Model {
        /// The model's error.
        source: ModelError,
        /// Where the sample being added was read.
        pos: StreamPos,
    },
}

impl ProfileError {
    /// The file offset of the damage, or of the packet holding the sample the model refused.
    pub fn offset(&self) -> Option<u64> {
        match self {
            ProfileError::Read(e) => e.offset(),
            ProfileError::Model { pos, .. } => Some(pos.file),
        }
    }
}

/// One file in the profile model (see the [module docs](self)): its process as one context.
pub fn to_profile(file: &[u8]) -> Result<ModelProfile, ProfileError> {
    let mut converter = ProfileConverter::new();
    converter.add_file(file)?;
    Ok(converter.finish())
}

/// The weights of the samples read since the last flush, by call-tree node, for one process at
/// one tick duration.
#[derive(Debug, Default)]
struct Batch {
    process: Option<ProcessId>,
    tick_us: Option<u32>,
    /// The main program, for the context's name.
    program: Option<String>,
    /// True until the program is known, or when the process's context exists already.
    wants_program: bool,
    /// Weight by node index; zero for nodes not in `touched`.
    weights: Vec<u64>,
    touched: Vec<NodeId>,
}

/// Builds one [`profcodec_profile::Profile`] from the files of a run: add files (or trace
/// readers) one by one, in any order, then [`finish`](ProfileConverter::finish). A process's
/// files (its rotations) add up in one context; a session's processes get one context each.
#[derive(Debug)]
pub struct ProfileConverter {
    builder: ProfileBuilder,
    samples_type: ValueTypeId,
    time_type: Option<ValueTypeId>,
    slow_op_frames: bool,
    named: bool,
    contexts: HashMap<Option<ProcessId>, ContextId>,
    /// Model frames by the bytes of the stored frame ([`frame_key`]), for the current process
    /// (an eval's file name depends on the process), with the index of those bytes in `keys`.
    frames: KeyMap,
    /// The keys of `frames`, by index.
    keys: Vec<Box<[u8]>>,
    /// The call tree of the current process as the model's nodes, each node's callees found by
    /// comparing frames with their keys ([`Trie`]).
    trie: Trie,
    /// The nodes of the previous sample's stack, outermost first: a sampler's successive stacks
    /// share their outer frames, found here by one comparison each.
    previous: Vec<NodeId>,
    key: Vec<u8>,
    /// The leaf nodes of the stacks seen in the current batch, by their frame records.
    stacks: StackCache,
    /// The last op name looked up in [`SLOW_OPS`] and whether it is one.
    last_op: (Vec<u8>, bool),
    text: String,
    batch: Batch,
}

impl Default for ProfileConverter {
    fn default() -> Self {
        ProfileConverter::new()
    }
}

/// A multiply-rotate hasher (the Firefox and rustc "Fx" hash) for the frame keys: they are
/// built by this module from a file's frames, and a lookup per changed frame must cost little
/// next to reading the frame. A hostile file can make keys collide only as much as it makes
/// distinct frames, each of which it pays for in bytes.
#[derive(Debug, Default, Clone, Copy)]
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
        }
        let mut tail = [0u8; 8];
        let rest = chunks.remainder();
        tail[..rest.len()].copy_from_slice(rest);
        self.0 =
            (self.0.rotate_left(5) ^ u64::from_le_bytes(tail) ^ rest.len() as u64).wrapping_mul(K);
    }

    fn finish(&self) -> u64 {
        // The table picks buckets by the low bits, which the multiply leaves weakest: mix them.
        let h = self.0;
        (h ^ (h >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ (h >> 32)
    }
}

/// A frame key's model frame and the key's index in [`ProfileConverter::keys`].
type KeyMap = HashMap<Box<[u8]>, (FrameId, u32), std::hash::BuildHasherDefault<KeyHasher>>;

/// The bytes of keys [`StackCache`] keeps at most: beyond, samples of stacks not seen yet are
/// walked frame by frame every time (a profile with that many distinct stacks gains little from
/// the cache).
const STACK_CACHE_BYTES: usize = 8 << 20;

/// What [`StackCache`] counts for each entry besides its key's bytes (the box and the slot).
const STACK_ENTRY_BYTES: usize = 40;

/// The node a sample's stack ends at, by the sample's encoded frame records
/// ([`Trace::frame_records`]), the reader's setting and the op name when it adds a frame: a
/// sampled program returns to the same stacks, and one comparison of their bytes replaces
/// resolving, comparing and walking every frame. Keys hash with a random seed (they come from
/// the file); the table holds [`STACK_CACHE_BYTES`] at most.
#[derive(Debug, Default)]
struct StackCache {
    leaves: HashMap<Box<[u8]>, NodeId, foldhash::fast::RandomState>,
    bytes: usize,
    /// The key of the last lookup (empty when the cache has stopped).
    key: Vec<u8>,
    /// Lookups and hits since the batch started.
    lookups: u32,
    hits: u32,
}

/// Lookups after which [`StackCache`] stops for the batch when fewer than a quarter found their
/// stack: samples that rarely repeat a stack (a program that never returns to the same stacks)
/// would pay for a key, a lookup and an entry each and gain nothing.
const STACK_CACHE_TRIAL: u32 = 4096;

impl StackCache {
    /// Makes the key of a sample and returns the node its stack ended at last time, if known;
    /// `None` also when the cache has stopped (then [`insert`](Self::insert) does nothing).
    fn find(
        &mut self,
        records: &[u8],
        drop_after_begin: bool,
        slow_op: Option<&[u8]>,
    ) -> Option<NodeId> {
        self.key.clear();
        if self.lookups >= STACK_CACHE_TRIAL && self.hits < self.lookups / 4 {
            return None;
        }
        self.lookups = self.lookups.saturating_add(1);
        self.key.push(u8::from(drop_after_begin));
        if let Some(op) = slow_op {
            // Length first, so that no op and record bytes can pass for another's.
            self.key.extend_from_slice(&(op.len() as u64).to_le_bytes());
            self.key.extend_from_slice(op);
        }
        self.key.extend_from_slice(records);
        let found = self.leaves.get(self.key.as_slice()).copied();
        self.hits = self.hits.saturating_add(u32::from(found.is_some()));
        found
    }

    /// Records `leaf` for the key of the last [`find`](Self::find), while there is room.
    fn insert(&mut self, leaf: NodeId) {
        let cost = self.key.len() + STACK_ENTRY_BYTES;
        if !self.key.is_empty() && self.bytes + cost <= STACK_CACHE_BYTES {
            self.bytes += cost;
            self.leaves.insert(self.key.as_slice().into(), leaf);
        }
    }

    fn clear(&mut self) {
        self.leaves.clear();
        self.bytes = 0;
        self.lookups = 0;
        self.hits = 0;
    }
}

/// The callees of a node scanned one by one, each compared with the frame sought, before the
/// frame is looked up by its key: a sampled node has few callees.
const CALLEES_SCANNED: usize = 8;

/// The call tree of one process over the model's nodes (indexed by node id): each node's callees
/// as a list, each with the key of its frame. A node's entries are valid in the generation they
/// were set in; a new process starts a new generation, so nothing is cleared node by node.
#[derive(Debug, Default)]
struct Trie {
    generation: u32,
    /// The roots' list.
    roots: Option<NodeId>,
    /// Per node: the generation its entries belong to.
    valid: Vec<u32>,
    /// Per node: its first callee.
    first: Vec<Option<NodeId>>,
    /// Per node: the next callee of its caller.
    next: Vec<Option<NodeId>>,
    /// Per node: the index of its frame's key.
    key: Vec<u32>,
}

impl Trie {
    /// Forgets every list (a new process: keys change meaning).
    fn reset(&mut self) {
        self.roots = None;
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // After 2^32 processes, entries of the first generation would look valid again.
            self.valid.fill(0);
            self.generation = 1;
        }
    }

    fn first_of(&self, parent: Option<NodeId>) -> Option<NodeId> {
        match parent {
            None => self.roots,
            Some(p) => self.first[p.index()],
        }
    }

    fn is_linked(&self, node: NodeId) -> bool {
        self.valid.get(node.index()) == Some(&self.generation)
    }

    /// Adds `node` (found by the key of index `key`) to the callees of `parent`.
    fn link(&mut self, parent: Option<NodeId>, node: NodeId, key: u32) {
        let n = node.index();
        if self.valid.len() <= n {
            // Nodes come in order: grown by half again at least, not one by one.
            let len = (n + 1).max(self.valid.len() + self.valid.len() / 2);
            self.valid.resize(len, 0);
            self.first.resize(len, None);
            self.next.resize(len, None);
            self.key.resize(len, 0);
        }
        self.valid[n] = self.generation;
        self.first[n] = None;
        self.key[n] = key;
        let head = match parent {
            None => &mut self.roots,
            Some(p) => &mut self.first[p.index()],
        };
        self.next[n] = head.replace(node);
    }
}

/// The length of a frame key's fixed part: a tag, two numbers and three string lengths.
const KEY_HEAD: usize = 21;

/// The fixed part of a frame key: `tag`, the numbers `a` and `b`, the lengths of `strings`
/// (of which there are at most three).
fn key_head(tag: u8, a: i32, b: i32, strings: [&[u8]; 3]) -> [u8; KEY_HEAD] {
    let mut head = [0u8; KEY_HEAD];
    head[0] = tag;
    head[1..5].copy_from_slice(&a.to_le_bytes());
    head[5..9].copy_from_slice(&b.to_le_bytes());
    for (i, s) in strings.iter().enumerate() {
        let at = 9 + 4 * i;
        head[at..at + 4].copy_from_slice(&(s.len() as u32).to_le_bytes());
    }
    head
}

/// A frame's tag, numbers and strings, as its key holds them.
fn key_parts<'f>(frame: &Frame<PerlStr<'f>>) -> (u8, i32, i32, [&'f [u8]; 3]) {
    match *frame {
        Frame::Sub {
            package,
            name,
            file,
            line,
            first_line,
        } => (
            frame.tag(),
            line,
            first_line,
            [package.bytes, name.bytes, file.bytes],
        ),
        Frame::Xsub { package, name } => (frame.tag(), 0, 0, [package.bytes, name.bytes, &[]]),
        Frame::Eval { file, line } | Frame::Main { file, line } => {
            (frame.tag(), line, 0, [file.bytes, &[], &[]])
        }
    }
}

/// Writes a key: its fixed part, then the strings one after the other. The fixed part comes
/// first so that comparing a key with a frame mostly stops at it.
fn write_key(key: &mut Vec<u8>, (tag, a, b, strings): (u8, i32, i32, [&[u8]; 3])) {
    key.clear();
    key.extend_from_slice(&key_head(tag, a, b, strings));
    for s in strings {
        key.extend_from_slice(s);
    }
}

/// Whether a key is the key of these parts, without writing that key: the fixed part is read
/// field by field from the key (not compared with one written out, which the processor would
/// have to forward from its stores).
fn key_is(key: &[u8], (tag, a, b, strings): (u8, i32, i32, [&[u8]; 3])) -> bool {
    let Some((head, mut rest)) = key.split_first_chunk::<KEY_HEAD>() else {
        return false;
    };
    let word = |at: usize| u32::from_le_bytes([head[at], head[at + 1], head[at + 2], head[at + 3]]);
    if head[0] != tag
        || word(1) != a as u32
        || word(5) != b as u32
        || word(9) as usize != strings[0].len()
        || word(13) as usize != strings[1].len()
        || word(17) as usize != strings[2].len()
    {
        return false;
    }
    for s in strings {
        // The lengths matched: the rest holds exactly the strings, unless the key is damaged.
        let Some((stored, tail)) = rest.split_at_checked(s.len()) else {
            return false;
        };
        if !same_bytes(stored, s) {
            return false;
        }
        rest = tail;
    }
    rest.is_empty()
}

/// Whether two byte strings of equal length are equal, compared inline a word at a time: the
/// strings of a frame are short, and a call to `memcmp` per string would cost more than the
/// comparison.
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let (mut a8, mut b8) = (a.chunks_exact(8), b.chunks_exact(8));
    for (x, y) in (&mut a8).zip(&mut b8) {
        let word = |c: &[u8]| u64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        if word(x) != word(y) {
            return false;
        }
    }
    let (x, y) = (a8.remainder(), b8.remainder());
    x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p == q)
}

/// The bytes that identify a stored frame: its tag, strings and lines.
fn frame_key(key: &mut Vec<u8>, frame: &Frame<PerlStr<'_>>) {
    write_key(key, key_parts(frame));
}

/// Whether `key` (made by [`frame_key`]) is the key of `frame`, without making that key.
fn key_matches(key: &[u8], frame: &Frame<PerlStr<'_>>) -> bool {
    key_is(key, key_parts(frame))
}

/// The key of a slow op's `CORE::<op>` frame: a tag no stored frame has, the op, and the
/// innermost frame's kind and file (the report gives the op frame that frame's file).
fn slow_op_parts<'f>(
    op: &'f [u8],
    innermost: &Frame<PerlStr<'f>>,
) -> (u8, i32, i32, [&'f [u8]; 3]) {
    let file = innermost.file().map_or(&[][..], |f| f.bytes);
    (0, i32::from(innermost.tag()), 0, [op, file, &[]])
}

/// The subs of which one file often holds several under one name, which the report tells apart
/// by their first line: the special blocks (the report's `%SPECIAL_SUBS`, one `BEGIN` per `use`)
/// and anonymous subs.
const MANY_NAMED: &[&[u8]] = &[
    b"BEGIN",
    b"UNITCHECK",
    b"CHECK",
    b"INIT",
    b"END",
    b"__ANON__",
];

fn is_many_named(name: &[u8]) -> bool {
    MANY_NAMED.contains(&name)
}

/// A line as the model keeps it: positive lines only.
fn line_of(line: i32) -> Option<u32> {
    u32::try_from(line).ok().filter(|&l| l > 0)
}

impl ProfileConverter {
    /// An empty converter.
    pub fn new() -> ProfileConverter {
        let mut builder = ProfileBuilder::new();
        // A new builder holds no value type: interning one cannot overflow its table.
        let samples_type = builder
            .intern_value_type("samples", Unit::Samples, Measured::SelfOnly)
            .unwrap_or_else(|_| unreachable!("the first value type of an empty builder"));
        ProfileConverter {
            builder,
            samples_type,
            time_type: None,
            slow_op_frames: true,
            named: false,
            contexts: HashMap::new(),
            frames: KeyMap::default(),
            keys: Vec::new(),
            trie: Trie {
                generation: 1,
                ..Trie::default()
            },
            previous: Vec::new(),
            key: Vec::new(),
            stacks: StackCache::default(),
            last_op: (Vec::new(), false),
            text: String::new(),
            batch: Batch {
                wants_program: true,
                ..Batch::default()
            },
        }
    }

    /// Whether a sample whose last op is a slow op ([`SLOW_OPS`]) gets an innermost
    /// `CORE::<op>` frame, as the report adds it (the default), or keeps its stack as stored.
    pub fn set_slow_op_frames(&mut self, on: bool) {
        self.slow_op_frames = on;
        self.stacks.clear();
    }

    /// Adds every sample of one file (read from memory).
    pub fn add_file(&mut self, file: &[u8]) -> Result<(), ProfileError> {
        self.add_traces(&mut TraceReader::new(Reader::from_slice(file)?))
    }

    /// Adds every sample `traces` still returns, in the context of its header's process. The
    /// samples read before an error stay added.
    pub fn add_traces<S: StreamSource>(
        &mut self,
        traces: &mut TraceReader<S>,
    ) -> Result<(), ProfileError> {
        let header = traces.reader().header();
        let process = header.genealogy.map(|g| g.id);
        let tick_us = header.tick_duration_us;
        let at_start = |traces: &TraceReader<S>| {
            let reader = traces.reader();
            reader.position_of(reader.record_offset())
        };
        self.start_batch(process, tick_us)
            .map_err(|source| ProfileError::Model {
                source,
                pos: at_start(traces),
            })?;
        let id = process.unwrap_or_default();
        let drop_after_begin = traces.drop_frame_after_begin();
        loop {
            let Some(trace) = traces.next_trace()? else {
                return Ok(());
            };
            if let Err(source) = self.add_trace(&trace, &id, drop_after_begin) {
                return Err(ProfileError::Model {
                    source,
                    pos: at_start(traces),
                });
            }
        }
    }

    /// The profile of every sample added.
    pub fn finish(mut self) -> ModelProfile {
        // Flushing adds values to nodes and contexts that exist or to one new context: only a
        // table already at its limit could refuse it, and the profile keeps what it holds then.
        let _ = self.flush();
        self.builder.build()
    }

    /// Flushes the batch when the process or the tick duration changes.
    fn start_batch(
        &mut self,
        process: Option<ProcessId>,
        tick_us: Option<u32>,
    ) -> Result<(), ModelError> {
        if self.batch.process != process || self.batch.tick_us != tick_us {
            self.flush()?;
            // A stack's first sample in a batch does what a sample of a new stack does (the
            // program's name), so each batch starts with no stack known.
            self.stacks.clear();
            if self.batch.process != process {
                // An eval's file name holds the process id: frames are looked up per process.
                self.frames.clear();
                self.keys.clear();
                self.trie.reset();
                self.previous.clear();
            }
            self.batch.process = process;
            self.batch.tick_us = tick_us;
            self.batch.program = None;
            self.batch.wants_program = !self.contexts.contains_key(&process);
        }
        if tick_us.is_some() && self.time_type.is_none() {
            let time =
                self.builder
                    .intern_value_type("time", Unit::Microseconds, Measured::SelfOnly)?;
            self.builder.set_default_value_type(time)?;
            self.time_type = Some(time);
        }
        Ok(())
    }

    /// Hands the batch's weights to the model, in the context of its process.
    fn flush(&mut self) -> Result<(), ModelError> {
        if self.batch.touched.is_empty() {
            return Ok(());
        }
        let context = self.context()?;
        let tick = self.batch.tick_us;
        for i in 0..self.batch.touched.len() {
            let node = self.batch.touched[i];
            let weight = std::mem::take(&mut self.batch.weights[node.index()]);
            let time = tick
                .zip(self.time_type)
                .map(|(tick, time)| (time, Some(weight as f64 * f64::from(tick)), None));
            let samples = (self.samples_type, Some(weight as f64), None);
            self.builder
                .add_node_values(context, node, std::iter::once(samples).chain(time))?;
        }
        self.batch.touched.clear();
        Ok(())
    }

    /// The context of the batch's process, made at its first flush.
    fn context(&mut self) -> Result<ContextId, ModelError> {
        let process = self.batch.process;
        if let Some(&id) = self.contexts.get(&process) {
            return Ok(id);
        }
        let ids = match process {
            Some(p) => vec![(IdKind::Process, u64::from(p.words()[0]))],
            None => Vec::new(),
        };
        let mut context = Context::new(ids);
        if let Some(program) = &self.batch.program {
            context = context.with_name(self.builder.intern_string(program)?);
        }
        let id = self.builder.intern_context(context)?;
        self.contexts.insert(process, id);
        Ok(id)
    }

    fn add_trace(
        &mut self,
        trace: &Trace<'_>,
        process: &ProcessId,
        drop_after_begin: bool,
    ) -> Result<(), ModelError> {
        // Empty traces (the reader's at section records) and weightless samples add nothing.
        if trace.weight == 0 || trace.frame_count() == 0 {
            return Ok(());
        }
        let op = trace.op_name.bytes;
        let slow_op = (self.slow_op_frames && self.is_slow_op(op)).then_some(op);
        let cached = trace
            .frame_records()
            .map(|records| self.stacks.find(records, drop_after_begin, slow_op));
        if let Some(Some(leaf)) = cached {
            self.add_weight(leaf, trace.weight);
            return Ok(());
        }
        let mut node = None;
        // Whether the stack so far is the previous sample's.
        let mut shared = true;
        let mut depth = 0;
        let (mut outermost, mut innermost) = (None, None);
        for frame in trace.frames().rev() {
            node = Some(self.callee(
                node,
                depth,
                &mut shared,
                |key| key_matches(key, &frame),
                |key| frame_key(key, &frame),
                |this| this.model_frame(&frame, process),
            )?);
            depth += 1;
            outermost.get_or_insert(frame);
            innermost = Some(frame);
        }
        if let Some(op) = slow_op
            && let Some(innermost) = innermost
        {
            let parts = slow_op_parts(op, &innermost);
            node = Some(self.callee(
                node,
                depth,
                &mut shared,
                |key| key_is(key, parts),
                |key| write_key(key, parts),
                |this| this.slow_op_frame(op, &innermost, process),
            )?);
            depth += 1;
        }
        self.previous.truncate(depth);
        if self.batch.wants_program
            && let Some(Frame::Main { file, .. }) = outermost
        {
            self.batch.wants_program = false;
            let program = file.to_string();
            if !self.named {
                self.builder.set_name(&program)?;
                self.named = true;
            }
            self.batch.program = Some(program);
        }
        let Some(node) = node else {
            return Ok(());
        };
        if cached.is_some() {
            self.stacks.insert(node);
        }
        self.add_weight(node, trace.weight);
        Ok(())
    }

    /// Adds a sample's weight to the node its stack ends at.
    fn add_weight(&mut self, node: NodeId, weight: u32) {
        let weights = &mut self.batch.weights;
        if weights.len() <= node.index() {
            weights.resize(node.index() + 1, 0);
        }
        if weights[node.index()] == 0 {
            self.batch.touched.push(node);
        }
        weights[node.index()] += u64::from(weight);
    }

    /// [`is_slow_op`], remembering the last op asked about: samples mostly end in a few ops.
    fn is_slow_op(&mut self, op: &[u8]) -> bool {
        if self.last_op.0 != op {
            self.last_op.0.clear();
            self.last_op.0.extend_from_slice(op);
            self.last_op.1 = is_slow_op(op);
        }
        self.last_op.1
    }

    /// The key of the frame of `node`, a node of the current process's call tree.
    fn key_of(&self, node: NodeId) -> &[u8] {
        &self.keys[self.trie.key[node.index()] as usize]
    }

    /// The node of a frame called from `parent`, at `depth` of the current sample: the previous
    /// sample's node at that depth while the stacks agree, else one of `parent`'s callees whose
    /// frame key `matches`, else found by the frame's key (written by `key`), the model frame
    /// made by `make` when the process has not had it yet.
    fn callee(
        &mut self,
        parent: Option<NodeId>,
        depth: usize,
        shared: &mut bool,
        matches: impl Fn(&[u8]) -> bool,
        key: impl FnOnce(&mut Vec<u8>),
        make: impl FnOnce(&mut Self) -> Result<ModelFrame, ModelError>,
    ) -> Result<NodeId, ModelError> {
        if *shared
            && let Some(&node) = self.previous.get(depth)
            && matches(self.key_of(node))
        {
            return Ok(node);
        }
        *shared = false;
        let mut found = None;
        let mut callee = self.trie.first_of(parent);
        for _ in 0..CALLEES_SCANNED {
            let Some(node) = callee else {
                break;
            };
            if matches(self.key_of(node)) {
                found = Some(node);
                break;
            }
            callee = self.trie.next[node.index()];
        }
        let node = match found {
            Some(node) => node,
            None => {
                key(&mut self.key);
                let (frame, key_index) = match self.frames.get(self.key.as_slice()) {
                    Some(&known) => known,
                    None => {
                        let frame = make(self)?;
                        let frame = self.builder.intern_frame(frame)?;
                        // Keys are at most one per frame record read.
                        let key_index = self.keys.len() as u32;
                        let key: Box<[u8]> = self.key.as_slice().into();
                        self.keys.push(key.clone());
                        self.frames.insert(key, (frame, key_index));
                        (frame, key_index)
                    }
                };
                let node = self.builder.intern_node(parent, frame)?;
                // A node found by two keys (frames that differ in what the model does not
                // keep) is listed under the first.
                if !self.trie.is_linked(node) {
                    self.trie.link(parent, node, key_index);
                }
                node
            }
        };
        if depth < self.previous.len() {
            self.previous[depth] = node;
        } else {
            self.previous.push(node);
        }
        Ok(node)
    }

    /// Interns `text` written by `write`.
    fn intern_with(
        &mut self,
        write: impl FnOnce(&mut String) -> std::fmt::Result,
    ) -> Result<StringId, ModelError> {
        self.text.clear();
        // Writing into a String cannot fail.
        let _ = write(&mut self.text);
        let text = std::mem::take(&mut self.text);
        let id = self.builder.intern_string(&text);
        self.text = text;
        id
    }

    /// A file name as the reader shows it (an eval STRING's as `qeval:<id>/(eval N)`).
    fn intern_file(
        &mut self,
        file: PerlStr<'_>,
        process: &ProcessId,
    ) -> Result<StringId, ModelError> {
        let shown = reader_file_name(file.bytes, process);
        let shown = PerlStr {
            flags: file.flags,
            bytes: &shown,
        };
        self.intern_with(|s| write!(s, "{shown}"))
    }

    fn model_frame(
        &mut self,
        frame: &Frame<PerlStr<'_>>,
        process: &ProcessId,
    ) -> Result<ModelFrame, ModelError> {
        let mut model = ModelFrame::new(FrameKind::Function);
        match *frame {
            Frame::Sub {
                package,
                name,
                file,
                line,
                first_line,
            } => {
                model.function = Some(self.intern_with(|s| {
                    write!(s, "{package}::{name}")?;
                    if first_line > 0 && is_many_named(name.bytes) {
                        // Every eval STRING starts at line 1: its anonymous subs and BEGIN
                        // blocks are told apart by the eval, as the report's `uq_sub_name`
                        // does with the file.
                        if is_eval_file(file.bytes) {
                            write!(s, "@{file}:{first_line}")?;
                        } else {
                            write!(s, "@{first_line}")?;
                        }
                    }
                    Ok(())
                })?);
                model.module = Some(self.intern_with(|s| write!(s, "{package}"))?);
                model.file = Some(self.intern_file(file, process)?);
                model.line = line_of(line);
            }
            Frame::Xsub { package, name } => {
                model.function = Some(self.intern_with(|s| write!(s, "{package}::{name}"))?);
                model.module = Some(self.intern_with(|s| write!(s, "{package}"))?);
            }
            Frame::Eval { file, line } => {
                let file = self.intern_file(file, process)?;
                model.function = Some(file);
                model.file = Some(file);
                model.line = line_of(line);
            }
            Frame::Main { file, line } => {
                model.function = Some(self.intern_with(|s| write!(s, "{file}:main"))?);
                model.file = Some(self.intern_with(|s| write!(s, "{file}"))?);
                model.line = line_of(line);
            }
        }
        Ok(model)
    }

    fn slow_op_frame(
        &mut self,
        op: &[u8],
        innermost: &Frame<PerlStr<'_>>,
        process: &ProcessId,
    ) -> Result<ModelFrame, ModelError> {
        let op = PerlStr::bytes(op);
        let mut model = ModelFrame::new(FrameKind::Function);
        model.function = Some(self.intern_with(|s| write!(s, "CORE::{op}"))?);
        model.module = Some(self.builder.intern_string("CORE")?);
        model.file = match *innermost {
            Frame::Sub { file, .. } | Frame::Eval { file, .. } => {
                Some(self.intern_file(file, process)?)
            }
            Frame::Main { file, .. } => Some(self.intern_with(|s| write!(s, "{file}"))?),
            // The report gives the op the XSUB's empty file.
            Frame::Xsub { .. } => None,
        };
        Ok(model)
    }
}
