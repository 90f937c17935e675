//! `profcodec` CLI operations for the hpcrun format (profcodec-hpcrun).

use super::Codec;

/// The hpcrun codec. Operations not yet implemented answer `OpError::Unsupported`.
pub(super) struct Hpcrun;

impl Codec for Hpcrun {}
