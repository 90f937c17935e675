//! A second way to read a file in memory: its packets decompressed ahead on another thread while
//! this one parses, for two cores (an addition to [`SliceSource`], which does both on one).
//!
//! The pieces of the logical stream and their file offsets are exactly those of
//! [`SliceSource`], so the records, traces and errors are the same; only the work is split.

use std::marker::PhantomData;
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};

use crate::error::Error;
use crate::model::Container;
use crate::read::Reader;
use crate::read::packets::{SliceSource, StreamSource};

/// Bytes of logical stream the decompressing thread sends at a time (a few packets, so the
/// hand-over costs little per byte, and small enough to stay in the cache).
const BATCH: usize = 1 << 17;

/// Pieces in a batch, at most: empty packets add pieces and no bytes.
const PIECES: usize = 1 << 12;

/// Batches on their way to the reader, at most: bounds the memory to a few hundred KiB.
const BATCHES_AHEAD: usize = 4;

/// Pieces of the logical stream: the bytes, and each piece's file offset and length.
#[derive(Debug, Default)]
struct Batch {
    bytes: Vec<u8>,
    pieces: Vec<(u64, usize)>,
}

/// A [`StreamSource`] fed by a thread that decompresses the packets ahead; made by
/// [`with_threaded_reader`].
#[derive(Debug)]
pub struct ThreadedSource<'scope> {
    container: Container,
    batches: Receiver<Result<Batch, Error>>,
    recycle: Sender<Batch>,
    current: Batch,
    /// Index of the next piece of `current`, and the byte where it starts.
    next: (usize, usize),
    /// Tied to the thread scope: the source cannot outlive the thread that feeds it.
    _scope: PhantomData<&'scope ()>,
}

impl StreamSource for ThreadedSource<'_> {
    fn fill(&mut self, buf: &mut Vec<u8>, at: usize) -> Result<Option<(u64, usize)>, Error> {
        if self.next.0 == self.current.pieces.len() {
            let Ok(batch) = self.batches.recv() else {
                return Ok(None);
            };
            let done = std::mem::replace(&mut self.current, batch?);
            // The thread may have stopped; then the batch is simply dropped.
            let _ = self.recycle.send(done);
            self.next = (0, 0);
        }
        let Some(&(offset, n)) = self.current.pieces.get(self.next.0) else {
            return Ok(None);
        };
        let start = self.next.1;
        let piece = self.current.bytes.get(start..start + n).unwrap_or_default();
        if buf.len() < at + n {
            buf.resize(at + n, 0);
        }
        buf[at..at + n].copy_from_slice(piece);
        self.next = (self.next.0 + 1, start + n);
        Ok(Some((offset, n)))
    }

    fn container(&self) -> Container {
        self.container
    }
}

/// Decompresses the packets of `source` in batches until the file ends, an error (sent last) or
/// the reader hangs up.
fn produce(
    mut source: SliceSource<'_>,
    batches: &SyncSender<Result<Batch, Error>>,
    recycle: &Receiver<Batch>,
) {
    loop {
        let mut batch = recycle.try_recv().unwrap_or_default();
        batch.pieces.clear();
        let mut len = 0;
        let mut end = None;
        while len < BATCH && batch.pieces.len() < PIECES {
            match source.fill(&mut batch.bytes, len) {
                Ok(Some((offset, n))) => {
                    batch.pieces.push((offset, n));
                    len += n;
                }
                Ok(None) => {
                    end = Some(None);
                    break;
                }
                Err(e) => {
                    end = Some(Some(e));
                    break;
                }
            }
        }
        if !batch.pieces.is_empty() && batches.send(Ok(batch)).is_err() {
            return;
        }
        match end {
            None => {}
            Some(None) => return,
            Some(Some(e)) => {
                let _ = batches.send(Err(e));
                return;
            }
        }
    }
}

/// Runs `f` on a [`Reader`] of `file` whose packets another thread decompresses ahead (a scoped
/// thread, joined before this returns). The reader gives what [`Reader::from_slice`] gives;
/// errors of the prologue and header are returned before `f` runs.
///
/// ```
/// use profcodec_statprofiler::read::with_threaded_reader;
/// use profcodec_statprofiler::{Container, Header, PerlStr, TraceReader, Writer};
/// let mut w = Writer::new(Vec::new(), &Header::default(), Container::Snappy).unwrap();
/// w.start_sample(2, &PerlStr::bytes(b"add")).unwrap();
/// w.end_sample().unwrap();
/// let file = w.finish().unwrap();
///
/// let weights = with_threaded_reader(&file, |reader| {
///     let mut traces = TraceReader::new(reader);
///     let mut weights = vec![];
///     while let Some(t) = traces.next_trace()? {
///         weights.push(t.weight);
///     }
///     Ok(weights)
/// })
/// .unwrap();
/// assert_eq!(weights, [2]);
/// ```
pub fn with_threaded_reader<T>(
    file: &[u8],
    f: impl for<'scope> FnOnce(Reader<ThreadedSource<'scope>>) -> Result<T, Error>,
) -> Result<T, Error> {
    let source = SliceSource::new(file)?;
    let container = source.container();
    let (batch_tx, batch_rx) = sync_channel(BATCHES_AHEAD);
    let (recycle_tx, recycle_rx) = channel();
    std::thread::scope(|scope| {
        // A thread that cannot be started (resources exhausted) is an I/O error, not a panic.
        std::thread::Builder::new()
            .name("statprofiler-snappy".into())
            .spawn_scoped(scope, move || produce(source, &batch_tx, &recycle_rx))
            .map_err(|e| Error::Io {
                offset: 0,
                kind: e.kind(),
            })?;
        let threaded = ThreadedSource {
            container,
            batches: batch_rx,
            recycle: recycle_tx,
            current: Batch::default(),
            next: (0, 0),
            _scope: PhantomData,
        };
        // The reader (and with it the receiver) is dropped before the scope joins the thread,
        // so a thread blocked on a full channel sees the hang-up and stops.
        f(Reader::with_source(threaded)?)
    })
}
