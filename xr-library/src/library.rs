//! The run-time library: what an engine opens at start-up.
//!
//! [`ShaderLibrary::open`] reads a store's catalog; a [`DeviceLoader`]
//! attaches every build system that declares targets it loads
//! (`BuildSystemInfo::loads`) and attaches to the device, and loads a
//! program by name and variant through the best path any of them offers:
//!
//! 1. [`LoadPath::DeviceBinary`]: a binary this driver made before, kept by
//!    its build system (GL program binaries, checked against the driver's
//!    identity and link status);
//! 2. [`LoadPath::CompatibleObject`]: a stored portable object (SPIR-V);
//! 3. [`LoadPath::Source`]: stored sources built on the device.
//!
//! Within a path, loaders are tried in priority order, each with the
//! stored object of a target it declared. The library never reads an
//! artifact: it hands the stored bytes and the override values to the
//! loader. A path that cannot be used is logged with its reason and the
//! next one is tried; [`Loaded::reason`] says why the path taken was taken.
//!
//! An object the catalog marks stale (its build failed, and the catalog
//! kept the last good one) loads like any other; the load says so at
//! `XR_LOG=info` (program, variant, target, the failure's first error) and
//! in [`Loaded::stale`].
//!
//! With a usage log ([`ShaderLibrary::with_usage_log`]), every program
//! loaded is recorded by program, variant, target and override values
//! (`xr_store::usage`), and the draw states its build system made device
//! objects for at draws (a Vulkan pipeline per set of attachment formats)
//! when the [`DeviceLoader`] is dropped or asked
//! ([`DeviceLoader::record_draw_states`]); a log that cannot be written is
//! a warning, never a failed load. A load also makes, at once, the device
//! objects of the draw states the log already named for it (through the
//! build system's pipeline cache), so that its draws make none.
//!
//! With a remote ([`ShaderLibrary::with_remote`]), an object the catalog
//! names that is missing or corrupt here is fetched from the shared cache,
//! checked against its key, and kept in the local store.

use std::{
    collections::BTreeMap,
    path::Path,
    sync::{Arc, Mutex},
};
use xr_device::{DeviceBox, DrawCall, NotReady, ProgramRef, RenderTargetId, VertexBufferId};
use xr_host::Registry;
pub use xr_sourcebuild::LoadPath;
use xr_sourcebuild::{ArtifactLoad, AttachedBuildSystemBox, BuiltProgram, OverrideKind, OverrideValue, TargetLoad};
use xr_store::usage::{Usage, UsageError, UsageLog};
use xr_store::{
    ObjectKey, Store,
    catalog::{self, CatalogProgram, Override, OverrideType},
};
#[cfg(feature = "remote")]
use {
    xr_remote::{Kind, Remote},
    xr_store::object_key,
};

/// Why a program could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    /// The store has no catalog.
    #[error("{store}: no built programs (run `xr build` first)")]
    Empty {
        /// The store.
        store: String,
    },
    /// The store could not be opened.
    #[error(transparent)]
    Store(#[from] xr_store::StoreError),
    /// The program is not in the catalog.
    #[error("no program named '{name}' in the store (it has: {known})")]
    UnknownProgram {
        /// The name asked for.
        name: String,
        /// What there is.
        known: String,
    },
    /// The variant or override values are not the program's.
    #[error("{0}")]
    BadRequest(String),
    /// No path could load the program: each path's reason.
    #[error("{variant}: no load path worked: {reasons}")]
    NoPath {
        /// The variant.
        variant: String,
        /// Every path tried and why it failed.
        reasons: String,
    },
    /// A plugin call failed.
    #[error(transparent)]
    Plugin(#[from] xr_device::XrError),
    /// The usage log could not be opened.
    #[error("usage log {0}")]
    Usage(#[from] UsageError),
}

/// A loaded program.
pub struct Loaded {
    /// The program and its constant table.
    pub built: BuiltProgram,
    /// The variant's name.
    pub variant: String,
    /// The path taken.
    pub path: LoadPath,
    /// The target whose object was used.
    pub target: String,
    /// The build system that loaded it.
    pub loader: String,
    /// Why this path: what the better paths lacked.
    pub reason: String,
    /// Why the object is stale, when it is: its build failed, and the
    /// catalog kept the last good object (also logged at `XR_LOG=info`).
    pub stale: Option<String>,
    /// What its draws do while it is not ready ([`DeviceLoader::when_not_ready`]
    /// when it was loaded; [`Loaded::draw_call`] carries it).
    pub when_not_ready: NotReady,
}

impl Loaded {
    /// A draw of `vertex_count` vertices of `vertices` with this program
    /// into `target`, under the policy it was loaded with.
    pub fn draw_call(&self, target: RenderTargetId, vertices: VertexBufferId, vertex_count: u32) -> DrawCall {
        DrawCall::triangles(target, self.built.program, vertices, vertex_count).when_not_ready(self.when_not_ready)
    }
}

/// The programs of a store, as `xr build` left them.
pub struct ShaderLibrary {
    store: Store,
    programs: BTreeMap<String, CatalogProgram>,
    usage: Option<Arc<Recorder>>,
    #[cfg(feature = "remote")]
    remote: Option<Arc<Remote>>,
}

/// A program loaded, or a draw state it was drawn in, that the usage log
/// did not name when the library opened it: what a warm from that log left
/// out (strict mode).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrictMiss {
    /// What was loaded, as the log would record it; for a draw state the
    /// log lacked, with that state alone in `draw_states`.
    pub usage: Usage,
    /// The path it loaded by.
    pub path: LoadPath,
}

/// A usage log and, in strict mode, what it missed: shared by a library
/// and the device loaders that load from it (they record draw states when
/// they are dropped).
struct Recorder {
    log: UsageLog,
    /// Loads and draw states the log did not name when it was opened, when strict.
    strict: Option<Mutex<Vec<StrictMiss>>>,
}

impl Recorder {
    /// Records `usage`, loaded by `path`; in strict mode, says so when the
    /// log did not name it at open (for a draw state: each state it lacked).
    fn record(&self, usage: Usage, path: LoadPath) {
        let new = self.log.record(&usage).unwrap_or_else(|e| {
            tracing::warn!("cannot record {} ({}) in the usage log: {e}", usage.variant, usage.target);
            true
        });
        let Some(misses) = &self.strict else { return };
        if !new || self.log.covered_at_open(&usage) {
            return;
        }
        let values: Vec<String> = usage.overrides.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let overrides = if values.is_empty() { String::new() } else { format!(", overrides {}", values.join(" ")) };
        let mut misses = misses.lock().unwrap_or_else(|p| p.into_inner());
        if usage.draw_states.is_empty() {
            tracing::warn!(
                "strict warm: {} of '{}' ({}, by {path}{overrides}) was loaded, and the usage log {} did not name \
                 it: a warm from that log did not make it",
                usage.variant,
                usage.program,
                usage.target,
                self.log.path().display()
            );
            misses.push(StrictMiss { usage, path });
            return;
        }
        for state in &usage.draw_states {
            let alone = Usage { draw_states: [state.clone()].into(), ..usage.clone() };
            if self.log.covered_at_open(&alone) {
                continue;
            }
            tracing::warn!(
                "strict warm: {} of '{}' ({}, by {path}{overrides}) was drawn in the state {state}, and the usage \
                 log {} did not name it: a warm from that log did not make its pipeline",
                usage.variant,
                usage.program,
                usage.target,
                self.log.path().display()
            );
            misses.push(StrictMiss { usage: alone, path });
        }
    }
}

/// The environment variable that turns strict mode on for a library with
/// a usage log (`1` or `true`).
pub const STRICT_WARM: &str = "XR_STRICT_WARM";

impl ShaderLibrary {
    /// Opens the store at `root` and reads its catalog.
    pub fn open(root: &Path) -> Result<Self, LibraryError> {
        let store = Store::open(root)?;
        let (programs, errors) = catalog::read_all(root);
        for error in errors {
            tracing::warn!("skipping a catalog file: {error}");
        }
        if programs.is_empty() {
            return Err(LibraryError::Empty { store: root.display().to_string() });
        }
        Ok(Self {
            store,
            programs,
            usage: None,
            #[cfg(feature = "remote")]
            remote: None,
        })
    }

    /// Records every program loaded from this library in the usage log at
    /// `path`, or at `usage.jsonl` in the store when `None`. With
    /// `XR_STRICT_WARM=1` in the environment, strict mode too
    /// ([`ShaderLibrary::strict_warm`]).
    pub fn with_usage_log(mut self, path: Option<&Path>) -> Result<Self, LibraryError> {
        let in_store = self.store.root().join(xr_store::usage::STORE_FILE);
        let log = UsageLog::open(path.unwrap_or(&in_store))?;
        self.usage = Some(Arc::new(Recorder { log, strict: None }));
        let strict = xr_env::is_on(STRICT_WARM);
        Ok(self.strict_warm(strict))
    }

    /// Strict mode, for development: every load of a program, and every
    /// draw state a program was drawn in, that the usage log did not name
    /// when it was opened (so that a warm from it did not make it) is a
    /// warning naming the program, variant, target, override values, path
    /// and state, and is kept in [`ShaderLibrary::strict_misses`]. Draw
    /// states are known when a [`DeviceLoader`] records them (when dropped,
    /// or [`DeviceLoader::record_draw_states`]). Needs a usage log
    /// ([`ShaderLibrary::with_usage_log`]) set before any device loader
    /// attaches.
    pub fn strict_warm(mut self, strict: bool) -> Self {
        if let Some(recorder) = self.usage.take() {
            let log = match Arc::try_unwrap(recorder) {
                Ok(recorder) => recorder.log,
                Err(shared) => {
                    tracing::warn!("strict mode set after a device loader attached: not changed");
                    self.usage = Some(shared);
                    return self;
                }
            };
            self.usage = Some(Arc::new(Recorder { log, strict: strict.then(Default::default) }));
        }
        self
    }

    /// The loads and draw states strict mode reported, in the order they happened.
    pub fn strict_misses(&self) -> Vec<StrictMiss> {
        self.usage
            .as_ref()
            .and_then(|r| r.strict.as_ref())
            .map(|m| m.lock().unwrap_or_else(|p| p.into_inner()).clone())
            .unwrap_or_default()
    }

    /// The usage log loads are recorded in, when there is one.
    pub fn usage_log(&self) -> Option<&UsageLog> {
        self.usage.as_ref().map(|r| &r.log)
    }

    /// Reads objects missing from the local store through `remote`. The
    /// remote blocks on its own runtime: load from a plain thread, not from
    /// inside an async task.
    #[cfg(feature = "remote")]
    pub fn with_remote(mut self, remote: Arc<Remote>) -> Self {
        self.remote = Some(remote);
        self
    }

    /// Reads the catalog again (after a build into the store, as
    /// `hot_reload` runs one); the programs with other objects now.
    pub fn reread_catalog(&mut self) -> Result<Vec<String>, LibraryError> {
        let (programs, errors) = catalog::read_all(self.store.root());
        for error in errors {
            tracing::warn!("skipping a catalog file: {error}");
        }
        if programs.is_empty() {
            return Err(LibraryError::Empty { store: self.store.root().display().to_string() });
        }
        let changed = programs
            .iter()
            .filter(|(name, program)| self.programs.get(*name).is_none_or(|old| old.variants != program.variants));
        let changed = changed.map(|(name, _)| name.clone());
        let changed = changed.collect();
        self.programs = programs;
        Ok(changed)
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Every program, by name.
    pub fn programs(&self) -> &BTreeMap<String, CatalogProgram> {
        &self.programs
    }

    /// One program.
    pub fn program(&self, name: &str) -> Result<&CatalogProgram, LibraryError> {
        self.programs.get(name).ok_or_else(|| LibraryError::UnknownProgram {
            name: name.to_owned(),
            known: self.programs.keys().cloned().collect::<Vec<_>>().join(", "),
        })
    }

    /// Records a load in the usage log, if there is one; a log that cannot
    /// be written is said, and the load goes on. What was recorded, for the
    /// loader to record its draw states later.
    fn record_use(
        &self,
        program: &CatalogProgram,
        variant: &str,
        target: &str,
        overrides: &[(&str, f64)],
        path: LoadPath,
    ) -> Option<(Arc<Recorder>, Usage)> {
        let recorder = self.usage.as_ref()?;
        let usage = Usage {
            program: program.name.clone(),
            variant: variant.to_owned(),
            target: target.to_owned(),
            overrides: overrides.iter().map(|(name, value)| ((*name).to_owned(), value.to_string())).collect(),
            draw_states: Default::default(),
        };
        recorder.record(usage.clone(), path);
        Some((Arc::clone(recorder), usage))
    }

    fn object(&self, program: &CatalogProgram, variant: &str, target: &str) -> Result<Vec<u8>, String> {
        let hex = program.object(variant, target).ok_or_else(|| format!("no {target} object was built"))?;
        let key = ObjectKey::from_hex(hex).ok_or_else(|| format!("bad object key '{hex}' in the catalog"))?;
        let local = match self.store.get(&key) {
            Ok(Some(payload)) => return Ok(payload),
            Ok(None) => format!("its {target} object {hex} is missing from the store"),
            Err(e) => format!("its {target} object is unusable: {e}"),
        };
        #[cfg(feature = "remote")]
        if let Some(payload) = self.remote.as_deref().and_then(|remote| fetch(remote, &key)) {
            if let Err(e) = self.store.put(&key, &payload) {
                tracing::warn!("cannot keep an object fetched from the remote: {e}");
            }
            return Ok(payload);
        }
        Err(local)
    }
}

/// A program to load.
#[derive(Clone, Debug, Default)]
pub struct LoadRequest<'a> {
    /// The program's name.
    pub program: &'a str,
    /// A value for every axis.
    pub variant: Vec<(&'a str, &'a str)>,
    /// Override values; the others keep their defaults.
    pub overrides: Vec<(&'a str, f64)>,
    /// The paths allowed, best first; all when empty.
    pub paths: Vec<LoadPath>,
}

/// A build system attached to the device, with what it loads.
struct Loader {
    name: String,
    loads: Vec<TargetLoad>,
    system: AttachedBuildSystemBox,
}

/// A program loaded while a usage log records: its draw states are asked
/// of its build system later.
struct Recorded {
    loader: usize,
    program: ProgramRef,
    usage: Usage,
    path: LoadPath,
    recorder: Arc<Recorder>,
}

/// The build systems attached to one device, loading from a library.
///
/// Dropping it records, in the usage log of the library each program came
/// from, the draw states its build system made device objects for.
pub struct DeviceLoader {
    loaders: Vec<Loader>,
    recorded: Vec<Recorded>,
    when_not_ready: NotReady,
}

impl DeviceLoader {
    /// Attaches every build system of `registry` that loads a target and
    /// attaches to `device`, highest priority first; one that does not
    /// attach (no `ARB_gl_spirv`, say) is logged and left out.
    pub fn attach(registry: &Registry, device: &DeviceBox, library: &ShaderLibrary) -> Result<Self, LibraryError> {
        let capabilities = device.capabilities().into_result()?;
        let handles = device.native_handles().into_result()?;
        let mut candidates: Vec<_> = registry
            .build_system_entries()
            .filter(|(info, _)| !info.loads.is_empty() && info.attachable.contains(&capabilities.kind))
            .collect();
        candidates.sort_by_key(|(info, _)| std::cmp::Reverse(info.priority));
        let mut loaders = Vec::new();
        for (info, system) in candidates {
            match system.attach(&handles, &capabilities).into_result() {
                Ok(mut attached) => {
                    if let Err(e) =
                        attached.set_store(library.store.root().to_string_lossy().as_ref().into()).into_result()
                    {
                        tracing::warn!("{}: cannot keep its caches in the store: {e}", info.name);
                    }
                    loaders.push(Loader { name: info.name.to_string(), loads: info.loads.to_vec(), system: attached });
                }
                Err(e) => tracing::info!("{} does not attach to this device: {e}", info.name),
            }
        }
        Ok(Self { loaders, recorded: Vec::new(), when_not_ready: NotReady::Wait })
    }

    /// What the draws of the programs loaded from now on do while one is
    /// not ready (still compiling off the draw path): wait (the default),
    /// skip, or draw a fallback program, one loaded before (an ubershader).
    /// A draw may ask otherwise (`DrawCall::when_not_ready`).
    pub fn when_not_ready(&mut self, policy: NotReady) {
        self.when_not_ready = policy;
    }

    /// Records, in the usage log of the library each program was loaded
    /// from, the draw states its build system has made device objects for
    /// so far (Vulkan pipelines for the attachment formats it was drawn
    /// into); in strict mode, names each the log did not. Done when the
    /// loader is dropped; an engine may call it sooner (after its first
    /// frames, say). A state is recorded once.
    pub fn record_draw_states(&mut self) {
        for recorded in &self.recorded {
            let loader = &self.loaders[recorded.loader];
            let states = match loader.system.draw_states(recorded.program).into_result() {
                Ok(states) => states,
                Err(e) => {
                    tracing::warn!("{}: cannot say what {} was drawn with: {e}", loader.name, recorded.usage.variant);
                    continue;
                }
            };
            if states.is_empty() {
                continue;
            }
            let usage = Usage { draw_states: states.iter().map(|s| s.to_string()).collect(), ..recorded.usage.clone() };
            recorded.recorder.record(usage, recorded.path);
        }
    }

    /// What each attached build system has made since it attached, by how
    /// (`pipelines compiled`, `pipelines from the pipeline cache`, `shader
    /// objects from SPIR-V`, `programs linked from source`, …): (build
    /// system, counter, value). What shows that loads and draws after a
    /// warm compiled nothing.
    pub fn counters(&self) -> Vec<(String, String, u64)> {
        self.loaders
            .iter()
            .flat_map(|l| {
                let counters = l.system.counters().into_result().unwrap_or_else(|e| {
                    tracing::warn!("{}: no counters: {e}", l.name);
                    Default::default()
                });
                counters.into_iter().map(|c| (l.name.clone(), c.name.to_string(), c.value)).collect::<Vec<_>>()
            })
            .collect()
    }

    /// The sum of the counter `name` over the attached build systems.
    pub fn counter(&self, name: &str) -> u64 {
        self.counters().iter().filter(|(_, n, _)| n == name).map(|(_, _, v)| v).sum()
    }

    /// Makes the device objects of `loaded` for `states` (a usage entry's
    /// draw states) now, through its build system; how many it made.
    pub fn warm_draw_states(&mut self, loaded: &Loaded, states: &[String]) -> Result<u32, LibraryError> {
        let Some(loader) = self.loaders.iter_mut().find(|l| l.name == loaded.loader) else { return Ok(0) };
        Ok(make_draw_states(&mut loader.system, loaded.built.program, states)?)
    }

    /// The targets this device loads, each with its path, best path first.
    pub fn targets(&self) -> Vec<(String, LoadPath)> {
        let mut targets: Vec<(String, LoadPath)> =
            self.loaders.iter().flat_map(|l| l.loads.iter().map(|t| (t.target.to_string(), t.path))).collect();
        targets.sort_by_key(|(_, path)| *path);
        targets.dedup();
        targets
    }

    /// The build systems attached, highest priority first.
    pub fn loaders(&self) -> Vec<&str> {
        self.loaders.iter().map(|l| l.name.as_str()).collect()
    }

    /// Loads a program through the best allowed path.
    pub fn load(&mut self, library: &ShaderLibrary, request: &LoadRequest<'_>) -> Result<Loaded, LibraryError> {
        let program = library.program(request.program)?;
        let variant = program.variant_name(&request.variant).map_err(|e| LibraryError::BadRequest(e.to_string()))?;
        let Some(stored) = program.variants.get(&variant) else {
            return Err(LibraryError::BadRequest(format!(
                "{variant} is not a variant of the build (dropped by a filter, or the store is older than the manifest)"
            )));
        };
        let overrides = override_values(program, &request.overrides).map_err(LibraryError::BadRequest)?;
        let explicit = !request.paths.is_empty();
        let paths = if explicit { request.paths.clone() } else { LoadPath::ALL.to_vec() };
        let mut reasons: Vec<String> = Vec::new();
        for path in paths {
            let candidates: Vec<(usize, String)> = self
                .loaders
                .iter()
                .enumerate()
                .flat_map(|(i, l)| l.loads.iter().filter(|t| t.path == path).map(move |t| (i, t.target.to_string())))
                .collect();
            if candidates.is_empty() && explicit {
                reasons.push(format!("{path}: no build system on this device loads by this path"));
            }
            for (index, target) in candidates {
                let loader = &mut self.loaders[index];
                let attempt = library.object(program, &variant, &target).and_then(|artifact| {
                    let load = ArtifactLoad {
                        name: variant.as_str().into(),
                        target: target.as_str().into(),
                        path,
                        artifact: artifact.into(),
                        overrides: overrides.clone().into(),
                    };
                    loader.system.load_artifact(&load).into_result().map_err(|e| e.to_string())
                });
                match attempt {
                    Ok(loaded) => {
                        let mut reason = reasons.join("; ");
                        let note = loaded.note.to_string();
                        if !note.is_empty() {
                            reason = if reason.is_empty() { note } else { format!("{reason}; {note}") };
                        }
                        if reason.is_empty() {
                            reason = "best path".to_owned();
                        }
                        tracing::info!(variant = %variant, path = %path, target = %target, loader = %loader.name, "loaded: {reason}");
                        if let Some((recorder, usage)) =
                            library.record_use(program, &variant, &target, &request.overrides, path)
                        {
                            let program = loaded.program.program;
                            // The draw states the log named are made now, at
                            // the load, so that the draws make nothing.
                            let states = recorder.log.draw_states_at_open(&usage);
                            if !states.is_empty()
                                && let Err(e) = make_draw_states(&mut loader.system, program, &states)
                            {
                                tracing::warn!("{variant}: the draw states its usage log named were not made: {e}");
                            }
                            self.recorded.push(Recorded { loader: index, program, usage, path, recorder });
                        }
                        let stale = program.stale(&variant, &target).map(str::to_owned);
                        if let Some(why) = &stale {
                            tracing::info!(
                                program = %program.name, variant = %variant, target = %target,
                                "stale: loaded the last good {target} object of {variant}, kept when its build failed: {why}"
                            );
                        }
                        return Ok(Loaded {
                            built: loaded.program,
                            variant,
                            path,
                            target,
                            loader: loader.name.clone(),
                            reason,
                            stale,
                            when_not_ready: self.when_not_ready,
                        });
                    }
                    Err(why) => {
                        tracing::info!(variant = %variant, path = %path, target = %target, "not taken: {why}");
                        reasons.push(format!("{path}: {why}"));
                    }
                }
            }
        }
        // Nothing loaded: say also which stored targets no loader here reads.
        let unread: Vec<&str> = stored
            .objects
            .keys()
            .map(String::as_str)
            .filter(|target| !self.loaders.iter().any(|l| l.loads.iter().any(|t| t.target == *target)))
            .collect();
        if !unread.is_empty() {
            reasons.push(format!("no build system on this device loads {}", unread.join(", ")));
        }
        Err(LibraryError::NoPath { variant, reasons: reasons.join("; ") })
    }
}

impl Drop for DeviceLoader {
    fn drop(&mut self) {
        self.record_draw_states();
    }
}

/// The object of `key` from `remote`, if it has it and it is the object
/// its key names.
#[cfg(feature = "remote")]
fn fetch(remote: &Remote, key: &ObjectKey) -> Option<Vec<u8>> {
    let payload = remote.get(Kind::Object, key)?;
    if object_key(&payload) == *key {
        tracing::info!("fetched {key} from {}", remote.url());
        Some(payload)
    } else {
        tracing::warn!(
            "{}: its bytes are not the object it is named after; not used",
            remote.address(&format!("cas/{key}"))
        );
        None
    }
}

/// Has `system` make `program`'s device objects for the draw `states`.
fn make_draw_states(
    system: &mut AttachedBuildSystemBox,
    program: ProgramRef,
    states: &[String],
) -> Result<u32, xr_device::XrError> {
    let states: Vec<abi_stable::std_types::RString> = states.iter().map(|s| s.as_str().into()).collect();
    system.warm_draw_states(program, states.as_slice().into()).into_result()
}

/// An override's value as the loaders take it.
fn override_value(o: &Override, value: f64) -> OverrideValue {
    let kind = match o.kind {
        OverrideType::Float => OverrideKind::Float,
        OverrideType::Int => OverrideKind::Int,
        OverrideType::Uint => OverrideKind::UInt,
        OverrideType::Bool => OverrideKind::Bool,
    };
    OverrideValue { name: o.name.as_str().into(), id: o.id, kind, bits: o.bits(value) }
}

/// Every override of `program` with its value: the request's, else the default.
fn override_values(program: &CatalogProgram, given: &[(&str, f64)]) -> Result<Vec<OverrideValue>, String> {
    for (name, _) in given {
        if !program.overrides.iter().any(|o| o.name == *name) {
            let known: Vec<&str> = program.overrides.iter().map(|o| o.name.as_str()).collect();
            return Err(format!(
                "program '{}' has no override '{name}' (it has: {})",
                program.name,
                if known.is_empty() { "none".to_owned() } else { known.join(", ") }
            ));
        }
    }
    Ok(program
        .overrides
        .iter()
        .map(|o| {
            let value = given.iter().rev().find(|(n, _)| *n == o.name).map_or(o.default, |(_, v)| *v);
            override_value(o, value)
        })
        .collect())
}
