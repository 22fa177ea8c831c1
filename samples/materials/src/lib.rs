//! The materials sample as a library, so that tests render exactly what the
//! sample renders: an engine that ships a store built by `xr build` and
//! loads its programs at start-up through [`xr_build::library`].
//!
//! The scene is a 3 × 3 grid of tiles: one row per program (`unlit`,
//! `lit`, `toon`), each tile a variant of it, some with overrides set at the
//! load call.

use std::path::Path;
use xr_build::{
    LoadPath,
    library::{DeviceLoader, LibraryError, LoadRequest, ShaderLibrary},
};
use xr_device::{DeviceKind, DeviceOptions, DrawCall, Image, VertexAttribute, VertexLayout, XrError};
use xr_sourcebuild::{ConstantTableExt, Registry, RegistryError};

/// Width and height of the rendered image.
pub const SIZE: u32 = 192;

/// The colour the target is cleared to.
pub const CLEAR: [f32; 4] = [0.05, 0.05, 0.05, 1.0];

/// One tile of the scene.
#[derive(Clone, Debug)]
pub struct Tile {
    /// The program.
    pub program: &'static str,
    /// Its variant: a value for every axis.
    pub variant: &'static [(&'static str, &'static str)],
    /// Overrides set at load time.
    pub overrides: &'static [(&'static str, f64)],
    /// The base colour (`u_color`).
    pub color: [f32; 4],
}

/// The scene, row by row.
pub const SCENE: [Tile; 9] = [
    Tile {
        program: "unlit",
        variant: &[("TINT", "0"), ("PATTERN", "flat")],
        overrides: &[],
        color: [0.2, 0.6, 1.0, 1.0],
    },
    Tile {
        program: "unlit",
        variant: &[("TINT", "1"), ("PATTERN", "stripes")],
        overrides: &[],
        color: [1.0, 1.0, 1.0, 1.0],
    },
    Tile {
        program: "unlit",
        variant: &[("TINT", "0"), ("PATTERN", "checker")],
        overrides: &[("GAIN", 0.5)],
        color: [1.0, 0.8, 0.2, 1.0],
    },
    Tile {
        program: "lit",
        variant: &[("TINT", "0"), ("PATTERN", "flat"), ("BANDS", "1")],
        overrides: &[],
        color: [0.9, 0.9, 0.9, 1.0],
    },
    Tile {
        program: "lit",
        variant: &[("TINT", "1"), ("PATTERN", "stripes"), ("BANDS", "3")],
        overrides: &[],
        color: [1.0, 1.0, 0.6, 1.0],
    },
    Tile {
        program: "lit",
        variant: &[("TINT", "0"), ("PATTERN", "checker"), ("BANDS", "2")],
        overrides: &[("BIAS", 0.2)],
        color: [0.3, 0.3, 0.8, 1.0],
    },
    Tile {
        program: "toon",
        variant: &[("PATTERN", "flat"), ("BANDS", "2")],
        overrides: &[],
        color: [0.2, 0.9, 0.3, 1.0],
    },
    Tile {
        program: "toon",
        variant: &[("PATTERN", "stripes"), ("BANDS", "4")],
        overrides: &[],
        color: [0.9, 0.4, 0.9, 1.0],
    },
    Tile {
        program: "toon",
        variant: &[("PATTERN", "checker"), ("BANDS", "3")],
        overrides: &[("GAIN", 1.5), ("BIAS", 0.05)],
        color: [0.5, 0.5, 0.5, 1.0],
    },
];

/// The unit quad as two triangles: (x, y) per vertex, 0 to 1.
pub const QUAD: [f32; 12] = [0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0];

/// Tile `index`'s rectangle in clip space: x, y of its corner, width, height.
pub fn tile_rect(index: usize) -> [f32; 4] {
    let (column, row) = ((index % 3) as f32, (index / 3) as f32);
    let cell = 2.0 / 3.0;
    let margin = 0.04;
    [-1.0 + column * cell + margin, 1.0 - (row + 1.0) * cell + margin, cell - 2.0 * margin, cell - 2.0 * margin]
}

/// The pixel at the centre of tile `index`, in an image read top row first.
pub fn tile_centre(index: usize) -> (u32, u32) {
    let cell = SIZE / 3;
    ((index as u32 % 3) * cell + cell / 2, (index as u32 / 3) * cell + cell / 2)
}

/// A way to render the scene: a device and the load paths allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// A name for the PNG: `gl-source`, `gl-device-binary`, …
    pub name: &'static str,
    /// The device.
    pub kind: DeviceKind,
    /// The paths allowed, best first (all when empty: the library picks).
    pub paths: Vec<LoadPath>,
}

/// Every run the main job makes: each path on each device, then the
/// library's own choice on each device.
pub fn runs() -> Vec<Run> {
    vec![
        Run { name: "gl-source", kind: DeviceKind::OpenGl, paths: vec![LoadPath::Source] },
        Run { name: "gl-device-binary", kind: DeviceKind::OpenGl, paths: vec![LoadPath::DeviceBinary] },
        Run { name: "gl-spirv", kind: DeviceKind::OpenGl, paths: vec![LoadPath::CompatibleObject] },
        Run { name: "gl-best", kind: DeviceKind::OpenGl, paths: vec![] },
        Run { name: "vk-spirv", kind: DeviceKind::Vulkan, paths: vec![LoadPath::CompatibleObject] },
        Run { name: "vk-source", kind: DeviceKind::Vulkan, paths: vec![LoadPath::Source] },
        Run { name: "vk-best", kind: DeviceKind::Vulkan, paths: vec![] },
    ]
}

/// How one tile's program was loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileLoad {
    /// The variant's name.
    pub variant: String,
    /// The path taken.
    pub path: LoadPath,
    /// The target whose object it came from.
    pub target: String,
    /// Why.
    pub reason: String,
}

/// Why the scene could not render.
#[derive(Debug, thiserror::Error)]
pub enum SampleError {
    /// No suitable plugin was found.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// A plugin call failed.
    #[error("{0}")]
    Plugin(#[from] XrError),
    /// The library could not load a program.
    #[error(transparent)]
    Library(#[from] LibraryError),
    /// A file could not be written.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Renders the scene on a device of `run.kind`, loading every tile's
/// program from `library` through `run.paths`.
pub fn render(registry: &Registry, library: &ShaderLibrary, run: &Run) -> Result<(Image, Vec<TileLoad>), SampleError> {
    let mut device = registry.open_device(run.kind, &DeviceOptions::default())?;
    let mut loader = DeviceLoader::attach(registry, &device, library)?;
    let result = draw(&mut device, &mut loader, library, run);
    // The loader's build systems go before the device.
    drop(loader);
    result
}

fn draw(
    device: &mut xr_device::DeviceBox,
    loader: &mut DeviceLoader,
    library: &ShaderLibrary,
    run: &Run,
) -> Result<(Image, Vec<TileLoad>), SampleError> {
    let target = device.create_render_target(SIZE, SIZE).into_result()?;
    let layout =
        VertexLayout { stride: 2, attributes: vec![VertexAttribute { location: 0, components: 2, offset: 0 }].into() };
    let quad = device.create_vertex_buffer(QUAD.as_slice().into(), &layout).into_result()?;
    device.clear(target, &CLEAR).into_result()?;
    let mut loads = Vec::new();
    let mut programs = Vec::new();
    for (index, tile) in SCENE.iter().enumerate() {
        let request = LoadRequest {
            program: tile.program,
            variant: tile.variant.to_vec(),
            overrides: tile.overrides.to_vec(),
            paths: run.paths.clone(),
        };
        let mut loaded = loader.load(library, &request)?;
        let rect = loaded.built.constants.handle("u_rect")?;
        loaded.built.constants.set_vector(rect, &tile_rect(index))?;
        let color = loaded.built.constants.handle("u_color")?;
        loaded.built.constants.set_vector(color, &tile.color)?;
        let call =
            DrawCall { target, program: loaded.built.program, vertex_buffer: quad, first_vertex: 0, vertex_count: 6 };
        device.draw(&call).into_result()?;
        loads.push(TileLoad {
            variant: loaded.variant,
            path: loaded.path,
            target: loaded.target,
            reason: loaded.reason,
        });
        // Programs live until the image is read back.
        programs.push(loaded.built);
    }
    let image = device.read_pixels(target).into_result()?;
    drop(programs);
    Ok((image, loads))
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
