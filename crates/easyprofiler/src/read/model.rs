//! From a view to the owned model.

use super::{CaptureView, Mode, RecordRef};
use crate::error::Error;
use crate::model::{
    Bookmark, Capture, ContextSwitch, Descriptor, Record, RecordBody, Tail, Thread,
};

impl CaptureView<'_> {
    /// Reads everything into the owned model. In strict mode the file is first validated the
    /// way the C++ reader does ([`CaptureView::validate`]).
    pub fn to_model(&self) -> Result<Capture, Error> {
        if self.mode() == Mode::Strict {
            self.validate()?;
        }
        let h = self.header();
        let descriptors = self
            .descriptors()
            .iter()
            .map(|d| {
                d.map(|d| {
                    Box::new(Descriptor {
                        id: d.id,
                        line: d.line,
                        color: d.color,
                        block_type: d.block_type,
                        status: d.status,
                        name: d.name.to_vec(),
                        file: d.file.to_vec(),
                    })
                })
            })
            .collect();
        let mut threads = Vec::new();
        let mut iter = self.threads();
        while let Some(t) = iter.next() {
            let t = t?;
            let cs_cap = t.context_switches_capacity()?;
            let mut context_switches = Vec::with_capacity(cs_cap);
            for cs in t.context_switches() {
                let cs = cs?;
                context_switches.push(ContextSwitch {
                    begin: cs.begin,
                    end: cs.end,
                    target_tid: cs.target_tid,
                    name: cs.name.to_vec(),
                });
            }
            let cap = t.records_capacity()?;
            let mut records = Vec::with_capacity(cap);
            let mut walked = t.records();
            for r in walked.by_ref() {
                let r = r?;
                let decoded = self.decode_record(&r)?;
                let body = match (decoded, decoded.to_value()) {
                    (_, Some(v)) => RecordBody::Value(v),
                    (RecordRef::Named { name, .. }, None) => RecordBody::Named(name.to_vec()),
                    (RecordRef::Value { .. }, None) => RecordBody::Named(Vec::new()),
                };
                records.push(Record {
                    begin: r.begin(),
                    end: r.end(),
                    descriptor: r.descriptor(),
                    body,
                });
            }
            iter.records_walked(&walked);
            threads.push(Thread {
                id: t.id,
                name: t.name.map(|n| n.to_vec()),
                context_switches,
                records,
            });
        }
        let Some(end) = iter.end() else {
            // The iterator only stops without an end after yielding an error, handled above.
            return Ok(Capture::default());
        };
        let tail = self.tail(end)?;
        Ok(Capture {
            version: h.version,
            pid: h.pid,
            cpu_frequency: h.cpu_frequency,
            begin_time: h.begin_time,
            end_time: h.end_time,
            counters: h.counters,
            descriptors,
            threads,
            bookmarks: tail
                .bookmarks
                .iter()
                .map(|b| Bookmark {
                    position: b.position,
                    color: b.color,
                    text: b.text.to_vec(),
                })
                .collect(),
            tail: Tail {
                missing_threads_end_mark: tail.missing_threads_end_mark,
                missing_bookmarks_end_mark: tail.missing_bookmarks_end_mark,
                trailing: tail.trailing.to_vec(),
            },
        })
    }
}
