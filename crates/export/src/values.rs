//! What the exporters share: the value type asked for, and the call tree's children.

use profcodec_profile::{Profile, ValueTypeId};

use crate::{ExportError, ExportOptions};

/// The value type of `options.metric`, else the profile's default value type.
pub(crate) fn value_type(
    profile: &Profile,
    options: &ExportOptions,
) -> Result<ValueTypeId, ExportError> {
    match options.metric.as_deref() {
        None => profile.default_value_type().ok_or(ExportError::NoValues),
        Some(name) => profile
            .value_type_by_name(name)
            .ok_or_else(|| ExportError::UnknownMetric {
                name: name.to_owned(),
                known: profile
                    .value_types()
                    .map(|(id, _)| profile.value_type_name(id))
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
    }
}

/// The children of every node of a tree given by its parents (each parent before its
/// children), as compressed rows: node `i`'s children are
/// `children[first[i] as usize..first[i + 1] as usize]`, in id order; the roots are listed
/// under the extra slot `n`.
pub(crate) struct Children {
    first: Vec<u32>,
    children: Vec<u32>,
}

/// The slot of the roots in [`Children`]: `parent` is `None`.
pub(crate) const NO_PARENT: u32 = u32::MAX;

impl Children {
    /// `parents[i]` is node `i`'s parent, [`NO_PARENT`] for a root.
    pub(crate) fn new(parents: &[u32]) -> Children {
        let n = parents.len();
        let slot = |p: u32| if p == NO_PARENT { n } else { p as usize };
        let mut first = vec![0u32; n + 2];
        for &p in parents {
            first[slot(p) + 1] += 1;
        }
        for i in 0..=n {
            first[i + 1] += first[i];
        }
        let mut fill = first.clone();
        let mut children = vec![0u32; n];
        for (i, &p) in parents.iter().enumerate() {
            let s = slot(p);
            children[fill[s] as usize] = i as u32;
            fill[s] += 1;
        }
        Children { first, children }
    }

    /// The children of node `i`, or the roots for `i == n`.
    pub(crate) fn of(&self, i: usize) -> &[u32] {
        &self.children[self.first[i] as usize..self.first[i + 1] as usize]
    }

    /// The number of nodes.
    pub(crate) fn roots_slot(&self) -> usize {
        self.first.len() - 2
    }
}

/// Each node's parent index, [`NO_PARENT`] for a root.
pub(crate) fn parents(profile: &Profile) -> Vec<u32> {
    profile
        .nodes()
        .map(|(_, n)| n.parent.map_or(NO_PARENT, |p| p.index() as u32))
        .collect()
}

/// `x` as `printf("%d")` prints it: the integer part, except that a value within float noise
/// of an integer (a sum of ticks that went through seconds) is that integer.
pub(crate) fn integer_part(x: f64) -> i64 {
    if !x.is_finite() {
        return 0;
    }
    let r = x.round();
    if (x - r).abs() <= 1e-6 * r.abs().max(1.0) {
        r as i64
    } else {
        x.trunc() as i64
    }
}
