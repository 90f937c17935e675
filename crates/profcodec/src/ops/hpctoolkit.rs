//! `profcodec` CLI operations for the hpctoolkit format (profcodec-hpctoolkit).

use super::Codec;

/// The hpctoolkit codec. Operations not yet implemented answer `OpError::Unsupported`.
pub(super) struct Hpctoolkit;

impl Codec for Hpctoolkit {}
