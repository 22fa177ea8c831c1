//! Compiles on a farm, the one fallback layer (what the farm cannot run,
//! or whose answer is not trusted, runs on the next place instead), and a
//! gate that keeps local compiles to `-j` while the build's threads wait
//! on the farm.

use super::{Compile, CompileResult, Compiler};
use crate::{
    paths::SourceRoot,
    remote_exec::{FarmError, FarmJob, RemoteCompile, RemoteExec},
};
use std::{
    sync::{Condvar, Mutex},
    time::Duration,
};
use xr_sourcebuild::OfflineRequest;
use xr_worker::{CompileFailure, Compiled};

/// A Remote Execution action on the farm.
pub(crate) struct Farm<'a> {
    pub remote: &'a RemoteExec,
    /// The address-space cap of a local worker, sent with the action so
    /// that a compiler that eats memory fails alike on the farm.
    pub memory_limit: Option<u64>,
    pub root: &'a SourceRoot,
}

impl Farm<'_> {
    /// The compile's result where it ran there; why it did not, else.
    fn try_compile(
        &self,
        compiler: &Compiler<'_>,
        request: &OfflineRequest,
        limit: Duration,
    ) -> Result<Result<Compiled, CompileFailure>, FarmError> {
        // Given up on after repeated failures to reach it: said once, by the executor.
        if !self.remote.usable() {
            return Err(FarmError::GivenUp);
        }
        let job = FarmJob {
            compiler: compiler.name,
            plugin: compiler.plugin,
            reach: compiler.reach,
            request,
            limit,
            memory_limit: self.memory_limit,
            root: self.root,
        };
        match self.remote.compile(&job) {
            RemoteCompile::Done(result) => Ok(result),
            RemoteCompile::Local(why) => {
                tracing::debug!("{}[{}] compiles here: {why}", request.program.name, request.target);
                self.remote.note_fallback();
                Err(why)
            }
        }
    }
}

/// The farm `first`, then `then` for what the farm gives back.
pub(crate) struct Fallback<'a> {
    pub first: Farm<'a>,
    pub then: Box<dyn Compile + 'a>,
}

impl Compile for Fallback<'_> {
    fn compile(&self, compiler: &Compiler<'_>, request: &OfflineRequest, limit: Duration) -> CompileResult {
        match self.first.try_compile(compiler, request, limit) {
            Ok(ran) => ran,
            Err(_) => self.then.compile(compiler, request, limit),
        }
    }
}

/// At most `n` compiles of `inner` at once: the build's threads outnumber
/// the cores when they mostly wait on a farm, and the compiles the farm
/// gives back must not all run here together.
pub(crate) struct Gated<'a> {
    free: Mutex<usize>,
    freed: Condvar,
    inner: Box<dyn Compile + 'a>,
}

impl<'a> Gated<'a> {
    pub(crate) fn new(n: usize, inner: Box<dyn Compile + 'a>) -> Self {
        Self { free: Mutex::new(n.max(1)), freed: Condvar::new(), inner }
    }
}

impl Compile for Gated<'_> {
    fn compile(&self, compiler: &Compiler<'_>, request: &OfflineRequest, limit: Duration) -> CompileResult {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= 1;
        drop(free);
        let placed = self.inner.compile(compiler, request, limit);
        *self.free.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.freed.notify_one();
        placed
    }
}
