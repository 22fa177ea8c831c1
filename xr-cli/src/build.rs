//! `xr build`, `xr store gc`: the offline build of a manifest, and the
//! store's garbage collection.

use crate::messages::{MessageArgs, Reported, manifest_diagnostic, manifest_warning, reports_of, usage};
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use std::sync::Arc;
use std::{
    path::{Path, PathBuf},
    sync::atomic::{AtomicUsize, Ordering},
};
use xr_build::{
    ArtifactResult, BuildRequest, Manifest, Outcome, Shard,
    build::BuildFailure,
    count_artifacts, gc, guarded,
    noop::{self, NoopQuery},
    plugin_offer,
    xr_remote::Remote,
};
use xr_host::Registry;
use xr_sourcebuild::Severity;

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
    #[command(flatten)]
    remote: RemoteArgs,
    #[command(flatten)]
    workers: crate::isolation::WorkerArgs,
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

impl RemoteArgs {
    /// The remote asked for, by flag or environment.
    pub fn open(&self) -> anyhow::Result<Option<Arc<Remote>>> {
        open_remote(self.remote.as_deref())
    }

    fn upload(&self) -> bool {
        self.remote_upload || std::env::var("XR_REMOTE_UPLOAD").is_ok_and(|v| v == "1" || v == "true")
    }
}

/// The targets and languages no plugin offers in what could be read of a
/// manifest with mistakes (plugins are loaded for it: only when the
/// manifest is wrong anyway).
fn plugin_mistakes(path: &std::path::Path) -> Vec<xr_build::manifest::ManifestError> {
    let Ok(text) = std::fs::read_to_string(path) else { return Vec::new() };
    let (Some(mut partial), _) = Manifest::parse_partial(path, &text) else { return Vec::new() };
    let registry = Registry::discover();
    partial.check_plugins(&plugin_offer(&registry)).into_iter().map(|(_, error)| error).collect()
}

/// Runs `xr build`; `Ok(false)` when something failed to build.
pub fn run(args: BuildArgs) -> anyhow::Result<bool> {
    let mut manifest = match Manifest::load(&args.manifest) {
        Ok(manifest) => manifest,
        Err(errors) => {
            // Every mistake of the manifest at once, each at its place:
            // the targets and languages of what could be read too.
            let mut errors = errors.0;
            errors.extend(plugin_mistakes(&args.manifest));
            errors.sort_by_key(|e| (e.line, e.column));
            errors.dedup();
            let diagnostics: Vec<_> = errors.iter().map(manifest_diagnostic).collect();
            args.messages.print_reports(&reports_of(&diagnostics));
            if args.messages.json() {
                println!("{}", serde_json::json!({"type": "summary", "success": false, "errors": errors.len()}));
            }
            return Err(Reported { status: 2 }.into());
        }
    };
    if !manifest.warnings.is_empty() {
        let diagnostics: Vec<_> = manifest.warnings.iter().map(manifest_warning).collect();
        args.messages.print_reports(&reports_of(&diagnostics));
    }
    if let Some(store) = &args.store {
        manifest.store = store.clone();
    }
    if let Some(kind) = args.emit.as_deref().filter(|k| *k != "guarded") {
        return Err(usage(format!("unknown --emit kind '{kind}' (guarded)")));
    }
    let remote = args.remote.open()?;
    let upload = args.remote.upload();
    if upload && remote.is_none() {
        return Err(usage("--remote-upload needs a remote (--remote URL or XR_REMOTE)"));
    }
    let request = BuildRequest {
        jobs: args.jobs,
        targets: args.targets.clone(),
        programs: args.programs.clone(),
        shard: args.shard,
        remote: remote.clone(),
        upload,
        compile_in: Default::default(),
    };
    let plugin_dirs = Registry::default_dirs();
    let stamp_key = noop::key(&NoopQuery { manifest: &manifest, request: &request, plugin_dirs: &plugin_dirs });
    if args.emit.is_none()
        && let Some(summary) = noop::check(
            &NoopQuery { manifest: &manifest, request: &request, plugin_dirs: &plugin_dirs },
            stamp_key.as_deref(),
        )
    {
        tracing::info!("nothing changed since the last build (its build stamp holds); no plugin loaded");
        print_summary(&args, &summary, (0, 0), 0, &manifest);
        return Ok(true);
    }
    let request = BuildRequest { compile_in: args.workers.compile_in(&plugin_dirs)?, ..request };
    let registry = Registry::load_dirs(plugin_dirs.clone());
    let known = registry.targets();
    for name in &args.targets {
        if !known.contains(name) {
            return Err(usage(format!(
                "unknown target '{name}' (the plugins found build: {}){}",
                if known.is_empty() { "none".to_owned() } else { known.join(", ") },
                xr_build::suggest::did_you_mean(name, known.iter().map(String::as_str))
            )));
        }
    }
    // A program naming what no plugin offers fails alone; the others build.
    let refused = manifest.check_plugins(&plugin_offer(&registry));
    let total = count_artifacts(&manifest, &request);
    let quiet = crate::term::verbosity().quiet;
    let bar = crate::term::progress_bar().then(|| {
        let bar = ProgressBar::new(total as u64);
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    });
    let done = AtomicUsize::new(0);
    let failed = AtomicUsize::new(0);
    let step = (total / 10).max(1);
    // Failures are reported once each when the build ends; progress counts them.
    let progress = |result: &ArtifactResult| {
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        let failures = match result.outcome {
            Outcome::Failed(_) => failed.fetch_add(1, Ordering::Relaxed) + 1,
            _ => failed.load(Ordering::Relaxed),
        };
        let failures = if failures > 0 { format!(", {failures} failed") } else { String::new() };
        if let Some(bar) = &bar {
            bar.set_message(format!("{} ({}){failures}", result.variant, result.target));
            bar.inc(1);
        } else if !quiet && (n.is_multiple_of(step) || n == total) {
            eprintln!("[{n}/{total}] {} ({}){failures}", result.variant, result.target);
        }
    };
    let summary = match xr_build::build(&manifest, &registry, &request, &progress) {
        Ok(summary) => summary,
        Err(error @ BuildFailure::UnknownProgram { .. }) => return Err(usage(error.to_string())),
        Err(error) => return Err(error.into()),
    };
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let mut reports = summary.reports();
    for (_, error) in &refused {
        reports.add(None, "", &[manifest_diagnostic(error)]);
    }
    let counts = (reports.count(Severity::Error), reports.count(Severity::Warning));
    args.messages.print_reports(&reports.into_sorted());
    if let Some(remote) = &remote {
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
    // A program refused for several mistakes is one failure.
    let mut refused_programs: Vec<&str> = refused.iter().map(|(program, _)| program.as_str()).collect();
    refused_programs.dedup();
    print_summary(&args, &summary, counts, refused_programs.len(), &manifest);

    if args.emit.is_some() {
        let dir = args.emit_dir.clone().unwrap_or_else(|| manifest.store.with_file_name("guarded"));
        let mut failed = false;
        let root = xr_build::paths::SourceRoot::of_manifest(&manifest.path);
        for program in manifest.programs.iter().filter(|p| args.programs.is_empty() || args.programs.contains(&p.name))
        {
            let emitted = guarded::language(program)
                .and_then(|language| guarded::preprocessor(&registry, language))
                .and_then(|preprocess| guarded::emit(program, &root, &*preprocess));
            match emitted {
                Ok(sources) => {
                    for source in sources {
                        let path = dir.join(source.file_name());
                        write_file(&path, &source.text)?;
                        args.messages.tell(&format!(
                            "guarded: {} ({} branches, {} shared lines hoisted)",
                            path.display(),
                            source.branches,
                            source.hoisted_lines
                        ));
                    }
                }
                // A program the user did not name, in a language no plugin
                // preprocesses (Slang, WGSL), has no ladder: said, not failed,
                // so that a manifest of several languages still emits the rest.
                Err(e @ guarded::GuardedError::NoPreprocessor { .. }) if args.programs.is_empty() => {
                    args.messages.note(&format!("guarded: none for '{}': {e}", program.name));
                }
                Err(e) => {
                    failed = true;
                    args.messages.tell(&crate::term::labelled(
                        crate::term::Label::Error,
                        &format!("guarded sources of '{}': {e}", program.name),
                        crate::term::color(),
                    ));
                }
            }
        }
        if failed {
            return Ok(false);
        }
    }
    let succeeded = summary.failed.is_empty() && refused.is_empty();
    // A program refused for its plugins is out of `manifest` now; the build
    // failed then, and the stamp is only removed.
    let query = NoopQuery { manifest: &manifest, request: &request, plugin_dirs: &plugin_dirs };
    noop::record(&query, stamp_key, &summary, succeeded && args.emit.is_none());
    Ok(succeeded)
}

/// The closing line (or JSON object): what was built, and how many distinct
/// (errors, warnings) the reports were.
fn print_summary(
    args: &BuildArgs,
    summary: &xr_build::Summary,
    (errors, warnings): (usize, usize),
    refused: usize,
    manifest: &Manifest,
) {
    let failed = summary.failed.len() + refused;
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

fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
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
        if dry_run { String::new() } else { format!("; {} journal entries dropped", report.journal_entries_dropped) }
    );
    Ok(())
}
