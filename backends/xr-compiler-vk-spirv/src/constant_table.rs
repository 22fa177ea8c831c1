//! The constant table of a Vulkan program: the same interface as on
//! OpenGL, writing uniform buffer members and push constants at the offsets
//! reflection found. It owns the program's Vulkan objects.

use abi_stable::std_types::{RStr, RVec};
use ash::vk;
use xr_device::{ProgramRef, VulkanLoader, XrError, XrResult, guard};
use xr_sourcebuild::{ConstantHandle, ConstantInfo, ConstantTable, ConstantValue};
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
pub struct ProgramObjects {
    pub pipeline: vk::Pipeline,
    pub layout: vk::PipelineLayout,
    pub set_layout: vk::DescriptorSetLayout,
    pub pool: vk::DescriptorPool,
    pub set: vk::DescriptorSet,
    pub buffers: Vec<UniformBuffer>,
    pub modules: Vec<vk::ShaderModule>,
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
}

impl VkConstantTable {
    fn find(&self, name: &str) -> Result<ConstantHandle, XrError> {
        let (base, index) = match name.strip_suffix(']').and_then(|n| n.rsplit_once('[')) {
            Some((base, index)) if index.parse::<u32>().is_ok() => (base, index.parse::<u32>().ok()),
            _ => (name, None),
        };
        let position = self.entries.iter().position(|e| e.info.name.as_str() == base).ok_or_else(|| {
            let known: Vec<&str> = self.entries.iter().map(|e| e.info.name.as_str()).collect();
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

    fn write(&mut self, handle: ConstantHandle, value: &ConstantValue) -> Result<(), XrError> {
        let entry = self.entries.get(handle.index as usize).filter(|_| handle.owner == self.name).ok_or_else(|| {
            XrError::invalid_input(format!("constant handle does not belong to program '{}'", self.program_name))
        })?;
        entry.info.check(handle.element, value)?;
        let name = entry.info.name.to_string();
        let writes = entry.layout.writes(entry.offset, handle.element, value);
        let storage = entry.storage;
        let target: &mut [u8] = match storage {
            Storage::Push => &mut self.push,
            Storage::Uniform(index) => {
                let buffer = &self.objects.buffers[index];
                // SAFETY: the buffer stays mapped while the table lives; `size` is its length.
                unsafe { std::slice::from_raw_parts_mut(buffer.mapped, buffer.size) }
            }
        };
        for (at, v) in writes {
            let bytes = target
                .get_mut(at..at + 4)
                .ok_or_else(|| XrError::invalid_input(format!("'{name}' lies outside its block")))?;
            bytes.copy_from_slice(&v.to_le_bytes());
        }
        Ok(())
    }

    fn zero(&mut self) {
        self.push.fill(0);
        for buffer in &self.objects.buffers {
            // SAFETY: as in `write`.
            unsafe { std::ptr::write_bytes(buffer.mapped, 0, buffer.size) };
        }
    }
}

impl ConstantTable for VkConstantTable {
    fn constants(&self) -> XrResult<RVec<ConstantInfo>> {
        guard(|| Ok(self.entries.iter().map(|e| e.info.clone()).collect()))
    }

    fn lookup(&self, name: RStr<'_>) -> XrResult<ConstantHandle> {
        guard(|| self.find(name.as_str()))
    }

    fn set(&mut self, handle: ConstantHandle, value: &ConstantValue) -> XrResult<()> {
        guard(|| self.write(handle, value))
    }

    fn set_defaults(&mut self) -> XrResult<()> {
        // SPIR-V for Vulkan carries no initialisers for uniforms: the defaults are zeros.
        guard(|| {
            self.zero();
            Ok(())
        })
    }

    fn set_through_pipeline(
        &mut self,
        _pipeline: ProgramRef,
        _handle: ConstantHandle,
        _value: &ConstantValue,
    ) -> XrResult<()> {
        guard(|| {
            Err(XrError::invalid_input(
                "glActiveShaderProgram is OpenGL's: on Vulkan set constants with `set`, which writes the uniform buffer or push constants",
            ))
        })
    }
}

impl Drop for VkConstantTable {
    fn drop(&mut self) {
        // SAFETY: the loader's context stays valid (the device leaks it); a
        // closed device ignores the call.
        unsafe { (self.loader.unregister_program)(self.loader.context, self.name) };
        // SAFETY: as above.
        if !unsafe { (self.loader.is_open)(self.loader.context) } {
            return;
        }
        let device = &self.device;
        let o = &self.objects;
        // SAFETY: the program is no longer drawable; the queue is drained first.
        unsafe {
            let _ = device.device_wait_idle();
            device.destroy_pipeline(o.pipeline, None);
            device.destroy_pipeline_layout(o.layout, None);
            device.destroy_descriptor_pool(o.pool, None);
            device.destroy_descriptor_set_layout(o.set_layout, None);
            for buffer in &o.buffers {
                device.unmap_memory(buffer.memory);
                device.destroy_buffer(buffer.buffer, None);
                device.free_memory(buffer.memory, None);
            }
            for module in &o.modules {
                device.destroy_shader_module(*module, None);
            }
        }
    }
}

/// The ConstantInfo of a reflected member.
pub fn info(name: &str, layout: &MemberLayout) -> ConstantInfo {
    ConstantInfo { name: name.into(), ty: layout.ty, array_size: layout.array_size }
}
