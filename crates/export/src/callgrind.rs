//! Callgrind's profile format, as KCachegrind, QCachegrind and `callgrind_annotate` read it:
//! functions with their self costs by source line, and calls with their counts and inclusive
//! costs.
//!
//! - **Header**: `positions: line`; one event per value type (every value type, or only
//!   [`ExportOptions::metric`] when given), except the profile's calls value type, which
//!   callgrind carries in its `calls=` lines. An event is named by its value type's name with
//!   every character outside `[A-Za-z0-9_]` written as `_`, and described (`event:` lines) by
//!   its full name and the unit written.
//! - **Costs** are integers: counts and most times as they are; seconds as microseconds (the
//!   integer part, as `nytprofcg` writes them). `totals:` ends the file with the sum of the
//!   self costs written, the program's total.
//! - **From a call tree** (every format but NYTProf): a node's self cost goes to the function
//!   owning it (its nearest function-like frame: a loop's or line's cost goes to its function)
//!   at the node's source line (a function's own cost at its first line); a node of a
//!   function-like frame under a parent is a call from the parent's function, at the parent's
//!   line, with the node's inclusive costs and its call count (the calls value type, or 1 where
//!   the profile does not count calls). Costs are summed over the whole program's contexts.
//! - **From call edges** (NYTProf): the functions' flat self costs at their first lines, and
//!   every call edge as a call at its call site's line with its count and inclusive costs: what
//!   `nytprofcg` writes. Value types with neither (NYTProf's per-statement counts, which the
//!   model keeps on lines outside any function) are left out.
//! - **Names**: `fl=` is the function's file (else its module, else `???`), `ob=` its module
//!   where the profile knows modules, `fn=` its label; names are compressed (`(id) name` once,
//!   then `(id)`), as callgrind itself writes them.

use std::collections::HashMap;
use std::io::Write;

use foldhash::fast::RandomState;
use profcodec_profile::{ContextFilter, FrameId, Profile, Unit, ValueTypeId};

use crate::text::TextOut;
use crate::values::{self, NO_PARENT};
use crate::{ExportError, ExportOptions};

/// Writes `profile` in callgrind's format to `out` (see the [module docs](self)).
pub fn write_callgrind(
    profile: &Profile,
    options: &ExportOptions,
    out: impl Write,
) -> Result<(), ExportError> {
    let has_edges = !profile.edge_values().is_empty();
    let mut events = events(profile, options)?;
    if has_edges && options.metric.is_none() {
        // Value types kept on statement lines outside any function (NYTProf's statements)
        // have no function to carry them.
        let carried = |vt: ValueTypeId| {
            profile.edge_values().iter().any(|v| v.value_type == vt)
                || profile
                    .flat_values()
                    .iter()
                    .any(|v| v.value_type == vt && profile.frame(v.frame).kind.is_function_like())
        };
        events.retain(|e| carried(e.value_type));
    }
    let mut costs = Costs::new(events.len());
    if has_edges {
        costs.add_edges(profile, &events);
    } else {
        costs.add_tree(profile, &events);
    }
    let mut out = TextOut::new(out);
    write_header(profile, &events, &mut out);
    let totals = costs.write(profile, &events, &mut out)?;
    out.str("totals:");
    for t in totals {
        out.byte(b' ');
        out.int(t);
    }
    out.byte(b'\n');
    Ok(out.finish()?)
}

/// One event of the output: a value type and how its values become integers.
struct Event {
    value_type: ValueTypeId,
    name: String,
    /// Seconds are written as microseconds.
    micros: bool,
}

impl Event {
    fn integer(&self, value: f64) -> i64 {
        if self.micros {
            let v = value * 1e6;
            if v.is_finite() { v.trunc() as i64 } else { 0 }
        } else {
            values::integer_part(value)
        }
    }
}

fn events(profile: &Profile, options: &ExportOptions) -> Result<Vec<Event>, ExportError> {
    let chosen: Vec<ValueTypeId> = match options.metric {
        Some(_) => vec![values::value_type(profile, options)?],
        None => {
            let calls = profile.calls_value_type();
            let mut all: Vec<ValueTypeId> = profile
                .value_types()
                .map(|(id, _)| id)
                .filter(|&id| Some(id) != calls)
                .collect();
            if all.is_empty() {
                all.extend(calls);
            }
            all
        }
    };
    if chosen.is_empty() {
        return Err(ExportError::NoValues);
    }
    let mut seen: HashMap<String, u32> = HashMap::new();
    Ok(chosen
        .into_iter()
        .map(|value_type| {
            let mut name: String = profile
                .value_type_name(value_type)
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
                name.insert(0, '_');
            }
            let n = seen.entry(name.clone()).or_insert(0);
            *n += 1;
            if *n > 1 {
                name = format!("{name}_{n}");
            }
            Event {
                value_type,
                name,
                micros: profile.value_type(value_type).unit == Unit::Seconds,
            }
        })
        .collect())
}

fn write_header<W: Write>(profile: &Profile, events: &[Event], out: &mut TextOut<W>) {
    out.str("# callgrind format\nversion: 1\ncreator: profcodec-export ");
    out.str(env!("CARGO_PKG_VERSION"));
    out.byte(b'\n');
    if let Some(name) = profile.name() {
        out.str("cmd: ");
        out.str(&one_line(name));
        out.byte(b'\n');
    }
    out.str("positions: line\n");
    for e in events {
        let vt = profile.value_type(e.value_type);
        out.str("event: ");
        out.str(&e.name);
        out.str(" : ");
        out.str(&one_line(profile.value_type_name(e.value_type)));
        out.str(" (");
        out.str(if e.micros {
            "microseconds"
        } else {
            profile.unit_name(vt.unit)
        });
        out.str(")\n");
    }
    out.str("events:");
    for e in events {
        out.byte(b' ');
        out.str(&e.name);
    }
    out.str("\n\n");
}

/// `s` on one line.
fn one_line(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains(['\n', '\r']) {
        s.replace(['\n', '\r'], " ").into()
    } else {
        s.into()
    }
}

/// A call: from a function, at a line, to a function.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct CallKey {
    caller: FrameId,
    line: u32,
    callee: FrameId,
}

/// The costs of the output, summed per (function, line) and per call; each entry's costs are a
/// row of `events` numbers in one slab.
struct Costs {
    events: usize,
    own: HashMap<(FrameId, u32), u32, RandomState>,
    own_costs: Vec<f64>,
    calls: HashMap<CallKey, u32, RandomState>,
    call_costs: Vec<f64>,
    /// Per call, its count.
    call_counts: Vec<f64>,
}

impl Costs {
    fn new(events: usize) -> Costs {
        Costs {
            events,
            own: HashMap::default(),
            own_costs: Vec::new(),
            calls: HashMap::default(),
            call_costs: Vec::new(),
            call_counts: Vec::new(),
        }
    }

    fn own_slot(&mut self, function: FrameId, line: u32) -> u32 {
        let next = self.own.len() as u32;
        let slot = *self.own.entry((function, line)).or_insert(next);
        if slot == next {
            self.own_costs
                .resize(self.own_costs.len() + self.events, 0.0);
        }
        slot
    }

    fn call_slot(&mut self, key: CallKey) -> u32 {
        let next = self.calls.len() as u32;
        let slot = *self.calls.entry(key).or_insert(next);
        if slot == next {
            self.call_costs
                .resize(self.call_costs.len() + self.events, 0.0);
            self.call_counts.push(0.0);
        }
        slot
    }

    fn add_tree(&mut self, profile: &Profile, events: &[Event]) {
        let parents = values::parents(profile);
        let frames: Vec<FrameId> = profile.nodes().map(|(_, n)| n.frame).collect();
        let line = |f: FrameId| profile.frame(f).line.unwrap_or(0);
        // The function-like frame owning each node, in one sweep from the roots.
        let mut owner: Vec<FrameId> = Vec::with_capacity(parents.len());
        for (i, (_, node)) in profile.nodes().enumerate() {
            let own =
                if profile.frame(node.frame).kind.is_function_like() || parents[i] == NO_PARENT {
                    node.frame
                } else {
                    owner[parents[i] as usize]
                };
            owner.push(own);
        }
        let mut own_slots = Vec::with_capacity(parents.len());
        let mut call_slots = Vec::with_capacity(parents.len());
        for (i, (_, node)) in profile.nodes().enumerate() {
            own_slots.push(self.own_slot(owner[i], line(node.frame)));
            let p = parents[i];
            let is_call = p != NO_PARENT && profile.frame(node.frame).kind.is_function_like();
            call_slots.push(if is_call {
                self.call_slot(CallKey {
                    caller: owner[p as usize],
                    line: line(frames[p as usize]),
                    callee: node.frame,
                })
            } else {
                u32::MAX
            });
        }
        drop(owner);
        let e_count = self.events;
        for (e, event) in events.iter().enumerate() {
            let Ok(totals) = profile.node_totals(event.value_type, &ContextFilter::Whole) else {
                continue;
            };
            for i in 0..parents.len() {
                self.own_costs[own_slots[i] as usize * e_count + e] += totals.self_values[i];
                if call_slots[i] != u32::MAX {
                    self.call_costs[call_slots[i] as usize * e_count + e] += totals.inclusive[i];
                }
            }
        }
        let counts = profile
            .calls_value_type()
            .and_then(|c| profile.node_totals(c, &ContextFilter::Whole).ok());
        for (i, &slot) in call_slots.iter().enumerate() {
            if slot != u32::MAX {
                // A call that the profile did not count happened at least once.
                let count = counts.as_ref().map_or(1.0, |c| c.self_values[i].max(1.0));
                self.call_counts[slot as usize] += count;
            }
        }
    }

    fn add_edges(&mut self, profile: &Profile, events: &[Event]) {
        let selected = profile
            .selected_contexts(&ContextFilter::Whole)
            .unwrap_or_default();
        let chosen = |c: profcodec_profile::ContextId| selected.get(c.index()) == Some(&true);
        let event_of = |vt: ValueTypeId| events.iter().position(|e| e.value_type == vt);
        for v in profile.flat_values() {
            let frame = profile.frame(v.frame);
            if !chosen(v.context) || !frame.kind.is_function_like() {
                continue;
            }
            let Some(e) = event_of(v.value_type) else {
                continue;
            };
            let slot = self.own_slot(v.frame, frame.line.unwrap_or(0));
            self.own_costs[slot as usize * self.events + e] += v.self_value.unwrap_or(0.0);
        }
        let calls = profile.calls_value_type();
        for v in profile.edge_values() {
            if !chosen(v.context) {
                continue;
            }
            let edge = profile.call_edge(v.edge);
            let key = CallKey {
                caller: edge.caller,
                line: edge.site.and_then(|s| profile.frame(s).line).unwrap_or(0),
                callee: edge.callee,
            };
            if Some(v.value_type) == calls {
                let slot = self.call_slot(key);
                self.call_counts[slot as usize] += v.value;
            } else if let Some(e) = event_of(v.value_type) {
                let slot = self.call_slot(key);
                self.call_costs[slot as usize * self.events + e] += v.value;
            }
        }
    }

    /// Writes every function with its costs and calls; returns the totals of the self costs.
    fn write<W: Write>(
        &self,
        profile: &Profile,
        events: &[Event],
        out: &mut TextOut<W>,
    ) -> Result<Vec<i64>, ExportError> {
        let e_count = self.events;
        // Per function, in frame order: its own lines, then its calls.
        let mut own: Vec<(FrameId, u32, u32)> =
            self.own.iter().map(|(&(f, l), &s)| (f, l, s)).collect();
        own.sort_unstable();
        let mut calls: Vec<(CallKey, u32)> = self.calls.iter().map(|(&k, &s)| (k, s)).collect();
        calls.sort_unstable();
        let mut totals = vec![0i64; e_count];
        let mut names = Compressed::new(profile);
        let mut row = vec![0i64; e_count];
        let (mut o, mut c) = (0, 0);
        while o < own.len() || c < calls.len() {
            let function = match (own.get(o), calls.get(c)) {
                (Some(a), Some(b)) => a.0.min(b.0.caller),
                (Some(a), None) => a.0,
                (None, Some(b)) => b.0.caller,
                (None, None) => break,
            };
            let mut started = false;
            while let Some(&(f, line, slot)) = own.get(o) {
                if f != function {
                    break;
                }
                o += 1;
                let base = slot as usize * e_count;
                for (e, event) in events.iter().enumerate() {
                    row[e] = event.integer(self.own_costs[base + e]);
                }
                if row.iter().all(|&v| v == 0) {
                    continue;
                }
                if !started {
                    names.function(function, out);
                    started = true;
                }
                out.uint(u64::from(line));
                for (e, &v) in row.iter().enumerate() {
                    out.byte(b' ');
                    out.int(v);
                    totals[e] += v;
                }
                out.byte(b'\n');
                out.maybe_flush()?;
            }
            while let Some(&(key, slot)) = calls.get(c) {
                if key.caller != function {
                    break;
                }
                c += 1;
                let base = slot as usize * e_count;
                for (e, event) in events.iter().enumerate() {
                    row[e] = event.integer(self.call_costs[base + e]);
                }
                let count = values::integer_part(self.call_counts[slot as usize]).max(1);
                if !started {
                    names.function(function, out);
                    started = true;
                }
                names.callee(key.callee, out);
                out.str("calls=");
                out.int(count);
                out.byte(b' ');
                out.uint(u64::from(profile.frame(key.callee).line.unwrap_or(0)));
                out.byte(b'\n');
                out.uint(u64::from(key.line));
                for &v in &row {
                    out.byte(b' ');
                    out.int(v);
                }
                out.byte(b'\n');
                out.maybe_flush()?;
            }
            if started {
                out.byte(b'\n');
            }
        }
        Ok(totals)
    }
}

/// Callgrind's name compression: a name is written as `(id) name` the first time, `(id)`
/// after; files, functions and objects have separate ids. Each frame's three ids are found
/// once.
struct Compressed<'p> {
    profile: &'p Profile,
    files: HashMap<String, u32>,
    functions: HashMap<String, u32>,
    objects: HashMap<String, u32>,
    /// Per frame, its (object, file, function) ids once known.
    ids: Vec<Option<[u32; 3]>>,
    /// Per table (objects, files, functions), how many ids were written out in full.
    written: [Vec<bool>; 3],
    has_modules: bool,
}

impl<'p> Compressed<'p> {
    fn new(profile: &'p Profile) -> Self {
        Compressed {
            profile,
            files: HashMap::new(),
            functions: HashMap::new(),
            objects: HashMap::new(),
            ids: vec![None; profile.frames().len()],
            written: [Vec::new(), Vec::new(), Vec::new()],
            has_modules: profile.frames().any(|(_, f)| f.module.is_some()),
        }
    }

    fn intern(table: &mut HashMap<String, u32>, name: &str) -> u32 {
        let name = one_line(name);
        if let Some(&id) = table.get(name.as_ref()) {
            return id;
        }
        let id = table.len() as u32 + 1;
        table.insert(name.into_owned(), id);
        id
    }

    fn ids(&mut self, frame: FrameId) -> [u32; 3] {
        if let Some(ids) = self.ids[frame.index()] {
            return ids;
        }
        let f = self.profile.frame(frame);
        let s = |id: Option<profcodec_profile::StringId>| id.map(|id| self.profile.string(id));
        let module = s(f.module).unwrap_or("???");
        let file = s(f.file).or(s(f.module)).unwrap_or("???");
        let ids = [
            Self::intern(&mut self.objects, module),
            Self::intern(&mut self.files, file),
            Self::intern(&mut self.functions, &self.profile.frame_label(frame)),
        ];
        self.ids[frame.index()] = Some(ids);
        ids
    }

    /// Writes `(id)`, with the name the first time.
    fn write<W: Write>(&mut self, table: usize, id: u32, frame: FrameId, out: &mut TextOut<W>) {
        out.byte(b'(');
        out.uint(u64::from(id));
        out.byte(b')');
        let written = &mut self.written[table];
        let i = id as usize;
        if written.len() <= i {
            written.resize(i + 1, false);
        }
        if !written[i] {
            written[i] = true;
            let f = self.profile.frame(frame);
            let s = |id: Option<profcodec_profile::StringId>| id.map(|id| self.profile.string(id));
            let name: std::borrow::Cow<'_, str> = match table {
                0 => s(f.module).unwrap_or("???").into(),
                1 => s(f.file).or(s(f.module)).unwrap_or("???").into(),
                _ => self.profile.frame_label(frame).into(),
            };
            out.byte(b' ');
            out.str(&one_line(&name));
        }
        out.byte(b'\n');
    }

    fn function<W: Write>(&mut self, frame: FrameId, out: &mut TextOut<W>) {
        let [object, file, function] = self.ids(frame);
        if self.has_modules {
            out.str("ob=");
            self.write(0, object, frame, out);
        }
        out.str("fl=");
        self.write(1, file, frame, out);
        out.str("fn=");
        self.write(2, function, frame, out);
    }

    fn callee<W: Write>(&mut self, frame: FrameId, out: &mut TextOut<W>) {
        let [object, file, function] = self.ids(frame);
        if self.has_modules {
            out.str("cob=");
            self.write(0, object, frame, out);
        }
        out.str("cfl=");
        self.write(1, file, frame, out);
        out.str("cfn=");
        self.write(2, function, frame, out);
    }
}
