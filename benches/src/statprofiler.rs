//! Large-input generator for the statprofiler format: a synthetic profiling session written with
//! profcodec-statprofiler's [`SessionWriter`], rotated at the profiler's default 10 MiB.
//!
//! The stacks follow a random walk (each sample pops and pushes a few frames of the previous
//! stack), as a sampling profiler sees a program move through its call tree: consecutive samples
//! share their outer frames, which is what makes real files compress about 12 times.

use std::io;
use std::path::{Path, PathBuf};

use profcodec_statprofiler::{
    Container, Frame, Genealogy, Header, PerlStr, PerlVersion, ProcessId, SessionWriter,
};

use crate::Rng;

/// The profiler's default `-maxsize` (R:207).
pub const DEFAULT_MAX_SIZE: u64 = 10 << 20;

/// What to generate.
#[derive(Debug, Clone, Copy)]
pub struct SessionSpec {
    /// Samples to write.
    pub samples: u64,
    /// Seed of the pseudo-random stacks.
    pub seed: u64,
    /// Rotation size.
    pub max_size: u64,
    /// The shortest stack of Perl subs the walk aims for; it aims for 0 to 6 more, so stacks
    /// average about `min_depth + 5` frames with the main frame.
    pub min_depth: usize,
    /// Processes: the first is the root, the others its forked children, each with its own
    /// files; the samples are shared out evenly, in process order.
    pub processes: u32,
    /// The callees of each sub (at least 1): the distinct call paths grow as its power of the
    /// depth, so a small value keeps them few however many samples are written, as in a
    /// long-running program that keeps returning to the same stacks.
    pub branching: u64,
}

impl Default for SessionSpec {
    /// The bench's session, sized near the minimums: 1.55 M samples, about 14.2 M frames,
    /// about 60 MB on disk.
    fn default() -> Self {
        SessionSpec {
            samples: 1_550_000,
            seed: 42,
            max_size: DEFAULT_MAX_SIZE,
            min_depth: 4,
            processes: 1,
            branching: 3,
        }
    }
}

/// What was written.
#[derive(Debug, Clone)]
pub struct SessionStats {
    /// The files, in order.
    pub files: Vec<PathBuf>,
    /// Samples written.
    pub samples: u64,
    /// Frames written.
    pub frames: u64,
    /// Bytes on disk.
    pub bytes: u64,
}

const OPS: &[&str] = &[
    "add",
    "iter",
    "gvsv",
    "padsv",
    "entersub",
    "nextstate",
    "const",
    "aelem",
    "helem",
    "sassign",
    "concat",
    "leavesub",
    "print",
    "match",
    "subst",
    "push",
    "shift",
    "join",
    "sort",
    "method",
];

struct Sub {
    package: String,
    name: String,
    file: String,
    first_line: i32,
}

/// 300 subs in 30 packages; each sub calls 3 fixed children, so stacks are paths in a call tree.
const SUBS: usize = 300;

fn subs() -> Vec<Sub> {
    (0..SUBS)
        .map(|i| Sub {
            package: format!("App::M{}", i / 10),
            name: format!("f{}", i % 10),
            file: format!("lib/App/M{}.pm", i / 10),
            first_line: 10 + 30 * (i % 10) as i32,
        })
        .collect()
}

fn child(parent: usize, k: u64) -> usize {
    (parent * 7 + k as usize * 13 + 1) % SUBS
}

/// The id of the generated process `p` (its pid is the first word).
fn process_id(p: u32) -> ProcessId {
    ProcessId::from_words([
        0x7e37 + p,
        2,
        0x6b02_6e8c,
        0x262f_ea27,
        0x5ce8_c4d4,
        0x0b0c_967d,
    ])
}

/// Writes the session `template.<id>.<ordinal>` and returns what was written.
pub fn write_session(template: &Path, spec: SessionSpec) -> io::Result<SessionStats> {
    let mut rng = Rng::new(spec.seed);
    let subs = subs();
    let header = Header {
        perl_version: Some(PerlVersion {
            revision: 5,
            version: 36,
            subversion: 0,
        }),
        tick_duration_us: Some(1000),
        stack_depth: Some(20),
        genealogy: None,
        metadata: vec![],
    };
    let root = process_id(0);
    let processes = spec.processes.max(1);
    let branching = spec.branching.max(1);
    let main_file = PerlStr::bytes(b"bin/service.pl");
    let mut frames = 0u64;
    let mut files = Vec::new();
    for p in 0..processes {
        let genealogy = Genealogy {
            ordinal: 1,
            parent_ordinal: u32::from(p > 0),
            id: process_id(p),
            parent_id: if p == 0 { ProcessId::default() } else { root },
        };
        let mut w = SessionWriter::new(
            template,
            &header,
            genealogy,
            Container::Snappy,
            spec.max_size,
        )?;
        // The samples of process p: an even share, the remainder to the first ones.
        let share = spec.samples / u64::from(processes)
            + u64::from(u64::from(p) < spec.samples % u64::from(processes));
        // The stack, outermost first: (sub index, line).
        let mut stack: Vec<(usize, i32)> = Vec::new();
        for _ in 0..share {
            // Mostly the innermost frames change; now and then the walk climbs further up.
            let pops = if rng.below(10) < 7 {
                rng.below(2)
            } else {
                1 + rng.below(4)
            } as usize;
            stack.truncate(stack.len().saturating_sub(pops));
            let target = spec.min_depth + rng.below(7) as usize;
            while stack.len() < target {
                let s = match stack.last() {
                    None => rng.below(SUBS as u64) as usize,
                    Some(&(parent, _)) => child(parent, rng.below(branching)),
                };
                // The call site in the parent is fixed per child.
                if let Some(parent) = stack.last_mut() {
                    parent.1 = subs[parent.0].first_line + 1 + (s % 7) as i32;
                }
                stack.push((s, subs[s].first_line));
            }
            if let Some(top) = stack.last_mut() {
                top.1 = subs[top.0].first_line + rng.below(20) as i32;
            }
            let xsub = rng.below(20) == 0;
            let op = if xsub {
                "_xsub"
            } else {
                OPS[rng.below(OPS.len() as u64) as usize]
            };
            w.write(
                &profcodec_statprofiler::Record::<PerlStr<'_>, &[u8]>::SampleStart {
                    weight: 1 + rng.below(3) as u32,
                    op_name: PerlStr::bytes(op.as_bytes()),
                },
            )?;
            let mut sample_frames: Vec<Frame<PerlStr<'_>>> = Vec::with_capacity(stack.len() + 2);
            if xsub {
                sample_frames.push(Frame::Xsub {
                    package: PerlStr::bytes(b"List::Util"),
                    name: PerlStr::bytes(b"sum"),
                });
            }
            for &(s, line) in stack.iter().rev() {
                let sub = &subs[s];
                sample_frames.push(Frame::Sub {
                    package: PerlStr::bytes(sub.package.as_bytes()),
                    name: PerlStr::bytes(sub.name.as_bytes()),
                    file: PerlStr::bytes(sub.file.as_bytes()),
                    line,
                    first_line: sub.first_line,
                });
            }
            sample_frames.push(Frame::Main {
                file: main_file,
                line: 100 + stack.first().map_or(0, |f| f.0 as i32 % 20),
            });
            for f in &sample_frames {
                w.write(&profcodec_statprofiler::Record::<PerlStr<'_>, &[u8]>::Frame(*f))?;
            }
            frames += sample_frames.len() as u64;
            w.write(
                &profcodec_statprofiler::Record::<PerlStr<'_>, &[u8]>::SampleEnd { skipped: &[] },
            )?;
        }
        files.extend(w.finish()?);
    }
    let mut bytes = 0;
    for f in &files {
        bytes += std::fs::metadata(f)?.len();
    }
    Ok(SessionStats {
        files,
        samples: spec.samples,
        frames,
        bytes,
    })
}
