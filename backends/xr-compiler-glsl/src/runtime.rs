//! The GLSL build system attached to one OpenGL device.
//!
//! Runtime path: `glShaderSource`, `glCompileShader`, `glAttachShader`,
//! `glLinkProgram`, with every driver message mapped back to the user's
//! files. On GL 4.1+ also: separable programs combined in program
//! pipelines, and program binaries read back and loaded again.

use crate::preprocess;
use abi_stable::std_types::RString;
use glow::HasContext;
use std::{cell::Cell, num::NonZeroU32, rc::Rc};
use xr_device::{DeviceCapabilities, DeviceCounter, ProgramKind, ProgramRef, XrError};
use xr_gl_common::{constant_table::GlConstantTable, device_gl::DeviceGl, info_log, link, pipelines::Pipelines};
use xr_plugin::{Guarded, constant_table_box};
use xr_plugin_kit::{ProgramCache, SourceBundle};
use xr_sourcebuild::{
    ArtifactLoad, AttachedBuildSystemBackend, Availability, BuildError, BuildOptions, BuiltProgram, Diagnostic,
    LoadPath, LoadedArtifact, ProgramBinary, ProgramDesc, Severity, SourceDesc,
};
use xr_store::Store;

/// The GLSL build system attached to one OpenGL device.
pub struct AttachedGlsl {
    gl: Rc<DeviceGl>,
    /// Separable programs and their pipelines.
    pipelines: Pipelines,
    /// The device reports program binary formats.
    binaries: bool,
    /// This driver's program binaries, once the host gives a store.
    cache: Option<Rc<ProgramCache>>,
    capabilities: DeviceCapabilities,
    /// Programs linked from source, and loaded from program binaries,
    /// since it attached (`counters`).
    linked_from_source: Cell<u64>,
    loaded_from_binaries: Cell<u64>,
    /// Links the driver had not finished when `glLinkProgram` returned.
    links: link::LinkWatch,
}

impl AttachedGlsl {
    /// Attaches through the device's GL.
    pub fn new(gl: DeviceGl, capabilities: &DeviceCapabilities) -> Self {
        let pipelines = Pipelines::new(&gl, capabilities);
        let links = link::LinkWatch::new(capabilities);
        Self {
            gl: Rc::new(gl),
            pipelines,
            links,
            binaries: !capabilities.program_binary_formats.is_empty(),
            cache: None,
            capabilities: capabilities.clone(),
            linked_from_source: Cell::new(0),
            loaded_from_binaries: Cell::new(0),
        }
    }

    fn check_request(&self, desc: &ProgramDesc, options: &BuildOptions, context: &str) -> Result<(), BuildError> {
        if desc.stages.is_empty() {
            return Err(XrError::invalid_input(format!("{context} has no stages")).into());
        }
        xr_gl_common::gl_ext::check_stages(desc)?;
        if options.separable {
            self.pipelines.require(context)?;
        }
        Ok(())
    }

    /// Wraps a linked program with its constant table, remembering separable ones.
    fn finish(
        &mut self,
        desc: &ProgramDesc,
        options: &BuildOptions,
        program: glow::Program,
        warnings: Vec<Diagnostic>,
    ) -> Result<BuiltProgram, BuildError> {
        let table = GlConstantTable::new(self.gl.clone(), self.pipelines.fns(), program, &desc.name)?;
        if options.separable {
            self.pipelines.remember(program.0.get(), desc);
        }
        Ok(BuiltProgram {
            program: ProgramRef::program(program.0.get()),
            constants: constant_table_box(table),
            warnings: warnings.into(),
        })
    }

    fn compile_stages(
        &self,
        desc: &ProgramDesc,
        context: &str,
        shaders: &mut Vec<glow::Shader>,
        warnings: &mut Vec<Diagnostic>,
    ) -> Result<(), BuildError> {
        let mut errors = Vec::new();
        for stage in desc.stages.iter() {
            match self.compile(stage, context) {
                Ok((shader, mut messages)) => {
                    shaders.push(shader);
                    warnings.append(&mut messages);
                }
                Err(mut messages) => errors.append(&mut messages),
            }
        }
        if errors.iter().any(|d| d.severity == Severity::Error) {
            errors.append(warnings);
            return Err(BuildError::from_diagnostics(context, errors));
        }
        Ok(())
    }

    fn compile(&self, stage: &SourceDesc, context: &str) -> Result<(glow::Shader, Vec<Diagnostic>), Vec<Diagnostic>> {
        let file = stage.file_name.as_str();
        let fail = |message: String| vec![Diagnostic::error(file, 0, message)];
        let flat = flatten(stage, context)?;
        let gl = self.gl.current().map_err(|e| fail(e.to_string()))?;
        let shader_type = xr_gl_common::gl_ext::shader_type(stage.stage).map_err(|e| fail(e.message.to_string()))?;
        // SAFETY: plain shader object calls on the current context.
        unsafe {
            let shader = gl.create_shader(shader_type).map_err(|e| fail(format!("glCreateShader: {e}")))?;
            gl.shader_source(shader, &flat.text);
            gl.compile_shader(shader);
            let mut messages =
                info_log::parse(&gl.get_shader_info_log(shader), Some(&flat as &dyn info_log::LineMap), file);
            xr_plugin_kit::includes::attach_include_chains(&mut messages, &flat.includes);
            if gl.get_shader_compile_status(shader) {
                return Ok((shader, messages));
            }
            gl.delete_shader(shader);
            if messages.iter().any(|d| d.severity == Severity::Error) {
                Err(messages)
            } else {
                let mut all = fail(format!("{} shader failed to compile without an error message", stage.stage.name()));
                all.extend(messages);
                Err(all)
            }
        }
    }

    fn gl_program(&self, program: ProgramRef) -> Result<glow::Program, XrError> {
        NonZeroU32::new(program.name)
            .filter(|_| program.kind == ProgramKind::Program)
            .map(glow::NativeProgram)
            .ok_or_else(|| XrError::invalid_input(format!("{program:?} is not a program")))
    }
}

impl AttachedBuildSystemBackend for AttachedGlsl {
    fn availability(&self) -> Result<Availability, XrError> {
        let offline = if self.binaries { Availability::OFFLINE_COMPILE } else { Availability::NONE };
        Ok(Availability::RUNTIME_COMPILE | offline)
    }

    fn build_program(&mut self, desc: &ProgramDesc, options: &BuildOptions) -> Result<BuiltProgram, BuildError> {
        let context = format!("program '{}'", desc.name);
        self.check_request(desc, options, &context)?;
        let mut warnings = Vec::new();
        let mut shaders = Vec::new();
        let result = self.compile_stages(desc, &context, &mut shaders, &mut warnings).and_then(|()| {
            let gl = self.gl.current()?;
            let (program, mut linker) =
                link::link_program(gl, (&self.pipelines, &self.links), options, &shaders, &desc.name, &context)?;
            warnings.append(&mut linker);
            self.linked_from_source.set(self.linked_from_source.get() + 1);
            self.finish(desc, options, program, warnings)
        });
        if let Ok(gl) = self.gl.current() {
            for shader in shaders {
                // SAFETY: shaders were created on this context; a linked
                // program keeps its own copy of the code.
                unsafe { gl.delete_shader(shader) };
            }
        }
        result
    }

    fn content_key(&self, desc: &ProgramDesc, options: &BuildOptions) -> Result<Vec<u8>, BuildError> {
        let context = format!("program '{}'", desc.name);
        let mut hasher = blake3::Hasher::new();
        let mut part = |bytes: &[u8]| {
            hasher.update(&(bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        };
        part(crate::NAME.as_bytes());
        part(env!("CARGO_PKG_VERSION").as_bytes());
        part(&[u8::from(options.separable)]);
        for stage in desc.stages.iter() {
            let flat = flatten(stage, &context).map_err(|d| BuildError::from_diagnostics(&context, d))?;
            part(stage.stage.name().as_bytes());
            part(stage.entry_point.as_bytes());
            // The flattened text holds every include and define.
            part(flat.text.as_bytes());
        }
        Ok(hasher.finalize().as_bytes().to_vec())
    }

    fn program_binary(&self, program: ProgramRef) -> Result<ProgramBinary, XrError> {
        let program = self.gl_program(program)?;
        let gl = self.gl.current()?;
        // SAFETY: the program is a linked program on the current context.
        let binary = unsafe { gl.get_program_binary(program) };
        match binary {
            Some(binary) if !binary.buffer.is_empty() => {
                Ok(ProgramBinary { format: binary.format, bytes: binary.buffer.into() })
            }
            _ => Err(XrError::unavailable(
                "the driver gave no program binary back (no binary formats, or built without `retrievable`)",
            )),
        }
    }

    fn load_program_binary(
        &mut self,
        desc: &ProgramDesc,
        options: &BuildOptions,
        binary: &ProgramBinary,
    ) -> Result<BuiltProgram, BuildError> {
        let context = format!("program '{}'", desc.name);
        self.check_request(desc, options, &context)?;
        let gl = self.gl.current()?;
        let program = link::new_program(gl, &self.pipelines, options)?;
        // SAFETY: program object calls on the current context; the buffer
        // is only read by the driver.
        let accepted = unsafe {
            let _ = gl.get_error();
            let binary = glow::ProgramBinary { buffer: binary.bytes.to_vec(), format: binary.format };
            gl.program_binary(program, &binary);
            let error = gl.get_error();
            // A driver may refuse a binary at any time, even without a GL error.
            let linked = error == glow::NO_ERROR && gl.get_program_link_status(program);
            if linked {
                Ok(())
            } else {
                let log = gl.get_program_info_log(program);
                gl.delete_program(program);
                Err(format!(
                    "{context}: the driver refused the program binary (format 0x{:x}, GL error 0x{error:04x}){}",
                    binary.format,
                    if log.trim().is_empty() { String::new() } else { format!(": {}", log.trim()) }
                ))
            }
        };
        accepted.map_err(|message| BuildError::from(XrError::driver(message)))?;
        self.loaded_from_binaries.set(self.loaded_from_binaries.get() + 1);
        self.finish(desc, options, program, Vec::new())
    }

    fn create_pipeline(&mut self, programs: &[ProgramRef]) -> Result<ProgramRef, XrError> {
        self.pipelines.create(&self.gl, programs)
    }

    fn set_store(&mut self, root: &str) -> Result<(), XrError> {
        let store = Store::open(root).map_err(|e| XrError::new(xr_device::ErrorKind::Io, e.to_string()))?;
        self.cache = Some(Rc::new(ProgramCache::new(store, &self.capabilities)));
        Ok(())
    }

    /// Loads stored sources (a source bundle) with the overrides as defines:
    /// from this driver's program binary, or built on the device with the
    /// binary written back for next time.
    fn load_artifact(&mut self, request: &ArtifactLoad) -> Result<LoadedArtifact, BuildError> {
        xr_spirv::offline::check_load(request, crate::NAME, &crate::LOADS)?;
        let context = format!("program '{}'", request.name);
        let bundle =
            SourceBundle::decode(&request.artifact).map_err(|e| XrError::invalid_input(format!("{context}: {e}")))?;
        let defines: Vec<(String, String)> =
            request.overrides.iter().map(|o| (o.name.to_string(), o.kind.literal(o.bits))).collect();
        let desc = bundle
            .program(xr_spirv::LANGUAGE_GLSL, &request.name, &defines)
            .map_err(|e| XrError::invalid_input(format!("{context}: {e}")))?;
        let options = BuildOptions::default();
        let cache = match (&self.cache, self.binaries) {
            (Some(cache), true) => Ok(cache.clone()),
            (None, _) => Err("no store was given to keep program binaries in".to_owned()),
            (_, false) => Err("this driver gives no program binaries back".to_owned()),
        };
        match request.path {
            LoadPath::DeviceBinary => {
                let cache = cache.map_err(XrError::unavailable)?;
                let key = cache.key(&self.content_key(&desc, &options)?);
                // The cache drives a build system through the ABI trait: it gets this one, guarded.
                match cache.load_binary(&mut Guarded(&mut *self), &desc, options, &key) {
                    Ok(Some(program)) => Ok(LoadedArtifact { program, note: RString::new() }),
                    Ok(None) => Err(XrError::unavailable("no program binary of this driver yet").into()),
                    Err(why) => Err(XrError::driver(why).into()),
                }
            }
            LoadPath::Source => match cache {
                Ok(cache) => {
                    let key = cache.key(&self.content_key(&desc, &options)?);
                    let (program, stored) = cache.build_and_store(&mut Guarded(&mut *self), &desc, options, &key)?;
                    let note = match stored {
                        Ok(_) => "program binary written back to the store".to_owned(),
                        Err(e) => format!("program binary not stored: {e}"),
                    };
                    Ok(LoadedArtifact { program, note: note.into() })
                }
                Err(why) => {
                    let program = self.build_program(&desc, &options)?;
                    Ok(LoadedArtifact { program, note: format!("built on the device; {why}").into() })
                }
            },
            LoadPath::CompatibleObject => Err(XrError::invalid_input(format!(
                "{} has no compatible object: GLSL is built by each driver",
                crate::NAME
            ))
            .into()),
        }
    }

    fn counters(&self) -> Result<Vec<DeviceCounter>, XrError> {
        let mut counters = vec![
            DeviceCounter { name: "programs linked from source".into(), value: self.linked_from_source.get() },
            DeviceCounter { name: "programs from program binaries".into(), value: self.loaded_from_binaries.get() },
        ];
        counters.extend(self.links.counters());
        Ok(counters)
    }
}

impl Drop for AttachedGlsl {
    fn drop(&mut self) {
        self.pipelines.release(&self.gl);
    }
}

/// Checks that `stage` is GLSL with entry point `main`, then flattens it.
fn flatten(stage: &SourceDesc, context: &str) -> Result<preprocess::Preprocessed, Vec<Diagnostic>> {
    let file = stage.file_name.as_str();
    if stage.language != "glsl" {
        return Err(vec![Diagnostic::error(
            file,
            0,
            format!("{context}: xr-compiler-glsl builds GLSL, not {}", stage.language),
        )]);
    }
    if stage.entry_point.as_str() != "main" {
        return Err(vec![Diagnostic::error(
            file,
            0,
            format!("GLSL entry point must be 'main', not '{}'", stage.entry_point),
        )]);
    }
    if !stage.specializations.is_empty() {
        return Err(vec![Diagnostic::error(
            file,
            0,
            "GLSL built by the driver has no specialization constants: use defines, or a SPIR-V build system",
        )]);
    }
    preprocess::preprocess(stage)
}
