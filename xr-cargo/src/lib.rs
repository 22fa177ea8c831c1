//! XR in a cargo build script: a manifest built into a store under
//! `OUT_DIR` as `xr build` builds it (the same path, [`xr_build::invocation`]:
//! worker processes, the journal, the no-op stamp), with cargo told what to
//! watch and what went wrong, and typed Rust bindings of the programs
//! written beside it for the crate to `include!`.
//!
//! ```text
//! // build.rs
//! fn main() {
//!     xr_cargo::Build::new("shaders/xr.toml").bindings("shaders.rs").compile();
//! }
//! ```
//!
//! ```ignore
//! // src/lib.rs
//! include!(concat!(env!("OUT_DIR"), "/shaders.rs"));
//! ```
//!
//! Cargo reruns the script exactly when something the build read changed:
//! it prints `cargo:rerun-if-changed=` for the manifest, every file a
//! compile read (stage files, includes, Slang modules) and every plugin
//! loaded, and `cargo:rerun-if-env-changed=` for every environment variable
//! the build read, by XR or by a plugin (`xr_host::Registry::environment_read`:
//! every read goes through one recording reader, so no variable is left
//! off by a list kept by hand). Each distinct diagnostic is one
//! `cargo:warning=` line (`file:line:column: error: message`), and a build
//! with errors fails the script with their count.
//!
//! The compilers are plugins: linked into the build script
//! ([`Build::compiler`], with the plugin crates as build-dependencies; no
//! search, no environment variable), or found on disk as `xr` finds them
//! (`XR_PLUGIN_PATH`, the user's and the installation's directories, and
//! the crate's own profile directory for a workspace that builds its
//! plugin crates), or both.
//!
//! The build's compiles run in worker processes, which are this build
//! script started again with [`WORKER_FLAG`]: [`Build::try_compile`] serves as a
//! worker when started so, so call it before the script prints anything.
//! [`Build::compile`] panics with the error, as `cc` does;
//! [`Build::try_compile`] returns it.

use std::{
    io::Write,
    path::{Path, PathBuf},
};
use xr_build::{
    BuildPlan, bindgen,
    config::{Asked, BuildEnv, WorkerStart},
    invocation::{self, Invocation, InvocationError},
    paths::SourceRoot,
};
use xr_host::{LinkedPlugin, Registry, RegistryError};
use xr_worker::serve;

/// The first argument of a build script started as a compiler worker.
pub const WORKER_FLAG: &str = "--xr-cargo-worker";

/// Why the shaders were not built.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Neither a store was given nor `OUT_DIR` set (not in a build script).
    #[error("no store given and OUT_DIR is not set: call Build::store outside a build script")]
    NoStore,
    /// The manifest has mistakes (each printed as a warning).
    #[error("{manifest}: {count} {} in the manifest", if *count == 1 { "mistake" } else { "mistakes" })]
    Manifest {
        /// The manifest.
        manifest: String,
        /// How many.
        count: usize,
    },
    /// Something failed to build (each error printed as a warning).
    #[error(
        "{manifest}: {failed} failed to build ({errors} distinct {})",
        if *errors == 1 { "error" } else { "errors" }
    )]
    Failed {
        /// The manifest.
        manifest: String,
        /// Failed artifacts and refused programs.
        failed: usize,
        /// Distinct errors.
        errors: usize,
    },
    /// No plugin was found where they are looked for.
    #[error(
        "no XR plugin found in {searched}: link the compiler crates into the build script (build-dependencies, \
         Build::compiler(xr_compiler_vk_spirv::PLUGIN)), install XR's plugins, name their directory in \
         XR_PLUGIN_PATH, or build a workspace's own plugin crates before the crate whose build script builds shaders"
    )]
    NoPlugins {
        /// The directories searched.
        searched: String,
    },
    /// A compiler linked into the build script was refused.
    #[error(transparent)]
    Linked(#[from] RegistryError),
    /// What the build asks for cannot be set up: the shared cache named
    /// (or `XR_REMOTE`'s), a farm, upload with no shared cache.
    #[error("the build's configuration: {0}")]
    Config(#[from] xr_build::config::ConfigError),
    /// The build could not start.
    #[error(transparent)]
    Invocation(#[from] InvocationError),
    /// The bindings could not be made.
    #[error(transparent)]
    Bindgen(#[from] bindgen::BindgenError),
    /// A file could not be written.
    #[error("writing {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// What a build script's build did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Built {
    /// The store.
    pub store: PathBuf,
    /// The bindings' file, when asked for.
    pub bindings: Option<PathBuf>,
    /// Artifacts compiled now.
    pub built: usize,
    /// Artifacts reused from the store.
    pub reused: usize,
    /// The build stamp held: nothing compiled, no plugin loaded.
    pub up_to_date: bool,
    /// Objects compiled again for their reflection (the bindings).
    pub reflected: usize,
}

impl Built {
    /// Leaves what was done in `xr-cargo.json` beside the store, for a
    /// person (or a test) asking what the last run of the script did:
    /// cargo keeps a script's output only in its own directory.
    fn write_summary(&self, store: &Path) {
        let summary = format!(
            "{{\"built\": {}, \"reused\": {}, \"up_to_date\": {}, \"reflected\": {}}}\n",
            self.built, self.reused, self.up_to_date, self.reflected
        );
        let _ = std::fs::write(store.with_file_name("xr-cargo.json"), summary);
    }
}

/// A manifest to build from a build script.
#[derive(Clone, Debug)]
pub struct Build {
    manifest: PathBuf,
    store: Option<PathBuf>,
    plugin_dirs: Vec<PathBuf>,
    linked: Vec<LinkedPlugin>,
    programs: Vec<String>,
    targets: Vec<String>,
    bindings: Option<String>,
    bindings_targets: Vec<String>,
    jobs: Option<usize>,
    #[cfg(feature = "remote-cache")]
    remote: Option<String>,
}

impl Build {
    /// The manifest at `manifest` (relative to the package's directory,
    /// the build script's working directory).
    pub fn new(manifest: impl Into<PathBuf>) -> Self {
        Self {
            manifest: manifest.into(),
            store: None,
            plugin_dirs: Vec::new(),
            linked: Vec::new(),
            programs: Vec::new(),
            targets: Vec::new(),
            bindings: None,
            bindings_targets: Vec::new(),
            jobs: None,
            #[cfg(feature = "remote-cache")]
            remote: None,
        }
    }

    /// Build into this store instead of `$OUT_DIR/xr-store`.
    pub fn store(mut self, dir: impl Into<PathBuf>) -> Self {
        self.store = Some(dir.into());
        self
    }

    /// Load plugins from this directory (repeatable) instead of searching
    /// as `xr` does (`XR_PLUGIN_PATH`, the user's, the installation's).
    pub fn plugin_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.plugin_dirs.push(dir.into());
        self
    }

    /// Build with this plugin linked into the build script (repeatable):
    /// its crate's `PLUGIN`, the crate a build-dependency with
    /// `default-features = false` (two plugin crates linked into one
    /// program without that refuse to link). With a linked plugin, no
    /// directory is searched but those given with [`Build::plugin_dir`].
    ///
    /// ```ignore
    /// xr_cargo::Build::new("shaders/xr.toml").compiler(xr_compiler_vk_spirv::PLUGIN).compile();
    /// ```
    pub fn compiler(mut self, plugin: LinkedPlugin) -> Self {
        self.linked.push(plugin);
        self
    }

    /// Build only this program (repeatable).
    pub fn program(mut self, name: impl Into<String>) -> Self {
        self.programs.push(name.into());
        self
    }

    /// Build only this target (repeatable).
    pub fn target(mut self, name: impl Into<String>) -> Self {
        self.targets.push(name.into());
        self
    }

    /// Read this shared cache before building (`xr build --remote`'s URLs;
    /// default: `XR_REMOTE`). Feature `remote-cache`.
    #[cfg(feature = "remote-cache")]
    pub fn remote(mut self, url: impl Into<String>) -> Self {
        self.remote = Some(url.into());
        self
    }

    /// Compile with this many threads (default: one per core).
    pub fn jobs(mut self, jobs: usize) -> Self {
        self.jobs = Some(jobs);
        self
    }

    /// Also write the programs' typed bindings to `$OUT_DIR/<file_name>`.
    pub fn bindings(mut self, file_name: impl Into<String>) -> Self {
        self.bindings = Some(file_name.into());
        self
    }

    /// Reflect the bindings from this target only (repeatable; default:
    /// every target of each program, which must agree).
    pub fn bindings_target(mut self, name: impl Into<String>) -> Self {
        self.bindings_targets.push(name.into());
        self
    }

    /// [`Build::try_compile`], panicking with its error: what a `build.rs`
    /// calls (cargo shows a build script's panic with its output).
    /// Diagnostics are printed as cargo warnings first.
    pub fn compile(self) -> Built {
        match self.try_compile() {
            Ok(built) => built,
            Err(error) => panic!("xr-cargo: {error}"),
        }
    }

    /// Builds the manifest, printing cargo's directives on standard
    /// output; serves as a compiler worker instead (and exits) when the
    /// process was started as one.
    pub fn try_compile(self) -> Result<Built, Error> {
        serve_if_worker(&self.linked);
        let out_dir = std::env::var_os("OUT_DIR").map(PathBuf::from);
        let store =
            self.store.clone().or_else(|| out_dir.as_ref().map(|d| d.join("xr-store"))).ok_or(Error::NoStore)?;
        let plugin_dirs = match (self.plugin_dirs.is_empty(), self.linked.is_empty()) {
            (true, true) => default_plugin_dirs(),
            _ => self.plugin_dirs.clone(),
        };
        let cargo = Directives::new();
        cargo.rerun_if_changed(&xr_build::paths::absolute(&self.manifest));
        // The plugins that load, not every shared library of their
        // directories: the profile directory holds the crate's own cdylibs
        // too, which change with every build of it.
        let mut registry = Registry::linked(self.linked.iter().copied())?;
        for dir in &plugin_dirs {
            registry.load_dir(dir);
        }
        if registry.plugins().is_empty() {
            let searched: Vec<String> = plugin_dirs.iter().map(|d| d.display().to_string()).collect();
            return Err(Error::NoPlugins { searched: searched.join(", ") });
        }
        // Each plugin file loaded is watched: cargo reruns the script when it
        // is rebuilt or replaced (a linked one is part of the script itself).
        for plugin in registry.plugins().iter().filter(|p| !p.linked) {
            cargo.rerun_if_changed(&plugin.path);
        }
        // Workers search only the directories a plugin loaded from: not
        // cargo's deps/ again where the profile directory held them.
        let plugin_dirs: Vec<PathBuf> = plugin_dirs
            .into_iter()
            .filter(|dir| registry.plugins().iter().any(|p| p.path.parent() == Some(dir.as_path())))
            .collect();
        let manifest_name = self.manifest.display().to_string();
        let asked = Asked {
            jobs: self.jobs,
            targets: self.targets.clone(),
            programs: self.programs.clone(),
            #[cfg(feature = "remote-cache")]
            remote: self.remote.clone(),
            // The shared cache XR_REMOTE names, as before; never a farm (its
            // actions run xr's own tool, which a build script is not).
            remote_from_environment: true,
            // Worker processes of this very build script (in process when its own path is unknown).
            worker: std::env::current_exe().ok().map(|program| WorkerStart { program, args: vec![WORKER_FLAG.into()] }),
            ..Asked::default()
        };
        let resolved = asked.resolve(&BuildEnv::read(), &plugin_dirs).map_err(Error::from);
        // Every variable this build read, by XR or a plugin, reruns the
        // script when it changes: told even when the build fails below.
        let watch_environment = |registry: &Registry| {
            for variable in registry.environment_read() {
                cargo.line(&format!("rerun-if-env-changed={variable}"));
            }
        };
        let resolved = match resolved {
            Ok(resolved) => resolved,
            Err(error) => {
                watch_environment(&registry);
                return Err(error);
            }
        };
        for warning in &resolved.warnings {
            cargo.warning(warning);
        }
        let request = resolved.request;
        // Reflections for the bindings compile where the build's compiles do.
        let compiles = xr_build::Compiles::new(&request.compile_in);
        let invocation = Invocation {
            manifest: self.manifest.clone(),
            store: Some(store.clone()),
            request,
            plugin_dirs: plugin_dirs.clone(),
            emit_guarded: None,
        };
        // No progress: cargo shows a build script's output only when it fails.
        let finished = invocation::run(&invocation, Some(&registry), &invocation::Silent);
        watch_environment(&registry);
        let finished = match finished {
            Ok(finished) => finished,
            Err(InvocationError::Manifest { reports, .. }) => {
                for report in &reports {
                    cargo.warning(&report.headline());
                }
                return Err(Error::Manifest { manifest: manifest_name, count: reports.len() });
            }
            Err(other) => return Err(other.into()),
        };
        for report in finished.manifest_warnings.iter().chain(&finished.reports) {
            cargo.warning(&report.headline());
        }
        // What every artifact read: paths named from the manifest's directory.
        let root = SourceRoot::of_manifest(&finished.manifest.path);
        for file in finished.summary.inputs.keys() {
            cargo.rerun_if_changed(&root.on_disk(file));
        }
        for program in &finished.manifest.programs {
            for stage in &program.stages {
                cargo.rerun_if_changed(&stage.file);
            }
        }
        if finished.failed() > 0 {
            return Err(Error::Failed { manifest: manifest_name, failed: finished.failed(), errors: finished.errors });
        }
        let mut built = Built {
            store: store.clone(),
            bindings: None,
            built: finished.summary.built,
            reused: finished.summary.reused,
            up_to_date: finished.up_to_date,
            reflected: 0,
        };
        if let Some(file_name) = &self.bindings {
            let dir = out_dir.unwrap_or_else(|| store.with_file_name("bindings"));
            let path = dir.join(file_name);
            // A build found up to date made no plan: the same resolution, now.
            let plan = finished.plan.unwrap_or_else(|| BuildPlan::new(finished.manifest, &registry));
            // The targets built, unless the bindings name their own.
            let targets = if self.bindings_targets.is_empty() { &self.targets } else { &self.bindings_targets };
            let bindings = bindgen::bindings(&plan, &registry, &compiles, &self.programs, targets)?;
            let code = bindgen::write_rust(&bindings, &manifest_name);
            write_if_changed(&path, &code)
                .map_err(|source| Error::Write { path: path.display().to_string(), source })?;
            built.reflected = bindings.reflected;
            built.bindings = Some(path);
        }
        built.write_summary(&store);
        Ok(built)
    }
}

/// `xr`'s search, then the directory cargo writes this build's binaries
/// and cdylibs to (`target/debug` of `$OUT_DIR`) and its `deps/`: where a
/// workspace that builds its own plugin libraries has them (cargo orders
/// nothing for that: a build script that must find them links its
/// compilers instead, [`Build::compiler`]).
pub fn default_plugin_dirs() -> Vec<PathBuf> {
    let mut dirs = Registry::default_dirs();
    let out_dir = std::env::var_os("OUT_DIR").map(PathBuf::from);
    // OUT_DIR is <profile dir>/build/<package>-<hash>/out.
    if let Some(profile_dir) = out_dir.as_deref().and_then(|d| d.ancestors().nth(3)) {
        for dir in [profile_dir.to_owned(), profile_dir.join("deps")] {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    dirs
}

/// Cargo's directives, on standard output.
struct Directives;

impl Directives {
    fn new() -> Self {
        Self
    }

    fn line(&self, directive: &str) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "cargo:{directive}");
    }

    fn rerun_if_changed(&self, path: &Path) {
        self.line(&format!("rerun-if-changed={}", path.display()));
    }

    /// One warning line: cargo shows one line per directive.
    fn warning(&self, message: &str) {
        self.line(&format!("warning={}", message.replace('\n', " ")));
    }
}

/// Serves compiles and exits when this process is a worker: started with
/// [`WORKER_FLAG`], then `--plugin-dir DIR` pairs and `--memory-limit BYTES`.
fn serve_if_worker(linked: &[LinkedPlugin]) {
    let mut args = std::env::args_os().skip(1);
    if args.next().is_none_or(|flag| flag != WORKER_FLAG) {
        return;
    }
    let (mut plugin_dirs, mut memory_limit) = (Vec::new(), None);
    while let Some(arg) = args.next() {
        match (arg.to_str(), args.next()) {
            (Some("--plugin-dir"), Some(dir)) => plugin_dirs.push(PathBuf::from(dir)),
            (Some("--memory-limit"), Some(bytes)) => memory_limit = bytes.to_str().and_then(|b| b.parse().ok()),
            _ => {}
        }
    }
    let status = match serve::run_worker_with(linked, plugin_dirs, memory_limit) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("xr-cargo worker: {e}");
            1
        }
    };
    std::process::exit(status);
}

/// Writes `text` to `path` unless it holds it already: an unchanged
/// bindings file keeps its time, so that cargo does not rebuild the crate
/// that includes it.
fn write_if_changed(path: &Path, text: &str) -> std::io::Result<()> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let temp = path.with_extension(format!("{}.tmp", std::process::id()));
    std::fs::write(&temp, text)?;
    std::fs::rename(&temp, path)
}
