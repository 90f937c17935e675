//! What `convert` shows while it runs: on a terminal, a line that counts the bytes written (a
//! single large input shows its progress too, not only a count of files), and, on any standard
//! error, a word when the output grows much larger than its inputs.

use std::io::{self, Write};
use std::path::Path;
use std::time::Duration;

use indicatif::{HumanBytes, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// An output this many times its inputs' size is said on standard error...
const GROWTH: u64 = 4;
/// ... once it is past this size too (small outputs are not worth a word).
const GROWTH_FLOOR: u64 = 64 << 20;

/// The progress line of one `convert` run and the size of its inputs.
pub(crate) struct Watch {
    bar: ProgressBar,
    input_bytes: u64,
}

impl Watch {
    /// A watch over a conversion of `inputs`: its line is drawn on standard error only when it
    /// is a terminal (indicatif's stderr target draws nothing elsewhere).
    pub(crate) fn new(inputs: &[impl AsRef<Path>]) -> Watch {
        let input_bytes = profcodec_export::input_bytes(inputs);
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} {msg}: {bytes} written ({bytes_per_sec}), {elapsed}",
        ) {
            bar.set_style(style);
        }
        bar.set_message(format!("reading {} of input", HumanBytes(input_bytes)));
        bar.enable_steady_tick(Duration::from_millis(200));
        Watch { bar, input_bytes }
    }

    /// `out` counted on this watch's line, and said on standard error once it passes
    /// [`GROWTH`] times the inputs and [`GROWTH_FLOOR`].
    pub(crate) fn writer<'a>(&'a self, out: &'a mut dyn Write) -> Watched<'a> {
        self.bar.set_message("writing");
        Watched {
            out,
            watch: self,
            written: 0,
            warn_at: self.input_bytes.saturating_mul(GROWTH).max(GROWTH_FLOOR),
            warned: false,
        }
    }

    /// Says `message` on standard error without breaking the progress line.
    fn say(&self, message: impl std::fmt::Display) {
        self.bar
            .suspend(|| profcodec_cli::failure::say(format_args!("profcodec: {message}")));
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// An output being written, counted by its [`Watch`].
pub(crate) struct Watched<'a> {
    out: &'a mut dyn Write,
    watch: &'a Watch,
    written: u64,
    warn_at: u64,
    warned: bool,
}

impl Watched<'_> {
    /// Says, when the output grew past its word's threshold, how large it ended.
    pub(crate) fn finish(&self) {
        if self.warned {
            self.watch.say(format_args!(
                "the output took {}, {:.1} times its inputs' {}",
                HumanBytes(self.written),
                self.written as f64 / self.watch.input_bytes.max(1) as f64,
                HumanBytes(self.watch.input_bytes)
            ));
        }
    }
}

impl Write for Watched<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.out.write(buf)?;
        self.written = self.written.saturating_add(n as u64);
        self.watch.bar.set_position(self.written);
        if !self.warned && self.written > self.warn_at {
            self.warned = true;
            self.watch.say(format_args!(
                "the output is over {} times its inputs' {} ({} written so far); \
                 --max-output SIZE stops it at a size",
                GROWTH,
                HumanBytes(self.watch.input_bytes),
                HumanBytes(self.written)
            ));
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An output past four times its inputs and 64 MiB is said once; a smaller one is not.
    #[test]
    fn an_output_much_larger_than_its_inputs_is_said_once() {
        let watch = Watch {
            bar: ProgressBar::hidden(),
            input_bytes: 1 << 20,
        };
        let chunk = vec![0u8; 1 << 20];
        let mut sink = io::sink();
        let mut out = watch.writer(&mut sink);
        for _ in 0..64 {
            out.write_all(&chunk).unwrap_or_default();
        }
        assert!(!out.warned, "64 MiB is not past the floor");
        out.write_all(&chunk).unwrap_or_default();
        assert!(out.warned && out.written == 65 << 20);

        // 100 MiB of inputs: 400 MiB is where the word starts.
        let large = Watch {
            bar: ProgressBar::hidden(),
            input_bytes: 100 << 20,
        };
        let out = large.writer(&mut sink);
        assert_eq!(out.warn_at, 400 << 20);
    }
}
