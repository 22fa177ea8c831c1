//! Buffers the host writes and the device reads: the uniform buffers of a
//! program's blocks and its shader binding table. One path makes them, so
//! that every failure on the way frees what was made before it.

use ash::vk;
use xr_device::XrError;

/// A buffer in host-visible, coherent memory, bound and mapped.
pub struct HostBuffer {
    pub buffer: vk::Buffer,
    pub memory: vk::DeviceMemory,
    pub mapped: *mut u8,
}

/// A buffer of `size` bytes for `usage`, mapped and zeroed; `addressable`
/// adds a device address (`SHADER_DEVICE_ADDRESS`, as a binding table's
/// needs). `what` names it in errors.
pub fn host_buffer(
    device: &ash::Device,
    memory_properties: &vk::PhysicalDeviceMemoryProperties,
    size: u64,
    usage: vk::BufferUsageFlags,
    addressable: bool,
    what: &str,
) -> Result<HostBuffer, XrError> {
    let failed = |call: &str, e: vk::Result| XrError::driver(format!("{call} for {what} failed: {e}"));
    let usage = if addressable { usage | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS } else { usage };
    // SAFETY: valid create infos; on each failure what was made is destroyed.
    unsafe {
        let buffer = device
            .create_buffer(&vk::BufferCreateInfo::default().size(size).usage(usage), None)
            .map_err(|e| failed("vkCreateBuffer", e))?;
        let requirements = device.get_buffer_memory_requirements(buffer);
        let flags = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let Some(index) = (0..memory_properties.memory_type_count).find(|i| {
            requirements.memory_type_bits & (1 << i) != 0
                && memory_properties.memory_types[*i as usize].property_flags.contains(flags)
        }) else {
            device.destroy_buffer(buffer, None);
            return Err(XrError::driver(format!("no host-visible coherent memory for {what}")));
        };
        let mut device_address = vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let mut info = vk::MemoryAllocateInfo::default().allocation_size(requirements.size).memory_type_index(index);
        if addressable {
            info = info.push_next(&mut device_address);
        }
        let memory = match device.allocate_memory(&info, None) {
            Ok(memory) => memory,
            Err(e) => {
                device.destroy_buffer(buffer, None);
                return Err(failed("vkAllocateMemory", e));
            }
        };
        let mapped = device
            .bind_buffer_memory(buffer, memory, 0)
            .and_then(|()| device.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()));
        match mapped {
            Ok(mapped) => {
                std::ptr::write_bytes(mapped.cast::<u8>(), 0, size as usize);
                Ok(HostBuffer { buffer, memory, mapped: mapped.cast() })
            }
            Err(e) => {
                device.destroy_buffer(buffer, None);
                device.free_memory(memory, None);
                Err(failed("binding and mapping memory", e))
            }
        }
    }
}
