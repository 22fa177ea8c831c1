//! OpenGL's view of a module: the binding namespaces of its resources,
//! and uniforms outside blocks, with their locations across a program.

use super::{DECORATION_LOCATION, LooseUniform, STORAGE_UNIFORM_CONSTANT, instructions};
use xr_device::XrError;
use xr_sourcebuild::{ConstantType, ScalarKind};
use xr_spirv_object::spirv::{Decoration, Op, StorageClass};
use xr_spirv_object::walk::literal_string;

/// The namespace of an OpenGL binding: GL counts texture units, image
/// units, uniform buffer and storage buffer binding points separately.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GlBindingClass {
    /// A sampler (`sampler2D`): a texture unit.
    TextureUnit,
    /// A storage image (`image2D`): an image unit.
    ImageUnit,
    /// A uniform block.
    UniformBuffer,
    /// A storage block.
    StorageBuffer,
}

/// A `Binding` decoration of a module's resource variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindingDecoration {
    /// Index of the binding number in the module's words (to rewrite it).
    pub word: usize,
    /// The OpenGL namespace of the binding.
    pub class: GlBindingClass,
    /// The binding.
    pub binding: u32,
    /// The variable's name (empty where it has none).
    pub name: String,
    /// Its descriptor set; 0 where it has none, as on OpenGL.
    pub set: u32,
}

/// Every `Binding` decoration of a module's resources.
pub fn gl_bindings(words: &[u32]) -> Result<Vec<BindingDecoration>, XrError> {
    const DECORATION_BUFFER_BLOCK: u32 = Decoration::BufferBlock as u32;
    const DECORATION_BINDING: u32 = Decoration::Binding as u32;
    const DECORATION_DESCRIPTOR_SET: u32 = Decoration::DescriptorSet as u32;
    const STORAGE_UNIFORM: u32 = StorageClass::Uniform as u32;
    const STORAGE_STORAGE_BUFFER: u32 = StorageClass::StorageBuffer as u32;
    let mut types: std::collections::HashMap<u32, (Op, Vec<u32>)> = std::collections::HashMap::new();
    let mut variables: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
    let mut names: std::collections::HashMap<u32, String> = std::collections::HashMap::new();
    let mut buffer_blocks = std::collections::HashSet::new();
    let mut decorations = Vec::new();
    let mut sets: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
    for instruction in instructions(words)? {
        let ops = instruction.operands;
        match instruction.op() {
            Some(Op::Name) if !ops.is_empty() => {
                names.insert(ops[0], literal_string(&ops[1..]));
            }
            Some(
                op @ (Op::TypeImage
                | Op::TypeSampledImage
                | Op::TypeArray
                | Op::TypeRuntimeArray
                | Op::TypeStruct
                | Op::TypePointer),
            ) if !ops.is_empty() => {
                types.insert(ops[0], (op, ops[1..].to_vec()));
            }
            Some(Op::Variable) if ops.len() >= 3 => {
                variables.insert(ops[1], ops[0]);
            }
            Some(Op::Decorate) if ops.len() >= 2 && ops[1] == DECORATION_BUFFER_BLOCK => {
                buffer_blocks.insert(ops[0]);
            }
            Some(Op::Decorate) if ops.len() >= 3 && ops[1] == DECORATION_BINDING => {
                // The binding number is the instruction's fourth word.
                decorations.push((ops[0], instruction.offset + 3, ops[2]));
            }
            Some(Op::Decorate) if ops.len() >= 3 && ops[1] == DECORATION_DESCRIPTOR_SET => {
                sets.insert(ops[0], ops[2]);
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (variable, index, binding) in decorations {
        let Some(pointer) = variables.get(&variable) else { continue };
        let Some((Op::TypePointer, pointer_ops)) = types.get(pointer) else { continue };
        let (storage, mut pointee) = (pointer_ops[0], pointer_ops[1]);
        // Arrays of resources: the element type decides.
        while let Some((Op::TypeArray | Op::TypeRuntimeArray, ops)) = types.get(&pointee) {
            pointee = ops[0];
        }
        let class = match (storage, types.get(&pointee)) {
            (STORAGE_UNIFORM_CONSTANT, Some((Op::TypeSampledImage, _))) => GlBindingClass::TextureUnit,
            // OpTypeImage: `Sampled` 2 is a storage image, 1 a texture.
            (STORAGE_UNIFORM_CONSTANT, Some((Op::TypeImage, ops))) if ops.get(5) == Some(&2) => {
                GlBindingClass::ImageUnit
            }
            (STORAGE_UNIFORM_CONSTANT, Some((Op::TypeImage, _))) => GlBindingClass::TextureUnit,
            (STORAGE_STORAGE_BUFFER, _) => GlBindingClass::StorageBuffer,
            (STORAGE_UNIFORM, _) if buffer_blocks.contains(&pointee) => GlBindingClass::StorageBuffer,
            (STORAGE_UNIFORM, _) => GlBindingClass::UniformBuffer,
            _ => continue,
        };
        let name = names.get(&variable).cloned().unwrap_or_default();
        out.push(BindingDecoration {
            word: index,
            class,
            binding,
            name,
            set: sets.get(&variable).copied().unwrap_or(0),
        });
    }
    Ok(out)
}

/// The [`loose_uniforms`] some function reads, like the resources the
/// reflection library lists. Read from the words alone, so it also works
/// where that library cannot evaluate a module's constants.
pub fn read_loose_uniforms(words: &[u32]) -> Result<Vec<LooseUniform>, XrError> {
    let read = touched_variables(words)?;
    Ok(loose_uniform_variables(words)?.into_iter().filter(|(id, _)| read.contains(id)).map(|(_, u)| u).collect())
}

/// The ids of the variables some function touches: the pointer operand of
/// loads, stores, copies and access chains, pointers passed to calls, and
/// every operand of an instruction newer than the grammar (which may read
/// any of them; the reflection library counts them so too).
/// A uniform no code touches is not part of what a program needs, at any
/// optimisation level (unoptimised modules keep it declared).
fn touched_variables(words: &[u32]) -> Result<std::collections::HashSet<u32>, XrError> {
    let mut read = std::collections::HashSet::new();
    for i in instructions(words)? {
        match (i.op(), i.operands) {
            (Some(Op::Load | Op::AccessChain | Op::InBoundsAccessChain), [_, _, pointer, ..]) => {
                read.insert(*pointer);
            }
            (Some(Op::Store), [pointer, ..]) => {
                read.insert(*pointer);
            }
            (Some(Op::CopyMemory), [target, source, ..]) => {
                read.extend([*target, *source]);
            }
            (Some(Op::FunctionCall), [_, _, _, arguments @ ..]) => read.extend(arguments.iter().copied()),
            (None, operands) => read.extend(operands.iter().copied()),
            _ => {}
        }
    }
    Ok(read)
}

/// Uniforms outside blocks with a location (OpenGL SPIR-V): scalars, vectors, matrices and
/// arrays of them (samplers are reported as images). The reflection library
/// covers Vulkan's resources only, so these are read from the words.
/// Every one the module declares, read or not (their locations are
/// assigned across a program, [`assign_uniform_locations`]).
pub fn loose_uniforms(words: &[u32]) -> Result<Vec<LooseUniform>, XrError> {
    Ok(loose_uniform_variables(words)?.into_iter().map(|(_, uniform)| uniform).collect())
}

/// [`loose_uniforms`] with their variables' ids.
fn loose_uniform_variables(words: &[u32]) -> Result<Vec<(u32, LooseUniform)>, XrError> {
    use std::collections::HashMap;
    /// (display, element type, array length)
    type Known = (String, ConstantType, u32);
    let instructions = instructions(words)?;
    let mut names = HashMap::new();
    let mut locations = HashMap::new();
    let mut types: HashMap<u32, Known> = HashMap::new();
    let mut pointers = HashMap::new();
    let mut constants = HashMap::new();
    for i in &instructions {
        match (i.op(), i.operands) {
            (Some(Op::Name), [target, name @ ..]) => {
                names.insert(*target, literal_string(name));
            }
            (Some(Op::Decorate), [target, DECORATION_LOCATION, location, ..]) => {
                locations.insert(*target, *location);
            }
            (Some(Op::TypeBool), [result]) => {
                types.insert(*result, ("bool".into(), ConstantType::vector(ScalarKind::Bool, 1), 1));
            }
            (Some(Op::TypeInt), [result, 32, signed]) => {
                let (name, kind) = if *signed != 0 { ("i32", ScalarKind::Int) } else { ("u32", ScalarKind::UInt) };
                types.insert(*result, (name.into(), ConstantType::vector(kind, 1), 1));
            }
            (Some(Op::TypeFloat), [result, 32, ..]) => {
                types.insert(*result, ("f32".into(), ConstantType::vector(ScalarKind::Float, 1), 1));
            }
            (Some(Op::TypeVector), [result, component, count]) => {
                if let Some((c, ty, 1)) = types.get(component).cloned() {
                    let ty = ConstantType::vector(ty.scalar, *count as u8);
                    types.insert(*result, (format!("vec{count}<{c}>"), ty, 1));
                }
            }
            (Some(Op::TypeMatrix), [result, column, count]) => {
                if let Some((c, column_ty, 1)) = types.get(column).cloned() {
                    let ty = ConstantType::matrix(*count as u8, column_ty.rows);
                    types.insert(*result, (format!("mat{count}x{}", c.trim_start_matches("vec")), ty, 1));
                }
            }
            (Some(Op::Constant), [_, result, value, ..]) => {
                constants.insert(*result, *value);
            }
            (Some(Op::TypeArray), [result, element, length]) => {
                if let (Some((e, ty, 1)), Some(n)) = (types.get(element).cloned(), constants.get(length)) {
                    types.insert(*result, (format!("[{e}; {n}]"), ty, *n));
                }
            }
            (Some(Op::TypePointer), [result, STORAGE_UNIFORM_CONSTANT, pointee]) => {
                pointers.insert(*result, *pointee);
            }
            _ => {}
        }
    }
    let mut uniforms: Vec<(u32, LooseUniform)> = instructions
        .iter()
        .filter_map(|i| match (i.op(), i.operands) {
            (Some(Op::Variable), [pointer, result, STORAGE_UNIFORM_CONSTANT, ..]) => {
                let (ty, constant_type, array_size) = types.get(pointers.get(pointer)?)?.clone();
                let uniform = LooseUniform {
                    name: names.get(result).cloned().unwrap_or_default(),
                    location: *locations.get(result)?,
                    ty,
                    constant_type,
                    array_size,
                };
                Some((*result, uniform))
            }
            _ => None,
        })
        .collect();
    uniforms.sort_by_key(|(_, u)| u.location);
    Ok(uniforms)
}

/// Gives every uniform outside a block one location per element across all
/// of a program's modules: the same name gets the same location in every
/// stage, different names never share one. glslang numbers each stage's
/// uniforms from 0, which in one OpenGL program makes them collide.
pub fn assign_uniform_locations(modules: &mut [&mut [u32]]) -> Result<(), XrError> {
    use std::collections::HashMap;
    let mut assigned: HashMap<String, u32> = HashMap::new();
    let mut next = 0u32;
    // Opaque uniforms (samplers, images) keep a location of their own too:
    // glslang gives every stage's uniforms locations from 0, and a sampler
    // left at a location a value uniform of another stage also has would
    // alias it in the linked program. They go after every value uniform.
    let mut opaque: Vec<(usize, String, usize)> = Vec::new();
    for (module, words) in modules.iter_mut().enumerate() {
        let uniforms = loose_uniforms(words)?;
        // (variable id, name) of UniformConstant variables, and where each id's Location operand lives.
        let mut names = HashMap::new();
        let mut operand_at = HashMap::new();
        // In declaration order, so that opaque uniforms get the same
        // locations on every run (not in a hash set's order).
        let mut uniform_constants = Vec::new();
        for i in instructions(words)? {
            match (i.op(), i.operands) {
                (Some(Op::Name), [target, name @ ..]) => {
                    names.insert(*target, literal_string(name));
                }
                (Some(Op::Decorate), [target, DECORATION_LOCATION, _, ..]) => {
                    operand_at.insert(*target, i.offset + 3);
                }
                (Some(Op::Variable), [_, id, STORAGE_UNIFORM_CONSTANT, ..]) => {
                    uniform_constants.push(*id);
                }
                _ => {}
            }
        }
        for uniform in &uniforms {
            let location = *assigned.entry(uniform.name.clone()).or_insert_with(|| {
                let location = next;
                next += uniform.array_size.max(1);
                location
            });
            let ids = names.iter().filter(|(_, name)| **name == uniform.name).map(|(id, _)| *id);
            for id in ids {
                if let Some(index) = operand_at.get(&id)
                    && words[*index] == uniform.location
                {
                    words[*index] = location;
                }
            }
        }
        for id in uniform_constants {
            let name = names.get(&id).cloned().unwrap_or_default();
            if let Some(index) = operand_at.get(&id)
                && !uniforms.iter().any(|u| u.name == name)
            {
                opaque.push((module, name, *index));
            }
        }
    }
    // An array of samplers takes a location per element; 64 covers any a driver allows.
    for (module, name, index) in opaque {
        let location = *assigned.entry(name).or_insert_with(|| {
            let location = next;
            next += 64;
            location
        });
        modules[module][index] = location;
    }
    Ok(())
}
