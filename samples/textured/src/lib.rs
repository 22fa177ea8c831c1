//! The textured sample as a library, so that tests render exactly what the
//! sample renders: a compute program paints a texture from a palette in a
//! storage buffer, then a lit cube samples it, drawn indexed with the depth
//! test on, through each path (OpenGL GLSL, OpenGL SPIR-V, Vulkan SPIR-V).
//! The mesh, the palette and the matrices are made here in code: no
//! binary assets.

use std::path::{Path, PathBuf};
use xr_device::{
    BufferId, BufferUsage, ComputeCall, DeviceBox, DeviceOptions, DrawCall, Filter, Image, SamplerDesc, TextureDesc,
    TextureFormat, TextureId, VertexAttribute, VertexBufferId, VertexLayout, Wrap,
};
use xr_host::Registry;
use xr_sourcebuild::{
    AttachedBuildSystemBox, BuildOptions, BuiltProgram, ConstantTableExt, ProgramDesc, ShaderStage, SourceDesc,
};

/// Width and height of the image.
pub const SIZE: u32 = 160;

/// Width and height of the painted texture.
pub const TEXTURE_SIZE: u32 = 64;

/// The background.
pub const CLEAR: [f32; 4] = [0.02, 0.02, 0.05, 1.0];

/// The palette the compute pass paints with: two RGBA colours.
pub const PALETTE: [[f32; 4]; 2] = [[0.95, 0.55, 0.15, 1.0], [0.15, 0.45, 0.9, 1.0]];

// The paths, the error type and the PNG writer are the triangle sample's:
// the first sample a newcomer reads defines them once.
pub use triangle::{PATHS, RenderPath, SampleError, write_png};

/// The sample's shaders.
pub fn shader_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders")
}

/// A cube of side 1 around the origin: per vertex position (3), normal (3)
/// and texture coordinate (2); 4 vertices and 6 indices per face.
pub fn cube() -> (Vec<f32>, Vec<u32>) {
    let faces: [([f32; 3], [f32; 3], [f32; 3]); 6] = [
        ([1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]),
        ([-1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]),
        ([0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]),
        ([0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
        ([0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
        ([0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
    ];
    let mut vertices = Vec::new();
    let mut indices = Vec::new();
    for (normal, u, v) in faces {
        let base = (vertices.len() / 8) as u32;
        for (su, sv) in [(-1.0f32, -1.0f32), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
            for axis in 0..3 {
                vertices.push(0.5 * normal[axis] + 0.5 * su * u[axis] + 0.5 * sv * v[axis]);
            }
            vertices.extend_from_slice(&normal);
            vertices.extend_from_slice(&[(su + 1.0) * 0.5, (sv + 1.0) * 0.5]);
        }
        indices.extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
    }
    (vertices, indices)
}

/// [`cube`] on `device`: its vertex buffer (position, normal, texture
/// coordinate), its index buffer and the number of indices.
pub fn cube_buffers(device: &mut DeviceBox) -> Result<(VertexBufferId, BufferId, u32), SampleError> {
    let (vertices, indices) = cube();
    let layout = VertexLayout {
        stride: 8,
        attributes: vec![
            VertexAttribute { location: 0, components: 3, offset: 0 },
            VertexAttribute { location: 1, components: 3, offset: 3 },
            VertexAttribute { location: 2, components: 2, offset: 6 },
        ]
        .into(),
    };
    let vertex_buffer = device.create_vertex_buffer(vertices.as_slice().into(), &layout).into_result()?;
    let index_bytes: Vec<u8> = indices.iter().flat_map(|i| i.to_le_bytes()).collect();
    let index_buffer = device.create_buffer(BufferUsage::INDEX, index_bytes.as_slice().into()).into_result()?;
    Ok((vertex_buffer, index_buffer, indices.len() as u32))
}

/// A column-major 4 × 4 matrix.
pub type Mat4 = [f32; 16];

/// `a * b`, column-major.
pub fn multiply(a: &Mat4, b: &Mat4) -> Mat4 {
    let mut out = [0.0; 16];
    for column in 0..4 {
        for row in 0..4 {
            out[column * 4 + row] = (0..4).map(|k| a[k * 4 + row] * b[column * 4 + k]).sum();
        }
    }
    out
}

/// The cube's model matrix (turned about y, then x) and its model-view-
/// projection matrix: a camera 3 units back with a 50° field of view,
/// depth mapped to 0..1 (Vulkan's and, as written to the depth buffer, GL's
/// with a depth range that clips nothing the cube reaches).
pub fn matrices() -> (Mat4, Mat4) {
    let (ay, ax) = (0.6f32, 0.45f32);
    let turn_y = [ay.cos(), 0.0, -ay.sin(), 0.0, 0.0, 1.0, 0.0, 0.0, ay.sin(), 0.0, ay.cos(), 0.0, 0.0, 0.0, 0.0, 1.0];
    let turn_x = [1.0, 0.0, 0.0, 0.0, 0.0, ax.cos(), ax.sin(), 0.0, 0.0, -ax.sin(), ax.cos(), 0.0, 0.0, 0.0, 0.0, 1.0];
    let model = multiply(&turn_x, &turn_y);
    let view = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, -3.0, 1.0];
    let (near, far) = (0.5f32, 10.0f32);
    let f = 1.0 / (50.0f32.to_radians() / 2.0).tan();
    // Clip z from 0 (near) to w (far), which both APIs keep.
    let projection = [
        f,
        0.0,
        0.0,
        0.0,
        0.0,
        f,
        0.0,
        0.0,
        0.0,
        0.0,
        far / (near - far),
        -1.0,
        0.0,
        0.0,
        near * far / (near - far),
        0.0,
    ];
    (model, multiply(&projection, &multiply(&view, &model)))
}

/// Renders the sample through `path`.
pub fn render(registry: &Registry, path: RenderPath, options: &DeviceOptions) -> Result<Image, SampleError> {
    render_scene(registry, path, options, true)
}

/// Renders the sample through `path`, with the depth test on or off (off,
/// faces drawn later cover nearer ones: what the depth test is for).
pub fn render_scene(
    registry: &Registry,
    path: RenderPath,
    options: &DeviceOptions,
    depth_test: bool,
) -> Result<Image, SampleError> {
    let mut attached = registry.open_with(path.kind, path.build_system, options)?;
    // `attached` drops its build system before its device.
    draw(&mut attached.device, &mut attached.compiler, depth_test)
}

/// The compute program: `paint.comp`.
pub fn paint_program() -> Result<ProgramDesc, SampleError> {
    Ok(ProgramDesc::new("paint", [SourceDesc::read("glsl", ShaderStage::Compute, &shader_dir().join("paint.comp"))?]))
}

/// The mesh program: `mesh.vert` + `mesh.frag`.
pub fn mesh_program() -> Result<ProgramDesc, SampleError> {
    let dir = shader_dir();
    Ok(ProgramDesc::new(
        "mesh",
        [
            SourceDesc::read("glsl", ShaderStage::Vertex, &dir.join("mesh.vert"))?,
            SourceDesc::read("glsl", ShaderStage::Fragment, &dir.join("mesh.frag"))?,
        ],
    ))
}

/// The compute pass: builds `paint.comp` and dispatches it, painting a
/// texture from [`PALETTE`]; returns the texture (every later use sees what
/// it wrote) and the program, which must outlive the texture's first use.
pub fn paint_texture(
    device: &mut DeviceBox,
    compiler: &mut AttachedBuildSystemBox,
) -> Result<(TextureId, BuiltProgram), SampleError> {
    let mut paint = compiler.build_program(&paint_program()?, &BuildOptions::default()).into_result()?;
    let palette: Vec<u8> = PALETTE.iter().flatten().flat_map(|c| c.to_le_bytes()).collect();
    let palette = device.create_buffer(BufferUsage::STORAGE, palette.as_slice().into()).into_result()?;
    let desc = TextureDesc {
        width: TEXTURE_SIZE,
        height: TEXTURE_SIZE,
        format: TextureFormat::Rgba8,
        mip_levels: 1,
        storage: true,
    };
    let blank = vec![0u8; desc.bytes(1)];
    let texture = device.create_texture(&desc, blank.as_slice().into(), 1).into_result()?;
    let painted = paint.constants.handle("painted")?;
    paint.constants.set_texture(painted, &device.texture_binding(texture, None.into()).into_result()?)?;
    let colors = paint.constants.handle("Palette")?;
    paint.constants.set_buffer(colors, &device.buffer_binding(palette).into_result()?)?;
    let groups = TEXTURE_SIZE / 8;
    device.dispatch(&ComputeCall { program: paint.program, groups: [groups, groups, 1] }).into_result()?;
    Ok((texture, paint))
}

/// Sets what the cube's stages read on `cube`: the matrices of
/// [`matrices`] and `texture`, sampled nearest.
pub fn set_cube_constants(
    device: &mut DeviceBox,
    cube: &mut BuiltProgram,
    texture: TextureId,
) -> Result<(), SampleError> {
    let sampler = device
        .create_sampler(&SamplerDesc { filter: Filter::Nearest, mipmap: Filter::Nearest, wrap: Wrap::Repeat })
        .into_result()?;
    let (model, mvp) = matrices();
    let handle = cube.constants.handle("u_mvp")?;
    cube.constants.set_matrix4(handle, &mvp)?;
    let handle = cube.constants.handle("u_model")?;
    cube.constants.set_matrix4(handle, &model)?;
    let albedo = cube.constants.handle("albedo")?;
    cube.constants.set_texture(albedo, &device.texture_binding(texture, Some(sampler).into()).into_result()?)?;
    Ok(())
}

fn draw(device: &mut DeviceBox, compiler: &mut AttachedBuildSystemBox, depth_test: bool) -> Result<Image, SampleError> {
    let (texture, paint) = paint_texture(device, compiler)?;
    let mut mesh = compiler.build_program(&mesh_program()?, &BuildOptions::default()).into_result()?;
    set_cube_constants(device, &mut mesh, texture)?;
    let (vertex_buffer, index_buffer, index_count) = cube_buffers(device)?;
    let target = device.create_depth_render_target(SIZE, SIZE).into_result()?;
    device.clear(target, &CLEAR).into_result()?;
    let mut call = DrawCall::triangles(target, mesh.program, vertex_buffer, 0).indexed(index_buffer, index_count);
    call.depth_test = depth_test;
    device.draw(&call).into_result()?;
    let image = device.read_pixels(target).into_result()?;
    drop((paint, mesh));
    Ok(image)
}
