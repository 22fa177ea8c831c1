//! Program load and first draw on wgpu's Vulkan back end: the stored
//! SPIR-V passed to the driver with the pipeline cache a launch before
//! stored, against the same without it, against WGSL built through naga
//! with no cache, and against XR's own Vulkan path (`vk-spirv`), side by
//! side in one run.
//!
//! The store is the materials sample's manifest with WGSL among the scene
//! programs' targets (`materials::wgsl_manifest`), built once by the `xr`
//! beside this program. Every scenario runs in its own process on its own
//! copy of it, so that no in-memory cache carries over. Mesa's own
//! shader cache (`MESA_SHADER_CACHE_DIR`) is a new directory (cold) unless
//! a row says warm: a second launch on a real machine has both.
//!
//! Measured: the scene's 9 programs loaded (to ready), then drawn once
//! into an RGBA8 target and read back (wgpu makes its pipelines at the
//! first draw; XR's Vulkan path at load).

use crate::child::{ChildArgs, StoreCopyArgs, fresh_work_dir, mesa_cache};
use crate::vulkan_load::copy_dir;
use anyhow::{Context, bail};
use materials::frames::percentile;
use serde::{Deserialize, Serialize};
use std::{
    path::{Path, PathBuf},
    process::Command,
    time::Instant,
};
use xr_device::{DeviceKind, DeviceOptions};
use xr_host::Registry;
use xr_library::{DeviceLoader, LoadPath, ShaderLibrary};

/// Arguments of `xr-bench wgpu-load`.
#[derive(clap::Args)]
pub struct Args {
    /// Launches of each scenario; the tables give the median.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    #[command(flatten)]
    copies: StoreCopyArgs<Scenario>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Scenario {
    /// wgpu, the stored SPIR-V (passed through on Vulkan).
    WgpuSpirv,
    /// wgpu, the stored WGSL through naga.
    WgpuWgsl,
    /// XR's Vulkan device, the stored SPIR-V.
    VkSpirv,
}

/// What one launch measured.
#[derive(Serialize, Deserialize, Default, Clone)]
struct Launch {
    /// The scene's programs loaded, to ready (ms).
    load_ms: f64,
    /// The first draw of the scene and its read-back (ms).
    first_draw_ms: f64,
    /// Bytes of stored pipeline cache the launch started from.
    cache_bytes: u64,
}

/// Runs the benchmark: the scenarios in children, then the table.
pub fn run(args: Args) -> anyhow::Result<()> {
    if args.copies.child.run_if_child(run_child)? {
        return Ok(());
    }
    let work = fresh_work_dir(args.copies.work_dir, "xr-wgpu-bench")?;
    eprintln!(
        "xr-bench: the materials scene on wgpu, {} launches each, work directory {}",
        args.rounds,
        work.display()
    );
    let built = build_store(&work)?;
    // Each row: (what, pipeline cache, Mesa cache, launches).
    let mut rows: Vec<(&str, &str, &str, Vec<Launch>)> = [
        ("wgpu, WGSL through naga", "none", "cold"),
        ("wgpu, SPIR-V passed through", "none", "cold"),
        ("wgpu, SPIR-V passed through", "stored", "cold"),
        ("wgpu, SPIR-V passed through", "stored", "warm"),
        ("XR Vulkan, vk-spirv", "none", "cold"),
        ("XR Vulkan, vk-spirv", "XR's, stored", "warm"),
    ]
    .into_iter()
    .map(|(what, cache, mesa)| (what, cache, mesa, Vec::new()))
    .collect();
    for round in 0..args.rounds {
        let dir = work.join(format!("round-{round}"));
        let fresh = |name: &str| -> anyhow::Result<PathBuf> {
            let store = dir.join(name);
            copy_dir(&built, &store)?;
            Ok(store)
        };
        let mesa = |name: &str| dir.join(name);
        let wgsl = fresh("store-wgsl")?;
        let spirv = fresh("store-spirv")?;
        let vulkan = fresh("store-vulkan")?;
        let launches = [
            child(Scenario::WgpuWgsl, &wgsl, &mesa("mesa-wgsl"))?,
            // This launch stores the pipeline cache the next two start from.
            child(Scenario::WgpuSpirv, &spirv, &mesa("mesa-spirv-first"))?,
            child(Scenario::WgpuSpirv, &spirv, &mesa("mesa-spirv-cold"))?,
            child(Scenario::WgpuSpirv, &spirv, &mesa("mesa-spirv-first"))?,
            child(Scenario::VkSpirv, &vulkan, &mesa("mesa-vulkan"))?,
            child(Scenario::VkSpirv, &vulkan, &mesa("mesa-vulkan"))?,
        ];
        for (row, launch) in rows.iter_mut().zip(launches) {
            row.3.push(launch);
        }
    }
    println!("the materials scene (9 programs): load, then the first draw, median of {} launches", args.rounds);
    println!(
        "| path | pipeline cache | Mesa cache | cache bytes | load ms | first draw ms | total ms | vs WGSL, no cache |"
    );
    println!("|---|---|---|---:|---:|---:|---:|---:|");
    let median =
        |launches: &[Launch], of: fn(&Launch) -> f64| percentile(&launches.iter().map(of).collect::<Vec<_>>(), 0.5);
    let base = median(&rows[0].3, |l| l.load_ms + l.first_draw_ms);
    for (what, cache, mesa, launches) in &rows {
        let total = median(launches, |l| l.load_ms + l.first_draw_ms);
        println!(
            "| {what} | {cache} | {mesa} | {} | {:.1} | {:.1} | {total:.1} | {:.2}x |",
            // XR's Vulkan path keeps its own pipeline cache, uncounted here.
            if what.starts_with("XR") {
                "-".to_owned()
            } else {
                launches.last().map_or(0, |l| l.cache_bytes).to_string()
            },
            median(launches, |l| l.load_ms),
            median(launches, |l| l.first_draw_ms),
            base / total
        );
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// The materials sample with WGSL targets, built by `xr` into `work/sample/store`.
fn build_store(work: &Path) -> anyhow::Result<PathBuf> {
    let sample = work.join("sample");
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/materials"), &sample)?;
    let manifest = sample.join("xr.toml");
    let text = std::fs::read_to_string(&manifest)?;
    let text =
        materials::wgsl_manifest(&text).replace("store = \"../../target/xr-store/materials\"", "store = \"store\"");
    std::fs::write(&manifest, text)?;
    let xr = std::env::current_exe()?.with_file_name("xr");
    let output = Command::new(&xr)
        .args(["build", "-q", "-m", "xr.toml"])
        .current_dir(&sample)
        .output()
        .with_context(|| format!("running {}", xr.display()))?;
    if !output.status.success() {
        bail!("building the WGSL store failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(sample.join("store"))
}

fn child(scenario: Scenario, store: &Path, mesa: &Path) -> anyhow::Result<Launch> {
    let name = format!("{scenario:?}");
    let output = mesa_cache(&mut ChildArgs::command(&["wgpu-load"], &scenario, store)?, mesa).output()?;
    if !output.status.success() {
        bail!("{name} launch failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().last().with_context(|| format!("{name} said nothing"))?;
    Ok(serde_json::from_str(line)?)
}

fn run_child(scenario: Scenario, store: &Path) -> anyhow::Result<Launch> {
    let registry = Registry::discover();
    let (kind, path) = match scenario {
        Scenario::WgpuSpirv => ("wgpu", LoadPath::CompatibleObject),
        Scenario::WgpuWgsl => ("wgpu", LoadPath::Source),
        Scenario::VkSpirv => (DeviceKind::VULKAN.name(), LoadPath::CompatibleObject),
    };
    let kind = registry.device_kind_named(kind).with_context(|| format!("no plugin opens a {kind} device"))?;
    let mut device = registry.open_device(kind, &DeviceOptions::default())?;
    let library = ShaderLibrary::open(store)?;
    let mut loader = DeviceLoader::attach(&registry, &device, &library)?;
    let start = Instant::now();
    let scene = materials::Scene::load(&mut device, &mut loader, &library, &[path], 64)
        .map_err(|e| anyhow::anyhow!("loading the scene: {e}"))?;
    let load_ms = start.elapsed().as_secs_f64() * 1e3;
    let start = Instant::now();
    scene.draw(&mut device).map_err(|e| anyhow::anyhow!("drawing: {e}"))?;
    device.read_pixels(scene.target()).into_result()?;
    let first_draw_ms = start.elapsed().as_secs_f64() * 1e3;
    let cache_bytes = loader
        .counters()
        .into_iter()
        .filter(|(_, name, _)| name == "pipeline cache bytes loaded")
        .map(|(_, _, value)| value)
        .sum();
    drop(scene);
    // Dropping the loader saves the pipeline cache into the store.
    drop(loader);
    Ok(Launch { load_ms, first_draw_ms, cache_bytes })
}
