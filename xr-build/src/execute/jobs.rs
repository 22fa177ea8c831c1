//! Compiles that make no artifact of the store — a guarded source's
//! preprocessing, an object's reflection for bindings, `xr compile` — run
//! in the places the chain's compiles run: a worker (of a pool of the same
//! configuration as the build's: its program, plugins and memory cap)
//! within the build's time limit, or this process when the build compiles
//! here. A compiler
//! that crashes, loops or runs out of memory fails that one job, named,
//! and the rest goes on, as for an artifact.

use crate::request::CompileIn;
use std::time::Duration;
use xr_sourcebuild::{BuildError, OfflineArtifact, OfflineRequest, SourceBuildSystemBox};
use xr_worker::{CompileFailure, Compiled, Pool, compile_whole_in_process};

/// Where whole compiles run (see the module documentation).
pub struct Compiles {
    /// Workers and the time limit of one compile; `None`: this process.
    workers: Option<(Pool, Duration)>,
}

impl Compiles {
    /// In the places `compile_in` names: the build's workers, or this process.
    pub fn new(compile_in: &CompileIn) -> Self {
        match compile_in {
            CompileIn::Workers(workers) => {
                Self { workers: Some((Pool::new(workers.pool.clone()), workers.time_limit)) }
            }
            CompileIn::Process => Self::in_process(),
        }
    }

    /// In this process: where the process is itself the isolation (`xr
    /// compile` runs in a child of its own), or a debugger is attached.
    pub fn in_process() -> Self {
        Self { workers: None }
    }

    /// Compiles `request` in full (each stage's output and the reflection)
    /// with the build system `compiler`, as loaded here in `system`: in a
    /// worker, where it is loaded again by name, or in this process.
    pub fn compile_whole(
        &self,
        compiler: &str,
        system: &SourceBuildSystemBox,
        request: &OfflineRequest,
    ) -> Result<Compiled, CompileFailure> {
        match &self.workers {
            Some((pool, limit)) => pool
                .lease()
                .compile_whole(compiler, request, *limit)
                .unwrap_or_else(|ended| Err(CompileFailure::message(ended.to_string()))),
            None => compile_whole_in_process(system, request),
        }
    }

    /// The whole artifact of `request`, as the build system gives it (its
    /// readable reflection, each stage's own output), compiled in this
    /// process: for `xr compile` and `xr reflect`, which run in a child
    /// process of their own (their isolation: a crash there is one error of
    /// the command, never a signal).
    pub fn compile_offline_here(
        system: &SourceBuildSystemBox,
        request: &OfflineRequest,
    ) -> Result<OfflineArtifact, BuildError> {
        system.compile_offline(request).into_result()
    }
}
