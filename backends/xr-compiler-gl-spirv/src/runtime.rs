//! The GL SPIR-V build system attached to one OpenGL device.

use crate::spirv_fns::SpirvFns;
use abi_stable::std_types::RString;
use glow::HasContext;
use std::{collections::HashMap, ffi::CString, rc::Rc};
use xr_device::{DeviceCapabilities, GlBindingSpace, ProgramRef, ResourceKind, XrError};
use xr_gl_common::{
    constant_table::{GlConstantTable, UniformBlockSpec},
    device_gl::DeviceGl,
    info_log, link,
    pipelines::Pipelines,
    resources::{GlResource, Points, ProgramResources},
};
use xr_plugin::constant_table_box;
use xr_sourcebuild::{
    ArtifactLoad, AttachedBuildSystemBackend, Availability, BuildError, BuildOptions, BuiltProgram, ConstantType,
    Diagnostic, LoadPath, LoadedArtifact, ProgramBinary, ProgramDesc, ResourceInfo, Severity,
};
use xr_spirv::container::{self, StageModule};
use xr_spirv::reflect::GlBindingClass;
use xr_spirv::{LazyCompiler, SpirvOptions, TargetEnv};

/// The GL SPIR-V build system on one device.
pub struct AttachedGlSpirv {
    gl: Rc<DeviceGl>,
    spirv: SpirvFns,
    pipelines: Pipelines,
    /// shaderc starts on first use (~100 ms).
    compiler: LazyCompiler,
    /// Each program's stage modules, for `program_binary`.
    modules: HashMap<u32, Vec<StageModule>>,
    /// Programs linked from SPIR-V since it attached (`counters`).
    linked: std::cell::Cell<u64>,
    /// Links the driver had not finished when `glLinkProgram` returned.
    links: link::LinkWatch,
}

impl AttachedGlSpirv {
    /// Attaches through the device's GL.
    pub fn new(gl: DeviceGl, capabilities: &DeviceCapabilities) -> Result<Self, XrError> {
        let spirv = SpirvFns::load(gl.loader())?;
        let pipelines = Pipelines::new(&gl, capabilities);
        let links = link::LinkWatch::new(capabilities);
        Ok(Self {
            gl: Rc::new(gl),
            spirv,
            pipelines,
            links,
            compiler: LazyCompiler::default(),
            modules: HashMap::new(),
            linked: std::cell::Cell::new(0),
        })
    }

    /// Compiles every stage to SPIR-V for OpenGL 4.5, linked (validated when loaded).
    fn compile(&self, desc: &ProgramDesc) -> Result<Vec<StageModule>, BuildError> {
        xr_gl_common::gl_ext::check_stages(desc)?;
        let mut modules = self.compiler.get()?.compile_program(desc, &SpirvOptions::new(TargetEnv::OpenGl45))?.modules;
        xr_spirv::finish_program(&mut modules, TargetEnv::OpenGl45)?;
        Ok(modules)
    }

    /// Loads stage modules into GL and links them.
    fn link(
        &mut self,
        desc: &ProgramDesc,
        options: &BuildOptions,
        modules: Vec<StageModule>,
    ) -> Result<BuiltProgram, BuildError> {
        let context = format!("program '{}'", desc.name);
        if options.separable {
            self.pipelines.require(&context)?;
        }
        // Every module that enters GL is validated, stored ones included.
        xr_spirv::validate_program(&modules, TargetEnv::OpenGl45, &context)?;
        // Read before linking: past it, every failure must delete the program.
        let uniforms = reflect_uniforms(&modules)?;
        let blocks = reflect_blocks(&modules);
        let loader = *self.gl.loader();
        let mut points = Points::new(&loader, &desc.name);
        let (bound_modules, resources) = rebind(&modules, &mut points)?;
        let gl = self.gl.current()?;
        let mut shaders = Vec::new();
        let result = (|| {
            for module in &bound_modules {
                shaders.push(self.load_stage(gl, module, &context)?);
            }
            link::link_program(gl, (&self.pipelines, &self.links), options, &shaders, &desc.name, &context)
        })();
        for shader in shaders {
            // SAFETY: the shaders were created on this context; a linked program keeps its code.
            unsafe { gl.delete_shader(shader) };
        }
        let (program, warnings) = result?;
        self.linked.set(self.linked.get() + 1);
        let table = GlConstantTable::with_locations(
            self.gl.clone(),
            self.pipelines.fns(),
            program,
            &desc.name,
            &uniforms,
            &blocks,
            ProgramResources { resources, points: points.keep() },
        )?;
        if options.separable {
            let mut described = desc.clone();
            for (stage, module) in described.stages.iter_mut().zip(&modules) {
                stage.stage = module.stage;
            }
            self.pipelines.remember(program.0.get(), &described);
        }
        self.modules.insert(program.0.get(), modules);
        Ok(BuiltProgram {
            program: ProgramRef::program(program.0.get()),
            constants: constant_table_box(table),
            warnings: warnings.into(),
        })
    }

    fn load_stage(&self, gl: &glow::Context, module: &StageModule, context: &str) -> Result<glow::Shader, BuildError> {
        let entry = CString::new(module.entry_point.as_str())
            .map_err(|_| XrError::invalid_input(format!("{context}: entry point with a NUL byte")))?;
        let constants: Vec<(u32, u32)> = module.specializations.iter().map(|s| (s.id, s.bits)).collect();
        let shader_type = xr_gl_common::gl_ext::shader_type(module.stage)?;
        // SAFETY: shader calls on the current context; the words were validated.
        unsafe {
            let shader = gl.create_shader(shader_type).map_err(|e| XrError::driver(format!("glCreateShader: {e}")))?;
            self.spirv.load_module(shader.0.get(), &module.words, &entry, &constants);
            if gl.get_shader_compile_status(shader) {
                return Ok(shader);
            }
            let mut messages = info_log::parse(&gl.get_shader_info_log(shader), None, &module.file);
            gl.delete_shader(shader);
            if !messages.iter().any(|d| d.severity == Severity::Error) {
                messages.insert(
                    0,
                    Diagnostic::error(
                        &module.file,
                        0,
                        format!("the driver refused to specialize entry point '{}'", module.entry_point),
                    ),
                );
            }
            Err(BuildError::from_diagnostics(context, messages))
        }
    }
}

/// The uniform blocks of every stage (HLSL's globals among them), merged by
/// binding. A stage whose reflection fails (a construct the reflection
/// library cannot evaluate) contributes none.
fn reflect_blocks(modules: &[StageModule]) -> Vec<UniformBlockSpec> {
    let mut blocks: Vec<UniformBlockSpec> = Vec::new();
    for module in modules {
        let Ok(reflection) = xr_spirv::reflect(&module.words, &module.entry_point) else { continue };
        for block in reflection.uniform_blocks {
            if blocks.iter().any(|b| b.binding == block.binding) {
                continue;
            }
            let members = block.members.iter().filter_map(|m| Some((m.name.clone(), m.offset, m.layout?))).collect();
            blocks.push(UniformBlockSpec { binding: block.binding, size: block.size.unwrap_or(16), members });
        }
    }
    blocks
}

/// The uniforms outside blocks that some stage reads, by location (one no
/// code reads is not in the constant table, as on every other path).
fn reflect_uniforms(modules: &[StageModule]) -> Result<Vec<(String, ConstantType, u32, u32)>, XrError> {
    let mut uniforms = Vec::new();
    for module in modules {
        for u in xr_spirv::reflect::read_loose_uniforms(&module.words)? {
            uniforms.push((u.name, u.constant_type, u.array_size, u.location));
        }
    }
    Ok(uniforms)
}

impl AttachedBuildSystemBackend for AttachedGlSpirv {
    fn availability(&self) -> Result<Availability, XrError> {
        Ok(Availability::RUNTIME_COMPILE | Availability::OFFLINE_COMPILE | Availability::COMPATIBLE_OBJECT)
    }

    fn build_program(&mut self, desc: &ProgramDesc, options: &BuildOptions) -> Result<BuiltProgram, BuildError> {
        let modules = self.compile(desc)?;
        self.link(desc, options, modules)
    }

    fn content_key(&self, desc: &ProgramDesc, options: &BuildOptions) -> Result<Vec<u8>, BuildError> {
        let modules = self.compile(desc)?;
        Ok(container::content_key(crate::NAME, env!("CARGO_PKG_VERSION"), &[u8::from(options.separable)], &modules))
    }

    fn program_binary(&self, program: ProgramRef) -> Result<ProgramBinary, XrError> {
        container::object_of(&self.modules, program)
    }

    fn load_program_binary(
        &mut self,
        desc: &ProgramDesc,
        options: &BuildOptions,
        binary: &ProgramBinary,
    ) -> Result<BuiltProgram, BuildError> {
        let modules = container::from_object(binary, &format!("program '{}'", desc.name), crate::NAME)?;
        self.link(desc, options, modules)
    }

    fn create_pipeline(&mut self, programs: &[ProgramRef]) -> Result<ProgramRef, XrError> {
        self.pipelines.create(&self.gl, programs)
    }

    fn set_store(&mut self, _root: &str) -> Result<(), XrError> {
        // OpenGL keeps no pipeline cache, and SPIR-V programs keep no binaries.
        Ok(())
    }

    fn load_artifact(&mut self, request: &ArtifactLoad) -> Result<LoadedArtifact, BuildError> {
        xr_spirv::offline::check_load(request, crate::NAME, &[(crate::TARGET, LoadPath::CompatibleObject)])?;
        let context = format!("program '{}'", request.name);
        let modules = xr_spirv::offline::specialized_modules(&request.artifact, &request.overrides, &context)?;
        let desc = ProgramDesc::new(request.name.as_str(), []);
        let program = self.load_program_binary(&desc, &BuildOptions::default(), &container::to_object(&modules))?;
        Ok(LoadedArtifact { program, note: RString::new() })
    }

    fn counters(&self) -> Result<Vec<xr_device::DeviceCounter>, XrError> {
        let mut counters =
            vec![xr_device::DeviceCounter { name: "programs linked from SPIR-V".into(), value: self.linked.get() }];
        counters.extend(self.links.counters());
        Ok(counters)
    }
}

impl Drop for AttachedGlSpirv {
    fn drop(&mut self) {
        self.pipelines.release(&self.gl);
    }
}

/// The modules with every sampler, storage image and storage buffer moved
/// to binding points the device gave this program (GL's units are global:
/// two programs on one unit would see each other's textures), and those
/// resources as the constant table lists them. A resource that two stages
/// declare at one binding gets one point.
fn rebind(modules: &[StageModule], points: &mut Points<'_>) -> Result<(Vec<StageModule>, Vec<GlResource>), XrError> {
    let mut resources: Vec<(GlBindingClass, u32, GlResource)> = Vec::new();
    let mut bound = modules.to_vec();
    for module in bound.iter_mut() {
        let decorated = xr_spirv::reflect::gl_bindings(&module.words)?;
        // Array sizes and block sizes come from the reflection library,
        // which cannot read every module (some specialization constant
        // expressions): without it, one element and no size check.
        let needs_reflection = decorated.iter().any(|d| d.class != GlBindingClass::UniformBuffer);
        let reflection = if needs_reflection {
            xr_spirv::reflect(&module.words, &module.entry_point).unwrap_or_default()
        } else {
            Default::default()
        };
        for xr_spirv::reflect::BindingDecoration { word, class, binding, name, .. } in decorated {
            let (kind, space) = match class {
                GlBindingClass::TextureUnit => (ResourceKind::CombinedImageSampler, GlBindingSpace::TextureUnit),
                GlBindingClass::ImageUnit => (ResourceKind::StorageImage, GlBindingSpace::ImageUnit),
                GlBindingClass::StorageBuffer => (ResourceKind::StorageBuffer, GlBindingSpace::StorageBuffer),
                // Uniform blocks get buffers of the table's own.
                GlBindingClass::UniformBuffer => continue,
            };
            let point = match resources.iter().find(|(c, b, _)| *c == class && *b == binding) {
                Some((_, _, resource)) => resource.points[0],
                None => {
                    // GL numbers each class on its own: match the class too.
                    let (count, min_size, name) = match class {
                        GlBindingClass::StorageBuffer => {
                            match reflection.storage_buffers.iter().find(|b| b.binding == binding) {
                                Some(block) => (block.count.max(1), block.size.unwrap_or(0) as u64, block.name.clone()),
                                None => (1, 0, name),
                            }
                        }
                        _ => {
                            let storage = class == GlBindingClass::ImageUnit;
                            let image = reflection.images.iter().find(|i| {
                                i.binding == binding
                                    && (i.kind == "storage image") == storage
                                    && (name.is_empty() || i.name == name)
                            });
                            (image.map_or(1, |i| i.count.max(1)), 0, name)
                        }
                    };
                    let taken = points.take(space, count, &name)?;
                    if taken.windows(2).any(|w| w[1] != w[0] + 1) {
                        return Err(XrError::unavailable(format!(
                            "'{name}' needs {count} consecutive {}; the device's free ones are scattered",
                            space.name()
                        )));
                    }
                    let resource = GlResource {
                        info: ResourceInfo {
                            name: name.as_str().into(),
                            kind,
                            set: 0,
                            binding: taken[0],
                            array_size: count,
                            min_size,
                        },
                        bound: vec![false; taken.len()],
                        points: taken,
                        two_d: true,
                    };
                    let point = resource.points[0];
                    resources.push((class, binding, resource));
                    point
                }
            };
            module.words[word] = point;
        }
    }
    Ok((bound, resources.into_iter().map(|(_, _, r)| r).collect()))
}
