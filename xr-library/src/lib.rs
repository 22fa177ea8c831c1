//! What an engine links to load the shaders `xr build` made: a program by
//! name and variant, through the best path the device offers (see
//! [`library`]). It reads the store and attaches the build systems the
//! plugins provide; it never compiles offline.
//!
//! Cargo features, off by default so that an engine that only loads
//! shaders links no file watcher, build host, async runtime or HTTP client:
//! - `hot-reload`: [`hot_reload`], the programs an engine loaded rebuilt
//!   when their sources change on disk (links the offline build);
//! - `remote`: objects missing from the local store read through a shared
//!   remote cache ([`ShaderLibrary::with_remote`]).
//!
//! With [`ShaderLibrary::with_usage_log`], every load is recorded by name
//! in a usage log ([`xr_store::usage`]); [`DeviceLoader::warm`] loads what
//! a log names before the first frame ([`warm`]).

#[cfg(feature = "hot-reload")]
pub mod hot_reload;
pub mod layout;
pub mod library;
pub mod warm;

/// Plain-data casts: the typed bindings' block structs derive its traits.
pub use bytemuck;
pub use library::{DeviceLoader, LibraryError, LoadPath, LoadRequest, Loaded, STRICT_WARM, ShaderLibrary, StrictMiss};
pub use warm::{WarmOutcome, WarmReport, WarmStep};
/// The device contract: device kinds, options, the command surface.
pub use xr_device;
/// The plugin host: [`Registry`] finds, links and chooses plugins.
pub use xr_host::{self, LinkedPlugin, Registry};
#[cfg(feature = "remote")]
pub use xr_remote;
/// The build-system contract: constant values, load paths, stages.
pub use xr_sourcebuild;
/// The store: objects, catalogs, the usage log.
pub use xr_store;
