//! The GL 4.1 separable-program entry points glow does not wrap, loaded
//! through the device's `get_proc_address`.

use std::ffi::{CStr, c_char, c_void};
use xr_device::{GlLoader, XrError};

type ProgramParameteri = unsafe extern "system" fn(program: u32, pname: u32, value: i32);
type CreateProgramPipelines = unsafe extern "system" fn(n: i32, pipelines: *mut u32);
type DeleteProgramPipelines = unsafe extern "system" fn(n: i32, pipelines: *const u32);
type UseProgramStages = unsafe extern "system" fn(pipeline: u32, stages: u32, program: u32);
type ValidateProgramPipeline = unsafe extern "system" fn(pipeline: u32);
type GetProgramPipelineiv = unsafe extern "system" fn(pipeline: u32, pname: u32, params: *mut i32);
type GetProgramPipelineInfoLog =
    unsafe extern "system" fn(pipeline: u32, buf_size: i32, length: *mut i32, info_log: *mut c_char);
type BindProgramPipeline = unsafe extern "system" fn(pipeline: u32);
type ActiveShaderProgram = unsafe extern "system" fn(pipeline: u32, program: u32);
type GetProgramInterfaceiv = unsafe extern "system" fn(program: u32, interface: u32, pname: u32, params: *mut i32);
type GetProgramResourceName =
    unsafe extern "system" fn(program: u32, interface: u32, index: u32, size: i32, length: *mut i32, name: *mut c_char);
type GetProgramResourceiv = unsafe extern "system" fn(
    program: u32,
    interface: u32,
    index: u32,
    prop_count: i32,
    props: *const u32,
    size: i32,
    length: *mut i32,
    params: *mut i32,
);

/// One user-declared input or output of a stage program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterfaceVariable {
    /// Its name in the source.
    pub name: String,
    /// Its GL type enum.
    pub gl_type: u32,
    /// Its location, or -1 where it has none.
    pub location: i32,
}

/// GL 4.3 program interface queries, used to match stage interfaces.
struct InterfaceFns {
    get_program_interface_iv: GetProgramInterfaceiv,
    get_program_resource_name: GetProgramResourceName,
    get_program_resource_iv: GetProgramResourceiv,
}

/// Separable programs and program pipelines.
pub struct PipelineFns {
    program_parameteri: ProgramParameteri,
    create_program_pipelines: CreateProgramPipelines,
    delete_program_pipelines: DeleteProgramPipelines,
    use_program_stages: UseProgramStages,
    validate_program_pipeline: ValidateProgramPipeline,
    get_program_pipeline_iv: GetProgramPipelineiv,
    get_program_pipeline_info_log: GetProgramPipelineInfoLog,
    bind_program_pipeline: BindProgramPipeline,
    active_shader_program: ActiveShaderProgram,
    /// Absent before GL 4.3 / `ARB_program_interface_query`.
    interface: Option<InterfaceFns>,
}

/// The address of the GL entry point `name`, or an `Unavailable` error
/// naming it where the device has none.
pub fn entry_point(loader: &GlLoader, name: &CStr) -> Result<*const c_void, XrError> {
    // SAFETY: the loader's context outlives this call.
    let pointer: *const c_void = unsafe { (loader.get_proc_address)(loader.context, name.as_ptr()) };
    if pointer.is_null() {
        return Err(XrError::unavailable(format!("the device has no {}", name.to_string_lossy())));
    }
    Ok(pointer)
}

fn load<T: Copy>(loader: &GlLoader, name: &CStr) -> Result<T, XrError> {
    let pointer = entry_point(loader, name)?;
    assert_eq!(size_of::<T>(), size_of::<*const c_void>());
    // SAFETY: `T` is the function-pointer type of the entry point named `name`.
    Ok(unsafe { std::mem::transmute_copy::<*const c_void, T>(&pointer) })
}

impl PipelineFns {
    /// Loads the entry points; fails where the device lacks one.
    pub fn load(loader: &GlLoader) -> Result<Self, XrError> {
        Ok(Self {
            program_parameteri: load(loader, c"glProgramParameteri")?,
            create_program_pipelines: load(loader, c"glCreateProgramPipelines")
                .or_else(|_| load(loader, c"glGenProgramPipelines"))?,
            delete_program_pipelines: load(loader, c"glDeleteProgramPipelines")?,
            use_program_stages: load(loader, c"glUseProgramStages")?,
            validate_program_pipeline: load(loader, c"glValidateProgramPipeline")?,
            get_program_pipeline_iv: load(loader, c"glGetProgramPipelineiv")?,
            get_program_pipeline_info_log: load(loader, c"glGetProgramPipelineInfoLog")?,
            bind_program_pipeline: load(loader, c"glBindProgramPipeline")?,
            active_shader_program: load(loader, c"glActiveShaderProgram")?,
            interface: (|| {
                Ok::<_, XrError>(InterfaceFns {
                    get_program_interface_iv: load(loader, c"glGetProgramInterfaceiv")?,
                    get_program_resource_name: load(loader, c"glGetProgramResourceName")?,
                    get_program_resource_iv: load(loader, c"glGetProgramResourceiv")?,
                })
            })()
            .ok(),
        })
    }

    /// The user-declared inputs (`glow::PROGRAM_INPUT`) or outputs
    /// (`glow::PROGRAM_OUTPUT`) of a program; `None` without interface queries.
    ///
    /// # Safety
    /// The device's context must be current and `program` a linked program on it.
    pub unsafe fn interface(&self, program: u32, interface: u32) -> Option<Vec<InterfaceVariable>> {
        // SAFETY: upheld by the caller.
        let resources = unsafe { self.resources(program, interface, &[glow::TYPE, glow::LOCATION]) }?;
        Some(
            resources
                .into_iter()
                .filter(|(name, _)| !name.starts_with("gl_"))
                .map(|(name, values)| InterfaceVariable { name, gl_type: values[0] as u32, location: values[1] })
                .collect(),
        )
    }

    /// Every resource of `interface` of a program, with the integer
    /// properties `props` of each; `None` without interface queries.
    ///
    /// # Safety
    /// The device's context must be current and `program` a linked program on it.
    pub unsafe fn resources(&self, program: u32, interface: u32, props: &[u32]) -> Option<Vec<(String, Vec<i32>)>> {
        let fns = self.interface.as_ref()?;
        let mut out = Vec::new();
        // SAFETY: upheld by the caller; out pointers are valid for their sizes.
        unsafe {
            let mut count = 0;
            (fns.get_program_interface_iv)(program, interface, glow::ACTIVE_RESOURCES, &mut count);
            for index in 0..count.max(0) as u32 {
                let mut name = [0u8; 256];
                let mut length = 0;
                (fns.get_program_resource_name)(
                    program,
                    interface,
                    index,
                    name.len() as i32,
                    &mut length,
                    name.as_mut_ptr().cast(),
                );
                let name = String::from_utf8_lossy(&name[..length.clamp(0, 256) as usize]).into_owned();
                let mut values = vec![0i32; props.len()];
                (fns.get_program_resource_iv)(
                    program,
                    interface,
                    index,
                    props.len() as i32,
                    props.as_ptr(),
                    values.len() as i32,
                    &mut length,
                    values.as_mut_ptr(),
                );
                out.push((name, values));
            }
        }
        Some(out)
    }

    /// `glProgramParameteri(program, GL_PROGRAM_SEPARABLE, GL_TRUE)`.
    ///
    /// # Safety
    /// The device's context must be current and `program` a program on it.
    pub unsafe fn make_separable(&self, program: u32) {
        // SAFETY: upheld by the caller.
        unsafe { (self.program_parameteri)(program, glow::PROGRAM_SEPARABLE, 1) }
    }

    /// Creates a pipeline with `stages`: (stage bits, program) pairs.
    ///
    /// # Safety
    /// The device's context must be current and the programs separable ones on it.
    pub unsafe fn create_pipeline(&self, stages: &[(u32, u32)]) -> u32 {
        let mut pipeline = 0;
        // SAFETY: upheld by the caller; `pipeline` is a valid out pointer.
        unsafe {
            (self.create_program_pipelines)(1, &mut pipeline);
            for (bits, program) in stages {
                (self.use_program_stages)(pipeline, *bits, *program);
            }
        }
        pipeline
    }

    /// Validates a pipeline; `Err(log)` if it does not validate.
    ///
    /// # Safety
    /// The device's context must be current and `pipeline` a pipeline on it.
    pub unsafe fn validate(&self, pipeline: u32) -> Result<(), String> {
        // SAFETY: upheld by the caller; out pointers are valid for their sizes.
        unsafe {
            (self.validate_program_pipeline)(pipeline);
            let mut status = 0;
            (self.get_program_pipeline_iv)(pipeline, glow::VALIDATE_STATUS, &mut status);
            if status != 0 {
                return Ok(());
            }
            let mut length = 0;
            (self.get_program_pipeline_iv)(pipeline, glow::INFO_LOG_LENGTH, &mut length);
            let mut log = vec![0u8; length.max(1) as usize];
            let mut written = 0;
            (self.get_program_pipeline_info_log)(pipeline, log.len() as i32, &mut written, log.as_mut_ptr().cast());
            log.truncate(written.max(0) as usize);
            Err(String::from_utf8_lossy(&log).trim().to_owned())
        }
    }

    /// Unbinds whatever pipeline is bound.
    ///
    /// # Safety
    /// The device's context must be current.
    pub unsafe fn unbind(&self) {
        // SAFETY: upheld by the caller.
        unsafe { (self.bind_program_pipeline)(0) }
    }

    /// Deletes a pipeline.
    ///
    /// # Safety
    /// The device's context must be current.
    pub unsafe fn delete_pipeline(&self, pipeline: u32) {
        // SAFETY: upheld by the caller.
        unsafe { (self.delete_program_pipelines)(1, &pipeline) }
    }

    /// Binds a pipeline and makes `program` its active program, so that the
    /// classic `glUniform*` calls set `program`'s uniforms.
    ///
    /// # Safety
    /// The device's context must be current; `program` must be a stage of `pipeline`.
    pub unsafe fn activate(&self, pipeline: u32, program: u32) {
        // SAFETY: upheld by the caller.
        unsafe {
            (self.bind_program_pipeline)(pipeline);
            (self.active_shader_program)(pipeline, program);
        }
    }
}

/// Stage bits in pipeline order: what each stage hands to the next.
pub const PIPELINE_ORDER: [u32; 5] = [
    glow::VERTEX_SHADER_BIT,
    glow::TESS_CONTROL_SHADER_BIT,
    glow::TESS_EVALUATION_SHADER_BIT,
    glow::GEOMETRY_SHADER_BIT,
    glow::FRAGMENT_SHADER_BIT,
];

/// The `glUseProgramStages` bit of a stage; 0 for a stage OpenGL does not
/// have (the GL build systems build none: [`shader_type`] refuses them).
pub fn stage_bit(stage: xr_sourcebuild::ShaderStage) -> u32 {
    use xr_sourcebuild::ShaderStage::*;
    match stage {
        Vertex => glow::VERTEX_SHADER_BIT,
        TessControl => glow::TESS_CONTROL_SHADER_BIT,
        TessEvaluation => glow::TESS_EVALUATION_SHADER_BIT,
        Geometry => glow::GEOMETRY_SHADER_BIT,
        Fragment => glow::FRAGMENT_SHADER_BIT,
        Compute => glow::COMPUTE_SHADER_BIT,
        _ => 0,
    }
}

/// Refuses a program with a stage OpenGL does not have (task, mesh, ray
/// tracing), naming the stage and its file, before anything is compiled.
pub fn check_stages(desc: &xr_sourcebuild::ProgramDesc) -> Result<(), XrError> {
    match desc.stages.iter().find(|s| !xr_sourcebuild::ShaderStage::CLASSIC.contains(&s.stage)) {
        Some(stage) => Err(XrError::invalid_input(format!(
            "program '{}': OpenGL has no {} stage ({}); build it for a Vulkan target",
            desc.name,
            stage.stage.name(),
            stage.file_name
        ))),
        None => Ok(()),
    }
}

/// The GL shader type of a stage (`glCreateShader`); an error naming a
/// stage OpenGL does not have (mesh and ray tracing stages).
pub fn shader_type(stage: xr_sourcebuild::ShaderStage) -> Result<u32, XrError> {
    use xr_sourcebuild::ShaderStage::*;
    Ok(match stage {
        Vertex => glow::VERTEX_SHADER,
        TessControl => glow::TESS_CONTROL_SHADER,
        TessEvaluation => glow::TESS_EVALUATION_SHADER,
        Geometry => glow::GEOMETRY_SHADER,
        Fragment => glow::FRAGMENT_SHADER,
        Compute => glow::COMPUTE_SHADER,
        other => return Err(XrError::invalid_input(format!("OpenGL has no {} stage", other.name()))),
    })
}
