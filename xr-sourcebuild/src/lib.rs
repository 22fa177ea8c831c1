//! The SourceBuildSystem contract of XR: the plugin ABI, and the host's
//! typed setters over its constant table ([`constants`]).
//!
//! A *source build system* builds shader source into the form a device
//! runs, or the form just before it. It advertises [`Availability`] flags,
//! the device kinds it attaches to, the languages and stages it accepts,
//! the (language → target) pairs it compiles without a device
//! ([`offline`]) and the targets it loads on a device ([`load`]). Plugins
//! export one [`XrPluginRef`] root module listing the device systems and
//! build systems they provide; the host (`xr-host`) finds and loads them,
//! the store (`xr-store`) keeps what they build, and `xr-plugin-kit` holds
//! the helpers plugins share.
//!
//! Plugins implement the plain traits of [`backend`] rather than the ABI
//! traits, and put them behind the ABI with [`Guarded`], which catches
//! every panic at the boundary.
//!
//! # The ABI rule
//!
//! Everything that crosses the plugin boundary is declared in this crate
//! and `xr-device` with `#[derive(StableAbi)]`, and abi_stable compares the
//! layouts when a plugin loads. A change to any of those types — a field
//! added, removed, reordered or retyped; a variant added to an ABI enum; a
//! method added to a `#[sabi_trait]` before its `last_prefix_field` — is a
//! new interface: bump this crate's minor version (0.x) so that plugins built
//! against the old one are refused with a clear reason. Adding a method after
//! the `last_prefix_field` of a trait (and moving the marker to it) keeps
//! old plugins loadable; the host must then handle the method being absent.
//! Targets and languages are names, not ABI: a new compiler or language
//! needs no interface change.

#![deny(missing_docs)]

pub mod availability;
pub mod backend;
pub mod constants;
pub mod diagnostics;
pub mod load;
pub mod offline;
pub mod plugin;
pub mod source;
pub mod system;

pub use availability::Availability;
pub use backend::{
    AttachedBuildSystemBackend, ConstantTableBackend, SourceBuildSystemBackend, attached_box, constant_table_box,
    guard_setter,
};
pub use constants::{
    ConstantData, ConstantHandle, ConstantInfo, ConstantSet, ConstantTable, ConstantTable_TO, ConstantTableBox,
    ConstantTableExt, ConstantType, ConstantValue, FloatSetter, MemberLayout, RESOURCE_HANDLE, ResolvedSetter,
    ResourceInfo, ScalarKind, SetStatus, Setter, ThroughPipeline, check_binding,
};
pub use diagnostics::{BuildError, Diagnostic, IncludeSite, Severity, guard_build};
pub use load::{ArtifactLoad, LoadPath, LoadedArtifact, OverrideKind, OverrideValue, TargetLoad};
pub use offline::{
    CompileOption, CompilePair, FileRead, LanguageInfo, OfflineArtifact, OfflineRequest, OptionDecl, OptionValue,
    ProgramReflection, ReflectedConstant, ReflectedOverride, ReflectedResource, StageOutput,
};
pub use plugin::{INTERFACE_VERSION, XrPlugin, XrPluginRef};
pub use source::{Define, EntryPoint, ProgramDesc, ShaderStage, SourceDesc, Specialization, VirtualFile};
pub use system::{
    AttachedBuildSystem, AttachedBuildSystem_TO, AttachedBuildSystemBox, BuildOptions, BuildSystemInfo, BuiltProgram,
    ProgramBinary, SourceBuildSystem, SourceBuildSystem_TO, SourceBuildSystemBox,
};
pub use xr_device;
pub use xr_device::Guarded;
