//! Large-input generator for the hpcrun format (filled in by the hpcrun work).
