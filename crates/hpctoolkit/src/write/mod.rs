//! Builders and writers of HPCToolkit database files (filled in by the writing half).
