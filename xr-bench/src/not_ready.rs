//! Draws that do not wait for a compile, side by side in one run: the
//! materials scene drawn for N frames into five targets of formats it was
//! never drawn into, with no usage log and no warm, on a fresh copy of the
//! store and a cold Mesa cache, per device path and per policy for a
//! program that is not ready (`wait`, today's behaviour, `skip`,
//! `fallback`): the worst frame, p99, the draws skipped or drawn by the
//! fallback, and when every program was ready for every target.
//!
//! Every run is a process of its own (this benchmark's child), so that no
//! in-memory cache carries over; the `wait` rows are today's path, from
//! the same run.

use crate::child::{ChildArgs, fresh_work_dir, measured, mesa_cache};
use crate::vulkan_load::copy_dir;
use anyhow::{Context, bail};
use materials::frames::{Policy, percentile};
use serde::{Deserialize, Serialize};
use std::{
    path::{Path, PathBuf},
    process::Command,
};
use xr_host::Registry;

/// The device paths compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DevicePath {
    /// OpenGL (the driver's parallel shader compile).
    Opengl,
    /// Vulkan pipelines, linked from graphics pipeline libraries where the
    /// driver has them, optimized on another thread.
    VulkanPipelines,
    /// Vulkan pipelines compiled whole (`XR_VK_PIPELINE_LIBRARIES=off`),
    /// off the draw path on another thread when a draw does not wait.
    VulkanWholePipelines,
    /// Vulkan shader objects (nothing compiled at a draw by XR).
    VulkanShaderObjects,
    /// wgpu on Vulkan (pipelines made on a worker thread when a draw does not wait).
    Wgpu,
}

impl DevicePath {
    const ALL: [DevicePath; 5] = [
        DevicePath::Opengl,
        DevicePath::VulkanPipelines,
        DevicePath::VulkanWholePipelines,
        DevicePath::VulkanShaderObjects,
        DevicePath::Wgpu,
    ];

    fn name(self) -> &'static str {
        match self {
            DevicePath::Opengl => "OpenGL",
            DevicePath::VulkanPipelines => "Vulkan pipelines (libraries)",
            DevicePath::VulkanWholePipelines => "Vulkan pipelines (whole)",
            DevicePath::VulkanShaderObjects => "Vulkan shader objects",
            DevicePath::Wgpu => "wgpu",
        }
    }

    /// The device kind a plugin opens it as.
    fn device(self) -> &'static str {
        match self {
            DevicePath::Opengl => "opengl",
            DevicePath::Wgpu => "wgpu",
            _ => "vulkan",
        }
    }

    /// Its environment on top of a cold Mesa cache.
    fn environment(self, command: &mut Command) {
        let (shader_objects, libraries) = match self {
            DevicePath::VulkanPipelines => ("off", "on"),
            DevicePath::VulkanWholePipelines => ("off", "off"),
            _ => ("on", "on"),
        };
        command.env("XR_VK_SHADER_OBJECTS", shader_objects).env("XR_VK_PIPELINE_LIBRARIES", libraries);
    }
}

/// Arguments of `xr-bench not-ready`.
#[derive(clap::Args)]
pub struct Args {
    /// Frames drawn after the load (every fifth into the same target).
    #[arg(long, default_value_t = 60)]
    frames: usize,
    /// Only these device paths (all by default).
    #[arg(long, value_delimiter = ',')]
    paths: Vec<DevicePath>,
    /// Work directory (store copies, Mesa caches); a temporary one by default.
    #[arg(long)]
    work_dir: Option<PathBuf>,
    /// The materials scene's store, built already (`xr build -m
    /// samples/materials/xr.toml`), where no `xr` or compiler is at hand
    /// (a GPU machine: scripts/bench-not-ready-gpu.sh); built here by default.
    #[arg(long, value_name = "DIR")]
    from_store: Option<PathBuf>,
    #[command(flatten)]
    child: ChildArgs<DevicePath>,
    /// Internal: the child's policy.
    #[arg(long, hide = true, default_value = "wait")]
    policy: Policy,
}

/// What a child measured.
#[derive(Serialize, Deserialize)]
struct Frames {
    load_ms: f64,
    frames_ms: Vec<f64>,
    skipped: u64,
    by_fallback: u64,
    all_ready_ms: Option<f64>,
}

/// Runs the benchmark.
pub fn run(args: Args) -> anyhow::Result<()> {
    let frames = args.frames;
    let policy = args.policy;
    if args.child.run_if_child(|path, store| child(path, store, frames, policy))? {
        return Ok(());
    }
    let work = fresh_work_dir(args.work_dir.clone(), "xr-not-ready-bench")?;
    let xr = std::env::current_exe()?.with_file_name("xr");
    eprintln!(
        "xr-bench: the materials scene, {frames} frames into 5 new target formats, work directory {}",
        work.display()
    );
    let pristine = match &args.from_store {
        Some(store) => store.clone(),
        None => {
            let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/materials/xr.toml");
            let pristine = work.join("pristine");
            let output = Command::new(&xr)
                .args(["build", "-q", "-m"])
                .arg(&manifest)
                .arg("--store")
                .arg(&pristine)
                .output()
                .context("starting xr build")?;
            if !output.status.success() {
                bail!("xr build failed: {}", String::from_utf8_lossy(&output.stderr));
            }
            pristine
        }
    };
    let paths = if args.paths.is_empty() { DevicePath::ALL.to_vec() } else { args.paths.clone() };
    println!(
        "The materials scene (9 programs), {frames} frames into 5 targets of new formats, no usage log, no warm, cold Mesa cache"
    );
    println!(
        "| device path | when not ready | load ms | first frame ms | worst frame ms | p99 ms | median ms | draws skipped | drawn by the fallback | all ready after ms |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for path in paths {
        let mut worst_waiting = None;
        for policy in Policy::ALL {
            let dir = work.join(format!("{path:?}-{}", policy.name()));
            let store = dir.join("store");
            copy_dir(&pristine, &store)?;
            let mut command = ChildArgs::command(&["not-ready", "--frames", &frames.to_string()], &path, &store)?;
            command.args(["--policy", policy.name()]);
            mesa_cache(&mut command, &dir.join("mesa"));
            path.environment(&mut command);
            let measured: Frames = match measured(&mut command, &format!("{} under {}", path.name(), policy.name())) {
                Ok(measured) => measured,
                Err(e) => {
                    println!("| {} | {} | failed: {} |", path.name(), policy.name(), first_line(&e.to_string()));
                    continue;
                }
            };
            let worst = percentile(&measured.frames_ms, 1.0);
            let against = match (policy, worst_waiting) {
                (Policy::Wait, _) => {
                    worst_waiting = Some(worst);
                    String::new()
                }
                (_, Some(waiting)) if worst > 0.0 => format!(" ({:.1}x)", waiting / worst),
                _ => String::new(),
            };
            println!(
                "| {} | {} | {:.1} | {:.1} | {:.1}{} | {:.1} | {:.2} | {} | {} | {} |",
                path.name(),
                policy.name(),
                measured.load_ms,
                measured.frames_ms.first().copied().unwrap_or(0.0),
                worst,
                against,
                percentile(&measured.frames_ms, 0.99),
                percentile(&measured.frames_ms, 0.5),
                measured.skipped,
                measured.by_fallback,
                measured.all_ready_ms.map_or("-".to_owned(), |ms| format!("{ms:.0}"))
            );
        }
    }
    println!("(in brackets: how many times smaller the worst frame is than the same path's under wait, today's)");
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

fn first_line(text: &str) -> &str {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("")
}

fn child(path: DevicePath, store: &Path, frames: usize, policy: Policy) -> anyhow::Result<Frames> {
    let registry = Registry::discover();
    let kind = registry
        .device_kind_named(path.device())
        .with_context(|| format!("no device system opens a '{}' device", path.device()))?;
    let report = materials::frames::run(&registry, store, kind, None, (frames, 64), policy)
        .map_err(|e| anyhow::anyhow!("drawing the scene: {e}"))?;
    Ok(Frames {
        load_ms: report.load_ms,
        frames_ms: report.frames_ms,
        skipped: report.skipped,
        by_fallback: report.by_fallback,
        all_ready_ms: report.all_ready_ms,
    })
}
