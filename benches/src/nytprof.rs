//! Large-input generator for the nytprof format (filled in by the nytprof work).
