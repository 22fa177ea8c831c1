//! What a module declares: its entry points, execution modes,
//! capabilities, extensions and specialization constants.

use super::{DECORATION_SPEC_ID, instructions};
use xr_device::XrError;
use xr_spirv_object::spirv::{ExecutionMode, Op};
use xr_spirv_object::walk::literal_string;

/// The entry point names of a module.
pub fn entry_points(words: &[u32]) -> Result<Vec<String>, XrError> {
    let mut names = Vec::new();
    for instruction in instructions(words)? {
        if instruction.op() == Some(Op::EntryPoint) && instruction.operands.len() > 2 {
            names.push(literal_string(&instruction.operands[2..]));
        }
    }
    Ok(names)
}

/// The `OutputVertices` execution mode of a module (a tessellation control
/// stage's patch size), if it declares one.
pub fn output_vertices(words: &[u32]) -> Result<Option<u32>, XrError> {
    const MODE_OUTPUT_VERTICES: u32 = ExecutionMode::OutputVertices as u32;
    Ok(instructions(words)?
        .iter()
        .find(|i| i.op() == Some(Op::ExecutionMode) && i.operands.get(1) == Some(&MODE_OUTPUT_VERTICES))
        .and_then(|i| i.operands.get(2).copied()))
}

/// The literal operands of the first execution mode `mode` a module
/// declares (after the entry point it applies to): `[x, y, z]` for
/// `LocalSize`, `[n]` for `OutputVertices`; `None` where it is not declared.
pub fn execution_mode(words: &[u32], mode: ExecutionMode) -> Result<Option<Vec<u32>>, XrError> {
    let mode = mode as u32;
    Ok(instructions(words)?
        .iter()
        .find(|i| i.op() == Some(Op::ExecutionMode) && i.operands.get(1) == Some(&mode))
        .map(|i| i.operands.get(2..).unwrap_or_default().to_vec()))
}

/// The capabilities a module declares (`OpCapability`), as numbers.
pub fn declared_capabilities(words: &[u32]) -> Result<Vec<u32>, XrError> {
    Ok(instructions(words)?
        .iter()
        .filter_map(|i| match (i.op(), i.operands) {
            (Some(Op::Capability), [capability, ..]) => Some(*capability),
            _ => None,
        })
        .collect())
}

/// The SPIR-V extensions a module declares (`OpExtension`), in order.
pub fn declared_extensions(words: &[u32]) -> Result<Vec<String>, XrError> {
    Ok(instructions(words)?
        .iter()
        .filter(|i| i.op() == Some(Op::Extension))
        .map(|i| literal_string(i.operands))
        .collect())
}

/// The ids of the specialization constants a module declares (an OpenGL
/// driver refuses to specialize an id its module does not have).
pub fn spec_constant_ids(words: &[u32]) -> Result<Vec<u32>, XrError> {
    Ok(spec_constant_defaults(words)?.into_iter().map(|(id, _)| id).collect())
}

/// (spec id, default as text) of every specialization constant.
pub(crate) fn spec_constant_defaults(words: &[u32]) -> Result<Vec<(u32, String)>, XrError> {
    let instructions = instructions(words)?;
    let mut spec_ids = std::collections::HashMap::new();
    let mut scalar_types = std::collections::HashMap::new();
    for i in &instructions {
        match (i.op(), i.operands) {
            (Some(Op::Decorate), [target, DECORATION_SPEC_ID, id, ..]) => {
                spec_ids.insert(*target, *id);
            }
            (Some(Op::TypeBool), [result]) => {
                scalar_types.insert(*result, ('b', 32, false));
            }
            (Some(Op::TypeInt), [result, width, signed]) => {
                scalar_types.insert(*result, ('i', *width, *signed != 0));
            }
            (Some(Op::TypeFloat), [result, width, ..]) => {
                scalar_types.insert(*result, ('f', *width, true));
            }
            _ => {}
        }
    }
    let mut defaults = Vec::new();
    for i in &instructions {
        let (result, value) = match (i.op(), i.operands) {
            (Some(Op::SpecConstantTrue), [_, result]) => (*result, "true".to_owned()),
            (Some(Op::SpecConstantFalse), [_, result]) => (*result, "false".to_owned()),
            (Some(Op::SpecConstant), [ty, result, value, ..]) => {
                let text = match scalar_types.get(ty) {
                    Some(('f', 32, _)) => f32::from_bits(*value).to_string(),
                    Some(('i', 32, true)) => (*value as i32).to_string(),
                    _ => value.to_string(),
                };
                (*result, text)
            }
            _ => continue,
        };
        if let Some(id) = spec_ids.get(&result) {
            defaults.push((*id, value));
        }
    }
    Ok(defaults)
}
