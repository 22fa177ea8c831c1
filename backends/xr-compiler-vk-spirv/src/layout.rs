//! The descriptor layout of a Vulkan program, from the reflection of all
//! of its stages: every set, every binding, merged by (set, binding) with
//! the stage flags of every stage that declares it. Two stages that
//! declare one binding differently are an error naming both.

use ash::vk;
use xr_device::{ResourceKind, XrError};
use xr_sourcebuild::ShaderStage;
use xr_spirv::{container::StageModule, reflect::Reflection};

/// One binding of one set.
#[derive(Clone, Debug)]
pub struct LayoutBinding {
    /// The resource's name (the first stage's).
    pub name: String,
    /// Descriptor set.
    pub set: u32,
    /// Binding in the set.
    pub binding: u32,
    /// Descriptor type.
    pub ty: vk::DescriptorType,
    /// What the caller binds; `None` for the table's own uniform buffers.
    pub kind: Option<ResourceKind>,
    /// Array length (at least 1).
    pub count: u32,
    /// Every stage that uses it.
    pub stages: vk::ShaderStageFlags,
    /// Bytes a buffer needs at least.
    pub min_size: u64,
    /// Index of the uniform block among the program's, for the table's own uniform buffers.
    pub block: Option<usize>,
    /// Other names it is known by: the sampler of a texture and sampler
    /// declared at one binding (HLSL's `register(t1)` + `register(s1)`).
    pub aliases: Vec<String>,
    /// Which stage declared it first, and in which file: for messages.
    declared_by: String,
}

/// Every binding of a program, sorted by set and binding.
pub fn merge(
    context: &str,
    modules: &[StageModule],
    reflections: &[Reflection],
) -> Result<Vec<LayoutBinding>, XrError> {
    let mut bindings: Vec<LayoutBinding> = Vec::new();
    let mut blocks = 0usize;
    for (module, reflection) in modules.iter().zip(reflections) {
        let stage = stage_flag(module.stage);
        let declared_by = format!("{} stage {}", module.stage.name(), module.file);
        let mut found: Vec<LayoutBinding> = Vec::new();
        for block in &reflection.uniform_blocks {
            found.push(LayoutBinding {
                name: block.name.clone(),
                set: block.set,
                binding: block.binding,
                ty: vk::DescriptorType::UNIFORM_BUFFER,
                kind: None,
                count: block.count.max(1),
                stages: stage,
                min_size: block.size.unwrap_or(0) as u64,
                block: None,
                aliases: Vec::new(),
                declared_by: declared_by.clone(),
            });
        }
        for block in &reflection.storage_buffers {
            found.push(LayoutBinding {
                name: block.name.clone(),
                set: block.set,
                binding: block.binding,
                ty: vk::DescriptorType::STORAGE_BUFFER,
                kind: Some(ResourceKind::StorageBuffer),
                count: block.count.max(1),
                stages: stage,
                min_size: block.size.unwrap_or(0) as u64,
                block: None,
                aliases: Vec::new(),
                declared_by: declared_by.clone(),
            });
        }
        for image in &reflection.images {
            let (ty, kind) = match image.kind {
                "sampler" => (vk::DescriptorType::SAMPLER, ResourceKind::Sampler),
                "combined image sampler" => {
                    (vk::DescriptorType::COMBINED_IMAGE_SAMPLER, ResourceKind::CombinedImageSampler)
                }
                "sampled image" => (vk::DescriptorType::SAMPLED_IMAGE, ResourceKind::SampledImage),
                _ => (vk::DescriptorType::STORAGE_IMAGE, ResourceKind::StorageImage),
            };
            if image.count == 0 {
                return Err(XrError::invalid_input(format!(
                    "{context}: '{}' in {declared_by} is an array of unknown size, which needs descriptor indexing",
                    image.name
                )));
            }
            found.push(LayoutBinding {
                name: image.name.clone(),
                set: image.set,
                binding: image.binding,
                ty,
                kind: Some(kind),
                count: image.count,
                stages: stage,
                min_size: 0,
                block: None,
                aliases: Vec::new(),
                declared_by: declared_by.clone(),
            });
        }
        for new in found {
            match bindings.iter_mut().find(|b| b.set == new.set && b.binding == new.binding) {
                // A texture and a sampler at one binding read one combined
                // image sampler, as GLSL's `sampler2D` at that binding does
                // (Vulkan lets a shader see a combined descriptor as either).
                Some(known) if combines(known.ty, new.ty) && known.count == new.count => {
                    let sampler_name =
                        if new.ty == vk::DescriptorType::SAMPLER { new.name.clone() } else { known.name.clone() };
                    if known.ty == vk::DescriptorType::SAMPLER {
                        known.name = new.name.clone();
                    }
                    if !known.aliases.contains(&sampler_name) && sampler_name != known.name {
                        known.aliases.push(sampler_name);
                    }
                    known.ty = vk::DescriptorType::COMBINED_IMAGE_SAMPLER;
                    known.kind = Some(ResourceKind::CombinedImageSampler);
                    known.stages |= new.stages;
                }
                Some(known)
                    if known.ty == vk::DescriptorType::COMBINED_IMAGE_SAMPLER
                        && matches!(new.ty, vk::DescriptorType::SAMPLER | vk::DescriptorType::SAMPLED_IMAGE)
                        && known.count == new.count =>
                {
                    if !known.aliases.contains(&new.name) && new.name != known.name {
                        known.aliases.push(new.name.clone());
                    }
                    known.stages |= new.stages;
                }
                Some(known) if known.ty == new.ty && known.count == new.count => {
                    known.stages |= new.stages;
                    known.min_size = known.min_size.max(new.min_size);
                }
                Some(known) if known.declared_by == new.declared_by => {
                    return Err(XrError::invalid_input(format!(
                        "{context}: {} declares both '{}' ({}) and '{}' ({}) at set {} binding {}",
                        new.declared_by,
                        known.name,
                        describe(known),
                        new.name,
                        describe(&new),
                        new.set,
                        new.binding
                    )));
                }
                Some(known) => {
                    return Err(XrError::invalid_input(format!(
                        "{context}: set {} binding {} is declared differently by two stages: {} declares '{}' ({}), {} declares '{}' ({})",
                        new.set,
                        new.binding,
                        known.declared_by,
                        known.name,
                        describe(known),
                        new.declared_by,
                        new.name,
                        describe(&new)
                    )));
                }
                None => bindings.push(new),
            }
        }
    }
    bindings.sort_by_key(|b| (b.set, b.binding));
    for binding in bindings.iter_mut().filter(|b| b.kind.is_none()) {
        binding.block = Some(blocks);
        blocks += 1;
    }
    Ok(bindings)
}

/// A separate texture and sampler that together make a combined image sampler.
fn combines(a: vk::DescriptorType, b: vk::DescriptorType) -> bool {
    matches!(
        (a, b),
        (vk::DescriptorType::SAMPLED_IMAGE, vk::DescriptorType::SAMPLER)
            | (vk::DescriptorType::SAMPLER, vk::DescriptorType::SAMPLED_IMAGE)
    )
}

fn describe(binding: &LayoutBinding) -> String {
    let what = match binding.kind {
        Some(kind) => kind.name(),
        None => "uniform buffer",
    };
    if binding.count > 1 { format!("{what}[{}]", binding.count) } else { what.to_owned() }
}

/// The Vulkan stage of a program's stage.
pub fn stage_flag(stage: ShaderStage) -> vk::ShaderStageFlags {
    match stage {
        ShaderStage::Vertex => vk::ShaderStageFlags::VERTEX,
        ShaderStage::TessControl => vk::ShaderStageFlags::TESSELLATION_CONTROL,
        ShaderStage::TessEvaluation => vk::ShaderStageFlags::TESSELLATION_EVALUATION,
        ShaderStage::Geometry => vk::ShaderStageFlags::GEOMETRY,
        ShaderStage::Fragment => vk::ShaderStageFlags::FRAGMENT,
        ShaderStage::Compute => vk::ShaderStageFlags::COMPUTE,
    }
}

/// Checks that `stages` make a program: one compute stage, or graphics
/// stages in pipeline order with a vertex stage and both tessellation
/// stages or neither.
pub fn check_stages(context: &str, stages: &[ShaderStage]) -> Result<(), XrError> {
    let order = |s: &ShaderStage| ShaderStage::ALL.iter().position(|a| a == s).unwrap_or(usize::MAX);
    if stages.windows(2).any(|w| order(&w[0]) >= order(&w[1])) {
        return Err(XrError::invalid_input(format!(
            "{context}: stages must be given once each, in pipeline order (vertex, tess-control, tess-evaluation, geometry, fragment)"
        )));
    }
    if stages.contains(&ShaderStage::Compute) {
        if stages.len() != 1 {
            return Err(XrError::invalid_input(format!("{context}: a compute program has one stage, compute")));
        }
        return Ok(());
    }
    if !stages.contains(&ShaderStage::Vertex) {
        return Err(XrError::invalid_input(format!("{context}: a graphics program needs a vertex stage")));
    }
    if stages.contains(&ShaderStage::TessControl) != stages.contains(&ShaderStage::TessEvaluation) {
        return Err(XrError::invalid_input(format!(
            "{context}: tessellation needs both a tess-control and a tess-evaluation stage"
        )));
    }
    Ok(())
}
