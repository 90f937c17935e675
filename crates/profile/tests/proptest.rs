//! Invariants of the queries on random sampled profiles. Weights are small integers, so every
//! sum is exact in `f64` and totals compare with `==`.
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use std::collections::{BTreeMap, BTreeSet};

use profcodec_profile::{
    Combine, Context, ContextFilter, ContextId, Frame, FrameId, GroupBy, IdKind, Measured, NodeId,
    Order, Profile, ProfileBuilder, Query, StringId, Unit, ValueTypeId, diff,
};
use proptest::prelude::*;

/// (thread, stack of function indexes, weight)
type Sample = (u64, Vec<usize>, u32);

const NAMES: [&str; 6] = ["main", "a", "b", "c", "d", "e"];

fn samples() -> impl Strategy<Value = Vec<Sample>> {
    prop::collection::vec(
        (
            0..3u64,
            prop::collection::vec(0..NAMES.len(), 1..7),
            0..1000u32,
        ),
        0..40,
    )
}

/// The frames of a sample's stack, outermost first.
fn sample_frames(
    b: &mut ProfileBuilder,
    file: StringId,
    stack: &[usize],
    weight: u32,
) -> Vec<FrameId> {
    stack
        .iter()
        .map(|&f| {
            let name = b.intern_string(NAMES[f]).unwrap();
            // Each function at two lines, so that line and function grouping differ.
            let line = (f as u32) * 10 + (weight % 2);
            b.intern_frame(Frame::function(name).with_file(file).with_line(line))
                .unwrap()
        })
        .collect()
}

fn build(samples: &[Sample]) -> Profile {
    let mut b = ProfileBuilder::new();
    let time = b
        .intern_value_type("time", Unit::Nanoseconds, Measured::SelfOnly)
        .unwrap();
    let file = b.intern_string("p.rs").unwrap();
    for (thread, stack, weight) in samples {
        let ctx = b
            .intern_context(Context::new([(IdKind::Thread, *thread)]))
            .unwrap();
        let frames = sample_frames(&mut b, file, stack, *weight);
        b.add_sample(ctx, frames, time, f64::from(*weight)).unwrap();
    }
    b.build()
}

fn total(p: &Profile) -> f64 {
    if p.value_types().len() == 0 {
        return 0.0;
    }
    p.top(&Query::new().contexts(ContextFilter::All))
        .unwrap()
        .total
        .self_value
}

/// name -> (self, inclusive)
fn by_name(p: &Profile, query: &Query) -> BTreeMap<String, (f64, Option<f64>)> {
    if p.value_types().len() == 0 {
        return BTreeMap::new();
    }
    p.top(query)
        .unwrap()
        .rows
        .into_iter()
        .map(|r| (r.name, (r.self_value, r.inclusive)))
        .collect()
}

/// The same samples as [`build`], given as measured inclusive values (each node on a sample's
/// path gets its weight, as a timed block's duration covers its children), with or without the
/// self values too.
fn build_inclusive(samples: &[Sample], with_self: bool) -> Profile {
    let mut b = ProfileBuilder::new();
    let measured = if with_self {
        Measured::SelfAndInclusive
    } else {
        Measured::InclusiveOnly
    };
    let time = b
        .intern_value_type("time", Unit::Nanoseconds, measured)
        .unwrap();
    let file = b.intern_string("p.rs").unwrap();
    for (thread, stack, weight) in samples {
        let ctx = b
            .intern_context(Context::new([(IdKind::Thread, *thread)]))
            .unwrap();
        let mut node = None;
        for frame in sample_frames(&mut b, file, stack, *weight) {
            let id = b.intern_node(node, frame).unwrap();
            b.add_inclusive(ctx, id, time, f64::from(*weight)).unwrap();
            node = Some(id);
        }
        if with_self {
            b.add_self(ctx, node.unwrap(), time, f64::from(*weight))
                .unwrap();
        }
    }
    b.build()
}

proptest! {
    #[test]
    fn measured_inclusive_agrees_with_computed(samples in samples()) {
        let computed = build(&samples);
        for with_self in [false, true] {
            let measured = build_inclusive(&samples, with_self);
            for group in [GroupBy::Function, GroupBy::Line, GroupBy::Module] {
                let q = Query::new().group(group).contexts(ContextFilter::All);
                prop_assert_eq!(by_name(&measured, &q), by_name(&computed, &q));
            }
        }
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serde_round_trip(samples in samples()) {
        let p = build(&samples);
        let json = serde_json::to_string(&p).unwrap();
        prop_assert_eq!(serde_json::from_str::<Profile>(&json).unwrap(), p);
    }

    #[test]
    fn top_matches_a_flat_profiler(samples in samples()) {
        let p = build(&samples);
        let expected_total: f64 = samples.iter().map(|s| f64::from(s.2)).sum();
        let mut self_by = BTreeMap::<&str, f64>::new();
        let mut inclusive_by = BTreeMap::<&str, f64>::new();
        for (_, stack, w) in &samples {
            *self_by.entry(NAMES[*stack.last().unwrap()]).or_default() += f64::from(*w);
            // Once per stack, however often the function recurses.
            for f in stack.iter().collect::<BTreeSet<_>>() {
                *inclusive_by.entry(NAMES[*f]).or_default() += f64::from(*w);
            }
        }
        if samples.is_empty() {
            return Ok(());
        }
        for group in [GroupBy::Function, GroupBy::Line, GroupBy::Module] {
            for order in [Order::SelfValue, Order::Inclusive] {
                let top = p.top(&Query::new().group(group).by(order)).unwrap();
                prop_assert_eq!(top.total.self_value, expected_total);
                prop_assert_eq!(top.total.inclusive, Some(expected_total));
                let sum: f64 = top.rows.iter().map(|r| r.self_value).sum();
                prop_assert_eq!(sum, expected_total);
                for r in &top.rows {
                    prop_assert!(r.inclusive.unwrap() >= r.self_value);
                }
                let key = |r: &profcodec_profile::Row| match order {
                    Order::SelfValue => r.self_value,
                    Order::Inclusive => r.inclusive.unwrap(),
                };
                prop_assert!(top.rows.windows(2).all(|w| key(&w[0]) >= key(&w[1])));
                let limited = p.top(&Query::new().group(group).by(order).limit(2)).unwrap();
                prop_assert_eq!(&limited.rows[..], &top.rows[..top.rows.len().min(2)]);
            }
        }
        let top = p.top(&Query::new()).unwrap();
        for r in &top.rows {
            prop_assert_eq!(r.self_value, self_by.get(r.name.as_str()).copied().unwrap_or(0.0));
            prop_assert_eq!(r.inclusive, inclusive_by.get(r.name.as_str()).copied());
        }
    }

    #[test]
    fn contexts_add_up(samples in samples()) {
        let p = build(&samples);
        if samples.is_empty() {
            return Ok(());
        }
        let all = p.top(&Query::new().contexts(ContextFilter::All)).unwrap();
        let per_context: f64 = p
            .contexts()
            .map(|(id, _)| {
                p.top(&Query::new().contexts(ContextFilter::Ids(vec![id])))
                    .unwrap()
                    .total
                    .self_value
            })
            .sum();
        prop_assert_eq!(per_context, all.total.self_value);
        let (time, _) = p.value_types().next().unwrap();
        let in_one_pass: f64 = p.context_totals(time).iter().map(|&(_, t)| t).sum();
        prop_assert_eq!(in_one_pass, all.total.self_value);
        let mean = p
            .top(&Query::new().contexts(ContextFilter::All).combine(Combine::Mean))
            .unwrap();
        prop_assert_eq!(mean.total.self_value, all.total.self_value / all.contexts as f64);
    }

    #[test]
    fn merge_is_associative_and_adds(a in samples(), b in samples(), c in samples()) {
        let (pa, pb, pc) = (build(&a), build(&b), build(&c));
        let ab_c = Profile::merge([&Profile::merge([&pa, &pb]).unwrap(), &pc]).unwrap();
        let a_bc = Profile::merge([&pa, &Profile::merge([&pb, &pc]).unwrap()]).unwrap();
        prop_assert_eq!(total(&ab_c), total(&pa) + total(&pb) + total(&pc));
        prop_assert_eq!(total(&ab_c), total(&a_bc));
        for group in [GroupBy::Function, GroupBy::Line] {
            let q = Query::new().group(group).contexts(ContextFilter::All);
            prop_assert_eq!(by_name(&ab_c, &q), by_name(&a_bc, &q));
        }
        // The merged tree is no bigger than the inputs' trees together.
        prop_assert!(ab_c.nodes().len() <= pa.nodes().len() + pb.nodes().len() + pc.nodes().len());
    }

    #[test]
    fn diff_with_itself_is_zero_and_diff_of_merge_is_the_addition(a in samples(), b in samples()) {
        let (pa, pb) = (build(&a), build(&b));
        if a.is_empty() {
            return Ok(());
        }
        let q = Query::new().contexts(ContextFilter::All);
        let same = diff(&pa, &pa, &q).unwrap();
        for r in &same.rows {
            prop_assert_eq!(r.self_change, 0.0);
            prop_assert_eq!(r.inclusive_change, Some(0.0));
        }
        let merged = Profile::merge([&pa, &pb]).unwrap();
        let d = diff(&pa, &merged, &q).unwrap();
        let added = by_name(&pb, &q);
        for r in &d.rows {
            let (s, i) = added.get(&r.name).copied().unwrap_or((0.0, Some(0.0)));
            prop_assert_eq!(r.self_change, s);
            prop_assert_eq!(r.inclusive_change, i);
        }
    }
}

/// (context, node, value type, inclusive rather than self, value)
type NodeValueOp = (u32, usize, usize, bool, u32);
/// A node value's self and inclusive sums.
type SelfAndInclusive = (Option<f64>, Option<f64>);
/// (context, node, value type) as indexes.
type Key = (u32, usize, usize);

/// A builder with `contexts` thread contexts, `value_types` value types measuring self and
/// inclusive, and a chain of `nodes` distinct nodes whose ids are their depths.
fn chain_builder(
    contexts: u64,
    value_types: usize,
    nodes: usize,
) -> (
    ProfileBuilder,
    Vec<ContextId>,
    Vec<ValueTypeId>,
    Vec<NodeId>,
) {
    let mut b = ProfileBuilder::new();
    let name = b.intern_string("f").unwrap();
    let frame = b.intern_frame(Frame::function(name)).unwrap();
    let contexts = (0..contexts)
        .map(|t| {
            b.intern_context(Context::new([(IdKind::Thread, t)]))
                .unwrap()
        })
        .collect();
    let value_types = (0..value_types)
        .map(|v| {
            b.intern_value_type(&format!("m{v}"), Unit::Count, Measured::SelfAndInclusive)
                .unwrap()
        })
        .collect();
    let mut ids: Vec<NodeId> = Vec::new();
    for i in 0..nodes {
        ids.push(b.intern_node(ids.last().copied(), frame).unwrap());
        assert_eq!(ids[i].index(), i);
    }
    (b, contexts, value_types, ids)
}

/// The profile's node values against the sums of a map, listed as the model stores them: by
/// (context, value type) column in the order the columns were first given a value, each in the
/// order of its nodes' first addition.
fn assert_sums(
    profile: &Profile,
    order: &[Key],
    sums: &BTreeMap<Key, SelfAndInclusive>,
) -> Result<(), TestCaseError> {
    let mut columns: Vec<(u32, usize)> = Vec::new();
    for &(c, _, v) in order {
        if !columns.contains(&(c, v)) {
            columns.push((c, v));
        }
    }
    let mut want: Vec<(Key, SelfAndInclusive)> = order.iter().map(|k| (*k, sums[k])).collect();
    want.sort_by_key(|&((c, _, v), _)| columns.iter().position(|&col| col == (c, v)));
    let got: Vec<_> = profile
        .node_values()
        .iter()
        .map(|v| {
            (
                (
                    v.context.index() as u32,
                    v.node.index(),
                    v.value_type.index(),
                ),
                (v.self_value, v.inclusive),
            )
        })
        .collect();
    prop_assert_eq!(got, want);
    Ok(())
}

proptest! {
    /// The builder's node values equal a plain map's sums, whether the nodes of a column come
    /// in increasing order (no index) or not (indexed, densely or by hash for scattered nodes).
    #[test]
    fn node_values_sum_like_a_map(
        nodes in 1..600usize,
        ops in prop::collection::vec(
            (0..3u32, 0..600usize, 0..40usize, any::<bool>(), 0..1000u32),
            0..600,
        ),
    ) {
        let (mut b, contexts, value_types, ids) = chain_builder(3, 40, nodes);
        let mut order: Vec<Key> = Vec::new();
        let mut sums: BTreeMap<Key, SelfAndInclusive> = BTreeMap::new();
        for &(c, n, v, inclusive, x) in &ops as &[NodeValueOp] {
            let n = n % nodes;
            let (ctx, node, vt, x) = (contexts[c as usize], ids[n], value_types[v], f64::from(x));
            let entry = sums.entry((c, n, v)).or_insert_with(|| {
                order.push((c, n, v));
                (None, None)
            });
            if inclusive {
                b.add_inclusive(ctx, node, vt, x).unwrap();
                *entry.1.get_or_insert(0.0) += x;
            } else {
                b.add_self(ctx, node, vt, x).unwrap();
                *entry.0.get_or_insert(0.0) += x;
            }
        }
        assert_sums(&b.build(), &order, &sums)?;
    }
}

/// (context, node, [(value type, self, inclusive)]) for one `add_node_values` call.
type NodeValuesCall = (u32, usize, Vec<(usize, Option<u32>, Option<u32>)>);

proptest! {
    /// `add_node_values` adds as `add_self` and `add_inclusive` would, value by value: a map's
    /// sums, with repeated value types within a call and many value types on one node.
    #[test]
    fn node_values_in_calls_sum_like_a_map(
        nodes in 1..50usize,
        calls in prop::collection::vec(
            (
                0..2u32,
                0..50usize,
                prop::collection::vec(
                    (0..80usize, prop::option::of(0..1000u32), prop::option::of(0..1000u32)),
                    0..24,
                ),
            ),
            0..60,
        ),
    ) {
        let (mut b, contexts, value_types, ids) = chain_builder(2, 80, nodes);
        let mut sums: BTreeMap<Key, SelfAndInclusive> = BTreeMap::new();
        let mut order = Vec::new();
        for (c, n, values) in &calls as &[NodeValuesCall] {
            let n = n % nodes;
            let batch = values.iter().map(|&(v, s, i)| {
                (value_types[v], s.map(f64::from), i.map(f64::from))
            });
            b.add_node_values(contexts[*c as usize], ids[n], batch).unwrap();
            for &(v, s, i) in values {
                if s.is_none() && i.is_none() {
                    continue;
                }
                let entry = sums.entry((*c, n, v)).or_insert_with(|| {
                    order.push((*c, n, v));
                    (None, None)
                });
                if let Some(s) = s {
                    *entry.0.get_or_insert(0.0) += f64::from(s);
                }
                if let Some(i) = i {
                    *entry.1.get_or_insert(0.0) += f64::from(i);
                }
            }
        }
        assert_sums(&b.build(), &order, &sums)?;
    }
}
