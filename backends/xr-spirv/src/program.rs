//! The step between compiling a program's stages and loading them, shared by
//! the SPIR-V build systems and `xr build`, so that what is stored offline is
//! exactly what a build system would load.

use crate::{TargetEnv, container::StageModule};
use xr_device::XrError;

/// Links a program's stage modules for `target`: on OpenGL every loose
/// uniform gets one program-wide location (glslang numbers each stage from
/// 0); on every target each stage's inputs take the locations the stage
/// before it writes them at, by name.
pub fn finish_program(modules: &mut [StageModule], target: TargetEnv) -> Result<(), XrError> {
    if target == TargetEnv::OpenGl45 {
        let mut words: Vec<&mut [u32]> = modules.iter_mut().map(|m| m.words.as_mut_slice()).collect();
        crate::assign_uniform_locations(&mut words)?;
    }
    link_stages(modules)
}

/// Gives each stage's inputs the locations the stage before it writes them
/// at, by name (stages in pipeline order).
fn link_stages(modules: &mut [StageModule]) -> Result<(), XrError> {
    let mut indices: Vec<usize> = (0..modules.len()).collect();
    indices.sort_by_key(|i| modules[*i].stage.pipeline_order());
    for pair in indices.windows(2) {
        let producer = modules[pair[0]].words.clone();
        crate::link_interface_locations(&producer, &mut modules[pair[1]].words)?;
    }
    Ok(())
}
