//! XR's offline build, the main path: shaders built ahead of time into the
//! store, for the run-time library (`xr-library`) to load. It knows no
//! compiler, target, option or artifact format: every compile goes to the build system a plugin
//! declares for the (language → target) pair, every load to the build
//! system that declares the target, and the store keeps opaque bytes.
//!
//! - `manifest` reads an `xr.toml`: programs (stages, files, entry points,
//!   languages), variant axes (bool, enum, int ranges → defines), overrides
//!   (specialization constants), targets and filters, with every error at
//!   its file, line and column — every error of a manifest at once, with a
//!   "did you mean" (`suggest`) for a name close to a known one.
//! - `matrix` expands a program's axes into the variants it names, each
//!   with a name made of all of its axes (two points with one name would
//!   load the wrong variant silently, so they are a build error naming both).
//! - [`plan`] resolves a manifest once against the plugins: every
//!   (program, target)'s compiler, every stage's language, every compile's
//!   options. Every front end takes the plan and none chooses again.
//! - `build` runs every (variant, target) of a plan in parallel through
//!   the chain of compiles (`execute`: the journal, the shared cache, a
//!   farm, workers, this process) into the store, deduplicating identical
//!   objects; [`journal`] makes it incremental and safe to kill (its
//!   entries made durable off the build threads by `durable`); the store's
//!   catalog records what each program offers, a failed artifact its last
//!   good object marked stale (`last_good`). `request` is what a front
//!   end asks, `summary` what the build did, `recipe` an artifact's key.
//! - [`bindgen`] writes typed Rust bindings of what the store holds:
//!   variants as types, overrides, typed constant handles, block structs.
//! - `guarded` writes guarded GLSL: one source per program and
//!   stage with an `#if` ladder over its variants.
//! - [`gc`] drops what no manifest references.
//! - [`invocation`] is one build as a front end asks for it (`xr build`,
//!   a cargo build script): the manifest, the no-op stamp, the plugins,
//!   the build, the reports and guarded sources, in that order.
//! - `noop` finds a whole build up to date without loading a plugin.
//! - `remote_exec` (feature `farm`) turns a compile into a Remote
//!   Execution action and sends it to a farm (`xr_remote_exec`); what the
//!   farm cannot run is compiled here.
//!
//! The modules form floors, each importing only from those below it (no
//! cycle; `config` resolves what a front end asks, `plan` and `recipe` say
//! what to compile, `execute` where, `build` and `invocation` in what
//! order). Those a front end needs are public; the rest are the crate's
//! own, their types named at the root where a public signature shows them.
//!
//! The shared remote cache (feature `remote-cache`) and the farm (feature
//! `farm`) are off by default: a build script or an engine that asks for
//! neither compiles no HTTP, TLS, gRPC, Redis or async runtime.
//! - [`report`] folds every artifact's diagnostics into one report per
//!   distinct mistake; [`render`] shows a report with its source line and
//!   include chain.

pub mod bindgen;
pub(crate) mod build;
pub mod config;
mod durable;
pub mod error;
mod execute;
pub mod gc;
pub(crate) mod guarded;
pub mod invocation;
pub mod journal;
mod last_good;
pub(crate) mod manifest;
pub(crate) mod matrix;
pub(crate) mod noop;
pub mod paths;
pub mod plan;
mod recipe;
#[cfg(feature = "farm")]
pub mod remote_exec;
pub mod render;
pub mod report;
pub(crate) mod request;
pub(crate) mod suggest;
pub(crate) mod summary;
pub mod unused;
pub mod used;

pub use build::{build, count_artifacts, remove_orphaned_temp_files};
#[cfg(feature = "remote-cache")]
pub use execute::ActionRecord;
pub use execute::Compiles;
pub use guarded::{GuardedError, GuardedSource, preprocessed_target};
pub use manifest::{
    Axis, AxisKind, Manifest, ManifestError, ManifestErrors, ManifestWarning, Place, Program, ProgramOption, Stage,
    TargetRef,
};
pub use matrix::{Variant, variants};
pub use plan::{BuildPlan, Chosen, PlanError, PlannedProgram, PlannedStage, PluginOffer};
pub use recipe::UnreadableSource;
pub use request::{BadShard, BuildRequest, CompileIn, Shard, Workers};
pub use summary::{ArtifactResult, BuildFailure, Failure, Outcome, Summary, Warned};
pub use xr_store::catalog::{Override, OverrideType};
