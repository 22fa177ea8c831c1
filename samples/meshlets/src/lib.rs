//! The meshlets sample as a library, so that tests render exactly what the
//! sample renders: the textured sample's cube, painted by its compute pass,
//! drawn by a task stage that culls the faces turned away from the camera
//! and a mesh stage that makes each face left (one mesh work group a face,
//! as meshlet renderers make one a cluster), shaded by the textured
//! sample's own fragment stage. The same device draws the cube through the
//! vertex pipeline too, so the two images can be compared pixel for pixel.

use std::path::{Path, PathBuf};
use xr_device::{BufferUsage, DeviceBox, DeviceKind, DeviceOptions, Image, MeshDrawCall};
use xr_host::Registry;
use xr_sourcebuild::{AttachedBuildSystemBox, BuildOptions, ConstantTableExt, ProgramDesc, ShaderStage, SourceDesc};

pub use textured::{CLEAR, SIZE};
pub use triangle::{PATHS, RenderPath, SampleError, write_png};

/// The sample's task and mesh stages.
pub fn shader_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders")
}

/// The mesh program: `cube.task` + `cube.mesh` + the textured sample's `mesh.frag`.
pub fn meshlet_program() -> Result<ProgramDesc, SampleError> {
    let dir = shader_dir();
    Ok(ProgramDesc::new(
        "meshlets",
        [
            SourceDesc::read("glsl", ShaderStage::Task, &dir.join("cube.task"))?,
            SourceDesc::read("glsl", ShaderStage::Mesh, &dir.join("cube.mesh"))?,
            SourceDesc::read("glsl", ShaderStage::Fragment, &textured::shader_dir().join("mesh.frag"))?,
        ],
    ))
}

/// Why `path` does not draw this sample; `None` where it does.
pub fn skipped(path: RenderPath) -> Option<&'static str> {
    (path.kind == DeviceKind::OPENGL).then_some(
        "OpenGL has no task or mesh stages (only NVIDIA's GL_NV_mesh_shader, which Mesa does not offer); \
         XR refuses them for OpenGL targets where a program declares them",
    )
}

/// What one render made on one device.
pub struct Rendered {
    /// The cube drawn by the task and mesh stages.
    pub meshlets: Image,
    /// The same cube drawn through the vertex pipeline (the textured sample's draw).
    pub vertex_pipeline: Image,
    /// The faces the task stage kept, as it counted them.
    pub faces_drawn: u32,
}

/// Renders the sample through `path` (a Vulkan one: [`skipped`] says why not OpenGL).
pub fn render(registry: &Registry, path: RenderPath, options: &DeviceOptions) -> Result<Rendered, SampleError> {
    let mut attached = registry.open_with(path.kind, path.build_system, options)?;
    // `attached` drops its build system before its device.
    draw(&mut attached.device, &mut attached.compiler)
}

fn draw(device: &mut DeviceBox, compiler: &mut AttachedBuildSystemBox) -> Result<Rendered, SampleError> {
    let (texture, paint) = textured::paint_texture(device, compiler)?;
    let mut meshlets = compiler.build_program(&meshlet_program()?, &BuildOptions::default()).into_result()?;
    textured::set_cube_constants(device, &mut meshlets, texture)?;
    let (vertices, _) = textured::cube();
    let vertex_bytes: Vec<u8> = vertices.iter().flat_map(|v| v.to_le_bytes()).collect();
    let cube = device.create_buffer(BufferUsage::STORAGE, vertex_bytes.as_slice().into()).into_result()?;
    let handle = meshlets.constants.handle("CubeVertices")?;
    meshlets.constants.set_buffer(handle, &device.buffer_binding(cube).into_result()?)?;
    // Written by the task stage; anything but a count of faces shows it did not run.
    let drawn = device.create_buffer(BufferUsage::STORAGE, u32::MAX.to_le_bytes().as_slice().into()).into_result()?;
    let handle = meshlets.constants.handle("Drawn")?;
    meshlets.constants.set_buffer(handle, &device.buffer_binding(drawn).into_result()?)?;

    let target = device.create_depth_render_target(SIZE, SIZE).into_result()?;
    device.clear(target, &CLEAR).into_result()?;
    let call = MeshDrawCall { target, program: meshlets.program, groups: [1, 1, 1], depth_test: true };
    device.draw_mesh_tasks(&call).into_result()?;
    let meshlet_image = device.read_pixels(target).into_result()?;
    let counted = device.read_buffer(drawn).into_result()?;
    let faces_drawn = u32::from_le_bytes(counted.get(..4).and_then(|b| b.try_into().ok()).unwrap_or([0xff; 4]));

    let mut vertex = compiler.build_program(&textured::mesh_program()?, &BuildOptions::default()).into_result()?;
    textured::set_cube_constants(device, &mut vertex, texture)?;
    let (vertex_buffer, index_buffer, index_count) = textured::cube_buffers(device)?;
    let target = device.create_depth_render_target(SIZE, SIZE).into_result()?;
    device.clear(target, &CLEAR).into_result()?;
    let call = xr_device::DrawCall::triangles(target, vertex.program, vertex_buffer, 0)
        .indexed(index_buffer, index_count)
        .with_depth_test();
    device.draw(&call).into_result()?;
    let vertex_image = device.read_pixels(target).into_result()?;
    drop((paint, meshlets, vertex));
    Ok(Rendered { meshlets: meshlet_image, vertex_pipeline: vertex_image, faces_drawn })
}

/// How many pixels of `a` and `b` differ (images of one size; every pixel
/// where they do not).
pub fn differing_pixels(a: &Image, b: &Image) -> usize {
    if (a.width, a.height) != (b.width, b.height) {
        return (a.width * a.height).max(b.width * b.height) as usize;
    }
    a.rgba.chunks(4).zip(b.rgba.chunks(4)).filter(|(x, y)| x != y).count()
}
