//! Loading a stored artifact on a device, through the build system
//! attached to it.
//!
//! A build system declares the targets it loads and by which path
//! ([`TargetLoad`]); the run-time library ranks what every attached loader
//! offers by [`LoadPath`] (device binary, then compatible object, then
//! source) and hands the stored bytes to [`AttachedBuildSystem::load_artifact`]
//! (crate::AttachedBuildSystem::load_artifact), which applies the override
//! values itself: as specialization constants, or as defines for a source.

use crate::system::BuiltProgram;
use abi_stable::{
    StableAbi,
    std_types::{RString, RVec},
};
use std::fmt;

/// How a program reaches the device, best first.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LoadPath {
    /// A binary this driver made before, kept by the build system (a GL
    /// program binary): fastest, valid on one driver only.
    DeviceBinary,
    /// A compatible object (SPIR-V): portable, specialised and linked on load.
    CompatibleObject,
    /// Sources built on the device.
    Source,
}

impl LoadPath {
    /// Every path, best first.
    pub const ALL: [LoadPath; 3] = [LoadPath::DeviceBinary, LoadPath::CompatibleObject, LoadPath::Source];

    /// `device-binary`, `compatible-object` or `source`.
    pub fn name(self) -> &'static str {
        match self {
            LoadPath::DeviceBinary => "device-binary",
            LoadPath::CompatibleObject => "compatible-object",
            LoadPath::Source => "source",
        }
    }

    /// The path named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}

impl fmt::Display for LoadPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A target a build system loads once attached, and by which path.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq, Hash)]
pub struct TargetLoad {
    /// The target whose artifacts it reads.
    pub target: RString,
    /// The path that is.
    pub path: LoadPath,
}

impl TargetLoad {
    /// `target` loaded by `path`.
    pub fn new(target: &str, path: LoadPath) -> Self {
        Self { target: target.into(), path }
    }

    /// Each `(target, path)` of `loads`, in order: a build system's
    /// `BuildSystemInfo::loads`.
    pub fn list(loads: &[(&str, LoadPath)]) -> RVec<Self> {
        loads.iter().map(|(target, path)| Self::new(target, *path)).collect()
    }
}

/// The scalar type of an override value.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OverrideKind {
    /// `bool`: bits 0 or 1.
    Bool,
    /// `int`: an `i32`'s bits.
    Int,
    /// `uint`: a `u32`.
    UInt,
    /// `float`: an `f32`'s bits.
    Float,
}

impl OverrideKind {
    /// The value `bits` as a literal of the source languages (`1.5`, `-2`,
    /// `3u`, `true`), for build systems that apply overrides as defines.
    pub fn literal(self, bits: u32) -> String {
        match self {
            OverrideKind::Bool => (if bits != 0 { "true" } else { "false" }).to_owned(),
            OverrideKind::Int => (bits as i32).to_string(),
            OverrideKind::UInt => format!("{bits}u"),
            OverrideKind::Float => format!("{:?}", f32::from_bits(bits)),
        }
    }
}

/// An override's value at load time.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq, Hash)]
pub struct OverrideValue {
    /// Its name (the define's, for source targets).
    pub name: RString,
    /// Its id (the specialization constant's).
    pub id: u32,
    /// Its type.
    pub kind: OverrideKind,
    /// Its value's bits.
    pub bits: u32,
}

/// What the run-time library asks a loader to load.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct ArtifactLoad {
    /// The program's name, for messages and for keys the loader keeps
    /// (the library passes the variant's name: `lit[TINT=0,…]`).
    pub name: RString,
    /// The artifact's target: one the loader declared.
    pub target: RString,
    /// The path asked for: one the loader declared for the target.
    pub path: LoadPath,
    /// The stored artifact, as the offline compile made it.
    pub artifact: RVec<u8>,
    /// Every override with its value.
    pub overrides: RVec<OverrideValue>,
}

/// A loaded program, with a note for the log ("program binary written back").
#[repr(C)]
#[derive(StableAbi)]
pub struct LoadedArtifact {
    /// The program and its constant table.
    pub program: BuiltProgram,
    /// Empty, or what the loader did besides loading.
    pub note: RString,
}
