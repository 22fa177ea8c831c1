//! The constant table of a wgpu program: the same interface as on OpenGL
//! and Vulkan, writing the immediates (push constants) and the program's
//! uniform blocks at the offsets reflection found, and binding the
//! caller's textures, samplers and buffers. Dropping it forgets the
//! program on its device.

use crate::{context::Context, program::Program};
use std::sync::Arc;
use xr_device::{ResourceBinding, XrError};
use xr_sourcebuild::{
    ConstantHandle, ConstantInfo, ConstantTableBackend, ConstantValue, MemberLayout, RESOURCE_HANDLE, ResourceInfo,
    check_binding,
};

/// Where a constant lives.
#[derive(Clone, Copy, Debug)]
pub enum Storage {
    /// In the immediates.
    Immediates,
    /// In uniform block `index` of the program.
    Uniform(usize),
}

/// One settable constant.
pub struct Entry {
    /// What the table says of it.
    pub info: ConstantInfo,
    /// Its block.
    pub storage: Storage,
    /// Its offset in the block.
    pub offset: usize,
    /// How a value is laid out there.
    pub layout: MemberLayout,
}

/// A program's constant table.
pub struct WgpuConstantTable {
    /// The device.
    pub context: Arc<Context>,
    /// The program's name on the device (`ProgramRef::name`).
    pub name: u32,
    /// The program.
    pub program: Arc<Program>,
    /// Its constants, by name.
    pub entries: Vec<Entry>,
    /// Set as the table is dropped, after the program's wgpu objects (see
    /// `Context::keep_current`).
    pub restore: Option<crate::keep_current::KeepCurrent>,
}

impl WgpuConstantTable {
    fn entry(&self, handle: ConstantHandle) -> Result<&Entry, XrError> {
        self.entries.get(handle.index as usize).filter(|_| handle.owner == self.name).ok_or_else(|| {
            XrError::invalid_input(format!("constant handle does not belong to program '{}'", self.program.name))
        })
    }
}

/// `name` split into its base and `[index]`.
fn split_index(name: &str) -> (&str, Option<u32>) {
    match name.strip_suffix(']').and_then(|n| n.rsplit_once('[')) {
        Some((base, index)) => match index.parse::<u32>() {
            Ok(index) => (base, Some(index)),
            Err(_) => (name, None),
        },
        None => (name, None),
    }
}

impl ConstantTableBackend for WgpuConstantTable {
    fn constants(&self) -> Result<Vec<ConstantInfo>, XrError> {
        Ok(self.entries.iter().map(|e| e.info.clone()).collect())
    }

    fn lookup(&self, name: &str) -> Result<ConstantHandle, XrError> {
        let (base, index) = split_index(name);
        let element = index.unwrap_or(0);
        let out_of_range = |size: u32| {
            XrError::invalid_input(format!("'{name}': index {element} is out of range, '{base}' has {size} element(s)"))
        };
        if let Some(position) = self.program.resources.iter().position(|r| r.info.name.as_str() == base) {
            let info = &self.program.resources[position].info;
            if element >= info.array_size {
                return Err(out_of_range(info.array_size));
            }
            return Ok(ConstantHandle {
                owner: self.name,
                index: position as u32 | RESOURCE_HANDLE,
                element,
                location: info.binding as i32,
            });
        }
        let position = self.entries.iter().position(|e| e.info.name.as_str() == base).ok_or_else(|| {
            let mut known: Vec<&str> = self.entries.iter().map(|e| e.info.name.as_str()).collect();
            known.extend(self.program.resources.iter().map(|r| r.info.name.as_str()));
            XrError::invalid_input(format!(
                "program '{}' has no active constant '{name}' (not declared, or unused and removed by the compiler; active: {})",
                self.program.name,
                if known.is_empty() { "none".to_owned() } else { known.join(", ") }
            ))
        })?;
        let entry = &self.entries[position];
        if element >= entry.info.array_size {
            return Err(out_of_range(entry.info.array_size));
        }
        Ok(ConstantHandle { owner: self.name, index: position as u32, element, location: entry.offset as i32 })
    }

    fn set(&mut self, handle: ConstantHandle, value: &ConstantValue<'_>) -> Result<(), XrError> {
        if handle.index & RESOURCE_HANDLE != 0 {
            let resource = self.program.resources.get((handle.index & !RESOURCE_HANDLE) as usize);
            let name = resource.map_or("a resource", |r| r.info.name.as_str());
            return Err(XrError::invalid_input(format!(
                "'{name}' is a resource: bind it with set_texture or set_buffer, it takes no {} value",
                value.ty
            )));
        }
        let entry = self.entry(handle)?;
        entry.info.check(handle.element, value)?;
        let mut values = self.program.values();
        let written = match entry.storage {
            Storage::Immediates => entry.layout.write_into(&mut values.immediates, entry.offset, handle.element, value),
            Storage::Uniform(index) => {
                let (bytes, changed) = &mut values.uniforms[index];
                *changed = true;
                entry.layout.write_into(bytes, entry.offset, handle.element, value)
            }
        };
        if written {
            Ok(())
        } else {
            Err(XrError::invalid_input(format!("'{}' lies outside its block", entry.info.name)))
        }
    }

    fn set_defaults(&mut self) -> Result<(), XrError> {
        // SPIR-V carries no initialisers for uniforms: the defaults are zeros.
        let mut values = self.program.values();
        values.immediates.fill(0);
        for (bytes, changed) in &mut values.uniforms {
            bytes.fill(0);
            *changed = true;
        }
        Ok(())
    }

    fn resources(&self) -> Result<Vec<ResourceInfo>, XrError> {
        Ok(self.program.resources.iter().map(|r| r.info.clone()).collect())
    }

    fn set_resource(&mut self, handle: ConstantHandle, binding: &ResourceBinding) -> Result<(), XrError> {
        if handle.index & RESOURCE_HANDLE == 0 {
            let entry = self.entry(handle)?;
            return Err(XrError::invalid_input(format!(
                "'{}', a {} constant, takes a value (set_vector, set_float, ...), not a {}",
                entry.info.name,
                entry.info.ty,
                binding.what()
            )));
        }
        let index = (handle.index & !RESOURCE_HANDLE) as usize;
        let resource = self.program.resources.get(index).filter(|_| handle.owner == self.name).ok_or_else(|| {
            XrError::invalid_input(format!("resource handle does not belong to program '{}'", self.program.name))
        })?;
        check_binding(&resource.info, binding, self.context.id)?;
        self.program.values().bound[index] = Some(*binding);
        Ok(())
    }
}

impl Drop for WgpuConstantTable {
    fn drop(&mut self) {
        self.restore = self.context.keep_current();
        self.context.objects().programs.remove(&self.name);
    }
}
