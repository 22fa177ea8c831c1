//! The SourceBuildSystem contract of XR, the plugin ABI and the registry.
//!
//! A *source build system* (seed 003's `XRSourceBuildSystem`) builds shader
//! source into the form a device runs, or the form just before it. It
//! advertises [`Availability`] flags, the device kinds it attaches to, and
//! the languages and stages it accepts. Plugins export one [`XrPluginRef`]
//! root module listing the device systems and build systems they provide;
//! the [`Registry`] finds and loads them.

pub mod availability;
pub mod constants;
pub mod diagnostics;
pub mod includes;
pub mod plugin;
pub mod program_cache;
pub mod registry;
pub mod source;
pub mod store;
pub mod system;

pub use availability::Availability;
pub use constants::{
    ConstantData, ConstantHandle, ConstantInfo, ConstantTable, ConstantTable_TO, ConstantTableBox, ConstantTableExt,
    ConstantType, ConstantValue, MemberLayout, ScalarKind, ThroughPipeline,
};
pub use diagnostics::{BuildError, Diagnostic, Severity, guard_build};
pub use plugin::{XrPlugin, XrPluginRef};
pub use program_cache::{
    DriverIdentity, LoadPath, LoadReport, ProgramCache, decode_binary_record, encode_binary_record,
    vulkan_pipeline_cache_key,
};
pub use registry::{AttachedDevice, LoadedPlugin, Registry, RegistryError, SkippedFile};
pub use source::{Define, ProgramDesc, ShaderStage, SourceDesc, SourceLanguage, Specialization, VirtualFile};
pub use store::{ObjectKey, Store, StoreError};
pub use system::{
    AttachedBuildSystem, AttachedBuildSystem_TO, AttachedBuildSystemBox, BuildOptions, BuildSystemInfo, BuiltProgram,
    ProgramBinary, SourceBuildSystem, SourceBuildSystem_TO, SourceBuildSystemBox,
};
pub use xr_device;
