//! Making a table: a program's active uniforms (by name in GL, or from
//! SPIR-V reflection) with their initial values, its uniform blocks, and
//! its samplers, images and storage blocks as resources with binding points.

use super::{BlockEntry, DefaultValue, Entry, GlConstantTable, UniformBlock, UniformBlockSpec};
use crate::{
    device_gl::DeviceGl,
    gl_ext::PipelineFns,
    resources::{self, GlResource, Points, ProgramResources},
};
use glow::HasContext;
use std::{cell::RefCell, rc::Rc};
use xr_device::{GlBindingSpace, ResourceKind, XrError};
use xr_sourcebuild::{ConstantInfo, ConstantType, ResourceInfo, ScalarKind};

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
        Ok(Self::assemble(gl, pipelines, program, program_name, entries, ProgramResources { resources, points }))
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
        let mut table = Self::assemble(gl, pipelines, program, program_name, entries, resources);
        table.bind_blocks(blocks)?;
        Ok(table)
    }

    /// The table of `program`'s uniforms `entries` (sorted here, by name)
    /// and its resources, no uniform block bound yet, registered with the
    /// device.
    fn assemble(
        gl: Rc<DeviceGl>,
        pipelines: Option<Rc<PipelineFns>>,
        program: glow::Program,
        program_name: &str,
        mut entries: Vec<Entry>,
        ProgramResources { resources, points }: ProgramResources,
    ) -> Self {
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
        table
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
