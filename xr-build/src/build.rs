//! `xr build`'s order of work: every (variant, target) a plan asks for,
//! in parallel, through the chain of compiles (`crate::execute`) into the
//! store, then the catalogs. The choice of compiler is the plan's
//! ([`crate::plan`]); what runs each compile is the chain's.

use crate::error::{ArtifactError, FailureError, NotDurable};
use crate::execute::{self, Compiler, Inputs, Job, Journalled, Places};
use crate::last_good::LastGood;
use crate::paths::SourceRoot;
use crate::plan::{BuildPlan, PlanError, PlannedProgram};
use crate::recipe::recipe_key;
use crate::report::ArtifactId;
use crate::{ArtifactResult, BuildFailure, BuildRequest, CompileIn, Failure, Outcome, Summary, Warned, Workers};
use crate::{
    durable::Batcher,
    journal::{Entry, Journal},
    matrix::{Variant, variants},
};
use rayon::prelude::*;
use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    path::{Path, PathBuf},
    sync::{Mutex, mpsc::Receiver},
    time::Instant,
};
use xr_host::Registry;
use xr_sourcebuild::Diagnostic;
use xr_store::{
    LockKind, ObjectKey, Store, StoreLock,
    catalog::{self, CatalogAxis, CatalogProgram, CatalogVariant},
};
use xr_worker::Pool;

/// An empty catalog entry for `program` of the manifest at `manifest`.
fn catalog_entry(program: &PlannedProgram, manifest: &Path) -> CatalogProgram {
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

/// Counts the artifacts `request` asks for (for a progress bar's length).
pub fn count_artifacts(plan: &BuildPlan, request: &BuildRequest) -> usize {
    selected(plan, request)
        .map(|program| {
            variants(program).map_or(0, |v| v.iter().filter(|v| request.selects(program, &v.name)).count())
                * targets_of(program, request).len()
        })
        .sum()
}

/// Builds every artifact of `request` in `plan` with the build systems
/// of `registry`, the registry the plan was resolved against; `progress`
/// hears of each as it ends. One failing artifact does not stop the
/// others: it is in the summary.
pub fn build(
    plan: &BuildPlan,
    registry: &Registry,
    request: &BuildRequest,
    progress: &(dyn Fn(&ArtifactResult) + Sync),
) -> Result<Summary, BuildFailure> {
    let started = Instant::now();
    check_programs_exist(plan, request)?;
    let (store, lock) = open_store(&plan.store)?;
    let mut journal = Journal::open(store.root());
    let mut summary = Summary::default();
    let work = Work::new(plan, request, &mut summary.failed);
    #[cfg(feature = "farm")]
    let farm = request.remote_exec.as_deref().filter(|r| r.usable());
    #[cfg(feature = "farm")]
    if let Some(remote) = farm {
        remote.begin_build(registry);
    }
    #[cfg(feature = "farm")]
    let remote_before = request.remote_exec.as_ref().map(|r| r.stats());
    #[cfg(feature = "farm")]
    let pool = thread_pool(match farm {
        // Threads that mostly wait on the farm: as many as actions in flight.
        Some(remote) => Some(remote.jobs().max(request.jobs.unwrap_or(0))),
        None => request.jobs,
    })?;
    #[cfg(not(feature = "farm"))]
    let pool = thread_pool(request.jobs)?;
    let workers = match &request.compile_in {
        CompileIn::Process => None,
        CompileIn::Workers(workers) => Some((Pool::new(workers.pool.clone()), workers.time_limit)),
    };
    let inputs = Inputs::new(SourceRoot::of_manifest(&plan.path));
    let (batcher, batches) = Batcher::new();
    let chain = execute::chain(Places {
        store: &store,
        journal: &journal,
        inputs: &inputs,
        batcher: &batcher,
        #[cfg(feature = "remote-cache")]
        remote: request.remote.as_deref().filter(|r| r.is_usable()),
        #[cfg(feature = "remote-cache")]
        upload: request.upload,
        #[cfg(feature = "farm")]
        farm,
        workers: workers.as_ref().map(|(pool, _)| pool),
        #[cfg(feature = "farm")]
        local_jobs: request.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
    });
    let default_limit = workers.as_ref().map_or(Workers::DEFAULT_TIME_LIMIT, |(_, limit)| *limit);
    let outcomes = work.compile_all(&pool, registry, &chain, default_limit, batches, progress);
    drop(chain);
    let workers_started = workers.as_ref().map_or(0, |(pool, _)| pool.started());
    drop(workers);
    journal.release_entries();
    if let Some(error) = batcher.into_failure() {
        // Objects that may not survive a power loss are named by no catalog.
        summary.failed.push(Failure::of(format!("store {}", store.root().display()), error));
        summary.elapsed = started.elapsed();
        return Ok(summary);
    }
    xr_store::test_hooks::pause_before_catalog();
    let task_objects = work.count_outcomes(outcomes, &store, &mut summary);
    work.write_catalogs(&task_objects, &plan.path, &store, &mut summary);
    // What is held per artifact goes before the journal is compacted.
    drop((work, task_objects));
    summary.journal_compacted = compact_journal_if_due(&journal, &store, lock);
    show_files(&SourceRoot::of_manifest(&plan.path), &mut summary);
    summary.inputs = inputs.into_read();
    summary.workers_started = workers_started;
    #[cfg(feature = "farm")]
    if let (Some(remote), Some(before)) = (&request.remote_exec, remote_before) {
        let after = remote.stats();
        summary.remote_executed = after.executed + after.failed - before.executed - before.failed;
        summary.remote_cached = after.cached - before.cached;
        summary.remote_fallback = after.fallback - before.fallback;
    }
    summary.elapsed = started.elapsed();
    Ok(summary)
}

/// The build system the plan chose for (program, target), as loaded in
/// `registry`, or why there is none.
fn compiler<'a>(registry: &'a Registry, program: &'a PlannedProgram, target: &str) -> Result<Compiler<'a>, PlanError> {
    let (chosen, system) = program.system(registry, target)?;
    Ok(Compiler {
        name: &chosen.name,
        identity: &chosen.identity,
        system,
        #[cfg(feature = "farm")]
        plugin: &chosen.plugin,
        #[cfg(feature = "farm")]
        reach: &chosen.reach,
    })
}

/// Names the files of the summary's diagnostics as the user can open them
/// (compilers named them relative to the manifest's directory).
fn show_files(root: &SourceRoot, summary: &mut Summary) {
    for failure in &mut summary.failed {
        if let FailureError::Artifact(error) = &mut failure.error
            && let Some(diagnostics) = error.diagnostics_mut()
        {
            root.show(diagnostics);
            failure.message = error.to_string();
        }
    }
    for warned in &mut summary.warned {
        root.show(&mut warned.warnings);
    }
}

/// Fails when `request` asks for a program that `plan` does not have.
fn check_programs_exist(plan: &BuildPlan, request: &BuildRequest) -> Result<(), BuildFailure> {
    for name in &request.programs {
        if !plan.programs.iter().any(|p| &p.name == name) {
            return Err(BuildFailure::UnknownProgram {
                manifest: plan.path.display().to_string(),
                name: name.clone(),
                known: plan.programs.iter().map(|p| p.name.clone()).collect(),
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
struct Work<'a> {
    request: &'a BuildRequest,
    /// Every variant asked for, with its program.
    jobs: Vec<(&'a PlannedProgram, Variant)>,
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

impl<'a> Work<'a> {
    /// The work of `request`; each program whose variants cannot be made is
    /// a failure in `failed`.
    fn new(plan: &'a BuildPlan, request: &'a BuildRequest, failed: &mut Vec<Failure>) -> Self {
        let jobs = Self::jobs(plan, request, failed);
        let (target_names, tasks) = Self::tasks(&jobs, request);
        Self { request, jobs, target_names, tasks }
    }

    /// The variants of the programs `request` selects, in its shard and
    /// its usage logs.
    fn jobs(
        plan: &'a BuildPlan,
        request: &'a BuildRequest,
        failed: &mut Vec<Failure>,
    ) -> Vec<(&'a PlannedProgram, Variant)> {
        let mut jobs = Vec::new();
        for program in selected(plan, request) {
            match variants(program) {
                Ok(list) => {
                    jobs.extend(list.into_iter().filter(|v| request.selects(program, &v.name)).map(|v| (program, v)))
                }
                Err(error) => failed.push(Failure::of(format!("program '{}'", program.name), error)),
            }
        }
        jobs
    }

    /// The target names of `jobs` and their tasks.
    fn tasks(jobs: &[(&PlannedProgram, Variant)], request: &BuildRequest) -> (Vec<String>, Vec<(usize, usize)>) {
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

    /// Runs every task on `pool` through `chain`, telling `progress` of
    /// each artifact as it ends, while a thread syncs the store and journals
    /// the finished entries that come through `batches`. Returns once every
    /// entry is journalled, or the sync failed (then the chain's batcher
    /// says why).
    fn compile_all(
        &self,
        pool: &rayon::ThreadPool,
        registry: &Registry,
        chain: &Journalled<'_>,
        default_limit: std::time::Duration,
        batches: Receiver<Vec<Entry>>,
        progress: &(dyn Fn(&ArtifactResult) + Sync),
    ) -> TaskOutcomes {
        // One outcome per task, in task order (an indexed collect: written in
        // place, never gathered in pieces and copied).
        let warnings_of_tasks: Mutex<HashMap<usize, Vec<Diagnostic>>> = Mutex::new(HashMap::new());
        let (store, journal, batcher) = (chain.store, chain.journal, chain.batcher);
        let root = chain.inputs.root();
        // Looked up here: the registry stays on this thread.
        let mut compilers: HashMap<(&str, &str), Result<Compiler<'_>, PlanError>> = HashMap::new();
        for (program, _) in &self.jobs {
            for target in targets_of(program, self.request) {
                let found = compiler(registry, program, &target);
                let target = self.target_names.iter().find(|t| **t == target).map_or("", String::as_str);
                compilers.entry((program.name.as_str(), target)).or_insert(found);
            }
        }
        let outcomes = std::thread::scope(|scope| {
            let syncing = scope.spawn(move || crate::durable::run(store, journal, batches));
            let closing = batcher.closing();
            let outcomes = pool.install(|| {
                self.tasks
                    .par_iter()
                    .enumerate()
                    .map(|(task, (job, target))| {
                        let (program, variant) = &self.jobs[*job];
                        let target = &self.target_names[*target];
                        let found = compilers.get(&(program.name.as_str(), target.as_str()));
                        let (compiler_name, (outcome, warnings)) = match found {
                            Some(Ok(compiler)) => {
                                let compiler = *compiler;
                                let recipe = recipe_key(&compiler, program, variant, target, &|p| root.name(p));
                                let limit = program.compile_timeout.unwrap_or(default_limit);
                                let job = Job { program, variant, target, compiler, recipe, limit };
                                (compiler.name, chain.run(&job))
                            }
                            Some(Err(why)) => ("", (Outcome::Failed(why.clone().into()), Vec::new())),
                            None => {
                                let why =
                                    PlanError::NotATarget { program: program.name.clone(), target: target.clone() };
                                ("", (Outcome::Failed(why.into()), Vec::new()))
                            }
                        };
                        let result = ArtifactResult {
                            program: program.name.clone(),
                            variant: variant.name.clone(),
                            target: target.clone(),
                            compiler: compiler_name.to_owned(),
                            outcome,
                            warnings,
                        };
                        progress(&result);
                        if !result.warnings.is_empty() {
                            let mut warned = warnings_of_tasks.lock().unwrap_or_else(|p| p.into_inner());
                            warned.insert(task, result.warnings);
                        }
                        result.outcome
                    })
                    .collect()
            });
            // Every entry synced and journalled before any catalog names its object.
            batcher.flush(store, journal);
            drop(closing);
            let failed = syncing.join().unwrap_or(Some(NotDurable::SyncerPanicked));
            if let Some(error) = failed {
                batcher.fail(error);
            }
            outcomes
        });
        TaskOutcomes { outcomes, warnings: warnings_of_tasks.into_inner().unwrap_or_else(|p| p.into_inner()) }
    }

    /// Counts the tasks' outcomes into `summary` (named after the plan's
    /// compiler of each (program, target)) and gives each task's object for
    /// the catalogs (none where it failed). The outcomes go as they are
    /// counted.
    fn count_outcomes(&self, outcomes: TaskOutcomes, store: &Store, summary: &mut Summary) -> Vec<Option<ObjectKey>> {
        let TaskOutcomes { outcomes, warnings: mut warnings_of_tasks } = outcomes;
        let mut objects: BTreeSet<ObjectKey> = BTreeSet::new();
        let mut task_objects: Vec<Option<ObjectKey>> = Vec::with_capacity(self.tasks.len());
        for (task, ((job, target), outcome)) in self.tasks.iter().zip(outcomes).enumerate() {
            let warnings = warnings_of_tasks.remove(&task).unwrap_or_default();
            let (program, variant) = &self.jobs[*job];
            let target = &self.target_names[*target];
            let id =
                ArtifactId { program: program.name.clone(), variant: variant.name.clone(), target: target.clone() };
            let compiler = || program.compiler(target).map(|c| c.name.clone()).unwrap_or_default();
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
                outcome = Outcome::Failed(ArtifactError::Removed { object: *object });
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
                Outcome::Failed(error) => {
                    summary.failed.push(Failure {
                        what: format!("{} ({target})", variant.name),
                        message: error.to_string(),
                        artifact: Some(id),
                        compiler: compiler(),
                        error: error.into(),
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
                    FailureError::Catalog { program: name.to_string(), cause: std::sync::Arc::new(e) },
                )),
            }
        }
    }
}

fn selected<'a>(plan: &'a BuildPlan, request: &'a BuildRequest) -> impl Iterator<Item = &'a PlannedProgram> {
    plan.programs.iter().filter(|p| request.programs.is_empty() || request.programs.contains(&p.name))
}

fn targets_of(program: &PlannedProgram, request: &BuildRequest) -> Vec<String> {
    program
        .targets
        .iter()
        .map(|t| t.name.clone())
        .filter(|t| request.targets.is_empty() || request.targets.contains(t))
        .collect()
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
