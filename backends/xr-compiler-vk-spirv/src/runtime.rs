//! The Vulkan SPIR-V build system attached to one Vulkan device.
//!
//! This module holds the build system, its opening and its
//! [`AttachedBuildSystemBackend`] calls; the checks a program passes before
//! a driver sees it are in `checks`, making a program's objects on the
//! device and registering it with the device in `create`.

mod checks;
mod create;

use crate::{
    capabilities,
    counter::Counter,
    layout,
    pipeline_cache::PersistentCache,
    pipelines::{DrawState, GraphicsPipelines},
    ray_tracing::RayTracingDevice,
    shader_binaries::ShaderBinaryCache,
    shader_objects::{Code, ShaderObjectDevice},
};
use ash::vk::{self, Handle};
use std::{
    collections::{BTreeSet, HashMap},
    sync::{Arc, Mutex, Weak},
};
use xr_device::{DeviceCapabilities, DeviceCounter, ProgramRef, VulkanLoader, XrError};
use xr_plugin_kit::SourceBundle;
use xr_sourcebuild::{
    ArtifactLoad, AttachedBuildSystemBackend, Availability, BuildError, BuildOptions, BuiltProgram, LoadPath,
    LoadedArtifact, ProgramBinary, ProgramDesc, ShaderStage, Specialization,
};
use xr_spirv::{
    LazyCompiler, SpirvOptions, TargetEnv,
    container::{self, StageModule},
};
use xr_store::Store;

/// The Vulkan SPIR-V build system on one device.
pub struct AttachedVkSpirv {
    loader: VulkanLoader,
    capabilities: DeviceCapabilities,
    device: ash::Device,
    memory: vk::PhysicalDeviceMemoryProperties,
    /// The device's descriptor limits, checked before a layout is made.
    limits: vk::PhysicalDeviceLimits,
    /// What the device has, by the names of the registry's SPIR-V
    /// environment table, checked against every capability and extension a
    /// module declares (the device system enables every feature it has).
    offer: capabilities::DeviceOffer,
    /// Its Vulkan 1.2 features that XR's layouts need (descriptor indexing).
    vulkan12: Vulkan12Features,
    /// What it takes of mesh and task stages, where it has them.
    mesh_limits: Option<crate::mesh::MeshLimits>,
    /// Ray tracing pipelines' functions and numbers, where the device has them.
    ray_tracing: Option<RayTracingDevice>,
    compiler: LazyCompiler,
    cache: PersistentCache,
    /// Each registered program's stage modules, for `program_binary`.
    modules: HashMap<u32, Vec<StageModule>>,
    /// Shader objects, where the device enabled them: graphics programs
    /// are made of them instead of pipelines.
    shader_objects: Option<ShaderObjectDevice>,
    /// The driver's shader binaries, once a store is given (`set_store`)
    /// on a device with shader objects.
    binaries: Option<ShaderBinaryCache>,
    /// Where the pipelines and shader objects made are counted.
    counter: Counter,
    /// Each graphics program's draw states (the formats its pipelines
    /// were made for at draws), kept after the program is gone: a usage
    /// log asks when the engine is done.
    drawn: HashMap<u32, Arc<Mutex<BTreeSet<DrawState>>>>,
    /// Each live graphics program's pipelines, for a warm, and to wait
    /// for the pipelines they compile on other threads before the cache goes.
    graphics: HashMap<u32, Weak<GraphicsPipelines>>,
    /// The device enabled graphics pipeline libraries: each graphics
    /// program's stages are made as libraries at load, and a pipeline for
    /// new formats is linked from them at once.
    pipeline_libraries: bool,
}

/// A program made on the device, and its stages' binaries where asked for
/// (the driver's answer, or why there are none).
struct Created {
    program: BuiltProgram,
    binaries: Option<Result<Vec<Vec<u8>>, XrError>>,
}

/// The Vulkan 1.2 features a module's capabilities or XR's layouts need,
/// copied out of the driver's answer (whose struct holds a chain pointer).
#[derive(Clone, Copy, Debug)]
struct Vulkan12Features {
    runtime_descriptor_array: vk::Bool32,
    partially_bound: vk::Bool32,
}

impl From<&vk::PhysicalDeviceVulkan12Features<'_>> for Vulkan12Features {
    fn from(f: &vk::PhysicalDeviceVulkan12Features<'_>) -> Self {
        Self {
            runtime_descriptor_array: f.runtime_descriptor_array,
            partially_bound: f.descriptor_binding_partially_bound,
        }
    }
}

impl AttachedVkSpirv {
    /// Loads the instance and device functions through the device's loader.
    pub fn new(loader: VulkanLoader, capabilities: &DeviceCapabilities) -> Result<Self, XrError> {
        // SAFETY: `is_open` takes any context (the device system looks it up
        // among its open devices, never dereferencing it).
        if !unsafe { (loader.is_open)(loader.context) } {
            return Err(XrError::unavailable("the Vulkan device is closed"));
        }
        let context = loader.context;
        let get = loader.get_instance_proc_addr;
        let enabled_extensions = if loader.enabled_extensions.is_null() {
            Vec::new()
        } else {
            // SAFETY: the device keeps the NUL-terminated list alive while it is open (checked above).
            let list = unsafe { std::ffi::CStr::from_ptr(loader.enabled_extensions) };
            list.to_string_lossy().split_whitespace().map(str::to_owned).collect()
        };
        // SAFETY: the handles are a live instance and device; names are NUL-terminated.
        let (device, memory, limits, offer, vulkan12, mesh_limits, ray_tracing, shader_objects) = unsafe {
            let instance = ash::Instance::load_with(
                |name| get(context, loader.instance, name.as_ptr()),
                vk::Instance::from_raw(loader.instance),
            );
            let device = ash::Device::load(instance.fp_v1_0(), vk::Device::from_raw(loader.device));
            let physical = vk::PhysicalDevice::from_raw(loader.physical_device);
            let memory = instance.get_physical_device_memory_properties(physical);
            let properties = instance.get_physical_device_properties(physical);
            let limits = properties.limits;
            let mut vulkan12 = vk::PhysicalDeviceVulkan12Features::default();
            let mut query = vk::PhysicalDeviceFeatures2::default().push_next(&mut vulkan12);
            instance.get_physical_device_features2(physical, &mut query);
            // The device system's instance asks for Vulkan 1.3: what runs is the lower.
            let version = properties.api_version.min(vk::API_VERSION_1_3);
            let mut offer = capabilities::DeviceOffer {
                version: (vk::api_version_major(version), vk::api_version_minor(version)),
                extensions: enabled_extensions.clone(),
                ..capabilities::DeviceOffer::default()
            };
            offer.features = capabilities::read_features(&instance, physical, &offer);
            offer.properties = capabilities::read_properties(&instance, physical);
            let mesh_limits = enabled_extensions
                .iter()
                .any(|e| e == "VK_EXT_mesh_shader")
                .then(|| crate::mesh::MeshLimits::read(&instance, physical));
            let ray_tracing = enabled_extensions
                .iter()
                .any(|e| e == "VK_KHR_ray_tracing_pipeline")
                .then(|| RayTracingDevice::load(&instance, physical, &device));
            let shader_objects = enabled_extensions
                .iter()
                .any(|e| e == "VK_EXT_shader_object")
                .then(|| ShaderObjectDevice::load(&instance, physical, &device));
            let vulkan12 = Vulkan12Features::from(&vulkan12);
            (device, memory, limits, offer, vulkan12, mesh_limits, ray_tracing, shader_objects)
        };
        let cache = PersistentCache::empty(&device)?;
        let pipeline_libraries = enabled_extensions.iter().any(|e| e == "VK_EXT_graphics_pipeline_library");
        Ok(Self {
            loader,
            capabilities: capabilities.clone(),
            device,
            memory,
            limits,
            offer,
            vulkan12,
            mesh_limits,
            ray_tracing,
            compiler: LazyCompiler::default(),
            cache,
            modules: HashMap::new(),
            shader_objects,
            binaries: None,
            counter: Counter::new(loader.created),
            drawn: HashMap::new(),
            graphics: HashMap::new(),
            pipeline_libraries,
        })
    }

    fn compile(&self, desc: &ProgramDesc) -> Result<Vec<StageModule>, BuildError> {
        let context = format!("program '{}'", desc.name);
        let stages: Vec<ShaderStage> = desc.stages.iter().map(|s| s.stage).collect();
        layout::check_stages(&context, &stages)?;
        // Vulkan 1.0, as offline builds default to; mesh stages raise it to what they need.
        let options = SpirvOptions::new(TargetEnv::Vulkan10).for_stages(&stages)?;
        let mut modules = self.compiler.get()?.compile_program(desc, &options)?.modules;
        xr_spirv::finish_program(&mut modules, options.target)?;
        Ok(modules)
    }

    /// The validation rules of the device's Vulkan version.
    fn device_env(&self) -> TargetEnv {
        match (self.capabilities.api_major, self.capabilities.api_minor) {
            (1, 0) => TargetEnv::Vulkan10,
            (1, 1) => TargetEnv::Vulkan11,
            (1, 2) => TargetEnv::Vulkan12,
            _ => TargetEnv::Vulkan13,
        }
    }

    /// An error once the device this build system attached to is closed:
    /// its handles are gone, and a call through them would crash the driver.
    fn device_open(&self, context: &str) -> Result<(), XrError> {
        // SAFETY: as in `new`: `is_open` takes any context; a closed device answers false.
        if unsafe { (self.loader.is_open)(self.loader.context) } {
            Ok(())
        } else {
            Err(XrError::unavailable(format!("{context}: the Vulkan device this build system attached to is closed")))
        }
    }
}

impl AttachedBuildSystemBackend for AttachedVkSpirv {
    /// Device binaries (offline compiles kept by the driver) where the
    /// device has shader objects, as the GL build system's follow program
    /// binary formats.
    fn availability(&self) -> Result<Availability, XrError> {
        let offline = if self.shader_objects.is_some() { Availability::OFFLINE_COMPILE } else { Availability::NONE };
        Ok(Availability::RUNTIME_COMPILE | Availability::COMPATIBLE_OBJECT | offline)
    }

    fn build_program(&mut self, desc: &ProgramDesc, _options: &BuildOptions) -> Result<BuiltProgram, BuildError> {
        let modules = self.compile(desc)?;
        self.create(desc, modules)
    }

    fn content_key(&self, desc: &ProgramDesc, _options: &BuildOptions) -> Result<Vec<u8>, BuildError> {
        let modules = self.compile(desc)?;
        Ok(container::content_key(crate::NAME, env!("CARGO_PKG_VERSION"), &[], &modules))
    }

    fn program_binary(&self, program: ProgramRef) -> Result<ProgramBinary, XrError> {
        container::object_of(&self.modules, program)
    }

    fn load_program_binary(
        &mut self,
        desc: &ProgramDesc,
        _options: &BuildOptions,
        binary: &ProgramBinary,
    ) -> Result<BuiltProgram, BuildError> {
        let modules = container::from_object(binary, &format!("program '{}'", desc.name), crate::NAME)?;
        self.create(desc, modules)
    }

    fn create_pipeline(&mut self, _programs: &[ProgramRef]) -> Result<ProgramRef, XrError> {
        Err(XrError::invalid_input(
            "program pipelines are an OpenGL object: a Vulkan program already is a whole pipeline of its stages",
        ))
    }

    fn set_store(&mut self, root: &str) -> Result<(), XrError> {
        let store = Store::open(root).map_err(|e| XrError::new(xr_device::ErrorKind::Io, e.to_string()))?;
        self.device_open("the pipeline cache")?;
        // The cache is replaced: nothing may be compiling through it.
        self.join_background();
        if let Some(shader_objects) = &self.shader_objects {
            self.binaries = Some(ShaderBinaryCache::new(store.clone(), &self.capabilities, shader_objects.identity));
        }
        self.cache.load(&self.device, store, &self.capabilities)
    }

    fn load_artifact(&mut self, request: &ArtifactLoad) -> Result<LoadedArtifact, BuildError> {
        xr_spirv::offline::check_load(request, crate::NAME, &crate::LOADS)?;
        let context = format!("program '{}'", request.name);
        let desc = ProgramDesc::new(request.name.as_str(), []);
        match request.path {
            LoadPath::DeviceBinary => return self.load_device_binary(request, &desc, &context),
            LoadPath::CompatibleObject => return self.load_compatible_object(request, &desc, &context),
            LoadPath::Source => {}
        }
        // Stored sources, compiled for Vulkan here, overrides as specialization constants.
        let bundle =
            SourceBundle::decode(&request.artifact).map_err(|e| XrError::invalid_input(format!("{context}: {e}")))?;
        let mut desc = bundle
            .program(xr_spirv::LANGUAGE_GLSL, &request.name, &[])
            .map_err(|e| XrError::invalid_input(format!("{context}: {e}")))?;
        for stage in desc.stages.iter_mut() {
            for value in request.overrides.iter() {
                stage.specializations.retain(|s| s.id != value.id);
                stage.specializations.push(Specialization { id: value.id, bits: value.bits });
            }
        }
        let modules = self.compile(&desc)?;
        let program = self.create(&desc, modules)?;
        Ok(LoadedArtifact { program, note: "built from the stored sources".into() })
    }

    fn draw_states(&self, program: ProgramRef) -> Result<Vec<String>, XrError> {
        let Some(drawn) = self.drawn.get(&program.name) else { return Ok(Vec::new()) };
        let drawn = drawn.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(drawn.iter().map(DrawState::to_string).collect())
    }

    fn warm_draw_states(&mut self, program: ProgramRef, states: &[String]) -> Result<u32, XrError> {
        let states: Vec<DrawState> =
            states.iter().map(|s| s.parse()).collect::<Result<_, String>>().map_err(XrError::invalid_input)?;
        // Shader objects, compute and ray tracing programs make nothing at a draw.
        match self.graphics.get(&program.name).and_then(Weak::upgrade) {
            Some(pipelines) => {
                self.device_open("a warm")?;
                pipelines.warm(&states)
            }
            None => Ok(0),
        }
    }

    fn counters(&self) -> Result<Vec<DeviceCounter>, XrError> {
        Ok(self.counter.counters())
    }
}

impl AttachedVkSpirv {
    /// Loads a program from the driver's binaries of its stages, stored by
    /// an earlier load: an error saying why where there are none this
    /// driver takes (the library then loads the SPIR-V object).
    fn load_device_binary(
        &mut self,
        request: &ArtifactLoad,
        desc: &ProgramDesc,
        context: &str,
    ) -> Result<LoadedArtifact, BuildError> {
        if self.shader_objects.is_none() {
            return Err(XrError::unavailable(format!(
                "this device ({}) gives no shader binaries back (no VK_EXT_shader_object)",
                self.capabilities.renderer
            ))
            .into());
        }
        let cache = self
            .binaries
            .as_ref()
            .ok_or_else(|| XrError::unavailable("no store was given to keep shader binaries in"))?;
        let key = cache.key(request);
        let binaries = match cache.load(&key) {
            Ok(Some(binaries)) => binaries,
            Ok(None) => return Err(XrError::unavailable("no shader binary of this driver yet").into()),
            Err(why) => return Err(XrError::driver(why).into()),
        };
        // The SPIR-V still gives the layouts and the constant table.
        let modules = xr_spirv::offline::specialized_modules(&request.artifact, &request.overrides, context)?;
        let created = self.create_from(desc, modules, Code::Binary(&binaries), false)?;
        tracing::info!(program = request.name.as_str(), %key, "loaded the stored shader binaries");
        Ok(LoadedArtifact { program: created.program, note: "the driver's stored shader binaries".into() })
    }

    /// Loads a program from its SPIR-V object; on a device with shader
    /// objects and a store, the driver's binaries of its stages are
    /// written back for the next load.
    fn load_compatible_object(
        &mut self,
        request: &ArtifactLoad,
        desc: &ProgramDesc,
        context: &str,
    ) -> Result<LoadedArtifact, BuildError> {
        let modules = xr_spirv::offline::specialized_modules(&request.artifact, &request.overrides, context)?;
        let keep = self.binaries.is_some();
        let created = self.create_from(desc, modules, Code::Spirv, keep)?;
        let note = match (created.binaries, &self.binaries) {
            (Some(Ok(binaries)), Some(cache)) => match cache.write(&cache.key(request), &request.name, &binaries) {
                Ok(_) => "shader binaries written back to the store".to_owned(),
                Err(e) => {
                    tracing::warn!(program = request.name.as_str(), "shader binaries not stored: {e}");
                    format!("shader binaries not stored: {e}")
                }
            },
            (Some(Err(e)), _) => format!("the driver gave no shader binaries back: {e}"),
            _ => String::new(),
        };
        Ok(LoadedArtifact { program: created.program, note: note.into() })
    }
}

impl AttachedVkSpirv {
    /// Waits for the pipelines every live program compiles on other threads.
    fn join_background(&self) {
        for pipelines in self.graphics.values().filter_map(Weak::upgrade) {
            pipelines.join();
        }
    }
}

impl Drop for AttachedVkSpirv {
    fn drop(&mut self) {
        // Threads compile through the cache closed below.
        self.join_background();
        // SAFETY: as in `new`: `is_open` takes any context, and a closed
        // device answers false, so the cache is only closed on a live device.
        if unsafe { (self.loader.is_open)(self.loader.context) } {
            self.cache.close(&self.device);
        }
    }
}
