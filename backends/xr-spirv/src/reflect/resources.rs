//! An entry point's resources and stage interface, as the reflection
//! library (spirq) lists them.

use super::{grammar, instructions, read_loose_uniforms, spec_constant_defaults};
use crate::work_cache::{self, WorkCache};
use spirq::{
    ReflectConfig,
    ty::{DescriptorType, Type},
    var::Variable,
};
use std::sync::LazyLock;
use xr_device::XrError;
use xr_sourcebuild::{ConstantType, MemberLayout, ScalarKind};
use xr_spirv_object::spirv::Op;
use xr_spirv_object::walk::literal_string;

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
    // The reflection library panics on an instruction its grammar does not
    // know: one in a function body is skipped, one among the declarations
    // refused naming it (`grammar`).
    let readable =
        grammar::for_the_reflector(words, &instructions(words)?).map_err(|e| XrError::invalid_input(e.to_string()))?;
    let entries = ReflectConfig::new()
        .spv(&*readable)
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
    add_atomic_images(words, &readable, entry_point, &mut reflection)?;
    for list in [&mut reflection.inputs, &mut reflection.outputs] {
        list.sort_by_key(|v| (v.location, v.component));
    }
    reflection.spec_constants.sort_by_key(|c| c.id);
    reflection.uniforms = read_loose_uniforms(words)?;
    Ok(reflection)
}

/// Storage images a shader uses only through atomics (`imageAtomicAdd`:
/// an `OpImageTexelPointer`), which the reflection library does not count
/// as a use: found by name among every declared resource (`readable`:
/// `words` as the reflection library reads them).
fn add_atomic_images(
    words: &[u32],
    readable: &[u32],
    entry_point: &str,
    reflection: &mut Reflection,
) -> Result<(), XrError> {
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
        .spv(readable)
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
