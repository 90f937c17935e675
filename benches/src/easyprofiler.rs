//! Large-input generator for the easyprofiler format (filled in by the easyprofiler work).
