//! The stage interface: locations linked between stages compiled apart,
//! and a fragment stage's per-vertex inputs.

use super::{DECORATION_LOCATION, STORAGE_INPUT, STORAGE_OUTPUT, instructions};
use xr_device::XrError;
use xr_spirv_object::spirv::{Decoration, Op};
use xr_spirv_object::walk::literal_string;

/// Late binding for stages compiled apart: each input of
/// `consumer` takes the location of the output of `producer` with the same
/// name. glslang numbers each stage's unlocated interface variables in
/// declaration order, so without this two stages that declare the same
/// varyings in another order would exchange them silently. Inputs with no
/// output of their name keep their location (HLSL matches by semantic).
pub fn link_interface_locations(producer: &[u32], consumer: &mut [u32]) -> Result<(), XrError> {
    let outputs = interface_variables(producer, STORAGE_OUTPUT)?;
    let inputs = interface_variables(consumer, STORAGE_INPUT)?;
    for (name, _, operand) in inputs {
        if let Some((_, location, _)) = outputs.iter().find(|(n, _, _)| *n == name) {
            consumer[operand] = *location;
        }
    }
    Ok(())
}

/// (name, location, index of the Location operand) of a module's located
/// variables of one storage class.
fn interface_variables(words: &[u32], storage: u32) -> Result<Vec<(String, u32, usize)>, XrError> {
    use std::collections::HashMap;
    let mut names = HashMap::new();
    let mut locations = HashMap::new();
    let mut variables = Vec::new();
    for i in instructions(words)? {
        match (i.op(), i.operands) {
            (Some(Op::Name), [target, name @ ..]) => {
                names.insert(*target, literal_string(name));
            }
            (Some(Op::Decorate), [target, DECORATION_LOCATION, location, ..]) => {
                locations.insert(*target, (*location, i.offset + 3));
            }
            (Some(Op::Variable), [_, result, class, ..]) if *class == storage => variables.push(*result),
            _ => {}
        }
    }
    Ok(variables
        .into_iter()
        .filter_map(|id| {
            let (location, operand) = *locations.get(&id)?;
            let name = names.get(&id).filter(|n| !n.is_empty())?.clone();
            Some((name, location, operand))
        })
        .collect())
}

/// The locations of a module's per-vertex inputs: a fragment stage's
/// `pervertexEXT` inputs (decorated `PerVertexKHR`, fragment shader
/// barycentrics), each an array of one value per vertex of the primitive.
pub fn per_vertex_input_locations(words: &[u32]) -> Result<Vec<u32>, XrError> {
    const DECORATION_PER_VERTEX: u32 = Decoration::PerVertexKHR as u32;
    let instructions = instructions(words)?;
    let per_vertex: std::collections::HashSet<u32> = instructions
        .iter()
        .filter_map(|i| match (i.op(), i.operands) {
            (Some(Op::Decorate), [target, DECORATION_PER_VERTEX, ..]) => Some(*target),
            _ => None,
        })
        .collect();
    let mut locations: Vec<u32> = instructions
        .iter()
        .filter_map(|i| match (i.op(), i.operands) {
            (Some(Op::Decorate), [target, DECORATION_LOCATION, location, ..]) if per_vertex.contains(target) => {
                Some(*location)
            }
            _ => None,
        })
        .collect();
    locations.sort_unstable();
    Ok(locations)
}
