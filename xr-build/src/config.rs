//! A build's configuration, read once. The front ends (`xr build`, a
//! build script, hot reload) turn their flags and the environment into a
//! [`BuildRequest`] through this module: each `XR_*` variable a build reads
//! is read in [`BuildEnv::read`], and a build script's
//! `rerun-if-env-changed` list is [`WATCHED`], so that a variable cannot be
//! honoured by one front end and forgotten by another (the shared cache's
//! own variables are read by `xr_remote`, the plugin path by `xr_host`).

use crate::{BuildRequest, CompileIn, Workers};
use std::{ffi::OsString, path::PathBuf, sync::Arc, time::Duration};
use xr_worker::{PoolConfig, WorkerCommand};

/// `XR_IN_PROCESS=1`: compile in this process, not in workers (a debugger's
/// way in; a crashing compiler then ends the build).
pub const IN_PROCESS: &str = "XR_IN_PROCESS";
/// `XR_REMOTE_UPLOAD=1`: upload what is built to the shared cache.
pub const REMOTE_UPLOAD: &str = "XR_REMOTE_UPLOAD";
/// The farm that runs the compiles (`grpc://HOST:PORT`).
pub const REMOTE_EXEC: &str = "XR_REMOTE_EXEC";
/// The farm's instance name.
pub const REMOTE_INSTANCE: &str = "XR_REMOTE_INSTANCE";
/// A bearer token for the farm.
pub const REMOTE_EXEC_TOKEN: &str = "XR_REMOTE_EXEC_TOKEN";

/// Every environment variable that changes what a build builds: where
/// plugins are found (`XR_PLUGIN_PATH`, and the user's data directory
/// through `XDG_DATA_HOME` and `HOME`), in-process compiles, the shared
/// cache read before building and its upload.
#[cfg(feature = "remote-cache")]
pub const WATCHED: &[&str] =
    &[xr_host::PLUGIN_PATH_VAR, "XDG_DATA_HOME", "HOME", IN_PROCESS, xr_remote::REMOTE_VAR, REMOTE_UPLOAD];
/// Every environment variable that changes what a build builds: where
/// plugins are found (`XR_PLUGIN_PATH`, and the user's data directory
/// through `XDG_DATA_HOME` and `HOME`) and in-process compiles (a build
/// without the shared cache reads none of its variables).
#[cfg(not(feature = "remote-cache"))]
pub const WATCHED: &[&str] = &[xr_host::PLUGIN_PATH_VAR, "XDG_DATA_HOME", "HOME", IN_PROCESS];

/// Each worker's memory (address space) cap when none is given: far above
/// what glslang and SPIRV-Tools need (a worker peaks at 77 MB through the
/// 4,320-artifact benchmark build), below a build machine's memory.
pub const DEFAULT_WORKER_MEMORY: u64 = 4096 << 20;

/// What the environment asks of a build.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildEnv {
    /// Compile in this process ([`IN_PROCESS`]).
    pub in_process: bool,
    /// Upload to the shared cache ([`REMOTE_UPLOAD`]).
    pub remote_upload: bool,
    /// The farm ([`REMOTE_EXEC`]).
    pub remote_exec: Option<String>,
    /// The farm's instance ([`REMOTE_INSTANCE`]).
    pub remote_instance: Option<String>,
    /// The farm's token ([`REMOTE_EXEC_TOKEN`]).
    pub remote_exec_token: Option<String>,
}

impl BuildEnv {
    /// Reads the process's environment: the one place each variable is read.
    pub fn read() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the variables through `lookup` (a test's own environment).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let set = |name: &str| lookup(name).filter(|v| !v.is_empty());
        let yes = |name: &str| set(name).is_some_and(|v| v == "1" || v == "true");
        Self {
            in_process: set(IN_PROCESS).is_some_and(|v| v == "1"),
            remote_upload: yes(REMOTE_UPLOAD),
            remote_exec: set(REMOTE_EXEC),
            remote_instance: set(REMOTE_INSTANCE),
            remote_exec_token: set(REMOTE_EXEC_TOKEN),
        }
    }
}

/// How a front end starts a compiler worker: a program and the arguments
/// that make it one (`xr worker`, a build script's worker flag).
#[derive(Clone, Debug)]
pub struct WorkerStart {
    /// The executable.
    pub program: PathBuf,
    /// Its leading arguments; `--plugin-dir DIR` pairs follow.
    pub args: Vec<OsString>,
}

/// A front end's request, before the environment has its say.
#[derive(Clone, Debug, Default)]
pub struct Asked {
    /// Worker threads (`-j`).
    pub jobs: Option<usize>,
    /// Only these targets.
    pub targets: Vec<String>,
    /// Only these programs.
    pub programs: Vec<String>,
    /// Only this part of the matrix.
    pub shard: Option<crate::Shard>,
    /// Only the variants these usage logs name, read.
    pub used: Option<Arc<crate::used::UsedVariants>>,
    /// The shared cache, opened.
    #[cfg(feature = "remote-cache")]
    pub remote: Option<Arc<xr_remote::Remote>>,
    /// Upload to it (a flag; the environment may also ask).
    pub upload: bool,
    /// Compile in this process (a flag; the environment may also ask).
    pub in_process: bool,
    /// How to start a worker; `None`: compile in process.
    pub worker: Option<WorkerStart>,
    /// Each worker's memory cap; `None`: [`DEFAULT_WORKER_MEMORY`]; `Some(0)`: none.
    pub worker_memory: Option<u64>,
    /// How long one compile may run [default: [`Workers::DEFAULT_TIME_LIMIT`]].
    pub time_limit: Option<Duration>,
    /// The farm, connected.
    #[cfg(feature = "farm")]
    pub remote_exec: Option<Arc<crate::remote_exec::RemoteExec>>,
}

impl Asked {
    /// The build request of what was asked and what `env` says, with
    /// workers loading plugins from `plugin_dirs`.
    pub fn request(self, env: &BuildEnv, plugin_dirs: &[PathBuf]) -> BuildRequest {
        let compile_in = match (&self.worker, self.in_process || env.in_process) {
            (Some(start), false) => {
                let mut args = start.args.clone();
                for dir in plugin_dirs {
                    args.push("--plugin-dir".into());
                    args.push(dir.into());
                }
                let memory_limit = match self.worker_memory.unwrap_or(DEFAULT_WORKER_MEMORY) {
                    0 => None,
                    bytes => Some(bytes),
                };
                CompileIn::Workers(Workers {
                    pool: PoolConfig { command: WorkerCommand { program: start.program.clone(), args }, memory_limit },
                    time_limit: self.time_limit.unwrap_or(Workers::DEFAULT_TIME_LIMIT),
                })
            }
            _ => CompileIn::Process,
        };
        // Upload needs somewhere to upload to.
        #[cfg(feature = "remote-cache")]
        let upload = (self.upload || env.remote_upload) && self.remote.is_some();
        #[cfg(not(feature = "remote-cache"))]
        let upload = false;
        BuildRequest {
            jobs: self.jobs,
            targets: self.targets,
            programs: self.programs,
            shard: self.shard,
            used: self.used,
            #[cfg(feature = "remote-cache")]
            remote: self.remote,
            upload,
            compile_in,
            #[cfg(feature = "farm")]
            remote_exec: self.remote_exec,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_is_read_once_into_what_it_asks() {
        let env = BuildEnv::from_lookup(|name| match name {
            IN_PROCESS => Some("1".into()),
            REMOTE_UPLOAD => Some("true".into()),
            REMOTE_EXEC => Some(String::new()),
            _ => None,
        });
        assert_eq!(
            env,
            BuildEnv { in_process: true, remote_upload: true, remote_exec: None, ..BuildEnv::default() },
            "an empty value is unset"
        );
        assert!(!BuildEnv::from_lookup(|_| Some("0".into())).in_process);
        for variable in [IN_PROCESS, xr_host::PLUGIN_PATH_VAR] {
            assert!(WATCHED.contains(&variable), "a build script reruns when {variable} changes");
        }
        #[cfg(feature = "remote-cache")]
        for variable in [REMOTE_UPLOAD, xr_remote::REMOTE_VAR] {
            assert!(WATCHED.contains(&variable), "a build script reruns when {variable} changes");
        }
    }

    #[test]
    fn workers_unless_in_process_is_asked_and_upload_only_with_a_remote() {
        let start = WorkerStart { program: "/bin/xr".into(), args: vec!["worker".into()] };
        let asked = Asked { worker: Some(start), upload: true, ..Asked::default() };
        let request = asked.clone().request(&BuildEnv::default(), &["/plugins".into()]);
        let CompileIn::Workers(workers) = &request.compile_in else { panic!("workers") };
        assert_eq!(workers.pool.command.args, ["worker", "--plugin-dir", "/plugins"].map(OsString::from));
        assert_eq!(workers.pool.memory_limit, Some(DEFAULT_WORKER_MEMORY));
        assert!(!request.upload, "no remote to upload to");
        #[cfg(not(feature = "remote-cache"))]
        assert!(!WATCHED.contains(&REMOTE_UPLOAD), "a build without the shared cache reads none of its variables");
        let env = BuildEnv { in_process: true, ..BuildEnv::default() };
        assert!(matches!(asked.clone().request(&env, &[]).compile_in, CompileIn::Process));
        let uncapped = Asked { worker_memory: Some(0), ..asked }.request(&BuildEnv::default(), &[]);
        let CompileIn::Workers(workers) = &uncapped.compile_in else { panic!("workers") };
        assert_eq!(workers.pool.memory_limit, None);
    }
}
