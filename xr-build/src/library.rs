//! The run-time library: what an engine opens at start-up.
//!
//! [`ShaderLibrary::open`] reads a store's catalog; a [`DeviceLoader`]
//! attaches every build system that can load for one device and loads a
//! program by name and variant through the best path the device offers:
//!
//! 1. [`LoadPath::DeviceBinary`]: a GL program binary this driver made
//!    before (from the `gl-glsl` sources), checked against the driver's
//!    identity and link status;
//! 2. [`LoadPath::CompatibleObject`]: the stored SPIR-V (`gl-spirv` on an
//!    OpenGL device with `ARB_gl_spirv`, `vk-spirv` on Vulkan);
//! 3. [`LoadPath::Source`]: the stored `gl-glsl` sources built on the device
//!    (on OpenGL the program binary is then written back to the store).
//!
//! A path that cannot be used is logged with its reason and the next one is
//! tried; [`Loaded::reason`] says why the path taken was taken.
//! Overrides are set at the load call: specialization constants on SPIR-V,
//! defines on the `gl-glsl` sources.

use crate::{
    artifact::SourceBundle,
    catalog::{self, CatalogProgram},
    manifest::{Override, Target},
};
use std::{collections::BTreeMap, fmt, path::Path};
use xr_device::{DeviceBox, DeviceKind};
use xr_sourcebuild::{
    AttachedBuildSystemBox, Availability, BuildOptions, BuiltProgram, ObjectKey, ProgramBinary, ProgramCache,
    ProgramDesc, Registry, Store,
};
use xr_spirv::container;

/// How a program was loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LoadPath {
    /// A program binary of this driver, from the store.
    DeviceBinary,
    /// A compatible object (SPIR-V) from the store.
    CompatibleObject,
    /// Sources from the store, built on the device.
    Source,
}

impl LoadPath {
    /// Every path, best first.
    pub const ALL: [LoadPath; 3] = [LoadPath::DeviceBinary, LoadPath::CompatibleObject, LoadPath::Source];

    /// `device-binary`, `spirv` or `source`.
    pub fn name(self) -> &'static str {
        match self {
            LoadPath::DeviceBinary => "device-binary",
            LoadPath::CompatibleObject => "spirv",
            LoadPath::Source => "source",
        }
    }
}

impl fmt::Display for LoadPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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
    Store(#[from] xr_sourcebuild::StoreError),
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
    pub target: Target,
    /// Why this path: what the better paths lacked.
    pub reason: String,
}

/// The programs of a store, as `xr build` left them.
pub struct ShaderLibrary {
    store: Store,
    programs: BTreeMap<String, CatalogProgram>,
}

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
        Ok(Self { store, programs })
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

    fn object(&self, program: &CatalogProgram, variant: &str, target: Target) -> Result<Vec<u8>, String> {
        let hex = program.object(variant, target).ok_or_else(|| format!("no {} object was built", target.name()))?;
        let key = ObjectKey::from_hex(hex).ok_or_else(|| format!("bad object key '{hex}' in the catalog"))?;
        match self.store.get(&key) {
            Ok(Some(payload)) => Ok(payload),
            Ok(None) => Err(format!("its {} object {hex} is missing from the store", target.name())),
            Err(e) => Err(format!("its {} object is unusable: {e}", target.name())),
        }
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

/// The build systems attached to one device, loading from a library.
pub struct DeviceLoader {
    kind: DeviceKind,
    systems: Vec<(Target, AttachedBuildSystemBox)>,
    binaries: ProgramCache,
}

impl DeviceLoader {
    /// Attaches every build system of `registry` that loads a target on
    /// `device`; one that does not attach (no `ARB_gl_spirv`, say) is
    /// logged and left out.
    pub fn attach(registry: &Registry, device: &DeviceBox, library: &ShaderLibrary) -> Result<Self, LibraryError> {
        let capabilities = device.capabilities().into_result()?;
        let handles = device.native_handles().into_result()?;
        let targets: &[Target] = match capabilities.kind {
            DeviceKind::OpenGl => &[Target::GlGlsl, Target::GlSpirv],
            DeviceKind::Vulkan => &[Target::VkSpirv],
        };
        let mut systems = Vec::new();
        for &target in targets {
            let Some(system) = registry.build_system_named(target.build_system()) else {
                tracing::info!("{}: not among the plugins found", target.build_system());
                continue;
            };
            match system.attach(&handles, &capabilities).into_result() {
                Ok(mut attached) => {
                    if let Err(e) =
                        attached.set_store(library.store.root().to_string_lossy().as_ref().into()).into_result()
                    {
                        tracing::warn!("{}: cannot keep its caches in the store: {e}", target.build_system());
                    }
                    systems.push((target, attached));
                }
                Err(e) => tracing::info!("{} does not attach to this device: {e}", target.build_system()),
            }
        }
        let binaries = ProgramCache::new(library.store.clone(), &capabilities);
        Ok(Self { kind: capabilities.kind, systems, binaries })
    }

    /// The targets this device loads.
    pub fn targets(&self) -> Vec<Target> {
        self.systems.iter().map(|(t, _)| *t).collect()
    }

    /// Loads a program through the best allowed path.
    pub fn load(&mut self, library: &ShaderLibrary, request: &LoadRequest<'_>) -> Result<Loaded, LibraryError> {
        let program = library.program(request.program)?;
        let variant = program.variant_name(&request.variant).map_err(LibraryError::BadRequest)?;
        if !program.variants.contains_key(&variant) {
            return Err(LibraryError::BadRequest(format!(
                "{variant} is not a variant of the build (dropped by a filter, or the store is older than the manifest)"
            )));
        }
        let overrides = override_values(program, &request.overrides).map_err(LibraryError::BadRequest)?;
        let wanted = Wanted { library, program, variant: &variant, overrides: &overrides };
        let paths = if request.paths.is_empty() { LoadPath::ALL.to_vec() } else { request.paths.clone() };
        let mut reasons: Vec<String> = Vec::new();
        for path in paths {
            if path == LoadPath::DeviceBinary && self.kind != DeviceKind::OpenGl {
                continue; // Vulkan keeps its pipeline cache instead.
            }
            let attempt = match path {
                LoadPath::DeviceBinary => self.device_binary(&wanted),
                LoadPath::CompatibleObject => self.compatible_object(&wanted),
                LoadPath::Source => self.source(&wanted),
            };
            match attempt {
                Ok((built, target, note)) => {
                    let mut reason = reasons.join("; ");
                    if !note.is_empty() {
                        reason = if reason.is_empty() { note } else { format!("{reason}; {note}") };
                    }
                    if reason.is_empty() {
                        reason = "best path".to_owned();
                    }
                    tracing::info!(variant = %variant, path = %path, target = target.name(), "loaded: {reason}");
                    return Ok(Loaded { built, variant, path, target, reason });
                }
                Err(why) => {
                    tracing::info!(variant = %variant, path = %path, "not taken: {why}");
                    reasons.push(format!("{path}: {why}"));
                }
            }
        }
        Err(LibraryError::NoPath { variant, reasons: reasons.join("; ") })
    }

    /// The stored `gl-glsl` sources of the variant, with the overrides as
    /// defines (for the GL driver) or as specialization constants (SPIR-V).
    fn stored_sources(wanted: &Wanted<'_>, overrides_as_defines: bool) -> Result<ProgramDesc, String> {
        let Wanted { library, program, variant, overrides } = *wanted;
        let bundle = SourceBundle::decode(&library.object(program, variant, Target::GlGlsl)?)?;
        if overrides_as_defines {
            let defines: Vec<(String, String)> =
                overrides.iter().map(|(o, v)| (o.name.clone(), o.glsl_literal(*v))).collect();
            return bundle.program(variant, &defines);
        }
        let mut desc = bundle.program(variant, &[])?;
        for stage in desc.stages.iter_mut() {
            for (o, v) in overrides {
                *stage = stage.clone().with_specialization(o.id, o.bits(*v));
            }
        }
        Ok(desc)
    }

    /// The GL program of the stored sources and the key of its program
    /// binary for this driver — or why this driver has no program binaries.
    fn glsl_program(&mut self, wanted: &Wanted<'_>) -> Result<(ProgramDesc, Result<ObjectKey, String>), String> {
        let desc = Self::stored_sources(wanted, true)?;
        let system = attached(&mut self.systems, Target::GlGlsl)?;
        if !system.availability().into_result().map_err(|e| e.to_string())?.contains(Availability::OFFLINE_COMPILE) {
            return Ok((desc, Err("this driver gives no program binaries back".to_owned())));
        }
        let content = system.content_key(&desc, &BuildOptions::default()).into_result().map_err(|e| e.to_string())?;
        let key = self.binaries.key(&content);
        Ok((desc, Ok(key)))
    }

    fn device_binary(&mut self, wanted: &Wanted<'_>) -> Attempt {
        let (desc, key) = self.glsl_program(wanted)?;
        let key = key?;
        let Self { systems, binaries, .. } = self;
        match binaries.load_binary(attached(systems, Target::GlGlsl)?, &desc, BuildOptions::default(), &key)? {
            Some(built) => Ok((built, Target::GlGlsl, String::new())),
            None => Err("no program binary of this driver yet".to_owned()),
        }
    }

    fn compatible_object(&mut self, wanted: &Wanted<'_>) -> Attempt {
        let Wanted { library, program, variant, overrides } = *wanted;
        let target = match self.kind {
            DeviceKind::OpenGl => Target::GlSpirv,
            DeviceKind::Vulkan => Target::VkSpirv,
        };
        attached(&mut self.systems, target)?;
        let payload = library.object(program, variant, target)?;
        let mut modules = container::decode(&payload).ok_or("the SPIR-V object is damaged")?;
        for module in &mut modules {
            let declared = xr_spirv::reflect::spec_constant_ids(&module.words).map_err(|e| e.to_string())?;
            module.specializations = overrides
                .iter()
                .filter(|(o, _)| declared.contains(&o.id))
                .map(|(o, v)| xr_sourcebuild::Specialization { id: o.id, bits: o.bits(*v) })
                .collect::<Vec<_>>();
        }
        let binary: ProgramBinary = container::to_object(&modules);
        let desc = ProgramDesc::new(variant, []);
        let system = attached(&mut self.systems, target)?;
        let built = system
            .load_program_binary(&desc, &BuildOptions::default(), &binary)
            .into_result()
            .map_err(|e| e.to_string())?;
        Ok((built, target, String::new()))
    }

    fn source(&mut self, wanted: &Wanted<'_>) -> Attempt {
        match self.kind {
            DeviceKind::OpenGl => {
                let (desc, key) = self.glsl_program(wanted)?;
                let Self { systems, binaries, .. } = self;
                let system = attached(systems, Target::GlGlsl)?;
                let (built, note) = match key {
                    Ok(key) => {
                        let (built, stored) = binaries
                            .build_and_store(system, &desc, BuildOptions::default(), &key)
                            .map_err(|e| e.to_string())?;
                        let note = match stored {
                            Ok(_) => "program binary written back to the store".to_owned(),
                            Err(e) => format!("program binary not stored: {e}"),
                        };
                        (built, note)
                    }
                    Err(why) => {
                        let built = system
                            .build_program(&desc, &BuildOptions::default())
                            .into_result()
                            .map_err(|e| e.to_string())?;
                        (built, format!("built on the device; {why}"))
                    }
                };
                Ok((built, Target::GlGlsl, note))
            }
            DeviceKind::Vulkan => {
                // The gl-glsl sources, compiled for Vulkan on the spot.
                let desc = Self::stored_sources(wanted, false)?;
                let system = attached(&mut self.systems, Target::VkSpirv)?;
                let built =
                    system.build_program(&desc, &BuildOptions::default()).into_result().map_err(|e| e.to_string())?;
                Ok((built, Target::VkSpirv, "built from the stored sources".to_owned()))
            }
        }
    }
}

/// The build system attached for `target`, or why there is none.
fn attached(
    systems: &mut [(Target, AttachedBuildSystemBox)],
    target: Target,
) -> Result<&mut AttachedBuildSystemBox, String> {
    systems
        .iter_mut()
        .find(|(t, _)| *t == target)
        .map(|(_, s)| s)
        .ok_or_else(|| format!("{} is not available on this device", target.build_system()))
}

/// What one load asks for, as each path needs it.
#[derive(Clone, Copy)]
struct Wanted<'a> {
    library: &'a ShaderLibrary,
    program: &'a CatalogProgram,
    variant: &'a str,
    overrides: &'a [(Override, f64)],
}

/// A path's result: the program, the target whose object it used, and a
/// note for the reason; or why the path could not be taken.
type Attempt = Result<(BuiltProgram, Target, String), String>;

/// Every override of `program` with its value: the request's, else the default.
fn override_values(program: &CatalogProgram, given: &[(&str, f64)]) -> Result<Vec<(Override, f64)>, String> {
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
            (o.clone(), value)
        })
        .collect())
}
