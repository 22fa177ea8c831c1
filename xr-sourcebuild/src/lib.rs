//! The SourceBuildSystem contract of XR: the plugin ABI, and the host's
//! typed setters over its constant table ([`constants`]).
//!
//! A *source build system* builds shader source into the form a device
//! runs, or the form just before it. It advertises [`Availability`] flags,
//! the device kinds it attaches to, the languages and stages it accepts,
//! the (language → target) pairs it compiles without a device
//! ([`offline`]) and the targets it loads on a device ([`load`]). Plugins
//! export one root module (`xr-plugin`) listing the device systems and
//! build systems they provide; the host (`xr-host`) finds and loads them,
//! the store (`xr-store`) keeps what they build, and `xr-plugin-kit` holds
//! the helpers plugins share.
//!
//! Plugins implement the plain traits of [`backend`] rather than the ABI
//! traits, and put them behind the ABI with `xr_plugin::Guarded`, which
//! catches every panic at the boundary.
//!
//! # The ABI rule
//!
//! Every type here that crosses the plugin boundary derives `StableAbi`, and
//! abi_stable compares layouts, crate names and versions when a plugin
//! loads. The rule for changing them — when [`INTERFACE_VERSION`] moves, why
//! a trait's `#[sabi(last_prefix_field)]` never does, and the fixture that
//! tests it — is written once, in `xr-plugin`'s crate documentation.
//! Targets and languages are names, not ABI: a new compiler or language
//! needs no interface change.

#![deny(missing_docs)]

pub mod availability;
pub mod backend;
pub mod constants;
pub mod diagnostics;
pub mod hit_groups;
pub mod load;
pub mod offline;
pub mod source;
pub mod system;

pub use availability::Availability;
pub use backend::{AttachedBuildSystemBackend, ConstantTableBackend, SourceBuildSystemBackend, guard_setter};
pub use constants::{
    ConstantData, ConstantHandle, ConstantInfo, ConstantSet, ConstantTable, ConstantTable_TO, ConstantTableBox,
    ConstantTableExt, ConstantType, ConstantValue, FloatSetter, MemberLayout, RESOURCE_HANDLE, ResolvedSetter,
    ResourceInfo, ScalarKind, SetStatus, Setter, ThroughPipeline, check_binding, typed,
};
pub use diagnostics::{BuildError, Diagnostic, IncludeSite, Severity, guard_build};
pub use hit_groups::{HitGroup, HitGroupMistake, hit_groups};
pub use load::{ArtifactLoad, LoadPath, LoadedArtifact, OverrideKind, OverrideValue, TargetLoad};
pub use offline::{
    CompileOption, CompilePair, FileRead, LanguageInfo, OfflineArtifact, OfflineRequest, OptionDecl, OptionValue,
    ProgramReflection, ReflectedConstant, ReflectedOverride, ReflectedResource, SourceReach, StageOutput,
};
pub use source::{Define, EntryPoint, PipelineKind, ProgramDesc, ShaderStage, SourceDesc, Specialization, VirtualFile};
pub use system::{
    AttachedBuildSystem, AttachedBuildSystem_TO, AttachedBuildSystemBox, BuildOptions, BuildSystemInfo, BuiltProgram,
    ProgramBinary, SourceBuildSystem, SourceBuildSystem_TO, SourceBuildSystemBox,
};
pub use xr_device;

/// The build-system contract's interface version: this crate's own package
/// version (not the workspace's), which abi_stable checks with every type's
/// layout. When it moves: `xr-plugin`'s crate documentation.
pub const INTERFACE_VERSION: &str = env!("CARGO_PKG_VERSION");
