//! A program's resource layout as its typed bindings give it: for each
//! target, every (set, binding) its objects read, with what is bound there,
//! the stages that read it and its array count, and its push constant
//! block. The same for every API: an engine that makes its own bind group
//! (or descriptor set) layouts makes them from this.

/// What is bound at a (set, binding).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BindingKind {
    /// A uniform block (`uniform Block { … }`).
    UniformBuffer,
    /// A storage buffer (`buffer Block { … }`).
    StorageBuffer,
    /// A texture without a sampler (`texture2D`).
    SampledImage,
    /// A sampler on its own (`sampler`).
    Sampler,
    /// A texture with its sampler (`sampler2D`).
    CombinedImageSampler,
    /// A texture written by shaders (`image2D`).
    StorageImage,
    /// A ray tracing acceleration structure.
    AccelerationStructure,
    /// A subpass input (`subpassInput`).
    InputAttachment,
}

impl BindingKind {
    /// The kind named `name` as reflection writes it (`sampled image`).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "uniform buffer" => Self::UniformBuffer,
            "storage buffer" => Self::StorageBuffer,
            "sampled image" => Self::SampledImage,
            "sampler" => Self::Sampler,
            "combined image sampler" => Self::CombinedImageSampler,
            "storage image" => Self::StorageImage,
            "acceleration structure" => Self::AccelerationStructure,
            "input attachment" => Self::InputAttachment,
            _ => return None,
        })
    }
}

/// Shader stages, as bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Stages(pub u32);

impl Stages {
    /// The vertex stage.
    pub const VERTEX: Stages = Stages(1);
    /// The fragment stage.
    pub const FRAGMENT: Stages = Stages(1 << 1);
    /// The compute stage.
    pub const COMPUTE: Stages = Stages(1 << 2);
    /// Every other stage (tessellation, geometry, mesh, task, ray tracing).
    pub const OTHER: Stages = Stages(1 << 3);

    /// The stage named `name` as reflection writes it (`fragment`).
    pub fn from_name(name: &str) -> Self {
        match name {
            "vertex" => Self::VERTEX,
            "fragment" => Self::FRAGMENT,
            "compute" => Self::COMPUTE,
            _ => Self::OTHER,
        }
    }

    /// Both sets of stages.
    pub const fn union(self, other: Stages) -> Stages {
        Stages(self.0 | other.0)
    }

    /// Whether every stage of `other` is in this set.
    pub const fn contains(self, other: Stages) -> bool {
        self.0 & other.0 == other.0
    }
}

/// One (set, binding) of a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LayoutBinding {
    /// The descriptor set (bind group).
    pub set: u32,
    /// The binding in it.
    pub binding: u32,
    /// What is bound there.
    pub kind: BindingKind,
    /// The stages that read it.
    pub stages: Stages,
    /// Array elements: 1 for one, 0 for an array of unknown size.
    pub count: u32,
}

/// A program's push constant block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PushConstants {
    /// The stages that read it.
    pub stages: Stages,
    /// Its size in bytes.
    pub size: u32,
}

/// The resource layout of one target's objects of a program (every variant's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ResourceLayout {
    /// The target.
    pub target: &'static str,
    /// Every (set, binding), by set then binding.
    pub bindings: &'static [LayoutBinding],
    /// The push constant block, if the program has one.
    pub push_constants: Option<PushConstants>,
}

impl ResourceLayout {
    /// Sets `0..n` the bindings use (a set between two used ones may be empty).
    pub fn set_count(&self) -> u32 {
        self.bindings.iter().map(|b| b.set + 1).max().unwrap_or(0)
    }

    /// The bindings of `set`.
    pub fn set(&self, set: u32) -> impl Iterator<Item = &LayoutBinding> {
        self.bindings.iter().filter(move |b| b.set == set)
    }
}
