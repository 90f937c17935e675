//! Large-input generator for the statprofiler format (filled in by the statprofiler work).
