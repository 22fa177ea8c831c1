//! The deferred sample as a library, so that tests render exactly what the
//! sample renders: deferred shading in two passes into one render target
//! of three colour attachments and depth.
//!
//! 1. The G-buffer pass draws the textured sample's cube, depth-tested,
//!    writing its albedo into attachment 1 (RGBA8) and its normal into
//!    attachment 2 (RGBA16F). It is bindless: the albedo comes from one
//!    array of textures at an index the draw sets.
//! 2. The lighting pass covers the target with a quad, reads attachments
//!    1 and 2 at its own pixel and writes the lit colour into attachment 0
//!    (RGBA8), which is read back. On Vulkan it reads them as input
//!    attachments, which the device binds from the target (dynamic
//!    rendering local read); on OpenGL as textures (`render_target_texture`).
//!
//! Through each path (OpenGL GLSL, OpenGL SPIR-V, Vulkan SPIR-V); the
//! textures, the mesh and the matrices are made in code.

use std::path::{Path, PathBuf};
use textured::{cube_buffers, matrices};
use xr_device::{
    DeviceBox, DeviceKind, DeviceOptions, DrawCall, Filter, Image, RenderTargetDesc, SamplerDesc, TextureDesc,
    TextureFormat, VertexAttribute, VertexLayout, Wrap,
};
use xr_host::Registry;
use xr_sourcebuild::{AttachedBuildSystemBox, BuildOptions, ConstantTableExt, ProgramDesc, ShaderStage, SourceDesc};

pub use triangle::{PATHS, RenderPath, SampleError, write_png};

/// Width and height of the image.
pub const SIZE: u32 = 160;

/// The albedo textures the G-buffer pass chooses from, one colour pair
/// (a 2 × 2 checker) each.
pub const ALBEDOS: [[[u8; 4]; 2]; 4] = [
    [[230, 60, 40, 255], [250, 200, 60, 255]],
    [[40, 160, 70, 255], [200, 240, 120, 255]],
    [[40, 90, 220, 255], [150, 210, 250, 255]],
    [[200, 200, 200, 255], [90, 90, 90, 255]],
];

/// The texture the G-buffer pass draws the cube with.
pub const CHOSEN: i32 = 2;

/// Where the light comes from (toward the light, world space).
pub const LIGHT: [f32; 4] = [0.4, 0.7, 0.6, 0.0];

/// Where nothing is drawn.
pub const BACKGROUND: [f32; 4] = [0.02, 0.02, 0.05, 1.0];

/// The sample's shaders.
pub fn shader_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders")
}

/// The program of `name`: `name.vert` + `name.frag`.
pub fn program(name: &str) -> Result<ProgramDesc, SampleError> {
    let dir = shader_dir();
    Ok(ProgramDesc::new(
        name,
        [
            SourceDesc::read("glsl", ShaderStage::Vertex, &dir.join(format!("{name}.vert")))?,
            SourceDesc::read("glsl", ShaderStage::Fragment, &dir.join(format!("{name}.frag")))?,
        ],
    ))
}

/// Renders the sample through `path`.
pub fn render(registry: &Registry, path: RenderPath, options: &DeviceOptions) -> Result<Image, SampleError> {
    let mut attached = registry.open_with(path.kind, path.build_system, options)?;
    // `attached` drops its build system before its device.
    draw(&mut attached.device, &mut attached.compiler, path.kind)
}

fn draw(device: &mut DeviceBox, compiler: &mut AttachedBuildSystemBox, kind: DeviceKind) -> Result<Image, SampleError> {
    let options = BuildOptions::default();
    let mut gbuffer = compiler.build_program(&program("gbuffer")?, &options).into_result()?;
    let mut lighting = compiler.build_program(&program("lighting")?, &options).into_result()?;
    let target = device
        .create_render_target_with(&RenderTargetDesc {
            width: SIZE,
            height: SIZE,
            colors: vec![TextureFormat::Rgba8, TextureFormat::Rgba8, TextureFormat::Rgba16Float].into(),
            depth: true,
        })
        .into_result()?;
    let sampler = device
        .create_sampler(&SamplerDesc { filter: Filter::Nearest, mipmap: Filter::Nearest, wrap: Wrap::Repeat })
        .into_result()?;

    // The G-buffer pass: every albedo bound into one array, one chosen.
    for (element, [a, b]) in ALBEDOS.iter().enumerate() {
        let desc = TextureDesc { width: 2, height: 2, format: TextureFormat::Rgba8, mip_levels: 1, storage: false };
        let texels: Vec<u8> = [a, b, b, a].into_iter().flatten().copied().collect();
        let texture = device.create_texture(&desc, texels.as_slice().into(), 1).into_result()?;
        let handle = gbuffer.constants.handle(&format!("textures[{element}]"))?;
        gbuffer.constants.set_texture(handle, &device.texture_binding(texture, Some(sampler).into()).into_result()?)?;
    }
    let handle = gbuffer.constants.handle("u_texture")?;
    gbuffer.constants.set_int(handle, CHOSEN)?;
    let (model, mvp) = matrices();
    let handle = gbuffer.constants.handle("u_mvp")?;
    gbuffer.constants.set_matrix4(handle, &mvp)?;
    let handle = gbuffer.constants.handle("u_model")?;
    gbuffer.constants.set_matrix4(handle, &model)?;
    let (mesh, index_buffer, index_count) = cube_buffers(device)?;
    device.clear(target, &[0.0; 4]).into_result()?;
    let call = DrawCall::triangles(target, gbuffer.program, mesh, 0).indexed(index_buffer, index_count);
    device.draw(&call).into_result()?;

    // The lighting pass: on OpenGL the G-buffer is bound as textures; on
    // Vulkan the device gives the program its input attachments.
    if kind == DeviceKind::OPENGL {
        for (name, attachment) in [("g_albedo", 1), ("g_normal", 2)] {
            let texture = device.render_target_texture(target, attachment).into_result()?;
            let handle = lighting.constants.handle(name)?;
            lighting
                .constants
                .set_texture(handle, &device.texture_binding(texture, Some(sampler).into()).into_result()?)?;
        }
    }
    let handle = lighting.constants.handle("u_light")?;
    lighting.constants.set_vector(handle, &LIGHT)?;
    let handle = lighting.constants.handle("u_background")?;
    lighting.constants.set_vector(handle, &BACKGROUND)?;
    let quad = [-1.0f32, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0, -1.0, 1.0, 1.0, -1.0, 1.0];
    let layout =
        VertexLayout { stride: 2, attributes: vec![VertexAttribute { location: 0, components: 2, offset: 0 }].into() };
    let quad = device.create_vertex_buffer(quad.as_slice().into(), &layout).into_result()?;
    device.draw(&DrawCall::triangles(target, lighting.program, quad, 6)).into_result()?;
    let image = device.read_pixels(target).into_result()?;
    drop((gbuffer, lighting));
    Ok(image)
}
