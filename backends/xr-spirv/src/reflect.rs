//! What a SPIR-V module exposes: uniform blocks with member offsets,
//! samplers and textures, storage buffers, push constants, specialization
//! constants with their defaults, and stage inputs and outputs with their
//! locations. Resources the entry point never uses do not appear.

use crate::work_cache::{self, WorkCache};
use spirq::{
    ReflectConfig,
    ty::{DescriptorType, Type},
    var::Variable,
};
use std::sync::LazyLock;
use xr_device::XrError;
pub use xr_sourcebuild::MemberLayout;
use xr_sourcebuild::{ConstantType, ScalarKind};
use xr_spirv_object::spirv::{Decoration, ExecutionMode, Op, StorageClass};
use xr_spirv_object::walk::{self, Instruction, literal_string};

/// A member of a block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockMember {
    /// Member name.
    pub name: String,
    /// Byte offset from the start of the block.
    pub offset: usize,
    /// Type, in SPIR-V reflection's notation.
    pub ty: String,
    /// How the constant table writes it; `None` for structs and other types it cannot set.
    pub layout: Option<MemberLayout>,
}

/// A uniform block, storage buffer or push constant block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// Instance or block name.
    pub name: String,
    /// Descriptor set (0 for push constants).
    pub set: u32,
    /// Binding (0 for push constants).
    pub binding: u32,
    /// Size in bytes, where known.
    pub size: Option<usize>,
    /// Members with offsets.
    pub members: Vec<BlockMember>,
    /// Array length of the block; 1 for a non-array.
    pub count: u32,
}

/// A sampler, texture or image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageResource {
    /// Variable name.
    pub name: String,
    /// Descriptor set.
    pub set: u32,
    /// Binding.
    pub binding: u32,
    /// `sampler`, `combined image sampler`, `sampled image`, `storage image`
    /// or `acceleration structure`.
    pub kind: &'static str,
    /// Array length; 1 for a non-array, 0 for a runtime-sized array.
    pub count: u32,
}

/// A specialization constant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecConstant {
    /// Name.
    pub name: String,
    /// `constant_id`.
    pub id: u32,
    /// Type.
    pub ty: String,
    /// The default written in the source.
    pub default: String,
}

/// A stage input or output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterfaceVariable {
    /// Name.
    pub name: String,
    /// Location.
    pub location: u32,
    /// Component.
    pub component: u32,
    /// Type.
    pub ty: String,
}

/// A uniform outside any block (OpenGL SPIR-V only), set by location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LooseUniform {
    /// Name.
    pub name: String,
    /// Location of its first element.
    pub location: u32,
    /// Type, in SPIR-V reflection's notation.
    pub ty: String,
    /// Type of one element, as the constant table sets it.
    pub constant_type: ConstantType,
    /// Array length; 1 for a non-array (elements take consecutive locations).
    pub array_size: u32,
}

/// A module's reflection, for one entry point.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reflection {
    /// The entry point reflected.
    pub entry_point: String,
    /// Uniforms outside blocks, by location (OpenGL).
    pub uniforms: Vec<LooseUniform>,
    /// Uniform blocks.
    pub uniform_blocks: Vec<Block>,
    /// Storage buffers.
    pub storage_buffers: Vec<Block>,
    /// Push constant blocks.
    pub push_constants: Vec<Block>,
    /// Samplers, textures and images.
    pub images: Vec<ImageResource>,
    /// Specialization constants.
    pub spec_constants: Vec<SpecConstant>,
    /// Stage inputs.
    pub inputs: Vec<InterfaceVariable>,
    /// Stage outputs.
    pub outputs: Vec<InterfaceVariable>,
    /// Input attachments (`subpassInput`), which only Vulkan has.
    pub input_attachments: Vec<InputAttachment>,
    /// Descriptors of kinds the loaders cannot bind (texel buffers): a
    /// loader refuses the program naming them,
    /// before a driver sees a pipeline that lacks them.
    pub unsupported: Vec<UnsupportedResource>,
}

/// An input attachment (`layout(input_attachment_index = 1) uniform subpassInput`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputAttachment {
    /// Variable name.
    pub name: String,
    /// Descriptor set.
    pub set: u32,
    /// Binding.
    pub binding: u32,
    /// `input_attachment_index`: the colour attachment it reads (of an
    /// array, its first element's).
    pub index: u32,
    /// Array length; 1 for a non-array.
    pub count: u32,
}

/// A descriptor of a kind XR's loaders do not bind yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsupportedResource {
    /// Its name in the source.
    pub name: String,
    /// Descriptor set.
    pub set: u32,
    /// Binding.
    pub binding: u32,
    /// What it is, as a person reads it: `an acceleration structure`.
    pub kind: &'static str,
}

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

/// Reflects the entry point `entry_point` of `words`. The reflection of
/// the same words is worked out once per process (a matrix build reflects
/// a shared stage once per variant).
pub fn reflect(words: &[u32], entry_point: &str) -> Result<Reflection, XrError> {
    static REFLECTED: LazyLock<WorkCache<Reflection>> = LazyLock::new(|| WorkCache::new(4 << 20));
    let key =
        work_cache::key([b"xr-spirv-reflect/1".as_slice(), entry_point.as_bytes(), work_cache::word_bytes(words)]);
    if let Some(reflection) = REFLECTED.get(&key) {
        return Ok(Reflection::clone(&reflection));
    }
    let reflection = reflect_uncached(words, entry_point)?;
    // About what it holds: names and types of a few dozen items.
    Ok(Reflection::clone(&REFLECTED.insert(key, reflection, 4096)))
}

fn reflect_uncached(words: &[u32], entry_point: &str) -> Result<Reflection, XrError> {
    // The reflector (spirq) panics on an instruction its grammar does not
    // know (SPIR-V of the Vulkan SDK 1.3.268): such a module is refused
    // naming the instruction, as the compilers of 2026 write some
    // (`SPV_KHR_untyped_pointers`' for descriptor heaps).
    if let Some(unknown) = instructions(words)?.iter().find(|i| i.op().is_none()) {
        return Err(XrError::invalid_input(format!(
            "cannot reflect the SPIR-V: the instruction at word {} has opcode {}, newer than XR's SPIR-V grammar \
             (Vulkan SDK 1.3.268)",
            unknown.offset, unknown.opcode
        )));
    }
    let entries = ReflectConfig::new()
        .spv(words)
        .ref_all_rscs(false)
        .combine_img_samplers(false)
        .reflect()
        .map_err(|e| XrError::invalid_input(format!("cannot reflect the SPIR-V: {e}")))?;
    let entry = entries
        .into_iter()
        .find(|e| e.name == entry_point)
        .ok_or_else(|| XrError::invalid_input(format!("the module has no entry point '{entry_point}'")))?;
    let defaults = spec_constant_defaults(words)?;
    let mut reflection = Reflection { entry_point: entry.name.clone(), ..Reflection::default() };
    for var in entry.vars {
        let name = var.name().unwrap_or("").to_owned();
        let is_input = matches!(var, Variable::Input { .. });
        match var {
            Variable::Input { location, ty, .. } | Variable::Output { location, ty, .. } => {
                if name.starts_with("gl_") {
                    continue;
                }
                let io = InterfaceVariable {
                    name,
                    location: location.loc(),
                    component: location.comp(),
                    ty: ty.to_string(),
                };
                if is_input { reflection.inputs.push(io) } else { reflection.outputs.push(io) }
            }
            Variable::Descriptor { desc_bind, desc_ty, ty, nbind, .. } => {
                let (set, binding) = (desc_bind.set(), desc_bind.bind());
                let image = |kind| ImageResource { name: name.clone(), set, binding, kind, count: nbind };
                let buffer = || Block { count: nbind, ..block(name.clone(), set, binding, &ty) };
                match desc_ty {
                    DescriptorType::UniformBuffer() => reflection.uniform_blocks.push(buffer()),
                    DescriptorType::StorageBuffer(_) => reflection.storage_buffers.push(buffer()),
                    DescriptorType::Sampler() => reflection.images.push(image("sampler")),
                    DescriptorType::CombinedImageSampler() => reflection.images.push(image("combined image sampler")),
                    DescriptorType::SampledImage() => reflection.images.push(image("sampled image")),
                    DescriptorType::StorageImage(_) => reflection.images.push(image("storage image")),
                    DescriptorType::AccelStruct() => reflection.images.push(image("acceleration structure")),
                    DescriptorType::InputAttachment(index) => {
                        reflection.input_attachments.push(InputAttachment { name, set, binding, index, count: nbind })
                    }
                    other => {
                        let kind = match other {
                            DescriptorType::UniformTexelBuffer() => "a uniform texel buffer (samplerBuffer)",
                            DescriptorType::StorageTexelBuffer(_) => "a storage texel buffer (imageBuffer)",
                            _ => "a descriptor of a kind XR does not know",
                        };
                        reflection.unsupported.push(UnsupportedResource { name, set, binding, kind });
                    }
                }
            }
            Variable::PushConstant { ty, .. } => reflection.push_constants.push(block(name, 0, 0, &ty)),
            Variable::SpecConstant { spec_id, ty, .. } => {
                let default =
                    defaults.iter().find(|(id, _)| *id == spec_id).map(|(_, d)| d.clone()).unwrap_or_default();
                reflection.spec_constants.push(SpecConstant { name, id: spec_id, ty: ty.to_string(), default });
            }
        }
    }
    add_atomic_images(words, entry_point, &mut reflection)?;
    for list in [&mut reflection.inputs, &mut reflection.outputs] {
        list.sort_by_key(|v| (v.location, v.component));
    }
    reflection.spec_constants.sort_by_key(|c| c.id);
    reflection.uniforms = read_loose_uniforms(words)?;
    Ok(reflection)
}

/// The [`loose_uniforms`] some function reads, like the resources the
/// reflection library lists. Read from the words alone, so it also works
/// where that library cannot evaluate a module's constants.
pub fn read_loose_uniforms(words: &[u32]) -> Result<Vec<LooseUniform>, XrError> {
    let read = touched_variables(words)?;
    Ok(loose_uniform_variables(words)?.into_iter().filter(|(id, _)| read.contains(id)).map(|(_, u)| u).collect())
}

/// The ids of the variables some function touches: the pointer operand of
/// loads, stores, copies and access chains, and pointers passed to calls.
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
            _ => {}
        }
    }
    Ok(read)
}

/// Storage images a shader uses only through atomics (`imageAtomicAdd`:
/// an `OpImageTexelPointer`), which the reflection library does not count
/// as a use: found by name among every declared resource.
fn add_atomic_images(words: &[u32], entry_point: &str, reflection: &mut Reflection) -> Result<(), XrError> {
    let all = instructions(words)?;
    let pointed: std::collections::HashSet<u32> = all
        .iter()
        .filter(|i| i.op() == Some(Op::ImageTexelPointer) && i.operands.len() > 2)
        .map(|i| i.operands[2])
        .collect();
    if pointed.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = all
        .iter()
        .filter(|i| i.op() == Some(Op::Name) && !i.operands.is_empty() && pointed.contains(&i.operands[0]))
        .map(|i| literal_string(&i.operands[1..]))
        .collect();
    let entries = ReflectConfig::new()
        .spv(words)
        .ref_all_rscs(true)
        .combine_img_samplers(false)
        .reflect()
        .map_err(|e| XrError::invalid_input(format!("cannot reflect the SPIR-V: {e}")))?;
    let Some(entry) = entries.into_iter().find(|e| e.name == entry_point) else { return Ok(()) };
    for var in entry.vars {
        if let Variable::Descriptor { desc_bind, desc_ty: DescriptorType::StorageImage(_), nbind, .. } = &var {
            let name = var.name().unwrap_or("").to_owned();
            if names.contains(&name) && !reflection.images.iter().any(|i| i.name == name) {
                reflection.images.push(ImageResource {
                    name,
                    set: desc_bind.set(),
                    binding: desc_bind.bind(),
                    kind: "storage image",
                    count: *nbind,
                });
            }
        }
    }
    Ok(())
}

fn block(name: String, set: u32, binding: u32, ty: &Type) -> Block {
    let (members, size) = match ty {
        Type::Struct(s) => (
            s.members
                .iter()
                .map(|m| BlockMember {
                    name: m.name.clone().unwrap_or_default(),
                    offset: m.offset.unwrap_or(0),
                    ty: m.ty.to_string(),
                    layout: member_layout(&m.ty),
                })
                .collect(),
            ty.nbyte(),
        ),
        _ => (Vec::new(), ty.nbyte()),
    };
    // Buffers are known by their block name, as OpenGL's program interface
    // names them (the instance name where the block has none).
    let name = match ty {
        Type::Struct(s) => s.name.clone().filter(|n| !n.is_empty()).unwrap_or(name),
        _ => name,
    };
    // A runtime-sized last member: the fixed part before it.
    let size = size.or_else(|| members.last().map(|m| m.offset));
    Block { name, set, binding, size, members, count: 1 }
}

fn member_layout(ty: &Type) -> Option<MemberLayout> {
    use spirq::ty::{MatrixAxisOrder, ScalarType};
    let scalar = |s: &ScalarType| match s {
        ScalarType::Float { bits: 32 } => Some(ScalarKind::Float),
        ScalarType::Integer { bits: 32, is_signed: true } => Some(ScalarKind::Int),
        ScalarType::Integer { bits: 32, is_signed: false } => Some(ScalarKind::UInt),
        ScalarType::Boolean => Some(ScalarKind::Bool),
        _ => None,
    };
    let single = |ty: &Type| -> Option<MemberLayout> {
        let plain =
            |ty: ConstantType| MemberLayout { ty, array_size: 1, array_stride: 0, matrix_stride: 0, row_major: false };
        match ty {
            Type::Scalar(s) => Some(plain(ConstantType::vector(scalar(s)?, 1))),
            Type::Vector(v) => Some(plain(ConstantType::vector(scalar(&v.scalar_ty)?, v.nscalar as u8))),
            Type::Matrix(m) if scalar(&m.vector_ty.scalar_ty)? == ScalarKind::Float => Some(MemberLayout {
                ty: ConstantType::matrix(m.nvector as u8, m.vector_ty.nscalar as u8),
                array_size: 1,
                array_stride: 0,
                matrix_stride: m.stride.unwrap_or(16),
                row_major: m.axis_order == Some(MatrixAxisOrder::RowMajor),
            }),
            _ => None,
        }
    };
    match ty {
        Type::Array(a) => {
            let element = single(&a.element_ty)?;
            Some(MemberLayout { array_size: a.nelement?, array_stride: a.stride?, ..element })
        }
        other => single(other),
    }
}

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

// Operand values matched in slice patterns (which take constants, not casts).
const DECORATION_LOCATION: u32 = Decoration::Location as u32;
const DECORATION_SPEC_ID: u32 = Decoration::SpecId as u32;
const STORAGE_UNIFORM_CONSTANT: u32 = StorageClass::UniformConstant as u32;
const STORAGE_INPUT: u32 = StorageClass::Input as u32;
const STORAGE_OUTPUT: u32 = StorageClass::Output as u32;

/// Every instruction of the module `words`, walked with
/// [`xr_spirv_object::walk`]; a malformed module is an invalid input.
pub(crate) fn instructions(words: &[u32]) -> Result<Vec<Instruction<'_>>, XrError> {
    walk::instruction_list(words).map_err(|e| XrError::invalid_input(e.to_string()))
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

/// What a variable of a ray tracing stage's interface carries between stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RayStorage {
    /// A payload a stage traces rays with (`rayPayloadEXT`).
    Payload,
    /// The payload of the ray that reached a hit or miss stage (`rayPayloadInEXT`).
    IncomingPayload,
    /// What an intersection stage reports and hit stages read (`hitAttributeEXT`).
    HitAttribute,
    /// Data a stage calls a callable stage with (`callableDataEXT`).
    CallableData,
    /// The data a callable stage was called with (`callableDataInEXT`).
    IncomingCallableData,
}

impl RayStorage {
    /// How a message names it.
    pub fn name(self) -> &'static str {
        match self {
            RayStorage::Payload => "ray payload",
            RayStorage::IncomingPayload => "incoming ray payload",
            RayStorage::HitAttribute => "hit attribute",
            RayStorage::CallableData => "callable data",
            RayStorage::IncomingCallableData => "incoming callable data",
        }
    }
}

/// One variable of a ray tracing stage's interface: its kind, its name
/// and its type, written out by structure (`{vec3<f32>, f32}`), which is
/// what must agree between the stages that share it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RayVariable {
    /// What it carries.
    pub storage: RayStorage,
    /// Its name in the source (empty where the module has no names).
    pub name: String,
    /// Its type by structure; member names do not count.
    pub ty: String,
    /// The scalars it is made of, in order (`f32` three times for a
    /// `vec3` and for a struct of one `vec3`): two stages agree on a payload
    /// whose scalars are the same, as its memory is.
    pub scalars: Vec<String>,
}

/// The ray payloads, hit attributes and callable data a module declares.
pub fn ray_interface(words: &[u32]) -> Result<Vec<RayVariable>, XrError> {
    use std::collections::HashMap;
    let instructions = instructions(words)?;
    let by_id: HashMap<u32, &Instruction<'_>> = instructions
        .iter()
        .filter_map(|i| {
            let result = match i.op()? {
                Op::TypeVoid
                | Op::TypeBool
                | Op::TypeInt
                | Op::TypeFloat
                | Op::TypeVector
                | Op::TypeMatrix
                | Op::TypeArray
                | Op::TypeRuntimeArray
                | Op::TypeStruct
                | Op::TypePointer => *i.operands.first()?,
                Op::Constant => *i.operands.get(1)?,
                _ => return None,
            };
            Some((result, i))
        })
        .collect();
    let names: HashMap<u32, String> = instructions
        .iter()
        .filter(|i| i.op() == Some(Op::Name))
        .filter_map(|i| Some((*i.operands.first()?, literal_string(i.operands.get(1..)?))))
        .collect();
    let mut variables = Vec::new();
    for i in &instructions {
        let (Some(Op::Variable), [pointer, id, class, ..]) = (i.op(), i.operands) else { continue };
        let storage = match StorageClass::from_u32(*class) {
            Some(StorageClass::RayPayloadKHR) => RayStorage::Payload,
            Some(StorageClass::IncomingRayPayloadKHR) => RayStorage::IncomingPayload,
            Some(StorageClass::HitAttributeKHR) => RayStorage::HitAttribute,
            Some(StorageClass::CallableDataKHR) => RayStorage::CallableData,
            Some(StorageClass::IncomingCallableDataKHR) => RayStorage::IncomingCallableData,
            _ => continue,
        };
        let pointee = by_id.get(pointer).and_then(|p| p.operands.get(2)).copied().unwrap_or(0);
        let mut scalars = Vec::new();
        scalars_of(&by_id, pointee, 0, &mut scalars);
        variables.push(RayVariable {
            storage,
            name: names.get(id).cloned().unwrap_or_default(),
            ty: type_by_structure(&by_id, pointee, 0),
            scalars,
        });
    }
    Ok(variables)
}

/// Type `id` written out by structure, as [`RayVariable::ty`] is.
fn type_by_structure(by_id: &std::collections::HashMap<u32, &Instruction<'_>>, id: u32, depth: u32) -> String {
    let Some(i) = by_id.get(&id).filter(|_| depth < 16) else { return format!("%{id}") };
    let inner = |id: u32| type_by_structure(by_id, id, depth + 1);
    match (i.op(), i.operands) {
        (Some(Op::TypeBool), _) => "bool".into(),
        (Some(Op::TypeFloat), [_, width, ..]) => format!("f{width}"),
        (Some(Op::TypeInt), [_, width, signed, ..]) => format!("{}{width}", if *signed == 1 { "i" } else { "u" }),
        (Some(Op::TypeVector), [_, component, count, ..]) => format!("vec{count}<{}>", inner(*component)),
        (Some(Op::TypeMatrix), [_, column, count, ..]) => format!("mat{count}<{}>", inner(*column)),
        (Some(Op::TypeArray), [_, element, length, ..]) => {
            let length = match by_id.get(length).map(|c| (c.op(), c.operands)) {
                Some((Some(Op::Constant), [_, _, value, ..])) => value.to_string(),
                _ => format!("%{length}"),
            };
            format!("[{}; {length}]", inner(*element))
        }
        (Some(Op::TypeRuntimeArray), [_, element, ..]) => format!("[{}]", inner(*element)),
        (Some(Op::TypeStruct), [_, members @ ..]) => {
            format!("{{{}}}", members.iter().map(|m| inner(*m)).collect::<Vec<_>>().join(", "))
        }
        _ => format!("%{id}"),
    }
}

/// The scalars of type `id`, in memory order, into `out`.
fn scalars_of(by_id: &std::collections::HashMap<u32, &Instruction<'_>>, id: u32, depth: u32, out: &mut Vec<String>) {
    let Some(i) = by_id.get(&id).filter(|_| depth < 16) else {
        out.push(format!("%{id}"));
        return;
    };
    let repeat = |element: u32, count: u32, out: &mut Vec<String>| {
        for _ in 0..count.min(4096) {
            scalars_of(by_id, element, depth + 1, out);
        }
    };
    match (i.op(), i.operands) {
        (Some(Op::TypeVector | Op::TypeMatrix), [_, element, count, ..]) => repeat(*element, *count, out),
        (Some(Op::TypeArray), [_, element, length, ..]) => match by_id.get(length).map(|c| (c.op(), c.operands)) {
            Some((Some(Op::Constant), [_, _, value, ..])) => repeat(*element, *value, out),
            _ => out.push(format!("%{id}")),
        },
        (Some(Op::TypeStruct), [_, members @ ..]) => {
            for member in members {
                scalars_of(by_id, *member, depth + 1, out);
            }
        }
        _ => out.push(type_by_structure(by_id, id, depth)),
    }
}

/// Whether a module traces rays (`OpTraceRayKHR`): a hit or miss stage
/// that does needs a pipeline of recursion depth 2 (a shadow ray).
pub fn traces_rays(words: &[u32]) -> Result<bool, XrError> {
    Ok(instructions(words)?.iter().any(|i| i.op() == Some(Op::TraceRayKHR)))
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
