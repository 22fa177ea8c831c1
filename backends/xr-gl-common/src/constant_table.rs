//! The constant table of a GL program: active uniforms, set with
//! `glProgramUniform*` on the program named explicitly.

use crate::{
    device_gl::DeviceGl,
    gl_ext::PipelineFns,
    resources::{self, GlResource, Points, ProgramResources},
};
use glow::HasContext;
use std::{cell::RefCell, rc::Rc};
use xr_device::{GlBindingSpace, ProgramKind, ProgramRef, ResourceBinding, ResourceKind, XrError};
use xr_sourcebuild::{
    ConstantData, ConstantHandle, ConstantInfo, ConstantTableBackend, ConstantType, ConstantValue, MemberLayout,
    RESOURCE_HANDLE, ResolvedSetter, ResourceInfo, ScalarKind, SetStatus, guard_setter,
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
    /// Reads the active uniforms (outside uniform blocks) and their initial
    /// values, and gives the program's resources binding points. The table
    /// owns the program: when this fails, the program is deleted.
    pub fn new(
        gl: Rc<DeviceGl>,
        pipelines: Option<Rc<PipelineFns>>,
        program: glow::Program,
        program_name: &str,
    ) -> Result<Self, XrError> {
        Self::read(gl.clone(), pipelines, program, program_name).inspect_err(|_| {
            if let Ok(g) = gl.current() {
                // SAFETY: the program was handed to this table and nothing else holds it.
                unsafe { g.delete_program(program) };
            }
        })
    }

    fn read(
        gl: Rc<DeviceGl>,
        pipelines: Option<Rc<PipelineFns>>,
        program: glow::Program,
        program_name: &str,
    ) -> Result<Self, XrError> {
        let mut entries = Vec::new();
        let loader = *gl.loader();
        let mut points = Points::new(&loader, program_name);
        let mut resources = Vec::new();
        {
            let g = gl.current()?;
            // SAFETY: `program` is linked on the current context.
            unsafe {
                for index in 0..g.get_active_uniforms(program) {
                    let Some(active) = g.get_active_uniform(program, index) else { continue };
                    let name = active.name.strip_suffix("[0]").unwrap_or(&active.name).to_owned();
                    if let Some((kind, space)) = resources::uniform_resource(active.utype) {
                        let resource = (name.as_str(), kind, space, resources::is_two_d(active.utype));
                        resources.push(sampler_resource(g, program, resource, active.size, &mut points)?);
                        continue;
                    }
                    let ty = constant_type(active.utype);
                    let size = active.size.max(1) as u32;
                    let mut locations = Vec::new();
                    for element in 0..size {
                        let element_name = if size > 1 || active.name.ends_with("[0]") {
                            format!("{name}[{element}]")
                        } else {
                            name.clone()
                        };
                        match g.get_uniform_location(program, &element_name) {
                            Some(location) => locations.push(location),
                            None => break,
                        }
                    }
                    // Members of uniform blocks have no location: not settable here.
                    if locations.is_empty() {
                        continue;
                    }
                    let defaults = locations.iter().map(|l| read_value(g, program, l, ty)).collect();
                    let info = ConstantInfo { name: name.into(), ty, array_size: locations.len() as u32 };
                    entries.push(Entry { info, locations, defaults });
                }
            }
        }
        entries.sort_by(|a, b| a.info.name.cmp(&b.info.name));
        if let Some(fns) = pipelines.as_deref() {
            let g = gl.current()?;
            // SAFETY: `program` is linked on the current context.
            for (name, index, _, size) in unsafe { resources::storage_blocks(fns, program.0.get()) } {
                let point = points.take(GlBindingSpace::StorageBuffer, 1, &name)?;
                // SAFETY: `program` is linked on the current context and
                // `index` is one of its storage blocks, just enumerated.
                unsafe { g.shader_storage_block_binding(program, index, point[0]) };
                resources.push(storage_resource(name, size, point));
            }
        }
        let points = points.keep();
        let mut table = Self {
            gl,
            pipelines,
            program,
            program_name: program_name.to_owned(),
            entries,
            blocks: Vec::new(),
            block_entries: Vec::new(),
            resources,
            points,
            unbound: Box::new(0),
        };
        table.register();
        Ok(table)
    }

    /// A table from known locations: for SPIR-V programs, whose uniforms
    /// are found by reflection rather than by name in GL. Each entry is
    /// (name, element type, array length, location of element 0); array
    /// elements take consecutive locations. A name listed twice (declared by
    /// two stages) is one constant.
    pub fn with_locations(
        gl: Rc<DeviceGl>,
        pipelines: Option<Rc<PipelineFns>>,
        program: glow::Program,
        program_name: &str,
        uniforms: &[(String, ConstantType, u32, u32)],
        blocks: &[UniformBlockSpec],
        resources: ProgramResources,
    ) -> Result<Self, XrError> {
        let ProgramResources { resources, points } = resources;
        let mut entries = Vec::new();
        {
            let g = gl.current()?;
            for (name, ty, array_size, location) in uniforms {
                if entries.iter().any(|e: &Entry| e.info.name.as_str() == name.as_str()) {
                    continue;
                }
                let locations: Vec<glow::NativeUniformLocation> =
                    (0..*array_size).map(|i| glow::NativeUniformLocation(location + i)).collect();
                // SAFETY: `program` is linked on the current context; the
                // buffers hold one element of `ty`.
                let defaults = locations.iter().map(|l| unsafe { read_value(g, program, l, *ty) }).collect();
                let info = ConstantInfo { name: name.as_str().into(), ty: *ty, array_size: *array_size };
                entries.push(Entry { info, locations, defaults });
            }
        }
        entries.sort_by(|a, b| a.info.name.cmp(&b.info.name));
        let mut table = Self {
            gl,
            pipelines,
            program,
            program_name: program_name.to_owned(),
            entries,
            blocks: Vec::new(),
            block_entries: Vec::new(),
            resources,
            points,
            unbound: Box::new(0),
        };
        table.register();
        table.bind_blocks(blocks)?;
        Ok(table)
    }

    /// Tells the device how many resource elements are still unbound.
    fn register(&mut self) {
        *self.unbound = self.resources.iter().flat_map(|r| &r.bound).filter(|b| !**b).count() as u32;
        if !self.resources.is_empty() {
            let loader = *self.gl.loader();
            // SAFETY: the count lives in a box as long as the table, which unregisters first.
            unsafe { (loader.register_program)(loader.context, self.program.0.get(), &*self.unbound) };
        }
    }

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

    /// Gives each block a buffer of its own at a binding point no other
    /// program on the device uses, so no draw needs to rebind it.
    fn bind_blocks(&mut self, specs: &[UniformBlockSpec]) -> Result<(), XrError> {
        let gl = self.gl.current()?;
        let loader = *self.gl.loader();
        for spec in specs {
            // SAFETY: queries and buffer calls on the current context, for this program.
            unsafe {
                let count = gl.get_program_parameter_i32(self.program, glow::ACTIVE_UNIFORM_BLOCKS).max(0) as u32;
                let Some(index) = (0..count).find(|i| {
                    gl.get_active_uniform_block_parameter_i32(self.program, *i, glow::UNIFORM_BLOCK_BINDING)
                        == spec.binding as i32
                }) else {
                    continue;
                };
                let binding = (loader.allocate_binding)(loader.context, GlBindingSpace::UniformBuffer as u32);
                if binding < 0 {
                    return Err(XrError::unavailable(format!(
                        "program '{}': every uniform buffer binding point of the device is taken",
                        self.program_name
                    )));
                }
                let buffer = gl.create_buffer().map_err(XrError::driver)?;
                let shadow = vec![0u8; spec.size.max(16)];
                gl.bind_buffer(glow::UNIFORM_BUFFER, Some(buffer));
                gl.buffer_data_u8_slice(glow::UNIFORM_BUFFER, &shadow, glow::DYNAMIC_DRAW);
                gl.bind_buffer(glow::UNIFORM_BUFFER, None);
                gl.uniform_block_binding(self.program, index, binding as u32);
                gl.bind_buffer_base(glow::UNIFORM_BUFFER, binding as u32, Some(buffer));
                self.blocks.push(UniformBlock { buffer, binding: binding as u32, shadow: RefCell::new(shadow) });
            }
            for (name, offset, layout) in &spec.members {
                if !self.block_entries.iter().any(|e| e.info.name.as_str() == name.as_str()) {
                    let info =
                        ConstantInfo { name: name.as_str().into(), ty: layout.ty, array_size: layout.array_size };
                    self.block_entries.push(BlockEntry {
                        info,
                        block: self.blocks.len() - 1,
                        offset: *offset,
                        layout: *layout,
                    });
                }
            }
        }
        Ok(())
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

/// A GLSL sampler or image uniform as a resource: a unit per element, the
/// uniform pointed at it.
///
/// # Safety
/// The device's context must be current and `program` linked on it.
unsafe fn sampler_resource(
    gl: &glow::Context,
    program: glow::Program,
    (name, kind, space, two_d): (&str, ResourceKind, GlBindingSpace, bool),
    size: i32,
    points: &mut Points<'_>,
) -> Result<GlResource, XrError> {
    let count = size.max(1) as u32;
    let units = points.take(space, count, name)?;
    for (element, unit) in units.iter().enumerate() {
        let element_name = if count > 1 { format!("{name}[{element}]") } else { name.to_owned() };
        // SAFETY: the caller guarantees the device's context is current and
        // `program` linked on it; a missing location is passed as `None`,
        // which GL ignores.
        unsafe {
            let location = gl.get_uniform_location(program, &element_name);
            gl.program_uniform_1_i32(program, location.as_ref(), *unit as i32);
        }
    }
    Ok(GlResource {
        info: ResourceInfo { name: name.into(), kind, set: 0, binding: units[0], array_size: count, min_size: 0 },
        bound: vec![false; units.len()],
        points: units,
        two_d,
    })
}

/// A storage block as a resource at binding point `point`.
pub fn storage_resource(name: String, min_size: u64, point: Vec<u32>) -> GlResource {
    GlResource {
        info: ResourceInfo {
            name: name.into(),
            kind: ResourceKind::StorageBuffer,
            set: 0,
            binding: point[0],
            array_size: point.len() as u32,
            min_size,
        },
        bound: vec![false; point.len()],
        points: point,
        two_d: true,
    }
}

/// Which program `glUniform*` calls set.
enum Target {
    /// `glProgramUniform*` on this program.
    Program(glow::Program),
    /// `glUniform*` on the active program of the bound pipeline.
    ActiveProgram,
}

/// Turns a pending GL error into an error naming the constant.
/// The write of a resolved setter of type `ty`: a function of its own for
/// each float type (the type a constant, the dispatch on it gone at
/// compile time), one for the rest.
fn resolved_write(ty: ConstantType) -> unsafe extern "C" fn(&ResolvedSetter, &ConstantValue<'_>) -> u32 {
    match (ty.scalar, ty.columns, ty.rows) {
        (ScalarKind::Float, 1, 1) => write_floats::<1, 1>,
        (ScalarKind::Float, 1, 2) => write_floats::<1, 2>,
        (ScalarKind::Float, 1, 3) => write_floats::<1, 3>,
        (ScalarKind::Float, 1, 4) => write_floats::<1, 4>,
        (ScalarKind::Float, 2, 2) => write_floats::<2, 2>,
        (ScalarKind::Float, 3, 3) => write_floats::<3, 3>,
        (ScalarKind::Float, 4, 4) => write_floats::<4, 4>,
        _ => write_any,
    }
}

/// A resolved float setter's write ([`resolved_write`]).
unsafe extern "C" fn write_floats<const COLUMNS: u8, const ROWS: u8>(
    setter: &ResolvedSetter,
    value: &ConstantValue<'_>,
) -> u32 {
    let ty = ConstantType { scalar: ScalarKind::Float, columns: COLUMNS, rows: ROWS };
    let ConstantData::Float(floats) = &value.data else {
        // SAFETY: as `write_checked` asks; `ty` is the setter's (see `resolved_write`).
        return guard_setter(|| unsafe { write_checked(setter, value, ty) });
    };
    // The hot path: the GL call chosen when this function was (its type is
    // the constant's, fixed at resolve time), no dispatch on the value.
    guard_setter(|| {
        // SAFETY: `context` is the table's `DeviceGl` (see `resolve`),
        // alive while the host may call the setter.
        let device = unsafe { &*setter.context.cast::<DeviceGl>() };
        let Ok(gl) = device.current() else { return SetStatus::DEVICE_UNAVAILABLE };
        let Some(program) = std::num::NonZeroU32::new(setter.words[0]) else {
            return SetStatus::DEVICE_UNAVAILABLE;
        };
        let (program, at) = (glow::NativeProgram(program), Some(&glow::NativeUniformLocation(setter.words[1])));
        let (transpose, v) = (value.transpose, floats.as_slice());
        // SAFETY: the program is alive (its table is); the host checked
        // that the value holds whole elements of this type that fit.
        unsafe {
            match (COLUMNS, ROWS) {
                (1, 1) => gl.program_uniform_1_f32_slice(program, at, v),
                (1, 2) => gl.program_uniform_2_f32_slice(program, at, v),
                (1, 3) => gl.program_uniform_3_f32_slice(program, at, v),
                (1, 4) => gl.program_uniform_4_f32_slice(program, at, v),
                (2, 2) => gl.program_uniform_matrix_2_f32_slice(program, at, transpose, v),
                (3, 3) => gl.program_uniform_matrix_3_f32_slice(program, at, transpose, v),
                _ => gl.program_uniform_matrix_4_f32_slice(program, at, transpose, v),
            }
            set_status(gl)
        }
    })
}

/// A resolved write's status: set, unless `XR_GL_CHECK_ERRORS` asks the
/// driver and it reports an error.
///
/// # Safety
/// `gl` is current, after the write.
#[inline(always)]
unsafe fn set_status(gl: &glow::Context) -> u32 {
    if !poll_errors() {
        return SetStatus::SET;
    }
    // SAFETY: plain query on the current context.
    match unsafe { gl.get_error() } {
        glow::NO_ERROR => SetStatus::SET,
        error => SetStatus::DRIVER_ERROR | (error & 0xffff),
    }
}

/// A resolved setter's write for the types without one of their own.
unsafe extern "C" fn write_any(setter: &ResolvedSetter, value: &ConstantValue<'_>) -> u32 {
    // SAFETY: as `write_checked` asks.
    guard_setter(|| unsafe { write_checked(setter, value, setter.ty) })
}

/// Writes a value the host checked against the setter's type, straight
/// to `glProgramUniform*` on the table's program, behind the context check.
///
/// # Safety
/// `setter` is one this module's `resolve` made, its table alive; `ty` is
/// the setter's type and `value` was checked against it.
#[inline(always)]
unsafe fn write_checked(setter: &ResolvedSetter, value: &ConstantValue<'_>, ty: ConstantType) -> u32 {
    // SAFETY: `context` is the table's `DeviceGl` (see `resolve`), alive
    // while the host may call the setter.
    let device = unsafe { &*setter.context.cast::<DeviceGl>() };
    let Ok(gl) = device.current() else { return SetStatus::DEVICE_UNAVAILABLE };
    let Some(program) = std::num::NonZeroU32::new(setter.words[0]) else { return SetStatus::DEVICE_UNAVAILABLE };
    let location = glow::NativeUniformLocation(setter.words[1]);
    // SAFETY: the program is alive (its table is) and the value has the
    // declared type and fits the array.
    unsafe {
        write_value(gl, Target::Program(glow::NativeProgram(program)), &location, ty, value.transpose, &value.data);
        set_status(gl)
    }
}

unsafe fn gl_result(gl: &glow::Context, name: &str) -> Result<(), XrError> {
    // SAFETY: plain query on the current context.
    match unsafe { gl.get_error() } {
        glow::NO_ERROR => Ok(()),
        error => Err(XrError::driver(format!("setting '{name}' failed with GL error 0x{error:04x}"))),
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

/// The XR type of a GL uniform type enum.
pub fn constant_type(gl_type: u32) -> ConstantType {
    use ScalarKind::*;
    let vector = ConstantType::vector;
    let matrix = ConstantType::matrix;
    match gl_type {
        glow::FLOAT => vector(Float, 1),
        glow::FLOAT_VEC2 => vector(Float, 2),
        glow::FLOAT_VEC3 => vector(Float, 3),
        glow::FLOAT_VEC4 => vector(Float, 4),
        glow::INT => vector(Int, 1),
        glow::INT_VEC2 => vector(Int, 2),
        glow::INT_VEC3 => vector(Int, 3),
        glow::INT_VEC4 => vector(Int, 4),
        glow::UNSIGNED_INT => vector(UInt, 1),
        glow::UNSIGNED_INT_VEC2 => vector(UInt, 2),
        glow::UNSIGNED_INT_VEC3 => vector(UInt, 3),
        glow::UNSIGNED_INT_VEC4 => vector(UInt, 4),
        glow::BOOL => vector(Bool, 1),
        glow::BOOL_VEC2 => vector(Bool, 2),
        glow::BOOL_VEC3 => vector(Bool, 3),
        glow::BOOL_VEC4 => vector(Bool, 4),
        glow::FLOAT_MAT2 => matrix(2, 2),
        glow::FLOAT_MAT3 => matrix(3, 3),
        glow::FLOAT_MAT4 => matrix(4, 4),
        glow::FLOAT_MAT2x3 => matrix(2, 3),
        glow::FLOAT_MAT2x4 => matrix(2, 4),
        glow::FLOAT_MAT3x2 => matrix(3, 2),
        glow::FLOAT_MAT3x4 => matrix(3, 4),
        glow::FLOAT_MAT4x2 => matrix(4, 2),
        glow::FLOAT_MAT4x3 => matrix(4, 3),
        glow::DOUBLE
        | glow::DOUBLE_VEC2
        | glow::DOUBLE_VEC3
        | glow::DOUBLE_VEC4
        | glow::DOUBLE_MAT2
        | glow::DOUBLE_MAT3
        | glow::DOUBLE_MAT4
        | glow::DOUBLE_MAT2x3
        | glow::DOUBLE_MAT2x4
        | glow::DOUBLE_MAT3x2
        | glow::DOUBLE_MAT3x4
        | glow::DOUBLE_MAT4x2
        | glow::DOUBLE_MAT4x3
        | glow::UNSIGNED_INT_ATOMIC_COUNTER => vector(Unsupported, 1),
        // Every other uniform type is a sampler or image, set with its unit.
        _ => vector(Sampler, 1),
    }
}

/// Reads one element's current value. The driver writes as many values as
/// the uniform *it* has at `location` holds, up to a 4×4 matrix: the buffer
/// is always that large, so a location that names another type cannot
/// write past it.
unsafe fn read_value(
    gl: &glow::Context,
    program: glow::Program,
    location: &glow::NativeUniformLocation,
    ty: ConstantType,
) -> DefaultValue {
    const LARGEST: usize = 16;
    let n = ty.components().min(LARGEST);
    // SAFETY: every buffer holds the largest uniform element GL has.
    unsafe {
        match ty.scalar {
            ScalarKind::Float => {
                let mut v = [0.0f32; LARGEST];
                gl.get_uniform_f32(program, location, &mut v);
                DefaultValue::Float(v[..n].to_vec())
            }
            ScalarKind::UInt => {
                let mut v = [0u32; LARGEST];
                gl.get_uniform_u32(program, location, &mut v);
                DefaultValue::UInt(v[..n].to_vec())
            }
            ScalarKind::Bool => {
                let mut v = [0i32; LARGEST];
                gl.get_uniform_i32(program, location, &mut v);
                DefaultValue::Bool(v[..n].iter().map(|b| u32::from(*b != 0)).collect())
            }
            ScalarKind::Int | ScalarKind::Sampler => {
                let mut v = [0i32; LARGEST];
                gl.get_uniform_i32(program, location, &mut v);
                DefaultValue::Int(v[..n].to_vec())
            }
            ScalarKind::Unsupported => DefaultValue::Int(Vec::new()),
        }
    }
}

/// `glProgramUniform*` (or `glUniform*`) for one or more elements starting at `location`.
#[inline(always)]
unsafe fn write_value(
    gl: &glow::Context,
    target: Target,
    location: &glow::NativeUniformLocation,
    ty: ConstantType,
    transpose: bool,
    data: &ConstantData<'_>,
) {
    let at = Some(location);
    // One call per GL entry point, for both targets.
    macro_rules! call {
        ($program_fn:ident, $classic_fn:ident $(, $arg:expr)*) => {
            match target {
                Target::Program(program) => gl.$program_fn(program, at $(, $arg)*),
                Target::ActiveProgram => gl.$classic_fn(at $(, $arg)*),
            }
        };
    }
    let ints: &[i32] = match data {
        ConstantData::Int(v) => v,
        // GL takes any non-zero int as true.
        // SAFETY: u32 and i32 have one size and alignment, and every bit
        // pattern is an i32; the slice borrows the caller's data as long.
        ConstantData::Bool(v) => unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<i32>(), v.len()) },
        _ => &[],
    };
    // SAFETY: the caller checked that `data` holds whole elements of `ty`.
    unsafe {
        match (data, ty.columns, ty.rows) {
            (ConstantData::Float(v), 1, 1) => call!(program_uniform_1_f32_slice, uniform_1_f32_slice, v),
            (ConstantData::Float(v), 1, 2) => call!(program_uniform_2_f32_slice, uniform_2_f32_slice, v),
            (ConstantData::Float(v), 1, 3) => call!(program_uniform_3_f32_slice, uniform_3_f32_slice, v),
            (ConstantData::Float(v), 1, 4) => call!(program_uniform_4_f32_slice, uniform_4_f32_slice, v),
            (ConstantData::Float(v), 2, 2) => {
                call!(program_uniform_matrix_2_f32_slice, uniform_matrix_2_f32_slice, transpose, v)
            }
            (ConstantData::Float(v), 2, 3) => {
                call!(program_uniform_matrix_2x3_f32_slice, uniform_matrix_2x3_f32_slice, transpose, v)
            }
            (ConstantData::Float(v), 2, 4) => {
                call!(program_uniform_matrix_2x4_f32_slice, uniform_matrix_2x4_f32_slice, transpose, v)
            }
            (ConstantData::Float(v), 3, 2) => {
                call!(program_uniform_matrix_3x2_f32_slice, uniform_matrix_3x2_f32_slice, transpose, v)
            }
            (ConstantData::Float(v), 3, 3) => {
                call!(program_uniform_matrix_3_f32_slice, uniform_matrix_3_f32_slice, transpose, v)
            }
            (ConstantData::Float(v), 3, 4) => {
                call!(program_uniform_matrix_3x4_f32_slice, uniform_matrix_3x4_f32_slice, transpose, v)
            }
            (ConstantData::Float(v), 4, 2) => {
                call!(program_uniform_matrix_4x2_f32_slice, uniform_matrix_4x2_f32_slice, transpose, v)
            }
            (ConstantData::Float(v), 4, 3) => {
                call!(program_uniform_matrix_4x3_f32_slice, uniform_matrix_4x3_f32_slice, transpose, v)
            }
            (ConstantData::Float(v), 4, 4) => {
                call!(program_uniform_matrix_4_f32_slice, uniform_matrix_4_f32_slice, transpose, v)
            }
            (ConstantData::Int(_) | ConstantData::Bool(_), 1, 1) => {
                call!(program_uniform_1_i32_slice, uniform_1_i32_slice, ints)
            }
            (ConstantData::Int(_) | ConstantData::Bool(_), 1, 2) => {
                call!(program_uniform_2_i32_slice, uniform_2_i32_slice, ints)
            }
            (ConstantData::Int(_) | ConstantData::Bool(_), 1, 3) => {
                call!(program_uniform_3_i32_slice, uniform_3_i32_slice, ints)
            }
            (ConstantData::Int(_) | ConstantData::Bool(_), 1, 4) => {
                call!(program_uniform_4_i32_slice, uniform_4_i32_slice, ints)
            }
            (ConstantData::UInt(v), 1, 1) => call!(program_uniform_1_u32_slice, uniform_1_u32_slice, v),
            (ConstantData::UInt(v), 1, 2) => call!(program_uniform_2_u32_slice, uniform_2_u32_slice, v),
            (ConstantData::UInt(v), 1, 3) => call!(program_uniform_3_u32_slice, uniform_3_u32_slice, v),
            (ConstantData::UInt(v), 1, 4) => call!(program_uniform_4_u32_slice, uniform_4_u32_slice, v),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_index_is_split_only_at_the_end() {
        assert_eq!(split_index("weights[2]"), ("weights", Some(2)));
        assert_eq!(split_index("lights[1].color"), ("lights[1].color", None));
        assert_eq!(split_index("lights[1].colors[3]"), ("lights[1].colors", Some(3)));
        assert_eq!(split_index("color"), ("color", None));
        assert_eq!(split_index("bad[x]"), ("bad[x]", None));
    }

    #[test]
    fn gl_types_map_to_constant_types() {
        assert_eq!(constant_type(glow::FLOAT_VEC4).to_string(), "vec4");
        assert_eq!(constant_type(glow::FLOAT_MAT4x3).to_string(), "mat4x3");
        assert_eq!(constant_type(glow::SAMPLER_2D).scalar, ScalarKind::Sampler);
        assert_eq!(constant_type(glow::DOUBLE).scalar, ScalarKind::Unsupported);
    }
}
