//! What follows the threads (crate docs, "The format": "After the last thread"; R:1269-1336).

use profcodec_common::{Cursor, checked_capacity};
use zerocopy::FromBytes;

use super::{CaptureView, ThreadsEnd, strip_nul};
use crate::error::{Error, Oddity};
use crate::model::Layout;
use crate::name::Name;
use crate::raw::{self, BookmarkBase};

/// A bookmark borrowed from the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BookmarkRef<'a> {
    /// Offset of the size prefix.
    pub offset: u64,
    /// Position (ns, never converted).
    pub position: u64,
    /// ARGB colour.
    pub color: u32,
    /// Text without its NUL.
    pub text: Name<'a>,
}

/// The part of the file after the threads.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TailRef<'a> {
    /// Bookmarks.
    pub bookmarks: Vec<BookmarkRef<'a>>,
    /// The file ends without the threads' end signature (2.1).
    pub missing_threads_end_mark: bool,
    /// The file ends without the bookmarks' end signature (2.1, bookmarks_count != 0).
    pub missing_bookmarks_end_mark: bool,
    /// Bytes after everything read.
    pub trailing: &'a [u8],
    /// What was odd about it.
    pub oddities: Vec<Oddity>,
}

fn signature(cur: &mut Cursor<'_>, what: &'static str) -> Result<(), Error> {
    let offset = cur.offset();
    let found = cur.u32_le(what)?;
    if found != raw::SIGNATURE {
        return Err(Error::BadSignature {
            offset,
            what,
            found,
        });
    }
    Ok(())
}

impl<'a> CaptureView<'a> {
    /// Reads what follows the threads, given where they ended ([`ThreadIter::end`](super::ThreadIter::end)).
    pub fn tail(&self, end: ThreadsEnd) -> Result<TailRef<'a>, Error> {
        let data = self.data();
        let mut cur = Cursor::new(&data[end.offset.min(data.len())..], end.offset as u64);
        let mut tail = TailRef::default();
        let layout = self.header().version.layout();
        if layout == Layout::V2_1 {
            let wanted = self.header().counters.threads_count;
            if end.threads < wanted {
                tail.oddities.push(Oddity::FewerThreads {
                    offset: self.offsets().threads_count,
                    header: wanted.into(),
                    found: end.threads.into(),
                });
            }
            // The C++ reader reads the marks only when the input has not ended (R:1269, 1336).
            if !end.by_count || cur.is_empty() {
                tail.missing_threads_end_mark = true;
                tail.oddities.push(Oddity::MissingEndMark {
                    offset: cur.offset(),
                    what: "threads end signature",
                });
            } else {
                signature(&mut cur, "threads end signature")?;
                let count = self.header().counters.bookmarks_count;
                if count != 0 {
                    let n = checked_capacity(
                        count.into(),
                        2 + raw::BOOKMARK_BASE + 1,
                        cur.remaining(),
                        self.offsets().padding - 2,
                        "header bookmarks_count",
                    )
                    .unwrap_or(0);
                    tail.bookmarks.reserve_exact(n);
                    for _ in 0..count {
                        if cur.is_empty() {
                            break;
                        }
                        tail.bookmarks.push(bookmark(&mut cur)?);
                    }
                    if cur.is_empty() {
                        tail.missing_bookmarks_end_mark = true;
                        tail.oddities.push(Oddity::MissingEndMark {
                            offset: cur.offset(),
                            what: "bookmarks end signature",
                        });
                    } else {
                        signature(&mut cur, "bookmarks end signature")?;
                    }
                }
            }
        }
        tail.trailing = cur.rest();
        if !tail.trailing.is_empty() {
            tail.oddities.push(Oddity::TrailingBytes {
                offset: cur.offset(),
                len: tail.trailing.len() as u64,
            });
        }
        Ok(tail)
    }
}

fn bookmark<'a>(cur: &mut Cursor<'a>) -> Result<BookmarkRef<'a>, Error> {
    let offset = cur.offset();
    let size = cur.u16_le("bookmark size")?;
    // size = 12 + text + NUL (Bookmark::BaseSize is 13; R:1300).
    if usize::from(size) < raw::BOOKMARK_BASE + 1 {
        return Err(Error::TooSmall {
            offset,
            what: "bookmark",
            min: (raw::BOOKMARK_BASE + 1) as u64,
            found: size.into(),
        });
    }
    let payload = cur.bytes(size.into(), "bookmark")?;
    let Ok((base, text)) = BookmarkBase::ref_from_prefix(payload) else {
        return Err(Error::TooSmall {
            offset,
            what: "bookmark",
            min: (raw::BOOKMARK_BASE + 1) as u64,
            found: size.into(),
        });
    };
    Ok(BookmarkRef {
        offset,
        position: base.position.get(),
        color: base.color.get(),
        text: Name(strip_nul(
            text,
            offset + 2 + raw::BOOKMARK_BASE as u64,
            "bookmark text",
        )?),
    })
}
