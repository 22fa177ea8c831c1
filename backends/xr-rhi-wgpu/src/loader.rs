//! `xr-compiler-wgpu`, the build system of wgpu devices. It loads the
//! `vk-spirv` objects the SPIR-V compilers store (a compatible object),
//! specialized with the load's override values and handed to the driver
//! as they are where the adapter takes passthrough shaders (wgpu on
//! Vulkan), through naga's SPIR-V front end where it does not (wgpu on
//! OpenGL). It also compiles GLSL and HLSL into the `wgsl` target offline
//! and loads that by the source path: naga's WGSL front end on the device,
//! the override values as pipeline constants. A program's layout comes
//! from its SPIR-V's reflection either way.

use crate::{
    constant_table::{Entry, Storage, WgpuConstantTable},
    context::{CONTEXT_HANDLE, Context},
    pipeline_cache::StoredPipelineCache,
    program::{Program, Resource, Stage, UniformBlock},
    wgsl,
};
use std::{borrow::Cow, sync::Arc};
use xr_device::{DeviceCapabilities, DeviceCounter, NativeHandles, ProgramRef, ResourceKind, XrError};
use xr_plugin::{attached_box, constant_table_box};
use xr_sourcebuild::{
    ArtifactLoad, AttachedBuildSystemBackend, AttachedBuildSystemBox, Availability, BuildError, BuildOptions,
    BuildSystemInfo, BuiltProgram, ConstantInfo, LoadPath, LoadedArtifact, OfflineArtifact, OfflineRequest,
    ProgramBinary, ProgramDesc, ResourceInfo, ShaderStage, SourceBuildSystemBackend, TargetLoad,
};
use xr_spirv::reflect::{Block, Reflection};

/// The build system's name.
pub const NAME: &str = "xr-compiler-wgpu";
/// The target whose objects it loads as they are: SPIR-V for Vulkan.
pub const TARGET: &str = "vk-spirv";
const LOADS: [(&str, LoadPath); 2] = [(TARGET, LoadPath::CompatibleObject), (wgsl::TARGET, LoadPath::Source)];
/// The stages wgpu has.
const STAGES: [ShaderStage; 3] = [ShaderStage::Vertex, ShaderStage::Fragment, ShaderStage::Compute];

/// The build system.
pub struct WgpuSpirvSystem;

impl SourceBuildSystemBackend for WgpuSpirvSystem {
    fn info(&self) -> Result<BuildSystemInfo, XrError> {
        // xr-spirv's pairs, whose compile is the first half of this one:
        // glslang reads the `#include`d files (SourceReach::INCLUDES).
        let mut compiles = xr_spirv::offline::compile_pairs(wgsl::TARGET, xr_spirv::TargetEnv::Vulkan10);
        for pair in compiles.iter_mut() {
            pair.stages = STAGES.to_vec().into();
        }
        Ok(BuildSystemInfo {
            attachable: vec![crate::WGPU, crate::WGPU_GL].into(),
            languages: xr_spirv::languages().into(),
            stages: STAGES.to_vec().into(),
            compiles,
            loads: TargetLoad::list(&LOADS),
            compiler_identity: xr_spirv::compiler_identity_of(NAME, concat!(env!("CARGO_PKG_VERSION"), " naga 30"))
                .into(),
            ..BuildSystemInfo::new(
                NAME,
                "wgpu programs: SPIR-V passed to the driver on Vulkan, through naga on OpenGL; GLSL and HLSL to WGSL through naga",
                Availability::OFFLINE_COMPILE | Availability::COMPATIBLE_OBJECT,
            )
        })
    }

    fn attach(
        &self,
        handles: &NativeHandles,
        _capabilities: &DeviceCapabilities,
    ) -> Result<AttachedBuildSystemBox, XrError> {
        let address = handles.named_handle(CONTEXT_HANDLE, NAME)?;
        let context = Context::from_handle(address).ok_or_else(|| {
            XrError::unavailable(format!(
                "{NAME} attaches to devices of its own library only: this one was opened by another copy of xr-rhi-wgpu, or is closed"
            ))
        })?;
        Ok(attached_box(AttachedWgpuSpirv { context, cache: None, loaded: [0; 3] }))
    }

    fn compile_offline(&self, request: &OfflineRequest) -> Result<OfflineArtifact, BuildError> {
        check_target(request)?;
        wgsl::compile(request, xr_spirv::offline::Reflect::Yes)
    }

    fn compile_for_store(&self, request: &OfflineRequest) -> Result<OfflineArtifact, BuildError> {
        check_target(request)?;
        wgsl::compile(request, xr_spirv::offline::Reflect::No)
    }
}

fn check_target(request: &OfflineRequest) -> Result<(), XrError> {
    if request.target == wgsl::TARGET {
        return Ok(());
    }
    Err(XrError::invalid_input(format!("{NAME} compiles into {}, not {}", wgsl::TARGET, request.target)))
}

/// The ways a program is loaded, as its counter and the load's note name them.
const HOW: [(&str, &str); 3] = [
    ("programs passed through", "SPIR-V passed through"),
    ("programs through naga", "SPIR-V through naga"),
    ("programs from WGSL", "WGSL through naga"),
];

/// The build system attached to one device.
struct AttachedWgpuSpirv {
    context: Arc<Context>,
    cache: Option<StoredPipelineCache>,
    /// Programs loaded by each of [`HOW`]'s ways.
    loaded: [u64; 3],
}

fn not_here(what: &str) -> XrError {
    XrError::unavailable(format!("{NAME} loads stored SPIR-V objects only: it has no {what}"))
}

/// A wgpu shader stage flag.
fn stage_flag(stage: ShaderStage) -> wgpu::ShaderStages {
    match stage {
        ShaderStage::Vertex => wgpu::ShaderStages::VERTEX,
        ShaderStage::Fragment => wgpu::ShaderStages::FRAGMENT,
        ShaderStage::Compute => wgpu::ShaderStages::COMPUTE,
        _ => wgpu::ShaderStages::NONE,
    }
}

/// What a program binds at one (set, binding), with the stages that read it.
struct Slot {
    set: u32,
    binding: u32,
    stages: wgpu::ShaderStages,
    kind: SlotKind,
}

enum SlotKind {
    /// A uniform block the program owns: (its size, its members).
    Uniform(Block),
    /// A resource the caller binds.
    Resource(ResourceInfo),
}

impl AttachedWgpuSpirv {
    /// Every (set, binding) of `reflections`, merged across stages; a
    /// resource wgpu cannot bind is an error naming it.
    fn slots(context: &str, stages: &[(ShaderStage, &Reflection)]) -> Result<Vec<Slot>, XrError> {
        let mut slots: Vec<Slot> = Vec::new();
        let mut add = |set: u32, binding: u32, stage: ShaderStage, kind: SlotKind| match slots
            .iter_mut()
            .find(|s| s.set == set && s.binding == binding)
        {
            Some(slot) => slot.stages |= stage_flag(stage),
            None => slots.push(Slot { set, binding, stages: stage_flag(stage), kind }),
        };
        for (stage, reflection) in stages {
            if let Some(first) = reflection.unsupported.first() {
                return Err(XrError::invalid_input(format!("{context}: {NAME} cannot bind {first:?}")));
            }
            if let Some(input) = reflection.input_attachments.first() {
                return Err(XrError::invalid_input(format!(
                    "{context}: input attachment '{}' has no wgpu counterpart: read the attachment as a texture",
                    input.name
                )));
            }
            for block in &reflection.uniform_blocks {
                Self::single(context, &block.name, block.count)?;
                add(block.set, block.binding, *stage, SlotKind::Uniform(block.clone()));
            }
            for block in &reflection.storage_buffers {
                Self::single(context, &block.name, block.count)?;
                let info = ResourceInfo {
                    name: block.name.as_str().into(),
                    kind: ResourceKind::StorageBuffer,
                    set: block.set,
                    binding: block.binding,
                    array_size: 1,
                    min_size: block.size.unwrap_or(0) as u64,
                };
                add(block.set, block.binding, *stage, SlotKind::Resource(info));
            }
            for image in &reflection.images {
                Self::single(context, &image.name, image.count)?;
                let kind = match image.kind {
                    "sampled image" => ResourceKind::SampledImage,
                    "sampler" => ResourceKind::Sampler,
                    "combined image sampler" => return Err(combined_sampler(context, &image.name)),
                    other => {
                        return Err(XrError::invalid_input(format!(
                            "{context}: '{}' is a {other}, which {NAME} does not bind yet",
                            image.name
                        )));
                    }
                };
                let info = ResourceInfo {
                    name: image.name.as_str().into(),
                    kind,
                    set: image.set,
                    binding: image.binding,
                    array_size: 1,
                    min_size: 0,
                };
                add(image.set, image.binding, *stage, SlotKind::Resource(info));
            }
        }
        slots.sort_by_key(|s| (s.set, s.binding));
        Ok(slots)
    }

    fn single(context: &str, name: &str, count: u32) -> Result<(), XrError> {
        if count == 1 {
            return Ok(());
        }
        Err(XrError::invalid_input(format!(
            "{context}: '{name}' is an array of resources, which {NAME} does not bind yet"
        )))
    }

    /// The shader module of one stage, its specialization written in.
    fn module(
        &mut self,
        label: &str,
        module: &xr_spirv::container::StageModule,
    ) -> Result<wgpu::ShaderModule, XrError> {
        let words = xr_spirv::specialize::bake_specializations(&module.words, &module.specializations)?;
        let device = &self.context.device;
        if self.context.passthrough() {
            let workgroup = xr_spirv::reflect::execution_mode(&module.words, spirv_local_size())?
                .and_then(|size| Some((*size.first()?, *size.get(1)?, *size.get(2)?)))
                .unwrap_or((1, 1, 1));
            let entry_points = [wgpu::PassthroughShaderEntryPoint {
                name: module.entry_point.as_str().into(),
                workgroup_size: workgroup,
            }];
            self.context.checked(&format!("{label}: passing SPIR-V to the driver"), || {
                // SAFETY: the words passed spirv-val when they were built
                // (the offline compile validates every object it stores)
                // and only the literals of specialization constants
                // changed since; the pipeline layout is made from the
                // module's own reflection.
                Ok(unsafe {
                    device.create_shader_module_passthrough(wgpu::ShaderModuleDescriptorPassthrough {
                        label: Some(label),
                        entry_points: Cow::Borrowed(&entry_points),
                        spirv: Some(Cow::Borrowed(&words)),
                        ..Default::default()
                    })
                })
            })
        } else {
            // naga's SPIR-V front end takes no line information.
            let words = xr_spirv::compile::strip_source_debug_info(&words);
            self.context.checked(&format!("{label}: translating SPIR-V through naga"), || {
                Ok(device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(label),
                    source: wgpu::ShaderSource::SpirV(Cow::Borrowed(&words)),
                }))
            })
        }
    }

    /// A `vk-spirv` object: each stage's module from its SPIR-V, specialized.
    fn load_spirv(&mut self, request: &ArtifactLoad) -> Result<BuiltProgram, XrError> {
        let context = format!("'{}'", request.name);
        let modules = xr_spirv::offline::specialized_modules(&request.artifact, &request.overrides, &context)?;
        self.load(request, &modules, |this, label, module| Ok((this.module(label, module)?, Vec::new())))
    }

    /// A `wgsl` object: each stage's module from its WGSL, the override
    /// values the stage declares as pipeline constants.
    fn load_wgsl(&mut self, request: &ArtifactLoad) -> Result<BuiltProgram, XrError> {
        let context = format!("'{}'", request.name);
        let object = wgsl::decode(&request.artifact, &context)?;
        let mut texts = object.wgsl.into_iter();
        self.load(request, &object.modules, |this, label, module| {
            let text = texts.next().ok_or_else(|| XrError::invalid_input(format!("{label}: no WGSL")))?;
            let declared = xr_spirv::reflect::spec_constant_ids(&module.words)?;
            let constants = request
                .overrides
                .iter()
                .filter(|o| declared.contains(&o.id))
                .map(|o| (o.id.to_string(), override_value(o)))
                .collect();
            let device = &this.context.device;
            let shader = this.context.checked(&format!("{label}: building WGSL through naga"), || {
                Ok(device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(label),
                    source: wgpu::ShaderSource::Wgsl(Cow::Owned(text)),
                }))
            })?;
            Ok((shader, constants))
        })
    }

    /// A program of `modules` (its layout from their reflection), each
    /// stage's shader module and pipeline constants made by `make`.
    fn load(
        &mut self,
        request: &ArtifactLoad,
        modules: &[xr_spirv::container::StageModule],
        mut make: impl FnMut(
            &mut Self,
            &str,
            &xr_spirv::container::StageModule,
        ) -> Result<(wgpu::ShaderModule, Vec<(String, f64)>), XrError>,
    ) -> Result<BuiltProgram, XrError> {
        let context = format!("'{}'", request.name);
        let reflections: Vec<Reflection> =
            modules.iter().map(|m| xr_spirv::reflect(&m.words, &m.entry_point)).collect::<Result<_, _>>()?;
        let staged: Vec<(ShaderStage, &Reflection)> = modules.iter().map(|m| m.stage).zip(&reflections).collect();
        let slots = Self::slots(&context, &staged)?;

        let mut immediate_size = 0;
        let mut entries = Vec::new();
        let mut add = |name: &str, storage: Storage, member: &xr_spirv::reflect::BlockMember| {
            if let Some(layout) = member.layout
                && !entries.iter().any(|e: &Entry| e.info.name.as_str() == name)
            {
                let info = ConstantInfo { name: name.into(), ty: layout.ty, array_size: layout.array_size };
                entries.push(Entry { info, storage, offset: member.offset, layout });
            }
        };
        for reflection in &reflections {
            for block in &reflection.push_constants {
                immediate_size = immediate_size.max(block.size.unwrap_or(0));
                for member in &block.members {
                    add(&member.name, Storage::Immediates, member);
                }
            }
        }
        let device = &self.context.device;
        let mut uniforms = Vec::new();
        for slot in &slots {
            if let SlotKind::Uniform(block) = &slot.kind {
                // Every stage's declaration: each may name other members.
                for reflection in &reflections {
                    for same in
                        reflection.uniform_blocks.iter().filter(|b| b.set == slot.set && b.binding == slot.binding)
                    {
                        for member in &same.members {
                            add(&member.name, Storage::Uniform(uniforms.len()), member);
                        }
                    }
                }
                let size = block.size.unwrap_or(16).next_multiple_of(16);
                let buffer = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&block.name),
                    size: size as u64,
                    usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                uniforms.push((UniformBlock { set: slot.set, binding: slot.binding, buffer }, size));
            }
        }
        entries.sort_by(|a, b| a.info.name.cmp(&b.info.name));

        let set_count = slots.iter().map(|s| s.set + 1).max().unwrap_or(0);
        let group_layouts: Vec<wgpu::BindGroupLayout> = (0..set_count)
            .map(|set| {
                let layout_entries: Vec<wgpu::BindGroupLayoutEntry> =
                    slots.iter().filter(|s| s.set == set).map(layout_entry).collect();
                self.context.checked(&format!("{context}: bind group layout of set {set}"), || {
                    Ok(device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                        label: Some(&request.name),
                        entries: &layout_entries,
                    }))
                })
            })
            .collect::<Result<_, _>>()?;
        let layout_refs: Vec<Option<&wgpu::BindGroupLayout>> = group_layouts.iter().map(Some).collect();
        let layout = self.context.checked(&format!("{context}: pipeline layout"), || {
            Ok(device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(&request.name),
                bind_group_layouts: &layout_refs,
                immediate_size: immediate_size as u32,
            }))
        })?;
        let mut stages = Vec::new();
        for (module, reflection) in modules.iter().zip(&reflections) {
            let label = format!("{} ({})", request.name, module.stage.name());
            let (shader, constants) = make(self, &label, module)?;
            stages.push(Stage {
                stage: module.stage,
                module: shader,
                entry: module.entry_point.clone(),
                outputs: reflection.outputs.iter().map(|o| o.location).collect(),
                constants,
            });
        }
        let resources = slots
            .into_iter()
            .filter_map(|s| match s.kind {
                SlotKind::Resource(info) => Some(Resource { info }),
                SlotKind::Uniform(_) => None,
            })
            .collect();
        let program = Arc::new(Program::new(
            request.name.to_string(),
            stages,
            group_layouts,
            layout,
            uniforms,
            resources,
            immediate_size,
            self.cache.as_ref().map(|c| (c.cache.clone(), c.loaded_bytes > 0)),
        ));
        let name = {
            let mut objects = self.context.objects();
            objects.next_program += 1;
            let name = objects.next_program;
            objects.programs.insert(name, program.clone());
            name
        };
        let table = WgpuConstantTable { context: self.context.clone(), name, program, entries, restore: None };
        Ok(BuiltProgram {
            program: ProgramRef::program(name),
            constants: constant_table_box(table),
            warnings: Default::default(),
        })
    }
}

/// The error of a texture combined with its sampler, which neither wgpu
/// nor WGSL has.
pub fn combined_sampler(context: &str, name: &str) -> XrError {
    XrError::invalid_input(format!(
        "{context}: '{name}' is a texture combined with its sampler (sampler2D), which wgpu cannot bind: declare a texture2D and a sampler apart"
    ))
}

/// An override's value as a pipeline constant.
fn override_value(value: &xr_sourcebuild::OverrideValue) -> f64 {
    use xr_sourcebuild::OverrideKind;
    match value.kind {
        OverrideKind::Bool => f64::from(u8::from(value.bits != 0)),
        OverrideKind::Int => f64::from(value.bits as i32),
        OverrideKind::UInt => f64::from(value.bits),
        OverrideKind::Float => f64::from(f32::from_bits(value.bits)),
    }
}

/// `LocalSize`, the compute stage's work group size.
fn spirv_local_size() -> xr_spirv_object::spirv::ExecutionMode {
    xr_spirv_object::spirv::ExecutionMode::LocalSize
}

/// The bind group layout entry of `slot`.
fn layout_entry(slot: &Slot) -> wgpu::BindGroupLayoutEntry {
    let ty = match &slot.kind {
        SlotKind::Uniform(_) => wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        SlotKind::Resource(info) => match info.kind {
            ResourceKind::StorageBuffer => wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: false },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            ResourceKind::Sampler => wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
            _ => wgpu::BindingType::Texture {
                sample_type: wgpu::TextureSampleType::Float { filterable: true },
                view_dimension: wgpu::TextureViewDimension::D2,
                multisampled: false,
            },
        },
    };
    wgpu::BindGroupLayoutEntry { binding: slot.binding, visibility: slot.stages, ty, count: None }
}

impl AttachedBuildSystemBackend for AttachedWgpuSpirv {
    fn availability(&self) -> Result<Availability, XrError> {
        Ok(Availability::COMPATIBLE_OBJECT)
    }

    fn build_program(&mut self, _desc: &ProgramDesc, _options: &BuildOptions) -> Result<BuiltProgram, BuildError> {
        Err(not_here("source build").into())
    }

    fn content_key(&self, _desc: &ProgramDesc, _options: &BuildOptions) -> Result<Vec<u8>, BuildError> {
        Err(not_here("source build").into())
    }

    fn program_binary(&self, _program: ProgramRef) -> Result<ProgramBinary, XrError> {
        Err(not_here("program binaries"))
    }

    fn load_program_binary(
        &mut self,
        _desc: &ProgramDesc,
        _options: &BuildOptions,
        _binary: &ProgramBinary,
    ) -> Result<BuiltProgram, BuildError> {
        Err(not_here("program binaries").into())
    }

    fn create_pipeline(&mut self, _programs: &[ProgramRef]) -> Result<ProgramRef, XrError> {
        Err(not_here("program pipelines"))
    }

    fn set_store(&mut self, root: &str) -> Result<(), XrError> {
        self.cache = StoredPipelineCache::open(&self.context, root)?;
        Ok(())
    }

    fn load_artifact(&mut self, request: &ArtifactLoad) -> Result<LoadedArtifact, BuildError> {
        xr_spirv::offline::check_load(request, NAME, &LOADS)?;
        let _keep = self.context.keep_current();
        let how = match (request.target == wgsl::TARGET, self.context.passthrough()) {
            (true, _) => 2,
            (false, passthrough) => usize::from(!passthrough),
        };
        let program = if how == 2 { self.load_wgsl(request)? } else { self.load_spirv(request)? };
        // Counted once loaded: a load that fails made nothing.
        self.loaded[how] += 1;
        Ok(LoadedArtifact { program, note: HOW[how].1.into() })
    }

    fn counters(&self) -> Result<Vec<DeviceCounter>, XrError> {
        let mut counters: Vec<DeviceCounter> = HOW
            .iter()
            .zip(self.loaded)
            .map(|((counter, _), value)| DeviceCounter { name: (*counter).into(), value })
            .collect();
        if let Some(cache) = &self.cache {
            counters.push(DeviceCounter { name: "pipeline cache bytes loaded".into(), value: cache.loaded_bytes });
        }
        Ok(counters)
    }
}

impl Drop for AttachedWgpuSpirv {
    fn drop(&mut self) {
        if let Some(cache) = &self.cache {
            cache.save();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use abi_stable::std_types::{ROption, RSlice};
    use xr_device::NamedHandle;

    fn handles(address: usize) -> NativeHandles {
        let named = Box::leak(Box::new([NamedHandle { name: CONTEXT_HANDLE.into(), address }]));
        NativeHandles {
            kind: crate::WGPU,
            gl: ROption::RNone,
            vulkan: ROption::RNone,
            named: RSlice::from_slice(named),
        }
    }

    #[test]
    fn a_handle_this_library_did_not_hand_out_or_has_closed_is_refused_unread() {
        let (context, _) = Context::open(crate::context::Api::Vulkan, &Default::default()).expect("lavapipe opens");
        let address = Arc::as_ptr(&context) as usize;
        let capabilities = xr_device::DeviceCapabilities {
            kind: crate::WGPU,
            api_major: 30,
            api_minor: 0,
            vendor: "".into(),
            renderer: "".into(),
            driver_version: "".into(),
            shading_language_version: "".into(),
            extensions: Default::default(),
            program_binary_formats: Default::default(),
            gl_spirv: false,
            separate_shader_objects: false,
            pipeline_cache_uuid: [0; 16],
            vendor_id: 0,
            device_id: 0,
            driver_version_code: 0,
            device_type: "".into(),
        };
        assert!(WgpuSpirvSystem.attach(&handles(address), &capabilities).is_ok(), "its own open device");
        // Another address (a device of another copy of the library) is never read.
        let error = WgpuSpirvSystem.attach(&handles(address + 8), &capabilities).err().expect("refused");
        assert!(error.to_string().contains("opened by another copy of xr-rhi-wgpu, or is closed"), "{error}");
        context.close();
        assert!(WgpuSpirvSystem.attach(&handles(address), &capabilities).is_err(), "closed");
    }
}
