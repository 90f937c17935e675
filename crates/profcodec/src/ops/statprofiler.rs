//! `profcodec` CLI operations for the statprofiler format (profcodec-statprofiler).

use super::Codec;

/// The statprofiler codec. Operations not yet implemented answer `OpError::Unsupported`.
pub(super) struct StatProfiler;

impl Codec for StatProfiler {}
