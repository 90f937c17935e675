//! The zlib stream of a file in memory inflated on a second thread, ahead of the thread that
//! parses it: on two cores the two run side by side, so a compressed file reads in about the time
//! of the slower of the two instead of their sum.
//!
//! The inflating thread is a scoped one, joined before [`with_inflate_ahead`] returns. It hands
//! over the inflated stream in pieces of [`PIECE`] bytes through a channel that holds at most
//! [`PIECES_AHEAD`] of them, and the parser gives the emptied buffers back, so memory stays near
//! `(PIECES_AHEAD + 3) * PIECE` whatever the stream inflates to. The parser applies the same
//! checks as when it inflates itself ([`super::Reader`]: the inflation ratio of an unfinished
//! record, the zlib damage with its file offset, the bytes after the stream); when it stops early
//! (damage, a bomb, an error of its own), it drops its end of the channel and the inflating
//! thread stops at its next hand-over.

use std::sync::mpsc::{Receiver, Sender, SyncSender, TryRecvError, channel, sync_channel};

use flate2::{Decompress, FlushDecompress, Status};

use super::zlib::{TRAILER_KEEP, zlib_problem};
use crate::error::Error;

/// Inflated bytes per hand-over: large enough that the hand-over costs little per byte, small
/// enough to stay in the cache the parser reads it from.
pub(crate) const PIECE: usize = 128 * 1024;

/// Free bytes at the start of every piece's buffer, where the parser puts the unfinished record
/// it still holds from the previous piece, so that the piece is parsed in place, not copied.
pub(crate) const HEADROOM: usize = 4096;

/// Pieces inflated and not yet taken by the parser, at most.
const PIECES_AHEAD: usize = 4;

/// Compressed bytes given to zlib per call: the inflating thread checks for a hang-up between
/// calls, so a bomb's worth of output is never produced at once.
const INPUT_STEP: usize = 64 * 1024;

/// One hand-over: inflated bytes (from [`HEADROOM`] on), how many compressed bytes were consumed
/// once they were inflated, and whether the stream ended with them.
#[derive(Debug)]
pub(crate) struct Piece {
    pub(crate) bytes: Vec<u8>,
    pub(crate) total_in: u64,
    pub(crate) end: Option<End>,
}

/// How the zlib stream ended.
#[derive(Debug)]
pub(crate) enum End {
    /// At its end: the first [`TRAILER_KEEP`] bytes after it, and how many bytes follow it.
    Stream { after: Vec<u8>, after_len: u64 },
    /// Damaged or cut short ([`Error::Inflate`], with the file offset where inflation stopped).
    Damaged(Error),
}

/// The parser's end of the channel.
#[derive(Debug)]
pub(crate) struct Ahead {
    pieces: Receiver<Piece>,
    recycle: Sender<Vec<u8>>,
    /// Compressed bytes consumed when the last piece taken was inflated.
    pub(crate) total_in: u64,
}

impl Ahead {
    /// The next piece, or `None` when the inflating thread stopped without saying how the
    /// stream ended (it never does so unless the parser hung up first).
    pub(crate) fn next(&mut self) -> Option<Piece> {
        let piece = self.pieces.recv().ok()?;
        self.total_in = piece.total_in;
        Some(piece)
    }

    /// Gives an emptied buffer back for another piece.
    pub(crate) fn give_back(&self, mut buf: Vec<u8>) {
        if buf.capacity() >= HEADROOM + PIECE {
            buf.clear();
            // The thread may have stopped; then the buffer is simply dropped.
            let _ = self.recycle.send(buf);
        }
    }
}

/// Runs `f` with an [`Ahead`] over the zlib stream `stream`, whose first byte is at file offset
/// `start`, inflated by a scoped second thread; `f` gets `None` (and inflates inline) when
/// `allowed` is false, the machine has one core or no thread could be started.
///
/// `f` must drop the [`Ahead`] before it returns (it is not `'static` in spirit: the scope waits
/// for the thread, which waits for the parser while the channel is full).
pub(crate) fn with_inflate_ahead<T>(
    stream: &[u8],
    start: u64,
    allowed: bool,
    f: impl FnOnce(Option<Ahead>) -> T,
) -> T {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    if !allowed || cores < 2 {
        return f(None);
    }
    let (piece_tx, piece_rx) = sync_channel(PIECES_AHEAD);
    let (recycle_tx, recycle_rx) = channel();
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("nytprof-inflate".into())
            .spawn_scoped(scope, move || {
                inflate(stream, start, &piece_tx, &recycle_rx)
            });
        match worker {
            Ok(_) => f(Some(Ahead {
                pieces: piece_rx,
                recycle: recycle_tx,
                total_in: 0,
            })),
            Err(_) => f(None),
        }
    })
}

/// Inflates `stream` (file offset `start`) piece by piece into `pieces` until the stream ends or
/// breaks (said in the last piece), or the parser hangs up.
fn inflate(stream: &[u8], start: u64, pieces: &SyncSender<Piece>, recycle: &Receiver<Vec<u8>>) {
    let mut d = Decompress::new(true);
    loop {
        let mut buf = match recycle.try_recv() {
            Ok(buf) => buf,
            Err(TryRecvError::Empty) => Vec::with_capacity(HEADROOM + PIECE),
            Err(TryRecvError::Disconnected) => return,
        };
        buf.resize(HEADROOM, 0);
        let end = fill(&mut d, stream, start, &mut buf);
        let last = end.is_some();
        let piece = Piece {
            bytes: buf,
            total_in: d.total_in(),
            end,
        };
        if pieces.send(piece).is_err() || last {
            return;
        }
    }
}

/// Inflates into `buf` until it holds [`PIECE`] bytes after the headroom, or the stream ends or
/// breaks. The checks are those of the inline reader: no progress with input left is damage, no
/// input left before the end is a cut stream; neither ever loops.
fn fill(d: &mut Decompress, stream: &[u8], start: u64, buf: &mut Vec<u8>) -> Option<End> {
    while buf.len() < HEADROOM + PIECE {
        let consumed = (d.total_in() as usize).min(stream.len());
        let input = &stream[consumed..];
        let input = &input[..input.len().min(INPUT_STEP)];
        let (before_in, before_out) = (d.total_in(), d.total_out());
        let status = d.decompress_vec(input, buf, FlushDecompress::None);
        let at = start + d.total_in();
        match status {
            Ok(Status::StreamEnd) => {
                let rest = &stream[(d.total_in() as usize).min(stream.len())..];
                return Some(End::Stream {
                    after: rest[..rest.len().min(TRAILER_KEEP)].to_vec(),
                    after_len: rest.len() as u64,
                });
            }
            Ok(_) => {
                if d.total_in() == before_in && d.total_out() == before_out {
                    let cut = input.is_empty();
                    return Some(End::Damaged(Error::Inflate {
                        offset: at,
                        problem: if cut {
                            "a stream cut short"
                        } else {
                            "corrupt deflate data"
                        },
                    }));
                }
            }
            Err(e) => {
                return Some(End::Damaged(Error::Inflate {
                    offset: at,
                    problem: zlib_problem(&e),
                }));
            }
        }
    }
    None
}
