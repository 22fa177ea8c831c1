//! One build as a front end asks for it: `xr build` and a cargo build
//! script (`xr-cargo`) take this same path, so that they cannot disagree on
//! what is up to date or on what a failure reports.
//!
//! In order: the manifest is read (a manifest with mistakes is checked
//! against the plugins too, so that every mistake is reported in one run);
//! the build stamp is checked (`crate::noop`: a build with nothing
//! changed loads no plugin); the plugins are loaded (once: a front end
//! that has its registry already gives it), the targets asked for checked,
//! and the manifest resolved into its plan ([`crate::plan`]), the programs
//! naming what no plugin offers refused alone; everything else is built;
//! the reports are folded; guarded sources are written if asked; the stamp
//! is recorded after a whole success. The front end only parses its
//! arguments and prints.

use crate::{
    ArtifactResult, BuildFailure, BuildPlan, BuildRequest, Manifest, ManifestError, ManifestWarning, Summary,
    guarded::{self, GuardedError},
    noop::{self, NoopQuery},
    paths::SourceRoot,
    report::{Report, Reports},
};
use std::path::{Path, PathBuf};
use xr_host::Registry;
use xr_sourcebuild::{Diagnostic, Severity};

/// What to build, and where the plugins are.
pub struct Invocation {
    /// The manifest.
    pub manifest: PathBuf,
    /// A store instead of the manifest's.
    pub store: Option<PathBuf>,
    /// What to build of it, and how.
    pub request: BuildRequest,
    /// Where plugins are loaded from (`Registry::default_dirs` for `xr`'s search).
    pub plugin_dirs: Vec<PathBuf>,
    /// Also write guarded sources, there.
    pub emit_guarded: Option<GuardedDir>,
}

/// Where guarded sources go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GuardedDir {
    /// `guarded/` beside the store.
    BesideStore,
    /// This directory.
    At(PathBuf),
}

/// Hears of the build as it goes.
pub trait Progress: Sync {
    /// The manifest was read, with these warnings (before anything else is
    /// said; they are in [`Finished::manifest_warnings`] too).
    fn manifest_read(&self, warnings: &[Report]) {
        let _ = warnings;
    }
    /// The plugins were loaded and the manifest resolved into `plan`: the
    /// compiler of every (program, target) is chosen (not called for a build
    /// found up to date).
    fn planned(&self, plan: &BuildPlan) {
        let _ = plan;
    }
    /// The build is about to compile `total` artifacts (not called for a
    /// build found up to date).
    fn start(&self, total: usize) {
        let _ = total;
    }
    /// An artifact ended.
    fn artifact(&self, result: &ArtifactResult);
}

/// Progress that nobody hears.
pub struct Silent;

impl Progress for Silent {
    fn artifact(&self, _: &ArtifactResult) {}
}

/// Why a build could not start: nothing was built.
#[derive(Debug, thiserror::Error)]
pub enum InvocationError {
    /// The manifest has mistakes (reported with their places; exit status 2).
    #[error("{} has {} {}", manifest.display(), reports.len(), if reports.len() == 1 { "mistake" } else { "mistakes" })]
    Manifest {
        /// The manifest.
        manifest: PathBuf,
        /// One report per mistake, in the order of the lines.
        reports: Vec<Report>,
    },
    /// The request names what the manifest or the plugins lack.
    #[error("{0}")]
    Usage(String),
    /// The build could not run (the store, a thread pool).
    #[error(transparent)]
    Build(BuildFailure),
}

/// Guarded sources written for one program, or why none were.
#[derive(Debug)]
pub enum GuardedOutcome {
    /// Written.
    Written {
        /// The file.
        path: PathBuf,
        /// Its `#if` branches.
        branches: usize,
        /// Lines every variant shares, written once.
        hoisted_lines: usize,
    },
    /// None for a program the user did not name whose language no plugin
    /// preprocesses (Slang, WGSL): said, not failed.
    Skipped {
        /// The program.
        program: String,
        /// Why.
        why: GuardedError,
    },
    /// Failed.
    Failed {
        /// The program.
        program: String,
        /// Why.
        why: GuardedError,
    },
}

/// What a build did.
pub struct Finished {
    /// The manifest as read (its store resolved).
    pub manifest: Manifest,
    /// The plan it was built by; `None` for a build found up to date, which
    /// loaded no plugin.
    pub plan: Option<BuildPlan>,
    /// The manifest's warnings.
    pub manifest_warnings: Vec<Report>,
    /// What was built.
    pub summary: Summary,
    /// One report per distinct diagnostic, sorted (empty for a no-op).
    pub reports: Vec<Report>,
    /// Distinct errors among the reports.
    pub errors: usize,
    /// Distinct warnings among the reports.
    pub warnings: usize,
    /// Programs refused because they name what no plugin offers.
    pub refused_programs: usize,
    /// The build stamp held: nothing was compiled and no plugin loaded.
    pub up_to_date: bool,
    /// Guarded sources, when asked for.
    pub guarded: Vec<GuardedOutcome>,
}

impl Finished {
    /// Failed artifacts and refused programs.
    pub fn failed(&self) -> usize {
        self.summary.failed.len() + self.refused_programs
    }

    /// Everything asked for was built (and emitted).
    pub fn succeeded(&self) -> bool {
        self.failed() == 0 && !self.guarded.iter().any(|g| matches!(g, GuardedOutcome::Failed { .. }))
    }
}

impl ManifestError {
    /// This error as a diagnostic at its place in the manifest.
    pub fn to_diagnostic(&self) -> Diagnostic {
        place_diagnostic(Severity::Error, &self.file, self.line, self.column, &self.message)
    }
}

impl ManifestWarning {
    /// This warning as a diagnostic at its place in the manifest.
    pub fn to_diagnostic(&self) -> Diagnostic {
        place_diagnostic(Severity::Warning, &self.file, self.line, self.column, &self.message)
    }
}

fn place_diagnostic(severity: Severity, file: &Path, line: usize, column: usize, message: &str) -> Diagnostic {
    Diagnostic::new(
        severity,
        &file.to_string_lossy(),
        u32::try_from(line).unwrap_or(0),
        u32::try_from(column).unwrap_or(0),
        message.to_owned(),
    )
}

/// The reports of diagnostics that struck no artifact.
pub fn reports_of(diagnostics: &[Diagnostic]) -> Vec<Report> {
    let mut reports = Reports::default();
    reports.add(None, "", diagnostics);
    reports.into_sorted()
}

/// Reads the manifest at `path`; a manifest with mistakes is reported
/// whole, its targets and languages checked against the plugins of
/// `plugin_dirs` too (loaded only then: the manifest is wrong anyway).
pub fn load_manifest(path: &Path, plugin_dirs: &[PathBuf]) -> Result<Manifest, InvocationError> {
    let errors = match Manifest::load(path) {
        Ok(manifest) => return Ok(manifest),
        Err(errors) => errors.0,
    };
    let mut errors = errors;
    if let Ok(text) = std::fs::read_to_string(path)
        && let (Some(partial), _) = Manifest::parse_partial(path, &text)
    {
        let registry = Registry::load_dirs(plugin_dirs.to_vec());
        errors.extend(BuildPlan::new(partial, &registry).refused.into_iter().map(|(_, error)| error));
    }
    errors.sort_by_key(|e| (e.line, e.column));
    errors.dedup();
    let diagnostics: Vec<_> = errors.iter().map(ManifestError::to_diagnostic).collect();
    Err(InvocationError::Manifest { manifest: path.to_owned(), reports: reports_of(&diagnostics) })
}

/// Runs the build `invocation` asks for with the plugins of `registry`
/// (loaded from the invocation's plugin directories when `None`, and only
/// if the build is not found up to date); `progress` hears of each artifact.
pub fn run(
    invocation: &Invocation,
    registry: Option<&Registry>,
    progress: &dyn Progress,
) -> Result<Finished, InvocationError> {
    let mut manifest = load_manifest(&invocation.manifest, &invocation.plugin_dirs)?;
    let manifest_warnings = if manifest.warnings.is_empty() {
        Vec::new()
    } else {
        reports_of(&manifest.warnings.iter().map(ManifestWarning::to_diagnostic).collect::<Vec<_>>())
    };
    progress.manifest_read(&manifest_warnings);
    if let Some(store) = &invocation.store {
        manifest.store = store.clone();
    }
    let request = &invocation.request;
    let plugin_dirs = &invocation.plugin_dirs;
    let query = NoopQuery { manifest: &manifest, request, plugin_dirs };
    let stamp_key = noop::key(&query);
    if invocation.emit_guarded.is_none()
        && let Some(summary) = noop::check(&query, stamp_key.as_deref())
    {
        tracing::info!("nothing changed since the last build (its build stamp holds); no plugin loaded");
        return Ok(Finished {
            manifest,
            plan: None,
            manifest_warnings,
            summary,
            reports: Vec::new(),
            errors: 0,
            warnings: 0,
            refused_programs: 0,
            up_to_date: true,
            guarded: Vec::new(),
        });
    }
    let loaded;
    let registry = match registry {
        Some(registry) => registry,
        None => {
            loaded = Registry::load_dirs(plugin_dirs.clone());
            &loaded
        }
    };
    let known = registry.targets();
    if let Some(name) = request.targets.iter().find(|name| !known.contains(name)) {
        return Err(InvocationError::Usage(format!(
            "unknown target '{name}' (the plugins found build: {}){}",
            if known.is_empty() { "none".to_owned() } else { known.join(", ") },
            crate::suggest::did_you_mean(name, known.iter().map(String::as_str))
        )));
    }
    // A program naming what no plugin offers fails alone; the others build.
    let plan = BuildPlan::new(manifest.clone(), registry);
    progress.planned(&plan);
    progress.start(crate::count_artifacts(&plan, request));
    let summary = match crate::build(&plan, registry, request, &|result| progress.artifact(result)) {
        Ok(summary) => summary,
        Err(error @ BuildFailure::UnknownProgram { .. }) => return Err(InvocationError::Usage(error.to_string())),
        Err(error) => return Err(InvocationError::Build(error)),
    };
    let mut reports = summary.reports();
    for (_, error) in &plan.refused {
        reports.add(None, "", &[error.to_diagnostic()]);
    }
    let (errors, warnings) = (reports.count(Severity::Error), reports.count(Severity::Warning));
    // A program refused for several mistakes is one failure.
    let mut refused_programs: Vec<&str> = plan.refused.iter().map(|(program, _)| program.as_str()).collect();
    refused_programs.dedup();
    let refused_programs = refused_programs.len();
    let guarded = match &invocation.emit_guarded {
        Some(GuardedDir::At(dir)) => emit_guarded(&plan, registry, request, dir),
        Some(GuardedDir::BesideStore) => emit_guarded(&plan, registry, request, &plan.store.with_file_name("guarded")),
        None => Vec::new(),
    };
    let finished = Finished {
        manifest,
        plan: Some(plan),
        manifest_warnings,
        summary,
        reports: reports.into_sorted(),
        errors,
        warnings,
        refused_programs,
        up_to_date: false,
        guarded,
    };
    // A program refused for its plugins is out of the manifest now; the
    // build failed then, and the stamp is only removed.
    let succeeded = finished.succeeded() && invocation.emit_guarded.is_none();
    let query = NoopQuery { manifest: &finished.manifest, request, plugin_dirs };
    noop::record(&query, stamp_key, &finished.summary, succeeded, &registry.environment_read());
    Ok(finished)
}

/// Writes one guarded source per program and stage of `plan` (of the
/// request's programs when it names some) into `dir`, preprocessing where
/// the request compiles (its workers, or this process).
fn emit_guarded(plan: &BuildPlan, registry: &Registry, request: &BuildRequest, dir: &Path) -> Vec<GuardedOutcome> {
    let programs = &request.programs;
    let compiles = &crate::Compiles::new(&request.compile_in);
    let root = SourceRoot::of_manifest(&plan.path);
    let mut outcomes = Vec::new();
    for program in plan.programs.iter().filter(|p| programs.is_empty() || programs.contains(&p.name)) {
        let emitted = guarded::preprocessor(program, registry, compiles)
            .and_then(|preprocess| guarded::emit(program, &root, &*preprocess));
        match emitted {
            Ok(sources) => {
                for source in sources {
                    let path = dir.join(source.file_name());
                    let written = path
                        .parent()
                        .map_or(Ok(()), std::fs::create_dir_all)
                        .and_then(|()| std::fs::write(&path, &source.text));
                    outcomes.push(match written {
                        Ok(()) => GuardedOutcome::Written {
                            path,
                            branches: source.branches,
                            hoisted_lines: source.hoisted_lines,
                        },
                        Err(cause) => GuardedOutcome::Failed {
                            program: program.name.clone(),
                            why: GuardedError::Write { path, cause },
                        },
                    });
                }
            }
            Err(e @ GuardedError::NoPreprocessor { .. }) if programs.is_empty() => {
                outcomes.push(GuardedOutcome::Skipped { program: program.name.clone(), why: e })
            }
            Err(why) => outcomes.push(GuardedOutcome::Failed { program: program.name.clone(), why }),
        }
    }
    outcomes
}
