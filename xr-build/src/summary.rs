//! What a build did: each artifact's outcome, its failures with their
//! diagnostics, and the summary the front ends print.

use crate::{
    error::{ArtifactError, FailureError},
    report::{ArtifactId, Reports},
};
use std::{
    collections::{BTreeMap, BTreeSet},
    path::PathBuf,
    time::Duration,
};
use xr_sourcebuild::Diagnostic;
use xr_store::{ObjectKey, StoreError};

/// What happened to one (variant, target).
#[derive(Clone, Debug)]
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
    /// Did not build: the compiler's located diagnostics, or why with no
    /// place.
    Failed(ArtifactError),
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

/// A failure: a (variant, target), or something that is no artifact's
/// (a program's matrix, its catalog, the store), with why.
#[derive(Clone, Debug)]
pub struct Failure {
    /// What failed: `variant (target)`, `program 'name'`, `store <dir>`.
    pub what: String,
    /// Why, in one line: the first error, its file named as the user
    /// opens it.
    pub message: String,
    /// The artifact, when it is one's.
    pub artifact: Option<ArtifactId>,
    /// The compiler plugin that failed ("" when none).
    pub compiler: String,
    /// Why, typed: the compiler's located diagnostics are in it.
    pub error: FailureError,
}

impl Failure {
    /// A failure of `what` that is no artifact's.
    pub(crate) fn of(what: String, error: impl Into<FailureError>) -> Self {
        let error = error.into();
        Self { what, message: error.to_string(), artifact: None, compiler: String::new(), error }
    }

    /// The compiler's diagnostics that have a place (none when the failure
    /// is not the compiler's).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        self.error.diagnostics()
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
            match (&failure.artifact, &failure.error) {
                (Some(artifact), FailureError::Artifact(error)) => {
                    reports.add_error(Some(artifact), &failure.compiler, error)
                }
                _ => reports.add_failure(&failure.what, &failure.message),
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
