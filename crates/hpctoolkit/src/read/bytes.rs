//! Bounds-checked access to a file's bytes; every failure becomes an [`Error`] naming the file,
//! field and offset.

use binrw::BinRead;
use binrw::meta::ReadEndian;
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

use crate::Error;
use crate::raw::{FOOTER_SIZE, FileHeader, FileKind, MAGIC, MAJOR_VERSION, RawStruct, Section};

/// The little-endian u64 at `b[i..i + 8]`: the hot-path decoding of fixed structures whose
/// bytes the caller has already sliced to their known size (binrw's `io::Read` machinery costs
/// several times more per structure).
#[inline]
pub(crate) fn le_u64(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(w)
}

/// A half-open byte range of the file where something must lie.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Region {
    pub(crate) start: u64,
    pub(crate) end: u64,
}

impl Region {
    pub(crate) fn of(section: Section) -> Self {
        Region {
            start: section.offset,
            end: section.end(),
        }
    }

    pub(crate) fn len(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
}

/// A file's bytes and which file it is: the whole file, or only its head
/// ([`FileHead`](super::FileHead)), in which case `len` is the whole file's length, `footer` its
/// last bytes, and a read past the head is [`Error::NotRead`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bytes<'a> {
    pub(crate) data: &'a [u8],
    pub(crate) file: FileKind,
    len: u64,
    footer: Option<[u8; FOOTER_SIZE]>,
}

/// An array of fixed structures with a stored stride.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Strided {
    pub(crate) base: u64,
    pub(crate) count: u64,
    pub(crate) stride: u64,
}

impl Strided {
    /// Offset of element `i` (callers check `i < count`).
    pub(crate) fn at(&self, i: u64) -> u64 {
        self.base + i * self.stride
    }

    /// The index of the element starting at `pointer`, if it is one.
    pub(crate) fn index_of(&self, pointer: u64) -> Option<u64> {
        let rel = pointer.checked_sub(self.base)?;
        if self.stride == 0 || rel % self.stride != 0 {
            return None;
        }
        let i = rel / self.stride;
        (i < self.count).then_some(i)
    }
}

impl<'a> Bytes<'a> {
    pub(crate) fn new(data: &'a [u8], file: FileKind) -> Self {
        Bytes {
            data,
            file,
            len: data.len() as u64,
            footer: None,
        }
    }

    /// The first bytes of a file of `len` bytes that ends with `footer`.
    pub(crate) fn head(
        data: &'a [u8],
        file: FileKind,
        len: u64,
        footer: [u8; FOOTER_SIZE],
    ) -> Self {
        Bytes {
            data,
            file,
            len: len.max(data.len() as u64),
            footer: Some(footer),
        }
    }

    /// The length of the whole file.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// `data[start..end]`, or [`Error::NotRead`] when it reaches past the head that was read (the
    /// caller has checked the range against the whole file).
    fn held(&self, start: u64, end: u64, field: &'static str) -> Result<&'a [u8], Error> {
        self.data
            .get(start as usize..end as usize)
            .ok_or(Error::NotRead {
                file: self.file,
                field,
                offset: start,
                held: self.data.len() as u64,
            })
    }

    /// Everything but the header's minimum and the footer: where sections and arrays may lie.
    pub(crate) fn payload(&self) -> Region {
        Region {
            start: 0,
            end: self.len().saturating_sub(FOOTER_SIZE as u64),
        }
    }

    /// `len` bytes at `offset`, checked against the file.
    pub(crate) fn slice(
        &self,
        offset: u64,
        len: u64,
        field: &'static str,
    ) -> Result<&'a [u8], Error> {
        let available = self.len().saturating_sub(offset);
        if offset > self.len() || len > available {
            return Err(Error::Truncated {
                file: self.file,
                field,
                offset,
                needed: len,
                available,
            });
        }
        self.held(offset, offset + len, field)
    }

    /// The error for a pointer at `at` (its field) that puts `size` bytes outside `region`.
    pub(crate) fn out_of_bounds(
        &self,
        field: &'static str,
        at: u64,
        pointer: u64,
        size: u64,
        region: Region,
    ) -> Error {
        Error::OutOfBounds {
            file: self.file,
            field,
            offset: at,
            pointer,
            size,
            start: region.start,
            end: region.end,
        }
    }

    /// Checks that `[pointer, pointer + size)` lies inside `region`.
    pub(crate) fn check_within(
        &self,
        region: Region,
        pointer: u64,
        size: u64,
        field: &'static str,
        at: u64,
    ) -> Result<(), Error> {
        match pointer.checked_add(size) {
            Some(end) if pointer >= region.start && end <= region.end && end <= self.len() => {
                Ok(())
            }
            _ => Err(self.out_of_bounds(field, at, pointer, size, region)),
        }
    }

    /// Reads a fixed structure at `offset` (its known size must be inside the file).
    pub(crate) fn read<T>(&self, offset: u64) -> Result<T, Error>
    where
        T: RawStruct + ReadEndian + for<'b> BinRead<Args<'b> = ()>,
    {
        let bytes = self.slice(offset, T::SIZE as u64, T::NAME)?;
        let mut cursor = std::io::Cursor::new(bytes);
        // The slice holds exactly T::SIZE bytes and every field of every raw struct accepts any
        // bit pattern, so binrw cannot fail here; map a failure to Truncated all the same.
        T::read(&mut cursor).map_err(|_| Error::Truncated {
            file: self.file,
            field: T::NAME,
            offset,
            needed: T::SIZE as u64,
            available: bytes.len() as u64,
        })
    }

    /// Reads a fixed structure at `offset`, which must lie inside `region` with its known size.
    pub(crate) fn read_in<T>(
        &self,
        region: Region,
        offset: u64,
        field: &'static str,
        at: u64,
    ) -> Result<T, Error>
    where
        T: RawStruct + ReadEndian + for<'b> BinRead<Args<'b> = ()>,
    {
        self.check_within(region, offset, T::SIZE as u64, field, at)?;
        self.read(offset)
    }

    /// A zero-copy array of `count` records at `pointer`, inside `region`.
    pub(crate) fn array<T>(
        &self,
        region: Region,
        pointer: u64,
        count: u64,
        field: &'static str,
        at: u64,
    ) -> Result<&'a [T], Error>
    where
        T: FromBytes + KnownLayout + Immutable + Unaligned + RawStruct,
    {
        let size = count.saturating_mul(T::SIZE as u64);
        if count == 0 {
            return Ok(&[]);
        }
        self.check_within(region, pointer, size, field, at)?;
        let bytes = self.held(pointer, pointer + size, field)?;
        // Unaligned element type and an exact multiple of its size: cannot fail.
        <[T]>::ref_from_bytes(bytes)
            .map_err(|_| self.out_of_bounds(field, at, pointer, size, region))
    }

    /// A strided array of `count` structures of known size `T::SIZE` at `pointer`, inside `region`.
    pub(crate) fn strided<T: RawStruct>(
        &self,
        region: Region,
        pointer: u64,
        count: u64,
        stride: u64,
        field: &'static str,
        at: u64,
    ) -> Result<Strided, Error> {
        if count == 0 {
            return Ok(Strided {
                base: pointer,
                count: 0,
                stride,
            });
        }
        // The last element needs its known size only; the stride may exceed it.
        let size = (count - 1)
            .checked_mul(stride)
            .and_then(|s| s.checked_add(T::SIZE as u64))
            .unwrap_or(u64::MAX);
        self.check_within(region, pointer, size, field, at)?;
        Ok(Strided {
            base: pointer,
            count,
            stride,
        })
    }

    /// Checks a stored stride against the known size.
    pub(crate) fn check_stride<T: RawStruct>(
        &self,
        stride: u64,
        field: &'static str,
        at: u64,
    ) -> Result<u64, Error> {
        if stride < T::SIZE as u64 {
            return Err(Error::StrideTooSmall {
                file: self.file,
                field,
                offset: at,
                min: T::SIZE as u64,
                found: stride,
            });
        }
        Ok(stride)
    }

    /// The NUL-terminated UTF-8 string at `pointer`, which (with its NUL) must lie inside `region`.
    pub(crate) fn cstr(
        &self,
        region: Region,
        pointer: u64,
        field: &'static str,
        at: u64,
    ) -> Result<&'a str, Error> {
        let unterminated = Error::UnterminatedString {
            file: self.file,
            field,
            offset: at,
            pointer,
            start: region.start,
            end: region.end,
        };
        let end = region.end.min(self.len());
        if pointer < region.start || pointer >= end {
            return Err(unterminated);
        }
        let rest = self.held(pointer, end.min(self.data.len() as u64).max(pointer), field)?;
        let n = rest.iter().position(|&b| b == 0).ok_or(unterminated)?;
        std::str::from_utf8(&rest[..n]).map_err(|_| Error::InvalidUtf8 {
            file: self.file,
            field,
            offset: at,
            pointer,
        })
    }

    pub(crate) fn invalid(
        &self,
        field: &'static str,
        at: u64,
        expected: &'static str,
        found: u64,
    ) -> Error {
        Error::Invalid {
            file: self.file,
            field,
            offset: at,
            expected,
            found,
        }
    }

    pub(crate) fn unsorted(
        &self,
        field: &'static str,
        at: u64,
        previous: u64,
        found: u64,
    ) -> Error {
        Error::Unsorted {
            file: self.file,
            field,
            offset: at,
            previous,
            found,
        }
    }

    /// Checks the common header and the footer; returns the header.
    pub(crate) fn check_envelope(&self) -> Result<FileHeader, Error> {
        let need = (FileHeader::SIZE + FOOTER_SIZE) as u64;
        if self.len() < need {
            // Name the first thing that is missing.
            if self.len() >= 10 && self.data[..10] != MAGIC {
                return Err(self.bad_magic());
            }
            return Err(Error::Truncated {
                file: self.file,
                field: "file header and footer",
                offset: 0,
                needed: need,
                available: self.len(),
            });
        }
        let header: FileHeader = self.read(0)?;
        if header.magic != MAGIC {
            return Err(self.bad_magic());
        }
        if header.format != self.file.format_id() {
            return Err(Error::WrongFormat {
                file: self.file,
                found: header.format,
            });
        }
        if header.major_version != MAJOR_VERSION {
            return Err(Error::UnsupportedVersion {
                file: self.file,
                major: header.major_version,
                minor: header.minor_version,
            });
        }
        let footer_at = self.len() - FOOTER_SIZE as u64;
        let found = match self.footer {
            Some(footer) => footer,
            None => {
                let mut found = [0u8; FOOTER_SIZE];
                found.copy_from_slice(self.held(footer_at, self.len(), "footer")?);
                found
            }
        };
        if found != self.file.footer() {
            return Err(Error::BadFooter {
                file: self.file,
                offset: footer_at,
                found,
            });
        }
        Ok(header)
    }

    fn bad_magic(&self) -> Error {
        let mut found = [0u8; 10];
        let n = self.data.len().min(10);
        found[..n].copy_from_slice(&self.data[..n]);
        Error::BadMagic {
            file: self.file,
            found,
        }
    }

    /// Checks a section pointer of the file header: inside the payload, after the header, at
    /// least `min_size` bytes. `at` is the offset of the `{sz,p}` pair.
    pub(crate) fn check_section(
        &self,
        section: Section,
        min_size: usize,
        header_size: usize,
        field: &'static str,
        at: u64,
    ) -> Result<Region, Error> {
        if section.size < min_size as u64 {
            return Err(self.invalid(
                field,
                at,
                "a section at least as large as its header",
                section.size,
            ));
        }
        let payload = Region {
            start: header_size as u64,
            end: self.payload().end,
        };
        self.check_within(payload, section.offset, section.size, field, at + 8)?;
        Ok(Region::of(section))
    }
}

/// A set of u16 metric ids as a 8 KiB bitmap: the membership test of the validation passes.
#[derive(Debug, Clone)]
pub(crate) struct MetricSet {
    bits: Vec<u64>,
}

impl MetricSet {
    pub(crate) fn from_ids(ids: impl IntoIterator<Item = u16>) -> Self {
        let mut bits = vec![0u64; 1 << 10];
        for id in ids {
            bits[usize::from(id) >> 6] |= 1 << (id & 63);
        }
        MetricSet { bits }
    }

    #[inline]
    pub(crate) fn contains(&self, id: u16) -> bool {
        self.bits[usize::from(id) >> 6] & (1 << (id & 63)) != 0
    }
}
