//! The bytes on disk: magics, constants, binrw header structs, zerocopy records.
