//! Helpers XR's plugins share, on top of the contract and the store. The
//! host never calls them: they are how build systems agree with each other.
//!
//! - [`includes`]: `#include` resolution over a [`SourceDesc`](xr_sourcebuild::SourceDesc):
//!   in-memory files, the including file's directory, the include directories.
//! - [`source_bundle`]: the artifact of source targets (sources, includes
//!   and defines of one variant, built on the device at load time).
//! - [`program_cache`]: device program binaries kept in the store, keyed
//!   and checked by the driver that made them.

pub mod background;
pub mod includes;
pub mod program_cache;
pub mod source_bundle;

pub use program_cache::{
    DriverIdentity, LoadReport, ProgramCache, decode_binary_record, driver_identity, encode_binary_record,
};
pub use source_bundle::SourceBundle;
