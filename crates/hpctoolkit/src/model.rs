//! The owned model of a whole HPCToolkit database (filled in by the writing half).
