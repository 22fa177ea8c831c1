//! `xr warm`: every program a usage log names, loaded on a live device
//! through its best path before an engine's first frame, so that the
//! program binaries and shader binaries the build systems keep are in the
//! store when the engine asks, and the pipelines of every draw state the
//! log recorded are in the store's pipeline cache; each program is then
//! drawn once, unseen, into a small target of each recorded attachment
//! state, so that what the driver compiles at a draw is in its own cache
//! (see [`xr_library::warm`]).

use crate::messages::usage;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use std::{path::PathBuf, time::Instant};
use xr_device::{DeviceKind, DeviceOptions};
use xr_host::Registry;
use xr_library::{DeviceLoader, ShaderLibrary, WarmOutcome};

/// What `xr warm` was asked.
#[derive(clap::Args)]
pub struct WarmArgs {
    /// The manifest whose store is warmed.
    #[arg(long, short = 'm', default_value = "xr.toml")]
    manifest: PathBuf,
    /// Warm this store instead of the manifest's.
    #[arg(long, value_name = "DIR")]
    store: Option<PathBuf>,
    /// A usage log (repeatable; default: usage.jsonl in the store).
    #[arg(long = "log", value_name = "LOG")]
    logs: Vec<PathBuf>,
    /// The kind of device to warm for, as `xr plugins` names it (vulkan, opengl).
    #[arg(long, value_name = "KIND", default_value = "vulkan")]
    device: String,
}

/// Runs `xr warm`; `Ok(false)` when a logged program could not be warmed.
pub fn run(args: WarmArgs) -> anyhow::Result<bool> {
    let registry = Registry::discover();
    let kind = registry.device_kind_named(&args.device).ok_or_else(|| {
        let offered: Vec<&str> = registry.device_kinds().into_iter().map(DeviceKind::name).collect();
        usage(format!("unknown --device '{}' (the plugins open: {})", args.device, offered.join(", ")))
    })?;
    let store = match args.store {
        Some(store) => store,
        None => {
            xr_build::Manifest::load(&args.manifest)
                .map_err(|e| anyhow::anyhow!("{e}"))
                .with_context(|| format!("reading {} for its store (or give --store)", args.manifest.display()))?
                .store
        }
    };
    let logs = if args.logs.is_empty() { vec![store.join(xr_store::usage::STORE_FILE)] } else { args.logs };
    let mut entries = std::collections::BTreeSet::new();
    for log in &logs {
        if !log.is_file() {
            return Err(usage(format!(
                "usage log {} does not exist: record one with ShaderLibrary::with_usage_log",
                log.display()
            )));
        }
        let read = xr_store::usage::read(log)?;
        for line in &read.skipped_lines {
            eprintln!("xr warm: note: {}:{line}: not a usage entry (a line cut short?), skipped", log.display());
        }
        entries.extend(read.entries);
    }
    let started = Instant::now();
    let library = ShaderLibrary::open(&store).with_context(|| format!("opening the store {}", store.display()))?;
    let mut device = registry.open_device(kind, &DeviceOptions::default())?;
    let renderer = device.capabilities().into_result().map(|c| c.renderer.to_string()).unwrap_or_default();
    let mut loader = DeviceLoader::attach(&registry, &device, &library)?;
    let compiled_before = loader.counter("pipelines compiled");
    let cached_before = loader.counter("pipelines from the pipeline cache");
    let quiet = crate::term::verbosity().quiet;
    let bar = if quiet || !crate::term::progress_bar() {
        ProgressBar::hidden()
    } else {
        // Its length is the programs warmed, which the first step says.
        let bar = ProgressBar::no_length();
        if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}") {
            bar.set_style(style);
        }
        bar
    };
    let report = loader.warm_drawing(&library, &mut device, &entries, &mut |step| {
        // Entries of one program on several targets are warmed once: the bar counts what is warmed.
        bar.set_length(step.total as u64);
        bar.set_message(step.usage.variant.clone());
        bar.inc(1);
        if let WarmOutcome::Failed { reason } = step.outcome {
            bar.suspend(|| {
                eprintln!(
                    "{}",
                    crate::term::labelled(
                        crate::term::Label::Error,
                        &format!("cannot warm {} of '{}': {reason}", step.usage.variant, step.usage.program),
                        crate::term::color(),
                    )
                )
            });
        }
    });
    bar.finish_and_clear();
    let compiled = loader.counter("pipelines compiled") - compiled_before;
    let cached = loader.counter("pipelines from the pipeline cache") - cached_before;
    // Its build systems write their caches when dropped, before the device goes.
    drop(loader);
    drop(device);
    let mut paths = std::collections::BTreeMap::<&str, usize>::new();
    for (_, path) in &report.warmed {
        *paths.entry(path.name()).or_default() += 1;
    }
    let by_path: Vec<String> = paths.iter().map(|(path, n)| format!("{n} from {path}")).collect();
    let no_binary = match report.no_device_binary.len() {
        0 => String::new(),
        n => format!(", {n} loaded but this device keeps no device binary of them"),
    };
    let pipelines = match report.pipelines {
        0 => String::new(),
        n => format!(
            "; {n} pipelines of logged draw states made (of all its pipelines, {compiled} compiled and {cached} \
             found in the pipeline cache)"
        ),
    };
    let draws = match report.draws_refused {
        0 => format!("; {} warm draws", report.draws),
        refused => format!("; {} warm draws ({refused} refused by the device)", report.draws),
    };
    eprintln!(
        "xr warm ({renderer}): {} programs: {} already warm, {} warmed{}{no_binary}, {} failed{pipelines}{draws}; {:.2} s ({})",
        report.programs(),
        report.already_warm,
        report.warmed.len(),
        if by_path.is_empty() { String::new() } else { format!(" ({})", by_path.join(", ")) },
        report.failed.len(),
        started.elapsed().as_secs_f64(),
        store.display()
    );
    Ok(report.failed.is_empty())
}
