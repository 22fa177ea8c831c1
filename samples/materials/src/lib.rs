//! The materials sample as a library, so that tests render exactly what the
//! sample renders: an engine that ships a store built by `xr build` and
//! loads its programs at start-up through [`xr_library`].
//!
//! The scene is a 3 × 3 grid of tiles: one row per program (`unlit`,
//! `lit`, `toon`), each tile a variant of it, some with overrides set at the
//! load call. `unlit` has a Slang twin, [`SLANG_TWIN`], which draws its row
//! with the same pixels on every path that loads it ([`render_row`]).

use xr_device::{
    DeviceBox, DeviceKind, DeviceOptions, DrawCall, Image, RenderTargetId, VertexAttribute, VertexBufferId,
    VertexLayout, XrError,
};
use xr_host::{Registry, RegistryError};
use xr_library::{DeviceLoader, LibraryError, LoadPath, LoadRequest, Loaded, ShaderLibrary};
use xr_sourcebuild::ConstantTableExt;

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

/// The Slang twin of the `unlit` program (`shaders/unlit.slang`): the same
/// variants, overrides and constants, and the same pixels.
pub const SLANG_TWIN: (&str, &str) = ("unlit", "unlit-slang");

/// Whether `run` loads the Slang twin: its targets are SPIR-V only, so the
/// compatible-object path, or the library's choice among all paths.
pub fn twin_loads_on(run: &Run) -> bool {
    run.paths.is_empty() || run.paths.contains(&LoadPath::CompatibleObject)
}

/// The largest difference of any channel of any pixel of `a` and `b`
/// (255 where their sizes differ).
pub fn max_difference(a: &Image, b: &Image) -> u8 {
    if (a.width, a.height) != (b.width, b.height) {
        return u8::MAX;
    }
    a.rgba.iter().zip(b.rgba.iter()).map(|(x, y)| x.abs_diff(*y)).max().unwrap_or(0)
}

/// Renders only the tiles of `program`'s row, each drawn by `drawn_by`
/// instead (the same variants, overrides and constants): a program's row
/// and its twin's, to compare.
pub fn render_row(
    registry: &Registry,
    library: &ShaderLibrary,
    run: &Run,
    program: &str,
    drawn_by: &str,
) -> Result<(Image, Vec<TileLoad>), SampleError> {
    let mut device = registry.open_device(run.kind, &DeviceOptions::default())?;
    let mut loader = DeviceLoader::attach(registry, &device, library)?;
    let tiles: Vec<(usize, &str)> =
        (0..SCENE.len()).filter(|i| SCENE[*i].program == program).map(|i| (i, drawn_by)).collect();
    let result = Scene::load_tiles(&mut device, &mut loader, library, &run.paths, SIZE, &tiles).and_then(|scene| {
        scene.draw(&mut device)?;
        let image = device.read_pixels(scene.target()).into_result()?;
        Ok((image, scene.loads()))
    });
    drop(loader);
    result
}

/// Renders the scene on a device of `run.kind`, loading every tile's
/// program from `library` through `run.paths`.
pub fn render(registry: &Registry, library: &ShaderLibrary, run: &Run) -> Result<(Image, Vec<TileLoad>), SampleError> {
    let mut device = registry.open_device(run.kind, &DeviceOptions::default())?;
    let mut loader = DeviceLoader::attach(registry, &device, library)?;
    let result = Scene::load(&mut device, &mut loader, library, &run.paths, SIZE).and_then(|scene| {
        scene.draw(&mut device)?;
        let image = device.read_pixels(scene.target()).into_result()?;
        Ok((image, scene.loads()))
    });
    // The scene's programs and the loader's build systems go before the device.
    drop(loader);
    result
}

/// The scene on one device: a render target, the quad, and every tile's
/// program loaded from the library. Drop it before the [`DeviceLoader`]
/// that loaded it, and that before the device.
pub struct Scene {
    target: RenderTargetId,
    quad: VertexBufferId,
    paths: Vec<LoadPath>,
    tiles: Vec<Loaded>,
}

impl Scene {
    /// Loads every tile's program through `paths` (all when empty) and
    /// makes a `size` × `size` target to draw into.
    pub fn load(
        device: &mut DeviceBox,
        loader: &mut DeviceLoader,
        library: &ShaderLibrary,
        paths: &[LoadPath],
        size: u32,
    ) -> Result<Self, SampleError> {
        let tiles: Vec<(usize, &str)> = SCENE.iter().enumerate().map(|(i, t)| (i, t.program)).collect();
        Self::load_tiles(device, loader, library, paths, size, &tiles)
    }

    /// Loads the tiles `tiles` names, each as (index in [`SCENE`], the
    /// program that draws it), like [`Scene::load`].
    pub fn load_tiles(
        device: &mut DeviceBox,
        loader: &mut DeviceLoader,
        library: &ShaderLibrary,
        paths: &[LoadPath],
        size: u32,
        tiles: &[(usize, &str)],
    ) -> Result<Self, SampleError> {
        let target = device.create_render_target(size, size).into_result()?;
        let layout = VertexLayout {
            stride: 2,
            attributes: vec![VertexAttribute { location: 0, components: 2, offset: 0 }].into(),
        };
        let quad = device.create_vertex_buffer(QUAD.as_slice().into(), &layout).into_result()?;
        let mut loaded = Vec::new();
        for (index, program) in tiles {
            loaded.push(load_tile(loader, library, paths, *index, program)?);
        }
        Ok(Self { target, quad, paths: paths.to_vec(), tiles: loaded })
    }

    /// Clears the target and draws every tile into it.
    pub fn draw(&self, device: &mut DeviceBox) -> Result<(), SampleError> {
        device.clear(self.target, &CLEAR).into_result()?;
        for tile in &self.tiles {
            let call = DrawCall::triangles(self.target, tile.built.program, self.quad, 6);
            device.draw(&call).into_result()?;
        }
        Ok(())
    }

    /// The target the scene is drawn into.
    pub fn target(&self) -> RenderTargetId {
        self.target
    }

    /// How each tile's program was loaded.
    pub fn loads(&self) -> Vec<TileLoad> {
        self.tiles
            .iter()
            .map(|t| TileLoad {
                variant: t.variant.clone(),
                path: t.path,
                target: t.target.clone(),
                reason: t.reason.clone(),
            })
            .collect()
    }

    /// Loads the tiles of `program` again (after a hot reload rebuilt it)
    /// and swaps them in; a tile whose load fails keeps its program, and
    /// the first error is returned. The number of tiles swapped otherwise.
    pub fn reload(
        &mut self,
        loader: &mut DeviceLoader,
        library: &ShaderLibrary,
        program: &str,
    ) -> Result<usize, SampleError> {
        let mut swapped = 0;
        for index in (0..SCENE.len()).filter(|i| SCENE[*i].program == program) {
            let loaded = load_tile(loader, library, &self.paths, index, program)?;
            // The old program is dropped here, between frames.
            self.tiles[index] = loaded;
            swapped += 1;
        }
        Ok(swapped)
    }
}

/// Loads tile `index` drawn by `program` and sets its constants.
fn load_tile(
    loader: &mut DeviceLoader,
    library: &ShaderLibrary,
    paths: &[LoadPath],
    index: usize,
    program: &str,
) -> Result<Loaded, SampleError> {
    let tile = &SCENE[index];
    let request = LoadRequest {
        program,
        variant: tile.variant.to_vec(),
        overrides: tile.overrides.to_vec(),
        paths: paths.to_vec(),
    };
    let mut loaded = loader.load(library, &request)?;
    let rect = loaded.built.constants.handle("u_rect")?;
    loaded.built.constants.set_vector(rect, &tile_rect(index))?;
    let color = loaded.built.constants.handle("u_color")?;
    loaded.built.constants.set_vector(color, &tile.color)?;
    Ok(loaded)
}

/// The triangle sample's PNG writer.
pub use triangle::write_png;
