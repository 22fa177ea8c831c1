//! XR's offline build (seed 003: offline build is the main path).
//!
//! [`manifest`] reads an `xr.toml`: programs (stages, files, entry points,
//! languages), variant axes (bool, enum, int ranges → defines), overrides
//! (specialization constants), targets and filters, with every error at its
//! file, line and column. [`matrix`] expands a program's axes into the
//! variants it names, each with a name made of all of its axes (seed 001:
//! two points with one name are a build error naming both).

pub mod manifest;
pub mod matrix;

pub use manifest::{Axis, AxisKind, Manifest, ManifestError, Override, Program, Stage, Target};
pub use matrix::{Variant, variants};
