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
//! (`xr_store::usage`); a log that cannot be written is a warning, never a
//! failed load.
//!
//! With a remote ([`ShaderLibrary::with_remote`]), an object the catalog
//! names that is missing or corrupt here is fetched from the shared cache,
//! checked against its key, and kept in the local store.

use std::{collections::BTreeMap, path::Path};
use xr_device::DeviceBox;
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
    std::sync::Arc,
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
}

/// The programs of a store, as `xr build` left them.
pub struct ShaderLibrary {
    store: Store,
    programs: BTreeMap<String, CatalogProgram>,
    usage: Option<UsageLog>,
    /// Loads the usage log did not name when it was opened, when strict.
    strict: Option<std::sync::Mutex<Vec<StrictMiss>>>,
    #[cfg(feature = "remote")]
    remote: Option<Arc<Remote>>,
}

/// A program loaded that the usage log did not name when the library
/// opened it: what a warm from that log left out (strict mode).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrictMiss {
    /// What was loaded, as the log would record it.
    pub usage: Usage,
    /// The path it loaded by.
    pub path: LoadPath,
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
            strict: None,
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
        self.usage = Some(UsageLog::open(path.unwrap_or(&in_store))?);
        let strict = std::env::var(STRICT_WARM).is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));
        Ok(self.strict_warm(strict))
    }

    /// Strict mode, for development: every load of a program that the usage
    /// log did not name when it was opened (so that a warm from it did not
    /// make it) is a warning naming the program, variant, target, override
    /// values and path, and is kept in [`ShaderLibrary::strict_misses`].
    /// Needs a usage log ([`ShaderLibrary::with_usage_log`]).
    pub fn strict_warm(mut self, strict: bool) -> Self {
        self.strict = strict.then(Default::default);
        self
    }

    /// The loads strict mode reported, in the order they happened.
    pub fn strict_misses(&self) -> Vec<StrictMiss> {
        self.strict.as_ref().map(|m| m.lock().unwrap_or_else(|p| p.into_inner()).clone()).unwrap_or_default()
    }

    /// The usage log loads are recorded in, when there is one.
    pub fn usage_log(&self) -> Option<&UsageLog> {
        self.usage.as_ref()
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
    /// be written is said, and the load goes on.
    fn record_use(
        &self,
        program: &CatalogProgram,
        variant: &str,
        target: &str,
        overrides: &[(&str, f64)],
        path: LoadPath,
    ) {
        let Some(log) = &self.usage else { return };
        let usage = Usage {
            program: program.name.clone(),
            variant: variant.to_owned(),
            target: target.to_owned(),
            overrides: overrides.iter().map(|(name, value)| ((*name).to_owned(), value.to_string())).collect(),
        };
        let new = log.record(&usage).unwrap_or_else(|e| {
            tracing::warn!("cannot record {variant} ({target}) in the usage log: {e}");
            true
        });
        if let Some(misses) = &self.strict
            && new
            && !log.covered_at_open(&usage)
        {
            let values: Vec<String> = usage.overrides.iter().map(|(k, v)| format!("{k}={v}")).collect();
            tracing::warn!(
                "strict warm: {variant} of '{}' ({target}, by {path}{}) was loaded, and the usage log {} did not \
                 name it: a warm from that log did not make it",
                program.name,
                if values.is_empty() { String::new() } else { format!(", overrides {}", values.join(" ")) },
                log.path().display()
            );
            misses.lock().unwrap_or_else(|p| p.into_inner()).push(StrictMiss { usage, path });
        }
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

/// The build systems attached to one device, loading from a library.
pub struct DeviceLoader {
    loaders: Vec<Loader>,
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
        Ok(Self { loaders })
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
                        library.record_use(program, &variant, &target, &request.overrides, path);
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
