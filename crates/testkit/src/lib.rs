//! Test support shared by the tests, benches and xtask of the profcodec workspace. This crate is
//! never published: no user of the format crates compiles it.
//!
//! - [`corpus`]: the test-corpus locator (`PROFCODEC_CORPUS`, else `../shared/corpus` beside the
//!   workspace).
//! - [`hostile`]: the hostile-input mutations (truncations, bit flips) and allocation limits.
//! - [`native`]: small C and C++ programs built with gcc/g++, and binutils' view of them
//!   (objdump, nm, addr2line), for the symbolization tests.
//! - [`speedscope`]: the real speedscope app in headless Chromium, to check that an output loads.
//! - [`timeline`]: the timeline tests' readers of both trace formats (Perfetto's through its
//!   own Python classes), and hpcviewer's depth rule as the reference of sampled traces.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod corpus;
pub mod hostile;
pub mod native;
pub mod speedscope;
pub mod timeline;
