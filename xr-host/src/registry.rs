//! Finds XR plugins on disk and loads them.
//!
//! Directories are searched in this order ([`Registry::default_dirs`]):
//!
//! 1. `XR_PLUGIN_PATH` (separated like `PATH`);
//! 2. the user's own, `$XDG_DATA_HOME/xr/plugins` (by default
//!    `~/.local/share/xr/plugins`);
//! 3. the installation's, `lib/xr/plugins` beside the executable's `bin`
//!    (`<exe dir>/../lib/xr/plugins`), so an installed `xr` finds its
//!    plugins without any variable;
//! 4. the executable's own directory (a checkout's `target/debug`).
//!
//! Every shared library there is tried; one that is not an XR plugin, or was
//! built against another interface, is skipped with a one-line reason and
//! the others still load. A plugin found twice is taken from the first
//! directory; the second copy is skipped with an info line naming both.
//!
//! A plugin can also be linked into the program ([`Registry::link`]): the
//! crate's root module registered in process, through the same interface,
//! version and layout checks as a file's, with no search. A linked plugin
//! comes first: a file of the same plugin found later is skipped, said
//! once.

use abi_stable::library::{LibHeader, LibraryError, RawLibrary, RootModuleError, lib_header_from_raw_library};
use abi_stable::std_types::RVec;
use std::{
    env,
    path::{Path, PathBuf},
};
use xr_device::{
    DeviceBox, DeviceCapabilities, DeviceKind, DeviceOptions, DeviceSystemBox, DeviceSystemInfo, XrError, XrResult,
};
use xr_plugin::{
    INTERFACE_VERSIONS, INTERFACES_SYMBOL, InterfaceVersions, LinkedPlugin, XrPluginRef, check_interfaces,
};
use xr_sourcebuild::{AttachedBuildSystemBox, Availability, BuildSystemInfo, ShaderStage, SourceBuildSystemBox};

/// The environment variable listing plugin directories.
pub const PLUGIN_PATH_VAR: &str = "XR_PLUGIN_PATH";

/// Where an installation keeps its plugins, relative to its prefix.
pub const INSTALLED_PLUGIN_DIR: &str = "lib/xr/plugins";

/// The user's plugin directory: `$XDG_DATA_HOME/xr/plugins`, else
/// `$HOME/.local/share/xr/plugins` (the XDG base directory default); none
/// without either variable. A relative `XDG_DATA_HOME` is ignored, as the
/// XDG specification asks.
pub fn user_plugin_dir() -> Option<PathBuf> {
    let data_home = xr_env::var_os("XDG_DATA_HOME").map(PathBuf::from).filter(|p| p.is_absolute()).or_else(|| {
        xr_env::var_os("HOME").filter(|h| !h.is_empty()).map(|home| Path::new(&home).join(".local/share"))
    })?;
    Some(data_home.join("xr/plugins"))
}

/// The directories of the search order that need not exist: the user's
/// and the installation's (a missing `XR_PLUGIN_PATH` entry is reported).
fn optional_dirs() -> Vec<PathBuf> {
    let installed = exe_dir().as_deref().and_then(installed_plugin_dir);
    user_plugin_dir().into_iter().chain(installed).collect()
}

/// The running executable's directory.
fn exe_dir() -> Option<PathBuf> {
    env::current_exe().ok().and_then(|exe| exe.parent().map(Path::to_path_buf))
}

/// The installation's plugin directory for an executable in `exe_dir`
/// (`<prefix>/bin` → `<prefix>/lib/xr/plugins`).
fn installed_plugin_dir(exe_dir: &Path) -> Option<PathBuf> {
    exe_dir.parent().map(|prefix| prefix.join(INSTALLED_PLUGIN_DIR))
}

/// The search order from its parts: `plugin_path` (`XR_PLUGIN_PATH`'s
/// value), the user's directory, then the installation's and the
/// executable's directories, derived from `exe_dir`.
pub fn search_order(
    plugin_path: Option<std::ffi::OsString>,
    user_dir: Option<PathBuf>,
    exe_dir: Option<PathBuf>,
) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = plugin_path
        .map(|value| env::split_paths(&value).filter(|p| !p.as_os_str().is_empty()).collect())
        .unwrap_or_default();
    dirs.extend(user_dir);
    if let Some(exe_dir) = exe_dir {
        dirs.extend(installed_plugin_dir(&exe_dir));
        dirs.push(exe_dir);
    }
    dirs
}

/// A plugin that loaded, with what it provides.
pub struct LoadedPlugin {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The file it came from; for a linked plugin, the program it is
    /// linked into (what changes when it does).
    pub path: PathBuf,
    /// Linked into the program ([`Registry::link`]), not loaded from a file.
    pub linked: bool,
    /// Its device systems, with what each said about itself.
    pub device_systems: Vec<(DeviceSystemInfo, DeviceSystemBox)>,
    /// Its build systems, with what each said about itself.
    pub build_systems: Vec<(BuildSystemInfo, SourceBuildSystemBox)>,
    /// The record of environment variables its own copy of `xr_env` keeps
    /// (a plugin file's; a linked plugin shares the program's record, and a
    /// plugin built before the record exported it has none).
    names_read: Option<xr_env::ForEachNameRead>,
}

/// An open device with a build system attached to it. Fields drop in
/// order: the build system first, while its device is still open (it may
/// save caches and release objects then).
pub struct AttachedDevice {
    /// The build system attached to it.
    pub compiler: AttachedBuildSystemBox,
    /// The device.
    pub device: DeviceBox,
    /// Its capabilities, read when it opened.
    pub capabilities: DeviceCapabilities,
}

/// A file or directory the registry passed over, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedFile {
    /// The file or directory.
    pub path: PathBuf,
    /// One line saying why.
    pub reason: String,
}

/// Errors of the registry's selection calls.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// No plugin provides a device system of the kind.
    #[error(
        "no device system for {} was found (linked into this program: {linked}; searched: {searched}): link the device \
         plugin's crate and register it with Registry::link, or put its library in one of those directories or in \
         a directory named by XR_PLUGIN_PATH (docs/INSTALL.md)",
        kind.name()
    )]
    NoDeviceSystem {
        /// The kind asked for.
        kind: DeviceKind,
        /// The plugins linked into the program ("none" when none are).
        linked: String,
        /// The directories searched.
        searched: String,
    },
    /// A plugin call failed.
    #[error(transparent)]
    Plugin(#[from] XrError),
    /// Every device system of the kind failed to open a device.
    #[error("no {} device could be opened: {failures}", kind.name())]
    NoDevice {
        /// The kind asked for.
        kind: DeviceKind,
        /// Each device system's error.
        failures: String,
    },
    /// No build system matches the request.
    #[error("no build system attaches to {} with {availability} for {language}", kind.name())]
    NoBuildSystem {
        /// The device kind asked for.
        kind: DeviceKind,
        /// The flags asked for.
        availability: Availability,
        /// The language asked for.
        language: String,
    },
    /// No build system compiles the language into the target.
    #[error("no plugin compiles {language} into {target} (the plugins found compile: {offered})")]
    NoCompiler {
        /// The language.
        language: String,
        /// The target.
        target: String,
        /// Every (language → target) pair the plugins offer.
        offered: String,
    },
    /// A plugin linked into the program was refused.
    #[error("the plugin linked from crate {plugin} was refused: {reason}")]
    Linked {
        /// Its crate.
        plugin: String,
        /// Why.
        reason: String,
    },
    /// Two build systems of the same priority compile the same pair.
    #[error(
        "two build systems compile {language} into {target} with the same priority {priority}: {first} and {second} (remove one from the plugin path)"
    )]
    AmbiguousCompiler {
        /// The language.
        language: String,
        /// The target.
        target: String,
        /// One build system.
        first: String,
        /// The other.
        second: String,
        /// Their priority.
        priority: i32,
    },
}

/// Every plugin found, and every file passed over.
#[derive(Default)]
pub struct Registry {
    plugins: Vec<LoadedPlugin>,
    skipped: Vec<SkippedFile>,
    searched: Vec<PathBuf>,
}

impl Registry {
    /// The directories [`Registry::discover`] searches, in order:
    /// `XR_PLUGIN_PATH`, the user's `$XDG_DATA_HOME/xr/plugins`, the
    /// installation's `<exe dir>/../lib/xr/plugins`, the executable's
    /// directory (see the module documentation).
    pub fn default_dirs() -> Vec<PathBuf> {
        search_order(xr_env::var_os(PLUGIN_PATH_VAR), user_plugin_dir(), exe_dir())
    }

    /// Loads the plugins of [`Registry::default_dirs`].
    pub fn discover() -> Self {
        Self::load_dirs(Self::default_dirs())
    }

    /// Loads every plugin in `dirs`, in order; a plugin name seen before is skipped.
    pub fn load_dirs(dirs: impl IntoIterator<Item = PathBuf>) -> Self {
        let mut registry = Self::default();
        for dir in dirs {
            registry.load_dir(&dir);
        }
        registry
    }

    /// Loads every plugin in one directory.
    pub fn load_dir(&mut self, dir: &Path) {
        if self.searched.iter().any(|d| d == dir) {
            return;
        }
        self.searched.push(dir.to_path_buf());
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && optional_dirs().iter().any(|d| d == dir) => {
                // The user's and the installation's directories are there only when used.
                tracing::debug!(path = %dir.display(), "no plugin directory here");
                return;
            }
            Err(e) => {
                let reason = if e.kind() == std::io::ErrorKind::NotFound {
                    "plugin directory does not exist".to_owned()
                } else {
                    format!("plugin directory cannot be read: {e}")
                };
                self.skip(dir, reason);
                return;
            }
        };
        for file in shared_libraries(entries) {
            self.load_file(&file);
        }
    }

    /// Loads one plugin file; on failure it is recorded as skipped.
    pub fn load_file(&mut self, path: &Path) {
        match load_plugin(path) {
            Ok(plugin) => {
                if let Some(first) = self.plugins.iter().find(|p| p.name == plugin.name) {
                    let (reason, line) = if first.linked {
                        (
                            format!("plugin '{}' is linked into this program", plugin.name),
                            format!(
                                "plugin '{}' is linked into this program and found in {}: the linked one is used",
                                plugin.name,
                                path.display()
                            ),
                        )
                    } else {
                        (
                            format!("plugin '{}' already loaded from {}", plugin.name, first.path.display()),
                            format!(
                                "plugin '{}' is in two plugin directories: {} is used, {} is not (search order: docs/PLUGINS.md)",
                                plugin.name,
                                first.path.display(),
                                path.display()
                            ),
                        )
                    };
                    tracing::info!("{line}");
                    self.skip(path, reason);
                } else {
                    tracing::debug!(plugin = %plugin.name, path = %path.display(), "loaded plugin");
                    self.plugins.push(plugin);
                }
            }
            Err(reason) => self.skip(path, reason),
        }
    }

    /// Registers a plugin linked into this program (its crate's `PLUGIN`),
    /// as [`Registry::load_file`] does a file's: the same interface check,
    /// the same abi_stable version and layout check, the same guarded
    /// calls. Link before searching directories: a file of the same plugin
    /// is then skipped. A second link of one plugin is an error.
    pub fn link(&mut self, plugin: LinkedPlugin) -> Result<(), RegistryError> {
        let refused = |reason: String| RegistryError::Linked { plugin: plugin.crate_name.to_owned(), reason };
        check_interfaces(plugin.interfaces, &INTERFACE_VERSIONS).map_err(refused)?;
        let header = LibHeader::from_module((plugin.root_module)());
        let module = header.init_root_module::<XrPluginRef>().map_err(|e| refused(describe_load_error(&e)))?;
        let program = env::current_exe().unwrap_or_else(|_| PathBuf::from(plugin.crate_name));
        let loaded = plugin_of_module(module, &program, true).map_err(refused)?;
        if let Some(first) = self.plugins.iter().find(|p| p.name == loaded.name) {
            let reason = match first.linked {
                true => "it is linked twice".to_owned(),
                false => format!("plugin '{}' was loaded from {} before it", loaded.name, first.path.display()),
            };
            return Err(refused(reason));
        }
        tracing::debug!(plugin = %loaded.name, "linked plugin");
        self.plugins.push(loaded);
        Ok(())
    }

    /// A registry of the plugins linked into this program, and no other.
    pub fn linked(plugins: impl IntoIterator<Item = LinkedPlugin>) -> Result<Self, RegistryError> {
        let mut registry = Self::default();
        for plugin in plugins {
            registry.link(plugin)?;
        }
        Ok(registry)
    }

    fn skip(&mut self, path: &Path, reason: String) {
        tracing::debug!(path = %path.display(), "skipped: {reason}");
        self.skipped.push(SkippedFile { path: path.to_path_buf(), reason });
    }

    /// The plugins that loaded.
    pub fn plugins(&self) -> &[LoadedPlugin] {
        &self.plugins
    }

    /// Every environment variable read so far in this process, sorted: by
    /// the program's code and linked plugins (one record) and by each plugin
    /// file loaded (each its own). What a build read is what decides whether
    /// it must run again: a build script's `rerun-if-env-changed` lines and
    /// the no-op stamp come from here, not from a list kept by hand.
    pub fn environment_read(&self) -> Vec<String> {
        let mut names: std::collections::BTreeSet<String> = xr_env::names_read().into_iter().collect();
        for function in self.plugins.iter().filter_map(|plugin| plugin.names_read) {
            // SAFETY: the function is the plugin's `xr_env::for_each_name_read`
            // (see `load_plugin`), in a library that is never unloaded.
            names.extend(unsafe { xr_env::collect_names(function) });
        }
        names.into_iter().collect()
    }

    /// The files and directories passed over, with reasons.
    pub fn skipped(&self) -> &[SkippedFile] {
        &self.skipped
    }

    /// The directories searched, in order.
    pub fn searched(&self) -> &[PathBuf] {
        &self.searched
    }

    /// Every device system of `kind`, in load order.
    pub fn device_systems(&self, kind: DeviceKind) -> impl Iterator<Item = &DeviceSystemBox> {
        self.device_system_entries(kind).map(|(_, system)| system)
    }

    /// The first device system of `kind`.
    pub fn device_system(&self, kind: DeviceKind) -> Result<&DeviceSystemBox, RegistryError> {
        self.device_systems(kind).next().ok_or_else(|| RegistryError::NoDeviceSystem {
            kind,
            linked: match self.plugins.iter().filter(|p| p.linked).map(|p| p.name.as_str()).collect::<Vec<_>>() {
                names if names.is_empty() => "none".to_owned(),
                names => names.join(", "),
            },
            searched: self.searched.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", "),
        })
    }

    /// Opens a device with the first device system of `kind` that succeeds;
    /// the errors of those that failed are in the message if none does.
    pub fn open_device(&self, kind: DeviceKind, options: &DeviceOptions) -> Result<DeviceBox, RegistryError> {
        let mut failures = Vec::new();
        for (info, system) in self.device_system_entries(kind) {
            match system.open(options).into_result() {
                Ok(device) => return Ok(device),
                Err(e) => {
                    tracing::warn!(device_system = %info.name, "could not open a device: {e}");
                    failures.push(format!("{}: {e}", info.name));
                }
            }
        }
        if failures.is_empty() {
            self.device_system(kind)?;
        }
        Err(RegistryError::NoDevice { kind, failures: failures.join("; ") })
    }

    /// Opens a device of `kind` and attaches the best build system for
    /// `availability` and `language` to it: an engine's usual first steps.
    pub fn open_attached(
        &self,
        kind: DeviceKind,
        availability: Availability,
        language: &str,
        options: &DeviceOptions,
    ) -> Result<AttachedDevice, RegistryError> {
        let build_system = self.best_build_system(kind, availability, language)?;
        self.attach_to(kind, build_system, options)
    }

    /// Opens a device of `kind` and attaches the build system named
    /// `build_system` to it.
    pub fn open_with(
        &self,
        kind: DeviceKind,
        build_system: &str,
        options: &DeviceOptions,
    ) -> Result<AttachedDevice, RegistryError> {
        let system = self.build_system_named(build_system).ok_or_else(|| {
            XrError::unavailable(format!("build system {build_system} is not among the plugins found"))
        })?;
        self.attach_to(kind, system, options)
    }

    fn attach_to(
        &self,
        kind: DeviceKind,
        build_system: &SourceBuildSystemBox,
        options: &DeviceOptions,
    ) -> Result<AttachedDevice, RegistryError> {
        let device = self.open_device(kind, options)?;
        let capabilities = device.capabilities().into_result()?;
        let handles = device.native_handles().into_result()?;
        let compiler = build_system.attach(&handles, &capabilities).into_result()?;
        Ok(AttachedDevice { device, capabilities, compiler })
    }

    fn device_system_entries(&self, kind: DeviceKind) -> impl Iterator<Item = &(DeviceSystemInfo, DeviceSystemBox)> {
        self.plugins.iter().flat_map(|p| p.device_systems.iter()).filter(move |(info, _)| info.kind == kind)
    }

    /// The device kind named `name` that a loaded device system opens:
    /// kinds come from the plugins, so a new one needs no change here.
    pub fn device_kind_named(&self, name: &str) -> Option<DeviceKind> {
        self.device_kinds().into_iter().find(|kind| kind.name() == name)
    }

    /// Every device kind the loaded device systems open, in load order, once each.
    pub fn device_kinds(&self) -> Vec<DeviceKind> {
        let mut kinds: Vec<DeviceKind> = Vec::new();
        for (info, _) in self.plugins.iter().flat_map(|p| p.device_systems.iter()) {
            if !kinds.contains(&info.kind) {
                kinds.push(info.kind);
            }
        }
        kinds
    }

    /// A device system by its name.
    pub fn device_system_named(&self, name: &str) -> Option<&DeviceSystemBox> {
        named(self.plugins.iter().flat_map(|p| p.device_systems.iter()), |info| info.name.as_str(), name)
    }

    /// Every build system that attaches to `kind`, advertises `availability`
    /// and accepts `language`, highest priority first.
    pub fn build_systems(
        &self,
        kind: DeviceKind,
        availability: Availability,
        language: &str,
    ) -> Vec<(&BuildSystemInfo, &SourceBuildSystemBox)> {
        let mut found: Vec<_> = self
            .plugins
            .iter()
            .flat_map(|p| p.build_systems.iter())
            .filter(|(info, _)| {
                info.attachable.contains(&kind) && info.availability.contains(availability) && info.accepts(language)
            })
            .map(|(info, system)| (info, system))
            .collect();
        found.sort_by_key(|(info, _)| std::cmp::Reverse(info.priority));
        found
    }

    /// The highest-priority build system for the request.
    pub fn best_build_system(
        &self,
        kind: DeviceKind,
        availability: Availability,
        language: &str,
    ) -> Result<&SourceBuildSystemBox, RegistryError> {
        self.build_systems(kind, availability, language)
            .first()
            .map(|(_, system)| *system)
            .ok_or_else(|| RegistryError::NoBuildSystem { kind, availability, language: language.to_owned() })
    }

    /// Every build system with what it says about itself, in load order.
    pub fn build_system_entries(&self) -> impl Iterator<Item = &(BuildSystemInfo, SourceBuildSystemBox)> {
        self.plugins.iter().flat_map(|p| p.build_systems.iter())
    }

    /// The build system that compiles `language` into `target` without a
    /// device. Where several do, the highest priority wins and the log names
    /// the ones passed over; two at the same highest priority are an error
    /// naming both, never a silent pick.
    pub fn offline_compiler(
        &self,
        language: &str,
        target: &str,
    ) -> Result<(&BuildSystemInfo, &SourceBuildSystemBox), RegistryError> {
        self.offline_compiler_for(language, target, &[])
    }

    /// [`Registry::offline_compiler`] among the build systems that compile
    /// every one of `stages` there: an HLSL program of ray tracing stages
    /// goes to the one that takes them, whatever the others' priority.
    /// Where none takes them all, the choice without `stages` (whose
    /// compile refuses the stage it lacks, by name). The rule is
    /// [`crate::choice::choose`], the one every front end's plan follows.
    pub fn offline_compiler_for(
        &self,
        language: &str,
        target: &str,
        stages: &[ShaderStage],
    ) -> Result<(&BuildSystemInfo, &SourceBuildSystemBox), RegistryError> {
        let candidates = self.candidates();
        let chosen = crate::choice::choose(&candidates, language, target, stages)?;
        self.build_system_entries()
            .find(|(info, _)| info.name.as_str() == chosen.name)
            .map(|(info, system)| (info, system))
            .ok_or_else(|| RegistryError::NoCompiler {
                language: language.to_owned(),
                target: target.to_owned(),
                offered: self.compile_pairs().join(", "),
            })
    }

    /// Every (build system, pair) the plugins declare, as the choice of a
    /// compiler weighs them, in load order.
    pub fn candidates(&self) -> Vec<crate::choice::Candidate> {
        let mut candidates = Vec::new();
        for plugin in &self.plugins {
            for (info, _) in &plugin.build_systems {
                for pair in info.compiles.iter() {
                    candidates.push(crate::choice::Candidate::of(info, pair, plugin.path.clone()));
                }
            }
        }
        candidates
    }

    /// Every (language → target) pair the build systems compile, as text, sorted.
    pub fn compile_pairs(&self) -> Vec<String> {
        sorted_unique(
            self.build_system_entries()
                .flat_map(|(info, _)| info.compiles.iter().map(|p| format!("{} → {}", p.language, p.target))),
        )
    }

    /// Every target some build system compiles, sorted.
    pub fn targets(&self) -> Vec<String> {
        sorted_unique(
            self.build_system_entries().flat_map(|(info, _)| info.compiles.iter().map(|p| p.target.to_string())),
        )
    }

    /// Every language some build system accepts, sorted.
    pub fn languages(&self) -> Vec<String> {
        sorted_unique(
            self.build_system_entries().flat_map(|(info, _)| info.languages.iter().map(|l| l.name.to_string())),
        )
    }

    /// A build system by its name.
    pub fn build_system_named(&self, name: &str) -> Option<&SourceBuildSystemBox> {
        named(self.plugins.iter().flat_map(|p| p.build_systems.iter()), |info| info.name.as_str(), name)
    }
}

/// The system called `name` among (info, system) entries.
fn named<'a, I: 'a, S>(
    mut entries: impl Iterator<Item = &'a (I, S)>,
    name_of: impl Fn(&I) -> &str,
    name: &str,
) -> Option<&'a S> {
    entries.find(|(info, _)| name_of(info) == name).map(|(_, system)| system)
}

fn sorted_unique(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut items: Vec<String> = items.collect();
    items.sort();
    items.dedup();
    items
}

/// The files [`Registry::load_dir`] would try to load from `dir`, sorted
/// (none if it cannot be read).
pub fn plugin_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).map(shared_libraries).unwrap_or_default()
}

fn shared_libraries(entries: std::fs::ReadDir) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> =
        entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| is_shared_library(p)).collect();
    files.sort();
    files
}

fn is_shared_library(path: &Path) -> bool {
    path.is_file()
        && path.extension().is_some_and(|ext| ext == env::consts::DLL_EXTENSION)
        && !is_cargo_dependency(path)
}

/// Whether `path` is a library cargo built as another crate's dependency
/// (a proc macro, a dylib): cargo names those `lib<crate>-<16 hex digits>`,
/// while a cdylib, which is what a plugin is, keeps its plain name. So a
/// cargo `deps/` directory can be searched without loading every proc macro.
fn is_cargo_dependency(path: &Path) -> bool {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    stem.rsplit_once('-').is_some_and(|(_, hash)| hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn load_plugin(path: &Path) -> Result<LoadedPlugin, String> {
    let library = RawLibrary::load_at(path).map_err(|e| describe_load_error(&e))?;
    check_recorded_interfaces(&library)?;
    // SAFETY: `export_linked_plugin!` defines the symbol as `xr_env::for_each_name_read`
    // itself; the pointer stays valid because the library is leaked below.
    let names_read = unsafe { library.get::<xr_env::ForEachNameRead>(xr_env::NAMES_READ_SYMBOL) }.ok().map(|f| *f);
    // SAFETY: the header's references live as long as the library, which
    // is leaked below once it is known to be a plugin (as
    // `lib_header_from_path` does); one that is refused is unloaded.
    let header = unsafe { lib_header_from_raw_library(&library) }.map_err(|e| describe_load_error(&e))?;
    std::mem::forget(library);
    let module = header.init_root_module::<XrPluginRef>().map_err(|e| describe_load_error(&e))?;
    let mut plugin = plugin_of_module(module, path, false)?;
    plugin.names_read = names_read;
    Ok(plugin)
}

/// A plugin's root module, checked, asked for what it provides.
fn plugin_of_module(module: XrPluginRef, path: &Path, linked: bool) -> Result<LoadedPlugin, String> {
    let name = module.name().to_string();
    // A linked plugin logs through the program's own subscriber already;
    // a sink would send its events back into it, round and round.
    if !linked {
        (module.set_log_sink())(xr_device::host_log_sink());
    }

    // The plugin guards its own entry points: a panic crossing them would abort.
    let device_systems = described((module.device_systems())(), |s| s.info(), "device system", &name)?;
    let build_systems = described((module.build_systems())(), |s| s.info(), "build system", &name)?;
    Ok(LoadedPlugin {
        name,
        version: module.version().to_string(),
        path: path.to_path_buf(),
        linked,
        device_systems,
        build_systems,
        names_read: None,
    })
}

/// Refuses a plugin that recorded interface versions other than this host's,
/// in one line naming both, before abi_stable compares layouts (whose error
/// for the same plugin is a page of types). A library without the record —
/// not an XR plugin, or one built before plugins recorded their versions —
/// is left to abi_stable's checks.
fn check_recorded_interfaces(library: &RawLibrary) -> Result<(), String> {
    // SAFETY: `export_plugin!` defines this symbol as `extern "C" fn() ->
    // &'static InterfaceVersions`, a `#[repr(C)]` struct whose layout never
    // changes; a library that exports the name is taken to be such a plugin.
    let versions = unsafe {
        match library.get::<extern "C" fn() -> &'static InterfaceVersions>(INTERFACES_SYMBOL) {
            Ok(interfaces) => *interfaces(),
            Err(_) => return Ok(()),
        }
    };
    check_interfaces(&versions, &INTERFACE_VERSIONS)
}

/// Pairs each system a plugin lists with what it says about itself.
fn described<S, I>(
    listed: XrResult<RVec<S>>,
    info: impl Fn(&S) -> XrResult<I>,
    what: &str,
    plugin: &str,
) -> Result<Vec<(I, S)>, String> {
    let failed = |list: &str, e: XrError| format!("plugin '{plugin}' failed to list its {list}: {e}");
    listed
        .into_result()
        .map_err(|e| failed(&format!("{what}s"), e))?
        .into_iter()
        .map(|system| info(&system).into_result().map(|i| (i, system)).map_err(|e| failed(&format!("{what} info"), e)))
        .collect()
}

/// One line out of abi_stable's load errors (a layout mismatch prints pages).
fn describe_load_error(error: &LibraryError) -> String {
    match error {
        LibraryError::OpenError { err, .. } => format!("not a loadable shared library: {err}"),
        LibraryError::GetSymbolError { .. } => "not an XR plugin: it exports no abi_stable root module".to_owned(),
        LibraryError::IncompatibleVersionNumber { expected_version, actual_version, .. } => format!(
            "incompatible plugin interface: built against XR interface {actual_version}, this host has {expected_version}"
        ),
        LibraryError::AbiInstability(details) => {
            let details = details.to_string();
            let first = details
                .lines()
                .map(str::trim)
                .find(|l| l.starts_with("Error:"))
                .map(|l| l.trim_start_matches("Error:").trim().to_owned())
                .unwrap_or_else(|| details.lines().next().unwrap_or("").trim().to_owned());
            format!("incompatible plugin interface: its root module layout differs from this host's ({first})")
        }
        LibraryError::InvalidAbiHeader(_) | LibraryError::InvalidCAbi { .. } => {
            "incompatible plugin: built with another abi_stable ABI".to_owned()
        }
        LibraryError::RootModule { err: RootModuleError::Unwound, .. } => {
            "plugin panicked while creating its root module".to_owned()
        }
        other => format!("plugin failed to load: {}", other.to_string().lines().next().unwrap_or("")),
    }
}

#[cfg(test)]
mod search_order_tests {
    use super::*;

    #[test]
    fn the_variable_then_the_user_then_the_installation_then_the_executable() {
        let path = env::join_paths(["/a", "/b"]).ok();
        let dirs = search_order(path, Some("/home/u/.local/share/xr/plugins".into()), Some("/opt/xr/bin".into()));
        let expected: Vec<PathBuf> =
            ["/a", "/b", "/home/u/.local/share/xr/plugins", "/opt/xr/lib/xr/plugins", "/opt/xr/bin"]
                .iter()
                .map(PathBuf::from)
                .collect();
        assert_eq!(dirs, expected);
        assert_eq!(search_order(None, None, Some("/bin".into())), [PathBuf::from("/lib/xr/plugins"), "/bin".into()]);
    }
}

#[cfg(test)]
mod tests {
    use super::is_cargo_dependency;
    use std::path::Path;

    #[test]
    fn a_hashed_cargo_dependency_is_no_plugin_candidate_and_a_cdylib_is() {
        assert!(is_cargo_dependency(Path::new("deps/libserde_derive-0123456789abcdef.so")));
        assert!(!is_cargo_dependency(Path::new("deps/libxr_compiler_glsl.so")));
        // A plugin's own name may hold a dash; only cargo's 16-digit hash counts.
        assert!(!is_cargo_dependency(Path::new("libmy-plugin-2.so")));
        assert!(!is_cargo_dependency(Path::new("libmy-plugin-0123456789abcdeg.so")));
    }
}
