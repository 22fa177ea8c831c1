//! The device limits of mesh and task stages, checked by name before the
//! driver sees a module: a mesh stage writing more vertices or primitives
//! than the device takes, or a work group larger than it runs, is refused
//! naming the limit, its value and the device (the driver's own answer is
//! undefined behaviour or a crash inside pipeline creation).

use ash::vk;
use xr_device::XrError;
use xr_sourcebuild::ShaderStage;
use xr_spirv::container::StageModule;
use xr_spirv::container::spirv::ExecutionMode;

/// What a device takes of mesh and task stages
/// (`VkPhysicalDeviceMeshShaderPropertiesEXT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeshLimits {
    /// `maxMeshOutputVertices`.
    pub max_mesh_output_vertices: u32,
    /// `maxMeshOutputPrimitives`.
    pub max_mesh_output_primitives: u32,
    /// `maxMeshWorkGroupSize`.
    pub max_mesh_work_group_size: [u32; 3],
    /// `maxMeshWorkGroupInvocations`.
    pub max_mesh_work_group_invocations: u32,
    /// `maxTaskWorkGroupSize`.
    pub max_task_work_group_size: [u32; 3],
    /// `maxTaskWorkGroupInvocations`.
    pub max_task_work_group_invocations: u32,
}

impl MeshLimits {
    /// The limits of `physical`.
    ///
    /// # Safety
    /// `physical` belongs to `instance`, which is live, and offers `VK_EXT_mesh_shader`.
    pub unsafe fn read(instance: &ash::Instance, physical: vk::PhysicalDevice) -> Self {
        let mut mesh = vk::PhysicalDeviceMeshShaderPropertiesEXT::default();
        {
            let mut query = vk::PhysicalDeviceProperties2::default().push_next(&mut mesh);
            // SAFETY: as the caller promises; the chain lives across the call.
            unsafe { instance.get_physical_device_properties2(physical, &mut query) };
        }
        Self {
            max_mesh_output_vertices: mesh.max_mesh_output_vertices,
            max_mesh_output_primitives: mesh.max_mesh_output_primitives,
            max_mesh_work_group_size: mesh.max_mesh_work_group_size,
            max_mesh_work_group_invocations: mesh.max_mesh_work_group_invocations,
            max_task_work_group_size: mesh.max_task_work_group_size,
            max_task_work_group_invocations: mesh.max_task_work_group_invocations,
        }
    }
}

/// Checks every task and mesh stage of `modules` against `limits` (`None`:
/// the device has no mesh shaders, which the capability check has refused
/// already). `device` names the device in the message.
pub fn check_limits(
    context: &str,
    modules: &[StageModule],
    limits: Option<&MeshLimits>,
    device: &str,
) -> Result<(), XrError> {
    let Some(limits) = limits else { return Ok(()) };
    for module in modules {
        let (size_limit, invocations_limit, prefix) = match module.stage {
            ShaderStage::Mesh => (limits.max_mesh_work_group_size, limits.max_mesh_work_group_invocations, "Mesh"),
            ShaderStage::Task => (limits.max_task_work_group_size, limits.max_task_work_group_invocations, "Task"),
            _ => continue,
        };
        let refuse = |what: String, limit: String| {
            XrError::unavailable(format!(
                "{context}: the {} stage {} {what}, more than this device's {limit} ({device})",
                module.stage.name(),
                module.file
            ))
        };
        if let Some(size) = xr_spirv::reflect::execution_mode(&module.words, ExecutionMode::LocalSize)?
            && let [x, y, z] = size[..]
        {
            for (axis, (asked, most)) in ["x", "y", "z"].iter().zip([x, y, z].into_iter().zip(size_limit)) {
                if asked > most {
                    return Err(refuse(
                        format!("has a work group of {asked} in {axis}"),
                        format!("max{prefix}WorkGroupSize[{axis}] of {most}"),
                    ));
                }
            }
            let invocations = u64::from(x) * u64::from(y) * u64::from(z);
            if invocations > u64::from(invocations_limit) {
                return Err(refuse(
                    format!("has work groups of {invocations} invocations"),
                    format!("max{prefix}WorkGroupInvocations of {invocations_limit}"),
                ));
            }
        }
        if module.stage != ShaderStage::Mesh {
            continue;
        }
        let declared = |mode| -> Result<Option<u32>, XrError> {
            Ok(xr_spirv::reflect::execution_mode(&module.words, mode)?.and_then(|operands| operands.first().copied()))
        };
        if let Some(vertices) = declared(ExecutionMode::OutputVertices)?
            && vertices > limits.max_mesh_output_vertices
        {
            return Err(refuse(
                format!("writes up to {vertices} vertices"),
                format!("maxMeshOutputVertices of {}", limits.max_mesh_output_vertices),
            ));
        }
        if let Some(primitives) = declared(ExecutionMode::OutputPrimitivesEXT)?
            && primitives > limits.max_mesh_output_primitives
        {
            return Err(refuse(
                format!("writes up to {primitives} primitives"),
                format!("maxMeshOutputPrimitives of {}", limits.max_mesh_output_primitives),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MESH: &str = "#version 460\n#extension GL_EXT_mesh_shader : require\n\
        layout(local_size_x = 32) in;\n\
        layout(triangles, max_vertices = 64, max_primitives = 126) out;\n\
        void main() { SetMeshOutputsEXT(0, 0); }\n";

    fn module(source: &str) -> StageModule {
        let desc = xr_sourcebuild::SourceDesc::new("glsl", ShaderStage::Mesh, "m.mesh", source);
        let options = xr_spirv::SpirvOptions::new(xr_spirv::TargetEnv::Vulkan10)
            .for_stages(&[ShaderStage::Mesh])
            .expect("a Vulkan target takes mesh stages");
        let compiled = xr_spirv::SpirvCompiler::new().unwrap().compile(&desc, &options).unwrap();
        StageModule {
            stage: ShaderStage::Mesh,
            entry_point: "main".into(),
            specializations: Vec::new(),
            words: compiled.words,
            file: "m.mesh".into(),
            hit_group: None,
        }
    }

    fn limits() -> MeshLimits {
        MeshLimits {
            max_mesh_output_vertices: 256,
            max_mesh_output_primitives: 256,
            max_mesh_work_group_size: [128, 128, 128],
            max_mesh_work_group_invocations: 128,
            max_task_work_group_size: [128, 128, 128],
            max_task_work_group_invocations: 128,
        }
    }

    #[test]
    fn a_mesh_stage_within_the_limits_passes_and_each_limit_is_refused_by_name() {
        let modules = [module(MESH)];
        check_limits("p", &modules, Some(&limits()), "test device").unwrap();
        let cases = [
            (MeshLimits { max_mesh_output_vertices: 63, ..limits() }, "maxMeshOutputVertices of 63"),
            (MeshLimits { max_mesh_output_primitives: 100, ..limits() }, "maxMeshOutputPrimitives of 100"),
            (MeshLimits { max_mesh_work_group_size: [16, 128, 128], ..limits() }, "maxMeshWorkGroupSize[x] of 16"),
            (MeshLimits { max_mesh_work_group_invocations: 31, ..limits() }, "maxMeshWorkGroupInvocations of 31"),
        ];
        for (limits, named) in cases {
            let error = check_limits("p", &modules, Some(&limits), "test device").unwrap_err();
            assert!(error.message.contains(named), "{named}: {}", error.message);
            assert!(error.message.contains("m.mesh") && error.message.contains("test device"), "{}", error.message);
        }
        // A device without mesh shaders was refused by its capability already.
        check_limits("p", &modules, None, "test device").unwrap();
    }
}
