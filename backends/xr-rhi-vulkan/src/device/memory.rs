//! Device memory: allocations, and host-visible memory written and read
//! through a mapping.

use super::{VkDevice, vk_error};
use ash::vk;
use xr_device::XrError;

impl VkDevice {
    pub(super) fn allocate(
        &self,
        requirements: vk::MemoryRequirements,
        flags: vk::MemoryPropertyFlags,
    ) -> Result<vk::DeviceMemory, XrError> {
        self.allocate_with(requirements, flags, false)
    }

    /// Memory whose buffers have device addresses (acceleration structure
    /// inputs, binding tables).
    pub(super) fn allocate_addressable(
        &self,
        requirements: vk::MemoryRequirements,
        flags: vk::MemoryPropertyFlags,
    ) -> Result<vk::DeviceMemory, XrError> {
        self.allocate_with(requirements, flags, true)
    }

    fn allocate_with(
        &self,
        requirements: vk::MemoryRequirements,
        flags: vk::MemoryPropertyFlags,
        addressable: bool,
    ) -> Result<vk::DeviceMemory, XrError> {
        let index = self.context.memory_type(requirements.memory_type_bits, flags)?;
        let mut device_address = vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let mut info = vk::MemoryAllocateInfo::default().allocation_size(requirements.size).memory_type_index(index);
        if addressable {
            info = info.push_next(&mut device_address);
        }
        // SAFETY: a valid device and allocate info.
        unsafe { self.context.device.allocate_memory(&info, None) }.map_err(vk_error("vkAllocateMemory"))
    }

    /// Copies `bytes` into host-visible, coherent `memory` from byte `offset`.
    ///
    /// # Safety
    /// `memory` is this device's, host visible and coherent, at least
    /// `offset + bytes.len()` long, and no submission uses it now.
    pub(super) unsafe fn write_host(
        &self,
        memory: vk::DeviceMemory,
        offset: usize,
        bytes: &[u8],
    ) -> Result<(), XrError> {
        let device = &self.context.device;
        // SAFETY: the caller guarantees `memory` is this device's, host
        // visible, unused by the device and at least `offset + bytes.len()`
        // long, so the mapping covers the bytes written; it is unmapped
        // before returning.
        unsafe {
            let mapped = device
                .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                .map_err(vk_error("vkMapMemory"))?;
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), mapped.cast::<u8>().add(offset), bytes.len());
            device.unmap_memory(memory);
        }
        Ok(())
    }

    /// The first `len` bytes of host-visible, coherent `memory`.
    ///
    /// # Safety
    /// As for [`Self::write_host`], with `len` in place of the range.
    pub(super) unsafe fn read_host(&self, memory: vk::DeviceMemory, len: usize) -> Result<Vec<u8>, XrError> {
        let device = &self.context.device;
        // SAFETY: the caller guarantees `memory` is this device's, host
        // visible, unused by the device and at least `len` long, so the
        // mapping covers the bytes read; they are copied out before it is
        // unmapped.
        unsafe {
            let mapped = device
                .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                .map_err(vk_error("vkMapMemory"))?;
            let data = std::slice::from_raw_parts(mapped.cast::<u8>(), len).to_vec();
            device.unmap_memory(memory);
            Ok(data)
        }
    }

    pub(super) fn host_buffer(
        &self,
        size: u64,
        usage: vk::BufferUsageFlags,
    ) -> Result<(vk::Buffer, vk::DeviceMemory), XrError> {
        let device = &self.context.device;
        let info = vk::BufferCreateInfo::default().size(size.max(4)).usage(usage);
        // SAFETY: valid create infos.
        unsafe {
            let buffer = device.create_buffer(&info, None).map_err(vk_error("vkCreateBuffer"))?;
            let requirements = device.get_buffer_memory_requirements(buffer);
            let flags = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
            let memory =
                self.allocate_with(requirements, flags, usage.contains(vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS))?;
            device.bind_buffer_memory(buffer, memory, 0).map_err(vk_error("vkBindBufferMemory"))?;
            Ok((buffer, memory))
        }
    }
}
