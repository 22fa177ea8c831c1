//! `xr build`, `xr store gc`: the offline build of a manifest, and the
//! store's garbage collection.

use crate::messages::{MessageArgs, Reported, usage};
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use std::sync::Arc;
use std::{
    path::PathBuf,
    sync::atomic::{AtomicUsize, Ordering},
};
use xr_build::{
    ArtifactResult, Manifest, Outcome, Shard,
    config::{Asked, ConfigError},
    gc,
    invocation::{self, Finished, GuardedDir, GuardedOutcome, Invocation, InvocationError},
};
use xr_host::Registry;
use xr_remote::Remote;

/// What `xr build` was asked.
#[derive(clap::Args)]
pub struct BuildArgs {
    /// The manifest.
    #[arg(long, short = 'm', default_value = "xr.toml")]
    manifest: PathBuf,
    /// Worker threads (default: one per core).
    #[arg(long, short = 'j')]
    jobs: Option<usize>,
    /// Only this target (repeatable), as the plugins name it (`xr plugins` lists them).
    #[arg(long = "target", value_name = "TARGET")]
    targets: Vec<String>,
    /// Only this program (repeatable).
    #[arg(long = "program", value_name = "NAME")]
    programs: Vec<String>,
    /// Also write guarded sources: `guarded` writes, per program and
    /// stage, one source with an `#if` ladder over the variants.
    #[arg(long, value_name = "KIND")]
    emit: Option<String>,
    /// Where `--emit guarded` writes (default: `guarded/` beside the store).
    #[arg(long, value_name = "DIR")]
    emit_dir: Option<PathBuf>,
    /// Use this store instead of the manifest's.
    #[arg(long, value_name = "DIR")]
    store: Option<PathBuf>,
    #[command(flatten)]
    messages: MessageArgs,
    /// Build only part I of N of the matrix (e.g. 2/3), for one of N machines.
    #[arg(long, value_name = "I/N", value_parser = Shard::parse)]
    shard: Option<Shard>,
    /// Build only the variants this usage log names (repeatable: the logs
    /// together), as an engine recorded them with ShaderLibrary::with_usage_log.
    #[arg(long = "used", value_name = "LOG")]
    used: Vec<PathBuf>,
    /// After the build, list the variants it selects that no one of these
    /// usage logs names (repeatable), with their count and the bytes only
    /// they take in the store.
    #[arg(long = "report-unused", value_name = "LOG")]
    report_unused: Vec<PathBuf>,
    #[command(flatten)]
    remote: RemoteArgs,
    #[command(flatten)]
    remote_exec: RemoteExecArgs,
    #[command(flatten)]
    workers: crate::isolation::WorkerArgs,
}

/// Where a farm that runs the compiles is.
#[derive(clap::Args)]
pub struct RemoteExecArgs {
    /// Run the compiles on a Remote Execution API farm (BuildGrid,
    /// Buildbarn, BuildBuddy, NativeLink): grpc://HOST:PORT, or grpcs://
    /// for TLS; default: XR_REMOTE_EXEC. Credentials as for --remote, or a
    /// bearer token in XR_REMOTE_EXEC_TOKEN.
    #[arg(long, value_name = "URL")]
    remote_exec: Option<String>,
    /// The farm's instance name (default: XR_REMOTE_INSTANCE, else none).
    #[arg(long, value_name = "NAME")]
    remote_instance: Option<String>,
    /// Compiles in flight on the farm at once.
    #[arg(long, value_name = "N", default_value_t = 64)]
    remote_jobs: usize,
    /// A platform property the farm's workers must have, KEY=VALUE
    /// (repeatable), e.g. container-image=docker://…; OSFamily and ISA are
    /// this machine's.
    #[arg(long = "remote-property", value_name = "KEY=VALUE")]
    remote_properties: Vec<String>,
    /// Ask the farm to run the compiles in persistent workers, which start
    /// once and serve many actions (xr-bot and BuildBuddy keep them; on
    /// BuildGrid the property `persistentWorkerKey` must be a wildcard
    /// key, as scripts/remote-exec.sh sets it).
    #[arg(long)]
    remote_persistent_workers: bool,
}

impl RemoteExecArgs {
    /// What the flags ask of the farm (the environment has its say in
    /// [`Asked::resolve`]).
    fn asked(&self) -> xr_build::config::FarmAsked {
        xr_build::config::FarmAsked {
            url: self.remote_exec.clone(),
            instance: self.remote_instance.clone(),
            jobs: Some(self.remote_jobs),
            properties: self.remote_properties.clone(),
            persistent_workers: self.remote_persistent_workers,
        }
    }
}

/// Where the shared cache is.
#[derive(clap::Args)]
pub struct RemoteArgs {
    /// A shared cache read before building: http(s)://host/path (WebDAV),
    /// redis://host:port[/db]; default: XR_REMOTE. Credentials come from
    /// XR_REMOTE_USER / XR_REMOTE_PASSWORD or a netrc file.
    #[arg(long, value_name = "URL")]
    remote: Option<String>,
    /// Upload what this build makes to the remote (default: XR_REMOTE_UPLOAD=1).
    #[arg(long)]
    remote_upload: bool,
}

/// The remote at `url`, else the one `XR_REMOTE` names, else none.
pub fn open_remote(url: Option<&str>) -> anyhow::Result<Option<Arc<Remote>>> {
    Ok(Remote::from_flag_or_env(url)?.map(Arc::new))
}

/// Shows the build's progress: a bar on a terminal, else a line every
/// tenth of the artifacts (nothing with `-q`). Each line names the last
/// artifact done and what became of it, then how many failed so far.
struct BuildProgress {
    messages: MessageArgs,
    bar: std::sync::OnceLock<ProgressBar>,
    total: AtomicUsize,
    /// (done, failed), counted and shown under one lock so that lines come
    /// out in order.
    counts: std::sync::Mutex<(usize, usize)>,
}

/// A progress line's words for the artifact `result` and the count of
/// failures so far.
fn progress_words(result: &ArtifactResult, failed: usize) -> String {
    let became = match result.outcome {
        Outcome::Built { .. } => "built",
        Outcome::Fetched { .. } => "fetched",
        Outcome::Reused { .. } => "reused",
        Outcome::Failed(_) => "failed",
    };
    let so_far = match failed {
        0 => String::new(),
        n => format!(" ({n} failed so far)"),
    };
    format!("{} ({}) {became}{so_far}", result.variant, result.target)
}

impl xr_build::invocation::Progress for BuildProgress {
    fn manifest_read(&self, warnings: &[xr_build::report::Report]) {
        self.messages.print_reports(warnings);
    }

    // `-v`: who builds what, as the plan decided it (every front end takes this plan).
    fn planned(&self, plan: &xr_build::BuildPlan) {
        if crate::term::verbosity().verbose == 0 {
            return;
        }
        for program in &plan.programs {
            for target in program.targets() {
                let by = match &target.compiler {
                    Ok(chosen) => format!("compiled by {}", chosen.name),
                    Err(why) => format!("no compiler: {why}"),
                };
                eprintln!("xr build: program '{}' for {}: {by}", program.name, target.name);
            }
        }
    }

    fn start(&self, total: usize) {
        self.total.store(total, Ordering::Relaxed);
        if crate::term::progress_bar() {
            let bar = ProgressBar::new(total as u64);
            bar.set_style(
                ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} {wide_msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            let _ = self.bar.set(bar);
        }
    }

    // Failures are reported once each when the build ends; progress counts them.
    fn artifact(&self, result: &ArtifactResult) {
        let total = self.total.load(Ordering::Relaxed);
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        counts.0 += 1;
        if matches!(result.outcome, Outcome::Failed(_)) {
            counts.1 += 1;
        }
        let (n, failed) = *counts;
        if let Some(bar) = self.bar.get() {
            bar.set_message(progress_words(result, failed));
            bar.inc(1);
        } else if !crate::term::verbosity().quiet && (n.is_multiple_of((total / 10).max(1)) || n == total) {
            eprintln!("[{n}/{total}] {}", progress_words(result, failed));
        }
    }
}

/// Runs `xr build`; `Ok(false)` when something failed to build.
pub fn run(args: BuildArgs) -> anyhow::Result<bool> {
    if let Some(kind) = args.emit.as_deref().filter(|k| *k != "guarded") {
        return Err(usage(format!("unknown --emit kind '{kind}' (guarded)")));
    }
    let used = match args.used.as_slice() {
        [] => None,
        logs => Some(Arc::new(read_used(&args, logs)?)),
    };
    let report_unused = match args.report_unused.as_slice() {
        [] => None,
        logs => Some(read_used(&args, logs)?),
    };
    let plugin_dirs = Registry::default_dirs();
    let asked = Asked {
        jobs: args.jobs,
        targets: args.targets.clone(),
        programs: args.programs.clone(),
        shard: args.shard,
        used: used.clone(),
        remote: args.remote.remote.clone(),
        remote_from_environment: true,
        farm_from_environment: true,
        upload: args.remote.remote_upload,
        farm: args.remote_exec.asked(),
        ..args.workers.asked()?
    };
    let resolved = asked.resolve(&xr_build::config::BuildEnv::read(), &plugin_dirs).map_err(|e| match e {
        ConfigError::UploadWithoutRemote | ConfigError::FarmUsage(_) => usage(e.to_string()),
        other => anyhow::Error::new(other),
    })?;
    for warning in &resolved.warnings {
        args.messages.tell(&crate::term::labelled(crate::term::Label::Warning, warning, crate::term::color()));
    }
    let request = resolved.request;
    let (remote, remote_exec) = (request.remote.clone(), request.remote_exec.clone());
    // Beside the store by default: known only once the manifest is read.
    let emit_guarded =
        args.emit.as_ref().map(|_| args.emit_dir.clone().map_or(GuardedDir::BesideStore, GuardedDir::At));
    let invocation =
        Invocation { manifest: args.manifest.clone(), store: args.store.clone(), request, plugin_dirs, emit_guarded };
    let progress = BuildProgress {
        messages: args.messages,
        bar: std::sync::OnceLock::new(),
        total: AtomicUsize::new(0),
        counts: std::sync::Mutex::new((0, 0)),
    };
    let finished = match invocation::run(&invocation, None, &progress) {
        Ok(finished) => finished,
        Err(InvocationError::Manifest { reports, .. }) => {
            args.messages.print_reports(&reports);
            if args.messages.json() {
                println!("{}", serde_json::json!({"type": "summary", "success": false, "errors": reports.len()}));
            }
            return Err(Reported { status: 2 }.into());
        }
        Err(InvocationError::Usage(message)) => return Err(usage(message)),
        Err(InvocationError::Build(error)) => return Err(error.into()),
    };
    if let Some(bar) = progress.bar.get() {
        bar.finish_and_clear();
    }
    args.messages.print_reports(&finished.reports);
    if let Some(remote) = remote.as_ref().filter(|_| !finished.up_to_date) {
        let stats = remote.stats();
        args.messages.tell(&format!(
            "remote {}: {} fetched, {} uploaded, {} corrupt{}",
            remote.url(),
            stats.fetched,
            stats.uploaded,
            stats.corrupt,
            if remote.is_usable() { "" } else { "; unusable, built locally" }
        ));
    }
    if let Some(farm) = remote_exec.as_ref().filter(|_| !finished.up_to_date) {
        let (summary, stats) = (&finished.summary, farm.stats());
        args.messages.tell(&format!(
            "farm {}: {} executed, {} from its action cache, {} compiled here{}; {} bytes sent, {} received",
            farm.farm(),
            summary.remote_executed,
            summary.remote_cached,
            summary.remote_fallback,
            if farm.usable() { "" } else { " (the farm was given up on)" },
            stats.bytes_sent,
            stats.bytes_received,
        ));
        let phases = stats.phases;
        if phases.timed > 0 {
            let ms = |micros: u64| micros as f64 / 1000.0 / phases.timed as f64;
            args.messages.tell(&format!(
                "farm {}: per executed action, {:.0} ms waited here, {:.0} ms on the worker: inputs {:.0} ms, \
                 command {:.0} ms, outputs {:.0} ms ({} actions timed by their workers)",
                farm.farm(),
                ms(phases.client),
                ms(phases.worker),
                ms(phases.input_fetch),
                ms(phases.execution),
                ms(phases.output_upload),
                phases.timed
            ));
        }
    }
    if let Some(used) = &used {
        tell_unknown(&args, used, &finished.manifest);
    }
    print_summary(&args, &finished);
    if let Some(logs) = &report_unused {
        print_unused(&args, logs, &invocation.request, &finished);
    }
    for outcome in &finished.guarded {
        match outcome {
            GuardedOutcome::Written { path, branches, hoisted_lines } => args.messages.tell(&format!(
                "guarded: {} ({branches} branches, {hoisted_lines} shared lines hoisted)",
                path.display()
            )),
            GuardedOutcome::Skipped { program, why } => {
                args.messages.note(&format!("guarded: none for '{program}': {why}"))
            }
            GuardedOutcome::Failed { program, why } => args.messages.tell(&crate::term::labelled(
                crate::term::Label::Error,
                &format!("guarded sources of '{program}': {why}"),
                crate::term::color(),
            )),
        }
    }
    Ok(finished.succeeded())
}

/// The usage logs at `logs`, read; their torn lines said.
fn read_used(args: &BuildArgs, logs: &[PathBuf]) -> anyhow::Result<xr_build::used::UsedVariants> {
    let used = xr_build::used::UsedVariants::read(logs).map_err(|e| usage(e.to_string()))?;
    for (log, line) in &used.skipped {
        args.messages.note(&format!("{}:{line}: not a usage entry (a line cut short?), skipped", log.display()));
    }
    Ok(used)
}

/// Says which logged variants the manifest does not build: the engine that
/// used them will not find them in a build of what is used.
fn tell_unknown(args: &BuildArgs, used: &xr_build::used::UsedVariants, manifest: &Manifest) {
    for (program, variant) in xr_build::unused::unknown(used, manifest) {
        args.messages.tell(&crate::term::labelled(
            crate::term::Label::Warning,
            &format!("the usage log names {variant} of '{program}', which {} does not build", manifest.path.display()),
            crate::term::color(),
        ));
    }
}

/// The variants the build selected that no log of `used` names.
fn print_unused(
    args: &BuildArgs,
    used: &xr_build::used::UsedVariants,
    request: &xr_build::BuildRequest,
    finished: &Finished,
) {
    let manifest = &finished.manifest;
    let programs =
        manifest.programs.iter().filter(|p| request.programs.is_empty() || request.programs.contains(&p.name));
    // What the build selects (its shard, its own logs) is what is looked at.
    let report = xr_build::unused::unused(programs, |p, v| request.selects(p, v), used, &manifest.store);
    if args.messages.json() {
        for program in &report.programs {
            println!(
                "{}",
                serde_json::json!({
                    "type": "unused", "program": program.program, "variants": program.total,
                    "unused": program.unused, "bytes": program.bytes,
                })
            );
        }
        return;
    }
    for program in &report.programs {
        eprintln!(
            "unused: '{}': {} of {} variants, {} bytes: {}",
            program.program,
            program.unused.len(),
            program.total,
            program.bytes,
            program.unused.join(" ")
        );
    }
    eprintln!(
        "unused: {} of {} variants no usage log names ({} bytes only they take), logs: {}",
        report.unused,
        report.total,
        report.bytes,
        used.logs.iter().map(|l| l.display().to_string()).collect::<Vec<_>>().join(", ")
    );
}

/// The closing line (or JSON object): what was built, and how many distinct
/// (errors, warnings) the reports were.
fn print_summary(args: &BuildArgs, finished: &Finished) {
    let (summary, manifest) = (&finished.summary, &finished.manifest);
    let (errors, warnings) = (finished.errors, finished.warnings);
    let failed = finished.failed();
    if args.messages.json() {
        println!(
            "{}",
            serde_json::json!({
                "type": "summary",
                "success": failed == 0,
                "built": summary.built,
                "fetched": summary.fetched,
                "reused": summary.reused,
                "failed": failed,
                "last_good_kept": summary.kept_last_good,
                "errors": errors,
                "warnings": warnings,
                "warned": summary.warned.len(),
                "unique_objects": summary.unique_objects,
                "bytes": summary.bytes,
                "elapsed_s": summary.elapsed.as_secs_f64(),
                "workers": summary.workers_started,
                "remote_executed": summary.remote_executed,
                "remote_cached": summary.remote_cached,
                "remote_fallback": summary.remote_fallback,
                "store": manifest.store,
                "shard": args.shard.map(|s| s.to_string()),
            })
        );
        return;
    }
    let mut counts = String::new();
    if errors > 0 {
        counts.push_str(&format!(" ({errors} distinct {})", if errors == 1 { "error" } else { "errors" }));
    }
    if warnings > 0 {
        counts.push_str(&format!("; {} with warnings ({warnings} distinct)", summary.warned.len()));
    }
    eprintln!(
        "xr build{}: {} built, {} fetched, {} reused, {}{counts}; {} unique objects, {} bytes; {:.2} s ({})",
        args.shard.map(|s| format!(" (shard {s})")).unwrap_or_default(),
        summary.built,
        summary.fetched,
        summary.reused,
        xr_build::report::failed_count(failed, summary.kept_last_good),
        summary.unique_objects,
        summary.bytes,
        summary.elapsed.as_secs_f64(),
        manifest.store.display()
    );
}

/// Runs `xr store gc` on `store`, by default the first manifest's.
pub fn gc(store: Option<PathBuf>, manifests: &[PathBuf], dry_run: bool) -> anyhow::Result<()> {
    let manifests: Vec<Manifest> = manifests.iter().map(|m| Manifest::load(m)).collect::<Result<_, _>>()?;
    let store = match store {
        Some(store) => store,
        None => manifests.first().map(|m| m.store.clone()).context("name a manifest with --manifest")?,
    };
    if !store.join("objects").is_dir() {
        return Err(usage(format!("{} is not an XR store (no objects/ directory)", store.display())));
    }
    let store = xr_store::Store::open(store)?;
    let report = gc::gc(&store, &manifests, dry_run)?;
    for name in &report.catalogs_removed {
        eprintln!("{} program '{name}' (in no manifest)", if dry_run { "would drop" } else { "dropped" });
    }
    eprintln!(
        "xr store gc: {} objects, {} kept, {} {} ({} bytes){}",
        report.objects,
        report.kept,
        report.removed,
        if dry_run { "would be removed" } else { "removed" },
        report.removed_bytes,
        if dry_run {
            String::new()
        } else {
            let reflections = match report.reflections_dropped {
                0 => String::new(),
                n => format!(", {n} cached reflections"),
            };
            format!("; {} journal entries dropped{reflections}", report.journal_entries_dropped)
        }
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::progress_words;
    use xr_build::{ArtifactResult, Outcome, error::ArtifactError};

    fn result(variant: &str, outcome: Outcome) -> ArtifactResult {
        ArtifactResult {
            program: "tint".into(),
            variant: variant.into(),
            target: "gl-glsl".into(),
            compiler: "xr-compiler-glsl".into(),
            outcome,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn a_progress_line_says_what_became_of_its_artifact_apart_from_the_failures_so_far() {
        let built = Outcome::Built { object: xr_store::ObjectKey([0; 32]), bytes: 1 };
        assert_eq!(
            progress_words(&result("tint[INVERT=0]", built), 1),
            "tint[INVERT=0] (gl-glsl) built (1 failed so far)"
        );
        let failed = Outcome::Failed(ArtifactError::Compiler { message: "no".into(), diagnostics: Vec::new() });
        assert_eq!(
            progress_words(&result("tint[INVERT=1]", failed), 2),
            "tint[INVERT=1] (gl-glsl) failed (2 failed so far)"
        );
        let reused = Outcome::Reused { object: xr_store::ObjectKey([0; 32]), bytes: 1 };
        assert_eq!(progress_words(&result("tint[INVERT=0]", reused), 0), "tint[INVERT=0] (gl-glsl) reused");
    }
}
