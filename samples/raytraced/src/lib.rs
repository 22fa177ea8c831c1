//! The raytraced sample as a library, so that tests render exactly what the
//! sample renders: the textured sample's cube, painted by its compute pass,
//! traced through a ray tracing pipeline — a primary ray per pixel, and
//! from each point facing the light a shadow ray — and shaded with the
//! raster version's lighting. The same device rasterises the cube too, so
//! the two images can be compared pixel for pixel.
//!
//! What may differ, and why: both images sample at pixel centres, but a
//! rasteriser decides coverage by its own fixed-point edge rules and a ray
//! by a floating-point intersection, so pixels whose centre lies on a
//! triangle's edge (the silhouette, the diagonal inside each face) may go
//! either way; and both read the texture nearest, so where the
//! interpolated texture coordinate falls within rounding of a texel's edge
//! the neighbouring texel is read. Everywhere else the lighting is the same
//! arithmetic on the same normal. [`Comparison`] counts each kind; the
//! bounds the tests hold it to are in [`MAX_SILHOUETTE_PIXELS`] and
//! [`MAX_SHADED_PIXELS`].

use std::path::{Path, PathBuf};
use xr_device::{
    AccelerationInstance, BottomLevelDesc, BufferUsage, DeviceBox, DeviceKind, DeviceOptions, DrawCall, Filter, Image,
    SamplerDesc, TextureDesc, TextureFormat, TextureId, TraceRaysCall, Wrap,
};
use xr_host::Registry;
use xr_sourcebuild::{
    AttachedBuildSystemBox, BuildOptions, BuiltProgram, ConstantTableExt, ProgramDesc, ShaderStage, SourceDesc,
};

pub use textured::{CLEAR, SIZE};
pub use triangle::{PATHS, RenderPath, SampleError, write_png};

/// The most pixels that may be the cube in one image and the background in
/// the other: those whose centre lies on the silhouette's edges. Measured
/// on lavapipe 25: 0 of the cube's 5,596 pixels; the bound leaves room for
/// other drivers' edge rules, while a shifted camera or a wrong transform
/// moves hundreds.
pub const MAX_SILHOUETTE_PIXELS: usize = 48;

/// The most pixels covered in both that may differ by more than
/// [`SHADING_TOLERANCE`]: centres within rounding of a texel's edge, or of a
/// triangle's edge inside a face. Measured on lavapipe 25: 0 of 5,596; the
/// bound is under 3% of them, while lighting 0.05 too bright moved all
/// 5,596 and an inverted shadow test 4,060.
pub const MAX_SHADED_PIXELS: usize = 160;

/// How far, per channel, a pixel covered in both images may differ and
/// still count as the same: one step of rounding to 8 bits.
pub const SHADING_TOLERANCE: u8 = 1;

/// The sample's ray tracing stages.
pub fn shader_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders")
}

/// The ray tracing program: a ray generation stage, the background's and
/// the shadow ray's miss stages (miss indices 0 and 1), and the cube's
/// closest-hit stage (hit group 0).
pub fn ray_program() -> Result<ProgramDesc, SampleError> {
    let dir = shader_dir();
    Ok(ProgramDesc::new(
        "raytraced",
        [
            SourceDesc::read("glsl", ShaderStage::RayGeneration, &dir.join("trace.rgen"))?,
            SourceDesc::read("glsl", ShaderStage::Miss, &dir.join("background.rmiss"))?,
            SourceDesc::read("glsl", ShaderStage::Miss, &dir.join("shadow.rmiss"))?,
            SourceDesc::read("glsl", ShaderStage::ClosestHit, &dir.join("shade.rchit"))?,
        ],
    ))
}

/// Why `path` does not trace this sample; `None` where it does.
pub fn skipped(path: RenderPath) -> Option<&'static str> {
    (path.kind == DeviceKind::OPENGL).then_some(
        "OpenGL has no ray tracing stages or acceleration structures; XR refuses the stages for OpenGL targets \
         where a program declares them",
    )
}

/// What one render made on one device.
pub struct Rendered {
    /// The cube traced.
    pub traced: Image,
    /// The same cube rasterised (the textured sample's draw).
    pub raster: Image,
}

/// How two images of the cube differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Comparison {
    /// Pixels covered by the cube in both.
    pub covered: usize,
    /// Pixels that are the cube in one and the background in the other.
    pub silhouette: usize,
    /// Pixels covered in both that differ by more than [`SHADING_TOLERANCE`].
    pub shaded: usize,
    /// The largest difference in a channel of a pixel covered in both.
    pub largest: u8,
}

impl Comparison {
    /// Whether the images agree within the sample's bounds.
    pub fn within_bounds(&self) -> bool {
        self.silhouette <= MAX_SILHOUETTE_PIXELS && self.shaded <= MAX_SHADED_PIXELS
    }
}

/// Compares two images of one size whose background is `background`.
pub fn compare(a: &Image, b: &Image, background: [u8; 4]) -> Comparison {
    let mut comparison = Comparison { covered: 0, silhouette: 0, shaded: 0, largest: 0 };
    for (x, y) in a.rgba.chunks(4).zip(b.rgba.chunks(4)) {
        match (x == background, y == background) {
            (true, true) => {}
            (false, false) => {
                comparison.covered += 1;
                let largest = x.iter().zip(y).map(|(p, q)| p.abs_diff(*q)).max().unwrap_or(0);
                comparison.largest = comparison.largest.max(largest);
                if largest > SHADING_TOLERANCE {
                    comparison.shaded += 1;
                }
            }
            _ => comparison.silhouette += 1,
        }
    }
    if (a.width, a.height) != (b.width, b.height) {
        comparison.silhouette = comparison.silhouette.max((a.width * a.height) as usize);
    }
    comparison
}

/// The background as 8-bit RGBA, as both images store it.
pub fn background() -> [u8; 4] {
    CLEAR.map(|c| (c * 255.0).round() as u8)
}

/// Renders the sample through `path` (a Vulkan one: [`skipped`] says why not OpenGL).
pub fn render(registry: &Registry, path: RenderPath, options: &DeviceOptions) -> Result<Rendered, SampleError> {
    let mut attached = registry.open_with(path.kind, path.build_system, options)?;
    // `attached` drops its build system before its device.
    draw(&mut attached.device, &mut attached.compiler)
}

/// The camera of [`textured::matrices`]: the eye 3 units back on z, and the
/// projection's focal length (1 / tan(25°)).
pub fn camera() -> ([f32; 4], f32) {
    ([0.0, 0.0, 3.0, 1.0], 1.0 / (50.0f32.to_radians() / 2.0).tan())
}

fn draw(device: &mut DeviceBox, compiler: &mut AttachedBuildSystemBox) -> Result<Rendered, SampleError> {
    let (texture, paint) = textured::paint_texture(device, compiler)?;
    let mut traced_program = compiler.build_program(&ray_program()?, &BuildOptions::default()).into_result()?;
    let traced = trace_cube(device, &mut traced_program, texture)?;
    let raster = raster_cube(device, compiler, texture)?;
    drop((paint, traced_program));
    Ok(Rendered { traced, raster })
}

/// Traces the cube with `program` (built from [`ray_program`], here or by
/// `xr build`), sampling `texture` (the textured sample's painted one):
/// builds the cube's acceleration structures, binds what the stages read
/// and launches a ray per pixel; returns the traced image.
pub fn trace_cube(
    device: &mut DeviceBox,
    program: &mut BuiltProgram,
    texture: TextureId,
) -> Result<Image, SampleError> {
    let (vertices, indices) = textured::cube();
    let vertex_bytes: Vec<u8> = vertices.iter().flat_map(|v| v.to_le_bytes()).collect();
    let index_bytes: Vec<u8> = indices.iter().flat_map(|i| i.to_le_bytes()).collect();
    let cube_vertices = device.create_buffer(BufferUsage::STORAGE, vertex_bytes.as_slice().into()).into_result()?;
    let cube_indices = device.create_buffer(BufferUsage::STORAGE, index_bytes.as_slice().into()).into_result()?;
    let desc =
        BottomLevelDesc { vertices: cube_vertices, vertex_stride: 8, indices: Some(cube_indices).into(), opaque: true };
    let bottom = device.create_bottom_level(&desc).into_result()?;
    let (model, _) = textured::matrices();
    let instance = AccelerationInstance::new(bottom, AccelerationInstance::rows_of(&model));
    let scene = device.create_top_level([instance].as_slice().into()).into_result()?;

    let constants = &mut program.constants;
    let handle = constants.handle("scene")?;
    constants.set_acceleration_structure(handle, &device.acceleration_structure_binding(scene).into_result()?)?;
    let image_desc =
        TextureDesc { width: SIZE, height: SIZE, format: TextureFormat::Rgba8, mip_levels: 1, storage: true };
    let blank = vec![0u8; image_desc.bytes(1)];
    let image = device.create_texture(&image_desc, blank.as_slice().into(), 1).into_result()?;
    let handle = constants.handle("traced")?;
    constants.set_texture(handle, &device.texture_binding(image, None.into()).into_result()?)?;
    // Sampled as the raster sample samples it.
    let sampler = device
        .create_sampler(&SamplerDesc { filter: Filter::Nearest, mipmap: Filter::Nearest, wrap: Wrap::Repeat })
        .into_result()?;
    let handle = constants.handle("albedo")?;
    constants.set_texture(handle, &device.texture_binding(texture, Some(sampler).into()).into_result()?)?;
    for (name, buffer) in [("CubeVertices", cube_vertices), ("CubeIndices", cube_indices)] {
        let handle = constants.handle(name)?;
        constants.set_buffer(handle, &device.buffer_binding(buffer).into_result()?)?;
    }
    let (eye, focal) = camera();
    let handle = constants.handle("u_eye")?;
    constants.set_vector(handle, &eye)?;
    let handle = constants.handle("u_focal")?;
    constants.set_float(handle, focal)?;
    device.trace_rays(&TraceRaysCall { program: program.program, size: [SIZE, SIZE, 1] }).into_result()?;
    let rgba = device.read_texture(image, 0).into_result()?;
    Ok(Image { width: SIZE, height: SIZE, rgba })
}

/// The same cube rasterised through the textured sample's program, built by `compiler`.
pub fn raster_cube(
    device: &mut DeviceBox,
    compiler: &mut AttachedBuildSystemBox,
    texture: TextureId,
) -> Result<Image, SampleError> {
    let mut raster = compiler.build_program(&textured::mesh_program()?, &BuildOptions::default()).into_result()?;
    textured::set_cube_constants(device, &mut raster, texture)?;
    let (vertex_buffer, index_buffer, index_count) = textured::cube_buffers(device)?;
    let target = device.create_depth_render_target(SIZE, SIZE).into_result()?;
    device.clear(target, &CLEAR).into_result()?;
    let call = DrawCall::triangles(target, raster.program, vertex_buffer, 0)
        .indexed(index_buffer, index_count)
        .with_depth_test();
    device.draw(&call).into_result()?;
    Ok(device.read_pixels(target).into_result()?)
}
