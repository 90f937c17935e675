//! Crafted ELF binaries for the hostile tests, written with `object`'s writer (a relocatable
//! object patched to a shared library's type, which is all the symbolizer reads of it) and
//! DWARF bytes written by hand where a writer would refuse them or recurse.
#![allow(dead_code, unreachable_pub)] // each test binary uses some; `pub` for the tests

use object::write::{Object, Symbol, SymbolSection};
use object::{
    Architecture, BinaryFormat, Endianness, SectionFlags, SectionKind, SymbolFlags, SymbolKind,
    SymbolScope,
};

/// The code of the crafted programs: `main` calls the second function, which calls the third
/// (`E8 rel32` at each call site), sampled inside the third.
pub const CODE_SIZE: usize = 0x40;
/// The return address in `main` (after its call).
pub const MAIN_RETURN: u64 = 0x18;
/// The return address in the second function.
pub const SECOND_RETURN: u64 = 0x28;
/// A sampled address in the third function.
pub const LEAF: u64 = 0x34;

/// A section to add: name, bytes, and whether it is `SHF_COMPRESSED` (its bytes then start
/// with the `Elf64_Chdr` the caller wrote).
pub struct Extra<'a> {
    pub name: &'a str,
    pub data: Vec<u8>,
    pub compressed: bool,
}

/// An x86-64 ELF shared library whose functions at 0x10, 0x20 and 0x30 are named `names`,
/// with the sections `extra`.
pub fn program(names: [&str; 3], extra: Vec<Extra<'_>>) -> Vec<u8> {
    let mut obj = Object::new(BinaryFormat::Elf, Architecture::X86_64, Endianness::Little);
    let text = obj.add_section(Vec::new(), b".text".to_vec(), SectionKind::Text);
    let mut code = vec![0x90u8; CODE_SIZE];
    for call in [0x13usize, 0x23] {
        code[call] = 0xE8;
        code[call + 1..call + 5].copy_from_slice(&0x0bu32.to_le_bytes());
    }
    obj.append_section_data(text, &code, 16);
    for (i, name) in names.iter().enumerate() {
        obj.add_symbol(Symbol {
            name: name.as_bytes().to_vec(),
            value: 0x10 * (i as u64 + 1),
            size: 0x10,
            kind: SymbolKind::Text,
            scope: SymbolScope::Linkage,
            weak: false,
            section: SymbolSection::Section(text),
            flags: SymbolFlags::None,
        });
    }
    for e in extra {
        let id = obj.add_section(Vec::new(), e.name.as_bytes().to_vec(), SectionKind::Debug);
        obj.append_section_data(id, &e.data, 1);
        if e.compressed {
            obj.section_mut(id).flags = SectionFlags::Elf {
                sh_flags: u64::from(object::elf::SHF_COMPRESSED),
            };
        }
    }
    let mut bytes = obj.write().expect("write the ELF");
    // ET_DYN: a load module's type.
    bytes[16..18].copy_from_slice(&3u16.to_le_bytes());
    bytes
}

/// A compressed section's bytes: the `Elf64_Chdr` claiming `claimed` bytes of `format`
/// (1 zlib, 2 zstd), then `data`.
pub fn compressed(format: u32, claimed: u64, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&format.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&claimed.to_le_bytes());
    out.extend_from_slice(&1u64.to_le_bytes());
    out.extend_from_slice(data);
    out
}

/// `len` zero bytes compressed with zlib.
pub fn zlib_zeros(len: usize) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(&vec![0u8; len]).expect("deflate");
    e.finish().expect("deflate")
}

/// `len` zero bytes compressed with zstd.
pub fn zstd_zeros(len: usize) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(
        &vec![0u8; len][..],
        ruzstd::encoding::CompressionLevel::Fastest,
    )
}

/// `.debug_abbrev` and `.debug_info` (DWARF 4) of one unit over the code: a subprogram `name`
/// at 0x30..0x40 with `depth` inlined subroutines nested in one another around it all.
pub fn nested_inlines(depth: usize) -> (Vec<u8>, Vec<u8>) {
    const ADDR: u16 = 0x01; // DW_FORM_addr
    const DATA4: u16 = 0x06;
    const STRING: u16 = 0x08;
    let abbrev = |code: u8, tag: u8, attrs: &[(u8, u16)]| {
        let mut a = vec![code, tag, 1]; // DW_CHILDREN_yes
        for &(at, form) in attrs {
            a.extend_from_slice(&[at, form as u8]);
        }
        a.extend_from_slice(&[0, 0]);
        a
    };
    let range = [(0x11u8, ADDR), (0x12, DATA4)]; // DW_AT_low_pc, DW_AT_high_pc
    let mut abbrevs = Vec::new();
    abbrevs.extend(abbrev(1, 0x11, &range)); // DW_TAG_compile_unit
    abbrevs.extend(abbrev(2, 0x2e, &[(0x03, STRING), range[0], range[1]])); // subprogram, name
    abbrevs.extend(abbrev(3, 0x1d, &range)); // DW_TAG_inlined_subroutine
    abbrevs.push(0);
    let pc = |out: &mut Vec<u8>| {
        out.extend_from_slice(&0x30u64.to_le_bytes());
        out.extend_from_slice(&0x10u32.to_le_bytes());
    };
    let mut dies = vec![1];
    pc(&mut dies);
    dies.push(2);
    dies.extend_from_slice(b"deep\0");
    pc(&mut dies);
    for _ in 0..depth {
        dies.push(3);
        pc(&mut dies);
    }
    dies.extend(std::iter::repeat_n(0u8, depth + 2));
    let mut info = Vec::new();
    info.extend_from_slice(&(dies.len() as u32 + 7).to_le_bytes());
    info.extend_from_slice(&4u16.to_le_bytes());
    info.extend_from_slice(&0u32.to_le_bytes());
    info.push(8);
    info.extend(dies);
    (abbrevs, info)
}

/// A program with a DWARF unit nesting `depth` inlined calls.
pub fn deep_program(depth: usize) -> Vec<u8> {
    let (abbrev, info) = nested_inlines(depth);
    program(
        ["main", "other", "work"],
        vec![
            Extra {
                name: ".debug_abbrev",
                data: abbrev,
                compressed: false,
            },
            Extra {
                name: ".debug_info",
                data: info,
                compressed: false,
            },
        ],
    )
}

/// A program whose `.debug_str` is `debug_str` (compressed), with a small valid unit beside it.
pub fn bomb_program(debug_str: Vec<u8>) -> Vec<u8> {
    let (abbrev, info) = nested_inlines(0);
    program(
        ["main", "other", "work"],
        vec![
            Extra {
                name: ".debug_abbrev",
                data: abbrev,
                compressed: false,
            },
            Extra {
                name: ".debug_info",
                data: info,
                compressed: false,
            },
            Extra {
                name: ".debug_str",
                data: debug_str,
                compressed: true,
            },
        ],
    )
}
