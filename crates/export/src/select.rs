//! What an exporter writes of a profile: its metric (value type) and its contexts.

use profcodec_profile::{Profile, ValueTypeId};

use crate::{ExportError, ExportOptions};

/// The value type `options` names ([`ExportOptions::metric`]), else the profile's default one;
/// `None` for a profile without value types.
pub(crate) fn metric(
    profile: &Profile,
    options: &ExportOptions,
) -> Result<Option<ValueTypeId>, ExportError> {
    let Some(name) = options.metric.as_deref() else {
        return Ok(profile.default_value_type());
    };
    match profile.value_type_by_name(name) {
        Some(id) => Ok(Some(id)),
        None => Err(ExportError::UnknownMetric {
            name: name.to_owned(),
            known: profile
                .value_types()
                .map(|(id, _)| profile.value_type_name(id))
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// Which contexts are written, by context index: every context that is not a summary when the
/// profile has node values in one, else the summaries (HPCToolkit's summary profile alone).
/// Writing the detailed contexts keeps the thread and rank of each value; the summaries hold
/// their sums.
pub(crate) fn exported_contexts(profile: &Profile) -> Vec<bool> {
    let mut has_values = vec![false; profile.contexts().len()];
    for v in profile.node_values() {
        has_values[v.context.index()] = true;
    }
    let detailed = profile
        .contexts()
        .any(|(id, c)| !c.summary && has_values[id.index()]);
    profile
        .contexts()
        .map(|(_, c)| c.summary != detailed)
        .collect()
}
