//! Reading a binary without trusting it: the checks before a byte past the ELF header is read,
//! positioned reads of only the parts a lookup needs, bounded inflation of compressed debugging
//! sections, and a bound on how deep the DWARF nests its entries.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use crate::Rejection;

/// The most bytes of DWARF one binary may hold in memory, inflated sections included (its
/// uncompressed sections are read as they are and count too). Past it, its DWARF is not used
/// and names come from its symbol table.
pub const MAX_DEBUG_BYTES: u64 = 1 << 30;

/// The most a compressed debugging section may claim to inflate to, as a multiple of its
/// compressed size. DWARF compresses 3 to 20 times; a claim past this is a bomb, refused before
/// anything is allocated for it.
pub const MAX_INFLATION_RATIO: u64 = 128;

/// The deepest a unit of DWARF may nest its entries. The DWARF parser follows inlined calls
/// recursively, so this bounds its stack (compilers nest a few dozen deep; a 2 MiB thread stack
/// holds this bound even in debug builds).
pub const MAX_DIE_DEPTH: isize = 256;

/// Where a binary's bytes come from: an open file, read at offsets as needed (never whole), or
/// bytes already in memory (a fuzzer's, a test's).
#[derive(Debug)]
pub(crate) enum Store {
    File { file: File, len: u64 },
    Bytes(Arc<[u8]>),
}

impl Store {
    pub(crate) fn len(&self) -> u64 {
        match self {
            Store::File { len, .. } => *len,
            Store::Bytes(b) => b.len() as u64,
        }
    }

    /// `size` bytes at `offset`; `None` where they are not all in the file.
    pub(crate) fn read_at(&self, offset: u64, size: u64) -> Option<Vec<u8>> {
        let end = offset.checked_add(size)?;
        if end > self.len() {
            return None;
        }
        match self {
            Store::Bytes(b) => Some(b[offset as usize..end as usize].to_vec()),
            Store::File { file, .. } => {
                let mut buf = vec![0; usize::try_from(size).ok()?];
                read_exact_at(file, &mut buf, offset).ok()?;
                Some(buf)
            }
        }
    }
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(not(unix))]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom};
    let mut f = file;
    f.seek(SeekFrom::Start(offset))?;
    f.read_exact(buf)
}

/// Opens `path` as a binary: a regular file (checked on the open file too, so that a file
/// swapped after the check is caught), opened without blocking (a FIFO would block an open).
pub(crate) fn open_regular(path: &Path) -> Result<Store, Rejection> {
    let meta = std::fs::metadata(path).map_err(|e| Rejection::Unreadable(e.to_string()))?;
    if !meta.is_file() {
        return Err(not_a_file(&meta));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options
        .open(path)
        .map_err(|e| Rejection::Unreadable(e.to_string()))?;
    let meta = file
        .metadata()
        .map_err(|e| Rejection::Unreadable(e.to_string()))?;
    if !meta.is_file() {
        return Err(not_a_file(&meta));
    }
    Ok(Store::File {
        file,
        len: meta.len(),
    })
}

fn not_a_file(meta: &std::fs::Metadata) -> Rejection {
    let kind = if meta.is_dir() {
        "a directory"
    } else {
        "a device, FIFO or socket"
    };
    Rejection::NotABinary(format!("{kind}, not a regular file"))
}

/// Refuses what is not an ELF executable or shared library of a plausible shape, from its
/// header alone: magic, class, byte order, version, type, header sizes, and section headers
/// that lie inside the file.
pub(crate) fn check_elf_header(store: &Store) -> Result<(), Rejection> {
    let len = store.len();
    let not = |why: String| Err(Rejection::NotABinary(why));
    let Some(ident) = store.read_at(0, 16.min(len)) else {
        return not("its first bytes cannot be read".to_owned());
    };
    if ident.len() < 16 || &ident[..4] != b"\x7fELF" {
        return not(format!(
            "not an ELF file: it starts with {} (7f 45 4c 46 expected)",
            ident
                .iter()
                .take(4)
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    let (header_size, entry_size) = match ident[4] {
        1 => (52u64, 40u64),
        2 => (64, 64),
        c => return not(format!("ELF class {c} at byte 4 (1 or 2 expected)")),
    };
    let big = match ident[5] {
        1 => false,
        2 => true,
        d => return not(format!("ELF byte order {d} at byte 5 (1 or 2 expected)")),
    };
    if ident[6] != 1 {
        return not(format!("ELF version {} at byte 6 (1 expected)", ident[6]));
    }
    let Some(h) = store.read_at(0, header_size) else {
        return not(format!(
            "its ELF header is cut short: {len} bytes, {header_size} expected"
        ));
    };
    let u16_at = |at: usize| {
        let b = [h[at], h[at + 1]];
        u64::from(if big {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        })
    };
    let word_at = |at: usize| -> u64 {
        if header_size == 64 {
            let b: [u8; 8] = h[at..at + 8].try_into().unwrap_or_default();
            if big {
                u64::from_be_bytes(b)
            } else {
                u64::from_le_bytes(b)
            }
        } else {
            let b: [u8; 4] = h[at..at + 4].try_into().unwrap_or_default();
            u64::from(if big {
                u32::from_be_bytes(b)
            } else {
                u32::from_le_bytes(b)
            })
        }
    };
    let e_type = u16_at(16);
    if e_type != 2 && e_type != 3 {
        return not(format!(
            "ELF type {e_type} at byte 16: not an executable (2) or shared library (3)"
        ));
    }
    let (shoff_at, ehsize_at) = if header_size == 64 {
        (40, 52)
    } else {
        (32, 40)
    };
    let ehsize = u16_at(ehsize_at);
    if ehsize != header_size {
        return not(format!(
            "ELF header size {ehsize} at byte {ehsize_at} ({header_size} expected)"
        ));
    }
    let shoff = word_at(shoff_at);
    let shentsize = u16_at(ehsize_at + 6);
    let shnum = u16_at(ehsize_at + 8);
    if shoff == 0 {
        return not("it has no section headers".to_owned());
    }
    if shentsize != entry_size {
        return not(format!(
            "section header size {shentsize} at byte {} ({entry_size} expected)",
            ehsize_at + 6
        ));
    }
    // With more than 0xff00 sections the count is in the first header (`object` reads it).
    let end = shoff.saturating_add(shnum.max(1) * entry_size);
    if end > len {
        return not(format!(
            "its section headers (at byte 0x{shoff:x}, {shnum} of them) end past the file's \
             {len} bytes"
        ));
    }
    Ok(())
}

/// A debugging section: where its bytes are and how they are compressed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DebugSection {
    pub(crate) range: object::CompressedFileRange,
}

/// The bytes of a debugging section, inflated when compressed, within what `budget` has left
/// (which it then takes): every claim is checked before anything is allocated for it.
pub(crate) fn section_bytes(
    store: &Store,
    name: &str,
    section: DebugSection,
    budget: &mut u64,
) -> Result<Vec<u8>, String> {
    let r = section.range;
    let claim = r.uncompressed_size;
    let packed = matches!(
        r.format,
        object::CompressionFormat::Zlib | object::CompressionFormat::Zstandard
    );
    if packed && claim > r.compressed_size.saturating_mul(MAX_INFLATION_RATIO) {
        return Err(format!(
            "{name}: a compressed section of {} bytes claims to inflate to {claim} bytes, \
             more than {MAX_INFLATION_RATIO} times its size: refused as a decompression bomb",
            r.compressed_size
        ));
    }
    if claim > *budget {
        return Err(format!(
            "{name} holds {claim} bytes, past what is left of the budget of {MAX_DEBUG_BYTES} \
             bytes of debugging information"
        ));
    }
    let compressed = |store: &Store| {
        store.read_at(r.offset, r.compressed_size).ok_or_else(|| {
            format!(
                "{name}: its {} bytes at byte 0x{:x} lie past the end of the file",
                r.compressed_size, r.offset
            )
        })
    };
    let bytes = match r.format {
        object::CompressionFormat::None => compressed(store)?,
        format @ (object::CompressionFormat::Zlib | object::CompressionFormat::Zstandard) => {
            let input = compressed(store)?;
            inflate(name, format, &input, claim)?
        }
        _ => return Err(format!("{name}: compressed in a format that is not known")),
    };
    *budget -= claim;
    Ok(bytes)
}

/// Inflates `input` into exactly `size` bytes, never more; a stream that gives more or less is
/// an error. A panic of the decompressor is caught and worded.
fn inflate(
    name: &str,
    format: object::CompressionFormat,
    input: &[u8],
    size: u64,
) -> Result<Vec<u8>, String> {
    let size = usize::try_from(size).map_err(|_| format!("{name}: too large to inflate"))?;
    let run = || -> Result<Vec<u8>, String> {
        let mut out = vec![0u8; size];
        if format == object::CompressionFormat::Zstandard {
            let window = zstd_window(input)
                .ok_or_else(|| format!("{name}: its zstd frame header cannot be read"))?;
            // A window larger than what the section inflates to is only room to allocate.
            if window > (size as u64).max(1 << 17) {
                return Err(format!(
                    "{name}: its zstd window of {window} bytes is larger than the {size} bytes \
                     it claims to inflate to"
                ));
            }
            let mut decoder = ruzstd::decoding::StreamingDecoder::new(input)
                .map_err(|e| format!("{name}: zstd: {e}"))?;
            // In pieces: the decoder's buffer then holds a window and a piece, not the section.
            for piece in out.chunks_mut(1 << 16) {
                decoder.read_exact(piece).map_err(|e| {
                    format!("{name}: zstd: {e} (before the {size} bytes it claims)")
                })?;
            }
            let mut more = [0u8; 1];
            if decoder
                .read(&mut more)
                .map_err(|e| format!("{name}: zstd: {e}"))?
                > 0
            {
                return Err(format!("{name}: inflates past the {size} bytes it claims"));
            }
        } else {
            let mut decoder = flate2::read::ZlibDecoder::new(input);
            decoder
                .read_exact(&mut out)
                .map_err(|e| format!("{name}: zlib: {e} (before the {size} bytes it claims)"))?;
            let mut more = [0u8; 1];
            if decoder
                .read(&mut more)
                .map_err(|e| format!("{name}: zlib: {e}"))?
                > 0
            {
                return Err(format!("{name}: inflates past the {size} bytes it claims"));
            }
        }
        Ok(out)
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|_| {
        Err(format!(
            "{name}: the {format:?} decompressor failed on its data"
        ))
    })
}

/// The window size of the first zstd frame of `input` (RFC 8878, 3.1.1.1).
fn zstd_window(input: &[u8]) -> Option<u64> {
    if input.get(..4)? != [0x28, 0xb5, 0x2f, 0xfd] {
        return None;
    }
    let descriptor = *input.get(4)?;
    let single_segment = descriptor & 0x20 != 0;
    if !single_segment {
        let w = *input.get(5)?;
        let base = 1u64 << (10 + u64::from(w >> 3));
        return Some(base + base / 8 * u64::from(w & 7));
    }
    // Single segment: the window is the content size.
    let dict_bytes = [0usize, 1, 2, 4][usize::from(descriptor & 3)];
    let fcs_bytes = [1usize, 2, 4, 8][usize::from(descriptor >> 6)];
    let at = 5 + dict_bytes;
    let field = input.get(at..at + fcs_bytes)?;
    let mut value = [0u8; 8];
    value[..fcs_bytes].copy_from_slice(field);
    let v = u64::from_le_bytes(value);
    Some(if fcs_bytes == 2 { v + 256 } else { v })
}

/// How deep the deepest unit of `dwarf` nests its entries, read without recursion; an error
/// when a unit nests deeper than [`MAX_DIE_DEPTH`] or cannot be read.
pub(crate) fn check_depth<R: gimli::Reader>(dwarf: &gimli::Dwarf<R>) -> Result<(), String> {
    let mut units = dwarf.units();
    while let Some(header) = units.next().map_err(|e| format!(".debug_info: {e}"))? {
        let at = header
            .offset()
            .as_debug_info_offset()
            .map_or(0, |o| gimli::ReaderOffset::into_u64(o.0));
        let abbrevs = dwarf
            .abbreviations(&header)
            .map_err(|e| format!(".debug_abbrev of the unit at 0x{at:x}: {e}"))?;
        let mut entries = header
            .entries_raw(&abbrevs, None)
            .map_err(|e| format!(".debug_info: the unit at 0x{at:x}: {e}"))?;
        while !entries.is_empty() {
            if entries.next_depth() > MAX_DIE_DEPTH {
                return Err(format!(
                    ".debug_info: the unit at 0x{at:x} nests its entries deeper than \
                     {MAX_DIE_DEPTH} (inlined calls within inlined calls): refused, as its \
                     parser would recurse that deep"
                ));
            }
            match entries.read_abbreviation() {
                Ok(Some(abbrev)) => entries
                    .skip_attributes(abbrev.attributes())
                    .map_err(|e| format!(".debug_info: the unit at 0x{at:x}: {e}"))?,
                Ok(None) => {}
                Err(e) => return Err(format!(".debug_info: the unit at 0x{at:x}: {e}")),
            }
        }
    }
    Ok(())
}
