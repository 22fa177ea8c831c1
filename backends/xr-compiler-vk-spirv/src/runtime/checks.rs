//! What a program is checked for before any driver sees it: its stages'
//! interface, the SPIR-V capabilities and extensions it declares, and how
//! this device lays out arrays of unknown size.

use super::AttachedVkSpirv;
use crate::{capabilities, layout};
use ash::vk;
use xr_device::XrError;
use xr_sourcebuild::ShaderStage;
use xr_spirv::{container::StageModule, reflect::Reflection};

impl AttachedVkSpirv {
    pub(super) fn reflect(modules: &[StageModule]) -> Result<Vec<Reflection>, XrError> {
        modules.iter().map(|m| xr_spirv::reflect(&m.words, &m.entry_point)).collect()
    }

    /// Late binding: every fragment input must be written by the
    /// vertex stage, at the same location with the same type — checked here,
    /// before any driver sees the program, naming both stages.
    pub(super) fn check_interface(modules: &[StageModule], reflections: &[Reflection]) -> Result<(), XrError> {
        // Between other stages (tessellation, geometry) inputs are arrays
        // per vertex: the driver's own checks apply there.
        let stages: Vec<ShaderStage> = modules.iter().map(|m| m.stage).collect();
        if stages != [ShaderStage::Vertex, ShaderStage::Fragment] {
            return Ok(());
        }
        let (vertex, fragment) = (&reflections[0], &reflections[1]);
        // A per-vertex input (`pervertexEXT vec3 c[]`) is an array of what
        // the vertex stage writes, one per vertex of the primitive.
        let per_vertex = xr_spirv::reflect::per_vertex_input_locations(&modules[1].words)?;
        for input in &fragment.inputs {
            let by_location = vertex.outputs.iter().find(|o| o.location == input.location);
            let by_name = vertex.outputs.iter().find(|o| o.name == input.name);
            let reads = |output: &xr_spirv::reflect::InterfaceVariable| {
                if per_vertex.contains(&input.location) {
                    input.ty == format!("[{}; 3]", output.ty)
                } else {
                    input.ty == output.ty
                }
            };
            match by_location.or(by_name) {
                Some(output) if reads(output) && output.location == input.location => {}
                Some(output) => {
                    return Err(XrError::invalid_input(format!(
                        "stages do not match: fragment stage {} reads '{}' ({}, location {}) but vertex stage {} writes '{}' ({}, location {})",
                        modules[1].file,
                        input.name,
                        input.ty,
                        input.location,
                        modules[0].file,
                        output.name,
                        output.ty,
                        output.location
                    )));
                }
                None => {
                    return Err(XrError::invalid_input(format!(
                        "stages do not match: fragment stage {} reads '{}' ({}, location {}) which vertex stage {} does not write",
                        modules[1].file, input.name, input.ty, input.location, modules[0].file
                    )));
                }
            }
        }
        Ok(())
    }

    /// How this device lays out arrays of unknown size: partially bound,
    /// [`layout::RUNTIME_ARRAY_LENGTH`] elements (or the device's per-stage
    /// limit, where lower), where it has the descriptor indexing features
    /// that takes.
    pub(super) fn runtime_arrays(&self) -> layout::RuntimeArrays {
        let f = &self.vulkan12;
        if f.runtime_descriptor_array == vk::FALSE || f.partially_bound == vk::FALSE {
            return layout::RuntimeArrays::Lacking("runtimeDescriptorArray and descriptorBindingPartiallyBound");
        }
        let l = &self.limits;
        let per_stage = [
            l.max_per_stage_descriptor_samplers,
            l.max_per_stage_descriptor_sampled_images,
            l.max_per_stage_descriptor_storage_images,
            l.max_per_stage_descriptor_storage_buffers,
        ];
        layout::RuntimeArrays::Length(per_stage.into_iter().fold(layout::RUNTIME_ARRAY_LENGTH, u32::min))
    }

    /// Refuses, before the driver sees it, a module that declares a SPIR-V
    /// capability or extension the device cannot take, naming it, every way
    /// a device enables it and this device: the whole SPIR-V environment
    /// table of the Vulkan specification ([`capabilities`]).
    pub(super) fn check_extensions(&self, context: &str, modules: &[StageModule]) -> Result<(), XrError> {
        use capabilities::capability_table::EXTENSIONS;
        for module in modules {
            let declared = xr_spirv::reflect::declared_capabilities(&module.words)?;
            let extensions = xr_spirv::reflect::declared_extensions(&module.words)?;
            let missing = capabilities::first_missing_capability(&declared, &self.offer)
                .map(|(name, ways)| ("capability", name, ways))
                .or_else(|| {
                    capabilities::first_missing(EXTENSIONS, &extensions, &self.offer)
                        .map(|(name, ways)| ("extension", name, ways.to_vec()))
                });
            if let Some((what, name, ways)) = missing {
                // A feature said once: not again as its extension's struct,
                // and the extensions that provide it together.
                let mut said: Vec<String> = Vec::new();
                for way in ways.iter().map(capabilities::Enable::describe) {
                    if said.iter().any(|s| way.starts_with(&format!("{s} of "))) {
                        continue;
                    }
                    let feature = way.split_once(" of ").map(|(feature, by)| (format!("{feature} of "), by.to_owned()));
                    match feature
                        .and_then(|(prefix, by)| said.iter_mut().find(|s| s.starts_with(&prefix)).map(|s| (s, by)))
                    {
                        Some((earlier, by)) => earlier.push_str(&format!(" or {by}")),
                        None => said.push(way),
                    }
                }
                let ways = said;
                return Err(XrError::unavailable(format!(
                    "{context}: the {} stage {} uses the SPIR-V {what} {name}, which needs {}; \
                     this device ({}) does not have it",
                    module.stage.name(),
                    module.file,
                    ways.join(" or "),
                    self.capabilities.renderer
                )));
            }
        }
        Ok(())
    }
}
