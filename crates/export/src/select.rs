//! What an exporter writes of a profile: its metric (value type) and its contexts.

use std::borrow::Cow;

use profcodec_profile::{FrameId, Profile, ValueTypeId};

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

/// Which contexts are written, by context index: every context that is not a summary, unless
/// only summaries have node values (HPCToolkit's summary profile alone), then the summaries.
/// Writing the detailed contexts keeps the thread and rank of each value; the summaries hold
/// their sums.
pub(crate) fn exported_contexts(profile: &Profile) -> Vec<bool> {
    let mut has_values = vec![false; profile.contexts().len()];
    for v in profile.node_values() {
        has_values[v.context.index()] = true;
    }
    let with_values = |summary: bool| {
        profile
            .contexts()
            .any(|(id, c)| c.summary == summary && has_values[id.index()])
    };
    let detailed = with_values(false) || !with_values(true);
    profile
        .contexts()
        .map(|(_, c)| c.summary != detailed)
        .collect()
}

/// The name `profcodec top` gives the function of a function-like frame: its function name,
/// else its address, file or module in brackets, so that a viewer's rows and `top`'s match.
pub(crate) fn function_name(profile: &Profile, frame: FrameId) -> Cow<'_, str> {
    let f = profile.frame(frame);
    match (f.function, f.address, f.file, f.module) {
        (Some(name), ..) => Cow::Borrowed(profile.string(name)),
        (None, Some(address), ..) => Cow::Owned(format!("[0x{address:x}]")),
        (None, None, Some(file), _) => Cow::Owned(format!("[{}]", profile.string(file))),
        (None, None, None, Some(module)) => Cow::Owned(format!("[{}]", profile.string(module))),
        _ => Cow::Borrowed("[unknown]"),
    }
}
