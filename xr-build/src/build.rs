//! `xr build`: every (variant, target) of a manifest, in parallel, into the
//! store — reusing what the journal shows is still up to date.

use crate::{
    catalog::{self, CatalogProgram, CatalogVariant},
    journal::{Entry, Journal},
    manifest::{Manifest, PluginOffer, Program},
    matrix::{Variant, variants},
};
use rayon::prelude::*;
use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    path::Path,
    sync::Mutex,
    time::{Duration, Instant},
};
use xr_sourcebuild::{
    ObjectKey, OfflineRequest, ProgramDesc, Registry, SourceBuildSystemBox, SourceDesc, Store, StoreError,
};

/// Version of the recipe and object formats; part of every key.
const FORMAT: &str = "xr-build/1";

/// What to build.
#[derive(Clone, Debug, Default)]
pub struct BuildRequest {
    /// Worker threads; one per core when `None`.
    pub jobs: Option<usize>,
    /// Only these targets (all of each program's when empty).
    pub targets: Vec<String>,
    /// Only these programs (all when empty).
    pub programs: Vec<String>,
}

/// What happened to one (variant, target).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Built now (and written, unless an identical object was already stored).
    Built {
        /// The object.
        object: ObjectKey,
        /// Payload bytes.
        bytes: u64,
    },
    /// Up to date: the journal's object, whole in the store.
    Reused {
        /// The object.
        object: ObjectKey,
        /// Payload bytes.
        bytes: u64,
    },
    /// Did not build: the diagnostics.
    Failed(String),
}

/// One (variant, target) done.
#[derive(Clone, Debug)]
pub struct ArtifactResult {
    /// The program.
    pub program: String,
    /// The variant's name.
    pub variant: String,
    /// The target.
    pub target: String,
    /// What happened.
    pub outcome: Outcome,
}

/// A failure: a (variant, target), or a whole program, with its diagnostics.
#[derive(Clone, Debug)]
pub struct Failure {
    /// What failed: `variant (target)` or `program 'name'`.
    pub what: String,
    /// Why.
    pub message: String,
}

/// The end of a build.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Artifacts built now.
    pub built: usize,
    /// Artifacts reused.
    pub reused: usize,
    /// Failures, each with its diagnostics.
    pub failed: Vec<Failure>,
    /// Distinct objects the built and reused artifacts are.
    pub unique_objects: usize,
    /// Their payload bytes.
    pub bytes: u64,
    /// Wall time.
    pub elapsed: Duration,
}

/// Why a build could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum BuildFailure {
    /// The store could not be opened.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A worker pool could not start.
    #[error("cannot start {jobs} build threads: {message}")]
    Threads {
        /// Threads asked for.
        jobs: usize,
        /// Why.
        message: String,
    },
    /// An unknown program was asked for.
    #[error("{manifest}: no program named '{name}'")]
    UnknownProgram {
        /// The manifest.
        manifest: String,
        /// The name.
        name: String,
    },
}

/// Counts the artifacts `request` asks for (for a progress bar's length).
pub fn count_artifacts(manifest: &Manifest, request: &BuildRequest) -> usize {
    selected(manifest, request)
        .map(|program| variants(program).map_or(0, |v| v.len()) * targets_of(program, request).len())
        .sum()
}

/// What the plugins of `registry` offer a manifest.
pub fn plugin_offer(registry: &Registry) -> PluginOffer {
    let mut offer = PluginOffer::default();
    for (info, _) in registry.build_system_entries() {
        for language in info.languages.iter() {
            let extensions = language.extensions.iter().map(|e| e.to_string()).collect();
            offer.languages.push((language.name.to_string(), extensions));
        }
        offer.pairs.extend(info.compiles.iter().map(|p| (p.language.to_string(), p.target.to_string())));
    }
    offer
}

/// The build system that compiles a program into a target, with the
/// identity that goes into its keys.
#[derive(Clone, Copy)]
struct Compiler<'r> {
    name: &'r str,
    identity: &'r str,
    system: &'r SourceBuildSystemBox,
}

/// The build system for every stage language of `program` into `target`:
/// one system must compile them all.
fn compiler_for<'r>(registry: &'r Registry, program: &Program, target: &str) -> Result<Compiler<'r>, String> {
    let mut languages: Vec<&str> = program.stages.iter().map(|s| s.language()).collect();
    languages.sort();
    languages.dedup();
    let mut chosen: Option<Compiler<'r>> = None;
    for language in languages {
        let (info, system) = registry.offline_compiler(language, target).map_err(|e| e.to_string())?;
        let compiler = Compiler { name: info.name.as_str(), identity: info.compiler_identity.as_str(), system };
        match chosen {
            Some(first) if first.name != compiler.name => {
                return Err(format!(
                    "program '{}' mixes languages that no one build system compiles into {target}: {} and {} are needed",
                    program.name, first.name, compiler.name
                ));
            }
            _ => chosen = Some(compiler),
        }
    }
    chosen.ok_or_else(|| format!("program '{}' has no stages", program.name))
}

/// Builds every artifact of `request` with the build systems of `registry`;
/// `progress` hears of each as it ends. One failing artifact does not stop
/// the others: it is in the summary. The manifest must have been checked
/// against the registry's offer ([`Manifest::check_plugins`]).
pub fn build(
    manifest: &Manifest,
    registry: &Registry,
    request: &BuildRequest,
    progress: &(dyn Fn(&ArtifactResult) + Sync),
) -> Result<Summary, BuildFailure> {
    let started = Instant::now();
    for name in &request.programs {
        if !manifest.programs.iter().any(|p| &p.name == name) {
            return Err(BuildFailure::UnknownProgram {
                manifest: manifest.path.display().to_string(),
                name: name.clone(),
            });
        }
    }
    let store = Store::open(&manifest.store)?;
    remove_orphaned_temp_files(store.root());
    let journal = Journal::open(store.root());
    let mut compilers = HashMap::new();
    for program in selected(manifest, request) {
        for target in targets_of(program, request) {
            let compiler = compiler_for(registry, program, &target);
            compilers.insert((program.name.clone(), target), compiler);
        }
    }
    let context = JobContext { store: &store, journal: &journal, compilers, hashes: Mutex::new(HashMap::new()) };

    let mut summary = Summary::default();
    let mut jobs: Vec<(&Program, Variant)> = Vec::new();
    for program in selected(manifest, request) {
        match variants(program) {
            Ok(list) => jobs.extend(list.into_iter().map(|v| (program, v))),
            Err(message) => summary.failed.push(Failure { what: format!("program '{}'", program.name), message }),
        }
    }
    let threads = request.jobs.unwrap_or(0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| BuildFailure::Threads { jobs: threads, message: e.to_string() })?;
    let results: Vec<ArtifactResult> = pool.install(|| {
        jobs.par_iter()
            .flat_map_iter(|(program, variant)| {
                let results = context.build_variant(program, variant, &targets_of(program, request));
                for result in &results {
                    progress(result);
                }
                results
            })
            .collect()
    });

    let mut catalogs: BTreeMap<&str, CatalogProgram> = BTreeMap::new();
    let mut objects: BTreeSet<ObjectKey> = BTreeSet::new();
    for (program, variant) in &jobs {
        catalogs
            .entry(program.name.as_str())
            .or_insert_with(|| CatalogProgram::new(program, &manifest.path))
            .variants
            .insert(
                variant.name.clone(),
                CatalogVariant { values: variant.values.clone(), objects: Default::default() },
            );
    }
    for result in results {
        let (object, bytes) = match result.outcome {
            Outcome::Built { object, bytes } => {
                summary.built += 1;
                (object, bytes)
            }
            Outcome::Reused { object, bytes } => {
                summary.reused += 1;
                (object, bytes)
            }
            Outcome::Failed(message) => {
                summary.failed.push(Failure { what: format!("{} ({})", result.variant, result.target), message });
                continue;
            }
        };
        if objects.insert(object) {
            summary.bytes += bytes;
        }
        if let Some(entry) = catalogs.get_mut(result.program.as_str()).and_then(|c| c.variants.get_mut(&result.variant))
        {
            entry.objects.insert(result.target.clone(), object.hex());
        }
    }
    summary.unique_objects = objects.len();
    if !request.targets.is_empty() {
        // A build of some targets keeps the others' objects from the last catalog.
        let (previous, _) = catalog::read_all(store.root());
        for (name, catalog) in catalogs.iter_mut() {
            if let Some(previous) = previous.get(*name) {
                catalog.keep_other_targets(previous, &request.targets);
            }
        }
    }
    for (name, catalog) in &catalogs {
        if let Err(e) = catalog::write(store.root(), catalog) {
            summary.failed.push(Failure { what: format!("catalog of '{name}'"), message: e.to_string() });
        }
    }
    summary.elapsed = started.elapsed();
    Ok(summary)
}

fn selected<'a>(manifest: &'a Manifest, request: &'a BuildRequest) -> impl Iterator<Item = &'a Program> {
    manifest.programs.iter().filter(|p| request.programs.is_empty() || request.programs.contains(&p.name))
}

fn targets_of(program: &Program, request: &BuildRequest) -> Vec<String> {
    program
        .targets
        .iter()
        .map(|t| t.name.clone())
        .filter(|t| request.targets.is_empty() || request.targets.contains(t))
        .collect()
}

struct JobContext<'a> {
    store: &'a Store,
    journal: &'a Journal,
    /// (program, target) → the build system that compiles it, or why none does.
    compilers: HashMap<(String, String), Result<Compiler<'a>, String>>,
    /// File → BLAKE3 of its contents now (`None`: unreadable), for this build.
    hashes: Mutex<HashMap<String, Option<String>>>,
}

/// A target's build: its object's payload and the files it read.
struct Made {
    payload: Vec<u8>,
    files: Vec<(String, String)>,
}

impl JobContext<'_> {
    fn build_variant(&self, program: &Program, variant: &Variant, targets: &[String]) -> Vec<ArtifactResult> {
        let result = |target: &str, outcome: Outcome| ArtifactResult {
            program: program.name.clone(),
            variant: variant.name.clone(),
            target: target.to_owned(),
            outcome,
        };
        let mut results = Vec::new();
        let mut stale = Vec::new();
        for target in targets {
            let compiler = match self.compilers.get(&(program.name.clone(), target.clone())) {
                Some(Ok(compiler)) => *compiler,
                Some(Err(why)) => {
                    results.push(result(target, Outcome::Failed(why.clone())));
                    continue;
                }
                None => {
                    results.push(result(target, Outcome::Failed(format!("no build system chosen for {target}"))));
                    continue;
                }
            };
            let recipe = recipe_key(&compiler, program, variant, target);
            match self.up_to_date(&recipe) {
                Some((object, bytes)) => results.push(result(target, Outcome::Reused { object, bytes })),
                None => stale.push((target, compiler, recipe)),
            }
        }
        if stale.is_empty() {
            return results;
        }
        let desc = match program_desc(program, variant) {
            Ok(desc) => desc,
            Err(message) => {
                results.extend(stale.into_iter().map(|(t, _, _)| result(t, Outcome::Failed(message.clone()))));
                return results;
            }
        };
        // One request for every target: only its target changes.
        let mut request = OfflineRequest::new(desc, "");
        for (target, compiler, recipe) in stale {
            request.target = target.as_str().into();
            let outcome = match compiler.system.compile_offline(&request).into_result() {
                Ok(artifact) => {
                    let files = artifact.files_read.iter().map(|f| (f.path.to_string(), f.hash.to_string())).collect();
                    self.store_made(&recipe, Made { payload: artifact.bytes.into_vec(), files })
                }
                Err(e) => Outcome::Failed(format!("{e} ({})", compiler.name)),
            };
            results.push(result(target, outcome));
        }
        results
    }

    /// The journal's object for `recipe`, if every file it read is unchanged
    /// and the object is whole.
    fn up_to_date(&self, recipe: &ObjectKey) -> Option<(ObjectKey, u64)> {
        let entry = self.journal.get(recipe)?;
        for (file, hash) in &entry.files {
            if self.hash_of(file).as_deref() != Some(hash.as_str()) {
                return None;
            }
        }
        let object = ObjectKey::from_hex(&entry.object)?;
        match self.store.get(&object) {
            Ok(Some(payload)) => Some((object, payload.len() as u64)),
            Ok(None) => None,
            Err(e) => {
                tracing::warn!("{e}; rebuilding it");
                None
            }
        }
    }

    fn hash_of(&self, file: &str) -> Option<String> {
        let mut hashes = self.hashes.lock().unwrap_or_else(|p| p.into_inner());
        hashes
            .entry(file.to_owned())
            .or_insert_with(|| std::fs::read(file).ok().map(|bytes| blake3::hash(&bytes).to_hex().to_string()))
            .clone()
    }

    fn store_made(&self, recipe: &ObjectKey, made: Made) -> Outcome {
        let object = ObjectKey::from_parts([FORMAT.as_bytes(), &made.payload]);
        let bytes = made.payload.len() as u64;
        // Identical output from another variant or an earlier build: stored once.
        let stored = matches!(self.store.get(&object), Ok(Some(_)));
        if !stored && let Err(e) = self.store.put(&object, &made.payload) {
            return Outcome::Failed(format!("writing to the store: {e}"));
        }
        let entry = Entry { recipe: recipe.hex(), object: object.hex(), files: made.files };
        if let Err(e) = self.journal.append(&entry) {
            tracing::warn!("cannot append to the build journal: {e} (the next build redoes this artifact)");
        }
        Outcome::Built { object, bytes }
    }
}

/// Everything but file contents that changes an artifact's bytes.
fn recipe_key(compiler: &Compiler<'_>, program: &Program, variant: &Variant, target: &str) -> ObjectKey {
    let mut parts: Vec<Vec<u8>> =
        vec![FORMAT.into(), compiler.name.into(), compiler.identity.into(), target.into(), program.name.clone().into()];
    for stage in &program.stages {
        parts.push(stage.stage.name().into());
        parts.push(stage.file.to_string_lossy().into_owned().into());
        parts.push(stage.entry.clone().into());
        parts.push(stage.language().into());
    }
    for dir in &program.include_dirs {
        parts.push(dir.to_string_lossy().into_owned().into());
    }
    for define in &variant.defines {
        parts.push(format!("{}={}", define.name, define.value).into());
    }
    ObjectKey::from_parts(parts.iter().map(Vec::as_slice))
}

/// The variant's program, read from its files.
pub(crate) fn program_desc(program: &Program, variant: &Variant) -> Result<ProgramDesc, String> {
    let mut stages = Vec::new();
    for stage in &program.stages {
        let source = std::fs::read_to_string(&stage.file)
            .map_err(|e| format!("{}: cannot read the source: {e}", stage.file.display()))?;
        let mut desc =
            SourceDesc::glsl(stage.stage, stage.file.to_string_lossy(), source).with_language(stage.language());
        desc.entry_point = stage.entry.clone().into();
        for define in &variant.defines {
            desc.defines.push(define.clone());
        }
        for dir in &program.include_dirs {
            desc = desc.with_include_dir(dir.to_string_lossy());
        }
        stages.push(desc);
    }
    Ok(ProgramDesc::new(variant.name.clone(), stages))
}

/// Removes temporary files of writes whose process is gone (a killed
/// build); those of live processes — a concurrent build — stay.
pub fn remove_orphaned_temp_files(store_root: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(store_root.join("tmp")) else { return 0 };
    let mut removed = 0;
    for entry in entries.filter_map(|e| e.ok()) {
        let name = entry.file_name().to_string_lossy().into_owned();
        // `<what>.<pid>.<n>.tmp`
        let parts: Vec<&str> = name.split('.').collect();
        let pid = parts.len().checked_sub(3).and_then(|i| parts[i].parse::<u32>().ok());
        if let Some(pid) = pid
            && Path::new("/proc").is_dir()
            && !Path::new("/proc").join(pid.to_string()).exists()
            && std::fs::remove_file(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}
