//! What a SPIR-V module exposes: uniform blocks with member offsets,
//! samplers and textures, storage buffers, push constants, specialization
//! constants with their defaults, and stage inputs and outputs with their
//! locations. Resources the entry point never uses do not appear.
//!
//! By concern: [`reflect`] and its types, the reflection library's view of
//! an entry point (`resources`); OpenGL's binding namespaces and uniforms
//! outside blocks (`gl`); the stage interface (`interface`); the ray
//! tracing interface (`ray`); what a module declares: entry points,
//! execution modes, capabilities, extensions, specialization constants
//! (`declarations`). All but the reflection library read the words with
//! [`xr_spirv_object::walk`].

mod declarations;
mod gl;
mod grammar;
mod interface;
mod ray;
mod resources;

pub(crate) use declarations::spec_constant_defaults;
pub use declarations::{
    declared_capabilities, declared_extensions, entry_points, execution_mode, output_vertices, spec_constant_ids,
};
pub use gl::{
    BindingDecoration, GlBindingClass, assign_uniform_locations, gl_bindings, loose_uniforms, read_loose_uniforms,
};
pub use interface::{link_interface_locations, per_vertex_input_locations};
pub use ray::{RayStorage, RayVariable, ray_interface, traces_rays};
pub use resources::{
    Block, BlockMember, ImageResource, InputAttachment, InterfaceVariable, LooseUniform, Reflection, SpecConstant,
    UnsupportedResource, reflect,
};
pub use xr_sourcebuild::MemberLayout;

use xr_device::XrError;
use xr_spirv_object::spirv::{Decoration, StorageClass};
use xr_spirv_object::walk::{self, Instruction};

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
