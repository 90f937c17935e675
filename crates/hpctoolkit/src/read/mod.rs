//! Views over HPCToolkit database files (filled in by the reading half).
