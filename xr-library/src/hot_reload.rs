//! Hot reload: rebuild the programs an engine loaded when their sources
//! change on disk, for the engine to swap in between frames.
//!
//! [`HotReload::watch`] runs the same incremental build as `xr build` over
//! the programs and targets the engine uses (nothing is rebuilt if the
//! store is up to date) and learns from it every file those programs read:
//! stages, includes and the manifest. It watches their directories with
//! `notify` (directories, not files: editors save by writing a new file
//! and renaming it over the old one, which ends a watch on the file).
//!
//! [`HotReload::poll`], called between frames, never blocks while nothing
//! changed. Once a watched file changed and no further change came for
//! [`HotReload::QUIET`] (an editor's save is several events), it runs the
//! build again: the journal's keys rebuild exactly the artifacts whose
//! inputs changed, and the new objects are in the store before the catalog
//! names them. It then rereads the catalog and says which programs have new
//! objects; the engine loads those again and swaps them in
//! ([`crate::library::DeviceLoader::load`]). A program whose build failed is
//! not among them: the engine keeps the last good one running (and the
//! catalog keeps its last good objects, marked stale, so loading it again
//! draws the same), and each distinct error is reported once, with its file
//! and line as the compiler gave them. Fixing the file makes the next poll
//! swap again.

use crate::library::{LibraryError, ShaderLibrary};
use notify::{RecursiveMode, Watcher};
use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
    sync::{Mutex, mpsc},
    time::{Duration, Instant},
};
use xr_build::paths::{SourceRoot, absolute};
use xr_build::{
    BuildRequest,
    config::{Asked, BuildEnv},
    invocation::{self, Invocation, InvocationError},
};
use xr_host::Registry;
use xr_sourcebuild::Severity;

/// Why watching could not start.
#[derive(Debug, thiserror::Error)]
pub enum HotReloadError {
    /// The manifest could not be read, or the build could not run.
    #[error(transparent)]
    Build(#[from] InvocationError),
    /// The file watcher could not start or watch a directory.
    #[error("cannot watch {path} for changes: {message}")]
    Watch {
        /// The directory.
        path: String,
        /// Why.
        message: String,
    },
    /// The library could not reread its catalog.
    #[error(transparent)]
    Library(#[from] LibraryError),
    /// The environment asks for a build that cannot be made (a shared
    /// cache that cannot be set up, say).
    #[error("{manifest}: {message}")]
    Config {
        /// The manifest watched.
        manifest: String,
        /// Why.
        message: String,
    },
}

/// What one reload did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reload {
    /// The watched files that changed.
    pub changed: Vec<PathBuf>,
    /// Artifacts built again.
    pub built: usize,
    /// Programs with new objects in the catalog, built without error: load
    /// them again and swap them in.
    pub swapped: Vec<String>,
    /// Programs whose build failed: keep their last good program.
    pub failed: Vec<String>,
    /// Each distinct error once, as the compiler reported it (file:line).
    pub errors: Vec<String>,
    /// Polls (frames, for an engine that polls once a frame) between the
    /// one that first saw the change and this one.
    pub polls_waited: u32,
}

/// Watches the sources of a set of programs and rebuilds them when they change.
pub struct HotReload {
    /// As the engine spelled it: file names reach the objects' debug
    /// information, so `xr build -m` with the same spelling shares them.
    manifest: PathBuf,
    request: BuildRequest,
    watcher: notify::RecommendedWatcher,
    events: mpsc::Receiver<PathBuf>,
    directories: BTreeSet<PathBuf>,
    inputs: BTreeSet<PathBuf>,
    changed: BTreeSet<PathBuf>,
    last_event: Option<Instant>,
    polls_waited: u32,
}

impl HotReload {
    /// How long the files must stay unchanged before a rebuild.
    pub const QUIET: Duration = Duration::from_millis(40);

    /// Starts watching the inputs of `programs` (all of the manifest's when
    /// empty) built for `targets` (each program's own when empty), after
    /// bringing them up to date in the manifest's store.
    pub fn watch(
        manifest: &Path,
        registry: &Registry,
        programs: &[String],
        targets: &[String],
    ) -> Result<Self, HotReloadError> {
        let (sender, events) = mpsc::channel();
        let sender = Mutex::new(sender);
        let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            // Opens and reads (the build's own among them) are not changes.
            if let Ok(event) = event
                && !matches!(event.kind, notify::EventKind::Access(_))
                && let Ok(sender) = sender.lock()
            {
                for path in event.paths {
                    let _ = sender.send(path);
                }
            }
        })
        .map_err(|e| HotReloadError::Watch { path: manifest.display().to_string(), message: e.to_string() })?;
        // In this process: the engine's own registry builds.
        let asked = Asked { programs: programs.to_vec(), targets: targets.to_vec(), ..Asked::default() };
        let resolved = asked
            .resolve(&BuildEnv::read(), &[])
            .map_err(|e| HotReloadError::Config { manifest: manifest.display().to_string(), message: e.to_string() })?;
        for warning in &resolved.warnings {
            tracing::warn!("{warning}");
        }
        let request = resolved.request;
        let mut reload = Self {
            manifest: manifest.to_path_buf(),
            request,
            watcher,
            events,
            directories: BTreeSet::new(),
            inputs: BTreeSet::new(),
            changed: BTreeSet::new(),
            last_event: None,
            polls_waited: 0,
        };
        let first = reload.rebuild(registry)?;
        if !first.errors.is_empty() {
            tracing::warn!("hot reload: the programs do not all build now: {}", first.errors.join("\n"));
        }
        Ok(reload)
    }

    /// The files watched: every input of the programs, and the manifest.
    pub fn inputs(&self) -> impl Iterator<Item = &Path> {
        self.inputs.iter().map(PathBuf::as_path)
    }

    /// Between frames: `None` while nothing changed (or changes are still
    /// coming in); after a change, the rebuild's result, with `library`'s
    /// catalog reread.
    pub fn poll(&mut self, registry: &Registry, library: &mut ShaderLibrary) -> Option<Reload> {
        while let Ok(path) = self.events.try_recv() {
            let path = absolute(&path);
            if self.inputs.contains(&path) {
                self.changed.insert(path);
                self.last_event = Some(Instant::now());
            }
        }
        if self.changed.is_empty() {
            return None;
        }
        if self.last_event.is_some_and(|t| t.elapsed() < Self::QUIET) {
            self.polls_waited += 1;
            return None;
        }
        let changed: Vec<PathBuf> = std::mem::take(&mut self.changed).into_iter().collect();
        let polls_waited = std::mem::take(&mut self.polls_waited);
        let mut reload = match self.rebuild(registry) {
            Ok(reload) => reload,
            // Each mistake of the manifest its own error, at its line.
            Err(HotReloadError::Build(InvocationError::Manifest { reports, .. })) => {
                Reload { errors: reports.iter().map(|r| r.headline()).collect(), ..Reload::default() }
            }
            Err(e) => Reload { errors: vec![e.to_string()], ..Reload::default() },
        };
        reload.changed = changed;
        reload.polls_waited = polls_waited;
        match library.reread_catalog() {
            Ok(updated) => {
                reload.swapped = updated.into_iter().filter(|p| !reload.failed.contains(p)).collect();
            }
            Err(e) => reload.errors.push(e.to_string()),
        }
        Some(reload)
    }

    /// Builds the request, watches what it read; the result without `changed` or `swapped`.
    fn rebuild(&mut self, registry: &Registry) -> Result<Reload, HotReloadError> {
        // Keep watching the manifest and what the last build read even if this one stops early.
        self.watch_file(&absolute(&self.manifest))?;
        // The same path as `xr build` and a build script, with the engine's registry.
        let invocation = Invocation {
            manifest: self.manifest.clone(),
            store: None,
            request: self.request.clone(),
            plugin_dirs: registry.searched().to_vec(),
            emit_guarded: None,
        };
        let finished = invocation::run(&invocation, Some(registry), &invocation::Silent)?;
        // The build names its inputs relative to the manifest's directory.
        let root = SourceRoot::of_manifest(&self.manifest);
        for file in finished.summary.inputs.keys() {
            self.watch_file(&absolute(&root.on_disk(file)))?;
        }
        // Stage files of a program that failed to compile may not be in the
        // build's inputs: watch every stage the manifest names.
        for program in &finished.manifest.programs {
            if self.request.programs.is_empty() || self.request.programs.contains(&program.name) {
                for stage in &program.stages {
                    self.watch_file(&absolute(&stage.file))?;
                }
            }
        }
        let mut failed: Vec<String> =
            finished.summary.failed.iter().filter_map(|f| f.artifact.as_ref()).map(|a| a.program.clone()).collect();
        failed.sort();
        failed.dedup();
        // One line per distinct error, as `xr build` reports them.
        let errors = finished
            .reports
            .iter()
            .filter(|r| r.severity() == Severity::Error)
            .map(|report| match report.artifacts.len() {
                0 | 1 => report.headline(),
                n => format!("{} (in {n} artifacts)", report.headline()),
            })
            .collect();
        Ok(Reload { built: finished.summary.built, failed, errors, ..Reload::default() })
    }

    fn watch_file(&mut self, file: &Path) -> Result<(), HotReloadError> {
        self.inputs.insert(file.to_path_buf());
        let Some(directory) = file.parent() else { return Ok(()) };
        if self.directories.insert(directory.to_path_buf()) {
            self.watcher
                .watch(directory, RecursiveMode::NonRecursive)
                .map_err(|e| HotReloadError::Watch { path: directory.display().to_string(), message: e.to_string() })?;
        }
        Ok(())
    }
}
