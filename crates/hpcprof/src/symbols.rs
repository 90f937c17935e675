//! The functions of the load modules a measurement folder keeps beside its profiles: the vdso
//! (`vdso/*.vdso`, an ELF image, named from its symbol table) and the kernel
//! (`kernel_symbols/*`, an nm-like listing compressed with xz). hpcprof places an instruction of
//! such a module in its function, even with `--ignore-structs`; modules named by an absolute
//! path are never opened (hpcprof's `--foreign`: the measured system's files are not here).

use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use profcodec_symbolize::Binary;

use crate::companion;

/// The most text a kernel symbols file may inflate to (a kernel's listing is some megabytes).
/// The xz reader holds a block's text twice while it checks it, so this bounds the memory of an
/// inflation at a few times this.
pub(crate) const MAX_KERNEL_SYMBOLS_BYTES: u64 = 64 << 20;

/// The most bytes of a kernel symbols file read before it is inflated.
const MAX_KERNEL_SYMBOLS_FILE: u64 = 64 << 20;

/// The name hpcprof appends to the kernel's functions.
const LINUX_KERNEL_NAME: &str = "[vmlinux]";

/// A function an instruction is placed in: its entry offset (none for an inlined function),
/// name, and the source file (an index into the unified files) and line of its definition.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Symbol {
    pub(crate) entry: Option<u64>,
    pub(crate) name: String,
    pub(crate) file: Option<u32>,
    pub(crate) line: u32,
    /// For an inlined function, the structure element it comes from: hpcprof keeps each
    /// inlined copy a function of its own.
    pub(crate) inlined_at: Option<u32>,
}

/// The symbols of one module.
#[derive(Debug)]
pub(crate) enum ModuleSymbols {
    /// An ELF image's symbol table.
    Elf(Box<Binary>),
    /// A kernel listing: (address, name) sorted by address, each function reaching to the next.
    Kernel(Vec<(u64, String)>),
}

impl ModuleSymbols {
    /// The function `offset` lies in, if the symbols name one.
    pub(crate) fn function_at(&self, offset: u64) -> Option<Symbol> {
        match self {
            ModuleSymbols::Elf(binary) => binary.function_at(offset).map(|(entry, name)| Symbol {
                entry: Some(entry),
                name: profcodec_symbolize::demangle(name).into_owned(),
                file: None,
                line: 0,
                inlined_at: None,
            }),
            ModuleSymbols::Kernel(list) => {
                let at = list.partition_point(|(addr, _)| *addr <= offset);
                let (entry, name) = list.get(at.checked_sub(1)?)?;
                Some(Symbol {
                    entry: Some(*entry),
                    name: name.clone(),
                    file: None,
                    line: 0,
                    inlined_at: None,
                })
            }
        }
    }
}

/// The file a module recorded as `recorded` stands for in the measurement folder `folder`:
/// only a relative path of plain names (no `..`, no root) below the folder.
pub(crate) fn in_folder(folder: &Path, recorded: &str) -> Option<PathBuf> {
    let rel = Path::new(recorded);
    let plain = rel.components().all(|c| matches!(c, Component::Normal(_)));
    (plain && rel.components().count() >= 2).then(|| folder.join(rel))
}

/// The largest ELF image (a vdso, a GPU binary) opened from a measurement folder.
const MAX_MODULE_FILE: u64 = 2 << 30;

/// The symbols of the module recorded as `recorded` in the measurement folder `folder`, when
/// it keeps them. A file that cannot be read leaves the module's instructions unplaced, as
/// hpcprof leaves them, with a warning that names it and says why.
pub(crate) fn load(
    folder: &Path,
    recorded: &str,
    warnings: &mut Vec<String>,
) -> Option<ModuleSymbols> {
    let path = in_folder(folder, recorded)?;
    let kernel = Path::new(recorded)
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|d| d == "kernel_symbols");
    let allowed = companion::allowed(folder);
    let loaded = if kernel {
        companion::read(&allowed, &path, MAX_KERNEL_SYMBOLS_FILE).and_then(|bytes| {
            let text = inflate(&bytes, MAX_KERNEL_SYMBOLS_BYTES)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(ModuleSymbols::Kernel(kernel_listing(&text)))
        })
    } else {
        companion::checked(&allowed, &path, MAX_MODULE_FILE).and_then(|resolved| {
            Binary::open(&resolved)
                .map(|b| ModuleSymbols::Elf(Box::new(b)))
                .map_err(|e| format!("{}: {e}", path.display()))
        })
    };
    loaded
        .map_err(|why| {
            warnings.push(format!(
                "{why}; symbols left out, the instructions of {recorded} are not placed in \
                 their functions"
            ))
        })
        .ok()
}

/// A writer that refuses to hold more than `cap` bytes, so that a small xz file cannot inflate
/// into an unbounded listing.
struct Capped {
    bytes: Vec<u8>,
    cap: u64,
}

impl Write for Capped {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.bytes.len() as u64 + buf.len() as u64 > self.cap {
            return Err(io::Error::other(format!(
                "inflates to more than {} bytes",
                self.cap
            )));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The text of a kernel symbols file: xz-compressed as hpcrun saves it, or plain. The sizes the
/// xz stream declares are summed before anything is inflated ([`xz_declared_size`]), since the
/// xz reader holds each block whole in memory before it writes it out.
pub(crate) fn inflate(bytes: &[u8], cap: u64) -> Result<Vec<u8>, String> {
    const XZ_MAGIC: &[u8] = b"\xfd7zXZ\0";
    if !bytes.starts_with(XZ_MAGIC) {
        return if bytes.len() as u64 > cap {
            Err(format!("larger than {cap} bytes"))
        } else {
            Ok(bytes.to_vec())
        };
    }
    let declared = xz_declared_size(bytes)?;
    if declared > cap {
        return Err(format!(
            "its xz stream inflates to more than {cap} bytes ({declared} declared)"
        ));
    }
    let mut out = Capped {
        bytes: Vec::new(),
        cap,
    };
    lzma_rs::xz_decompress(&mut io::BufReader::new(bytes), &mut out)
        .map_err(|e| format!("its xz stream cannot be inflated: {e}"))?;
    Ok(out.bytes)
}

/// The bytes the LZMA2 chunks of the first stream of the xz file `bytes` declare they inflate
/// to, read from the chunk headers without inflating anything. The LZMA2 reader stops each
/// chunk at its declared size, so their sum bounds the text of the stream (xz's own index is
/// checked only after the blocks are inflated). Said in words, with the byte offset, where the
/// container is not as the xz format lays it out.
pub(crate) fn xz_declared_size(bytes: &[u8]) -> Result<u64, String> {
    /// The stream header: magic, flags, CRC32.
    const STREAM_HEADER: usize = 12;
    let at = |pos: usize| -> Result<u8, String> {
        bytes
            .get(pos)
            .copied()
            .ok_or_else(|| format!("its xz stream ends early: at byte {pos:#x}"))
    };
    let u16_at = |pos: usize| -> Result<usize, String> {
        Ok(usize::from(at(pos)?) << 8 | usize::from(at(pos + 1)?))
    };
    let check_size = match at(7)? & 0x0F {
        0 => 0,
        id => 4usize << ((id - 1) / 3),
    };
    let mut total: u64 = 0;
    let mut pos = STREAM_HEADER;
    loop {
        let size_byte = at(pos)?;
        if size_byte == 0 {
            // The index: every block is behind.
            return Ok(total);
        }
        let block = pos;
        pos += (usize::from(size_byte) + 1) * 4;
        loop {
            let control = at(pos)?;
            match control {
                0x00 => {
                    pos += 1;
                    break;
                }
                0x01 | 0x02 => {
                    let size = u16_at(pos + 1)? + 1;
                    total += size as u64;
                    pos += 3 + size;
                }
                0x80..=0xFF => {
                    let unpacked = (usize::from(control & 0x1F) << 16 | u16_at(pos + 1)?) + 1;
                    let packed = u16_at(pos + 3)? + 1;
                    total += unpacked as u64;
                    pos += 5 + usize::from(control >= 0xC0) + packed;
                }
                _ => {
                    return Err(format!(
                        "its xz stream holds an LZMA2 chunk of unknown kind {control:#04x}: \
                         at byte {pos:#x}"
                    ));
                }
            }
        }
        // Padding to a multiple of four bytes from the block's start, then the check.
        pos += (4 - (pos - block) % 4) % 4 + check_size;
    }
}

/// The text functions (`t` and `T`) of an nm-like listing, `ADDRESS TYPE NAME [MODULE]` a
/// line, named as hpcprof names them (`NAME [MODULE] [vmlinux]`); lines of another shape are
/// skipped. Of several functions at one address the first listed is kept.
pub(crate) fn kernel_listing(text: &[u8]) -> Vec<(u64, String)> {
    let mut list = Vec::new();
    for line in text.split(|&b| b == b'\n') {
        let line = String::from_utf8_lossy(line);
        let mut fields = line.split_whitespace();
        let (Some(addr), Some(kind), Some(name)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(addr, 16) else {
            continue;
        };
        if kind != "t" && kind != "T" {
            continue;
        }
        let name = match fields.next() {
            Some(module) => format!("{name} {module} {LINUX_KERNEL_NAME}"),
            None => format!("{name} {LINUX_KERNEL_NAME}"),
        };
        list.push((addr, name));
    }
    list.sort_by_key(|(addr, _)| *addr);
    list.dedup_by_key(|(addr, _)| *addr);
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_keeps_text_functions_named_as_hpcprof_names_them() {
        let text = b"ffff0010 T start\nffff0000 t early [ext4]\nffff0020 D data\nbad line\n\
                     ffff0010 W alias\nzz T nothex\n";
        let list = kernel_listing(text);
        assert_eq!(
            list,
            vec![
                (0xffff0000, "early [ext4] [vmlinux]".to_owned()),
                (0xffff0010, "start [vmlinux]".to_owned()),
            ]
        );
        let symbols = ModuleSymbols::Kernel(list);
        assert_eq!(symbols.function_at(0xfffeffff), None);
        assert_eq!(
            symbols.function_at(0xffff0018).unwrap().entry,
            Some(0xffff0010)
        );
    }

    #[test]
    fn only_plain_relative_paths_below_the_folder_are_opened() {
        let folder = Path::new("/m");
        assert_eq!(
            in_folder(folder, "vdso/a.vdso"),
            Some(PathBuf::from("/m/vdso/a.vdso"))
        );
        assert_eq!(in_folder(folder, "/usr/lib/libc.so"), None);
        assert_eq!(in_folder(folder, "vdso/../../etc/passwd"), None);
        assert_eq!(in_folder(folder, "a.vdso"), None);
    }

    #[test]
    fn an_inflation_past_the_cap_is_refused() {
        // 1 MiB of text behind a cap of 64 KiB: the inflation stops at the cap.
        let zeros = vec![b'0'; 1 << 20];
        let mut xz = Vec::new();
        lzma_rs::xz_compress(&mut io::BufReader::new(&zeros[..]), &mut xz).unwrap();
        assert_eq!(xz_declared_size(&xz).unwrap(), 1 << 20);
        let err = inflate(&xz, 64 << 10).unwrap_err();
        assert!(err.contains("more than 65536 bytes"), "{err}");
        assert_eq!(inflate(&xz, 2 << 20).unwrap().len(), 1 << 20);
        for cut in [6, 12, 20, xz.len() / 2] {
            let err = xz_declared_size(&xz[..cut]).unwrap_err();
            assert!(err.contains("ends early: at byte 0x"), "{err}");
        }
    }
}
