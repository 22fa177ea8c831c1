//! Ray tracing programs: their shader groups, the interface their stages
//! share (payloads, hit attributes, callable data), the pipeline made of
//! them and the shader binding table the device launches rays through.
//!
//! # Shader groups
//!
//! A program's stages make its groups by one rule, so that a shader
//! author knows which index a `traceRayEXT` names without a table:
//! - the ray generation stage is group 0 (a program has exactly one);
//! - each miss stage is a miss group, in the order given: the first is
//!   miss index 0;
//! - hit group `i` holds the `i`-th closest-hit, the `i`-th any-hit and the
//!   `i`-th intersection stage given (each where there is one), or the
//!   stages that name group `i` where the program names groups
//!   (`xr_sourcebuild::hit_groups`): a triangle group, or a procedural one
//!   where it has an intersection stage;
//! - each callable stage is a callable group, in the order given.
//!
//! The binding table has one record per group, laid out on the device's
//! own numbers (`shaderGroupHandleSize`, `shaderGroupHandleAlignment`,
//! `shaderGroupBaseAlignment`).

use crate::host_buffer::{HostBuffer, host_buffer};
use ash::vk;
use std::ffi::CString;
use xr_device::{ShaderBindingRegion, XrError};
use xr_sourcebuild::{HitGroup, ShaderStage, hit_groups};
use xr_spirv::{
    container::StageModule,
    reflect::{RayStorage, RayVariable},
};

/// A program's shader groups, by the module documentation's rule; each a
/// stage index, or a hit group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Groups {
    pub ray_generation: usize,
    pub miss: Vec<usize>,
    pub hit: Vec<HitGroup>,
    pub callable: Vec<usize>,
}

impl Groups {
    /// The groups of `modules`, a ray tracing program's (checked by
    /// `layout::check_stages`); hit groups as the stages name them, or by
    /// the default rule. A stored object comes here without the host's
    /// checks, so a broken rule is an error naming the file.
    pub fn of(context: &str, modules: &[StageModule]) -> Result<Self, XrError> {
        let named: Vec<(ShaderStage, Option<u32>, &str)> =
            modules.iter().map(|m| (m.stage, m.hit_group, m.file.as_str())).collect();
        let hit = hit_groups(&named).map_err(|mistake| XrError::invalid_input(format!("{context}: {mistake}")))?;
        let mut groups = Groups { hit, ..Groups::default() };
        for (index, module) in modules.iter().enumerate() {
            match module.stage {
                ShaderStage::RayGeneration => groups.ray_generation = index,
                ShaderStage::Miss => groups.miss.push(index),
                ShaderStage::Callable => groups.callable.push(index),
                _ => {}
            }
        }
        Ok(groups)
    }

    /// Records per region: ray generation, miss, hit, callable.
    pub fn counts(&self) -> [u64; 4] {
        [1, self.miss.len() as u64, self.hit.len() as u64, self.callable.len() as u64]
    }
}

/// The device's numbers for ray tracing pipelines
/// (`VkPhysicalDeviceRayTracingPipelinePropertiesKHR`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RayTracingLimits {
    pub handle_size: u32,
    pub handle_alignment: u32,
    pub base_alignment: u32,
    pub max_recursion_depth: u32,
    pub max_stride: u32,
}

/// One region of a binding table, from the table's start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Region {
    pub offset: u64,
    pub stride: u64,
    pub size: u64,
}

/// Where each region's records go: every region starts on the base
/// alignment, every record on the handle alignment; the ray generation
/// region's stride is its size, as `vkCmdTraceRaysKHR` requires.
pub fn table_layout(counts: [u64; 4], limits: &RayTracingLimits) -> ([Region; 4], u64) {
    let align = |value: u64, to: u32| value.div_ceil(u64::from(to.max(1))) * u64::from(to.max(1));
    let record = align(u64::from(limits.handle_size), limits.handle_alignment);
    let mut regions = [Region::default(); 4];
    let mut end = 0u64;
    for (i, count) in counts.into_iter().enumerate() {
        if count == 0 {
            continue;
        }
        let offset = align(end, limits.base_alignment);
        let (stride, size) = if i == 0 {
            (align(record, limits.base_alignment), align(record, limits.base_alignment))
        } else {
            (record, record * count)
        };
        regions[i] = Region { offset, stride, size };
        end = offset + size;
    }
    (regions, end)
}

/// The recursion depth a program's pipeline is made with: 1 where only the
/// ray generation stage traces rays, 2 where a hit or miss stage traces
/// too (a shadow ray from a closest-hit stage).
pub fn recursion_depth(context: &str, modules: &[StageModule], limits: &RayTracingLimits) -> Result<u32, XrError> {
    let mut depth = 1;
    for module in modules.iter().filter(|m| m.stage != ShaderStage::RayGeneration) {
        if xr_spirv::reflect::traces_rays(&module.words)? {
            depth = 2;
            if limits.max_recursion_depth < 2 {
                return Err(XrError::unavailable(format!(
                    "{context}: the {} stage {} traces rays, which takes a recursion depth of 2; \
                     this device's maxRayRecursionDepth is {}",
                    module.stage.name(),
                    module.file,
                    limits.max_recursion_depth
                )));
            }
        }
    }
    Ok(depth)
}

/// Checks what the stages of a ray tracing program share, before the
/// driver sees them, naming the stage and the variable: every incoming
/// payload is made of the scalars of a payload some stage traces with,
/// every incoming callable data of those of some callable data, and the
/// hit attributes of a hit group hold the triangle's barycentrics (begin
/// with two floats) or are exactly what its intersection stage reports. Scalars, not types:
/// a `vec3` and a struct of one `vec3` are the same memory, and authors
/// pass one where the other is declared.
pub fn check_interface(context: &str, modules: &[StageModule], groups: &Groups) -> Result<(), XrError> {
    let interfaces: Vec<Vec<RayVariable>> =
        modules.iter().map(|m| xr_spirv::reflect::ray_interface(&m.words)).collect::<Result<_, _>>()?;
    let declared = |storage: RayStorage| -> Vec<(usize, &RayVariable)> {
        interfaces
            .iter()
            .enumerate()
            .flat_map(|(i, vars)| vars.iter().filter(move |v| v.storage == storage).map(move |v| (i, v)))
            .collect()
    };
    let describe = |(i, v): (usize, &RayVariable)| format!("{} writes '{}' ({})", modules[i].file, v.name, v.ty);
    for (incoming, outgoing, what) in [
        (RayStorage::IncomingPayload, RayStorage::Payload, "no stage that traces rays writes"),
        (RayStorage::IncomingCallableData, RayStorage::CallableData, "no stage that calls a callable stage writes"),
    ] {
        let sent = declared(outgoing);
        for (i, variable) in declared(incoming) {
            if sent.iter().any(|(_, s)| s.scalars == variable.scalars) {
                continue;
            }
            let others = if sent.is_empty() {
                String::from("none declares one")
            } else {
                sent.iter().map(|s| describe(*s)).collect::<Vec<_>>().join(", ")
            };
            return Err(XrError::invalid_input(format!(
                "{context}: the {} stage {} reads the {} '{}' ({}), which {what} ({others})",
                modules[i].stage.name(),
                modules[i].file,
                variable.storage.name(),
                variable.name,
                variable.ty
            )));
        }
    }
    let attribute = |index: usize| interfaces[index].iter().find(|v| v.storage == RayStorage::HitAttribute);
    for (number, group) in groups.hit.iter().enumerate() {
        let reported = group.intersection.and_then(attribute);
        for index in [group.closest_hit, group.any_hit].into_iter().flatten() {
            let Some(read) = attribute(index) else { continue };
            let fits = match reported {
                Some(reported) => read.scalars == reported.scalars,
                // Triangles report their barycentrics into the first two
                // floats of the attribute: a larger one (a `vec3`, as
                // public programs declare) holds them, and the API and
                // the drivers accept it.
                None if group.intersection.is_none() => holds_barycentrics(&read.scalars),
                None => true,
            };
            if !fits {
                let expected = reported.map_or_else(
                    || "one that holds the triangle's barycentrics: two floats first, as vec2<f32>".to_owned(),
                    |v| format!("{}, what its intersection stage reports", v.ty),
                );
                return Err(XrError::invalid_input(format!(
                    "{context}: the {} stage {} of hit group {number} reads the hit attribute '{}' ({}), not {expected}",
                    modules[index].stage.name(),
                    modules[index].file,
                    read.name,
                    read.ty
                )));
            }
        }
    }
    Ok(())
}

/// Whether a hit attribute of these scalars holds the barycentrics a
/// triangle hit reports: two floats, first.
fn holds_barycentrics(scalars: &[String]) -> bool {
    scalars.len() >= 2 && scalars[..2].iter().all(|s| s == "f32")
}

/// A ray tracing pipeline's binding table: its buffer, and the regions
/// the device launches rays through.
pub struct BindingTable {
    pub buffer: vk::Buffer,
    pub memory: vk::DeviceMemory,
    pub regions: [ShaderBindingRegion; 4],
}

/// The device's ray tracing pipeline functions and numbers.
pub struct RayTracingDevice {
    pub functions: ash::khr::ray_tracing_pipeline::Device,
    pub limits: RayTracingLimits,
}

impl RayTracingDevice {
    /// The functions and numbers, where the device enabled ray tracing pipelines.
    ///
    /// # Safety
    /// `instance`, `physical` and `device` are live and belong together.
    pub unsafe fn load(instance: &ash::Instance, physical: vk::PhysicalDevice, device: &ash::Device) -> Self {
        let mut properties = vk::PhysicalDeviceRayTracingPipelinePropertiesKHR::default();
        {
            let mut query = vk::PhysicalDeviceProperties2::default().push_next(&mut properties);
            // SAFETY: as the caller promises; the chain lives across the call.
            unsafe { instance.get_physical_device_properties2(physical, &mut query) };
        }
        Self {
            functions: ash::khr::ray_tracing_pipeline::Device::new(instance, device),
            limits: RayTracingLimits {
                handle_size: properties.shader_group_handle_size,
                handle_alignment: properties.shader_group_handle_alignment,
                base_alignment: properties.shader_group_base_alignment,
                max_recursion_depth: properties.max_ray_recursion_depth,
                max_stride: properties.max_shader_group_stride,
            },
        }
    }

    /// The pipeline of `modules` (created as `shaders`) in `groups`.
    pub fn pipeline(
        &self,
        context: &str,
        modules: &[StageModule],
        shaders: &[vk::ShaderModule],
        groups: &Groups,
        layout: vk::PipelineLayout,
        cache: vk::PipelineCache,
    ) -> Result<vk::Pipeline, XrError> {
        let entries: Vec<CString> = modules
            .iter()
            .map(|m| {
                CString::new(m.entry_point.as_str())
                    .map_err(|_| XrError::invalid_input(format!("{context}: entry point with a NUL byte")))
            })
            .collect::<Result<_, _>>()?;
        let specializations: Vec<_> = modules.iter().map(crate::pipelines::specialization).collect();
        let infos: Vec<vk::SpecializationInfo<'_>> = specializations
            .iter()
            .map(|(map, data)| vk::SpecializationInfo::default().map_entries(map).data(data))
            .collect();
        let stages: Vec<vk::PipelineShaderStageCreateInfo<'_>> = modules
            .iter()
            .zip(shaders)
            .zip(&entries)
            .zip(&infos)
            .map(|(((module, shader), entry), info)| {
                let stage = vk::PipelineShaderStageCreateInfo::default()
                    .stage(crate::layout::stage_flag(module.stage))
                    .module(*shader)
                    .name(entry);
                if module.specializations.is_empty() { stage } else { stage.specialization_info(info) }
            })
            .collect();
        let general = |index: usize| {
            vk::RayTracingShaderGroupCreateInfoKHR::default()
                .ty(vk::RayTracingShaderGroupTypeKHR::GENERAL)
                .general_shader(index as u32)
                .closest_hit_shader(vk::SHADER_UNUSED_KHR)
                .any_hit_shader(vk::SHADER_UNUSED_KHR)
                .intersection_shader(vk::SHADER_UNUSED_KHR)
        };
        let unused = |index: Option<usize>| index.map_or(vk::SHADER_UNUSED_KHR, |i| i as u32);
        let mut group_infos = vec![general(groups.ray_generation)];
        group_infos.extend(groups.miss.iter().map(|i| general(*i)));
        group_infos.extend(groups.hit.iter().map(|hit| {
            let ty = if hit.intersection.is_some() {
                vk::RayTracingShaderGroupTypeKHR::PROCEDURAL_HIT_GROUP
            } else {
                vk::RayTracingShaderGroupTypeKHR::TRIANGLES_HIT_GROUP
            };
            vk::RayTracingShaderGroupCreateInfoKHR::default()
                .ty(ty)
                .general_shader(vk::SHADER_UNUSED_KHR)
                .closest_hit_shader(unused(hit.closest_hit))
                .any_hit_shader(unused(hit.any_hit))
                .intersection_shader(unused(hit.intersection))
        }));
        group_infos.extend(groups.callable.iter().map(|i| general(*i)));
        let depth = recursion_depth(context, modules, &self.limits)?;
        let info = vk::RayTracingPipelineCreateInfoKHR::default()
            .stages(&stages)
            .groups(&group_infos)
            .max_pipeline_ray_recursion_depth(depth)
            .layout(layout);
        // SAFETY: every structure `info` points to lives until the call returns.
        unsafe { self.functions.create_ray_tracing_pipelines(vk::DeferredOperationKHR::null(), cache, &[info], None) }
            .map(|pipelines| pipelines[0])
            .map_err(|(_, e)| XrError::driver(format!("{context}: vkCreateRayTracingPipelinesKHR failed: {e}")))
    }

    /// The binding table of `pipeline`: each group's handle copied into its record.
    pub fn binding_table(
        &self,
        device: &ash::Device,
        memory_properties: &vk::PhysicalDeviceMemoryProperties,
        pipeline: vk::Pipeline,
        groups: &Groups,
    ) -> Result<BindingTable, XrError> {
        let counts = groups.counts();
        let (regions, size) = table_layout(counts, &self.limits);
        tracing::debug!(
            handle_size = self.limits.handle_size,
            handle_alignment = self.limits.handle_alignment,
            base_alignment = self.limits.base_alignment,
            ?regions,
            "shader binding table"
        );
        let group_count: u64 = counts.iter().sum();
        let handle_size = self.limits.handle_size as usize;
        // SAFETY: the pipeline has `group_count` groups; the result is `group_count` handles long.
        let handles = unsafe {
            self.functions.get_ray_tracing_shader_group_handles(
                pipeline,
                0,
                group_count as u32,
                group_count as usize * handle_size,
            )
        }
        .map_err(|e| XrError::driver(format!("vkGetRayTracingShaderGroupHandlesKHR failed: {e}")))?;
        let base = u64::from(self.limits.base_alignment.max(1));
        // Room to move the start up to the base alignment, which the allocation may not have.
        let HostBuffer { buffer, memory, mapped } = host_buffer(
            device,
            memory_properties,
            size + base,
            vk::BufferUsageFlags::SHADER_BINDING_TABLE_KHR,
            true,
            "a shader binding table",
        )?;
        // SAFETY: the buffer was made addressable.
        let address =
            unsafe { device.get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(buffer)) };
        let start = address.div_ceil(base) * base;
        let mut handle = handles.chunks_exact(handle_size);
        let mut table = [ShaderBindingRegion::default(); 4];
        for ((region, count), out) in regions.iter().zip(counts).zip(&mut table) {
            if count == 0 {
                continue;
            }
            for record in 0..count {
                let at = (start - address + region.offset + record * region.stride) as usize;
                let bytes = handle.next().unwrap_or_default();
                // SAFETY: `at + handle_size` is within the mapped `size + base` bytes (the layout's end).
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), mapped.add(at), bytes.len()) };
            }
            *out = ShaderBindingRegion { address: start + region.offset, stride: region.stride, size: region.size };
        }
        // SAFETY: mapped above; the records are written and host coherent.
        unsafe { device.unmap_memory(memory) };
        Ok(BindingTable { buffer, memory, regions: table })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ShaderStage::*;

    fn modules(stages: &[(ShaderStage, Option<u32>)]) -> Vec<StageModule> {
        stages
            .iter()
            .enumerate()
            .map(|(i, (stage, hit_group))| StageModule {
                stage: *stage,
                entry_point: "main".into(),
                specializations: Vec::new(),
                words: Vec::new(),
                file: format!("{i}.{}", stage.name()),
                hit_group: *hit_group,
            })
            .collect()
    }

    fn groups_of(stages: &[ShaderStage]) -> Groups {
        let unnamed: Vec<_> = stages.iter().map(|s| (*s, None)).collect();
        Groups::of("p", &modules(&unnamed)).unwrap()
    }

    #[test]
    fn groups_follow_the_rule_whatever_order_the_stages_come_in() {
        let groups = groups_of(&[RayGeneration, Miss, ClosestHit, Miss, AnyHit, ClosestHit, Callable]);
        assert_eq!(groups.ray_generation, 0);
        assert_eq!(groups.miss, [1, 3]);
        assert_eq!(
            groups.hit,
            [
                HitGroup { closest_hit: Some(2), any_hit: Some(4), intersection: None },
                HitGroup { closest_hit: Some(5), any_hit: None, intersection: None }
            ]
        );
        assert_eq!(groups.callable, [6]);
        assert_eq!(groups.counts(), [1, 2, 2, 1]);
        // Sorted by stage (as `xr compile` sorts files), the same groups of the same stages.
        let sorted = groups_of(&[RayGeneration, Miss, Miss, ClosestHit, ClosestHit, AnyHit, Callable]);
        assert_eq!(sorted.hit[0], HitGroup { closest_hit: Some(3), any_hit: Some(5), intersection: None });
        assert_eq!(sorted.hit[1].closest_hit, Some(4));
    }

    #[test]
    fn named_hit_groups_come_from_the_stored_stages_and_a_broken_rule_names_the_file() {
        let named = modules(&[(RayGeneration, None), (ClosestHit, Some(1)), (ClosestHit, Some(0)), (AnyHit, Some(1))]);
        let groups = Groups::of("p", &named).unwrap();
        assert_eq!(
            groups.hit,
            [
                HitGroup { closest_hit: Some(2), any_hit: None, intersection: None },
                HitGroup { closest_hit: Some(1), any_hit: Some(3), intersection: None }
            ]
        );
        let broken = modules(&[(RayGeneration, None), (ClosestHit, Some(0)), (AnyHit, None)]);
        let error = Groups::of("program 'p'", &broken).unwrap_err().to_string();
        assert!(error.contains("program 'p': 2.any-hit: the any-hit stage names no hit group"), "{error}");
    }

    fn limits(handle_size: u32, handle_alignment: u32, base_alignment: u32) -> RayTracingLimits {
        RayTracingLimits { handle_size, handle_alignment, base_alignment, max_recursion_depth: 31, max_stride: 4096 }
    }

    fn compiled(stage: ShaderStage, file: &str, source: &str) -> StageModule {
        let desc = xr_sourcebuild::SourceDesc::new("glsl", stage, file, source);
        let options = xr_spirv::SpirvOptions::new(xr_spirv::TargetEnv::Vulkan10).for_stages(&[stage]).unwrap();
        let words = xr_spirv::SpirvCompiler::new().unwrap().compile(&desc, &options).unwrap().words;
        StageModule {
            stage,
            entry_point: "main".into(),
            specializations: Vec::new(),
            words,
            file: file.into(),
            hit_group: None,
        }
    }

    #[test]
    fn a_hit_stage_that_traces_needs_a_recursion_depth_of_2_which_a_device_of_1_refuses_by_name() {
        const HEADER: &str = "#version 460\n#extension GL_EXT_ray_tracing : require\n\
            layout(location = 0) rayPayloadInEXT vec3 color;\n";
        let plain = compiled(ClosestHit, "plain.rchit", &format!("{HEADER}void main() {{ color = vec3(1.0); }}\n"));
        let tracing = compiled(
            ClosestHit,
            "shadow.rchit",
            &format!(
                "{HEADER}layout(binding = 0) uniform accelerationStructureEXT scene;\n\
                 layout(location = 1) rayPayloadEXT float shade;\n\
                 void main() {{ traceRayEXT(scene, 0u, 0xffu, 0u, 0u, 1u, vec3(0.0), 0.0, vec3(1.0), 1.0, 1); \
                 color = vec3(shade); }}\n"
            ),
        );
        let deep = limits(32, 16, 32);
        let shallow = RayTracingLimits { max_recursion_depth: 1, ..deep };
        assert_eq!(recursion_depth("p", std::slice::from_ref(&plain), &shallow).unwrap(), 1);
        assert_eq!(recursion_depth("p", &[plain.clone(), tracing.clone()], &deep).unwrap(), 2);
        let refused = recursion_depth("program 'p'", &[plain, tracing], &shallow).unwrap_err().to_string();
        assert!(
            refused.contains(
                "program 'p': the closest-hit stage shadow.rchit traces rays, which takes a recursion depth of 2; \
                 this device's maxRayRecursionDepth is 1"
            ),
            "{refused}"
        );
    }

    /// A hit stage declaring `attribute` (a GLSL declaration of `attribs`),
    /// with the closest-hit stages' payload where the stage has one (an
    /// intersection stage has none).
    fn hit_stage(stage: ShaderStage, file: &str, attribute: &str, body: &str) -> StageModule {
        let payload = if stage == Intersection { "" } else { "layout(location = 0) rayPayloadInEXT vec3 color;\n" };
        compiled(
            stage,
            file,
            &format!(
                "#version 460\n#extension GL_EXT_ray_tracing : require\n{payload}{attribute}\nvoid main() {{ {body} }}\n"
            ),
        )
    }

    fn check(stages: Vec<StageModule>) -> Result<(), String> {
        let generation = compiled(
            RayGeneration,
            "trace.rgen",
            "#version 460\n#extension GL_EXT_ray_tracing : require\n\
             layout(location = 0) rayPayloadEXT vec3 color;\nvoid main() { color = vec3(0.0); }\n",
        );
        let modules: Vec<StageModule> = std::iter::once(generation).chain(stages).collect();
        let groups = Groups::of("program 'p'", &modules).unwrap();
        check_interface("program 'p'", &modules, &groups).map_err(|e| e.to_string())
    }

    #[test]
    fn a_triangle_hit_attribute_holds_the_barycentrics_in_its_first_two_floats() {
        for attribute in [
            "hitAttributeEXT vec2 attribs;",
            "hitAttributeEXT vec3 attribs;",
            "hitAttributeEXT vec4 attribs;",
            "struct Hit { vec2 uv; float t; }; hitAttributeEXT Hit attribs;",
        ] {
            let read = hit_stage(ClosestHit, "hit.rchit", attribute, "color = vec3(0.0);");
            check(vec![read.clone()]).unwrap_or_else(|e| panic!("{attribute}: {e}"));
            let any = hit_stage(AnyHit, "hit.rahit", attribute, "");
            check(vec![read, any]).unwrap_or_else(|e| panic!("{attribute} in an any-hit stage: {e}"));
        }
        for (attribute, ty) in [
            ("hitAttributeEXT float attribs;", "f32"),
            ("hitAttributeEXT int attribs;", "i32"),
            ("hitAttributeEXT ivec2 attribs;", "vec2<i32>"),
            ("struct Hit { uint id; vec2 uv; }; hitAttributeEXT Hit attribs;", "{u32, vec2<f32>}"),
        ] {
            let read = hit_stage(ClosestHit, "hit.rchit", attribute, "color = vec3(0.0);");
            let refused = check(vec![read]).unwrap_err();
            assert!(
                refused.contains(&format!(
                    "program 'p': the closest-hit stage hit.rchit of hit group 0 reads the hit attribute 'attribs' \
                     ({ty}), not one that holds the triangle's barycentrics: two floats first"
                )),
                "{attribute}: {refused}"
            );
        }
    }

    #[test]
    fn a_procedural_hit_group_reads_exactly_what_its_intersection_stage_reports() {
        let intersection = hit_stage(
            Intersection,
            "sphere.rint",
            "hitAttributeEXT vec3 attribs;",
            "attribs = vec3(1.0); reportIntersectionEXT(1.0, 0u);",
        );
        let same = hit_stage(ClosestHit, "hit.rchit", "hitAttributeEXT vec3 attribs;", "color = attribs;");
        check(vec![intersection.clone(), same]).unwrap();
        // Two floats would hold a triangle's barycentrics; here the
        // intersection stage reports three, and the hit stage must read them.
        let shorter =
            hit_stage(ClosestHit, "hit.rchit", "hitAttributeEXT vec2 attribs;", "color = vec3(attribs, 0.0);");
        let refused = check(vec![intersection, shorter]).unwrap_err();
        assert!(
            refused.contains(
                "program 'p': the closest-hit stage hit.rchit of hit group 0 reads the hit attribute 'attribs' \
                 (vec2<f32>), not vec3<f32>, what its intersection stage reports"
            ),
            "{refused}"
        );
    }

    #[test]
    fn every_region_starts_on_the_base_alignment_and_every_record_on_the_handle_alignment() {
        // lavapipe 25 (32, 16, 32), common desktop numbers, and an odd handle size.
        for numbers in [limits(32, 16, 32), limits(32, 32, 64), limits(16, 8, 64), limits(20, 16, 128)] {
            let (regions, end) = table_layout([1, 2, 3, 0], &numbers);
            let record = u64::from(numbers.handle_size).div_ceil(u64::from(numbers.handle_alignment))
                * u64::from(numbers.handle_alignment);
            for region in &regions[..3] {
                assert_eq!(region.offset % u64::from(numbers.base_alignment), 0, "{numbers:?}: {region:?}");
                assert!(region.stride >= u64::from(numbers.handle_size));
            }
            assert_eq!(regions[0].stride, regions[0].size, "the ray generation region is one record");
            assert_eq!(regions[0].stride % u64::from(numbers.base_alignment), 0);
            assert_eq!(regions[1].stride, record);
            assert_eq!(regions[2].size, 3 * record);
            assert_eq!(regions[3], Region::default(), "no callable stages: an empty region");
            assert!(regions[1].offset >= regions[0].offset + regions[0].size);
            assert!(regions[2].offset >= regions[1].offset + regions[1].size);
            assert_eq!(end, regions[2].offset + regions[2].size);
        }
    }
}
