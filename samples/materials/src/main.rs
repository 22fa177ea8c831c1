//! `materials`: renders the material library's scene through every load
//! path on every device, writes one PNG per run, and prints which path each
//! program took.

use anyhow::Context;
use clap::Parser;
use materials::{DrawnBy, SCENE, SLANG_TWIN, max_difference, render, render_unlit_row, runs, twin_loads_on, write_png};
use std::{path::PathBuf, sync::Arc};
use xr_host::Registry;
use xr_library::ShaderLibrary;
use xr_library::xr_remote::Remote;

/// Render the material library: the store this sample's build script
/// built, or one `xr build -m samples/materials/xr.toml` wrote.
#[derive(Parser)]
struct Args {
    /// The store (default: the one the build script built).
    #[arg(long, default_value = materials::STORE)]
    store: PathBuf,
    /// Where to write the PNGs (materials-<run>.png).
    #[arg(long, default_value = "target/xr-samples")]
    out: PathBuf,
    /// Only this run (gl-source, gl-device-binary, gl-spirv, gl-best, vk-spirv, vk-source, vk-best,
    /// wgpu-spirv, wgpu-gl-spirv; and on a store built from the manifest with WGSL targets,
    /// wgpu-wgsl, wgpu-gl-wgsl).
    #[arg(long)]
    run: Option<String>,
    /// Fetch objects the store lacks from this shared cache (default: XR_REMOTE).
    #[arg(long, value_name = "URL")]
    remote: Option<String>,
    /// Instead of the runs: draw N frames of the scene on --device, each
    /// into the next of five targets of other attachment formats, and say
    /// how long they took and what loading and drawing compiled.
    #[arg(long, value_name = "N")]
    frames: Option<usize>,
    /// The device of --frames: a device kind a loaded plugin opens (vulkan, opengl, wgpu, wgpu-gl).
    #[arg(long, value_name = "KIND", default_value = "vulkan")]
    device: String,
    /// Record what is loaded and drawn in this usage log (for `xr warm`
    /// and `xr build --used`).
    #[arg(long, value_name = "LOG")]
    usage_log: Option<PathBuf>,
    /// What a draw of --frames does while its program is not ready for the
    /// target (still compiling off the draw path): wait for it, skip the
    /// draw, or draw the scene's first program instead.
    #[arg(long, value_name = "POLICY", default_value = "wait")]
    when_not_ready: materials::frames::Policy,
}

/// `--frames`: the frames drawn, their times, and what was compiled.
fn frames(registry: &Registry, args: &Args, count: usize) -> anyhow::Result<()> {
    let Some(kind) = registry.device_kind_named(&args.device) else {
        let known: Vec<&str> = registry.device_kinds().iter().map(|k| k.name()).collect();
        anyhow::bail!("no device system opens a '{}' device (the kinds here: {})", args.device, known.join(", "));
    };
    let report = materials::frames::run(
        registry,
        &args.store,
        kind,
        args.usage_log.as_deref(),
        (count, 64),
        args.when_not_ready,
    )?;
    let percentile = |at| materials::frames::percentile(&report.frames_ms, at);
    println!(
        "frames: {count} on {}: load {:.1} ms, first frame {:.1} ms, median {:.2} ms, p99 {:.2} ms",
        report.renderer,
        report.load_ms,
        report.frames_ms.first().copied().unwrap_or(0.0),
        percentile(0.5),
        percentile(0.99)
    );
    let first: Vec<String> = report.frames_ms.iter().take(5).map(|ms| format!("{ms:.1}")).collect();
    println!("the first frames, one into each target: {} ms", first.join(", "));
    println!(
        "while not ready ({}): {} draws skipped, {} drawn by the fallback; every program ready for every target {}",
        args.when_not_ready.name(),
        report.skipped,
        report.by_fallback,
        report.all_ready_ms.map_or("not within 10 s".to_owned(), |ms| format!("after {ms:.1} ms"))
    );
    let made: Vec<String> = report.made.iter().map(|(name, value)| format!("{name} {value}")).collect();
    println!("made at load and draw: {}", made.join(", "));
    let by_draws: Vec<String> = report.made_by_draws.iter().map(|(name, value)| format!("{name} {value}")).collect();
    println!(
        "made by the draws: {}",
        if by_draws.is_empty() { "nothing counted".to_owned() } else { by_draws.join(", ") }
    );
    let mut paths = std::collections::BTreeMap::<&str, usize>::new();
    for path in &report.paths {
        *paths.entry(path.name()).or_default() += 1;
    }
    let paths: Vec<String> = paths.iter().map(|(path, n)| format!("{path} {n}")).collect();
    println!("loaded by: {}", paths.join(", "));
    if let Some(log) = &args.usage_log {
        println!("usage log: {}", log.display());
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let level = xr_host::log_level().unwrap_or(tracing::Level::WARN);
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(level).init();
    let registry = Registry::discover();
    let mut library = ShaderLibrary::open(&args.store).with_context(|| format!("opening {}", args.store.display()))?;
    if let Some(count) = args.frames {
        return frames(&registry, &args, count);
    }
    if let Some(remote) = Remote::from_flag_or_env(args.remote.as_deref())? {
        library = library.with_remote(Arc::new(remote));
    }
    if let Some(log) = &args.usage_log {
        library = library.with_usage_log(Some(log))?;
    }
    // The WGSL runs need a store built from `wgsl_manifest`: by name only.
    let selected: Vec<_> = match args.run.as_deref() {
        None => runs(),
        Some(name) => runs().into_iter().chain(materials::wgsl_runs()).filter(|r| r.name == name).collect(),
    };
    anyhow::ensure!(!selected.is_empty(), "no run named {:?}", args.run);
    let mut failed = 0;
    println!("{:<17} {:<40} {:<14} {:<9} why", "run", "variant", "path", "object");
    for run in &selected {
        match render(&registry, &library, run) {
            Ok((image, loads)) => {
                let path = args.out.join(format!("materials-{}.png", run.name));
                write_png(&image, &path)?;
                for (tile, load) in SCENE.iter().zip(&loads) {
                    let overrides: Vec<String> =
                        tile.material.overrides().iter().map(|(n, v)| format!("{n}={v}")).collect();
                    let variant = if overrides.is_empty() {
                        load.variant.clone()
                    } else {
                        format!("{} {}", load.variant, overrides.join(","))
                    };
                    println!(
                        "{:<17} {variant:<40} {:<14} {:<9} {}",
                        run.name,
                        load.path.name(),
                        load.target,
                        load.reason
                    );
                }
                println!("{:<17} -> {}", run.name, path.display());
            }
            Err(e) => {
                failed += 1;
                println!("{:<17} not rendered: {e}", run.name);
            }
        }
    }
    // The Slang twin draws the `unlit` row on every path that loads it; its
    // pixels must be the GLSL program's (1 per channel allows the drivers'
    // rounding of the same arithmetic compiled by two compilers).
    let (program, twin) = SLANG_TWIN;
    let has_twin = library.program(twin).is_ok();
    if !has_twin {
        println!("{twin}: not in this store (a manifest without it): its comparison is skipped");
    }
    for run in selected.iter().filter(|r| has_twin && twin_loads_on(r)) {
        let compared = render_unlit_row(&registry, &library, run, DrawnBy::Own)
            .and_then(|(glsl, _)| Ok((glsl, render_unlit_row(&registry, &library, run, DrawnBy::SlangTwin)?)));
        match compared {
            Ok((glsl, (slang, loads))) => {
                let difference = max_difference(&glsl, &slang);
                let path = args.out.join(format!("materials-{}-{twin}.png", run.name));
                write_png(&slang, &path)?;
                let paths: Vec<String> = loads.iter().map(|l| format!("{} {}", l.path.name(), l.target)).collect();
                println!(
                    "{:<17} {twin} ({}) against {program}: at most {difference} per channel apart -> {}",
                    run.name,
                    paths.join(", "),
                    path.display()
                );
                if difference > 1 {
                    failed += 1;
                }
            }
            Err(e) => {
                failed += 1;
                println!("{:<17} {twin} not rendered: {e}", run.name);
            }
        }
    }
    anyhow::ensure!(failed == 0, "{failed} of {} runs failed", selected.len());
    Ok(())
}
