//! Hostile input: every corpus file, cut at every truncation point (with and without
//! its footer restored) and with single bits flipped, gives `Ok` or a typed error, never a panic.

mod read_support;

use profcodec_hpctoolkit::{Error, FileKind};
use profcodec_testkit::hostile::{bit_flips, truncation_points};
use read_support::{corpus_files, touch, touch_database};

/// Bytes decoded per file for the expensive mutants (mended cuts and bit flips): the whole
/// crate's debug-mode `cargo test` must stay near two minutes, so large files get a sparser (but
/// still spread) sample; every plain cut is tried, since the footer check rejects those early.
const BUDGET: usize = 4 << 20;

/// How many of `available` mutants to try for a file of `len` bytes.
fn sample(len: usize, available: usize) -> usize {
    (BUDGET / len.max(1)).clamp(24, 600).min(available)
}

#[test]
fn truncations_and_bit_flips_never_panic() {
    let files = corpus_files();
    let mut runs = 0usize;
    for (kind, path) in &files {
        let data = std::fs::read(path).expect("read corpus file");
        touch(*kind, &data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let footer = kind.footer();
        let points = truncation_points(data.len());
        for &cut in &points {
            // Plain cut: the footer check rejects it.
            assert!(
                touch(*kind, &data[..cut]).is_err(),
                "{} cut at {cut} accepted",
                path.display()
            );
            runs += 1;
        }
        // Cut with the footer restored: every pointer past the cut must be caught.
        let n = sample(data.len(), points.len());
        for k in 0..n {
            let cut = points[k * points.len() / n];
            let mut mended = data[..cut].to_vec();
            mended.extend_from_slice(&footer);
            let _ = touch(*kind, &mended);
            runs += 1;
        }
        for mutant in bit_flips(&data, sample(data.len(), usize::MAX)) {
            let _ = touch(*kind, &mutant);
            runs += 1;
        }
    }
    println!("{runs} hostile decodes over {} files", files.len());
}

#[test]
fn errors_name_file_and_offset() {
    for (kind, path) in corpus_files().into_iter().take(8) {
        let data = std::fs::read(&path).expect("read corpus file");
        let mut bad = data.clone();
        bad[0] = b'X';
        let e = touch(kind, &bad).expect_err("bad magic");
        assert!(matches!(e, Error::BadMagic { .. }), "{e}");
        assert_eq!(e.file(), Some(kind));
        assert_eq!(e.offset(), Some(0));
        let mut bad = data.clone();
        bad[0xe] = 5;
        let e = touch(kind, &bad).expect_err("major 5");
        assert!(e.to_string().contains("majorVersion: at byte 0xe"), "{e}");
        // A later minor version is read with the stored strides.
        let mut newer = data.clone();
        newer[0xf] = 7;
        touch(kind, &newer).unwrap_or_else(|e| panic!("{}: minor 7: {e}", path.display()));
        let n = data.len();
        let mut bad = data;
        bad[n - 1] ^= 0x20;
        let e = touch(kind, &bad).expect_err("footer");
        assert_eq!(e.offset(), Some(n as u64 - 8), "{e}");
    }
}

#[test]
fn damaged_databases_never_panic() {
    let Some(root) =
        profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit")
    else {
        return;
    };
    let dir = root.join("dbase/small.d");
    let read = |k: FileKind| std::fs::read(dir.join(k.file_name())).expect("small.d file");
    let parts = FileKind::ALL.map(read);
    for (which, part) in parts.iter().enumerate() {
        for mutant in bit_flips(part, 400) {
            let mut p: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
            p[which] = &mutant;
            let _ = touch_database(p[0], Some(p[1]), Some(p[2]), Some(p[3]));
        }
    }
    touch_database(&parts[0], Some(&parts[1]), Some(&parts[2]), Some(&parts[3])).expect("small.d");
}
