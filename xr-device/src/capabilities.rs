//! What a live device reports about itself.

use abi_stable::{
    StableAbi,
    std_types::{RStr, RString, RVec},
};

/// The kind of device a device system opens and a build system attaches to:
/// a name its device plugin chooses (`opengl`, `vulkan`, or a kind of its
/// own), with the API's name for people. The host compares and shows kinds
/// and never interprets one: a device plugin brings a new kind, and the
/// build systems that name it attach to it, with no change to the host.
/// Two kinds are the same kind when their names are equal.
///
/// The names are `'static`: a kind is a constant of the plugin that
/// declares it, and a loaded plugin library is never unloaded.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug)]
pub struct DeviceKind {
    name: RStr<'static>,
    api_name: RStr<'static>,
}

impl DeviceKind {
    /// OpenGL 4.x devices (`xr-rhi-opengl`).
    pub const OPENGL: DeviceKind = DeviceKind::new("opengl", "OpenGL");
    /// Vulkan 1.x devices (`xr-rhi-vulkan`).
    pub const VULKAN: DeviceKind = DeviceKind::new("vulkan", "Vulkan");

    /// The kind named `name` (lowercase, as the command line and JSON show
    /// it), whose API people call `api_name`.
    pub const fn new(name: &'static str, api_name: &'static str) -> Self {
        Self { name: RStr::from_str(name), api_name: RStr::from_str(api_name) }
    }

    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        self.name.as_str()
    }

    /// The API's own name, for people: `OpenGL`, `Vulkan`.
    pub fn api_name(self) -> &'static str {
        self.api_name.as_str()
    }
}

impl PartialEq for DeviceKind {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for DeviceKind {}

impl std::hash::Hash for DeviceKind {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name().hash(state);
    }
}

impl std::fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One count a device keeps of the work done on it (`Device::counters`):
/// on Vulkan, `pipelines` and `shader objects` made by its build systems.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct DeviceCounter {
    /// What it counts.
    pub name: abi_stable::std_types::RString,
    /// How many since the device was opened.
    pub value: u64,
}

/// Capabilities of an opened device, read from the live driver.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct DeviceCapabilities {
    /// Which API the device speaks.
    pub kind: DeviceKind,
    /// API major version (4 for OpenGL 4.5).
    pub api_major: u32,
    /// API minor version (5 for OpenGL 4.5).
    pub api_minor: u32,
    /// Driver vendor string (`GL_VENDOR`).
    pub vendor: RString,
    /// Renderer string (`GL_RENDERER`), e.g. `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub renderer: RString,
    /// Full driver version string (`GL_VERSION`).
    pub driver_version: RString,
    /// Shading language version (`GL_SHADING_LANGUAGE_VERSION`).
    pub shading_language_version: RString,
    /// Every extension the device reports, sorted.
    pub extensions: RVec<RString>,
    /// Program binary formats (`GL_PROGRAM_BINARY_FORMATS`); empty where the
    /// driver cannot give program binaries back.
    pub program_binary_formats: RVec<u32>,
    /// `GL_ARB_gl_spirv` (or core 4.6): SPIR-V shaders can be loaded.
    pub gl_spirv: bool,
    /// `GL_ARB_separate_shader_objects` (or core 4.1): program pipelines.
    pub separate_shader_objects: bool,
    /// Vulkan `pipelineCacheUUID` (zeros on OpenGL).
    pub pipeline_cache_uuid: [u8; 16],
    /// Vulkan vendor id, device id and driver version (zeros on OpenGL).
    pub vendor_id: u32,
    /// Vulkan device id.
    pub device_id: u32,
    /// Vulkan driver version, as the driver encodes it.
    pub driver_version_code: u32,
    /// Vulkan device type: `cpu`, `integrated-gpu`, `discrete-gpu`, … (empty on OpenGL).
    pub device_type: RString,
}

impl DeviceCapabilities {
    /// Whether the device reports `extension`.
    pub fn has_extension(&self, extension: &str) -> bool {
        self.extensions.iter().any(|e| e.as_str() == extension)
    }

    /// Whether the API version is at least `major.minor`.
    pub fn at_least(&self, major: u32, minor: u32) -> bool {
        (self.api_major, self.api_minor) >= (major, minor)
    }
}
