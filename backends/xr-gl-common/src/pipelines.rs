//! Separable programs a build system made, and the program pipelines it
//! combines them into (the GL 4.1 path).

use crate::{
    device_gl::DeviceGl,
    gl_ext::{InterfaceVariable, PIPELINE_ORDER, PipelineFns, stage_bit},
};
use std::{collections::HashMap, rc::Rc};
use xr_device::{DeviceCapabilities, ProgramKind, ProgramRef, XrError};
use xr_sourcebuild::ProgramDesc;

/// A separable program: its stage bits and a label naming its files.
struct SeparableProgram {
    stage_bits: u32,
    label: String,
}

/// The separable programs of one attached build system and its pipelines.
pub struct Pipelines {
    fns: Option<Rc<PipelineFns>>,
    separable: HashMap<u32, SeparableProgram>,
    created: Vec<u32>,
}

impl Pipelines {
    /// Loads the entry points where the device has GL 4.1 or `ARB_separate_shader_objects`.
    pub fn new(gl: &DeviceGl, capabilities: &DeviceCapabilities) -> Self {
        let fns =
            capabilities.separate_shader_objects.then(|| PipelineFns::load(gl.loader()).ok()).flatten().map(Rc::new);
        Self { fns, separable: HashMap::new(), created: Vec::new() }
    }

    /// The entry points, where the device has them.
    pub fn fns(&self) -> Option<Rc<PipelineFns>> {
        self.fns.clone()
    }

    /// Fails unless the device can build separable programs.
    pub fn require(&self, context: &str) -> Result<&PipelineFns, XrError> {
        self.fns.as_deref().ok_or_else(|| {
            XrError::unavailable(format!(
                "{context}: separable programs need OpenGL 4.1 or GL_ARB_separate_shader_objects"
            ))
        })
    }

    /// Records a separable program built from `desc`.
    pub fn remember(&mut self, program: u32, desc: &ProgramDesc) {
        let stage_bits = desc.stages.iter().map(|s| stage_bit(s.stage)).fold(0, |a, b| a | b);
        let files: Vec<&str> = desc.stages.iter().map(|s| s.file_name.as_str()).collect();
        let label = format!("'{}' ({})", desc.name, files.join(", "));
        self.separable.insert(program, SeparableProgram { stage_bits, label });
    }

    /// Combines separable programs this build system made into a validated pipeline.
    pub fn create(&mut self, gl: &DeviceGl, programs: &[ProgramRef]) -> Result<ProgramRef, XrError> {
        let fns = self.fns.clone().ok_or_else(|| {
            XrError::unavailable("program pipelines need OpenGL 4.1 or GL_ARB_separate_shader_objects")
        })?;
        let mut stages = Vec::new();
        let mut labels = Vec::new();
        for program in programs {
            let separable = self.separable.get(&program.name).filter(|_| program.kind == ProgramKind::Program);
            let separable = separable.ok_or_else(|| {
                XrError::invalid_input(format!("program {} was not built separable by this build system", program.name))
            })?;
            if stages.iter().any(|(bits, _)| bits & separable.stage_bits != 0) {
                return Err(XrError::invalid_input(format!("{} repeats a stage of the pipeline", separable.label)));
            }
            stages.push((separable.stage_bits, program.name));
            labels.push(separable.label.clone());
        }
        gl.current()?;
        // SAFETY: the context is current and every program is a separable one on it.
        unsafe {
            self.check_interfaces(&fns, &stages)?;
            let pipeline = fns.create_pipeline(&stages);
            if let Err(log) = fns.validate(pipeline) {
                fns.delete_pipeline(pipeline);
                let log = if log.is_empty() { "no log from the driver".to_owned() } else { log.replace('\n', " ") };
                return Err(XrError::invalid_input(format!(
                    "pipeline of {} does not validate: {log}",
                    labels.join(" + ")
                )));
            }
            self.created.push(pipeline);
            Ok(ProgramRef::pipeline(pipeline))
        }
    }

    /// The rule for linked stages: every input of a stage is written,
    /// with the same type, by the stage before it — checked before any
    /// draw, since drivers (Mesa among them) may validate such a pipeline.
    ///
    /// # Safety
    /// The context must be current and the programs separable ones on it.
    unsafe fn check_interfaces(&self, fns: &PipelineFns, stages: &[(u32, u32)]) -> Result<(), XrError> {
        let mut ordered: Vec<(u32, u32)> = stages.to_vec();
        let rank = |bits: u32| PIPELINE_ORDER.iter().position(|b| bits & b != 0).unwrap_or(usize::MAX);
        ordered.sort_by_key(|(bits, _)| rank(*bits));
        let label =
            |program: u32| self.separable.get(&program).map_or_else(|| program.to_string(), |s| s.label.clone());
        for pair in ordered.windows(2) {
            let (producer, consumer) = (pair[0].1, pair[1].1);
            // SAFETY: upheld by the caller.
            let (Some(outputs), Some(inputs)) = (unsafe { fns.interface(producer, glow::PROGRAM_OUTPUT) }, unsafe {
                fns.interface(consumer, glow::PROGRAM_INPUT)
            }) else {
                return Ok(());
            };
            for input in &inputs {
                let partner = outputs.iter().find(|o| {
                    if input.location >= 0 && o.location >= 0 {
                        o.location == input.location
                    } else {
                        o.name == input.name
                    }
                });
                let at = |v: &InterfaceVariable| {
                    let ty = crate::constant_table::constant_type(v.gl_type);
                    if v.location >= 0 {
                        format!("'{}' ({ty}, location {})", v.name, v.location)
                    } else {
                        format!("'{}' ({ty})", v.name)
                    }
                };
                match partner {
                    None => {
                        return Err(XrError::invalid_input(format!(
                            "pipeline stages do not match: {} reads {} which {} does not write",
                            label(consumer),
                            at(input),
                            label(producer)
                        )));
                    }
                    Some(output) if output.gl_type != input.gl_type => {
                        return Err(XrError::invalid_input(format!(
                            "pipeline stages do not match: {} reads {} but {} writes {}",
                            label(consumer),
                            at(input),
                            label(producer),
                            at(output)
                        )));
                    }
                    Some(_) => {}
                }
            }
        }
        Ok(())
    }

    /// Deletes every pipeline made here.
    pub fn release(&mut self, gl: &DeviceGl) {
        if let (Some(fns), Ok(_)) = (&self.fns, gl.current()) {
            for pipeline in self.created.drain(..) {
                // SAFETY: the pipelines were created on this context, which is current.
                unsafe { fns.delete_pipeline(pipeline) };
            }
        }
    }
}
