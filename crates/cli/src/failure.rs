//! A command's failure and its exit status, the same in `profcodec` and `profcodec-sql`:
//!
//! | status | meaning |
//! |---|---|
//! | 0 | success, or standard output closed by its reader (`\| head`), quietly |
//! | 1 | an invalid input (the message gives the byte offset), or an I/O error |
//! | 2 | a usage error: an option that does not fit the input, a format this build lacks |
//! | 3 | an output refused by the output policy, or not put in place ([`OUTPUT_FAILED`]) |

use std::io;

use profcodec::inspect::Error as VerbError;
use profcodec::output::{CheckedOutput, OutputError, WriteError};

/// The exit status of an output that could not be written where asked (refused by the output
/// policy, or an I/O error while placing it): apart from invalid input (1) and usage (2), so
/// that a script can tell a bad output path from a bad profile.
pub const OUTPUT_FAILED: u8 = 3;

/// A failure, with the exit status it maps to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The process's exit status.
    pub status: u8,
    /// What to print on standard error (nothing when empty).
    pub message: String,
}

impl Failure {
    /// A failure with `status` and `message`.
    pub fn new(status: u8, message: impl Into<String>) -> Failure {
        Failure {
            status,
            message: message.into(),
        }
    }

    /// A closed standard output (`| head`): not a failure, and nothing to say.
    pub fn quiet() -> Failure {
        Failure::new(0, String::new())
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            return Failure::quiet();
        }
        Failure::new(1, e.to_string())
    }
}

impl From<VerbError> for Failure {
    fn from(e: VerbError) -> Self {
        let status = match &e {
            VerbError::Io(io) if io.kind() == io::ErrorKind::BrokenPipe => return Failure::quiet(),
            VerbError::Invalid { .. } | VerbError::Io(_) => 1,
            _ => 2,
        };
        Failure::new(status, e.to_string())
    }
}

impl From<OutputError> for Failure {
    fn from(e: OutputError) -> Self {
        Failure::new(OUTPUT_FAILED, e.message_with_override("--force"))
    }
}

impl<E: Into<Failure> + std::fmt::Display> From<WriteError<E>> for Failure {
    fn from(e: WriteError<E>) -> Self {
        match e {
            WriteError::Output(e) => e.into(),
            WriteError::Write(e) => e.into(),
            e => Failure::new(OUTPUT_FAILED, e.to_string()),
        }
    }
}

impl From<profcodec::OpenError> for Failure {
    fn from(e: profcodec::OpenError) -> Self {
        // An input that cannot be read, or is no profile at all, is invalid (1); bytes of a
        // format this build does not know are unsupported (2).
        let status = match e {
            profcodec::OpenError::Unknown { .. } => 2,
            _ => 1,
        };
        Failure::new(status, e.to_string())
    }
}

impl From<profcodec::MergeError> for Failure {
    /// As the input's own failure: what this build or this input cannot give is a usage error.
    fn from(e: profcodec::MergeError) -> Self {
        use profcodec::{MergeError as E, ReadError as R};
        match e {
            E::Open(e) => e.into(),
            E::Read {
                source: R::Unsupported(_),
                ..
            } => Failure::new(2, e.to_string()),
            e => Failure::new(1, e.to_string()),
        }
    }
}

/// Prints `message` as a line on standard error, escaped for the terminal
/// ([`profcodec::terminal`]): an error or warning may quote names and paths from an input,
/// whose control characters, escape sequences and bidi controls must not reach the terminal.
/// Every message of both programs goes through here.
pub fn say(message: impl std::fmt::Display) {
    eprintln!("{}", profcodec::terminal::escape_display(&message));
}

impl Failure {
    /// Prints the message, if any, after `profcodec: `, escaped ([`say`]).
    pub fn say(&self) {
        if !self.message.is_empty() {
            say(format_args!("profcodec: {}", self.message));
        }
    }
}

/// Says on standard error which staging folders of killed runs a check removed beside an
/// output.
pub fn note_stale_staging(checked: &CheckedOutput) {
    for stale in checked.removed_stale_staging() {
        say(format_args!(
            "profcodec: removed {}, left by an earlier run that was killed",
            stale.display()
        ));
    }
}
