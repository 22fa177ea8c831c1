//! A program's stages as linked shader objects (`VK_EXT_shader_object`),
//! made from SPIR-V or from the binaries the driver gave back before.
//!
//! A shader object holds one stage, compiled for any target: the state a
//! pipeline bakes in (attachment formats, depth, topology, write masks)
//! is set by the device at each draw, so a draw into a target of new
//! formats makes nothing. The stages of a program are made together and
//! linked (`VK_SHADER_CREATE_LINK_STAGE_BIT_EXT`), which lets the driver
//! optimise across them as it does for a pipeline. Compute and ray tracing
//! programs stay pipelines: they have no target to be made for.

use crate::counter::Counter;
use ash::vk::{self, Handle};
use std::ffi::CString;
use xr_device::{ShaderObjectSlot, XrError};
use xr_sourcebuild::ShaderStage;
use xr_spirv::container::StageModule;

/// The order stages run in, which `nextStage` follows.
const STAGE_ORDER: [ShaderStage; 7] = [
    ShaderStage::Task,
    ShaderStage::Mesh,
    ShaderStage::Vertex,
    ShaderStage::TessControl,
    ShaderStage::TessEvaluation,
    ShaderStage::Geometry,
    ShaderStage::Fragment,
];

/// What the driver's shader binaries are valid for: another UUID or
/// version makes them unusable (`VkPhysicalDeviceShaderObjectPropertiesEXT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BinaryIdentity {
    /// `shaderBinaryUUID`.
    pub uuid: [u8; 16],
    /// `shaderBinaryVersion`.
    pub version: u32,
}

/// Where a program's stages come from.
#[derive(Clone, Copy)]
pub enum Code<'a> {
    /// Its SPIR-V modules.
    Spirv,
    /// The binaries the driver gave back for them, one per module, in order.
    Binary(&'a [Vec<u8>]),
}

/// Why shader objects could not be made.
#[derive(Debug)]
pub enum CreateError {
    /// The driver refused the binaries (`VK_INCOMPATIBLE_SHADER_BINARY_EXT`):
    /// made by another driver build, or damaged. Not an error of the program.
    Incompatible,
    /// Anything else.
    Failed(XrError),
}

/// The device's shader object functions and binary identity.
pub struct ShaderObjectDevice {
    functions: ash::ext::shader_object::Device,
    /// What its binaries are valid for.
    pub identity: BinaryIdentity,
}

/// The linked shader objects of one program, by stage, in the program's
/// module order (what the device binds them from).
pub struct ProgramShaders {
    functions: ash::ext::shader_object::Device,
    pub slots: Box<[ShaderObjectSlot]>,
}

impl ProgramShaders {
    /// The shader objects, in the program's module order.
    pub fn handles(&self) -> impl Iterator<Item = vk::ShaderEXT> + '_ {
        self.slots.iter().map(|s| vk::ShaderEXT::from_raw(s.shader))
    }

    /// Destroys them.
    ///
    /// # Safety
    /// The device is open and nothing uses them any more.
    pub unsafe fn destroy(&self) {
        for shader in self.handles() {
            // SAFETY: per the contract; each was made on this device.
            unsafe { self.functions.destroy_shader(shader, None) };
        }
    }
}

impl ShaderObjectDevice {
    /// The functions of `device` and its binary identity.
    ///
    /// # Safety
    /// `instance`, `physical` and `device` are live and belong together,
    /// and `device` enabled `VK_EXT_shader_object`.
    pub unsafe fn load(instance: &ash::Instance, physical: vk::PhysicalDevice, device: &ash::Device) -> Self {
        let mut properties = vk::PhysicalDeviceShaderObjectPropertiesEXT::default();
        let mut query = vk::PhysicalDeviceProperties2::default().push_next(&mut properties);
        // SAFETY: per the contract; the chain lives across the call.
        unsafe { instance.get_physical_device_properties2(physical, &mut query) };
        Self {
            functions: ash::ext::shader_object::Device::new(instance, device),
            identity: BinaryIdentity { uuid: properties.shader_binary_uuid, version: properties.shader_binary_version },
        }
    }

    /// Makes the stages of `modules` as linked shader objects with the
    /// program's descriptor set layouts and push constant ranges (those
    /// of its pipeline layout, which draws bind its sets with).
    pub fn create(
        &self,
        context: &str,
        modules: &[StageModule],
        set_layouts: &[vk::DescriptorSetLayout],
        push_ranges: &[vk::PushConstantRange],
        code: Code<'_>,
        counts: Counter,
    ) -> Result<ProgramShaders, CreateError> {
        let failed = |message: String| CreateError::Failed(XrError::invalid_input(message));
        let entries = modules
            .iter()
            .map(|m| CString::new(m.entry_point.as_str()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| failed(format!("{context}: entry point with a NUL byte")))?;
        let specializations: Vec<_> = modules.iter().map(crate::pipelines::specialization).collect();
        let specialization_infos: Vec<vk::SpecializationInfo> = specializations
            .iter()
            .map(|(map, data)| vk::SpecializationInfo::default().map_entries(map).data(data))
            .collect();
        let words: Vec<&[u8]> = modules.iter().map(|m| bytes_of(&m.words)).collect();
        if let Code::Binary(binaries) = &code
            && binaries.len() != modules.len()
        {
            return Err(CreateError::Incompatible);
        }
        let has = |stage: ShaderStage| modules.iter().any(|m| m.stage == stage);
        let linked = modules.len() > 1;
        let infos: Vec<vk::ShaderCreateInfoEXT> = modules
            .iter()
            .enumerate()
            .map(|(i, module)| {
                let mut flags = vk::ShaderCreateFlagsEXT::empty();
                if linked {
                    flags |= vk::ShaderCreateFlagsEXT::LINK_STAGE;
                }
                if module.stage == ShaderStage::Mesh && !has(ShaderStage::Task) {
                    flags |= vk::ShaderCreateFlagsEXT::NO_TASK_SHADER;
                }
                let (code_type, code): (_, &[u8]) = match &code {
                    Code::Spirv => (vk::ShaderCodeTypeEXT::SPIRV, words[i]),
                    Code::Binary(binaries) => (vk::ShaderCodeTypeEXT::BINARY, &binaries[i]),
                };
                let mut info = vk::ShaderCreateInfoEXT::default()
                    .flags(flags)
                    .stage(crate::layout::stage_flag(module.stage))
                    .next_stage(next_stage(module.stage, modules))
                    .code_type(code_type)
                    .code(code)
                    .name(&entries[i])
                    .set_layouts(set_layouts)
                    .push_constant_ranges(push_ranges);
                if !module.specializations.is_empty() {
                    info = info.specialization_info(&specialization_infos[i]);
                }
                info
            })
            .collect();
        // SAFETY: every structure referenced by `infos` lives until the call returns.
        let made = unsafe { self.functions.create_shaders(&infos, None) };
        let shaders = match made {
            Ok(shaders) => shaders,
            Err((partial, result)) => {
                for shader in partial.into_iter().filter(|s| !s.is_null()) {
                    // SAFETY: made just now, used by nothing.
                    unsafe { self.functions.destroy_shader(shader, None) };
                }
                return Err(match result {
                    vk::Result::INCOMPATIBLE_SHADER_BINARY_EXT => CreateError::Incompatible,
                    e => CreateError::Failed(XrError::driver(format!("{context}: vkCreateShadersEXT failed: {e}"))),
                });
            }
        };
        counts.shader_objects(shaders.len() as u64, matches!(code, Code::Binary(_)));
        let slots = modules
            .iter()
            .zip(&shaders)
            .map(|(m, shader)| ShaderObjectSlot {
                stage: crate::layout::stage_flag(m.stage).as_raw(),
                shader: shader.as_raw(),
            })
            .collect();
        Ok(ProgramShaders { functions: self.functions.clone(), slots })
    }

    /// The driver's binary of each of `shaders`, in order.
    pub fn binaries(&self, context: &str, shaders: &ProgramShaders) -> Result<Vec<Vec<u8>>, XrError> {
        shaders
            .handles()
            // SAFETY: each is a live shader object of this device.
            .map(|shader| unsafe { self.functions.get_shader_binary_data(shader) })
            .collect::<Result<_, _>>()
            .map_err(|e| XrError::driver(format!("{context}: vkGetShaderBinaryDataEXT failed: {e}")))
    }
}

/// The stage that runs after `stage` in a program of `modules` (none for
/// the last).
fn next_stage(stage: ShaderStage, modules: &[StageModule]) -> vk::ShaderStageFlags {
    let at = STAGE_ORDER.iter().position(|s| *s == stage).unwrap_or(STAGE_ORDER.len());
    STAGE_ORDER
        .iter()
        .skip(at + 1)
        .find(|s| modules.iter().any(|m| m.stage == **s))
        .map_or(vk::ShaderStageFlags::empty(), |s| crate::layout::stage_flag(*s))
}

/// SPIR-V words as the bytes `VkShaderCreateInfoEXT` takes.
fn bytes_of(words: &[u32]) -> &[u8] {
    // SAFETY: any u32 slice is a valid, aligned byte slice four times as long.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast(), std::mem::size_of_val(words)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(stage: ShaderStage) -> StageModule {
        StageModule {
            stage,
            file: String::new(),
            entry_point: "main".into(),
            words: Vec::new(),
            specializations: Vec::new(),
            hit_group: None,
        }
    }

    #[test]
    fn each_stage_is_followed_by_the_next_one_the_program_has() {
        let program = [module(ShaderStage::Vertex), module(ShaderStage::Geometry), module(ShaderStage::Fragment)];
        assert_eq!(next_stage(ShaderStage::Vertex, &program), vk::ShaderStageFlags::GEOMETRY);
        assert_eq!(next_stage(ShaderStage::Geometry, &program), vk::ShaderStageFlags::FRAGMENT);
        assert_eq!(next_stage(ShaderStage::Fragment, &program), vk::ShaderStageFlags::empty());
        let mesh = [module(ShaderStage::Fragment), module(ShaderStage::Task), module(ShaderStage::Mesh)];
        assert_eq!(next_stage(ShaderStage::Task, &mesh), vk::ShaderStageFlags::MESH_EXT);
        assert_eq!(next_stage(ShaderStage::Mesh, &mesh), vk::ShaderStageFlags::FRAGMENT);
    }
}
