//! The GL 4.1+ path as a library: each stage is built as its own
//! separable program, loaded from the store as a program binary where the
//! driver accepts one, and stages are mixed and matched in program
//! pipelines — 2 vertex × 3 fragment stages give 6 pipelines from 5 stored
//! binaries. Stage constants are set both ways: `glProgramUniform*` on the
//! stage's program, and the classic `glActiveShaderProgram` + `glUniform*`.

use std::path::{Path, PathBuf};
use triangle::SampleError;
use xr_device::{DeviceKind, DeviceOptions, DrawCall, Image, VertexAttribute, VertexLayout, XrError};
use xr_host::{AttachedDevice, Registry};
use xr_plugin_kit::{LoadReport, ProgramCache};
use xr_sourcebuild::{
    Availability, BuildOptions, BuiltProgram, ConstantTableExt, ProgramDesc, ShaderStage, SourceDesc,
};
use xr_store::Store;

/// Size of one tile of the grid.
pub const TILE: u32 = 64;

/// The vertex stages: (file, name).
pub const VERTEX_STAGES: [&str; 2] = ["up.vert", "down.vert"];

/// The fragment stages.
pub const FRAGMENT_STAGES: [&str; 3] = ["solid.frag", "classic.frag", "gradient.frag"];

/// `u_color` of `solid.frag`, set with glProgramUniform.
pub const SOLID: [f32; 4] = [1.0, 0.0, 0.0, 1.0];

/// `u_tint` of `classic.frag`, set through glActiveShaderProgram + glUniform.
pub const TINT: [f32; 4] = [0.0, 1.0, 0.0, 1.0];

/// The rendered grid and how each stage program was loaded.
pub struct Rendered {
    /// `VERTEX_STAGES.len()` rows × `FRAGMENT_STAGES.len()` columns of tiles.
    pub image: Image,
    /// For each stage program, in `VERTEX_STAGES` then `FRAGMENT_STAGES` order.
    pub loads: Vec<(String, LoadReport)>,
}

/// The shader directory shipped with the sample.
pub fn default_shader_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders")
}

/// Renders every vertex × fragment pipeline into one grid image, loading
/// stage programs through a program cache in `store`.
pub fn render(registry: &Registry, shader_dir: &Path, store: &Path) -> Result<Rendered, SampleError> {
    let AttachedDevice { mut device, capabilities, mut compiler } =
        registry.open_attached(DeviceKind::OPENGL, Availability::RUNTIME_COMPILE, "glsl", &DeviceOptions::default())?;
    let store = Store::open(store).map_err(|e| XrError::new(xr_device::ErrorKind::Io, e.to_string()))?;
    let cache = ProgramCache::new(store, &capabilities);

    let separable = BuildOptions { separable: true, retrievable: false };
    let mut loads = Vec::new();
    let mut load = |file: &str, stage: ShaderStage| -> Result<BuiltProgram, SampleError> {
        let source = SourceDesc::read("glsl", stage, &shader_dir.join(file))?;
        let (built, report) = cache.load(&mut compiler, &ProgramDesc::new(file, [source]), separable)?;
        loads.push((file.to_owned(), report));
        Ok(built)
    };
    let mut vertex: Vec<BuiltProgram> =
        VERTEX_STAGES.iter().map(|f| load(f, ShaderStage::Vertex)).collect::<Result<_, _>>()?;
    let mut fragment: Vec<BuiltProgram> =
        FRAGMENT_STAGES.iter().map(|f| load(f, ShaderStage::Fragment)).collect::<Result<_, _>>()?;

    for stage in &mut vertex {
        let scale = stage.constants.handle("u_scale")?;
        stage.constants.set_float(scale, 1.0)?;
    }
    let color = fragment[0].constants.handle("u_color")?;
    fragment[0].constants.set_vector(color, &SOLID)?;

    let layout =
        VertexLayout { stride: 2, attributes: vec![VertexAttribute { location: 0, components: 2, offset: 0 }].into() };
    let vertices = device.create_vertex_buffer(triangle::VERTICES.as_slice().into(), &layout).into_result()?;
    let columns = FRAGMENT_STAGES.len() as u32;
    let rows = VERTEX_STAGES.len() as u32;
    let mut grid = Image {
        width: TILE * columns,
        height: TILE * rows,
        rgba: vec![0; (TILE * TILE * columns * rows * 4) as usize].into(),
    };
    for (row, v) in vertex.iter().enumerate() {
        for (column, f) in fragment.iter_mut().enumerate() {
            let pipeline = compiler.create_pipeline([v.program, f.program].as_slice().into()).into_result()?;
            if column == 1 {
                let tint = f.constants.handle("u_tint")?;
                f.constants.through_pipeline(pipeline).set_vector(tint, &TINT)?;
            }
            let target = device.create_render_target(TILE, TILE).into_result()?;
            device.clear(target, &[0.0, 0.0, 0.0, 1.0]).into_result()?;
            let draw = DrawCall::triangles(target, pipeline, vertices, 3);
            device.draw(&draw).into_result()?;
            let tile = device.read_pixels(target).into_result()?;
            blit(&mut grid, &tile, column as u32 * TILE, row as u32 * TILE);
        }
    }
    Ok(Rendered { image: grid, loads })
}

fn blit(grid: &mut Image, tile: &Image, x: u32, y: u32) {
    let row_bytes = (tile.width * 4) as usize;
    for line in 0..tile.height {
        let from = (line * tile.width * 4) as usize;
        let to = (((y + line) * grid.width + x) * 4) as usize;
        grid.rgba[to..to + row_bytes].copy_from_slice(&tile.rgba[from..from + row_bytes]);
    }
}
