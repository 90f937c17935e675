//! `profcodec` CLI operations for the nytprof format (profcodec-nytprof).

use super::Codec;

/// The nytprof codec. Operations not yet implemented answer `OpError::Unsupported`.
pub(super) struct Nytprof;

impl Codec for Nytprof {}
