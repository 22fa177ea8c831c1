//! The constant table of a Vulkan program: the same interface as on
//! OpenGL, writing uniform buffer members and push constants at the offsets
//! reflection found, and writing the descriptors of the textures, samplers
//! and storage buffers the caller binds. It owns the program's Vulkan objects.

use ash::vk::{self, Handle};
use xr_device::{ResourceBinding, ResourceKind, VulkanLoader, XrError};
use xr_sourcebuild::{
    ConstantHandle, ConstantInfo, ConstantTableBackend, ConstantValue, RESOURCE_HANDLE, ResourceInfo, SetStatus,
    check_binding,
};
use xr_spirv::reflect::MemberLayout;

/// Where a constant lives.
#[derive(Clone, Copy, Debug)]
pub enum Storage {
    /// In uniform buffer `index` of the program.
    Uniform(usize),
    /// In the push constants.
    Push,
}

/// One settable constant.
pub struct Entry {
    pub info: ConstantInfo,
    pub storage: Storage,
    pub offset: usize,
    pub layout: MemberLayout,
}

/// A host-visible uniform buffer, mapped for the program's lifetime.
pub struct UniformBuffer {
    pub buffer: vk::Buffer,
    pub memory: vk::DeviceMemory,
    pub mapped: *mut u8,
    pub size: usize,
}

/// Everything a program owns on the device.
#[derive(Default)]
pub struct ProgramObjects {
    pub pipeline: vk::Pipeline,
    /// The graphics pipeline for targets with depth (null for compute).
    pub depth_pipeline: vk::Pipeline,
    pub layout: vk::PipelineLayout,
    pub set_layouts: Vec<vk::DescriptorSetLayout>,
    pub pool: vk::DescriptorPool,
    pub sets: Vec<vk::DescriptorSet>,
    pub buffers: Vec<UniformBuffer>,
    pub modules: Vec<vk::ShaderModule>,
    /// A ray tracing program's shader binding table.
    pub binding_table: Option<(vk::Buffer, vk::DeviceMemory)>,
    /// A graphics program's stages as shader objects, where the device
    /// draws with them (it then has no pipelines and no shader modules).
    pub shaders: Option<crate::shader_objects::ProgramShaders>,
}

impl ProgramObjects {
    /// Destroys every object made so far.
    ///
    /// # Safety
    /// Nothing may use them any more.
    pub unsafe fn destroy(&self, device: &ash::Device) {
        // SAFETY: per the contract; null handles are ignored by Vulkan.
        unsafe {
            device.destroy_pipeline(self.pipeline, None);
            device.destroy_pipeline(self.depth_pipeline, None);
            device.destroy_pipeline_layout(self.layout, None);
            device.destroy_descriptor_pool(self.pool, None);
            for layout in &self.set_layouts {
                device.destroy_descriptor_set_layout(*layout, None);
            }
            for buffer in &self.buffers {
                device.unmap_memory(buffer.memory);
                device.destroy_buffer(buffer.buffer, None);
                device.free_memory(buffer.memory, None);
            }
            for module in &self.modules {
                device.destroy_shader_module(*module, None);
            }
            if let Some((buffer, memory)) = self.binding_table {
                device.destroy_buffer(buffer, None);
                device.free_memory(memory, None);
            }
            if let Some(shaders) = &self.shaders {
                shaders.destroy();
            }
        }
    }
}

/// A texture, sampler, storage image or storage buffer the caller binds.
pub struct ResourceEntry {
    pub info: ResourceInfo,
    pub ty: vk::DescriptorType,
    /// The descriptor set it is in.
    pub set: vk::DescriptorSet,
    /// Which array elements have been bound.
    pub bound: Vec<bool>,
    /// An array of unknown size, laid out partially bound: its elements
    /// need not all be bound before a draw.
    pub partially_bound: bool,
    /// Other names it is found by (the sampler of a texture and sampler at one binding).
    pub aliases: Vec<String>,
}

/// The constant table; dropping it unregisters and destroys the program.
pub struct VkConstantTable {
    pub device: ash::Device,
    pub loader: VulkanLoader,
    pub name: u32,
    pub program_name: String,
    pub objects: ProgramObjects,
    /// Push constant bytes; boxed so the device can read them at each draw.
    pub push: Box<[u8]>,
    pub entries: Vec<Entry>,
    pub resources: Vec<ResourceEntry>,
    /// The descriptor sets as the device binds them (set 0 first).
    pub sets: Box<[u64]>,
    /// Resource elements not bound yet; the device reads it at each draw.
    pub unbound: Box<u32>,
    /// What the program's graphics pipelines are made from, and those made
    /// for targets of several attachments; boxed: the device calls it.
    pub pipelines: Option<std::sync::Arc<crate::pipelines::GraphicsPipelines>>,
    /// Where a program of shader objects hears of the formats it is drawn into.
    pub recorder: Option<Box<crate::pipelines::StateRecorder>>,
    /// The input attachments the device binds at each draw.
    pub input_attachments: Box<[xr_device::InputAttachmentSlot]>,
}

impl VkConstantTable {
    fn resource(&self, handle: ConstantHandle) -> Result<&ResourceEntry, XrError> {
        self.resources
            .get((handle.index & !RESOURCE_HANDLE) as usize)
            .filter(|_| handle.owner == self.name && handle.index & RESOURCE_HANDLE != 0)
            .ok_or_else(|| {
                XrError::invalid_input(format!("resource handle does not belong to program '{}'", self.program_name))
            })
    }
}

impl ConstantTableBackend for VkConstantTable {
    fn constants(&self) -> Result<Vec<ConstantInfo>, XrError> {
        Ok(self.entries.iter().map(|e| e.info.clone()).collect())
    }

    fn lookup(&self, name: &str) -> Result<ConstantHandle, XrError> {
        let (base, index) = match name.strip_suffix(']').and_then(|n| n.rsplit_once('[')) {
            Some((base, index)) if index.parse::<u32>().is_ok() => (base, index.parse::<u32>().ok()),
            _ => (name, None),
        };
        if let Some(position) =
            self.resources.iter().position(|r| r.info.name.as_str() == base || r.aliases.iter().any(|a| a == base))
        {
            let element = index.unwrap_or(0);
            let resource = &self.resources[position];
            if element >= resource.info.array_size {
                return Err(XrError::invalid_input(format!(
                    "'{name}': index {element} is out of range, '{base}' has {} element(s)",
                    resource.info.array_size
                )));
            }
            return Ok(ConstantHandle {
                owner: self.name,
                index: position as u32 | RESOURCE_HANDLE,
                element,
                location: resource.info.binding as i32,
            });
        }
        let position = self.entries.iter().position(|e| e.info.name.as_str() == base).ok_or_else(|| {
            let mut known: Vec<&str> = self.entries.iter().map(|e| e.info.name.as_str()).collect();
            known.extend(self.resources.iter().map(|r| r.info.name.as_str()));
            XrError::invalid_input(format!(
                "program '{}' has no active constant '{name}' (not declared, or unused and removed by the compiler; active: {})",
                self.program_name,
                if known.is_empty() { "none".to_owned() } else { known.join(", ") }
            ))
        })?;
        let element = index.unwrap_or(0);
        let entry = &self.entries[position];
        if element >= entry.info.array_size {
            return Err(XrError::invalid_input(format!(
                "'{name}': index {element} is out of range, '{base}' has {} element(s)",
                entry.info.array_size
            )));
        }
        Ok(ConstantHandle { owner: self.name, index: position as u32, element, location: entry.offset as i32 })
    }

    fn set(&mut self, handle: ConstantHandle, value: &ConstantValue<'_>) -> Result<(), XrError> {
        if self.write(handle, value) == SetStatus::SET {
            return Ok(());
        }
        // Not set: say why.
        if handle.index & RESOURCE_HANDLE != 0 {
            let resource = self.resource(handle)?;
            return Err(XrError::invalid_input(format!(
                "'{}' is a {}: bind it with {}, it takes no {} value",
                resource.info.name,
                resource.info.kind.name(),
                if resource.info.kind.takes_texture() { "set_texture" } else { "set_buffer" },
                value.ty
            )));
        }
        let entry = self.entries.get(handle.index as usize).filter(|_| handle.owner == self.name).ok_or_else(|| {
            XrError::invalid_input(format!("constant handle does not belong to program '{}'", self.program_name))
        })?;
        entry.info.check(handle.element, value)?;
        if let Storage::Uniform(_) = entry.storage {
            self.device_open()?;
        }
        Err(XrError::invalid_input(format!("'{}' lies outside its block", entry.info.name)))
    }

    fn write(&mut self, handle: ConstantHandle, value: &ConstantValue<'_>) -> u32 {
        // The hot path (push constants above all); anything that does not
        // pass is `set`'s to refuse and explain.
        let Some(entry) = self.entries.get(handle.index as usize) else { return SetStatus::REFUSED };
        if handle.owner != self.name
            || handle.index & RESOURCE_HANDLE != 0
            || entry.info.fits(handle.element, value).is_none()
            || (matches!(entry.storage, Storage::Uniform(_)) && self.device_open().is_err())
        {
            return SetStatus::REFUSED;
        }
        // SAFETY: a uniform buffer's device was found open above.
        let target = unsafe { target(&mut self.push, &self.objects, entry.storage) };
        if entry.layout.write_into(target, entry.offset, handle.element, value) {
            SetStatus::SET
        } else {
            SetStatus::REFUSED
        }
    }

    fn set_defaults(&mut self) -> Result<(), XrError> {
        // SPIR-V for Vulkan carries no initialisers for uniforms: the defaults are zeros.
        self.push.fill(0);
        if !self.objects.buffers.is_empty() {
            self.device_open()?;
        }
        for buffer in &self.objects.buffers {
            // SAFETY: the device is open, so the buffer is still mapped, and
            // `size` bytes from `mapped` are its whole mapping.
            unsafe { std::ptr::write_bytes(buffer.mapped, 0, buffer.size) };
        }
        Ok(())
    }

    fn resources(&self) -> Result<Vec<ResourceInfo>, XrError> {
        Ok(self.resources.iter().map(|r| r.info.clone()).collect())
    }

    fn set_resource(&mut self, handle: ConstantHandle, binding: &ResourceBinding) -> Result<(), XrError> {
        if handle.index & RESOURCE_HANDLE == 0 {
            let entry = self.entries.get(handle.index as usize).filter(|_| handle.owner == self.name);
            let what = entry
                .map_or_else(|| "a constant".to_owned(), |e| format!("'{}', a {} constant", e.info.name, e.info.ty));
            return Err(XrError::invalid_input(format!(
                "{what} takes a value (set_vector, set_float, ...), not a {}",
                binding.what()
            )));
        }
        let resource = self.resource(handle)?;
        check_binding(&resource.info, binding, self.device.handle().as_raw())?;
        self.device_open()?;
        let image = [vk::DescriptorImageInfo::default()
            .image_view(vk::ImageView::from_raw(binding.handle))
            .sampler(vk::Sampler::from_raw(binding.sampler))
            .image_layout(vk::ImageLayout::GENERAL)];
        let buffer = [vk::DescriptorBufferInfo::default()
            .buffer(vk::Buffer::from_raw(binding.handle))
            .offset(0)
            .range(vk::WHOLE_SIZE)];
        let structures = [vk::AccelerationStructureKHR::from_raw(binding.handle)];
        let mut structure =
            vk::WriteDescriptorSetAccelerationStructureKHR::default().acceleration_structures(&structures);
        let mut write = vk::WriteDescriptorSet::default()
            .dst_set(resource.set)
            .dst_binding(resource.info.binding)
            .dst_array_element(handle.element)
            .descriptor_type(resource.ty);
        write = match resource.info.kind {
            ResourceKind::StorageBuffer | ResourceKind::UniformBuffer => write.buffer_info(&buffer),
            ResourceKind::AccelerationStructure => {
                // Its count is the acceleration structures' (the structure chained holds them).
                let mut write = write.push_next(&mut structure);
                write.descriptor_count = 1;
                write
            }
            _ => write.image_info(&image),
        };
        // SAFETY: the set belongs to this program; the device waits for every
        // submission, so the set is not in use while it is written; the
        // handles are the device's own (checked above).
        unsafe { self.device.update_descriptor_sets(&[write], &[]) };
        let index = (handle.index & !RESOURCE_HANDLE) as usize;
        self.resources[index].bound[handle.element as usize] = true;
        *self.unbound = unbound(&self.resources);
        Ok(())
    }
}

impl VkConstantTable {
    /// An error once the table's device is closed: its mapped buffers and
    /// descriptor sets went with it.
    fn device_open(&self) -> Result<(), XrError> {
        // SAFETY: the loader's functions take any context; a closed device answers false.
        if unsafe { (self.loader.is_open)(self.loader.context) } {
            Ok(())
        } else {
            Err(XrError::unavailable(format!(
                "program '{}': its device is closed; its constants and resources cannot be set",
                self.program_name
            )))
        }
    }
}

/// The bytes a constant of `storage` lives in: the push constants, or a
/// uniform buffer's mapping.
///
/// # Safety
/// For `Storage::Uniform`, the table's device is open (its buffers are
/// still mapped); the table and its device stay on one thread, so it stays
/// open while the slice is used.
unsafe fn target<'a>(push: &'a mut [u8], objects: &ProgramObjects, storage: Storage) -> &'a mut [u8] {
    match storage {
        Storage::Push => push,
        Storage::Uniform(index) => {
            let buffer = &objects.buffers[index];
            // SAFETY: the device is open (the caller's promise), so the
            // buffer is still mapped; `size` is its length, and only this
            // table writes through the mapping.
            unsafe { std::slice::from_raw_parts_mut(buffer.mapped, buffer.size) }
        }
    }
}

impl Drop for VkConstantTable {
    fn drop(&mut self) {
        // SAFETY: the loader's functions take any context: the device looks
        // it up among its open devices and never dereferences it, so a
        // closed device ignores the call.
        unsafe { (self.loader.unregister_program)(self.loader.context, self.name) };
        // SAFETY: as above; a closed device answers false.
        if !unsafe { (self.loader.is_open)(self.loader.context) } {
            return;
        }
        // SAFETY: the device is open, so `self.device` is live; the program
        // is no longer drawable (unregistered) and the queue is drained
        // first, so nothing uses its objects.
        unsafe {
            let _ = self.device.device_wait_idle();
            if let Some(pipelines) = &self.pipelines {
                pipelines.destroy();
            }
            self.objects.destroy(&self.device);
        }
    }
}

/// The resource elements a draw needs that are not bound yet: every
/// element but those of partially bound arrays (a program reads those it
/// was given, by index).
pub fn unbound(resources: &[ResourceEntry]) -> u32 {
    resources.iter().filter(|r| !r.partially_bound).flat_map(|r| &r.bound).filter(|b| !**b).count() as u32
}

/// The ConstantInfo of a reflected member.
pub fn info(name: &str, layout: &MemberLayout) -> ConstantInfo {
    ConstantInfo { name: name.into(), ty: layout.ty, array_size: layout.array_size }
}
