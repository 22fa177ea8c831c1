//! Warming before the first frame, side by side in one run: the materials
//! scene drawn for N frames into five targets of changing attachment
//! formats on a fresh copy of the store with a cold Mesa cache, without
//! and with `xr warm` from a usage log first (the warm on the same cold
//! cache), on pipelines (`XR_VK_SHADER_OBJECTS=off`) and on shader
//! objects; then `xr build --used` of that log against the whole matrix.
//!
//! Every run is a process of its own (the frames: this benchmark's child,
//! through `materials::frames`; the warm and the builds: the `xr` beside
//! it), so no in-memory cache carries over.

use crate::child::{fresh_work_dir, measured, vulkan_environment};
use crate::vulkan_load::copy_dir;
use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use std::{
    path::{Path, PathBuf},
    process::Command,
    time::Instant,
};
use xr_device::DeviceKind;
use xr_host::Registry;

/// Arguments of `xr-bench warm`.
#[derive(clap::Args)]
pub struct Args {
    /// Frames drawn after the load.
    #[arg(long, default_value_t = 300)]
    frames: usize,
    /// Work directory (store copies, Mesa caches, logs); a temporary one by default.
    #[arg(long)]
    work_dir: Option<PathBuf>,
    /// Skip the `xr build --used` comparison (a smoke).
    #[arg(long)]
    no_build: bool,
    /// Internal: draw the frames in this process, from this store.
    #[arg(long, hide = true)]
    child_store: Option<PathBuf>,
    /// Internal: the child's usage log.
    #[arg(long, hide = true)]
    child_log: Option<PathBuf>,
}

/// What a child measured.
#[derive(Serialize, Deserialize, Default)]
struct Frames {
    load_ms: f64,
    frames_ms: Vec<f64>,
    /// Pipelines the draws made (the device's count after the load).
    pipelines_by_draws: u64,
    /// Pipelines compiled at load and draw, and shader objects made from SPIR-V.
    pipelines_compiled: u64,
    shader_objects_from_spirv: u64,
}

/// One scenario's figures.
struct Row {
    path: &'static str,
    warm: Option<f64>,
    frames: Frames,
}

/// Runs the benchmark.
pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(store) = &args.child_store {
        let frames = child(store, args.child_log.as_deref(), args.frames)?;
        println!("{}", serde_json::to_string(&frames)?);
        return Ok(());
    }
    let work = fresh_work_dir(args.work_dir.clone(), "xr-warm-bench")?;
    let xr = std::env::current_exe()?.with_file_name("xr");
    eprintln!("xr-bench: warming the materials scene, {} frames, work directory {}", args.frames, work.display());
    // A store as `xr build` leaves it, before any engine wrote a device binary into it.
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/materials/xr.toml");
    let pristine = work.join("pristine");
    let mut build = Command::new(&xr);
    build.args(["build", "-q", "-m"]).arg(&manifest).arg("--store").arg(&pristine);
    run_ok(&mut build, "xr build")?;
    let mut rows = Vec::new();
    for (path, pipelines) in [("pipelines", true), ("shader objects", false)] {
        let dir = work.join(path.replace(' ', "-"));
        let store = |name: &str| -> anyhow::Result<PathBuf> {
            let store = dir.join(name);
            copy_dir(&pristine, &store)?;
            Ok(store)
        };
        // Record: what the engine loads and draws.
        let log = dir.join("usage.jsonl");
        frames(&store("recorded")?, Some(&log), &dir.join("mesa-recorded"), pipelines, 5)?;
        // Without a warm: a fresh store, a cold Mesa cache.
        let cold = frames(&store("cold")?, None, &dir.join("mesa-cold"), pipelines, args.frames)?;
        rows.push(Row { path, warm: None, frames: cold });
        // With `xr warm` first, on its own cold Mesa cache, then the engine.
        let warmed = store("warmed")?;
        let mesa = dir.join("mesa-warmed");
        let started = Instant::now();
        let mut warm = Command::new(&xr);
        warm.args(["warm", "-q", "--store"]).arg(&warmed).arg("--log").arg(&log);
        run_ok(vulkan_environment(&mut warm, &mesa, pipelines), "xr warm")?;
        let warm_ms = started.elapsed().as_secs_f64() * 1e3;
        let after = frames(&warmed, Some(&log), &mesa, pipelines, args.frames)?;
        rows.push(Row { path, warm: Some(warm_ms), frames: after });
    }
    println!(
        "(a) the materials scene (9 programs), {} frames into 5 targets of other formats, cold Mesa cache",
        args.frames
    );
    println!(
        "| path | xr warm first | warm ms | load ms | first frame ms | median ms | p99 ms | pipelines made by draws | compiled at load and draw (pipelines, shader objects from SPIR-V) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for row in &rows {
        let f = &row.frames;
        println!(
            "| {} | {} | {} | {:.1} | {:.1} | {:.2} | {:.2} | {} | ({}, {}) |",
            row.path,
            if row.warm.is_some() { "yes" } else { "no" },
            row.warm.map_or("-".to_owned(), |ms| format!("{ms:.0}")),
            f.load_ms,
            f.frames_ms.first().copied().unwrap_or(0.0),
            materials::frames::percentile(&f.frames_ms, 0.5),
            materials::frames::percentile(&f.frames_ms, 0.99),
            f.pipelines_by_draws,
            f.pipelines_compiled,
            f.shader_objects_from_spirv
        );
    }
    for pair in rows.chunks(2) {
        if let [cold, warmed] = pair {
            let first = |r: &Row| r.frames.frames_ms.first().copied().unwrap_or(0.0);
            let load_and_first = |r: &Row| r.frames.load_ms + first(r);
            println!(
                "{}: load + first frame {:.2}x faster after xr warm ({:.1} ms → {:.1} ms)",
                cold.path,
                load_and_first(cold) / load_and_first(warmed),
                load_and_first(cold),
                load_and_first(warmed)
            );
        }
    }
    if !args.no_build {
        let log = work.join("pipelines/usage.jsonl");
        let build = |name: &str, used: bool| -> anyhow::Result<(f64, String)> {
            let mut command = Command::new(&xr);
            command.args(["build", "-q", "-j", "2", "-m"]).arg(&manifest).arg("--store").arg(work.join(name));
            if used {
                command.arg("--used").arg(&log);
            }
            let started = Instant::now();
            let output = command.output().context("starting xr build")?;
            if !output.status.success() {
                bail!("xr build failed: {}", String::from_utf8_lossy(&output.stderr));
            }
            Ok((started.elapsed().as_secs_f64(), String::from_utf8_lossy(&output.stderr).into_owned()))
        };
        let (full, _) = build("build-full", false)?;
        let (used, _) = build("build-used", true)?;
        let count = |name: &str| std::fs::read_dir(work.join(name).join("objects")).map_or(0, |d| d.count());
        println!();
        println!("(b) a cold `xr build -j 2` of the materials manifest, whole matrix against `--used` its usage log");
        println!("| build | s | object shards |");
        println!("|---|---|---|");
        println!("| whole matrix | {full:.2} | {} |", count("build-full"));
        println!("| --used usage.jsonl (9 variants) | {used:.2} | {} |", count("build-used"));
        println!("--used: {:.1}x faster", full / used);
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

fn run_ok(command: &mut Command, what: &str) -> anyhow::Result<()> {
    let output = command.output().with_context(|| format!("starting {what}"))?;
    if !output.status.success() {
        bail!("{what} failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(())
}

/// Draws `count` frames in a child process.
fn frames(store: &Path, log: Option<&Path>, mesa: &Path, pipelines: bool, count: usize) -> anyhow::Result<Frames> {
    let mut command = Command::new(std::env::current_exe()?);
    command.args(["warm", "--frames", &count.to_string(), "--child-store"]).arg(store);
    if let Some(log) = log {
        command.arg("--child-log").arg(log);
    }
    measured(vulkan_environment(&mut command, mesa, pipelines), "the frames")
}

fn child(store: &Path, log: Option<&Path>, count: usize) -> anyhow::Result<Frames> {
    let registry = Registry::discover();
    let report =
        materials::frames::run(&registry, store, DeviceKind::VULKAN, log, (count, 64), materials::frames::Policy::Wait)
            .map_err(|e| anyhow::anyhow!("drawing the scene: {e}"))?;
    let by_draws = |name: &str| report.made_by_draws.iter().find(|(n, _)| n == name).map_or(0, |(_, v)| *v);
    Ok(Frames {
        load_ms: report.load_ms,
        pipelines_by_draws: by_draws("pipelines"),
        pipelines_compiled: report.made("pipelines compiled"),
        shader_objects_from_spirv: report.made("shader objects from SPIR-V"),
        frames_ms: report.frames_ms,
    })
}
