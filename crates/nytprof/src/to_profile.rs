//! Conversion into the format-neutral model of `profcodec-profile` (feature `profile`, on by
//! default).
//!
//! What the model holds, all in one context: the process of the profile ([`IdKind::Process`] and
//! its pid; a model holding several processes, as [`Profile::merge`] makes, gets the empty tuple
//! named after its pids):
//!
//! - **subs**: one [`FrameKind::Function`] frame per sub, named `package::sub` as the profile
//!   names it (after Data.pm's eval collapsing, like the rest of the model), with the file and
//!   first line of its definition (none for xsubs) and its package as the frame's module. Flat
//!   values exactly as `Devel::NYTProf::Data` reports them (`SubInfo`): the `calls` value type
//!   (the call count), and the `time` value type in seconds with the exclusive time as self and
//!   the inclusive time as inclusive. NYTProf counts a recursive sub's inclusive time for its
//!   outermost calls only; that is the value recorded, never recomputed.
//! - **statement lines**: one [`FrameKind::Line`] frame per file and line with statements, with
//!   flat `time` (seconds) and `statements` (the count, with NYTProf's discount rule). Lines of
//!   evals merged away by the collapsing are left out: Data.pm adds them to the surviving eval.
//! - **call edges** by call site: calling sub, the calling line (a [`FrameKind::Line`] frame) and
//!   the called sub, with `calls` (the count) and `time` (the inclusive seconds of the callee
//!   from that site, outermost calls only). Data.pm keeps a set of calling subs per call site;
//!   when several subs call from one line, the edge names the first by name.
//! - **call stacks**: the call paths `nytprofcalls` prints ([`CallPaths`], from the `<` records
//!   a profile has unless made with `calls=0`), as call-tree nodes of the same sub frames, with
//!   `time` (self: the exclusive seconds summed, inclusive: the inclusive seconds summed, both
//!   ticks divided by `ticks_per_sec`; none without a tick rate) and `calls` (the number of
//!   returns). `nytprofcalls`
//!   prints `(eval N)` in names as `(eval 0)`; [`crate::calls::nytprofcalls_name`] does the
//!   same to a frame's name.
//!
//! The profile's [time resolution](profcodec_profile::Profile::time_resolution) is NYTProf's
//! tick (`ticks_per_sec`), in which `nytprofcalls` prints its stacks.
//!
//! `time` is the default value type; `top` reads the flat per-sub (or per-line) values, so its
//! figures are Data.pm's and nytprofhtml's.

use std::collections::HashMap;

use foldhash::fast::RandomState;
use profcodec_profile::{
    CallEdge, Context, FrameId, FrameKind, IdKind, Measured, ModelError, NodeId, ProfileBuilder,
    StringId, Unit,
};

use crate::calls::{CallPaths, FastMap};
use crate::error::Error;
use crate::model::{ModelOptions, Profile};

/// Why a file could not be converted into the model.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ConvertError {
    /// The file could not be read.
    #[error(transparent)]
    Read(#[from] Error),
    /// The model refused a table (more than `u32::MAX` entries).
    #[error(transparent)]
    Model(#[from] ModelError),
}

/// Reads a whole file in memory (compressed or not) and converts it, in one pass over the
/// records: the model of [`Profile::from_bytes`] (evals collapsed as Data.pm does) and the call
/// paths of its `<` records ([`Profile::from_bytes_with_call_paths`]), then
/// [`Profile::to_profile`].
pub fn to_profile(data: &[u8]) -> Result<profcodec_profile::Profile, ConvertError> {
    let (profile, calls, _, error) =
        Profile::from_bytes_with_call_paths(data, ModelOptions::default().keep_source(false));
    if let Some(e) = error {
        return Err(e.into());
    }
    Ok(profile.to_profile(Some(&calls))?)
}

/// The package of a sub name: what precedes the last `::` before any `[` (an anonymous sub's
/// place).
fn package(name: &str) -> Option<&str> {
    let base = name.split('[').next().unwrap_or(name);
    base.rfind("::").map(|i| &name[..i])
}

/// The tables of names: hashed with a seed drawn at random (names come from the input), by
/// foldhash rather than SipHash (a profile has thousands of subs, each looked up several times).
type NameMap<K, V> = HashMap<K, V, RandomState>;

/// Interns the frames of subs and lines once each.
struct Frames<'p> {
    profile: &'p Profile,
    subs: NameMap<&'p str, FrameId>,
    /// The names of files by fid: a file has many lines.
    files: FastMap<u32, StringId>,
    lines: FastMap<(u32, u32), FrameId>,
    /// Anonymous subs merged away by the eval collapsing, to the sub that absorbed them.
    merged: NameMap<&'p str, &'p str>,
}

impl<'p> Frames<'p> {
    fn new(profile: &'p Profile) -> Self {
        let mut merged = NameMap::default();
        for si in profile.subs.values() {
            for donor in &si.merged_subs {
                merged.insert(donor.as_str(), si.name.as_str());
            }
        }
        Frames {
            profile,
            subs: NameMap::with_capacity_and_hasher(profile.subs.len(), RandomState::default()),
            files: FastMap::default(),
            lines: FastMap::default(),
            merged,
        }
    }

    fn sub(&mut self, b: &mut ProfileBuilder, name: &str) -> Result<FrameId, ModelError> {
        let name = self.merged.get(name).copied().unwrap_or(name);
        if let Some(&id) = self.subs.get(name) {
            return Ok(id);
        }
        let mut frame = profcodec_profile::Frame::function(b.intern_string(name)?);
        let si = self.profile.subs.get(name);
        if let Some(si) = si
            && let Some(fid) = si.fid
            && let Some(file) = self.file(b, fid)?
        {
            frame = frame.with_file(file);
            if let Some(line) = si.first_line.filter(|&l| l > 0) {
                frame = frame.with_line(line);
            }
        }
        if let Some(package) = package(name) {
            frame = frame.with_module(b.intern_string(package)?);
        }
        let id = b.intern_frame(frame)?;
        // Only the profile's subs are cached (the key borrows their name); a name that only the
        // `<` records know is interned again by the builder, which finds the same frame.
        if let Some(si) = si {
            self.subs.insert(si.name.as_str(), id);
        }
        Ok(id)
    }

    /// The name of file `fid`, interned once; `None` for a fid the profile does not define.
    fn file(&mut self, b: &mut ProfileBuilder, fid: u32) -> Result<Option<StringId>, ModelError> {
        if let Some(&file) = self.files.get(&fid) {
            return Ok(Some(file));
        }
        let Some(fi) = self.profile.files.get(&fid) else {
            return Ok(None);
        };
        let file = b.intern_string(&fi.name)?;
        self.files.insert(fid, file);
        Ok(Some(file))
    }

    fn line(
        &mut self,
        b: &mut ProfileBuilder,
        fid: u32,
        line: u32,
    ) -> Result<Option<FrameId>, ModelError> {
        if let Some(&id) = self.lines.get(&(fid, line)) {
            return Ok(Some(id));
        }
        let Some(file) = self.file(b, fid)? else {
            return Ok(None);
        };
        let frame = profcodec_profile::Frame::new(FrameKind::Line)
            .with_file(file)
            .with_line(line);
        let id = b.intern_frame(frame)?;
        self.lines.insert((fid, line), id);
        Ok(Some(id))
    }
}

/// What a conversion makes of the model besides the subs' flat values.
struct Parts<'c> {
    /// The statement lines' flat values.
    lines: bool,
    /// The call edges by call site.
    edges: bool,
    /// The call stacks of these call paths.
    call_paths: Option<&'c CallPaths>,
}

impl Profile {
    /// Converts this model, and the call paths of its `<` records if given, into the
    /// format-neutral model (see the [module docs](self) for what goes where). Time and memory
    /// are linear in the size of this model and of `call_paths`.
    pub fn to_profile(
        &self,
        call_paths: Option<&CallPaths>,
    ) -> Result<profcodec_profile::Profile, ModelError> {
        self.convert(Parts {
            lines: true,
            edges: true,
            call_paths,
        })
    }

    /// The flat values of [`Profile::to_profile`] only: the subs with their values, and with
    /// `lines` the statement lines with theirs, without the call edges and call stacks. What a
    /// query of flat values (the per-sub and per-line figures Data.pm reports) reads, in less
    /// time and memory; a query by sub reads no line.
    pub fn to_flat_profile(&self, lines: bool) -> Result<profcodec_profile::Profile, ModelError> {
        self.convert(Parts {
            lines,
            edges: false,
            call_paths: None,
        })
    }

    /// What [`Profile::to_profile`] makes of `parts`.
    fn convert(&self, parts: Parts<'_>) -> Result<profcodec_profile::Profile, ModelError> {
        let mut b = ProfileBuilder::new();
        if let Some(app) = self.attributes.get("application") {
            b.set_name(app)?;
        }
        let context = match self.pids.as_slice() {
            [one] => Context::new([(IdKind::Process, u64::from(one.pid))]),
            pids => {
                let mut context = Context::default();
                if !pids.is_empty() {
                    let names: Vec<String> = pids.iter().map(|p| p.pid.to_string()).collect();
                    context =
                        context.with_name(b.intern_string(&format!("pids {}", names.join(", ")))?);
                }
                context
            }
        };
        let ctx = b.intern_context(context)?;
        let time = b.intern_value_type("time", Unit::Seconds, Measured::SelfAndInclusive)?;
        let calls = b.intern_value_type("calls", Unit::Count, Measured::SelfOnly)?;
        let statements = b.intern_value_type("statements", Unit::Count, Measured::SelfOnly)?;
        b.set_default_value_type(time)?;
        b.set_calls_value_type(calls)?;
        b.set_statements_value_type(statements)?;
        if self.ticks_per_sec() > 0 {
            b.set_time_resolution(Unit::Ticks {
                per_second: Some(u64::from(self.ticks_per_sec())),
            })?;
        }
        let mut frames = Frames::new(self);
        // A frame per sub and per line with statements (call sites are such lines).
        let lines: usize = if parts.lines {
            self.line_times.values().map(|lines| lines.len()).sum()
        } else {
            0
        };
        b.reserve_frames(self.subs.len().saturating_add(lines));

        // Each sub's frame, in the order of `self.subs`, for the call edges below.
        let mut sub_frames = Vec::with_capacity(self.subs.len());
        for si in self.subs.values() {
            let frame = frames.sub(&mut b, &si.name)?;
            sub_frames.push(frame);
            b.add_flat_self(ctx, frame, calls, si.calls as f64)?;
            b.add_flat_self(ctx, frame, time, si.excl)?;
            b.add_flat_inclusive(ctx, frame, time, si.incl)?;
        }

        if parts.lines {
            for (&fid, lines) in &self.line_times {
                for (&line, t) in lines {
                    // Lines of a fid the collapsing merged away (or of an undefined fid) have no
                    // file: Data.pm counts them in the surviving eval.
                    let Some(frame) = frames.line(&mut b, fid, line)? else {
                        break;
                    };
                    b.add_flat_self(ctx, frame, time, t.time)?;
                    b.add_flat_self(ctx, frame, statements, t.count as f64)?;
                }
            }
        }

        // Each call site's calls and inclusive time, on an edge from its calling sub.
        if parts.edges {
            for (si, &callee) in self.subs.values().zip(&sub_frames) {
                for (&fid, lines) in &si.callers {
                    for (&line, ci) in lines {
                        let Some(site) = frames.line(&mut b, fid, line)? else {
                            continue;
                        };
                        let caller = match ci.calling_subs.first() {
                            Some(name) => frames.sub(&mut b, name)?,
                            None => site,
                        };
                        let edge = b.intern_call_edge(CallEdge {
                            caller,
                            site: Some(site),
                            callee,
                        })?;
                        b.add_edge_value(ctx, edge, calls, ci.count as f64)?;
                        b.add_edge_value(ctx, edge, time, ci.incl)?;
                    }
                }
            }
        }

        if let Some(paths) = parts.call_paths {
            let tps = f64::from(self.ticks_per_sec());
            // The model frame of each name of the paths, and the model node of each depth of
            // the current path: each path costs one node lookup below its caller's node.
            let mut name_frames: Vec<Option<FrameId>> = vec![None; paths.name_count()];
            // A node per path and two value types per node (three with a tick rate): the
            // tables grow once.
            b.reserve_nodes(paths.len());
            b.reserve_node_values(paths.len().saturating_mul(2));
            let mut path: Vec<NodeId> = Vec::new();
            let mut result = Ok(());
            paths.for_each_node(|depth, name, values| {
                if result.is_err() {
                    return;
                }
                result = (|| {
                    let frame = match name_frames[name as usize] {
                        Some(frame) => frame,
                        None => {
                            let frame = frames.sub(&mut b, paths.name(name))?;
                            name_frames[name as usize] = Some(frame);
                            frame
                        }
                    };
                    path.truncate(depth);
                    let node = b.intern_node(path.last().copied(), frame)?;
                    path.push(node);
                    // Without a tick rate (a damaged profile read partially) there is no time.
                    let time = (tps > 0.0).then(|| {
                        let (excl, incl) = (values.excl_ticks / tps, values.incl_ticks / tps);
                        (time, Some(excl), Some(incl))
                    });
                    let calls = (calls, Some(values.returns as f64), None);
                    b.add_node_values(ctx, node, time.into_iter().chain([calls]))
                })();
            });
            result?;
        }
        Ok(b.build())
    }
}

#[cfg(test)]
mod tests {
    use super::package;

    #[test]
    fn packages_of_sub_names() {
        assert_eq!(package("main::fib"), Some("main"));
        assert_eq!(package("Foo::Bar::baz"), Some("Foo::Bar"));
        assert_eq!(
            package("main::__ANON__[(eval 3)[/a/B::C.pm:5]:1]"),
            Some("main")
        );
        assert_eq!(package("fib"), None);
    }
}
