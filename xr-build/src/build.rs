//! `xr build`: every (variant, target) of a manifest, in parallel, into the
//! store — reusing what the journal shows is still up to date.

use crate::last_good::LastGood;
use crate::paths::SourceRoot;
use crate::remote_exec::RemoteCompile;
use crate::report::{ArtifactId, Reports, failure_diagnostics};
use crate::{
    journal::{Entry, Journal},
    manifest::{Manifest, PluginOffer, Program},
    matrix::{Variant, variants},
};
use rayon::prelude::*;
use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    path::{Path, PathBuf},
    sync::{Arc, Mutex, mpsc::Receiver},
    time::{Duration, Instant},
};
use xr_host::Registry;
use xr_remote::{Kind, Remote};
use xr_sourcebuild::{CompileOption, Diagnostic, OfflineRequest, ProgramDesc, SourceBuildSystemBox, SourceDesc};
use xr_store::{
    LockKind, ObjectKey, Store, StoreError, StoreLock,
    catalog::{self, CatalogAxis, CatalogProgram, CatalogVariant},
};
use xr_worker::{CompileFailure, Compiled, Pool, PoolConfig, compile_in_process};

pub(crate) use xr_store::{FORMAT, object_key};

/// An empty catalog entry for `program` of the manifest at `manifest`.
fn catalog_entry(program: &Program, manifest: &Path) -> CatalogProgram {
    CatalogProgram {
        name: program.name.clone(),
        // Its file name: a catalog names no place on this machine.
        manifest: manifest.file_name().map(PathBuf::from).unwrap_or_default(),
        axes: program.axes.iter().map(|a| CatalogAxis { name: a.name.clone(), values: a.values() }).collect(),
        overrides: program.overrides.clone(),
        targets: program.targets.iter().map(|t| t.name.clone()).collect(),
        variants: BTreeMap::new(),
    }
}

/// What to build.
#[derive(Clone, Debug, Default)]
pub struct BuildRequest {
    /// Worker threads; one per core when `None`.
    pub jobs: Option<usize>,
    /// Only these targets (all of each program's when empty).
    pub targets: Vec<String>,
    /// Only these programs (all when empty).
    pub programs: Vec<String>,
    /// Only this part of the matrix, for one of several machines.
    pub shard: Option<Shard>,
    /// A shared cache read before building (see [`xr_remote`]).
    pub remote: Option<Arc<Remote>>,
    /// Upload what this build makes to the remote.
    pub upload: bool,
    /// Where the compiles run: in this process, or in worker processes
    /// that a crashing compiler takes down alone.
    pub compile_in: CompileIn,
    /// A farm that runs the compiles (see [`crate::remote_exec`]); those it
    /// cannot run go to `compile_in`.
    pub remote_exec: Option<Arc<crate::remote_exec::RemoteExec>>,
}

/// Where a build runs its compiles.
#[derive(Clone, Debug, Default)]
pub enum CompileIn {
    /// On this process's threads: what a debugger wants, and what an engine
    /// embedding the build uses. A native crash in a compiler ends the
    /// process, and a compile has no time limit (nothing can stop a thread
    /// inside native code).
    #[default]
    Process,
    /// In worker processes (see [`xr_worker::pool`]).
    Workers(Workers),
}

/// How a build's worker processes run.
#[derive(Clone, Debug)]
pub struct Workers {
    /// How to start one, and its memory cap.
    pub pool: PoolConfig,
    /// How long one compile may run, for programs whose manifest sets no
    /// `compile_timeout`.
    pub time_limit: Duration,
}

impl Workers {
    /// The time limit when neither the manifest nor the command line sets one.
    pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(300);
}

/// A shard that is not `I/N` with 1 ≤ I ≤ N.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{text}' is not a shard: write I/N with 1 <= I <= N, e.g. 2/3")]
pub struct BadShard {
    /// What was given.
    pub text: String,
}

/// One of `count` disjoint parts of a matrix (`index` from 1): a variant
/// belongs to the part its program's and its own name hash to, so every
/// machine splits a manifest the same way, and adding a variant moves no
/// other variant to another part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Which part, from 1.
    pub index: u32,
    /// How many parts.
    pub count: u32,
}

impl Shard {
    /// Parses `I/N` with 1 ≤ I ≤ N.
    pub fn parse(text: &str) -> Result<Self, BadShard> {
        let bad = || BadShard { text: text.to_owned() };
        let (index, count) = text.split_once('/').ok_or_else(bad)?;
        let (index, count) = (index.trim().parse().map_err(|_| bad())?, count.trim().parse().map_err(|_| bad())?);
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Self { index, count })
    }

    /// Whether the variant `variant` of `program` is in this part.
    pub fn contains(&self, program: &str, variant: &str) -> bool {
        let hash = blake3::hash(format!("{program}\0{variant}").as_bytes());
        let head = u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("8 bytes"));
        head % u64::from(self.count) == u64::from(self.index - 1)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
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
    /// Fetched from the remote: the object another machine built from the
    /// same recipe and inputs, checked, now also in the local store.
    Fetched {
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
    /// Did not build: the compiler's diagnostics, with at least one error
    /// (a failure the compiler gave no place for is an error with no file).
    Failed(Vec<Diagnostic>),
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
    /// The compiler plugin that built it ("" when none could be chosen).
    pub compiler: String,
    /// What happened.
    pub outcome: Outcome,
    /// The compiler's warnings, when it compiled now.
    pub warnings: Vec<Diagnostic>,
}

impl ArtifactResult {
    /// Which artifact this is.
    pub fn id(&self) -> ArtifactId {
        ArtifactId { program: self.program.clone(), variant: self.variant.clone(), target: self.target.clone() }
    }
}

/// A failure: a (variant, target), or a whole program, with its diagnostics.
#[derive(Clone, Debug)]
pub struct Failure {
    /// What failed: `variant (target)` or `program 'name'`.
    pub what: String,
    /// Why, in one line: the first error.
    pub message: String,
    /// The artifact, when it is one's.
    pub artifact: Option<ArtifactId>,
    /// The compiler plugin that failed ("" when none).
    pub compiler: String,
    /// Every diagnostic of the failure (empty when it is no artifact's).
    pub diagnostics: Vec<Diagnostic>,
}

impl Failure {
    /// A failure of `what` that is no artifact's.
    fn of(what: String, message: String) -> Self {
        Self { what, message, artifact: None, compiler: String::new(), diagnostics: Vec::new() }
    }
}

/// The warnings of one artifact compiled now.
#[derive(Clone, Debug)]
pub struct Warned {
    /// The artifact.
    pub artifact: ArtifactId,
    /// The compiler plugin.
    pub compiler: String,
    /// Its warnings.
    pub warnings: Vec<Diagnostic>,
}

/// The end of a build.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Artifacts built now.
    pub built: usize,
    /// Artifacts fetched from the remote.
    pub fetched: usize,
    /// Artifacts reused.
    pub reused: usize,
    /// Failures, each with its diagnostics.
    pub failed: Vec<Failure>,
    /// Failed artifacts whose last good object the catalog keeps, marked
    /// stale.
    pub kept_last_good: usize,
    /// Artifacts built with warnings.
    pub warned: Vec<Warned>,
    /// Distinct objects the built and reused artifacts are.
    pub unique_objects: usize,
    /// Their payload bytes.
    pub bytes: u64,
    /// Wall time.
    pub elapsed: Duration,
    /// The objects the built, fetched and reused artifacts are.
    pub objects: BTreeSet<ObjectKey>,
    /// Every file those artifacts read, with the BLAKE3 of its contents (hex).
    pub inputs: BTreeMap<String, String>,
    /// The catalog files written (or found unchanged).
    pub catalogs: Vec<PathBuf>,
    /// Worker processes started (replacements of crashed ones included).
    pub workers_started: usize,
    /// The journal's compaction, when this build compacted it.
    pub journal_compacted: Option<crate::journal::Rewritten>,
    /// Compiles run on the farm.
    pub remote_executed: u64,
    /// Compiles the farm's action cache answered.
    pub remote_cached: u64,
    /// Compiles sent to the farm that ran here instead.
    pub remote_fallback: u64,
}

impl Summary {
    /// Every failure and warning, one report per distinct diagnostic.
    pub fn reports(&self) -> Reports {
        let mut reports = Reports::default();
        for failure in &self.failed {
            match &failure.artifact {
                Some(artifact) => reports.add(Some(artifact), &failure.compiler, &failure.diagnostics),
                None => reports.add_failure(&failure.what, &failure.message),
            }
        }
        for warned in &self.warned {
            reports.add(Some(&warned.artifact), &warned.compiler, &warned.warnings);
        }
        reports
    }
}

/// Why a build could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum BuildFailure {
    /// The store could not be opened.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The store could not be made or written at all (its directory is a
    /// file, or cannot be created).
    #[error("cannot write the store {} (making its objects/ and tmp/ directories): {cause}", root.display())]
    StoreNotWritable {
        /// The store's directory.
        root: PathBuf,
        /// What failed, at its path (in the message, so not a `source`).
        cause: StoreError,
    },
    /// A worker pool could not start.
    #[error("cannot start {jobs} build threads: {message}")]
    Threads {
        /// Threads asked for.
        jobs: usize,
        /// Why.
        message: String,
    },
    /// An unknown program was asked for.
    #[error("{manifest}: no program named '{name}'{}", crate::suggest::did_you_mean(name, known.iter().map(String::as_str)))]
    UnknownProgram {
        /// The manifest.
        manifest: String,
        /// The name.
        name: String,
        /// The manifest's programs (the closest is suggested).
        known: Vec<String>,
    },
}

/// Counts the artifacts `request` asks for (for a progress bar's length).
pub fn count_artifacts(manifest: &Manifest, request: &BuildRequest) -> usize {
    selected(manifest, request)
        .map(|program| {
            let in_shard = |v: &Variant| request.shard.is_none_or(|s| s.contains(&program.name, &v.name));
            variants(program).map_or(0, |v| v.iter().filter(|v| in_shard(v)).count())
                * targets_of(program, request).len()
        })
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
    offer.pairs.sort();
    offer.pairs.dedup();
    for (language, target) in &offer.pairs {
        let Ok((chosen, _)) = registry.offline_compiler(language, target) else { continue };
        // The one chosen by priority first, then the others that compile
        // the pair (a program of stages the first lacks goes to them).
        let mut others: Vec<&xr_sourcebuild::BuildSystemInfo> = registry
            .build_system_entries()
            .map(|(info, _)| info)
            .filter(|info| info.name != chosen.name && info.compiles_pair(language, target))
            .collect();
        others.sort_by_key(|info| std::cmp::Reverse(info.priority));
        for info in std::iter::once(chosen).chain(others) {
            if let Some(pair) =
                info.compiles.iter().find(|p| p.language == language.as_str() && p.target == target.as_str())
            {
                // A pair that names no stages compiles its build system's.
                let mut pair = pair.clone();
                if pair.stages.is_empty() {
                    pair.stages = info.stages.clone();
                }
                offer.compilers.push((info.name.to_string(), pair));
            }
        }
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
    /// The plugin file it came from (what a remote action carries).
    plugin: &'r Path,
}

/// The build system for every stage language of `program` into `target`:
/// one system must compile them all.
fn compiler_for<'r>(registry: &'r Registry, program: &Program, target: &str) -> Result<Compiler<'r>, String> {
    let mut languages: Vec<&str> = program.stages.iter().map(|s| s.language()).collect();
    languages.sort();
    languages.dedup();
    let mut chosen: Option<Compiler<'r>> = None;
    for language in languages {
        let stages: Vec<xr_sourcebuild::ShaderStage> =
            program.stages.iter().filter(|s| s.language() == language).map(|s| s.stage).collect();
        let (info, system) = registry.offline_compiler_for(language, target, &stages).map_err(|e| e.to_string())?;
        let plugin = registry
            .plugins()
            .iter()
            .find(|p| p.build_systems.iter().any(|(i, _)| i.name.as_str() == info.name.as_str()))
            .map_or(Path::new(""), |p| p.path.as_path());
        let compiler = Compiler { name: info.name.as_str(), identity: info.compiler_identity.as_str(), system, plugin };
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
    check_programs_exist(manifest, request)?;
    let (store, lock) = open_store(&manifest.store)?;
    let mut journal = Journal::open(store.root());
    let (context, batches) = JobContext::new(&store, &journal, registry, manifest, request);
    let mut summary = Summary::default();
    let plan = Plan::new(manifest, request, &mut summary.failed);
    let remote_before = request.remote_exec.as_ref().map(|r| r.stats());
    let pool = thread_pool(match &request.remote_exec {
        // Threads that mostly wait on the farm: as many as actions in flight.
        Some(remote) if remote.usable() => Some(remote.jobs().max(request.jobs.unwrap_or(0))),
        _ => request.jobs,
    })?;
    let outcomes = plan.compile_all(&pool, &context, batches, progress);
    let finished = context.finish();
    journal.release_entries();
    if let Some(message) = finished.sync_failure {
        // Objects that may not survive a power loss are named by no catalog.
        summary.failed.push(Failure::of(format!("store {}", store.root().display()), message));
        summary.elapsed = started.elapsed();
        return Ok(summary);
    }
    xr_store::test_hooks::pause_before_catalog();
    let task_objects = plan.count_outcomes(outcomes, &finished.compiler_names, &store, &mut summary);
    plan.write_catalogs(&task_objects, &manifest.path, &store, &mut summary);
    // What is held per artifact goes before the journal is compacted.
    drop((plan, task_objects));
    summary.journal_compacted = compact_journal_if_due(&journal, &store, lock);
    show_files(&SourceRoot::of_manifest(&manifest.path), &mut summary);
    summary.inputs = finished.inputs;
    summary.workers_started = finished.workers_started;
    if let (Some(remote), Some(before)) = (&request.remote_exec, remote_before) {
        let after = remote.stats();
        summary.remote_executed = after.executed + after.failed - before.executed - before.failed;
        summary.remote_cached = after.cached - before.cached;
        summary.remote_fallback = after.fallback - before.fallback;
    }
    summary.elapsed = started.elapsed();
    Ok(summary)
}

/// Names the files of the summary's diagnostics as the user can open them
/// (compilers named them relative to the manifest's directory).
fn show_files(root: &SourceRoot, summary: &mut Summary) {
    for failure in &mut summary.failed {
        root.show(&mut failure.diagnostics);
        if let Some(first) = failure.diagnostics.iter().find(|d| d.severity == xr_sourcebuild::Severity::Error) {
            failure.message = first.to_string();
        }
    }
    for warned in &mut summary.warned {
        root.show(&mut warned.warnings);
    }
}

/// Fails when `request` asks for a program that `manifest` does not have.
fn check_programs_exist(manifest: &Manifest, request: &BuildRequest) -> Result<(), BuildFailure> {
    for name in &request.programs {
        if !manifest.programs.iter().any(|p| &p.name == name) {
            return Err(BuildFailure::UnknownProgram {
                manifest: manifest.path.display().to_string(),
                name: name.clone(),
                known: manifest.programs.iter().map(|p| p.name.clone()).collect(),
            });
        }
    }
    Ok(())
}

/// Opens the store at `root` for a build, with its lock taken shared, and
/// removes the temporary files that killed builds left there.
fn open_store(root: &Path) -> Result<(Store, StoreLock), BuildFailure> {
    let store =
        Store::open(root).map_err(|cause| BuildFailure::StoreNotWritable { root: root.to_path_buf(), cause })?;
    // Held to the end: no gc deletes what this build finds or writes before its catalogs name it.
    let lock = store.lock(LockKind::Shared, || {
        tracing::warn!("waiting for `xr store gc` on {} to finish", store.root().display())
    })?;
    remove_orphaned_temp_files(store.root());
    Ok((store, lock))
}

/// The build system of every (program, target) `request` asks for, or why
/// none compiles it.
fn choose_compilers<'r>(
    registry: &'r Registry,
    manifest: &Manifest,
    request: &BuildRequest,
) -> HashMap<(String, String), Result<Compiler<'r>, String>> {
    let mut compilers = HashMap::new();
    for program in selected(manifest, request) {
        for target in targets_of(program, request) {
            let compiler = compiler_for(registry, program, &target);
            compilers.insert((program.name.clone(), target), compiler);
        }
    }
    compilers
}

/// The pool of build threads: `jobs` of them, or one per core when `None`.
fn thread_pool(jobs: Option<usize>) -> Result<rayon::ThreadPool, BuildFailure> {
    let threads = jobs.unwrap_or(0);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| BuildFailure::Threads { jobs: threads, message: e.to_string() })
}

/// Compacts the journal when it is due ([`Journal::needs_compaction`]) and
/// no other build runs; `lock`, the build's shared lock, is given up first.
fn compact_journal_if_due(journal: &Journal, store: &Store, lock: StoreLock) -> Option<crate::journal::Rewritten> {
    if !journal.needs_compaction() {
        return None;
    }
    // Alone, or not at all: a build running beside this one appends to
    // the journal, and its lines would be lost in the rename.
    drop(lock);
    let Ok(Some(_alone)) = store.try_lock(LockKind::Exclusive) else { return None };
    let in_store = |hex: &str| ObjectKey::from_hex(hex).is_some_and(|k| store.path_of(&k).is_file());
    match Journal::rewrite(store.root(), in_store) {
        Ok(done) => {
            tracing::info!("compacted the build journal: {} lines to {}", done.lines_before, done.lines_after);
            Some(done)
        }
        Err(e) => {
            tracing::warn!("cannot compact the build journal: {e} (it stays as it is)");
            None
        }
    }
}

/// What a build compiles: its jobs, each a variant of a program, and its
/// tasks, each a (job, target) that gives one outcome.
struct Plan<'a> {
    request: &'a BuildRequest,
    /// Every variant asked for, with its program.
    jobs: Vec<(&'a Program, Variant)>,
    /// The targets of the jobs, sorted, each once.
    target_names: Vec<String>,
    /// (index into `jobs`, index into `target_names`), target by target.
    tasks: Vec<(usize, usize)>,
}

/// Each task's outcome, in task order; warnings, which few artifacts have,
/// by task beside them.
struct TaskOutcomes {
    outcomes: Vec<Outcome>,
    warnings: HashMap<usize, Vec<Diagnostic>>,
}

impl<'a> Plan<'a> {
    /// The plan of `request`; each program whose variants cannot be made is
    /// a failure in `failed`.
    fn new(manifest: &'a Manifest, request: &'a BuildRequest, failed: &mut Vec<Failure>) -> Self {
        let jobs = Self::jobs(manifest, request, failed);
        let (target_names, tasks) = Self::tasks(&jobs, request);
        Self { request, jobs, target_names, tasks }
    }

    /// The variants of the programs `request` selects, in its shard.
    fn jobs(
        manifest: &'a Manifest,
        request: &'a BuildRequest,
        failed: &mut Vec<Failure>,
    ) -> Vec<(&'a Program, Variant)> {
        let mut jobs = Vec::new();
        for program in selected(manifest, request) {
            match variants(program) {
                Ok(list) => jobs.extend(
                    list.into_iter()
                        .filter(|v| request.shard.is_none_or(|s| s.contains(&program.name, &v.name)))
                        .map(|v| (program, v)),
                ),
                Err(message) => failed.push(Failure::of(format!("program '{}'", program.name), message.to_string())),
            }
        }
        jobs
    }

    /// The target names of `jobs` and their tasks.
    fn tasks(jobs: &[(&Program, Variant)], request: &BuildRequest) -> (Vec<String>, Vec<(usize, usize)>) {
        // Target by target: the threads split the list into runs of one
        // target, so that each compiler worker mostly serves one compiler and
        // starts (and caches for) only that one; in process, the threads start
        // different plugins at once instead of queueing on one's start-up.
        // Each task is (job index, index into the sorted target names) and
        // gives one outcome; names are looked up in `jobs` and `target_names`
        // at the end: what a build holds per artifact stays small.
        let mut target_names: Vec<String> = jobs.iter().flat_map(|(program, _)| targets_of(program, request)).collect();
        target_names.sort();
        target_names.dedup();
        let target_index = |target: &str| target_names.binary_search_by(|t| t.as_str().cmp(target)).unwrap_or(0);
        let mut tasks: Vec<(usize, usize)> = jobs
            .iter()
            .enumerate()
            .flat_map(|(job, (program, _))| {
                targets_of(program, request).into_iter().map(move |t| (job, target_index(&t))).collect::<Vec<_>>()
            })
            .collect();
        tasks.sort_by_key(|(_, target)| *target);
        (target_names, tasks)
    }

    /// Runs every task on `pool` with `context`, telling `progress` of each
    /// artifact as it ends, while a thread syncs the store and journals the
    /// finished entries that come through `batches`. Returns once every
    /// entry is journalled, or the sync failed (then `context` says why).
    fn compile_all(
        &self,
        pool: &rayon::ThreadPool,
        context: &JobContext<'_>,
        batches: Receiver<Vec<Entry>>,
        progress: &(dyn Fn(&ArtifactResult) + Sync),
    ) -> TaskOutcomes {
        // One outcome per task, in task order (an indexed collect: written in
        // place, never gathered in pieces and copied).
        let warnings_of_tasks: Mutex<HashMap<usize, Vec<Diagnostic>>> = Mutex::new(HashMap::new());
        let (store, journal) = (context.store, context.journal);
        let outcomes = std::thread::scope(|scope| {
            let syncing = scope.spawn(move || crate::durable::run(store, journal, batches));
            let closing = context.syncer.closing();
            let outcomes = pool.install(|| {
                self.tasks
                    .par_iter()
                    .enumerate()
                    .map(|(task, (job, target))| {
                        let (program, variant) = &self.jobs[*job];
                        let target = &self.target_names[*target];
                        let results = context.build_variant(program, variant, std::slice::from_ref(target));
                        for result in &results {
                            progress(result);
                        }
                        // One target asked for, one result.
                        let Some(result) = results.into_iter().next() else {
                            return Outcome::Failed(vec![Diagnostic::error("", 0, "the build gave no result")]);
                        };
                        if !result.warnings.is_empty() {
                            let mut warned = warnings_of_tasks.lock().unwrap_or_else(|p| p.into_inner());
                            warned.insert(task, result.warnings);
                        }
                        result.outcome
                    })
                    .collect()
            });
            // Every entry synced and journalled before any catalog names its object.
            context.flush_journal();
            drop(closing);
            let failed = syncing.join().unwrap_or_else(|_| Some("the thread syncing the store panicked".to_owned()));
            if let Some(message) = failed {
                context.sync_failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(message);
            }
            outcomes
        });
        TaskOutcomes { outcomes, warnings: warnings_of_tasks.into_inner().unwrap_or_else(|p| p.into_inner()) }
    }

    /// Counts the tasks' outcomes into `summary` (named after the compiler
    /// of each (program, target) in `compiler_names`) and gives each task's
    /// object for the catalogs (none where it failed). The outcomes go as
    /// they are counted.
    fn count_outcomes(
        &self,
        outcomes: TaskOutcomes,
        compiler_names: &HashMap<(String, String), String>,
        store: &Store,
        summary: &mut Summary,
    ) -> Vec<Option<ObjectKey>> {
        let TaskOutcomes { outcomes, warnings: mut warnings_of_tasks } = outcomes;
        let mut objects: BTreeSet<ObjectKey> = BTreeSet::new();
        let mut task_objects: Vec<Option<ObjectKey>> = Vec::with_capacity(self.tasks.len());
        for (task, ((job, target), outcome)) in self.tasks.iter().zip(outcomes).enumerate() {
            let warnings = warnings_of_tasks.remove(&task).unwrap_or_default();
            let (program, variant) = &self.jobs[*job];
            let target = &self.target_names[*target];
            let id =
                ArtifactId { program: program.name.clone(), variant: variant.name.clone(), target: target.clone() };
            let compiler = || compiler_names.get(&(program.name.clone(), target.clone())).cloned().unwrap_or_default();
            if !warnings.is_empty() {
                summary.warned.push(Warned { artifact: id.clone(), compiler: compiler(), warnings });
            }
            let mut outcome = outcome;
            // The lock keeps gc out; this catches any other removal (a person,
            // another tool) since the object was found or written: a catalog
            // never names an object that is not there.
            if let Outcome::Built { object, .. } | Outcome::Fetched { object, .. } | Outcome::Reused { object, .. } =
                &outcome
                && !store.path_of(object).is_file()
            {
                let message = format!("its object {} was removed from the store while the build ran", object.hex());
                outcome = Outcome::Failed(vec![Diagnostic::error("", 0, message)]);
            }
            let (object, bytes) = match outcome {
                Outcome::Built { object, bytes } => {
                    summary.built += 1;
                    (object, bytes)
                }
                Outcome::Fetched { object, bytes } => {
                    summary.fetched += 1;
                    (object, bytes)
                }
                Outcome::Reused { object, bytes } => {
                    summary.reused += 1;
                    (object, bytes)
                }
                Outcome::Failed(diagnostics) => {
                    let message = diagnostics
                        .iter()
                        .find(|d| d.severity == xr_sourcebuild::Severity::Error)
                        .map(|d| d.to_string())
                        .unwrap_or_default();
                    summary.failed.push(Failure {
                        what: format!("{} ({target})", variant.name),
                        message,
                        artifact: Some(id),
                        compiler: compiler(),
                        diagnostics,
                    });
                    task_objects.push(None);
                    continue;
                }
            };
            if objects.insert(object) {
                summary.bytes += bytes;
            }
            task_objects.push(Some(object));
        }
        summary.unique_objects = objects.len();
        summary.objects = objects;
        task_objects
    }

    /// Writes the catalogs of the manifest at `manifest` into `store`,
    /// program by program in name order, naming each task's object in
    /// `task_objects`; each catalog written (or its failure) is in `summary`.
    fn write_catalogs(
        &self,
        task_objects: &[Option<ObjectKey>],
        manifest: &Path,
        store: &Store,
        summary: &mut Summary,
    ) {
        let (jobs, tasks, request) = (&self.jobs, &self.tasks, self.request);
        // Each variant's entry made as it is written: nothing is held per variant.
        let mut by_job: Vec<(usize, usize)> = tasks.iter().enumerate().map(|(task, (job, _))| (*job, task)).collect();
        by_job.sort_unstable();
        // A failed artifact keeps the object the catalog named before this build.
        let last_good = LastGood::read(store, &summary.failed);
        summary.kept_last_good = last_good.len();
        let catalog_variant = |job: usize| {
            let (program, variant) = &jobs[job];
            let start = by_job.partition_point(|(j, _)| *j < job);
            let objects = by_job[start..]
                .iter()
                .take_while(|(j, _)| *j == job)
                .filter_map(|(_, task)| {
                    task_objects[*task].map(|object| (self.target_names[tasks[*task].1].clone(), object.hex()))
                })
                .collect();
            let mut entry = CatalogVariant { values: variant.values(program), objects, ..CatalogVariant::default() };
            last_good.keep(&program.name, &variant.name, &mut entry);
            (variant.name.clone(), entry)
        };
        let mut programs: Vec<(&str, Vec<usize>)> = Vec::new();
        for (job, (program, _)) in jobs.iter().enumerate() {
            match programs.iter_mut().find(|(name, _)| *name == program.name) {
                Some((_, jobs)) => jobs.push(job),
                None => programs.push((program.name.as_str(), vec![job])),
            }
        }
        programs.sort_by(|a, b| a.0.cmp(b.0));
        // A build of part of the matrix keeps the rest of the last catalog: the
        // other targets' objects, the other shards' variants.
        let partial = !request.targets.is_empty() || request.shard.is_some();
        let previous = if partial { catalog::read_all(store.root()).0 } else { BTreeMap::new() };
        for (name, mut program_jobs) in programs {
            program_jobs.sort_by(|a, b| jobs[*a].1.name.cmp(&jobs[*b].1.name));
            let mut catalog = catalog_entry(jobs[program_jobs[0]].0, manifest);
            let written = if partial {
                catalog.variants = program_jobs.iter().map(|job| catalog_variant(*job)).collect();
                if let Some(previous) = previous.get(name) {
                    if !request.targets.is_empty() {
                        catalog.keep_other_targets(previous, &request.targets);
                    }
                    if let Some(shard) = request.shard {
                        catalog.keep_other_variants(previous, |variant| !shard.contains(name, variant));
                    }
                }
                catalog::write(store.root(), &catalog)
            } else {
                catalog::write_streamed(store.root(), &catalog, program_jobs.iter().map(|job| catalog_variant(*job)))
            };
            match written {
                Ok(path) => summary.catalogs.push(path),
                Err(e) => summary.failed.push(Failure::of(
                    format!("catalog of '{name}'"),
                    format!("cannot write the catalog of program '{name}': {e}"),
                )),
            }
        }
    }
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
    /// The shared cache, if one is set and still answers.
    remote: Option<&'a Remote>,
    /// Upload what is built here.
    upload: bool,
    /// What names in keys, the journal and compiles are relative to: the
    /// manifest's directory (`paths`).
    root: SourceRoot,
    /// Journal entries waiting for their objects to be synced.
    pending: Mutex<Pending>,
    /// Where closed batches go to be synced and journalled.
    syncer: crate::durable::Syncer,
    /// Every file the finished artifacts read, with its hash.
    inputs: Mutex<BTreeMap<String, String>>,
    /// Why syncing the store failed, if it did.
    sync_failure: Mutex<Option<String>>,
    /// The worker processes and the default time limit, when compiles run
    /// in workers.
    workers: Option<(Pool, Duration)>,
    /// The farm, when compiles go to one.
    remote_exec: Option<&'a crate::remote_exec::RemoteExec>,
    /// Local compiles at once, when the build's threads outnumber the
    /// cores because they wait on a farm.
    local_slots: Option<Slots>,
}

/// A counting gate: at most `n` holders at once.
struct Slots {
    free: Mutex<usize>,
    freed: std::sync::Condvar,
}

impl Slots {
    fn new(n: usize) -> Self {
        Self { free: Mutex::new(n.max(1)), freed: std::sync::Condvar::new() }
    }

    /// Runs `work` once a slot is free.
    fn with<T>(&self, work: impl FnOnce() -> T) -> T {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= 1;
        drop(free);
        let result = work();
        *self.free.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.freed.notify_one();
        result
    }
}

/// What the remote keeps for an action: the object one recipe made from
/// inputs with these contents, named as the journal names them (relative to
/// the manifest's directory).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct ActionRecord {
    /// The object, hex.
    pub object: String,
    /// (file, BLAKE3 of its contents, hex) for every file the build read.
    pub files: Vec<(String, String)>,
}

/// A target's build: its object's payload and the files it read.
struct Made {
    payload: Vec<u8>,
    files: Vec<(String, String)>,
}

/// What the rest of a build needs of the compiles' context, which goes then
/// (its worker processes with it).
struct Finished {
    /// The compiler of each (program, target), named in warnings and failures.
    compiler_names: HashMap<(String, String), String>,
    /// Why syncing the store failed, if it did.
    sync_failure: Option<String>,
    /// Every file the finished artifacts read, with its hash.
    inputs: BTreeMap<String, String>,
    /// Worker processes started.
    workers_started: usize,
}

impl<'a> JobContext<'a> {
    /// The context of the compiles of `request`, with the build system of
    /// each (program, target) chosen, and the receiving end of its syncer
    /// (for [`crate::durable::run`]).
    fn new(
        store: &'a Store,
        journal: &'a Journal,
        registry: &'a Registry,
        manifest: &Manifest,
        request: &'a BuildRequest,
    ) -> (Self, Receiver<Vec<Entry>>) {
        let (syncer, batches) = crate::durable::Syncer::new();
        let context = Self {
            store,
            journal,
            compilers: choose_compilers(registry, manifest, request),
            hashes: Mutex::new(HashMap::new()),
            remote: request.remote.as_deref().filter(|r| r.is_usable()),
            upload: request.upload,
            root: SourceRoot::of_manifest(&manifest.path),
            pending: Mutex::new(Pending::default()),
            syncer,
            inputs: Mutex::new(BTreeMap::new()),
            sync_failure: Mutex::new(None),
            workers: match &request.compile_in {
                CompileIn::Process => None,
                CompileIn::Workers(workers) => Some((Pool::new(workers.pool.clone()), workers.time_limit)),
            },
            remote_exec: request.remote_exec.as_deref().filter(|r| r.usable()),
            local_slots: request.remote_exec.as_ref().map(|_| {
                Slots::new(request.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())))
            }),
        };
        if let Some(remote) = context.remote_exec {
            remote.begin_build(registry);
        }
        (context, batches)
    }

    /// Ends the compiles: what the rest of the build needs of them.
    fn finish(self) -> Finished {
        let compiler_names = self
            .compilers
            .iter()
            .map(|(key, compiler)| (key.clone(), compiler.as_ref().map(|c| c.name.to_owned()).unwrap_or_default()))
            .collect();
        Finished {
            compiler_names,
            sync_failure: self.sync_failure.into_inner().unwrap_or_else(|p| p.into_inner()),
            inputs: self.inputs.into_inner().unwrap_or_else(|p| p.into_inner()),
            workers_started: self.workers.as_ref().map_or(0, |(pool, _)| pool.started()),
        }
    }

    fn build_variant(&self, program: &Program, variant: &Variant, targets: &[String]) -> Vec<ArtifactResult> {
        let result = |target: &str, compiler: &str, outcome: Outcome| ArtifactResult {
            program: program.name.clone(),
            variant: variant.name.clone(),
            target: target.to_owned(),
            compiler: compiler.to_owned(),
            outcome,
            warnings: Vec::new(),
        };
        let failed = |message: &str| Outcome::Failed(vec![Diagnostic::error("", 0, message)]);
        let mut results = Vec::new();
        let mut stale = Vec::new();
        for target in targets {
            let compiler = match self.compilers.get(&(program.name.clone(), target.clone())) {
                Some(Ok(compiler)) => *compiler,
                Some(Err(why)) => {
                    results.push(result(target, "", failed(why)));
                    continue;
                }
                None => {
                    results.push(result(target, "", failed(&format!("no build system chosen for {target}"))));
                    continue;
                }
            };
            let recipe = recipe_key(&compiler, program, variant, target, &|p| self.root.name(p));
            if let Some((object, bytes)) = self.up_to_date(&recipe) {
                results.push(result(target, compiler.name, Outcome::Reused { object, bytes }));
                continue;
            }
            let action = self.remote.and_then(|_| self.action_key(&recipe, program));
            match action.as_ref().and_then(|action| self.fetch(action, &recipe)) {
                Some((object, bytes)) => {
                    results.push(result(target, compiler.name, Outcome::Fetched { object, bytes }))
                }
                None => stale.push((target, compiler, recipe, action)),
            }
        }
        if stale.is_empty() {
            return results;
        }
        let desc = match program_desc(program, variant, &self.root) {
            Ok(desc) => desc,
            Err(message) => {
                results.extend(stale.into_iter().map(|(t, compiler, ..)| result(t, compiler.name, failed(&message))));
                return results;
            }
        };
        // One request for every target: only its target and options change.
        let mut request = OfflineRequest::new(desc, "");
        let limit = program.compile_timeout.unwrap_or(match &self.workers {
            Some((_, limit)) => *limit,
            None => Workers::DEFAULT_TIME_LIMIT,
        });
        let mut lease = None;
        for (target, compiler, recipe, action) in stale {
            request.target = target.as_str().into();
            request.options = program
                .options_for(target)
                .iter()
                .map(|(name, value)| CompileOption { name: name.as_str().into(), value: value.as_str().into() })
                .collect();
            let mut warnings = Vec::new();
            let remote = self.remote_exec.filter(|r| r.usable()).map(|remote| {
                let memory_limit = match &self.workers {
                    Some((pool, _)) => pool.config().memory_limit,
                    None => None,
                };
                match remote.compile(compiler.name, compiler.plugin, &request, limit, memory_limit, &self.root) {
                    RemoteCompile::Done(result) => Some(result),
                    RemoteCompile::Local(why) => {
                        tracing::debug!("{}[{target}] compiles here: {why}", variant.name);
                        remote.note_fallback();
                        None
                    }
                }
            });
            let compiled = match remote.flatten() {
                Some(result) => result,
                None => match &self.local_slots {
                    // A worker per compile, given back after it: the threads
                    // outnumber the slots, and idle workers must not pile up.
                    Some(slots) => slots.with(|| self.compile_here(compiler, &request, &mut None, limit)),
                    None => self.compile_here(compiler, &request, &mut lease, limit),
                },
            };
            let outcome = match compiled {
                Ok(Compiled { bytes, files_read, warnings: said }) => {
                    warnings = said;
                    let files = files_read.into_iter().map(|f| (f.path.into_string(), f.hash.into_string())).collect();
                    let made = Made { payload: bytes, files };
                    if let (Some(action), true) = (&action, self.upload) {
                        self.upload(action, &made);
                    }
                    self.store_made(&recipe, made)
                }
                Err(e) => Outcome::Failed(failure_diagnostics(&e.message, &e.diagnostics, &variant.name)),
            };
            let mut done = result(target, compiler.name, outcome);
            done.warnings = warnings;
            results.push(done);
        }
        results
    }

    /// Compiles `request` on this machine: in a worker of the build's pool
    /// (leased on first use, kept for the variant's other targets), or in
    /// this process.
    fn compile_here<'s>(
        &'s self,
        compiler: Compiler<'_>,
        request: &OfflineRequest,
        lease: &mut Option<xr_worker::Lease<'s>>,
        limit: Duration,
    ) -> Result<Compiled, CompileFailure> {
        match &self.workers {
            Some((pool, _)) => lease
                .get_or_insert_with(|| pool.lease())
                .compile(compiler.name, request, limit)
                .unwrap_or_else(|ended| Err(CompileFailure::message(ended.to_string()))),
            None => compile_in_process(compiler.system, request),
        }
    }

    /// The journal's object for `recipe`, if every file it read is unchanged
    /// and the object is whole: its stamp as journalled, or its checksum
    /// checked.
    fn up_to_date(&self, recipe: &ObjectKey) -> Option<(ObjectKey, u64)> {
        let entry = self.journal.get(recipe)?;
        for (file, hash) in entry.files {
            if self.hash_of(file).as_deref() != Some(hash.as_str()) {
                return None;
            }
        }
        let object = entry.object;
        // Untouched since it was journalled: whole, without reading it.
        if let Some(stamp) = entry.stamp
            && self.store.stamp(&object) == Some(stamp)
        {
            self.read_inputs(entry.files);
            return Some((object, stamp.payload_len()));
        }
        match self.store.get(&object) {
            Ok(Some(payload)) => {
                self.read_inputs(entry.files);
                Some((object, payload.len() as u64))
            }
            Ok(None) => None,
            Err(e) => {
                tracing::warn!("{e}; rebuilding it");
                None
            }
        }
    }

    /// Notes the files a finished artifact read, for the build stamp.
    fn read_inputs(&self, files: &[(String, String)]) {
        let mut inputs = self.inputs.lock().unwrap_or_else(|p| p.into_inner());
        for (file, hash) in files {
            inputs.insert(file.clone(), hash.clone());
        }
    }

    /// The hash of the file named `file` (relative to the root) now.
    fn hash_of(&self, file: &str) -> Option<String> {
        let mut hashes = self.hashes.lock().unwrap_or_else(|p| p.into_inner());
        hashes
            .entry(file.to_owned())
            .or_insert_with(|| {
                std::fs::read(self.root.on_disk(file)).ok().map(|bytes| blake3::hash(&bytes).to_hex().to_string())
            })
            .clone()
    }

    /// The remote's key of an action: the recipe (which names no place on
    /// this machine) and the contents of every stage's file (the files it
    /// includes are checked against the record). `None` when a stage file
    /// cannot be read (the build reports it).
    fn action_key(&self, recipe: &ObjectKey, program: &Program) -> Option<ObjectKey> {
        let mut parts = vec![b"xr-remote-action/2".to_vec(), recipe.0.to_vec()];
        for stage in &program.stages {
            parts.push(self.hash_of(&self.root.name(&stage.file))?.into_bytes());
        }
        Some(ObjectKey::from_parts(parts.iter().map(Vec::as_slice)))
    }

    /// The object the remote has for `action`, if every file its record
    /// lists reads the same here and the object is whole; stored locally
    /// and journalled under `recipe`, so that the next build reuses it.
    fn fetch(&self, action: &ObjectKey, recipe: &ObjectKey) -> Option<(ObjectKey, u64)> {
        let remote = self.remote?;
        let record = remote.get(Kind::Action, action)?;
        let Ok(record) = serde_json::from_slice::<ActionRecord>(&record) else {
            tracing::warn!("{}: not an action record; building it here", remote.address(&format!("ac/{action}")));
            return None;
        };
        for (file, hash) in &record.files {
            // An include that differs here: this machine's inputs are not the uploader's.
            if self.hash_of(file).as_deref() != Some(hash.as_str()) {
                return None;
            }
        }
        let files = record.files;
        let object = ObjectKey::from_hex(&record.object)?;
        let payload = remote.get(Kind::Object, &object)?;
        if object_key(&payload) != object {
            tracing::warn!(
                "{}: its bytes are not the object it is named after; building it here",
                remote.address(&format!("cas/{object}"))
            );
            return None;
        }
        match self.store_made(recipe, Made { payload, files }) {
            Outcome::Built { object, bytes } => Some((object, bytes)),
            _ => None,
        }
    }

    /// Uploads the object, then the action that names it, so that a reader
    /// never finds an action whose object is not there yet.
    fn upload(&self, action: &ObjectKey, made: &Made) {
        let Some(remote) = self.remote else { return };
        let object = object_key(&made.payload);
        let record = ActionRecord { object: object.hex(), files: made.files.clone() };
        let Ok(record) = serde_json::to_vec(&record) else { return };
        if remote.put(Kind::Object, &object, &made.payload) {
            remote.put(Kind::Action, action, &record);
        }
    }

    fn store_made(&self, recipe: &ObjectKey, made: Made) -> Outcome {
        let object = object_key(&made.payload);
        let bytes = made.payload.len() as u64;
        // Identical output from another variant or an earlier build: stored once.
        let stored = matches!(self.store.get(&object), Ok(Some(_)));
        if !stored && let Err(e) = self.store.put_unsynced(&object, &made.payload) {
            let message = format!("cannot write its object into the store {}: {e}", self.store.root().display());
            return Outcome::Failed(vec![Diagnostic::error("", 0, message)]);
        }
        self.read_inputs(&made.files);
        let stamp = self.store.stamp(&object);
        let entry = Entry { recipe: recipe.hex(), object: object.hex(), files: made.files, stamp };
        self.journal_when_durable(entry);
        Outcome::Built { object, bytes }
    }

    /// Journals `entry` once its object is durable. Objects are written
    /// without a sync each; a batch of entries goes to the syncer thread,
    /// which syncs the store (one `syncfs`) and then appends them, so that
    /// the journal never names an object a power loss could still tear
    /// (`durable`). A batch closes at [`SYNC_BATCH`] entries or
    /// [`SYNC_INTERVAL`] after its first; a killed build loses the entries
    /// of the batches not yet synced, which the next build redoes. A sync
    /// that fails fails the build (no catalog names the objects).
    fn journal_when_durable(&self, entry: Entry) {
        let batch = {
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            let first = *pending.since.get_or_insert_with(Instant::now);
            pending.entries.push(entry);
            if pending.entries.len() < SYNC_BATCH && first.elapsed() < SYNC_INTERVAL {
                return;
            }
            pending.since = None;
            std::mem::take(&mut pending.entries)
        };
        self.journal_batch(batch);
    }

    /// Syncs the store and journals every entry still waiting.
    fn flush_journal(&self) {
        let batch = {
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            pending.since = None;
            std::mem::take(&mut pending.entries)
        };
        self.journal_batch(batch);
    }

    /// Hands `batch` to the syncer thread, or, once it is closed, syncs and
    /// appends it here.
    fn journal_batch(&self, batch: Vec<Entry>) {
        let Err(batch) = self.syncer.send(batch) else { return };
        if let Err(message) = crate::durable::append_when_durable(self.store, self.journal, &batch) {
            // Not journalled, and the build fails before any catalog names them.
            self.sync_failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(message);
        }
    }
}

/// Entries that close a batch of unsynced objects.
const SYNC_BATCH: usize = 64;
/// Age at which a batch of unsynced objects closes, so that a slow build
/// keeps its work as it goes.
const SYNC_INTERVAL: Duration = Duration::from_millis(250);

/// Finished artifacts whose objects are not synced yet.
#[derive(Default)]
struct Pending {
    entries: Vec<Entry>,
    since: Option<Instant>,
}

/// Everything but file contents that changes an artifact's bytes, with
/// each path written by `path_text` (relative to the manifest's directory:
/// the key is the same in every checkout and for every spelling of it).
fn recipe_key(
    compiler: &Compiler<'_>,
    program: &Program,
    variant: &Variant,
    target: &str,
    path_text: &dyn Fn(&Path) -> String,
) -> ObjectKey {
    let mut parts: Vec<Vec<u8>> =
        vec![FORMAT.into(), compiler.name.into(), compiler.identity.into(), target.into(), program.name.clone().into()];
    for stage in &program.stages {
        parts.push(stage.stage.name().into());
        parts.push(path_text(&stage.file).into());
        parts.push(stage.entry.clone().into());
        parts.push(stage.language().into());
        // Only where named: programs of the default rule keep their keys.
        if let Some(group) = stage.hit_group {
            parts.push(format!("hit_group:{group}").into());
        }
    }
    for dir in &program.include_dirs {
        parts.push(path_text(dir).into());
    }
    for define in variant.defines(program) {
        parts.push(format!("{}={}", define.name, define.value).into());
    }
    // Only those given: programs without options keep the keys they always had.
    for (name, value) in program.options_for(target) {
        parts.push(format!("option:{name}={value}").into());
    }
    ObjectKey::from_parts(parts.iter().map(Vec::as_slice))
}

/// The variant's program, read from its files, which it names relative to
/// `root` and has read from there.
pub(crate) fn program_desc(program: &Program, variant: &Variant, root: &SourceRoot) -> Result<ProgramDesc, String> {
    let mut stages = Vec::new();
    let defines = variant.defines(program);
    for stage in &program.stages {
        let source = std::fs::read_to_string(&stage.file)
            .map_err(|e| format!("{}: cannot read the source: {e}", stage.file.display()))?;
        let mut desc = SourceDesc::new(stage.language(), stage.stage, root.name(&stage.file), source)
            .with_source_root(root.root().to_string_lossy());
        desc.entry_point = stage.entry.clone().into();
        desc.hit_group = stage.hit_group.into();
        desc.defines.extend(defines.iter().cloned());
        for dir in &program.include_dirs {
            desc = desc.with_include_dir(root.name(dir));
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

#[cfg(test)]
mod tests {
    use super::Shard;

    #[test]
    fn shards_split_variants_into_disjoint_parts_that_cover_them_all() {
        let names: Vec<String> = (0..600).map(|i| format!("toon[BANDS={i}]")).collect();
        let shards: Vec<Shard> = (1..=3).map(|index| Shard { index, count: 3 }).collect();
        let mut sizes = [0usize; 3];
        for name in &names {
            let owners: Vec<usize> = (0..3).filter(|&i| shards[i].contains("toon", name)).collect();
            assert_eq!(owners.len(), 1, "{name} is in exactly one part: {owners:?}");
            sizes[owners[0]] += 1;
        }
        assert!(sizes.iter().all(|&n| n > 150), "roughly even: {sizes:?}");
        // The same on every machine and every run: a function of the names only.
        assert!(Shard { index: 1, count: 1 }.contains("any", "thing"));
        let program_counts = Shard { index: 2, count: 3 };
        let moved = names.iter().filter(|n| program_counts.contains("toon", n) != program_counts.contains("lit", n));
        assert!(moved.count() > 0, "the program's name is part of the hash");
    }

    #[test]
    fn shard_text_is_i_of_n() {
        assert_eq!(Shard::parse("2/3"), Ok(Shard { index: 2, count: 3 }));
        assert_eq!(Shard::parse(" 1 / 1 ").map(|s| s.to_string()), Ok("1/1".to_owned()));
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", "-1/3", ""] {
            let error = Shard::parse(bad).unwrap_err();
            assert!(error.to_string().contains(&format!("'{bad}' is not a shard")), "{error}");
        }
    }
}
