//! The descriptor layout of a Vulkan program, from the reflection of all
//! of its stages: every set, every binding, merged by (set, binding) with
//! the stage flags of every stage that declares it. Two stages that
//! declare one binding differently are an error naming both.

use ash::vk;
use xr_device::{ResourceKind, XrError};
use xr_sourcebuild::{PipelineKind, ShaderStage};
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
    /// Array length (at least 1): for an array of unknown size
    /// (`sampler2D textures[]`), the length XR gives it ([`RuntimeArrays`]).
    pub count: u32,
    /// An array of unknown size, laid out partially bound: elements the
    /// program never reads may stay unbound.
    pub partially_bound: bool,
    /// Every stage that uses it.
    pub stages: vk::ShaderStageFlags,
    /// Bytes a buffer needs at least.
    pub min_size: u64,
    /// Index of the uniform block among the program's, for the table's own uniform buffers.
    pub block: Option<usize>,
    /// An input attachment's `input_attachment_index` (of an array, its
    /// first element's): the device binds it, from the target it draws into.
    pub input_attachment: Option<u32>,
    /// Other names it is known by: the sampler of a texture and sampler
    /// declared at one binding (HLSL's `register(t1)` + `register(s1)`).
    pub aliases: Vec<String>,
    /// A uniform block's members (name, offset): two stages' blocks at one
    /// binding must be the same block.
    pub members: Vec<(String, usize)>,
    /// Which stage declared it first, and in which file: for messages.
    declared_by: String,
}

/// How a device lays out arrays of unknown size (`sampler2D textures[]`,
/// descriptor indexing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeArrays {
    /// Each gets this many elements, partially bound.
    Length(u32),
    /// The device cannot: the features it lacks, for the error.
    Lacking(&'static str),
}

/// The elements XR gives an array of unknown size: enough for a bindless
/// material set, few enough that every program does not reserve a large
/// pool; lowered to the device's per-stage limit.
pub const RUNTIME_ARRAY_LENGTH: u32 = 1024;

/// Every binding of a program, sorted by set and binding.
pub fn merge(
    context: &str,
    modules: &[StageModule],
    reflections: &[Reflection],
    runtime_arrays: RuntimeArrays,
) -> Result<Vec<LayoutBinding>, XrError> {
    let mut bindings: Vec<LayoutBinding> = Vec::new();
    for (module, reflection) in modules.iter().zip(reflections) {
        let declared_by = format!("{} stage {}", module.stage.name(), module.file);
        refuse_unsupported(context, reflection, &declared_by)?;
        let stage =
            StageDeclarations { context, stage: stage_flag(module.stage), declared_by: &declared_by, runtime_arrays };
        for new in stage.bindings(reflection)? {
            add_binding(context, &mut bindings, new)?;
        }
    }
    bindings.sort_by_key(|b| (b.set, b.binding));
    number_uniform_blocks(&mut bindings);
    Ok(bindings)
}

/// Refuses a stage that declares a kind of descriptor XR's Vulkan loader
/// does not bind. Refused here, before any Vulkan call: a pipeline whose
/// layout lacks a descriptor the shader reads is undefined behaviour, and
/// lavapipe dies of it (SIGSEGV) rather than failing.
fn refuse_unsupported(context: &str, reflection: &Reflection, declared_by: &str) -> Result<(), XrError> {
    match reflection.unsupported.first() {
        Some(resource) => Err(XrError::invalid_input(format!(
            "{context}: '{}' (set {}, binding {}) in {declared_by} is {}: XR's Vulkan loader does not bind that kind of descriptor",
            resource.name, resource.set, resource.binding, resource.kind
        ))),
        None => Ok(()),
    }
}

/// One stage of a program, as the bindings it declares are laid out.
struct StageDeclarations<'a> {
    /// The program, for messages.
    context: &'a str,
    stage: vk::ShaderStageFlags,
    /// The stage and its file, for messages.
    declared_by: &'a str,
    runtime_arrays: RuntimeArrays,
}

impl StageDeclarations<'_> {
    /// Every binding the stage declares, in this order: uniform blocks,
    /// storage buffers, images (samplers, textures, storage images and
    /// acceleration structures), input attachments.
    fn bindings(&self, reflection: &Reflection) -> Result<Vec<LayoutBinding>, XrError> {
        use vk::DescriptorType as T;
        let mut found: Vec<LayoutBinding> = Vec::new();
        for block in &reflection.uniform_blocks {
            let uniform =
                self.binding(&block.name, (block.set, block.binding), T::UNIFORM_BUFFER, None, block.count)?;
            found.push(LayoutBinding {
                min_size: block.size.unwrap_or(0) as u64,
                members: block_signature(block),
                ..uniform
            });
        }
        for block in &reflection.storage_buffers {
            let kind = Some(ResourceKind::StorageBuffer);
            let storage =
                self.binding(&block.name, (block.set, block.binding), T::STORAGE_BUFFER, kind, block.count)?;
            found.push(LayoutBinding { min_size: block.size.unwrap_or(0) as u64, ..storage });
        }
        for image in &reflection.images {
            let (ty, kind) = image_descriptor(image.kind);
            found.push(self.binding(&image.name, (image.set, image.binding), ty, Some(kind), image.count)?);
        }
        for input in &reflection.input_attachments {
            let count = input.count.max(1);
            let attachment = self.binding(&input.name, (input.set, input.binding), T::INPUT_ATTACHMENT, None, count)?;
            found.push(LayoutBinding { input_attachment: Some(input.index), ..attachment });
        }
        Ok(found)
    }

    /// A binding of `count` elements (0: an array of unknown size, given
    /// the device's length, partially bound), of no size, members or
    /// aliases.
    fn binding(
        &self,
        name: &str,
        (set, binding): (u32, u32),
        ty: vk::DescriptorType,
        kind: Option<ResourceKind>,
        count: u32,
    ) -> Result<LayoutBinding, XrError> {
        Ok(LayoutBinding {
            name: name.to_owned(),
            set,
            binding,
            ty,
            kind,
            count: if count == 0 { self.runtime_length(name)? } else { count },
            partially_bound: count == 0,
            stages: self.stage,
            min_size: 0,
            block: None,
            input_attachment: None,
            aliases: Vec::new(),
            members: Vec::new(),
            declared_by: self.declared_by.to_owned(),
        })
    }

    /// The length an array of unknown size `name` gets, or why it cannot have one.
    fn runtime_length(&self, name: &str) -> Result<u32, XrError> {
        let (context, declared_by) = (self.context, self.declared_by);
        match self.runtime_arrays {
            RuntimeArrays::Length(length) => Ok(length),
            RuntimeArrays::Lacking(features) => Err(XrError::unavailable(format!(
                "{context}: '{name}' in {declared_by} is an array of unknown size, which needs descriptor indexing \
                 ({features}); this device does not have it"
            ))),
        }
    }
}

/// The descriptor type and resource kind of a reflected image of `kind`.
fn image_descriptor(kind: &str) -> (vk::DescriptorType, ResourceKind) {
    match kind {
        "sampler" => (vk::DescriptorType::SAMPLER, ResourceKind::Sampler),
        "combined image sampler" => (vk::DescriptorType::COMBINED_IMAGE_SAMPLER, ResourceKind::CombinedImageSampler),
        "sampled image" => (vk::DescriptorType::SAMPLED_IMAGE, ResourceKind::SampledImage),
        "acceleration structure" => {
            (vk::DescriptorType::ACCELERATION_STRUCTURE_KHR, ResourceKind::AccelerationStructure)
        }
        _ => (vk::DescriptorType::STORAGE_IMAGE, ResourceKind::StorageImage),
    }
}

/// Adds a stage's binding `new` to the program's `bindings`: a binding of
/// its own, or joined to the one an earlier stage declared at its set and
/// binding where the two can be one descriptor; an error naming both where
/// they cannot.
fn add_binding(context: &str, bindings: &mut Vec<LayoutBinding>, new: LayoutBinding) -> Result<(), XrError> {
    let Some(known) = bindings.iter_mut().find(|b| b.set == new.set && b.binding == new.binding) else {
        bindings.push(new);
        return Ok(());
    };
    if combines(known.ty, new.ty) && known.count == new.count {
        combine_texture_and_sampler(known, &new);
    } else if known.ty == vk::DescriptorType::COMBINED_IMAGE_SAMPLER
        && matches!(new.ty, vk::DescriptorType::SAMPLER | vk::DescriptorType::SAMPLED_IMAGE)
        && known.count == new.count
    {
        add_alias(known, &new.name);
        known.stages |= new.stages;
    } else if known.ty == new.ty && known.count == new.count && compatible(&known.members, &new.members) {
        join_same_binding(known, &new);
    } else if known.declared_by == new.declared_by {
        return Err(declared_twice(context, known, &new));
    } else {
        return Err(declared_differently(context, known, &new));
    }
    Ok(())
}

/// A texture and a sampler at one binding read one combined image sampler,
/// as GLSL's `sampler2D` at that binding does (Vulkan lets a shader see a
/// combined descriptor as either): `known` becomes that, named after the
/// texture, the sampler's name an alias.
fn combine_texture_and_sampler(known: &mut LayoutBinding, new: &LayoutBinding) {
    let sampler_name = if new.ty == vk::DescriptorType::SAMPLER { new.name.clone() } else { known.name.clone() };
    if known.ty == vk::DescriptorType::SAMPLER {
        known.name = new.name.clone();
    }
    add_alias(known, &sampler_name);
    known.ty = vk::DescriptorType::COMBINED_IMAGE_SAMPLER;
    known.kind = Some(ResourceKind::CombinedImageSampler);
    known.stages |= new.stages;
}

/// `name` among the names `binding` is known by, unless it is one already.
fn add_alias(binding: &mut LayoutBinding, name: &str) {
    if !binding.aliases.iter().any(|a| a == name) && name != binding.name {
        binding.aliases.push(name.to_owned());
    }
}

/// Two declarations of one binding that agree: one binding, used by both
/// stages, with the members of both and the larger size.
fn join_same_binding(known: &mut LayoutBinding, new: &LayoutBinding) {
    for member in &new.members {
        if !known.members.contains(member) {
            known.members.push(member.clone());
        }
    }
    known.stages |= new.stages;
    known.min_size = known.min_size.max(new.min_size);
}

/// The error of a stage that declares two different resources at one binding.
fn declared_twice(context: &str, known: &LayoutBinding, new: &LayoutBinding) -> XrError {
    XrError::invalid_input(format!(
        "{context}: {} declares both '{}' ({}) and '{}' ({}) at set {} binding {}",
        new.declared_by,
        known.name,
        describe(known),
        new.name,
        describe(new),
        new.set,
        new.binding
    ))
}

/// The error of two stages that declare one binding differently.
fn declared_differently(context: &str, known: &LayoutBinding, new: &LayoutBinding) -> XrError {
    XrError::invalid_input(format!(
        "{context}: set {} binding {} is declared differently by two stages: {} declares '{}' ({}), {} declares '{}' ({})",
        new.set,
        new.binding,
        known.declared_by,
        known.name,
        describe(known),
        new.declared_by,
        new.name,
        describe(new)
    ))
}

/// Numbers the table's own uniform buffers (uniform blocks, not buffers the
/// caller binds), in binding order: their index among the program's blocks.
fn number_uniform_blocks(bindings: &mut [LayoutBinding]) {
    let blocks = bindings.iter_mut().filter(|b| b.ty == vk::DescriptorType::UNIFORM_BUFFER && b.kind.is_none());
    for (index, binding) in blocks.enumerate() {
        binding.block = Some(index);
    }
}

/// HLSL's loose globals (`float4 tint;` outside any `cbuffer`) are a
/// uniform block, `$Global`, that glslang places at set 0 in each stage on
/// its own: at binding 0 unless a register took it. Two stages with
/// globals would then share one binding with two different blocks, and a
/// stage's globals can land where another stage declared `register(t0)`.
/// Each stage's `$Global` that meets another declaration is moved to a
/// binding no one uses (the modules' words are changed; its members are
/// still found by name). Returns whether anything moved.
pub fn separate_globals(modules: &mut [StageModule]) -> Result<bool, XrError> {
    use std::collections::BTreeMap;
    const GLOBALS: &str = "$Global";
    let reflections: Vec<Reflection> =
        modules.iter().map(|m| xr_spirv::reflect(&m.words, &m.entry_point)).collect::<Result<_, _>>()?;
    // Set-0 bindings of everything that is not a `$Global`: `None`; of a
    // `$Global` kept where it is: its members (an identical one may share it).
    let mut taken: BTreeMap<u32, Option<Vec<(String, usize)>>> = BTreeMap::new();
    let mut highest = 0;
    for reflection in &reflections {
        let blocks = reflection.uniform_blocks.iter().chain(&reflection.storage_buffers);
        for (set, binding, globals) in blocks
            .map(|b| (b.set, b.binding, b.name == GLOBALS))
            .chain(reflection.images.iter().map(|i| (i.set, i.binding, false)))
        {
            if set == 0 {
                highest = highest.max(binding);
                if !globals {
                    taken.insert(binding, None);
                }
            }
        }
    }
    let mut next = highest + 1;
    let mut moved = false;
    for (module, reflection) in modules.iter_mut().zip(&reflections) {
        for block in reflection.uniform_blocks.iter().filter(|b| b.name == GLOBALS && b.set == 0) {
            let members = block_signature(block);
            match taken.get(&block.binding) {
                None => {
                    taken.insert(block.binding, Some(members));
                    continue;
                }
                // The same globals (a shared header): one block, one buffer.
                Some(Some(known)) if compatible(known, &members) => continue,
                Some(_) => {}
            }
            let decorations = xr_spirv::reflect::gl_bindings(&module.words)?;
            let Some(decoration) = decorations.iter().find(|d| {
                d.class == xr_spirv::reflect::GlBindingClass::UniformBuffer && d.binding == block.binding && d.set == 0
            }) else {
                continue;
            };
            module.words[decoration.word] = next;
            taken.insert(next, Some(members));
            next += 1;
            moved = true;
        }
    }
    Ok(moved)
}

/// Checks a program's descriptors against the device's limits, per stage
/// and per layout: an error naming the program, the kind and the limit.
pub fn check_limits(
    context: &str,
    bindings: &[LayoutBinding],
    limits: &vk::PhysicalDeviceLimits,
) -> Result<(), XrError> {
    use vk::DescriptorType as T;
    // (what, the types it counts, per-stage limit, whole-layout limit).
    let kinds: [(&str, &[T], u32, u32); 6] = [
        (
            "samplers",
            &[T::SAMPLER, T::COMBINED_IMAGE_SAMPLER],
            limits.max_per_stage_descriptor_samplers,
            limits.max_descriptor_set_samplers,
        ),
        (
            "sampled images",
            &[T::SAMPLED_IMAGE, T::COMBINED_IMAGE_SAMPLER],
            limits.max_per_stage_descriptor_sampled_images,
            limits.max_descriptor_set_sampled_images,
        ),
        (
            "storage images",
            &[T::STORAGE_IMAGE],
            limits.max_per_stage_descriptor_storage_images,
            limits.max_descriptor_set_storage_images,
        ),
        (
            "uniform buffers",
            &[T::UNIFORM_BUFFER],
            limits.max_per_stage_descriptor_uniform_buffers,
            limits.max_descriptor_set_uniform_buffers,
        ),
        (
            "storage buffers",
            &[T::STORAGE_BUFFER],
            limits.max_per_stage_descriptor_storage_buffers,
            limits.max_descriptor_set_storage_buffers,
        ),
        (
            "input attachments",
            &[T::INPUT_ATTACHMENT],
            limits.max_per_stage_descriptor_input_attachments,
            limits.max_descriptor_set_input_attachments,
        ),
    ];
    for (what, types, per_stage, per_layout) in kinds {
        let counted = bindings.iter().filter(|b| types.contains(&b.ty));
        let total: u64 = counted.clone().map(|b| u64::from(b.count)).sum();
        if total > u64::from(per_layout) {
            return Err(XrError::unavailable(format!(
                "{context} uses {total} {what}; the device allows {per_layout} in a pipeline layout"
            )));
        }
        for stage in [
            vk::ShaderStageFlags::VERTEX,
            vk::ShaderStageFlags::TESSELLATION_CONTROL,
            vk::ShaderStageFlags::TESSELLATION_EVALUATION,
            vk::ShaderStageFlags::GEOMETRY,
            vk::ShaderStageFlags::FRAGMENT,
            vk::ShaderStageFlags::COMPUTE,
        ] {
            let used: u64 = counted.clone().filter(|b| b.stages.contains(stage)).map(|b| u64::from(b.count)).sum();
            if used > u64::from(per_stage) {
                return Err(XrError::unavailable(format!(
                    "{context} uses {used} {what} in its {stage:?} stage; the device allows {per_stage} per stage"
                )));
            }
        }
    }
    Ok(())
}

/// A separate texture and sampler that together make a combined image sampler.
fn combines(a: vk::DescriptorType, b: vk::DescriptorType) -> bool {
    matches!(
        (a, b),
        (vk::DescriptorType::SAMPLED_IMAGE, vk::DescriptorType::SAMPLER)
            | (vk::DescriptorType::SAMPLER, vk::DescriptorType::SAMPLED_IMAGE)
    )
}

/// Whether two declarations of one uniform block can be one buffer: every
/// member both name is at the same offset, and they share a member (stages
/// often declare only the members they read; two blocks with nothing in
/// common at one binding are two blocks: HLSL `cbuffer A : register(b0)`
/// and `cbuffer B : register(b0)`).
pub fn compatible(a: &[(String, usize)], b: &[(String, usize)]) -> bool {
    if a.is_empty() || b.is_empty() {
        return true;
    }
    let mut shared = false;
    for (name, offset) in a {
        if let Some((_, other)) = b.iter().find(|(n, _)| n == name) {
            if other != offset {
                return false;
            }
            shared = true;
        }
    }
    shared
}

/// A uniform block's members by name and offset.
fn block_signature(block: &xr_spirv::reflect::Block) -> Vec<(String, usize)> {
    block.members.iter().map(|m| (m.name.clone(), m.offset)).collect()
}

fn describe(binding: &LayoutBinding) -> String {
    let what = match binding.kind {
        Some(kind) => kind.name(),
        None if binding.input_attachment.is_some() => "input attachment",
        None if !binding.members.is_empty() => {
            let names: Vec<&str> = binding.members.iter().map(|(n, _)| n.as_str()).collect();
            return format!("uniform buffer of {}", names.join(", "));
        }
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
        ShaderStage::Task => vk::ShaderStageFlags::TASK_EXT,
        ShaderStage::Mesh => vk::ShaderStageFlags::MESH_EXT,
        ShaderStage::RayGeneration => vk::ShaderStageFlags::RAYGEN_KHR,
        ShaderStage::Miss => vk::ShaderStageFlags::MISS_KHR,
        ShaderStage::ClosestHit => vk::ShaderStageFlags::CLOSEST_HIT_KHR,
        ShaderStage::AnyHit => vk::ShaderStageFlags::ANY_HIT_KHR,
        ShaderStage::Intersection => vk::ShaderStageFlags::INTERSECTION_KHR,
        ShaderStage::Callable => vk::ShaderStageFlags::CALLABLE_KHR,
    }
}

/// Checks that `stages` make a program: one compute stage; task (or not),
/// mesh and fragment stages; graphics stages in pipeline order with a
/// vertex stage and both tessellation stages or neither; or ray tracing
/// stages, one of them ray generation, in any order (their groups follow
/// from the order within each kind: `ray_tracing`).
pub fn check_stages(context: &str, stages: &[ShaderStage]) -> Result<(), XrError> {
    if stages.iter().any(|s| s.pipeline_kind() == PipelineKind::RayTracing) {
        if let Some(other) = stages.iter().find(|s| s.pipeline_kind() != PipelineKind::RayTracing) {
            return Err(XrError::invalid_input(format!(
                "{context}: a ray tracing program has ray tracing stages only, not {}",
                other.name()
            )));
        }
        let generation = stages.iter().filter(|s| **s == ShaderStage::RayGeneration).count();
        if generation != 1 {
            return Err(XrError::invalid_input(format!(
                "{context}: a ray tracing program has one ray-generation stage, not {generation}"
            )));
        }
        return Ok(());
    }
    if stages.windows(2).any(|w| w[0].pipeline_order() >= w[1].pipeline_order()) {
        return Err(XrError::invalid_input(format!(
            "{context}: stages must be given once each, in pipeline order (vertex, tess-control, tess-evaluation, \
             geometry, fragment; or task, mesh, fragment)"
        )));
    }
    if stages.iter().any(|s| s.pipeline_kind() == PipelineKind::Mesh) {
        if let Some(other) =
            stages.iter().find(|s| !matches!(s, ShaderStage::Task | ShaderStage::Mesh | ShaderStage::Fragment))
        {
            return Err(XrError::invalid_input(format!(
                "{context}: a mesh program has task, mesh and fragment stages only, not {}",
                other.name()
            )));
        }
        if !stages.contains(&ShaderStage::Mesh) {
            return Err(XrError::invalid_input(format!("{context}: a task stage needs a mesh stage after it")));
        }
        return Ok(());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mesh_and_ray_tracing_programs_are_made_of_their_own_stages() {
        use ShaderStage::*;
        for good in [&[Mesh][..], &[Mesh, Fragment], &[Task, Mesh, Fragment], &[Vertex, Fragment], &[Compute]] {
            check_stages("p", good).unwrap_or_else(|e| panic!("{good:?}: {e}"));
        }
        let refused = |stages: &[ShaderStage]| check_stages("p", stages).unwrap_err().message.to_string();
        assert!(refused(&[Vertex, Mesh, Fragment]).contains("task, mesh and fragment stages only, not vertex"));
        assert!(refused(&[Task, Fragment]).contains("a task stage needs a mesh stage after it"));
        assert!(refused(&[Mesh, Task]).contains("in pipeline order"));
        // Ray tracing stages in any order, several of a kind, one ray generation stage.
        check_stages("p", &[RayGeneration, Miss, ClosestHit, Miss, AnyHit]).expect("a ray tracing program");
        assert!(refused(&[Miss, ClosestHit]).contains("one ray-generation stage, not 0"));
        assert!(refused(&[RayGeneration, RayGeneration]).contains("one ray-generation stage, not 2"));
        assert!(refused(&[RayGeneration, Fragment]).contains("ray tracing stages only, not fragment"));
    }

    fn binding(ty: vk::DescriptorType, count: u32, stages: vk::ShaderStageFlags) -> LayoutBinding {
        LayoutBinding {
            name: "textures".into(),
            set: 0,
            binding: 0,
            ty,
            kind: Some(ResourceKind::CombinedImageSampler),
            count,
            partially_bound: false,
            stages,
            min_size: 0,
            block: None,
            input_attachment: None,
            aliases: Vec::new(),
            members: Vec::new(),
            declared_by: "fragment stage a.frag".into(),
        }
    }

    #[test]
    fn declarations_of_one_block_must_agree_where_they_meet() {
        let m = |list: &[(&str, usize)]| list.iter().map(|(n, o)| (n.to_string(), *o)).collect::<Vec<_>>();
        let vertex = m(&[("projection", 0), ("model", 64), ("light", 128)]);
        assert!(compatible(&vertex, &m(&[("light", 128)])), "a stage declares only what it reads");
        assert!(compatible(&vertex, &vertex));
        assert!(!compatible(&vertex, &m(&[("light", 112)])), "one member at two offsets");
        assert!(!compatible(&m(&[("offset", 0)]), &m(&[("colour", 0), ("gloss", 16)])), "two blocks, nothing shared");
        assert!(compatible(&[], &vertex), "a block with no members read");
    }

    #[test]
    fn a_program_over_the_device_limits_is_refused_naming_the_kind_and_the_limit() {
        let limits = vk::PhysicalDeviceLimits {
            max_per_stage_descriptor_samplers: 16,
            max_descriptor_set_samplers: 32,
            max_per_stage_descriptor_sampled_images: 16,
            max_descriptor_set_sampled_images: 32,
            max_per_stage_descriptor_storage_buffers: 4,
            max_descriptor_set_storage_buffers: 8,
            ..Default::default()
        };
        let fragment = vk::ShaderStageFlags::FRAGMENT;
        let fits = [binding(vk::DescriptorType::COMBINED_IMAGE_SAMPLER, 16, fragment)];
        assert!(check_limits("program 'p'", &fits, &limits).is_ok());
        let over = [binding(vk::DescriptorType::COMBINED_IMAGE_SAMPLER, 17, fragment)];
        let error = check_limits("program 'p'", &over, &limits).unwrap_err().to_string();
        assert!(
            error.contains("program 'p' uses 17 samplers in its FRAGMENT stage; the device allows 16 per stage"),
            "{error}"
        );
        let spread = [
            binding(vk::DescriptorType::STORAGE_BUFFER, 4, vk::ShaderStageFlags::VERTEX),
            binding(vk::DescriptorType::STORAGE_BUFFER, 4, fragment),
            binding(vk::DescriptorType::STORAGE_BUFFER, 1, vk::ShaderStageFlags::COMPUTE),
        ];
        let error = check_limits("program 'p'", &spread, &limits).unwrap_err().to_string();
        assert!(error.contains("uses 9 storage buffers; the device allows 8 in a pipeline layout"), "{error}");
    }

    /// An array of unknown size gets the device's length, partially bound;
    /// a device without descriptor indexing refuses it naming what it lacks.
    #[test]
    fn an_array_of_unknown_size_is_laid_out_partially_bound_or_refused_naming_the_features() {
        use xr_sourcebuild::{ProgramDesc, SourceDesc};
        let source = "#version 450\n#extension GL_EXT_nonuniform_qualifier : require\n\
                      layout(set = 0, binding = 2) uniform sampler2D textures[];\n\
                      layout(set = 0, binding = 0) uniform sampler2D single;\n\
                      layout(location = 0) flat in int i;\nlayout(location = 0) out vec4 o;\n\
                      void main() { o = texture(textures[nonuniformEXT(i)], vec2(0.5)) + texture(single, vec2(0.5)); }\n";
        let desc = ProgramDesc::new("bindless", [SourceDesc::new("glsl", ShaderStage::Fragment, "a.frag", source)]);
        let compiler = xr_spirv::SpirvCompiler::new().unwrap();
        let options = xr_spirv::SpirvOptions::new(xr_spirv::TargetEnv::Vulkan12);
        let modules = compiler.compile_program(&desc, &options).unwrap().modules;
        let reflections: Vec<Reflection> =
            modules.iter().map(|m| xr_spirv::reflect(&m.words, &m.entry_point).unwrap()).collect();

        let bindings = merge("program 'p'", &modules, &reflections, RuntimeArrays::Length(64)).unwrap();
        let laid_out: Vec<(&str, u32, u32, bool)> =
            bindings.iter().map(|b| (b.name.as_str(), b.binding, b.count, b.partially_bound)).collect();
        assert_eq!(laid_out, [("single", 0, 1, false), ("textures", 2, 64, true)]);

        let lacking = RuntimeArrays::Lacking("runtimeDescriptorArray and descriptorBindingPartiallyBound");
        let error = merge("program 'p'", &modules, &reflections, lacking).unwrap_err().to_string();
        assert!(
            error.contains(
                "program 'p': 'textures' in fragment stage a.frag is an array of unknown size, which needs descriptor \
                 indexing (runtimeDescriptorArray and descriptorBindingPartiallyBound); this device does not have it"
            ),
            "{error}"
        );
    }
}
