//! XR's offline build (offline build is the main path) and the run-time
//! library that loads what it built. It knows no compiler, target or
//! artifact format: every compile goes to the build system a plugin
//! declares for the (language → target) pair, every load to the build
//! system that declares the target, and the store keeps opaque bytes.
//!
//! - [`manifest`] reads an `xr.toml`: programs (stages, files, entry points,
//!   languages), variant axes (bool, enum, int ranges → defines), overrides
//!   (specialization constants), targets and filters, with every error at
//!   its file, line and column.
//! - [`matrix`] expands a program's axes into the variants it names, each
//!   with a name made of all of its axes (two points with one name would
//!   load the wrong variant silently, so they are a build error naming both).
//! - [`build`] builds every (variant, target) in parallel into the store,
//!   deduplicating identical objects; [`journal`] makes it incremental and
//!   safe to kill; [`catalog`] records what each program offers.
//! - [`guarded`] writes guarded GLSL: one source per program and
//!   stage with an `#if` ladder over its variants.
//! - [`library`] is what an engine opens at start-up: a program by name and
//!   variant, through the best path the device offers; [`hot_reload`]
//!   rebuilds the programs it loaded when their sources change on disk.
//! - [`gc`] drops what no manifest references.
//! - [`noop`] finds a whole build up to date without loading a plugin.

pub mod build;
pub mod catalog;
pub mod gc;
pub mod guarded;
pub mod hot_reload;
pub mod journal;
pub mod library;
pub mod manifest;
pub mod matrix;
pub mod noop;

pub use build::{ArtifactResult, BuildRequest, Outcome, Shard, Summary, build, count_artifacts, plugin_offer};
pub use library::{LoadPath, Loaded, ShaderLibrary};
pub use manifest::{
    Axis, AxisKind, Manifest, ManifestError, Override, OverrideType, Place, PluginOffer, Program, Stage, TargetRef,
};
pub use matrix::{Variant, variants};
pub use xr_remote;
