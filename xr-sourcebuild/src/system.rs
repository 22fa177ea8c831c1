//! The plugin-facing traits: a source build system, attached to a device.

// `#[sabi_trait]` expands to impls inside a const block.
#![allow(non_local_definitions)]

use crate::{
    availability::Availability,
    constants::ConstantTableBox,
    diagnostics::{BuildError, Diagnostic},
    load::{ArtifactLoad, LoadedArtifact, TargetLoad},
    offline::{CompilePair, LanguageInfo, OfflineArtifact, OfflineRequest},
    source::{EntryPoint, ProgramDesc, ShaderStage, SourceDesc},
};
use abi_stable::{
    StableAbi, sabi_trait,
    std_types::{RBox, RResult, RSlice, RStr, RString, RVec},
};
use xr_device::{DeviceCapabilities, DeviceCounter, DeviceKind, NativeHandles, ProgramRef, XrResult};

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
    /// Source languages it accepts, with their file extensions.
    pub languages: RVec<LanguageInfo>,
    /// Stages it builds.
    pub stages: RVec<ShaderStage>,
    /// Higher wins when an engine asks for the best system for a job, and
    /// when two build systems compile the same (language → target) pair.
    pub priority: i32,
    /// What changes its offline output besides the request: its version and
    /// the compilers it links. Part of every offline build's key.
    pub compiler_identity: RString,
    /// The (language → target) pairs [`SourceBuildSystem::compile_offline`]
    /// compiles without a device (empty: it has no offline compile).
    pub compiles: RVec<CompilePair>,
    /// The targets [`AttachedBuildSystem::load_artifact`] loads on a device
    /// it attaches to, each with its load path.
    pub loads: RVec<TargetLoad>,
}

impl BuildSystemInfo {
    /// `name` with `availability` and nothing else yet: no device kinds,
    /// languages, stages, pairs or loads, priority 0, and its name as its
    /// compiler identity. Fill in the rest with struct update syntax.
    pub fn new(name: &str, description: &str, availability: Availability) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            availability,
            attachable: RVec::new(),
            languages: RVec::new(),
            stages: RVec::new(),
            priority: 0,
            compiler_identity: name.into(),
            compiles: RVec::new(),
            loads: RVec::new(),
        }
    }

    /// Whether it accepts the language `name`.
    pub fn accepts(&self, language: &str) -> bool {
        self.languages.iter().any(|l| l.name == language)
    }

    /// Whether it compiles `language` into `target` without a device.
    pub fn compiles_pair(&self, language: &str, target: &str) -> bool {
        self.compiles.iter().any(|p| p.language == language && p.target == target)
    }

    /// Whether it compiles every one of `stages` of `language` into `target`
    /// (a pair that names no stages compiles the build system's; one that
    /// names none at all refuses none, as a manifest's checks take it).
    pub fn compiles_stages(&self, language: &str, target: &str, stages: &[crate::ShaderStage]) -> bool {
        self.compiles.iter().filter(|p| p.language == language && p.target == target).any(|pair| {
            let takes = if pair.stages.is_empty() { &self.stages } else { &pair.stages };
            takes.is_empty() || stages.iter().all(|s| takes.contains(s))
        })
    }
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

/// How to build a program.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct BuildOptions {
    /// Build a separable program (`GL_PROGRAM_SEPARABLE`), to be combined
    /// with other stages' programs in a program pipeline.
    pub separable: bool,
    /// Ask the driver to keep the program binary retrievable
    /// (`GL_PROGRAM_BINARY_RETRIEVABLE_HINT`).
    pub retrievable: bool,
}

/// A device-specific program binary (`glGetProgramBinary`).
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct ProgramBinary {
    /// The driver's binary format id.
    pub format: u32,
    /// The binary.
    pub bytes: RVec<u8>,
}

/// A source build system: builds shader source for the devices it attaches
/// to, and (with `OfflineCompile`) into stored artifacts without a device.
///
/// Shared between threads: `xr build` calls [`compile_offline`]
/// (SourceBuildSystem::compile_offline) from every worker at once.
#[sabi_trait]
pub trait SourceBuildSystem: Send + Sync {
    /// Name, flags, attachable kinds, languages, stages, pairs and loads.
    fn info(&self) -> XrResult<BuildSystemInfo>;

    /// Attaches to a live device through its native handles.
    fn attach(&self, handles: &NativeHandles, capabilities: &DeviceCapabilities) -> XrResult<AttachedBuildSystemBox>;

    /// Compiles a program into an artifact of `request.target` without a
    /// device: the bytes to store, the files read, warnings and reflection.
    /// Errors name the user's file and line.
    #[sabi(last_prefix_field)]
    fn compile_offline(&self, request: &OfflineRequest) -> RResult<OfflineArtifact, BuildError>;

    /// The entry points `source` declares itself, in the order written
    /// (Slang's `[shader("fragment")]`), so that `xr compile a.slang` builds
    /// a file without being told its stages. Empty for a language whose
    /// stages are named from outside (GLSL, HLSL), and from a plugin built
    /// before this method existed. Errors name the file and line.
    fn entry_points(&self, source: &SourceDesc) -> RResult<RVec<EntryPoint>, BuildError> {
        let _ = source;
        RResult::ROk(RVec::new())
    }

    /// [`SourceBuildSystem::compile_offline`] for the store (`xr build`),
    /// which keeps the artifact's bytes, the files read and the warnings
    /// only: a build system may leave the reflection and the stage outputs
    /// empty, and skip the work of making them. A plugin built before this
    /// method existed compiles in full.
    fn compile_for_store(&self, request: &OfflineRequest) -> RResult<OfflineArtifact, BuildError> {
        self.compile_offline(request)
    }
}

/// A build system attached to one live device (same thread as the device).
#[sabi_trait]
pub trait AttachedBuildSystem {
    /// What this instance can do on this device: may be less than the plugin's flags.
    fn availability(&self) -> XrResult<Availability>;

    /// Builds a program from source on the device.
    fn build_program(&mut self, desc: &ProgramDesc, options: &BuildOptions) -> RResult<BuiltProgram, BuildError>;

    /// A hash of every input that changes the program's bytes: the sources
    /// with their includes flattened, defines, stages, entry points, and the
    /// build system's identity and version. Fails where the sources do
    /// (a missing include).
    fn content_key(&self, desc: &ProgramDesc, options: &BuildOptions) -> RResult<RVec<u8>, BuildError>;

    /// Reads a program's binary back (`glGetProgramBinary`); the program
    /// must have been built with `retrievable`.
    fn program_binary(&self, program: ProgramRef) -> XrResult<ProgramBinary>;

    /// Loads a program from a binary (`glProgramBinary`) and checks that the
    /// driver accepted it; fails with [`xr_device::ErrorKind::Driver`] when
    /// the driver refuses it, so the caller can build from source instead.
    fn load_program_binary(
        &mut self,
        desc: &ProgramDesc,
        options: &BuildOptions,
        binary: &ProgramBinary,
    ) -> RResult<BuiltProgram, BuildError>;

    /// Combines separable stage programs into a program pipeline, validated
    /// (`glValidateProgramPipeline`) before it is returned: a pipeline whose
    /// stages' interfaces do not match is an error naming its stages.
    /// The pipeline lives as long as this attached build system.
    fn create_pipeline(&mut self, programs: RSlice<'_, ProgramRef>) -> XrResult<ProgramRef>;

    /// Where to keep the build system's own device caches (the Vulkan
    /// pipeline cache, loaded now and saved when the attached build system
    /// is dropped while its device is open). Build systems that keep none
    /// accept and ignore it: GL program binaries are kept by the host's
    /// `ProgramCache`.
    fn set_store(&mut self, root: RStr<'_>) -> XrResult<()>;

    /// Loads a stored artifact of a target this build system declared in
    /// [`BuildSystemInfo::loads`], by the path asked for, applying the
    /// override values itself. Fails (with [`xr_device::ErrorKind::Unavailable`]
    /// for a device binary not made yet) so that the caller takes the next path.
    #[sabi(last_prefix_field)]
    fn load_artifact(&mut self, request: &ArtifactLoad) -> RResult<LoadedArtifact, BuildError>;

    /// The draw states `program` had device objects made for at draw time
    /// (a Vulkan pipeline per set of attachment formats), each named as
    /// [`AttachedBuildSystem::warm_draw_states`] takes it back: what a
    /// usage log records so that a warm makes them before the first frame.
    /// Empty where draws make nothing, and from a plugin built before this
    /// method existed.
    fn draw_states(&self, program: ProgramRef) -> XrResult<RVec<RString>> {
        let _ = program;
        XrResult::ROk(RVec::new())
    }

    /// Makes `program`'s device objects for `states` (names from
    /// [`AttachedBuildSystem::draw_states`], of this build system or one
    /// like it) now, into the build system's caches, so that draws in
    /// those states make nothing; how many it made. A name it cannot read
    /// is an error naming it. A plugin built before this method existed
    /// makes nothing.
    fn warm_draw_states(&mut self, program: ProgramRef, states: RSlice<'_, RString>) -> XrResult<u32> {
        let _ = (program, states);
        XrResult::ROk(0)
    }

    /// What this instance has made since it attached, by how it made it
    /// (`pipelines compiled`, `pipelines from the pipeline cache`,
    /// `programs linked from source`, …): what shows whether loads and
    /// draws compiled anything. Empty from a plugin built before this
    /// method existed.
    fn counters(&self) -> XrResult<RVec<DeviceCounter>> {
        XrResult::ROk(RVec::new())
    }
}

/// A build system behind the ABI.
pub type SourceBuildSystemBox = SourceBuildSystem_TO<'static, RBox<()>>;
/// An attached build system behind the ABI.
pub type AttachedBuildSystemBox = AttachedBuildSystem_TO<'static, RBox<()>>;
