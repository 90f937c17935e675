//! Large-input generator for the hpctoolkit format (filled in by the hpctoolkit work).
