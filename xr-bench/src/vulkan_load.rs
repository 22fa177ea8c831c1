//! The Vulkan load paths, side by side in one run: pipelines
//! (`XR_VK_SHADER_OBJECTS=off`) against shader objects, and SPIR-V with a
//! warm pipeline cache against the driver's stored shader binaries.
//!
//! Every scenario runs in its own process on its own copy of the materials
//! sample's store (the one its build script built), so that no in-memory
//! cache carries over; `MESA_SHADER_CACHE_DIR` is a new directory (cold) or
//! the one an earlier scenario of the same path left (warm).
//!
//! - **first draw**: the scene's programs loaded from SPIR-V, then drawn
//!   into five targets of attachment formats they have not met; the wall
//!   time of each of those draws (the whole scene into one target).
//! - **load**: the scene's programs loaded (to "ready") from SPIR-V or from
//!   shader binaries, cold and warm.
//! - **frames**: 300 frames of the scene, each into the next of five
//!   targets of different formats (a renderer whose passes change targets);
//!   the time of each frame.

use crate::child::{ChildArgs, StoreCopyArgs, fresh_work_dir, measured, vulkan_environment};
use anyhow::Context;
use materials::frames::percentile;
use serde::{Deserialize, Serialize};
use std::{path::Path, time::Instant};
use xr_device::{DeviceKind, DeviceOptions, RenderTargetDesc, RenderTargetId};
use xr_host::Registry;
use xr_library::{DeviceLoader, LoadPath, ShaderLibrary};

/// Arguments of `xr-bench vulkan-load`.
#[derive(clap::Args)]
pub struct Args {
    /// Frames of the frame-time scenario.
    #[arg(long, default_value_t = 300)]
    frames: usize,
    #[command(flatten)]
    copies: StoreCopyArgs<Scenario>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Scenario {
    /// Load from SPIR-V, then time the first draw into each new target.
    FirstDraw,
    /// Load from SPIR-V (writing shader binaries where there are shader objects).
    LoadSpirv,
    /// Load from the stored shader binaries.
    LoadBinary,
    /// Frames into targets that change.
    Frames,
}

/// What a child measured (milliseconds).
#[derive(Serialize, Deserialize, Default)]
struct Timings {
    /// Loading the scene's programs, to ready.
    load_ms: f64,
    /// Each first draw into a target of new formats, or each frame.
    draws_ms: Vec<f64>,
    /// Pipelines and shader objects made after loading.
    made_after_load: (u64, u64),
}

/// Runs the benchmark: the scenarios in children, then the tables.
pub fn run(args: Args) -> anyhow::Result<()> {
    if args.copies.child.run_if_child(|scenario, store| run_child(scenario, store, args.frames))? {
        return Ok(());
    }
    let work = fresh_work_dir(args.copies.work_dir, "xr-vk-bench")?;
    eprintln!("xr-bench: the materials scene on Vulkan, work directory {}", work.display());
    let frames = args.frames;
    let run = |scenario, store: &str, mesa: &str, pipelines: bool| {
        let store = work.join(store);
        if !store.exists() {
            copy_dir(Path::new(materials::STORE), &store)?;
        }
        child(scenario, &store, &work.join(mesa), pipelines, frames)
    };

    // (a) the first draw into new formats.
    let first_pipelines = run(Scenario::FirstDraw, "store-a-pipelines", "mesa-a-pipelines", true)?;
    let first_objects = run(Scenario::FirstDraw, "store-a-objects", "mesa-a-objects", false)?;
    // Again with the Mesa cache the first runs left: what the driver's own
    // compile at a draw (llvmpipe's code for each new format) costs.
    let first_pipelines_warm = run(Scenario::FirstDraw, "store-a-pipelines", "mesa-a-pipelines", true)?;
    let first_objects_warm = run(Scenario::FirstDraw, "store-a-objects", "mesa-a-objects", false)?;
    // (b) loading: SPIR-V through pipelines (the second run has the pipeline
    // cache the first stored, and Mesa's), against shader objects from
    // SPIR-V (storing binaries) and then from those binaries.
    let spirv_cold = run(Scenario::LoadSpirv, "store-b-pipelines", "mesa-b-pipelines", true)?;
    let spirv_warm = run(Scenario::LoadSpirv, "store-b-pipelines", "mesa-b-pipelines", true)?;
    let objects_cold = run(Scenario::LoadSpirv, "store-b-objects", "mesa-b-objects", false)?;
    let binary_mesa_cold = run(Scenario::LoadBinary, "store-b-objects", "mesa-b-binary", false)?;
    let binary_warm = run(Scenario::LoadBinary, "store-b-objects", "mesa-b-objects", false)?;
    // (c) frames into changing targets.
    let frames_pipelines = run(Scenario::Frames, "store-c-pipelines", "mesa-c-pipelines", true)?;
    let frames_objects = run(Scenario::Frames, "store-c-objects", "mesa-c-objects", false)?;

    println!("(a) first draw of the scene into a target of new formats (5 targets)");
    println!("| path | Mesa cache | total ms | median ms | max ms | made by the draws (pipelines, shader objects) |");
    println!("|---|---|---|---|---|---|");
    for (path, mesa, t) in [
        ("pipelines", "cold", &first_pipelines),
        ("shader objects", "cold", &first_objects),
        ("pipelines", "warm", &first_pipelines_warm),
        ("shader objects", "warm", &first_objects_warm),
    ] {
        println!(
            "| {path} | {mesa} | {:.1} | {:.2} | {:.2} | {:?} |",
            total(&t.draws_ms),
            percentile(&t.draws_ms, 0.5),
            percentile(&t.draws_ms, 1.0),
            t.made_after_load
        );
    }
    println!(
        "ratio (pipelines / shader objects, total): {:.2}x cold, {:.2}x warm",
        total(&first_pipelines.draws_ms) / total(&first_objects.draws_ms),
        total(&first_pipelines_warm.draws_ms) / total(&first_objects_warm.draws_ms)
    );
    println!();
    println!("(b) loading the scene's Vulkan programs, to ready");
    println!("| path | store | Mesa cache | load ms | vs SPIR-V with a warm pipeline cache |");
    println!("|---|---|---|---|---|");
    let base = spirv_warm.load_ms;
    for (path, store, mesa, t) in [
        ("SPIR-V, pipelines", "no pipeline cache", "cold", &spirv_cold),
        ("SPIR-V, pipelines", "warm pipeline cache", "warm", &spirv_warm),
        ("SPIR-V, shader objects", "binaries written", "cold", &objects_cold),
        ("shader binaries", "binaries", "cold", &binary_mesa_cold),
        ("shader binaries", "binaries", "warm", &binary_warm),
    ] {
        println!("| {path} | {store} | {mesa} | {:.1} | {:.2}x |", t.load_ms, base / t.load_ms);
    }
    println!();
    println!("(c) {frames} frames, each into the next of 5 targets of different formats");
    println!("| path | median ms | p99 ms | max ms | total ms |");
    println!("|---|---|---|---|---|");
    for (path, t) in [("pipelines", &frames_pipelines), ("shader objects", &frames_objects)] {
        println!(
            "| {path} | {:.2} | {:.2} | {:.2} | {:.1} |",
            percentile(&t.draws_ms, 0.5),
            percentile(&t.draws_ms, 0.99),
            percentile(&t.draws_ms, 1.0),
            total(&t.draws_ms)
        );
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

fn child(scenario: Scenario, store: &Path, mesa: &Path, pipelines: bool, frames: usize) -> anyhow::Result<Timings> {
    let mut command = ChildArgs::command(&["vulkan-load", "--frames", &frames.to_string()], &scenario, store)?;
    measured(vulkan_environment(&mut command, mesa, pipelines), &format!("{scenario:?} run"))
}

/// The device's (pipelines, shader objects) counts.
fn made(device: &xr_device::DeviceBox) -> anyhow::Result<(u64, u64)> {
    let counters = device.counters().into_result()?;
    let count = |name: &str| counters.iter().find(|c| c.name.as_str() == name).map_or(0, |c| c.value);
    Ok((count("pipelines"), count("shader objects")))
}

fn run_child(scenario: Scenario, store: &Path, frames: usize) -> anyhow::Result<Timings> {
    let registry = Registry::discover();
    let mut device = registry.open_device(DeviceKind::VULKAN, &DeviceOptions::default())?;
    let library = ShaderLibrary::open(store)?;
    let mut loader = DeviceLoader::attach(&registry, &device, &library)?;
    let path = if scenario == Scenario::LoadBinary { LoadPath::DeviceBinary } else { LoadPath::CompatibleObject };
    let start = Instant::now();
    let scene = materials::Scene::load(&mut device, &mut loader, &library, &[path], 64)
        .map_err(|e| anyhow::anyhow!("loading the scene: {e}"))?;
    let load_ms = start.elapsed().as_secs_f64() * 1e3;
    let before = made(&device)?;
    let targets: Vec<RenderTargetId> = materials::frames::target_shapes()
        .into_iter()
        .map(|(colors, depth)| {
            let desc = RenderTargetDesc { width: 64, height: 64, colors: colors.into(), depth };
            device.create_render_target_with(&desc).into_result()
        })
        .collect::<Result<_, _>>()?;
    let mut draws_ms = Vec::new();
    let count = match scenario {
        Scenario::FirstDraw => targets.len(),
        Scenario::Frames => frames,
        Scenario::LoadSpirv | Scenario::LoadBinary => 0,
    };
    for i in 0..count {
        let start = Instant::now();
        scene.draw_into(&mut device, targets[i % targets.len()]).map_err(|e| anyhow::anyhow!("drawing: {e}"))?;
        draws_ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let after = made(&device)?;
    drop(scene);
    drop(loader);
    Ok(Timings { load_ms, draws_ms, made_after_load: (after.0 - before.0, after.1 - before.1) })
}

/// Copies the directory `from` to `to`, recursively.
pub(crate) fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()))?;
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

fn total(values: &[f64]) -> f64 {
    values.iter().sum()
}
