//! A whole database directory, cross-linked.

use std::path::Path;

use crate::Error;
use crate::raw::FileKind;
use crate::raw::enums::{Combine, ScopeType};

use super::bytes::MetricSet;
use super::cct::{CctDb, CctLayout};
use super::meta::{ContextIndex, ContextNode, MetaDb, MetaLayout, ScopeIndex};
use super::profile::{IdTuple, ProfileDb, ProfileLayout};
use super::trace::{TraceDb, TraceLayout};

/// Whether a metric id names propagated values (profile.db thread profiles, cct.db) or summary
/// statistics (profile.db summary profiles).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetricRole {
    /// A `propMetricId` of a {PSI}.
    Propagated,
    /// A `statMetricId` of an {SS}.
    Summary,
}

/// What a metric id stands for in meta.db.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricRef {
    /// The metric's position in `*pMetrics`.
    pub metric: u32,
    /// The propagation scope.
    pub scope: ScopeIndex,
    /// Propagated value or summary statistic.
    pub role: MetricRole,
    /// Position of the {PSI} or {SS} within the metric.
    pub position: u16,
}

/// A metric id named: what [`Database::metric_name`] gives, the three pieces hpcviewer and
/// hatchet build a column name from (the metric, its propagation scope and, for a summary
/// statistic, how the profiles were combined).
///
/// `Display` gives hpcviewer's column name: `CPUTIME (sec):Sum (I)` for the inclusive sum
/// statistic, `CPUTIME (sec) (E)` for a thread profile's exclusive value; [`Self::hatchet`]
/// gives hatchet's (`time (inc)`, `time`, `time:max`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricName<'a> {
    /// The metric's name as stored, unit included (`"CPUTIME (sec)"`).
    pub metric: &'a str,
    /// The propagation scope's name (`"execution"`, `"function"`, `"point"`, `"lex_aware"`).
    pub scope: &'a str,
    /// The propagation scope's type.
    pub scope_type: ScopeType,
    /// Propagated value or summary statistic.
    pub role: MetricRole,
    /// How a summary statistic combines the profiles' values (`None` for a propagated value).
    pub combine: Option<Combine>,
}

impl MetricName<'_> {
    /// hpcviewer's letter for the scope: `I` (inclusive: `execution`), `E` (exclusive:
    /// `function`), `P` (`point`); `None` for another scope.
    pub fn scope_letter(&self) -> Option<char> {
        match self.scope {
            "execution" => Some('I'),
            "function" => Some('E'),
            "point" => Some('P'),
            _ => None,
        }
    }

    /// hatchet's column name for this statistic, as `GraphFrame.from_hpctoolkit_latest` names
    /// it: the metric lowercased without its unit (`cputime`, `realtime` and `cycles` become
    /// `time`), `:min` or `:max` after it for those statistics, and ` (inc)` for the
    /// `execution` scope.
    ///
    /// ```
    /// use profcodec_hpctoolkit::{Combine, MetricName, MetricRole, ScopeType};
    /// let name = MetricName {
    ///     metric: "CPUTIME (sec)",
    ///     scope: "execution",
    ///     scope_type: ScopeType::EXECUTION,
    ///     role: MetricRole::Summary,
    ///     combine: Some(Combine::SUM),
    /// };
    /// assert_eq!(name.hatchet(), "time (inc)");
    /// assert_eq!(name.to_string(), "CPUTIME (sec):Sum (I)");
    /// ```
    pub fn hatchet(&self) -> String {
        let mut name = hatchet_metric_base(self.metric);
        match self.combine {
            Some(Combine::MIN) => name.push_str(":min"),
            Some(Combine::MAX) => name.push_str(":max"),
            _ => {}
        }
        if self.scope.trim().eq_ignore_ascii_case("execution") {
            name.push_str(" (inc)");
        }
        name
    }
}

/// hpcviewer's column name: the metric, `:Sum`, `:Min` or `:Max` for a summary statistic, and
/// the scope's letter (or name) in parentheses.
impl std::fmt::Display for MetricName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.metric)?;
        match self.combine {
            Some(Combine::SUM) => f.write_str(":Sum")?,
            Some(Combine::MIN) => f.write_str(":Min")?,
            Some(Combine::MAX) => f.write_str(":Max")?,
            Some(other) => write!(f, ":{other}")?,
            None => {}
        }
        match self.scope_letter() {
            Some(letter) => write!(f, " ({letter})"),
            None => write!(f, " ({})", self.scope),
        }
    }
}

/// A metric's name as hatchet's HPCToolkit reader makes it, before the statistic and scope:
/// lowercased, without the unit in parentheses, with `cputime`, `realtime` and `cycles` named
/// `time`.
pub fn hatchet_metric_base(stored: &str) -> String {
    let mut name = stored.to_lowercase().trim().to_owned();
    if let Some(stripped) = name.strip_suffix(')') {
        name = stripped.split('(').next().unwrap_or("").trim().to_owned();
    }
    if matches!(name.as_str(), "cputime" | "realtime" | "cycles") {
        name = "time".to_owned();
    }
    name
}

/// The files of a database, parsed and cross-linked: ctxId to context, profIndex to identifier
/// tuple, metric id to metric and scope.
///
/// `B` holds each file's bytes: `Vec<u8>` from [`Database::open`], or anything that derefs to
/// bytes (a memory map, a `&[u8]`) through [`Database::from_parts`]. meta.db is required; the
/// other three are optional (hatchet's test database has no trace.db).
#[derive(Debug)]
pub struct Database<B = Vec<u8>> {
    meta: B,
    profile: Option<B>,
    cct: Option<B>,
    trace: Option<B>,
    meta_layout: MetaLayout,
    profile_layout: Option<ProfileLayout>,
    cct_layout: Option<CctLayout>,
    trace_layout: Option<TraceLayout>,
    contexts: ContextIndex,
    propagated: Vec<(u16, MetricRef)>,
    summaries: Vec<(u16, MetricRef)>,
}

impl Database<Vec<u8>> {
    /// Reads `meta.db` and, when present, `profile.db`, `cct.db` and `trace.db` from `dir`.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, Error> {
        let dir = dir.as_ref();
        let read = |kind: FileKind| -> Result<Option<Vec<u8>>, Error> {
            match std::fs::read(dir.join(kind.file_name())) {
                Ok(v) => Ok(Some(v)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && kind != FileKind::Meta => {
                    Ok(None)
                }
                Err(e) => Err(Error::io(Some(kind), &e)),
            }
        };
        let meta = read(FileKind::Meta)?.unwrap_or_default();
        Database::from_parts(
            meta,
            read(FileKind::Profile)?,
            read(FileKind::Cct)?,
            read(FileKind::Trace)?,
        )
    }
}

impl<B: AsRef<[u8]>> Database<B> {
    /// Parses the files and builds the cross-links: checks meta.db's arrays and strings for
    /// aliasing ([`MetaDb::check_overlaps`]), walks the context tree once, maps metric ids.
    /// Linear time and memory in meta.db (after an O(n log n) sort of its pointers); the other
    /// files' headers only.
    pub fn from_parts(
        meta: B,
        profile: Option<B>,
        cct: Option<B>,
        trace: Option<B>,
    ) -> Result<Self, Error> {
        let meta_view = MetaDb::parse(meta.as_ref())?;
        // Before the metric maps read every metric's arrays: aliased arrays would make them
        // quadratic.
        meta_view.check_overlaps()?;
        let contexts = meta_view.context_index()?;
        let (propagated, summaries) = metric_maps(&meta_view)?;
        let meta_layout = meta_view.layout();
        let profile_layout = profile
            .as_ref()
            .map(|b| ProfileDb::parse(b.as_ref()).map(|v| v.layout()))
            .transpose()?;
        let cct_layout = cct
            .as_ref()
            .map(|b| CctDb::parse(b.as_ref()).map(|v| v.layout()))
            .transpose()?;
        let trace_layout = trace
            .as_ref()
            .map(|b| TraceDb::parse(b.as_ref()).map(|v| v.layout()))
            .transpose()?;
        Ok(Database {
            meta,
            profile,
            cct,
            trace,
            meta_layout,
            profile_layout,
            cct_layout,
            trace_layout,
            contexts,
            propagated,
            summaries,
        })
    }

    /// The meta.db view.
    pub fn meta(&self) -> MetaDb<'_> {
        MetaDb::from_layout(self.meta.as_ref(), self.meta_layout)
    }

    /// The profile.db view, if the database has one.
    pub fn profile(&self) -> Option<ProfileDb<'_>> {
        Some(ProfileDb::from_layout(
            self.profile.as_ref()?.as_ref(),
            self.profile_layout?,
        ))
    }

    /// The cct.db view, if the database has one.
    pub fn cct(&self) -> Option<CctDb<'_>> {
        Some(CctDb::from_layout(
            self.cct.as_ref()?.as_ref(),
            self.cct_layout?,
        ))
    }

    /// The trace.db view, if the database has one.
    pub fn trace(&self) -> Option<TraceDb<'_>> {
        Some(TraceDb::from_layout(
            self.trace.as_ref()?.as_ref(),
            self.trace_layout?,
        ))
    }

    /// The ctxId index of meta.db's context tree.
    pub fn context_index(&self) -> &ContextIndex {
        &self.contexts
    }

    /// The elided contexts, ascending: ctxIds with values in profile.db or cct.db that
    /// meta.db's tree leaves out ([`ContextIndex::elided`]).
    pub fn elided_contexts(&self) -> Result<Vec<u32>, Error> {
        self.contexts
            .elided(self.profile().as_ref(), self.cct().as_ref())
    }

    /// The entry point or context `ctx_id`; `None` when meta.db lacks it (ctxId 0, the global
    /// context, and elided instruction contexts, which profile.db and cct.db still use).
    pub fn context(&self, ctx_id: u32) -> Option<Result<ContextNode<'_>, Error>> {
        self.meta().context(&self.contexts, ctx_id)
    }

    /// The identifier tuple of profile `prof_index` (`Ok(None)` for the summary profile or
    /// without profile.db).
    pub fn id_tuple(&self, prof_index: u32) -> Result<Option<IdTuple<'_>>, Error> {
        match self.profile() {
            Some(p) => Ok(p.profile(prof_index)?.id_tuple),
            None => Ok(None),
        }
    }

    /// What metric id `id` means in the given role.
    pub fn metric(&self, id: u16, role: MetricRole) -> Option<MetricRef> {
        let map = match role {
            MetricRole::Propagated => &self.propagated,
            MetricRole::Summary => &self.summaries,
        };
        map.binary_search_by_key(&id, |e| e.0)
            .ok()
            .map(|i| map[i].1)
    }

    /// The name of metric id `id` in the given role, in one call: the metric, its scope and
    /// its statistic ([`MetricName`], which displays as hpcviewer's column name, e.g.
    /// `CPUTIME (sec):Sum (I)`, and gives hatchet's with [`MetricName::hatchet`]). `Ok(None)`
    /// when meta.db has no such id.
    pub fn metric_name(&self, id: u16, role: MetricRole) -> Result<Option<MetricName<'_>>, Error> {
        let Some(r) = self.metric(id, role) else {
            return Ok(None);
        };
        let meta = self.meta();
        let metric = meta.metric(r.metric)?;
        let scope = meta.scope(r.scope)?;
        let combine = match role {
            MetricRole::Propagated => None,
            MetricRole::Summary => Some(meta.summary(&metric, r.position)?.combine),
        };
        Ok(Some(MetricName {
            metric: metric.name,
            scope: scope.name,
            scope_type: scope.kind,
            role,
            combine,
        }))
    }

    /// The value of `metric_id` at `ctx_id` in profile `prof_index`, from profile.db
    /// (`Ok(None)` when zero or without profile.db).
    pub fn value(
        &self,
        prof_index: u32,
        ctx_id: u32,
        metric_id: u16,
    ) -> Result<Option<f64>, Error> {
        match self.profile() {
            Some(p) => p.value(prof_index, ctx_id, metric_id),
            None => Ok(None),
        }
    }

    /// Validates every file, then the cross-file references: profile.db's metric ids are
    /// meta.db's `statMetricId`s (summary profiles) or `propMetricId`s (others), cct.db's are
    /// `propMetricId`s and its profIndexes name profiles of profile.db, trace.db's profIndexes
    /// name profiles of profile.db and every trace element's ctxId is 0 or a context of
    /// meta.db's tree. ctxIds missing from meta.db are accepted in profile.db and cct.db (elided
    /// instruction contexts, as-implemented; hpcprof's traces only sample contexts meta.db
    /// lists).
    ///
    /// Each file's bytes are checked once, each check folded into that file's single pass;
    /// time is linear in the files after the O(n log n) overlap checks
    /// ([`ProfileDb::check_overlaps`] and its siblings).
    pub fn validate(&self) -> Result<(), Error> {
        // The tree was walked (and its ctxIds checked) when the index was built.
        let meta = self.meta();
        meta.validate_tables()?;
        meta.check_index(&self.contexts)?;
        let prop = MetricSet::from_ids(self.propagated.iter().map(|e| e.0));
        let stat = MetricSet::from_ids(self.summaries.iter().map(|e| e.0));
        let n_profiles = match self.profile() {
            Some(p) => {
                p.check_overlaps()?;
                for prof in p.profiles() {
                    let prof = prof?;
                    let known = if prof.is_summary() { &stat } else { &prop };
                    p.check_profile(&prof, Some(known))?;
                }
                Some(p.profile_count())
            }
            None => None,
        };
        if let Some(c) = self.cct() {
            c.check_overlaps()?;
            for ctx in c.contexts() {
                c.check_context(&ctx?, Some(&prop), n_profiles)?;
            }
        }
        if let Some(t) = self.trace() {
            t.check_overlaps()?;
            // One pass per line: timestamps, and every ctxId against meta.db's tree.
            let known = self.contexts.id_set();
            for tr in t.traces() {
                let tr = tr?;
                if n_profiles.is_some_and(|n| tr.prof_index >= n) {
                    return Err(Error::Dangling {
                        file: FileKind::Trace,
                        field: "CTH.profIndex",
                        offset: tr.offset,
                        expected: "a profIndex below profile.db's nProfiles",
                        found: tr.prof_index.into(),
                    });
                }
                t.check_trace(&tr, Some(&known))?;
            }
        }
        Ok(())
    }
}

/// One context's cost in one metric, from the summary profile ([`Database::context_costs`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContextCost {
    /// The context.
    pub ctx_id: u32,
    /// The sum over all profiles of the `execution` scope: the context and everything it
    /// calls (hatchet's `time (inc)`, hpcviewer's inclusive column).
    pub inclusive: f64,
    /// The sum over all profiles of the `function` scope: the context and its lexical
    /// children (loops, lines) but not its callees (hatchet's `time`, hpcviewer's exclusive
    /// column; summed over a function's contexts it is the function's self cost).
    pub exclusive: f64,
}

/// The inclusive and exclusive sum statistic ids of a metric, when it has them.
type SumIds = (Option<u16>, Option<u16>);

impl<B: AsRef<[u8]>> Database<B> {
    /// The summary-statistic ids of `metric_name`'s sums ([`MetaDb::metric_by_name`]): the
    /// `execution` scope's (inclusive) and the `function` (transitive) scope's (exclusive).
    fn sum_ids(&self, metric_name: &str) -> Result<Option<SumIds>, Error> {
        let meta = self.meta();
        let Some(metric) = meta.metric_by_name(metric_name)? else {
            return Ok(None);
        };
        let (mut inclusive, mut exclusive) = (None, None);
        for s in meta.summaries(&metric) {
            let s = s?;
            if s.combine != crate::raw::enums::Combine::SUM || s.formula != "$$" {
                continue;
            }
            let scope = meta.scope(s.scope)?;
            match scope.kind {
                crate::raw::enums::ScopeType::EXECUTION => inclusive = Some(s.stat_metric_id),
                crate::raw::enums::ScopeType::TRANSITIVE if scope.name == "function" => {
                    exclusive = Some(s.stat_metric_id)
                }
                _ => {}
            }
        }
        Ok(Some((inclusive, exclusive)))
    }

    /// Every context's inclusive and exclusive cost in metric `metric_name` (as stored or
    /// without its unit: `"CPUTIME"`), read from the summary profile (profIndex 0) in one pass
    /// over its values: the table to sort or aggregate, computed once. Contexts without a value
    /// are left out; the rest come in ctxId order. `Ok(None)` without such a metric or without
    /// profile.db.
    pub fn context_costs(&self, metric_name: &str) -> Result<Option<Vec<ContextCost>>, Error> {
        let (Some((inclusive, exclusive)), Some(profiles)) =
            (self.sum_ids(metric_name)?, self.profile())
        else {
            return Ok(None);
        };
        let summary = profiles.profile(0)?;
        let mut out = Vec::with_capacity(summary.ctx_indices.len());
        for (ctx_id, values) in summary.contexts() {
            let get = |id: Option<u16>| {
                id.and_then(|id| values.iter().find(|v| v.metric_id() == id))
                    .map_or(0.0, |v| v.value())
            };
            let cost = ContextCost {
                ctx_id,
                inclusive: get(inclusive),
                exclusive: get(exclusive),
            };
            if cost.inclusive != 0.0 || cost.exclusive != 0.0 {
                out.push(cost);
            }
        }
        Ok(Some(out))
    }
}

type MetricMap = Vec<(u16, MetricRef)>;

fn metric_maps(meta: &MetaDb<'_>) -> Result<(MetricMap, MetricMap), Error> {
    let mut prop = Vec::new();
    let mut stat = Vec::new();
    for m in meta.metrics() {
        let m = m?;
        for (position, s) in meta.scope_instances(&m).enumerate() {
            let s = s?;
            prop.push((
                s.prop_metric_id,
                MetricRef {
                    metric: m.index,
                    scope: s.scope,
                    role: MetricRole::Propagated,
                    position: position as u16,
                },
            ));
        }
        for (position, s) in meta.summaries(&m).enumerate() {
            let s = s?;
            stat.push((
                s.stat_metric_id,
                MetricRef {
                    metric: m.index,
                    scope: s.scope,
                    role: MetricRole::Summary,
                    position: position as u16,
                },
            ));
        }
    }
    // Stable sort: for a duplicated id the first listed wins.
    prop.sort_by_key(|e| e.0);
    stat.sort_by_key(|e| e.0);
    Ok((prop, stat))
}
