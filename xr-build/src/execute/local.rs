//! Compiles on this machine: in this process, in worker processes, and a
//! gate that keeps them to `-j` while the build's threads wait on a farm.

use super::{Compile, Compiler, Placement};
use std::{
    sync::{Condvar, Mutex},
    time::Duration,
};
use xr_sourcebuild::OfflineRequest;
use xr_worker::{CompileFailure, Pool, compile_in_process};

/// On this process's threads: what a debugger wants. A native crash in a
/// compiler ends the process, and a compile has no time limit.
pub(crate) struct InProcess;

impl Compile for InProcess {
    fn compile(&self, compiler: &Compiler<'_>, request: &OfflineRequest, _: Duration) -> Placement {
        Placement::Done(compile_in_process(compiler.system, request))
    }
}

/// In a worker process of the build's pool, leased for the compile: a
/// crash, a loop or a runaway allocation fails this artifact alone.
pub(crate) struct InWorkers<'a> {
    pub pool: &'a Pool,
}

impl Compile for InWorkers<'_> {
    fn compile(&self, compiler: &Compiler<'_>, request: &OfflineRequest, limit: Duration) -> Placement {
        let compiled = self
            .pool
            .lease()
            .compile(compiler.name, request, limit)
            .unwrap_or_else(|ended| Err(CompileFailure::message(ended.to_string())));
        Placement::Done(compiled)
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
    fn compile(&self, compiler: &Compiler<'_>, request: &OfflineRequest, limit: Duration) -> Placement {
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
