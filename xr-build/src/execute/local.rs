//! Compiles on this machine: in this process, and in worker processes.

use super::{Compile, CompileResult, Compiler};
use std::time::Duration;
use xr_sourcebuild::OfflineRequest;
use xr_worker::{CompileFailure, Pool, compile_in_process};

/// On this process's threads: what a debugger wants. A native crash in a
/// compiler ends the process, and a compile has no time limit.
pub(crate) struct InProcess;

impl Compile for InProcess {
    fn compile(&self, compiler: &Compiler<'_>, request: &OfflineRequest, _: Duration) -> CompileResult {
        compile_in_process(compiler.system, request)
    }
}

/// In a worker process of the build's pool, leased for the compile: a
/// crash, a loop or a runaway allocation fails this artifact alone.
pub(crate) struct InWorkers<'a> {
    pub pool: &'a Pool,
}

impl Compile for InWorkers<'_> {
    fn compile(&self, compiler: &Compiler<'_>, request: &OfflineRequest, limit: Duration) -> CompileResult {
        self.pool
            .lease()
            .compile(compiler.name, request, limit)
            .unwrap_or_else(|ended| Err(CompileFailure::message(ended.to_string())))
    }
}
