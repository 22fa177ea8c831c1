//! The triangle sample as a library, so that tests render exactly what the
//! sample renders: an engine's first steps with XR.
//!
//! 1. find the plugins ([`Registry`]),
//! 2. open the OpenGL device system's device,
//! 3. attach the best GLSL build system and build the program from files,
//! 4. set the colour and transform through the constant table,
//! 5. draw into an offscreen target and read the pixels back.

use std::path::{Path, PathBuf};
use xr_device::{DeviceKind, DeviceOptions, DrawCall, Image, VertexAttribute, VertexLayout, XrError};
use xr_host::{AttachedDevice, Registry, RegistryError};
use xr_sourcebuild::{Availability, BuildError, BuildOptions, ConstantTableExt, ProgramDesc, ShaderStage, SourceDesc};

/// Width and height of the rendered image.
pub const SIZE: u32 = 128;

/// The colour the target is cleared to.
pub const CLEAR: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

/// The triangle, in clip space before the transform: (x, y) per vertex.
pub const VERTICES: [f32; 6] = [-0.5, -0.5, 0.5, -0.5, 0.0, 0.5];

/// What the caller sets through the constant table.
#[derive(Clone, Debug, PartialEq)]
pub struct TriangleParams {
    /// `u_color`, RGBA.
    pub color: [f32; 4],
    /// `u_transform`, column-major.
    pub transform: [f32; 16],
}

impl Default for TriangleParams {
    fn default() -> Self {
        Self { color: [1.0, 0.5, 0.0, 1.0], transform: translation(0.0, 0.0) }
    }
}

/// A column-major matrix that moves by (`x`, `y`) in clip space.
pub fn translation(x: f32, y: f32) -> [f32; 16] {
    [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, x, y, 0.0, 1.0]
}

/// Why the sample could not render.
#[derive(Debug, thiserror::Error)]
pub enum SampleError {
    /// No suitable plugin was found.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// A plugin call failed.
    #[error("{0}")]
    Plugin(#[from] XrError),
    /// The shaders did not build.
    #[error("{0}")]
    Build(#[from] BuildError),
    /// A shader file could not be read.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The shader directory shipped with the sample.
pub fn default_shader_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders")
}

/// A way to render: a device kind and the build system that builds for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenderPath {
    /// The command-line name: `gl-glsl`, `gl-spirv`, `vk-spirv`.
    pub name: &'static str,
    /// The device kind.
    pub kind: DeviceKind,
    /// The build system's name.
    pub build_system: &'static str,
}

/// The options every sample takes: where the PNGs go, which path, and
/// validation.
#[derive(clap::Args, Clone, Debug)]
pub struct PathArgs {
    /// Where to write the PNGs (one per path: `<sample>-<path>.png`).
    #[arg(long, default_value = "target/xr-samples")]
    pub out: PathBuf,
    /// Render through this path only: gl-glsl, gl-spirv or vk-spirv.
    #[arg(long)]
    pub path: Option<String>,
    /// Run the device's validation (the Vulkan validation layers); any message is an error.
    #[arg(long)]
    pub validation: bool,
}

impl PathArgs {
    /// The paths asked for: the one named, or every path; an unknown name is an error.
    pub fn paths(&self) -> Result<Vec<RenderPath>, String> {
        let paths: Vec<RenderPath> =
            PATHS.into_iter().filter(|p| self.path.as_deref().is_none_or(|only| only == p.name)).collect();
        if paths.is_empty() {
            return Err(format!(
                "unknown path '{}': gl-glsl, gl-spirv or vk-spirv",
                self.path.as_deref().unwrap_or("")
            ));
        }
        Ok(paths)
    }

    /// The device options asked for.
    pub fn options(&self) -> DeviceOptions {
        DeviceOptions { validation: self.validation, ..DeviceOptions::default() }
    }

    /// Renders through every path asked for, with one registry: a path
    /// `skipped` gives a reason for is printed as skipped; `render` draws
    /// the others, and `report` writes and checks what each drew.
    pub fn render_each<R, E>(
        &self,
        skipped: impl Fn(RenderPath) -> Option<&'static str>,
        render: impl Fn(&Registry, RenderPath, &DeviceOptions) -> Result<R, E>,
        mut report: impl FnMut(RenderPath, R) -> anyhow::Result<()>,
    ) -> anyhow::Result<()>
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        use anyhow::Context;
        let registry = Registry::discover();
        let options = self.options();
        for path in self.paths().map_err(anyhow::Error::msg)? {
            if let Some(why) = skipped(path) {
                println!("{:<9} skipped: {why}", path.name);
                continue;
            }
            let rendered =
                render(&registry, path, &options).with_context(|| format!("rendering through {}", path.name))?;
            report(path, rendered)?;
        }
        Ok(())
    }

    /// Renders through every path asked for with `render` and writes one
    /// PNG per path, `<sample>-<path>.png` under `out`, saying where each
    /// went: the whole `main` of a sample that renders one image per path.
    pub fn write_each_path(
        &self,
        sample: &str,
        render: impl Fn(&Registry, RenderPath, &DeviceOptions) -> Result<Image, SampleError>,
    ) -> anyhow::Result<()> {
        self.render_each(
            |_| None,
            render,
            |path, image| {
                let file = self.out.join(format!("{sample}-{}.png", path.name));
                write_png(&image, &file)?;
                println!("{:<9} -> {}", path.name, file.display());
                Ok(())
            },
        )
    }
}

/// The command line of a sample that takes the [`PathArgs`] and nothing
/// else, parsed: its `--help` says `$about` and names the sample's own
/// package (the command is derived in the sample's crate, which must
/// depend on `clap`).
#[macro_export]
macro_rules! parse_path_args {
    ($about:literal) => {{
        #[doc = $about]
        #[derive(clap::Parser)]
        struct Args {
            #[command(flatten)]
            common: $crate::PathArgs,
        }
        <Args as clap::Parser>::parse().common
    }};
}

/// Every path XR renders through.
pub const PATHS: [RenderPath; 3] = [
    RenderPath { name: "gl-glsl", kind: DeviceKind::OPENGL, build_system: "xr-compiler-glsl" },
    RenderPath { name: "gl-spirv", kind: DeviceKind::OPENGL, build_system: "xr-compiler-gl-spirv" },
    RenderPath { name: "vk-spirv", kind: DeviceKind::VULKAN, build_system: "xr-compiler-vk-spirv" },
];

/// Renders the triangle through the plugins of `registry`, with the best
/// OpenGL GLSL build system.
pub fn render(registry: &Registry, params: &TriangleParams, shader_dir: &Path) -> Result<Image, SampleError> {
    let AttachedDevice { mut device, mut compiler, .. } =
        registry.open_attached(DeviceKind::OPENGL, Availability::RUNTIME_COMPILE, "glsl", &DeviceOptions::default())?;
    draw(&mut device, &mut compiler, params, shader_dir)
}

/// Renders the triangle through one path; `options` opens the device
/// (validation, say).
pub fn render_path(
    registry: &Registry,
    path: RenderPath,
    params: &TriangleParams,
    shader_dir: &Path,
    options: &DeviceOptions,
) -> Result<Image, SampleError> {
    let mut attached = registry.open_with(path.kind, path.build_system, options)?;
    draw(&mut attached.device, &mut attached.compiler, params, shader_dir)
}

fn draw(
    device: &mut xr_device::DeviceBox,
    compiler: &mut xr_sourcebuild::AttachedBuildSystemBox,
    params: &TriangleParams,
    shader_dir: &Path,
) -> Result<Image, SampleError> {
    let program = ProgramDesc::new(
        "triangle",
        [
            SourceDesc::read("glsl", ShaderStage::Vertex, &shader_dir.join("triangle.vert"))?,
            SourceDesc::read("glsl", ShaderStage::Fragment, &shader_dir.join("triangle.frag"))?,
        ],
    );
    let mut built = compiler.build_program(&program, &BuildOptions::default()).into_result()?;
    let color = built.constants.handle("u_color")?;
    built.constants.set_vector(color, &params.color)?;
    let transform = built.constants.handle("u_transform")?;
    built.constants.set_matrix4(transform, &params.transform)?;

    let target = device.create_render_target(SIZE, SIZE).into_result()?;
    let layout =
        VertexLayout { stride: 2, attributes: vec![VertexAttribute { location: 0, components: 2, offset: 0 }].into() };
    let vertices = device.create_vertex_buffer(VERTICES.as_slice().into(), &layout).into_result()?;
    device.clear(target, &CLEAR).into_result()?;
    let draw = DrawCall::triangles(target, built.program, vertices, 3);
    device.draw(&draw).into_result()?;
    Ok(device.read_pixels(target).into_result()?)
}

/// Writes an image as PNG, creating its directory.
pub fn write_png(image: &Image, path: &Path) -> Result<(), SampleError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    image::save_buffer(path, &image.rgba, image.width, image.height, image::ExtendedColorType::Rgba8)
        .map_err(|e| std::io::Error::other(format!("{}: {e}", path.display())))?;
    Ok(())
}
