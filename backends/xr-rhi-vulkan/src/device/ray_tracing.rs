//! Acceleration structures built from the device's buffers, and the launch
//! of ray tracing programs' rays.
//!
//! Every structure is built on the device (not with host commands, which
//! few drivers offer) and waited for, as every other call of this device
//! is; the scratch memory of a build is freed when it ends.

use super::{VkDevice, vk_error};
use ash::vk::{self, Handle};
use xr_device::{
    AccelerationInstance, AccelerationStructureId, BottomLevelDesc, ResourceBinding, TraceRaysCall, XrError, checks,
};

/// An acceleration structure and the buffer it lives in.
pub(super) struct Acceleration {
    handle: vk::AccelerationStructureKHR,
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    /// What an instance of a top level refers to it by.
    address: u64,
    /// A top level (instances), not a bottom level (triangles).
    top: bool,
}

/// The device's ray tracing functions and limits, where it enabled
/// acceleration structures.
pub(super) struct RayTracing {
    acceleration: ash::khr::acceleration_structure::Device,
    /// Where the device enabled `VK_KHR_ray_tracing_pipeline`.
    pipeline: Option<ash::khr::ray_tracing_pipeline::Device>,
    /// `minAccelerationStructureScratchOffsetAlignment`.
    scratch_alignment: u64,
    /// `maxRayDispatchInvocationCount`.
    max_invocations: u64,
    /// `VK_KHR_ray_tracing_position_fetch` is enabled: bottom-level
    /// structures keep their vertex positions for hit stages to read.
    positions_fetched: bool,
}

impl RayTracing {
    /// The functions, where `context` enabled acceleration structures.
    pub(super) fn load(context: &crate::instance::Context) -> Option<Self> {
        if !context.has_extension(ash::khr::acceleration_structure::NAME) {
            return None;
        }
        let mut acceleration = vk::PhysicalDeviceAccelerationStructurePropertiesKHR::default();
        let mut pipeline = vk::PhysicalDeviceRayTracingPipelinePropertiesKHR::default();
        let mut query = vk::PhysicalDeviceProperties2::default().push_next(&mut acceleration).push_next(&mut pipeline);
        // SAFETY: `physical` belongs to this live instance; the chain lives across the call.
        unsafe { context.instance.get_physical_device_properties2(context.physical, &mut query) };
        let has_pipelines = context.has_extension(ash::khr::ray_tracing_pipeline::NAME);
        Some(Self {
            acceleration: ash::khr::acceleration_structure::Device::new(&context.instance, &context.device),
            pipeline: has_pipelines
                .then(|| ash::khr::ray_tracing_pipeline::Device::new(&context.instance, &context.device)),
            scratch_alignment: u64::from(acceleration.min_acceleration_structure_scratch_offset_alignment.max(1)),
            max_invocations: u64::from(pipeline.max_ray_dispatch_invocation_count),
            positions_fetched: context.has_extension(ash::khr::ray_tracing_position_fetch::NAME),
        })
    }
}

/// `value` rounded up to a multiple of `alignment` (a power of two).
fn align_up(value: u64, alignment: u64) -> u64 {
    value.div_ceil(alignment) * alignment
}

impl VkDevice {
    fn ray_tracing(&self) -> Result<&RayTracing, XrError> {
        self.ray_tracing.as_ref().ok_or_else(|| {
            XrError::unavailable(format!(
                "this device ({}) makes no acceleration structures (VK_KHR_acceleration_structure)",
                self.context.renderer()
            ))
        })
    }

    /// The device address of a buffer made with `SHADER_DEVICE_ADDRESS`.
    fn buffer_address(&self, buffer: vk::Buffer) -> u64 {
        // SAFETY: the buffer is this device's, made addressable.
        unsafe { self.context.device.get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(buffer)) }
    }

    /// A buffer in addressable device memory (`host` for memory the host writes).
    fn addressable_buffer(
        &self,
        size: u64,
        usage: vk::BufferUsageFlags,
        host: bool,
    ) -> Result<(vk::Buffer, vk::DeviceMemory), XrError> {
        let device = &self.context.device;
        let info = vk::BufferCreateInfo::default()
            .size(size.max(4))
            .usage(usage | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS);
        let flags = if host {
            vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT
        } else {
            vk::MemoryPropertyFlags::DEVICE_LOCAL
        };
        // SAFETY: valid create infos; the buffer is destroyed if its memory cannot be had.
        unsafe {
            let buffer = device.create_buffer(&info, None).map_err(vk_error("vkCreateBuffer"))?;
            let memory = match self.allocate_addressable(device.get_buffer_memory_requirements(buffer), flags) {
                Ok(memory) => memory,
                Err(e) => {
                    device.destroy_buffer(buffer, None);
                    return Err(e);
                }
            };
            device.bind_buffer_memory(buffer, memory, 0).map_err(vk_error("vkBindBufferMemory"))?;
            Ok((buffer, memory))
        }
    }

    /// Builds one acceleration structure of `geometry` (`count` primitives)
    /// on the device and waits for it.
    fn build(
        &mut self,
        ty: vk::AccelerationStructureTypeKHR,
        geometry: vk::AccelerationStructureGeometryKHR<'_>,
        count: u32,
    ) -> Result<AccelerationStructureId, XrError> {
        let rt = self.ray_tracing()?;
        let geometries = [geometry];
        let mut flags = vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE;
        // A hit stage may read its triangle's positions
        // (`gl_HitTriangleVertexPositionsEXT`) only from a structure built
        // to keep them.
        if rt.positions_fetched && ty == vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL {
            flags |= vk::BuildAccelerationStructureFlagsKHR::ALLOW_DATA_ACCESS;
        }
        let mut info = vk::AccelerationStructureBuildGeometryInfoKHR::default()
            .ty(ty)
            .flags(flags)
            .mode(vk::BuildAccelerationStructureModeKHR::BUILD)
            .geometries(&geometries);
        let mut sizes = vk::AccelerationStructureBuildSizesInfoKHR::default();
        // SAFETY: a valid build info on this device.
        unsafe {
            rt.acceleration.get_acceleration_structure_build_sizes(
                vk::AccelerationStructureBuildTypeKHR::DEVICE,
                &info,
                &[count],
                &mut sizes,
            )
        };
        let (buffer, memory) = self.addressable_buffer(
            sizes.acceleration_structure_size,
            vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR,
            false,
        )?;
        let create = vk::AccelerationStructureCreateInfoKHR::default()
            .buffer(buffer)
            .size(sizes.acceleration_structure_size)
            .ty(ty);
        let device = &self.context.device;
        // SAFETY: the buffer is large enough, as the driver said.
        let handle = match unsafe { rt.acceleration.create_acceleration_structure(&create, None) } {
            Ok(handle) => handle,
            Err(e) => {
                // SAFETY: nothing uses them.
                unsafe {
                    device.destroy_buffer(buffer, None);
                    device.free_memory(memory, None);
                }
                return Err(vk_error("vkCreateAccelerationStructureKHR")(e));
            }
        };
        // SAFETY: the handle was just made on this device.
        let address = unsafe {
            rt.acceleration.get_acceleration_structure_device_address(
                &vk::AccelerationStructureDeviceAddressInfoKHR::default().acceleration_structure(handle),
            )
        };
        // Kept from here on, so that a failed build still frees it with the device.
        self.accelerations.push(Acceleration {
            handle,
            buffer,
            memory,
            address,
            top: ty == vk::AccelerationStructureTypeKHR::TOP_LEVEL,
        });
        let id = AccelerationStructureId(self.accelerations.len() as u32 - 1);
        let rt = self.ray_tracing()?;
        let alignment = rt.scratch_alignment;
        let (scratch, scratch_memory) =
            self.addressable_buffer(sizes.build_scratch_size + alignment, vk::BufferUsageFlags::STORAGE_BUFFER, false)?;
        let scratch_address = align_up(self.buffer_address(scratch), alignment);
        info = info
            .dst_acceleration_structure(handle)
            .scratch_data(vk::DeviceOrHostAddressKHR { device_address: scratch_address });
        let range = [vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(count)];
        let built = self.submit("building an acceleration structure", |cb| {
            // SAFETY: recording; the inputs, the scratch and the structure are this device's.
            unsafe {
                rt.acceleration.cmd_build_acceleration_structures(cb, &[info], &[&range]);
                // Built before any later trace or build reads it.
                let barrier = vk::MemoryBarrier::default()
                    .src_access_mask(vk::AccessFlags::ACCELERATION_STRUCTURE_WRITE_KHR)
                    .dst_access_mask(vk::AccessFlags::ACCELERATION_STRUCTURE_READ_KHR);
                self.context.device.cmd_pipeline_barrier(
                    cb,
                    vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR,
                    vk::PipelineStageFlags::ALL_COMMANDS,
                    vk::DependencyFlags::empty(),
                    &[barrier],
                    &[],
                    &[],
                );
            }
        });
        // SAFETY: the submission was waited for (or never made): nothing uses the scratch.
        unsafe {
            device.destroy_buffer(scratch, None);
            device.free_memory(scratch_memory, None);
        }
        built.map(|()| id)
    }

    pub(super) fn bottom_level(&mut self, desc: &BottomLevelDesc) -> Result<AccelerationStructureId, XrError> {
        self.ray_tracing()?;
        let vertices = self.data_buffer(desc.vertices)?;
        let stride = u64::from(desc.vertex_stride) * 4;
        if desc.vertex_stride < 3 {
            return Err(XrError::invalid_input(format!(
                "a bottom level's vertices start with a position of 3 floats: a stride of {} floats is too short",
                desc.vertex_stride
            )));
        }
        let vertex_count = vertices.size as u64 / stride;
        let vertex_buffer = vertices.buffer;
        let indices = match desc.indices.into_option() {
            Some(id) => {
                let buffer = self.data_buffer(id)?;
                // SAFETY: host-visible, coherent, `size` long; no submission runs.
                let bytes = unsafe { self.read_host(buffer.memory, buffer.size) }?;
                let indices: Vec<u32> =
                    bytes.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
                checks::check_triangle_indices(id, &indices, vertex_count)?;
                Some((buffer.buffer, indices.len() as u64))
            }
            None => None,
        };
        let corners = indices.map_or(vertex_count, |(_, count)| count);
        if corners == 0 || corners % 3 != 0 {
            return Err(XrError::invalid_input(format!(
                "a bottom level is made of whole triangles: buffer {} gives {corners} corners",
                desc.indices.into_option().unwrap_or(desc.vertices).0
            )));
        }
        let mut triangles = vk::AccelerationStructureGeometryTrianglesDataKHR::default()
            .vertex_format(vk::Format::R32G32B32_SFLOAT)
            .vertex_data(vk::DeviceOrHostAddressConstKHR { device_address: self.buffer_address(vertex_buffer) })
            .vertex_stride(stride)
            .max_vertex(vertex_count.saturating_sub(1) as u32)
            .index_type(vk::IndexType::NONE_KHR);
        if let Some((buffer, _)) = indices {
            triangles = triangles
                .index_type(vk::IndexType::UINT32)
                .index_data(vk::DeviceOrHostAddressConstKHR { device_address: self.buffer_address(buffer) });
        }
        let flags = if desc.opaque { vk::GeometryFlagsKHR::OPAQUE } else { vk::GeometryFlagsKHR::empty() };
        let geometry = vk::AccelerationStructureGeometryKHR::default()
            .geometry_type(vk::GeometryTypeKHR::TRIANGLES)
            .geometry(vk::AccelerationStructureGeometryDataKHR { triangles })
            .flags(flags);
        self.build(vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL, geometry, (corners / 3) as u32)
    }

    pub(super) fn top_level(&mut self, instances: &[AccelerationInstance]) -> Result<AccelerationStructureId, XrError> {
        self.ray_tracing()?;
        let mut records = Vec::with_capacity(instances.len());
        for (index, instance) in instances.iter().enumerate() {
            xr_device::check_instance(index, instance)?;
            let id = instance.bottom_level.0;
            let bottom = self.accelerations.get(id as usize).ok_or_else(|| {
                XrError::invalid_input(format!(
                    "instance {index} places bottom level {id}, which this device has not made \
                     ({} acceleration structures made)",
                    self.accelerations.len()
                ))
            })?;
            if bottom.top {
                return Err(XrError::invalid_input(format!(
                    "instance {index} places acceleration structure {id}, a top level: instances place bottom levels"
                )));
            }
            records.push(vk::AccelerationStructureInstanceKHR {
                transform: vk::TransformMatrixKHR { matrix: instance.transform },
                instance_custom_index_and_mask: vk::Packed24_8::new(instance.custom_index, instance.mask as u8),
                instance_shader_binding_table_record_offset_and_flags: vk::Packed24_8::new(
                    instance.hit_group_offset,
                    0,
                ),
                acceleration_structure_reference: vk::AccelerationStructureReferenceKHR {
                    device_handle: bottom.address,
                },
            });
        }
        let bytes = std::mem::size_of_val(records.as_slice());
        let (buffer, memory) = self.addressable_buffer(
            bytes as u64,
            vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR,
            true,
        )?;
        // SAFETY: the instances are plain data of `bytes` bytes; the memory is host visible and that long.
        let written = unsafe {
            let data = std::slice::from_raw_parts(records.as_ptr().cast::<u8>(), bytes);
            self.write_host(memory, 0, data)
        };
        let built = written.and_then(|()| {
            let data = vk::AccelerationStructureGeometryInstancesDataKHR::default()
                .array_of_pointers(false)
                .data(vk::DeviceOrHostAddressConstKHR { device_address: self.buffer_address(buffer) });
            let geometry = vk::AccelerationStructureGeometryKHR::default()
                .geometry_type(vk::GeometryTypeKHR::INSTANCES)
                .geometry(vk::AccelerationStructureGeometryDataKHR { instances: data });
            self.build(vk::AccelerationStructureTypeKHR::TOP_LEVEL, geometry, records.len() as u32)
        });
        // SAFETY: the build was waited for: nothing reads the instances any more.
        unsafe {
            self.context.device.destroy_buffer(buffer, None);
            self.context.device.free_memory(memory, None);
        }
        built
    }

    pub(super) fn acceleration_binding(&self, id: AccelerationStructureId) -> Result<ResourceBinding, XrError> {
        let structure = checks::find(&self.accelerations, "acceleration structure", id.0)?;
        if !structure.top {
            return Err(XrError::invalid_input(format!(
                "acceleration structure {} is a bottom level: programs trace a top level of its instances",
                id.0
            )));
        }
        Ok(ResourceBinding {
            device: self.context.device.handle().as_raw(),
            is_texture: false,
            handle: structure.handle.as_raw(),
            object: structure.buffer.as_raw(),
            sampler: 0,
            size: 0,
            storage: false,
            acceleration_structure: true,
        })
    }

    pub(super) fn launch_rays(&mut self, call: &TraceRaysCall) -> Result<(), XrError> {
        let renderer = self.context.renderer();
        let pipeline = self.ray_tracing.as_ref().and_then(|rt| rt.pipeline.as_ref()).ok_or_else(|| {
            XrError::unavailable(format!(
                "this device ({renderer}) has no ray tracing pipelines (VK_KHR_ray_tracing_pipeline)"
            ))
        })?;
        let max_invocations = self.ray_tracing()?.max_invocations;
        let program = self.program(call.program)?;
        if !program.ray_tracing {
            return Err(XrError::invalid_input(format!(
                "program {} is not a ray tracing program: draw or dispatch it",
                call.program.name
            )));
        }
        checks::check_launch_size(call.size, max_invocations)?;
        let [raygen, miss, hit, callable] = program.shader_binding_table.map(|r| {
            vk::StridedDeviceAddressRegionKHR::default().device_address(r.address).stride(r.stride).size(r.size)
        });
        let [width, height, depth] = call.size;
        let device = &self.context.device;
        self.submit("tracing rays", |cb| {
            // SAFETY: recording; the pipeline, its sets and its binding table are this device's.
            unsafe {
                let bind = vk::PipelineBindPoint::RAY_TRACING_KHR;
                device.cmd_bind_pipeline(cb, bind, vk::Pipeline::from_raw(program.pipeline));
                self.bind_program_state(cb, &program, bind);
                pipeline.cmd_trace_rays(cb, &raygen, &miss, &hit, &callable, width, height, depth);
            }
            self.shader_writes_visible(cb, vk::PipelineStageFlags::RAY_TRACING_SHADER_KHR);
        })
    }

    /// Destroys every acceleration structure.
    ///
    /// # Safety
    /// The device is idle.
    pub(super) unsafe fn destroy_accelerations(&mut self) {
        let Some(rt) = self.ray_tracing.as_ref() else { return };
        let device = &self.context.device;
        for structure in self.accelerations.drain(..) {
            // SAFETY: per the contract, nothing uses them; each is destroyed once.
            unsafe {
                rt.acceleration.destroy_acceleration_structure(structure.handle, None);
                device.destroy_buffer(structure.buffer, None);
                device.free_memory(structure.memory, None);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::align_up;

    #[test]
    fn scratch_addresses_round_up_to_the_alignment() {
        assert_eq!(align_up(0, 128), 0);
        assert_eq!(align_up(1, 128), 128);
        assert_eq!(align_up(256, 128), 256);
    }
}
