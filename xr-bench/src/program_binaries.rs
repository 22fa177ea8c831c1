//! Compile + link from source vs `glProgramBinary` from the store, for N
//! distinct programs on one device, each measured to "ready" (linked, link
//! status checked, constant table read) and to "first draw done" (one
//! triangle drawn and read back). Every scenario runs in its own process so
//! that Mesa's in-memory caches start empty; `MESA_SHADER_CACHE_DIR` points
//! at a directory that is either new (cold) or left by an earlier run (warm).

use crate::child::{ChildArgs, fresh_work_dir, measured, mesa_cache};
use anyhow::bail;
use serde::{Deserialize, Serialize};
use std::{
    path::{Path, PathBuf},
    time::Instant,
};
use xr_device::{DeviceKind, DeviceOptions, DrawCall, VertexAttribute, VertexLayout};
use xr_host::{AttachedDevice, Registry};
use xr_plugin_kit::ProgramCache;
use xr_sourcebuild::{Availability, BuildOptions, LoadPath, ProgramDesc, ShaderStage, SourceDesc};
use xr_store::Store;

/// Arguments of `xr-bench gl-program-binaries`.
#[derive(clap::Args)]
pub struct Args {
    /// Number of distinct programs.
    #[arg(long, default_value_t = 100)]
    programs: usize,
    /// Work directory (stores and Mesa caches); a temporary one by default.
    #[arg(long)]
    work_dir: Option<PathBuf>,
    #[command(flatten)]
    child: ChildArgs<Mode>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum Mode {
    /// Compile and link from source; nothing stored.
    Source,
    /// Build from source and store binaries (not measured).
    Prepare,
    /// Load every program from the store.
    Binary,
}

#[derive(Serialize, Deserialize)]
struct Timings {
    ready_ms: Vec<f64>,
    first_draw_ms: Vec<f64>,
}

const VERTEX: &str = "#version 450 core
layout(location = 0) in vec2 p;
out vec2 v_uv;
void main() { v_uv = p * 0.5 + 0.5; gl_Position = vec4(p, 0.0, 1.0); }
";

/// A fragment shader with enough work to be a real compile; `VARIANT`
/// makes each program distinct.
const FRAGMENT: &str = "#version 450 core
in vec2 v_uv;
uniform vec4 u_tint = vec4(1.0);
uniform float u_time;
out vec4 c;
float hash(vec2 q) { return fract(sin(dot(q, vec2(12.9898, 78.233) + float(VARIANT))) * 43758.5453); }
float noise(vec2 q) {
    vec2 i = floor(q), f = fract(q);
    vec2 u = f * f * (3.0 - 2.0 * f);
    return mix(mix(hash(i), hash(i + vec2(1, 0)), u.x), mix(hash(i + vec2(0, 1)), hash(i + vec2(1, 1)), u.x), u.y);
}
vec3 light(vec3 n, vec3 l, vec3 v) {
    vec3 h = normalize(l + v);
    return vec3(0.1) + max(dot(n, l), 0.0) * vec3(0.8) + pow(max(dot(n, h), 0.0), 8.0 + float(VARIANT % 7)) * vec3(0.5);
}
void main() {
    float f = 0.0, a = 0.5;
    vec2 q = v_uv * (4.0 + float(VARIANT % 5));
    for (int i = 0; i < 5; i++) { f += a * noise(q + u_time); q *= 2.03; a *= 0.5; }
    vec3 n = normalize(vec3(dFdx(f), dFdy(f), 0.05));
    c = vec4(light(n, normalize(vec3(0.3, 0.5, 1.0)), vec3(0, 0, 1)) * f, 1.0) * u_tint;
}
";

fn program(index: usize) -> ProgramDesc {
    ProgramDesc::new(
        format!("bench-{index}"),
        [
            SourceDesc::new("glsl", ShaderStage::Vertex, "bench.vert", VERTEX),
            SourceDesc::new("glsl", ShaderStage::Fragment, "bench.frag", FRAGMENT)
                .with_define("VARIANT", index.to_string()),
        ],
    )
}

/// Runs the benchmark: children for each scenario, then the table.
pub fn run(args: Args) -> anyhow::Result<()> {
    if args.child.run_if_child(|mode, store| run_child(mode, args.programs, store))? {
        return Ok(());
    }
    let work = fresh_work_dir(args.work_dir, "xr-bench")?;
    let store = work.join("store");
    let n = args.programs;
    eprintln!("xr-bench: {n} programs, work directory {}", work.display());

    // Source, then source again with the Mesa cache that run left (warm).
    let source_cold = child(Mode::Source, n, &work.join("empty-store"), &work.join("mesa-source"))?;
    let source_warm = child(Mode::Source, n, &work.join("empty-store"), &work.join("mesa-source"))?;
    // Binaries are stored by a run whose Mesa cache is then thrown away.
    child(Mode::Prepare, n, &store, &work.join("mesa-prepare"))?;
    let binary_cold = child(Mode::Binary, n, &store, &work.join("mesa-binary"))?;
    let binary_warm = child(Mode::Binary, n, &store, &work.join("mesa-binary"))?;

    let rows = [
        ("compile + link from source", "cold", &source_cold),
        ("compile + link from source", "warm", &source_warm),
        ("glProgramBinary from the store", "cold", &binary_cold),
        ("glProgramBinary from the store", "warm", &binary_warm),
    ];
    let base_ready = total(&source_cold.ready_ms);
    let base_draw = total(&source_cold.first_draw_ms);
    println!(
        "| path | Mesa cache | ready: total ms | ready: median ms | first draw: total ms | first draw: median ms | vs source cold (ready / first draw) |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (path, cache, t) in rows {
        println!(
            "| {path} | {cache} | {:.1} | {:.3} | {:.1} | {:.3} | {:.2}x / {:.2}x |",
            total(&t.ready_ms),
            median(&t.ready_ms),
            total(&t.first_draw_ms),
            median(&t.first_draw_ms),
            base_ready / total(&t.ready_ms),
            base_draw / total(&t.first_draw_ms),
        );
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

fn child(mode: Mode, programs: usize, store: &Path, mesa: &Path) -> anyhow::Result<Timings> {
    let mut command = ChildArgs::command(&["gl-program-binaries", "--programs", &programs.to_string()], &mode, store)?;
    measured(mesa_cache(&mut command, mesa), &format!("{mode:?} run"))
}

fn run_child(mode: Mode, programs: usize, store: &Path) -> anyhow::Result<Timings> {
    let registry = Registry::discover();
    let AttachedDevice { mut device, capabilities, mut compiler } =
        registry.open_attached(DeviceKind::OPENGL, Availability::OFFLINE_COMPILE, "glsl", &DeviceOptions::default())?;
    let cache = ProgramCache::new(Store::open(store)?, &capabilities);
    let target = device.create_render_target(64, 64).into_result()?;
    let layout =
        VertexLayout { stride: 2, attributes: vec![VertexAttribute { location: 0, components: 2, offset: 0 }].into() };
    let triangle = [-1.0f32, -1.0, 3.0, -1.0, -1.0, 3.0];
    let vertices = device.create_vertex_buffer(triangle.as_slice().into(), &layout).into_result()?;

    let mut timings = Timings { ready_ms: Vec::new(), first_draw_ms: Vec::new() };
    let mut keep = Vec::new();
    for index in 0..programs {
        let desc = program(index);
        let start = Instant::now();
        let built = match mode {
            Mode::Source => compiler.build_program(&desc, &BuildOptions::default()).into_result()?,
            Mode::Prepare | Mode::Binary => {
                let (built, report) = cache.load(&mut compiler, &desc, BuildOptions::default())?;
                let expected = if mode == Mode::Binary { LoadPath::DeviceBinary } else { LoadPath::Source };
                if report.path != expected {
                    bail!("program {index} took the {} path: {}", report.path, report.reason);
                }
                built
            }
        };
        let ready = start.elapsed();
        let draw = DrawCall::triangles(target, built.program, vertices, 3);
        device.draw(&draw).into_result()?;
        device.read_pixels(target).into_result()?;
        let first_draw = start.elapsed();
        timings.ready_ms.push(ready.as_secs_f64() * 1e3);
        timings.first_draw_ms.push(first_draw.as_secs_f64() * 1e3);
        keep.push(built);
    }
    Ok(timings)
}

fn total(values: &[f64]) -> f64 {
    values.iter().sum()
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
}
