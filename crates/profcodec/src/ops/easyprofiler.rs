//! `profcodec` CLI operations for the easyprofiler format (profcodec-easyprofiler).

use super::Codec;

/// The easyprofiler codec. Operations not yet implemented answer `OpError::Unsupported`.
pub(super) struct EasyProfiler;

impl Codec for EasyProfiler {}
