//! A synthetic database of any size, for benches, tests and experiments: a context tree of
//! functions, loops, lines and instructions; `CPUTIME (sec)` (and more metrics) with point,
//! function and execution scopes and their sum summaries; CPU thread and GPU stream profiles;
//! traces. Everything is derived from a seed, profile by profile, so databases far larger than
//! memory can be streamed ([`Synthetic::write_dir`]) or small ones built whole
//! ([`Synthetic::to_model`]).

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Seek, Write};
use std::path::Path;

use super::{ProfileDbWriter, ProfileInfo, TraceDbWriter, TransposeOptions, transpose, write_meta};
use crate::model::{
    Database, DatabaseBuilder, EntryPointKind, Function, Identifier, LexicalType, Meta,
    MetricValue, Parent, Profile, ProfileValues, Relation, Trace, TraceElement, Traces,
};

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyntheticConfig {
    /// Non-summary profiles (every eighth is a GPU stream).
    pub profiles: u32,
    /// Contexts of the tree (besides the entry point and the global context).
    pub contexts: u32,
    /// Metrics, each with point, function and execution scopes; the first is `CPUTIME (sec)`.
    pub metrics: u16,
    /// Elements of each profile's trace line (0: no trace.db).
    pub trace_elems: u64,
    /// The mean run of consecutive trace elements in one context: each element keeps the
    /// previous element's context with probability `1 - 1/trace_run` (1: every element draws a
    /// new one), as real traces stay in a calling context for several samples.
    pub trace_run: u32,
    /// Samples per profile: leaf contexts that get a value, with all their ancestors. 0 means
    /// one per four contexts.
    pub samples: u32,
    /// The seed.
    pub seed: u64,
}

impl Default for SyntheticConfig {
    fn default() -> Self {
        SyntheticConfig {
            profiles: 4,
            contexts: 64,
            metrics: 1,
            trace_elems: 16,
            trace_run: 1,
            samples: 0,
            seed: 1,
        }
    }
}

/// Sizes of the files [`Synthetic::write_dir`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SyntheticSizes {
    /// meta.db bytes.
    pub meta: u64,
    /// profile.db bytes.
    pub profile: u64,
    /// cct.db bytes.
    pub cct: u64,
    /// trace.db bytes (0 when not written).
    pub trace: u64,
}

/// splitmix64: a tiny deterministic generator (no dependency, same output everywhere).
#[derive(Debug, Clone)]
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A synthetic database: its meta.db, and the recipe for every profile and trace.
#[derive(Debug, Clone)]
pub struct Synthetic {
    config: SyntheticConfig,
    meta: Meta,
    /// Parent `ctxId` of each `ctxId` (the global context 0 is its own parent).
    parent: Vec<u32>,
    /// Whether a `ctxId` propagates to its parent in the `function` scope (bit 0).
    lexical: Vec<bool>,
    /// `ctxId`s without children.
    leaves: Vec<u32>,
}

/// The entry point's `ctxId`.
const ENTRY: u32 = 1;
/// A realistic epoch-nanosecond start time.
const T0: u64 = 1_700_000_000_000_000_000;

impl Synthetic {
    /// Builds the context tree and metrics of `config`.
    pub fn new(config: SyntheticConfig) -> Self {
        let mut rng = SplitMix(config.seed);
        let mut b = DatabaseBuilder::new("synthetic");
        let first = b.add_cputime_metric();
        debug_assert_eq!(first.point, 0);
        let (point, function, execution) = (
            crate::model::ScopeHandle(0),
            crate::model::ScopeHandle(1),
            crate::model::ScopeHandle(2),
        );
        for k in 1..config.metrics.max(1) {
            b.add_metric(&format!("METRIC{k} (sec)"), &[point, function, execution]);
        }
        let n_functions = (config.contexts / 16).max(4);
        let modules: Vec<_> = (0..n_functions / 64 + 1)
            .map(|i| b.add_module(&format!("/opt/app/lib/libapp{i}.so")))
            .collect();
        let files: Vec<_> = (0..n_functions / 8 + 1)
            .map(|i| b.add_file(&format!("/src/app/part{i}.c")))
            .collect();
        let functions: Vec<_> = (0..n_functions)
            .map(|i| {
                b.add_function(Function {
                    name: Some(if i == 0 {
                        "main".to_owned()
                    } else {
                        format!("func_{i}")
                    }),
                    module: Some(modules[i as usize % modules.len()]),
                    offset: 0x1000 + u64::from(i) * 0x40,
                    file: Some(files[i as usize % files.len()]),
                    line: 10 + i,
                    flags: 0,
                })
            })
            .collect();
        let entry = b.add_entry_point(EntryPointKind::MAIN_THREAD, "main thread");
        let mut count = 0u32;
        let main = b.add_function_context(Parent::EntryPoint(entry), Relation::CALL, functions[0]);
        count += 1;
        let mut queue = std::collections::VecDeque::from([(main, 0usize)]);
        let mut bodies = vec![(main, 0usize)];
        while count < config.contexts {
            // When every call so far ended in instructions, grow a function body already made.
            let (f, fi) = match queue.pop_front() {
                Some(next) => next,
                None => bodies[rng.below(bodies.len() as u64) as usize],
            };
            let file = files[fi % files.len()];
            let module = modules[fi % modules.len()];
            let base = 20 + 100 * fi as u32;
            // A function body: some lines, perhaps a loop holding more lines.
            let mut lines = Vec::new();
            for l in 0..1 + rng.below(3) as u32 {
                lines.push(b.add_source_context(
                    Parent::Context(f),
                    LexicalType::LINE,
                    file,
                    base + l,
                ));
                count += 1;
            }
            if rng.below(2) == 0 {
                let lp =
                    b.add_source_context(Parent::Context(f), LexicalType::LOOP, file, base + 5);
                count += 1;
                for l in 0..1 + rng.below(2) as u32 {
                    lines.push(b.add_source_context(
                        Parent::Context(lp),
                        LexicalType::LINE,
                        file,
                        base + 6 + l,
                    ));
                    count += 1;
                }
            }
            for line in lines {
                if count >= config.contexts {
                    break;
                }
                if rng.below(3) == 0 {
                    b.add_instruction_context(
                        Parent::Context(line),
                        module,
                        0x1000 + rng.below(1 << 16),
                    );
                    count += 1;
                } else {
                    let callee = 1 + rng.below(u64::from(n_functions) - 1) as usize;
                    let c = b.add_function_context(
                        Parent::Context(line),
                        Relation::CALL,
                        functions[callee],
                    );
                    count += 1;
                    queue.push_back((c, callee));
                    bodies.push((c, callee));
                }
            }
        }
        let meta = b.finish().meta;
        let n_ids = meta.max_ctx_id() as usize + 1;
        let mut parent = vec![0u32; n_ids];
        let mut lexical = vec![false; n_ids];
        let mut has_children = vec![false; n_ids];
        for c in &meta.contexts {
            let p = match c.parent {
                Parent::EntryPoint(e) => meta.entry_points[e.index()].ctx_id,
                Parent::Context(p) => meta.contexts[p.index()].ctx_id,
            };
            parent[c.ctx_id as usize] = p;
            lexical[c.ctx_id as usize] = c.propagation & 1 != 0;
            has_children[p as usize] = true;
        }
        let leaves = meta
            .contexts
            .iter()
            .map(|c| c.ctx_id)
            .filter(|&id| !has_children[id as usize])
            .collect();
        Synthetic {
            config,
            meta,
            parent,
            lexical,
            leaves,
        }
    }

    /// meta.db.
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// `nCtxs` of cct.db: the largest `ctxId` plus one.
    pub fn n_ctxs(&self) -> u32 {
        self.parent.len() as u32
    }

    /// The identifier tuple of profile `prof_index` (1-based): node, rank, thread; or for every
    /// eighth profile a GPU stream.
    pub fn id_tuple(&self, prof_index: u32) -> Vec<Identifier> {
        let logical = |kind: u8, id: u32| Identifier {
            kind,
            flags: 0,
            logical_id: id,
            physical_id: u64::from(id),
        };
        let node = Identifier {
            kind: 1,
            flags: 1,
            logical_id: 0,
            physical_id: 0x7f00_0001,
        };
        let i = prof_index - 1;
        if i % 8 == 7 {
            vec![node, logical(2, 0), logical(5, 0), logical(6, i / 8)]
        } else {
            vec![node, logical(2, i / 64), logical(3, i % 64)]
        }
    }

    /// The values of profile `prof_index` (1-based), with every context's point, function and
    /// execution values of every metric.
    pub fn profile_values(&self, prof_index: u32) -> ProfileValues {
        let mut rng = SplitMix(self.config.seed ^ (u64::from(prof_index) << 32) ^ 0x5eed);
        let n = self.parent.len();
        let mut point = vec![0f64; n];
        let samples = match self.config.samples {
            0 => (self.config.contexts / 4).max(1),
            s => s,
        };
        if !self.leaves.is_empty() {
            for _ in 0..samples {
                let leaf = self.leaves[rng.below(self.leaves.len() as u64) as usize];
                point[leaf as usize] += (1 + rng.below(1000)) as f64 * 1e-3;
            }
        }
        // Parents have smaller ctxIds than their children, so one backward sweep propagates.
        let mut execution = point.clone();
        let mut function = point.clone();
        for id in (2..n).rev() {
            let p = self.parent[id] as usize;
            execution[p] += execution[id];
            if self.lexical[id] {
                function[p] += function[id];
            }
        }
        execution[0] = execution[ENTRY as usize];
        let mut out = ProfileValues::default();
        let metrics = self.config.metrics.max(1);
        for id in 0..n {
            if execution[id] == 0.0 {
                continue;
            }
            let ctx = id as u32;
            out.push(
                ctx,
                (0..metrics).flat_map(|k| {
                    let scale = f64::from(k + 1);
                    let base = 3 * k;
                    let p = if id == 0 { 0.0 } else { point[id] * scale };
                    let f = if id == 0 { 0.0 } else { function[id] * scale };
                    [(base, p), (base + 1, f), (base + 2, execution[id] * scale)]
                        .into_iter()
                        .filter(|(_, v)| *v != 0.0)
                        .map(|(metric_id, value)| MetricValue { metric_id, value })
                }),
            );
        }
        out
    }

    /// The trace line of profile `prof_index` (1-based).
    pub fn trace(&self, prof_index: u32) -> Vec<TraceElement> {
        let mut rng = SplitMix(self.config.seed ^ (u64::from(prof_index) << 40) ^ 0x7ace);
        let mut t = T0 + u64::from(prof_index) * 1000;
        let mut idle = false;
        let mut previous = 0;
        (0..self.config.trace_elems)
            .map(|_| {
                t += 1000 + rng.below(100_000);
                let stay = self.config.trace_run > 1
                    && previous != 0
                    && rng.below(self.config.trace_run.into()) != 0;
                // ctxId 0 (not running) now and then, never twice in a row (FORMATS.md).
                let ctx_id = if stay {
                    previous
                } else if !idle && rng.below(20) == 0 || self.leaves.is_empty() {
                    0
                } else {
                    self.leaves[rng.below(self.leaves.len() as u64) as usize]
                };
                idle = ctx_id == 0;
                previous = ctx_id;
                TraceElement {
                    timestamp: t,
                    ctx_id,
                }
            })
            .collect()
    }

    /// Adds `values` of one profile into the dense summary `sums` (`statMetricId` = `propMetricId`
    /// for the builder's metrics).
    fn accumulate(&self, values: &ProfileValues, sums: &mut [f64]) {
        let width = 3 * usize::from(self.config.metrics.max(1));
        for (ctx, vs) in values.iter() {
            for v in vs {
                sums[ctx as usize * width + usize::from(v.metric_id)] += v.value;
            }
        }
    }

    fn summary(&self, sums: &[f64]) -> ProfileValues {
        let width = 3 * usize::from(self.config.metrics.max(1));
        let mut out = ProfileValues::default();
        for (ctx, row) in sums.chunks_exact(width).enumerate() {
            out.push(
                ctx as u32,
                row.iter()
                    .enumerate()
                    .filter(|(_, v)| **v != 0.0)
                    .map(|(m, v)| MetricValue {
                        metric_id: m as u16,
                        value: *v,
                    }),
            );
        }
        out
    }

    /// The whole database in memory (for small configurations).
    pub fn to_model(&self) -> Database {
        let width = 3 * usize::from(self.config.metrics.max(1));
        let mut sums = vec![0f64; self.parent.len() * width];
        let mut profiles = vec![Profile::default()];
        for p in 1..=self.config.profiles {
            let values = self.profile_values(p);
            self.accumulate(&values, &mut sums);
            profiles.push(Profile {
                flags: 0,
                id_tuple: Some(self.id_tuple(p)),
                values,
            });
        }
        profiles[0] = Profile {
            flags: Profile::IS_SUMMARY,
            id_tuple: None,
            values: self.summary(&sums),
        };
        let traces = (self.config.trace_elems > 0).then(|| {
            Traces::from_traces(
                (1..=self.config.profiles)
                    .map(|p| Trace {
                        prof_index: p,
                        elements: self.trace(p),
                    })
                    .collect(),
            )
        });
        let mut db = Database {
            meta: self.meta.clone(),
            profiles,
            context_major: None,
            traces,
        };
        db.context_major = Some(db.transpose(Some(self.n_ctxs())));
        db
    }

    /// Streams profile.db into `out`: the profiles one at a time, the summary (accumulated on
    /// the way) last, as hpcprof does.
    pub fn write_profile_db<W: Write + Seek>(&self, out: W) -> io::Result<W> {
        let tuples: Vec<Vec<Identifier>> = (1..=self.config.profiles)
            .map(|p| self.id_tuple(p))
            .collect();
        let mut infos = vec![ProfileInfo {
            flags: Profile::IS_SUMMARY,
            id_tuple: None,
        }];
        infos.extend(tuples.iter().map(|t| ProfileInfo {
            flags: 0,
            id_tuple: Some(t),
        }));
        let mut w = ProfileDbWriter::new(out, &infos)?;
        let width = 3 * usize::from(self.config.metrics.max(1));
        let mut sums = vec![0f64; self.parent.len() * width];
        for p in 1..=self.config.profiles {
            let values = self.profile_values(p);
            self.accumulate(&values, &mut sums);
            w.write_profile(p, &values.contexts, &values.values)?;
        }
        let summary = self.summary(&sums);
        w.write_profile(0, &summary.contexts, &summary.values)?;
        w.finish()
    }

    /// Streams the database into `dir`: profiles one at a time, cct.db transposed from the
    /// written profile.db within `memory_budget` bytes of values, trace lines one at a time.
    pub fn write_dir(&self, dir: &Path, memory_budget: usize) -> io::Result<SyntheticSizes> {
        std::fs::create_dir_all(dir)?;
        let create =
            |name: &str| File::create(dir.join(name)).map(|f| BufWriter::with_capacity(1 << 20, f));
        let mut meta = create("meta.db")?;
        write_meta(&self.meta, &mut meta)?;
        meta.flush()?;

        self.write_profile_db(create("profile.db")?)?.flush()?;

        let input = BufReader::new(File::open(dir.join("profile.db"))?);
        let options = TransposeOptions {
            memory_budget,
            n_ctxs: Some(self.n_ctxs()),
        };
        transpose(input, create("cct.db")?, &options)?.0.flush()?;

        if self.config.trace_elems > 0 {
            let lines: Vec<(u32, u64)> = (1..=self.config.profiles)
                .map(|p| (p, self.config.trace_elems))
                .collect();
            let mut w = TraceDbWriter::new(create("trace.db")?, &lines)?;
            for p in 1..=self.config.profiles {
                w.append(p - 1, &self.trace(p))?;
            }
            w.finish()?.flush()?;
        }
        let size = |name: &str| std::fs::metadata(dir.join(name)).map_or(0, |m| m.len());
        Ok(SyntheticSizes {
            meta: size("meta.db"),
            profile: size("profile.db"),
            cct: size("cct.db"),
            trace: size("trace.db"),
        })
    }
}
