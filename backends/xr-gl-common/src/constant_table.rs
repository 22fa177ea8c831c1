//! The constant table of a GL program: active uniforms, set with
//! `glProgramUniform*` on the program named explicitly.
//!
//! This module holds the table and its [`ConstantTableBackend`] calls;
//! reading a program's uniforms and resources into a table is in
//! `reflection`, the `glProgramUniform*` calls that set them (and the
//! resolved setters' writes) in `uniform_calls`.

mod reflection;
#[cfg(test)]
mod tests;
mod uniform_calls;

pub use reflection::{constant_type, storage_resource};

use crate::{
    device_gl::DeviceGl,
    gl_ext::PipelineFns,
    resources::{self, GlResource},
};
use glow::HasContext;
use std::{cell::RefCell, rc::Rc};
use uniform_calls::{Target, gl_result, resolved_write, set_status, write_value};
use xr_device::{GlBindingSpace, ProgramKind, ProgramRef, ResourceBinding, XrError};
use xr_sourcebuild::{
    ConstantData, ConstantHandle, ConstantInfo, ConstantTableBackend, ConstantValue, MemberLayout, RESOURCE_HANDLE,
    ResolvedSetter, ResourceInfo, ScalarKind, SetStatus,
};

/// A uniform block of a SPIR-V program, as reflection describes it.
pub struct UniformBlockSpec {
    /// The binding decorated in the SPIR-V (how GL's block is found).
    pub binding: u32,
    /// Size in bytes.
    pub size: usize,
    /// Members: (name, offset, layout).
    pub members: Vec<(String, usize, MemberLayout)>,
}

/// A uniform block with its own buffer at a binding point of its own.
struct UniformBlock {
    buffer: glow::Buffer,
    binding: u32,
    shadow: RefCell<Vec<u8>>,
}

/// A constant that lives in a uniform block.
struct BlockEntry {
    info: ConstantInfo,
    block: usize,
    offset: usize,
    layout: MemberLayout,
}

/// Marks handles of block members.
const BLOCK_MEMBER: u32 = 1 << 31;

struct Entry {
    info: ConstantInfo,
    /// Location of every array element.
    locations: Vec<glow::NativeUniformLocation>,
    /// The value each element had right after linking: the source's initialisers.
    defaults: Vec<DefaultValue>,
}

/// An element's value as the driver gave it back after linking.
enum DefaultValue {
    Float(Vec<f32>),
    UInt(Vec<u32>),
    Bool(Vec<u32>),
    Int(Vec<i32>),
}

impl DefaultValue {
    fn data(&self) -> ConstantData<'_> {
        match self {
            DefaultValue::Float(v) => ConstantData::Float(v.as_slice().into()),
            DefaultValue::UInt(v) => ConstantData::UInt(v.as_slice().into()),
            DefaultValue::Bool(v) => ConstantData::Bool(v.as_slice().into()),
            DefaultValue::Int(v) => ConstantData::Int(v.as_slice().into()),
        }
    }
}

/// Whether every set asks the driver for errors afterwards
/// (`XR_GL_CHECK_ERRORS=1`). Off by default: a set checks beforehand what
/// can fail (the handle, the type, the count, a live program), and a
/// `glGetError` per set costs as much as the set; the variable is for
/// hunting a driver's complaint.
fn poll_errors() -> bool {
    static POLL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *POLL.get_or_init(|| xr_env::is_on("XR_GL_CHECK_ERRORS"))
}

/// Active uniforms of one linked program. Owns the program: dropping the
/// table deletes it.
pub struct GlConstantTable {
    gl: Rc<DeviceGl>,
    pipelines: Option<Rc<PipelineFns>>,
    program: glow::Program,
    program_name: String,
    entries: Vec<Entry>,
    blocks: Vec<UniformBlock>,
    block_entries: Vec<BlockEntry>,
    resources: Vec<GlResource>,
    /// Binding points the device gave this program (blocks' excepted).
    points: Vec<(GlBindingSpace, u32)>,
    /// Resource elements not bound yet; the device reads it at each draw.
    unbound: Box<u32>,
}

impl GlConstantTable {
    fn resource_index(&self, handle: ConstantHandle) -> Result<usize, XrError> {
        let index = (handle.index & !RESOURCE_HANDLE) as usize;
        if handle.owner != self.program.0.get() || handle.index & RESOURCE_HANDLE == 0 || index >= self.resources.len()
        {
            return Err(XrError::invalid_input(format!(
                "resource handle does not belong to program '{}'",
                self.program_name
            )));
        }
        Ok(index)
    }

    fn set_block_member(&self, handle: ConstantHandle, value: &ConstantValue<'_>) -> Result<(), XrError> {
        let entry = self
            .block_entries
            .get((handle.index & !BLOCK_MEMBER) as usize)
            .filter(|_| handle.owner == self.program.0.get())
            .ok_or_else(|| {
                XrError::invalid_input(format!("constant handle does not belong to program '{}'", self.program_name))
            })?;
        entry.info.check(handle.element, value)?;
        let block = &self.blocks[entry.block];
        let mut shadow = block.shadow.borrow_mut();
        if !entry.layout.write_into(&mut shadow, entry.offset, handle.element, value) {
            return Err(XrError::invalid_input(format!("'{}' lies outside its block", entry.info.name)));
        }
        let gl = self.gl.current()?;
        // SAFETY: the buffer belongs to this table; the data is its whole size.
        unsafe {
            gl.bind_buffer(glow::UNIFORM_BUFFER, Some(block.buffer));
            gl.buffer_sub_data_u8_slice(glow::UNIFORM_BUFFER, 0, &shadow);
            gl.bind_buffer(glow::UNIFORM_BUFFER, None);
            if poll_errors() { gl_result(gl, &entry.info.name) } else { Ok(()) }
        }
    }

    fn entry(&self, handle: ConstantHandle) -> Result<&Entry, XrError> {
        self.entries
            .get(handle.index as usize)
            .filter(|_| handle.owner == self.program.0.get())
            .filter(|e| e.locations.get(handle.element as usize).is_some_and(|l| l.0 as i32 == handle.location))
            .ok_or_else(|| {
                XrError::invalid_input(format!("constant handle does not belong to program '{}'", self.program_name))
            })
    }

    /// Checks `value` against the declaration; returns the entry and the first location.
    fn check(
        &self,
        handle: ConstantHandle,
        value: &ConstantValue<'_>,
    ) -> Result<(&Entry, glow::NativeUniformLocation), XrError> {
        let entry = self.entry(handle)?;
        if entry.info.ty.scalar == ScalarKind::Unsupported {
            return Err(XrError::invalid_input(format!("constant '{}' has a type XR cannot set", entry.info.name)));
        }
        entry.info.check(handle.element, value)?;
        Ok((entry, entry.locations[handle.element as usize]))
    }

    /// A value given for a resource: an error naming it.
    fn refuse_value(&self, handle: ConstantHandle, value: &ConstantValue<'_>) -> Result<(), XrError> {
        let resource = &self.resources[self.resource_index(handle)?];
        Err(XrError::invalid_input(format!(
            "'{}' is a {}: bind it with {}, it takes no {} value",
            resource.info.name,
            resource.info.kind.name(),
            if resource.info.kind.takes_texture() { "set_texture" } else { "set_buffer" },
            value.ty
        )))
    }
}

impl ConstantTableBackend for GlConstantTable {
    fn constants(&self) -> Result<Vec<ConstantInfo>, XrError> {
        Ok(self
            .entries
            .iter()
            .map(|e| e.info.clone())
            .chain(self.block_entries.iter().map(|e| e.info.clone()))
            .collect())
    }

    fn lookup(&self, name: &str) -> Result<ConstantHandle, XrError> {
        let (base, index) = split_index(name);
        if let Some(position) = self.resources.iter().position(|r| r.info.name.as_str() == base) {
            let resource = &self.resources[position];
            let element = index.unwrap_or(0);
            if element >= resource.info.array_size {
                return Err(XrError::invalid_input(format!(
                    "'{name}': index {element} is out of range, '{base}' has {} element(s)",
                    resource.info.array_size
                )));
            }
            return Ok(ConstantHandle {
                owner: self.program.0.get(),
                index: position as u32 | RESOURCE_HANDLE,
                element,
                location: resource.points[element as usize] as i32,
            });
        }
        if let Some(position) = self.block_entries.iter().position(|e| e.info.name.as_str() == base) {
            let entry = &self.block_entries[position];
            let element = index.unwrap_or(0);
            if element >= entry.info.array_size {
                return Err(XrError::invalid_input(format!(
                    "'{name}': index {element} is out of range, '{}' has {} element(s)",
                    entry.info.name, entry.info.array_size
                )));
            }
            return Ok(ConstantHandle {
                owner: self.program.0.get(),
                index: position as u32 | BLOCK_MEMBER,
                element,
                location: entry.offset as i32,
            });
        }
        let Some(position) = self.entries.iter().position(|e| e.info.name.as_str() == base) else {
            let mut known: Vec<&str> = self.entries.iter().map(|e| e.info.name.as_str()).collect();
            known.extend(self.block_entries.iter().map(|e| e.info.name.as_str()));
            known.extend(self.resources.iter().map(|r| r.info.name.as_str()));
            known.sort();
            return Err(XrError::invalid_input(format!(
                "program '{}' has no active constant '{name}' (not declared, or unused and removed by the compiler; active: {})",
                self.program_name,
                if known.is_empty() { "none".to_owned() } else { known.join(", ") }
            )));
        };
        let entry = &self.entries[position];
        let element = index.unwrap_or(0);
        let location = entry.locations.get(element as usize).ok_or_else(|| {
            XrError::invalid_input(format!(
                "'{name}': index {element} is out of range, '{base}' has {} element(s)",
                entry.info.array_size
            ))
        })?;
        Ok(ConstantHandle { owner: self.program.0.get(), index: position as u32, element, location: location.0 as i32 })
    }

    fn set(&mut self, handle: ConstantHandle, value: &ConstantValue<'_>) -> Result<(), XrError> {
        if handle.index & RESOURCE_HANDLE != 0 {
            return self.refuse_value(handle, value);
        }
        if handle.index & BLOCK_MEMBER != 0 {
            return self.set_block_member(handle, value);
        }
        let (entry, location) = self.check(handle, value)?;
        let gl = self.gl.current()?;
        // SAFETY: the program is alive (this table owns it) and the data
        // length matches the type (checked above).
        unsafe {
            write_value(gl, Target::Program(self.program), &location, entry.info.ty, value.transpose, &value.data);
            if poll_errors() { gl_result(gl, &entry.info.name) } else { Ok(()) }
        }
    }

    fn write(&mut self, handle: ConstantHandle, value: &ConstantValue<'_>) -> u32 {
        // The hot path of a plain uniform; anything else (a block member, a
        // resource, a value that does not fit) is `set`'s to do and explain.
        let Some(entry) = self.entries.get(handle.index as usize) else { return SetStatus::REFUSED };
        let Some(&location) = entry.locations.get(handle.element as usize) else { return SetStatus::REFUSED };
        if handle.owner != self.program.0.get()
            || location.0 as i32 != handle.location
            || entry.info.ty.scalar == ScalarKind::Unsupported
            || entry.info.fits(handle.element, value).is_none()
        {
            return SetStatus::REFUSED;
        }
        let Ok(gl) = self.gl.current() else { return SetStatus::DEVICE_UNAVAILABLE };
        // SAFETY: the program is alive (this table owns it) and the value
        // holds whole elements of the declared type that fit (checked above).
        unsafe {
            write_value(gl, Target::Program(self.program), &location, entry.info.ty, value.transpose, &value.data);
            set_status(gl)
        }
    }

    fn resolve(&self, handle: ConstantHandle) -> Result<ResolvedSetter, XrError> {
        if handle.index & (RESOURCE_HANDLE | BLOCK_MEMBER) != 0 {
            return Err(XrError::unavailable(
                "resources and uniform-block members resolve no setters; set them through the table",
            ));
        }
        let entry = self.entry(handle)?;
        if entry.info.ty.scalar == ScalarKind::Unsupported {
            return Err(XrError::invalid_input(format!("constant '{}' has a type XR cannot set", entry.info.name)));
        }
        let location = entry.locations[handle.element as usize];
        Ok(ResolvedSetter {
            write: resolved_write(entry.info.ty),
            // The table is boxed behind the ABI and owns this `Rc`: the
            // device's GL stays at this address while the table lives,
            // which is as long as the host may call the setter (a `Setter`
            // borrows the table; the table's box keeps its setters beside
            // it and drops them with it).
            context: Rc::as_ptr(&self.gl).cast(),
            words: [self.program.0.get(), location.0, 0, 0],
            ty: entry.info.ty,
            element: handle.element,
            array_size: entry.info.array_size,
            name: entry.info.name.clone(),
        })
    }

    fn set_defaults(&mut self) -> Result<(), XrError> {
        let gl = self.gl.current()?;
        for block in &self.blocks {
            let mut shadow = block.shadow.borrow_mut();
            shadow.fill(0);
            // SAFETY: the buffer belongs to this table.
            unsafe {
                gl.bind_buffer(glow::UNIFORM_BUFFER, Some(block.buffer));
                gl.buffer_sub_data_u8_slice(glow::UNIFORM_BUFFER, 0, &shadow);
                gl.bind_buffer(glow::UNIFORM_BUFFER, None);
            }
        }
        for entry in &self.entries {
            for (location, default) in entry.locations.iter().zip(&entry.defaults) {
                // SAFETY: defaults were read from this program with the same type.
                unsafe {
                    write_value(gl, Target::Program(self.program), location, entry.info.ty, false, &default.data())
                };
            }
        }
        Ok(())
    }

    fn set_through_pipeline(
        &mut self,
        pipeline: ProgramRef,
        handle: ConstantHandle,
        value: &ConstantValue<'_>,
    ) -> Result<(), XrError> {
        if handle.index & RESOURCE_HANDLE != 0 {
            return self.refuse_value(handle, value);
        }
        if handle.index & BLOCK_MEMBER != 0 {
            // Block members live in a buffer, not in the active program's state.
            return self.set_block_member(handle, value);
        }
        let (entry, location) = self.check(handle, value)?;
        let fns = self.pipelines.as_ref().ok_or_else(|| {
            XrError::unavailable("glActiveShaderProgram needs OpenGL 4.1 or GL_ARB_separate_shader_objects")
        })?;
        if pipeline.kind != ProgramKind::Pipeline {
            return Err(XrError::invalid_input(format!("{pipeline:?} is not a program pipeline")));
        }
        let gl = self.gl.current()?;
        // SAFETY: the pipeline and program live on the current context; the
        // data length matches the type.
        unsafe {
            gl.use_program(None);
            fns.activate(pipeline.name, self.program.0.get());
            write_value(gl, Target::ActiveProgram, &location, entry.info.ty, value.transpose, &value.data);
            let result = if poll_errors() { gl_result(gl, &entry.info.name) } else { Ok(()) };
            fns.unbind();
            result
        }
    }

    fn resources(&self) -> Result<Vec<ResourceInfo>, XrError> {
        Ok(self.resources.iter().map(|r| r.info.clone()).collect())
    }

    fn set_resource(&mut self, handle: ConstantHandle, binding: &ResourceBinding) -> Result<(), XrError> {
        if handle.index & RESOURCE_HANDLE == 0 {
            let name = if handle.index & BLOCK_MEMBER != 0 {
                self.block_entries.get((handle.index & !BLOCK_MEMBER) as usize).map(|e| (&e.info.name, e.info.ty))
            } else {
                self.entries.get(handle.index as usize).map(|e| (&e.info.name, e.info.ty))
            };
            let what = name.map_or_else(|| "a constant".to_owned(), |(n, ty)| format!("'{n}', a {ty} constant,"));
            return Err(XrError::invalid_input(format!(
                "{what} takes a value (set_vector, set_float, ...), not a {}",
                if binding.is_texture { "texture" } else { "buffer" }
            )));
        }
        let index = self.resource_index(handle)?;
        let device = self.gl.loader().context as u64;
        let gl = self.gl.current()?;
        resources::bind(gl, &mut self.resources[index], handle.element, binding, device)?;
        *self.unbound = self.resources.iter().flat_map(|r| &r.bound).filter(|b| !**b).count() as u32;
        Ok(())
    }
}

impl Drop for GlConstantTable {
    fn drop(&mut self) {
        let loader = *self.gl.loader();
        if !self.resources.is_empty() {
            // SAFETY: the loader takes any context: the device looks it up among its open devices and never dereferences it, so a closed device ignores the call.
            unsafe { (loader.unregister_program)(loader.context, self.program.0.get()) };
        }
        resources::release(&loader, &self.points);
        if let Ok(gl) = self.gl.current() {
            // SAFETY: the program and buffers were created on this context and are owned here.
            unsafe {
                gl.delete_program(self.program);
                for block in &self.blocks {
                    gl.delete_buffer(block.buffer);
                }
            }
        }
        for block in &self.blocks {
            // SAFETY: the loader takes any context: the device looks it up among its open devices and never dereferences it, so a closed device ignores the call.
            unsafe { (loader.release_binding)(loader.context, GlBindingSpace::UniformBuffer as u32, block.binding) };
        }
    }
}

/// `weights[2]` → (`weights`, Some(2)); `light.color` → (`light.color`, None).
fn split_index(name: &str) -> (&str, Option<u32>) {
    if let Some(open) = name.strip_suffix(']').and_then(|n| n.rfind('[').map(|i| (n, i))) {
        let (inner, at) = open;
        if let Ok(index) = inner[at + 1..].parse() {
            return (&name[..at], Some(index));
        }
    }
    (name, None)
}
