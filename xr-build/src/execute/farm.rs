//! Compiles on a farm, and the one fallback layer: what the farm cannot
//! run (or whose answer is not trusted) runs on the next place instead.

use super::{Compile, Compiler, Placement};
use crate::{
    paths::SourceRoot,
    remote_exec::{FarmError, FarmJob, RemoteCompile, RemoteExec},
};
use std::time::Duration;
use xr_sourcebuild::OfflineRequest;

/// A Remote Execution action on the farm.
pub(crate) struct Farm<'a> {
    pub remote: &'a RemoteExec,
    /// The address-space cap of a local worker, sent with the action so
    /// that a compiler that eats memory fails alike on the farm.
    pub memory_limit: Option<u64>,
    pub root: &'a SourceRoot,
}

impl Compile for Farm<'_> {
    fn compile(&self, compiler: &Compiler<'_>, request: &OfflineRequest, limit: Duration) -> Placement {
        // Given up on after repeated failures to reach it: said once, by the executor.
        if !self.remote.usable() {
            return Placement::Elsewhere(FarmError::GivenUp);
        }
        let job = FarmJob {
            compiler: compiler.name,
            plugin: compiler.plugin,
            request,
            limit,
            memory_limit: self.memory_limit,
            root: self.root,
        };
        match self.remote.compile(&job) {
            RemoteCompile::Done(result) => Placement::Done(result),
            RemoteCompile::Local(why) => {
                tracing::debug!("{}[{}] compiles here: {why}", request.program.name, request.target);
                self.remote.note_fallback();
                Placement::Elsewhere(why)
            }
        }
    }
}

/// `first`, then `then` for what `first` gives back.
pub(crate) struct Fallback<'a> {
    pub first: Box<dyn Compile + 'a>,
    pub then: Box<dyn Compile + 'a>,
}

impl Compile for Fallback<'_> {
    fn compile(&self, compiler: &Compiler<'_>, request: &OfflineRequest, limit: Duration) -> Placement {
        match self.first.compile(compiler, request, limit) {
            Placement::Elsewhere(_) => self.then.compile(compiler, request, limit),
            done => done,
        }
    }
}
