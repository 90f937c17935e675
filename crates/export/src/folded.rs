//! Folded stacks: one `frame;frame;frame value` line per call path, the input of flame graph
//! tools (inferno, `flamegraph.pl`) and of speedscope.
//!
//! - **Lines**: one per call-tree node with a measured value of the value type (a measured zero
//!   included, as `nytprofcalls` prints it; a computed self value only when it is not zero),
//!   root first, the value being the node's self value summed over the whole program's
//!   contexts. Nodes whose paths have the same names are one line. Lines come in depth-first
//!   order of the tree. A profile with no call tree (a flat profile) gives one line per
//!   function with its self value.
//! - **Values** are integers, as flame graph tools read them: counts as they are; times in the
//!   profile's [time resolution](profcodec_profile::Profile::time_resolution) when it has one
//!   (NYTProf's ticks, as `nytprofcalls` prints them), else in their own unit, except seconds,
//!   which are written as microseconds. The integer part is written, as `printf("%d")` does,
//!   forgiving float noise around an integer; negative values (a computed self value below
//!   zero) are left out. The lines do not say their unit: [`values_in_words`] does, for a
//!   reader (`profcodec convert --to folded` prints it on standard error).
//! - **Names**: [`ExportOptions::folded_names`] or the frame's label, made safe for the format
//!   whatever the name holds: `;` (which separates frames) is written as `:`, and every control
//!   character (a line break `\n` or `\r`, a tab, NUL...; Unicode's line and paragraph
//!   separators too) as a space, so that every line is one call path and one value. Spaces are
//!   kept: the value is the text after a line's last space, as flame graph tools read it.
//! - **Size**: a line is as long as its whole call path, so a call chain `d` deep writes about
//!   `d²/2` names. The output's size is projected from the call tree before anything is written
//!   (one pass: a node's path is its parent's plus its own name), and an output over
//!   [`ExportOptions::max_output`] is refused with [`ExportError::OutputTooLarge`]. A profile
//!   without a call tree writes one line per function, and is not checked.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write;

use foldhash::fast::RandomState;
use profcodec_profile::{ContextFilter, FrameId, Profile, Quantity, Unit, ValueTypeId};

use crate::text::TextOut;
use crate::values::{self, Children, NO_PARENT};
use crate::{ExportError, ExportOptions};

/// Writes `profile` as folded stacks to `out` (see the [module docs](self)).
pub fn write_folded(
    profile: &Profile,
    options: &ExportOptions,
    out: impl Write,
) -> Result<(), ExportError> {
    let value_type = values::value_type(profile, options)?;
    let factor = Scale::of(profile, value_type).factor;
    let mut names = Names::new(profile, options);
    let mut out = TextOut::new(out);
    if profile.nodes().len() == 0 {
        write_flat(profile, value_type, factor, &mut names, &mut out)?;
        return Ok(out.finish()?);
    }
    let totals = profile
        .node_totals(value_type, &ContextFilter::Whole)
        .unwrap_or_default();
    let tree = NamedTree::new(profile, &mut names, totals);
    let line_value = |i: usize| {
        let self_value = tree.self_values[i];
        (tree.measured[i] || self_value != 0.0)
            .then(|| values::integer_part(self_value * factor))
            .filter(|&v| v >= 0)
    };
    if options.max_output.is_some() {
        let projected = projected_size(&tree, &names, line_value);
        crate::budget::check("folded", projected, options.max_output)?;
    }
    let children = Children::new(&tree.parents);
    let mut path: Vec<u8> = Vec::new();
    let mut stack: Vec<(u32, usize)> = children
        .of(children.roots_slot())
        .iter()
        .rev()
        .map(|&r| (r, 0))
        .collect();
    while let Some((node, len)) = stack.pop() {
        let i = node as usize;
        path.truncate(len);
        if len > 0 {
            path.push(b';');
        }
        path.extend_from_slice(names.name(tree.names[i]).as_bytes());
        if let Some(v) = line_value(i) {
            out.bytes(&path);
            out.byte(b' ');
            out.int(v);
            out.byte(b'\n');
            out.maybe_flush()?;
        }
        let here = path.len();
        stack.extend(children.of(i).iter().rev().map(|&c| (c, here)));
    }
    Ok(out.finish()?)
}

/// The bytes the lines of `tree` take, exactly: one pass over the nodes, each path's length
/// being its parent's plus a `;` and its own name (parents come before their children).
fn projected_size(
    tree: &NamedTree,
    names: &Names<'_>,
    line_value: impl Fn(usize) -> Option<i64>,
) -> u64 {
    let mut path_len: Vec<u64> = Vec::with_capacity(tree.parents.len());
    let mut total: u64 = 0;
    for (i, &parent) in tree.parents.iter().enumerate() {
        let own = names.name(tree.names[i]).len() as u64;
        let len = if parent == NO_PARENT {
            own
        } else {
            path_len[parent as usize].saturating_add(1 + own)
        };
        path_len.push(len);
        if let Some(v) = line_value(i) {
            // The path, a space, the value and the line break.
            let line = len.saturating_add(2 + crate::budget::decimal_len(v as u64));
            total = total.saturating_add(line);
        }
    }
    total
}

/// A flat profile's lines: one per function-like frame with its self value.
fn write_flat<W: Write>(
    profile: &Profile,
    value_type: ValueTypeId,
    factor: f64,
    names: &mut Names<'_>,
    out: &mut TextOut<W>,
) -> Result<(), ExportError> {
    let selected = profile
        .selected_contexts(&ContextFilter::Whole)
        .unwrap_or_default();
    let mut sums: Vec<(u32, f64)> = Vec::new();
    let mut index: HashMap<u32, usize, RandomState> = HashMap::default();
    for v in profile.flat_values() {
        if v.value_type != value_type
            || !selected.get(v.context.index()).copied().unwrap_or(false)
            || !profile.frame(v.frame).kind.is_function_like()
        {
            continue;
        }
        let name = names.of(v.frame);
        let at = *index.entry(name).or_insert_with(|| {
            sums.push((name, 0.0));
            sums.len() - 1
        });
        sums[at].1 += v.self_value.unwrap_or(0.0);
    }
    for (name, value) in sums {
        let v = values::integer_part(value * factor);
        if v >= 0 {
            out.str(names.name(name));
            out.byte(b' ');
            out.int(v);
            out.byte(b'\n');
            out.maybe_flush()?;
        }
    }
    Ok(())
}

/// What the values of [`write_folded`]'s lines are, in words, since flame graph tools show bare
/// numbers: the metric's name, and for a time the unit of the integers written (`time in ticks
/// (10000000 per second)`, `CPUTIME (sec) in microseconds`), else its unit when that is not its
/// name (`samples`, `calls (count)`).
///
/// ```
/// use profcodec_export::{ExportOptions, folded};
/// use profcodec_profile::{Context, Frame, IdKind, Measured, ProfileBuilder, Unit};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut b = ProfileBuilder::new();
/// let thread = b.intern_context(Context::new([(IdKind::Thread, 0)]))?;
/// let time = b.intern_value_type("time", Unit::Seconds, Measured::SelfOnly)?;
/// let main = b.intern_string("main")?;
/// let main = b.intern_frame(Frame::function(main))?;
/// b.add_sample(thread, [main], time, 0.25)?;
/// let profile = b.build();
/// assert_eq!(folded::values_in_words(&profile, &ExportOptions::default())?, "time in microseconds");
/// # Ok(())
/// # }
/// ```
pub fn values_in_words(profile: &Profile, options: &ExportOptions) -> Result<String, ExportError> {
    let value_type = values::value_type(profile, options)?;
    let name = profile.value_type_name(value_type);
    let unit = profile.value_type(value_type).unit;
    if unit.quantity() == Quantity::Time {
        return Ok(format!(
            "{name} in {}",
            Scale::of(profile, value_type).unit_in_words(profile)
        ));
    }
    let unit = profile.unit_name(unit);
    Ok(if unit == name {
        name.to_owned()
    } else {
        format!("{name} ({unit})")
    })
}

/// The integers written for a value type: what one unit of it is in them (see the module docs),
/// and the unit they count.
struct Scale {
    factor: f64,
    unit: Unit,
}

impl Scale {
    fn of(profile: &Profile, value_type: ValueTypeId) -> Scale {
        let unit = profile.value_type(value_type).unit;
        let same = Scale { factor: 1.0, unit };
        if unit.quantity() != Quantity::Time {
            return same;
        }
        if let (Some(resolution), Some(seconds)) = (profile.time_resolution(), unit.seconds()) {
            match resolution {
                // Multiplying by the rate keeps ticks that went through seconds exact.
                Unit::Ticks {
                    per_second: Some(rate),
                } if rate > 0 => {
                    return Scale {
                        factor: seconds * rate as f64,
                        unit: resolution,
                    };
                }
                other => {
                    if let Some(step) = other.seconds() {
                        return Scale {
                            factor: seconds / step,
                            unit: other,
                        };
                    }
                }
            }
        }
        match unit {
            Unit::Seconds => Scale {
                factor: 1e6,
                unit: Unit::Microseconds,
            },
            _ => same,
        }
    }

    /// The unit of the integers: its name, and a tick's rate where known.
    fn unit_in_words(&self, profile: &Profile) -> String {
        let name = profile.unit_name(self.unit);
        match self.unit {
            Unit::Ticks {
                per_second: Some(rate),
            } if rate > 0 => format!("{name} ({rate} per second)"),
            _ => name.to_owned(),
        }
    }
}

/// The names written for frames, interned: frames of equal names share one id.
struct Names<'p> {
    profile: &'p Profile,
    namer: Option<crate::FrameNamer>,
    /// Per frame, its name id, `u32::MAX` until asked for.
    of_frame: Vec<u32>,
    names: Vec<Box<str>>,
    index: HashMap<Box<str>, u32, RandomState>,
}

impl<'p> Names<'p> {
    fn new(profile: &'p Profile, options: &ExportOptions) -> Self {
        Names {
            profile,
            namer: options.folded_names,
            of_frame: vec![u32::MAX; profile.frames().len()],
            names: Vec::new(),
            index: HashMap::default(),
        }
    }

    fn of(&mut self, frame: FrameId) -> u32 {
        let known = self.of_frame[frame.index()];
        if known != u32::MAX {
            return known;
        }
        let label = self.profile.frame_label(frame);
        let name: Box<str> = match self.namer {
            Some(namer) => sanitize(&namer(&label)).into(),
            None => sanitize(&label).into(),
        };
        let id = match self.index.get(&name) {
            Some(&id) => id,
            None => {
                let id = self.names.len() as u32;
                self.names.push(name.clone());
                self.index.insert(name, id);
                id
            }
        };
        self.of_frame[frame.index()] = id;
        id
    }

    fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }
}

/// `label` without the characters that end a frame (`;`, written as `:`) or may end a line
/// (every control character, and Unicode's line and paragraph separators, written as spaces).
fn sanitize(label: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c == ';' || c.is_control() || c == '\u{2028}' || c == '\u{2029}';
    if !label.contains(unsafe_char) {
        return Cow::Borrowed(label);
    }
    Cow::Owned(
        label
            .chars()
            .map(|c| match c {
                ';' => ':',
                c if unsafe_char(c) => ' ',
                c => c,
            })
            .collect(),
    )
}

/// The call tree by names: nodes whose paths have the same names are one node, their values
/// added. When every frame has a name of its own this is the profile's tree itself.
struct NamedTree {
    parents: Vec<u32>,
    names: Vec<u32>,
    self_values: Vec<f64>,
    measured: Vec<bool>,
}

impl NamedTree {
    fn new(
        profile: &Profile,
        names: &mut Names<'_>,
        totals: profcodec_profile::NodeTotals,
    ) -> NamedTree {
        let node_names: Vec<u32> = profile.nodes().map(|(_, n)| names.of(n.frame)).collect();
        let frames_used = names.of_frame.iter().filter(|&&n| n != u32::MAX).count();
        if names.names.len() == frames_used {
            return NamedTree {
                parents: values::parents(profile),
                names: node_names,
                self_values: totals.self_values,
                measured: totals.measured,
            };
        }
        let mut index: HashMap<(u32, u32), u32, RandomState> = HashMap::default();
        let mut tree = NamedTree {
            parents: Vec::new(),
            names: Vec::new(),
            self_values: Vec::new(),
            measured: Vec::new(),
        };
        let mut renamed: Vec<u32> = Vec::with_capacity(node_names.len());
        for (i, (_, node)) in profile.nodes().enumerate() {
            let parent = node.parent.map_or(NO_PARENT, |p| renamed[p.index()]);
            let next = tree.parents.len() as u32;
            let at = *index.entry((parent, node_names[i])).or_insert_with(|| {
                tree.parents.push(parent);
                tree.names.push(node_names[i]);
                tree.self_values.push(0.0);
                tree.measured.push(false);
                next
            });
            tree.self_values[at as usize] += totals.self_values[i];
            tree.measured[at as usize] |= totals.measured[i];
            renamed.push(at);
        }
        tree
    }
}
