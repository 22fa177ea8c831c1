//! Compiles as one chain: each concern a layer around the next, as a
//! remote-execution service stacks its build executors.
//!
//! ```text
//! Journalled        the store's journal: reused when up to date; what the
//!                   layers below make is stored and journalled when durable
//! └ SharedCache     the shared remote cache: fetched, or uploaded once made
//!   └ Compiling     the variant's sources read into a request
//!     └ Fallback    a farm first, then this machine, for what it gives back
//!       ├ Farm      a Remote Execution action
//!       └ Gated     at most -j local compiles while threads wait on the farm
//!         └ InWorkers / InProcess
//! ```
//!
//! A layer that is not asked for is not in the chain. [`Execute`] is "make
//! this artifact's object"; [`Compile`] is "run this compile request
//! somewhere". The build's order of work (`crate::build`) only runs the
//! chain's top for each artifact.

#[cfg(feature = "farm")]
mod farm;
mod journalled;
mod local;
#[cfg(feature = "remote-cache")]
mod shared_cache;

#[cfg(feature = "farm")]
pub(crate) use farm::{Fallback, Farm, Gated};
pub(crate) use journalled::Journalled;
pub(crate) use local::{InProcess, InWorkers};
#[cfg(feature = "remote-cache")]
pub use shared_cache::ActionRecord;
#[cfg(feature = "remote-cache")]
pub(crate) use shared_cache::SharedCache;

#[cfg(feature = "farm")]
use crate::remote_exec::FarmError;
use crate::{error::ArtifactError, matrix::Variant, paths::SourceRoot, plan::PlannedProgram, recipe::offline_request};
use std::{
    collections::{BTreeMap, HashMap},
    sync::Mutex,
    time::Duration,
};
use xr_sourcebuild::{Diagnostic, OfflineRequest, SourceBuildSystemBox};
use xr_store::ObjectKey;
use xr_worker::{CompileFailure, Compiled};

/// The build system the plan chose for an artifact, as loaded here.
#[derive(Clone, Copy)]
pub(crate) struct Compiler<'r> {
    /// Its name.
    pub name: &'r str,
    /// Its compiler identity, in the recipe key.
    pub identity: &'r str,
    /// The loaded build system.
    pub system: &'r SourceBuildSystemBox,
    /// The plugin file it came from (what a remote action carries).
    #[cfg(feature = "farm")]
    pub plugin: &'r std::path::Path,
    /// How a compile of each language reaches other files (what a remote
    /// action carries of the sources: [`crate::Chosen::reach`]).
    #[cfg(feature = "farm")]
    pub reach: &'r [(String, xr_sourcebuild::SourceReach)],
}

/// One artifact to make: a variant of a planned program for one target.
pub(crate) struct Job<'a> {
    pub program: &'a PlannedProgram,
    pub variant: &'a Variant,
    pub target: &'a str,
    pub compiler: Compiler<'a>,
    /// Its recipe key (`crate::recipe::recipe_key`).
    pub recipe: ObjectKey,
    /// How long its compile may run.
    pub limit: Duration,
}

/// An object made (compiled, or fetched), not yet in the store.
pub(crate) struct Made {
    pub payload: Vec<u8>,
    /// (file, BLAKE3 hex) of every file the compile read.
    pub files: Vec<(String, String)>,
    /// The compiler's warnings (none for a fetched object).
    pub warnings: Vec<Diagnostic>,
}

/// What a layer of the chain gives back for an artifact.
pub(crate) enum Execution {
    /// The shared cache had it.
    #[cfg(feature = "remote-cache")]
    Fetched(Made),
    /// A compiler made it.
    Compiled(Made),
    /// It did not build.
    Failed(ArtifactError),
}

/// Makes an artifact's object: a layer of the chain.
pub(crate) trait Execute: Sync {
    fn execute(&self, job: &Job<'_>) -> Execution;
}

/// What became of a compile request at one place.
pub(crate) enum Placement {
    /// It ran (a compiler's failure included).
    Done(Result<Compiled, CompileFailure>),
    /// It could not run there, for this reason: the next place's.
    #[cfg(feature = "farm")]
    Elsewhere(FarmError),
}

/// Runs a compile request somewhere: in this process, in a worker, on a farm.
pub(crate) trait Compile: Sync {
    fn compile(&self, compiler: &Compiler<'_>, request: &OfflineRequest, limit: Duration) -> Placement;
}

/// Reads the variant's sources into one request and compiles it where
/// `compile` says.
pub(crate) struct Compiling<'a> {
    pub root: &'a SourceRoot,
    pub compile: Box<dyn Compile + 'a>,
}

impl Execute for Compiling<'_> {
    fn execute(&self, job: &Job<'_>) -> Execution {
        let request = match offline_request(job.program, job.variant, job.target, self.root) {
            Ok(request) => request,
            Err(error) => return Execution::Failed(error.into()),
        };
        match self.compile.compile(&job.compiler, &request, job.limit) {
            Placement::Done(Ok(Compiled { bytes, files_read, warnings })) => Execution::Compiled(Made {
                payload: bytes,
                files: files_read.into_iter().map(|f| (f.path.into_string(), f.hash.into_string())).collect(),
                warnings,
            }),
            Placement::Done(Err(e)) => {
                Execution::Failed(ArtifactError::of_compile(&e.message, &e.diagnostics, &job.variant.name))
            }
            #[cfg(feature = "farm")]
            Placement::Elsewhere(why) => Execution::Failed(why.into()),
        }
    }
}

/// The files a build's artifacts read: each file's hash now, read once per
/// build, and the (file, hash) of every finished artifact's inputs (for
/// the build stamp and a build script's watch list).
pub(crate) struct Inputs {
    root: SourceRoot,
    /// File → BLAKE3 of its contents now (`None`: unreadable).
    hashes: Mutex<HashMap<String, Option<String>>>,
    read: Mutex<BTreeMap<String, String>>,
}

impl Inputs {
    pub(crate) fn new(root: SourceRoot) -> Self {
        Self { root, hashes: Mutex::new(HashMap::new()), read: Mutex::new(BTreeMap::new()) }
    }

    /// What names are relative to: the manifest's directory.
    pub(crate) fn root(&self) -> &SourceRoot {
        &self.root
    }

    /// The hash of the file named `file` (relative to the root) now.
    pub(crate) fn hash_of(&self, file: &str) -> Option<String> {
        let mut hashes = self.hashes.lock().unwrap_or_else(|p| p.into_inner());
        hashes
            .entry(file.to_owned())
            .or_insert_with(|| {
                std::fs::read(self.root.on_disk(file)).ok().map(|bytes| blake3::hash(&bytes).to_hex().to_string())
            })
            .clone()
    }

    /// Whether every (file, hash) of `files` reads the same now.
    pub(crate) fn unchanged(&self, files: &[(String, String)]) -> bool {
        files.iter().all(|(file, hash)| self.hash_of(file).as_deref() == Some(hash.as_str()))
    }

    /// Notes the files a finished artifact read.
    pub(crate) fn note_read(&self, files: &[(String, String)]) {
        let mut read = self.read.lock().unwrap_or_else(|p| p.into_inner());
        for (file, hash) in files {
            read.insert(file.clone(), hash.clone());
        }
    }

    /// Every file the finished artifacts read, with its hash.
    pub(crate) fn into_read(self) -> BTreeMap<String, String> {
        self.read.into_inner().unwrap_or_else(|p| p.into_inner())
    }
}

/// What one build's chain is made of.
pub(crate) struct Places<'a> {
    pub store: &'a xr_store::Store,
    pub journal: &'a crate::journal::Journal,
    pub inputs: &'a Inputs,
    pub batcher: &'a crate::durable::Batcher,
    /// The shared cache, when set and answering.
    #[cfg(feature = "remote-cache")]
    pub remote: Option<&'a xr_remote::Remote>,
    /// Upload what is compiled here to it.
    #[cfg(feature = "remote-cache")]
    pub upload: bool,
    /// The farm, when set and used.
    #[cfg(feature = "farm")]
    pub farm: Option<&'a crate::remote_exec::RemoteExec>,
    /// Worker processes; `None`: compiles in this process.
    pub workers: Option<&'a xr_worker::Pool>,
    /// Local compiles at once when a farm is used.
    #[cfg(feature = "farm")]
    pub local_jobs: usize,
}

/// The chain of `places`, from its top (see the module documentation).
pub(crate) fn chain(places: Places<'_>) -> Journalled<'_> {
    let local: Box<dyn Compile + '_> = match places.workers {
        Some(pool) => Box::new(InWorkers { pool }),
        None => Box::new(InProcess),
    };
    #[cfg(feature = "farm")]
    let local: Box<dyn Compile + '_> = match places.farm {
        Some(remote) => Box::new(Fallback {
            first: Box::new(Farm {
                remote,
                memory_limit: places.workers.and_then(|pool| pool.config().memory_limit),
                root: places.inputs.root(),
            }),
            then: Box::new(Gated::new(places.local_jobs, local)),
        }),
        None => local,
    };
    #[cfg_attr(not(feature = "remote-cache"), expect(unused_mut))]
    let mut execute: Box<dyn Execute + '_> = Box::new(Compiling { root: places.inputs.root(), compile: local });
    #[cfg(feature = "remote-cache")]
    if let Some(remote) = places.remote {
        execute = Box::new(SharedCache { remote, upload: places.upload, inputs: places.inputs, inner: execute });
    }
    Journalled {
        store: places.store,
        journal: places.journal,
        inputs: places.inputs,
        batcher: places.batcher,
        inner: execute,
    }
}
