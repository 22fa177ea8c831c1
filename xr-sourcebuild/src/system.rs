//! The plugin-facing traits: a source build system, attached to a device.

// `#[sabi_trait]` expands to impls inside a const block.
#![allow(non_local_definitions)]

use crate::{
    availability::Availability,
    constants::ConstantTableBox,
    diagnostics::{BuildError, Diagnostic},
    source::{ProgramDesc, ShaderStage, SourceLanguage},
};
use abi_stable::{
    StableAbi, sabi_trait,
    std_types::{RBox, RResult, RString, RVec},
};
use xr_device::{DeviceCapabilities, DeviceKind, NativeHandles, ProgramRef, XrResult};

/// What a build system says about itself before it attaches.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct BuildSystemInfo {
    /// Unique name, e.g. `xr-compiler-glsl`.
    pub name: RString,
    /// One line for `xr plugins`.
    pub description: RString,
    /// What it can do on a device that has every feature it uses.
    pub availability: Availability,
    /// Device kinds it attaches to.
    pub attachable: RVec<DeviceKind>,
    /// Source languages it accepts.
    pub languages: RVec<SourceLanguage>,
    /// Stages it builds.
    pub stages: RVec<ShaderStage>,
    /// Higher wins when an engine asks for the best system for a job.
    pub priority: i32,
}

/// A program built on a device, with its constant table.
#[repr(C)]
#[derive(StableAbi)]
pub struct BuiltProgram {
    /// The program to draw with.
    pub program: ProgramRef,
    /// Its constants.
    pub constants: ConstantTableBox,
    /// Warnings the compiler and linker gave, mapped to user files.
    pub warnings: RVec<Diagnostic>,
}

/// A source build system: seed 003's `XRSourceBuildSystem`.
#[sabi_trait]
pub trait SourceBuildSystem {
    /// Name, flags, attachable kinds, languages and stages.
    fn info(&self) -> XrResult<BuildSystemInfo>;

    /// Attaches to a live device through its native handles.
    #[sabi(last_prefix_field)]
    fn attach(&self, handles: &NativeHandles, capabilities: &DeviceCapabilities) -> XrResult<AttachedBuildSystemBox>;
}

/// A build system attached to one live device (same thread as the device).
#[sabi_trait]
pub trait AttachedBuildSystem {
    /// What this instance can do on this device: may be less than the plugin's flags.
    fn availability(&self) -> XrResult<Availability>;

    /// Builds a program from source on the device.
    #[sabi(last_prefix_field)]
    fn build_program(&mut self, desc: &ProgramDesc) -> RResult<BuiltProgram, BuildError>;
}

/// A build system behind the ABI.
pub type SourceBuildSystemBox = SourceBuildSystem_TO<'static, RBox<()>>;
/// An attached build system behind the ABI.
pub type AttachedBuildSystemBox = AttachedBuildSystem_TO<'static, RBox<()>>;
