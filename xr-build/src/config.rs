//! A build's configuration, resolved once. The front ends (`xr build`, a
//! build script, hot reload) say what their flags ask ([`Asked`]), read the
//! environment once ([`BuildEnv::read`]), and [`Asked::resolve`] makes every
//! decision from the two — the shared cache, upload, the farm, in-process
//! compiles or workers — into one [`BuildRequest`], as ripgrep turns its
//! `LowArgs` into `HiArgs`: no front end decides one of them itself, so a
//! variable cannot be honoured by one and forgotten by another.
//!
//! Every variable is read through `xr_env`, which records it; what a build
//! script watches (`rerun-if-env-changed`) and what the no-op stamp checks
//! is that record ([`xr_host::Registry::environment_read`]), not a list.

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
    /// The shared cache (`XR_REMOTE`, read only by a build with the shared
    /// cache: its crate names the variable).
    pub remote: Option<String>,
}

impl BuildEnv {
    /// Reads the process's environment: the one place each variable is read.
    pub fn read() -> Self {
        Self::from_lookup(xr_env::var)
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
            #[cfg(feature = "remote-cache")]
            remote: set(xr_remote::REMOTE_VAR).map(|url| url.trim().to_owned()).filter(|url| !url.is_empty()),
            #[cfg(not(feature = "remote-cache"))]
            remote: None,
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
    /// The shared cache's URL (a flag; default: `XR_REMOTE` where
    /// [`Asked::remote_from_environment`]).
    pub remote: Option<String>,
    /// Take the shared cache `XR_REMOTE` names when no flag names one: `xr
    /// build` and a build script; not hot reload, which reads only what a
    /// build made.
    pub remote_from_environment: bool,
    /// Take the farm `XR_REMOTE_EXEC` names when no flag names one: `xr
    /// build` alone (a farm's action runs `xr-compile-action`, which only
    /// an installation of `xr` has beside it, never a build script or an
    /// engine).
    pub farm_from_environment: bool,
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
    /// The farm, as the flags ask for it.
    pub farm: FarmAsked,
}

/// The farm a front end's flags ask for; the environment fills in the URL,
/// instance and token they leave out.
#[derive(Clone, Debug, Default)]
pub struct FarmAsked {
    /// `grpc://HOST:PORT` or `grpcs://` (default: [`REMOTE_EXEC`]).
    pub url: Option<String>,
    /// The instance name (default: [`REMOTE_INSTANCE`], else none).
    pub instance: Option<String>,
    /// Compiles in flight at once; `None`: 64.
    pub jobs: Option<usize>,
    /// Platform properties, `KEY=VALUE`.
    pub properties: Vec<String>,
    /// Run the compiles in the farm's persistent workers.
    pub persistent_workers: bool,
}

/// Why what was asked cannot be a build: a mistake in the flags or the
/// environment, said before anything is built.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Upload asked by flag with no shared cache to upload to.
    #[error("--remote-upload needs a remote (--remote URL or XR_REMOTE)")]
    UploadWithoutRemote,
    /// The shared cache cannot be set up (its URL, credentials or timeout).
    #[cfg(feature = "remote-cache")]
    #[error(transparent)]
    Remote(#[from] xr_remote::RemoteError),
    /// A shared cache asked for in a build without the shared-cache feature
    /// (which never reads `XR_REMOTE`).
    #[cfg(not(feature = "remote-cache"))]
    #[error("a shared cache ({0}) was asked for, but this build of XR has no shared-cache support")]
    NoRemoteSupport(String),
    /// The farm's flags or URL are wrong.
    #[error("{0}")]
    FarmUsage(String),
    /// The farm's connection cannot be set up (its TLS, its credentials).
    #[error("{0}")]
    FarmSetup(String),
    /// A farm asked for by flag in a build without the farm feature (one
    /// the environment names is a warning).
    #[cfg(not(feature = "farm"))]
    #[error("a farm ({0}) was asked for, but this build of XR has no Remote Execution support")]
    NoFarmSupport(String),
    /// The farm cannot be used at all (its tool cannot be sent).
    #[cfg(feature = "farm")]
    #[error(transparent)]
    Farm(#[from] crate::remote_exec::FarmError),
}

/// The decisions of a build, and what the front end should say of them.
#[derive(Debug)]
pub struct Resolved {
    /// The build's request.
    pub request: BuildRequest,
    /// Warnings (a farm that cannot be reached: the build compiles here).
    pub warnings: Vec<String>,
}

impl Asked {
    /// Where the compiles run, of every decision: the workers `self` asks
    /// for, loading plugins from `plugin_dirs`, unless the flags or `env`
    /// ask for this process. What a command that compiles but builds no
    /// artifact (`xr bindgen`) takes alone.
    pub fn compile_in(&self, env: &BuildEnv, plugin_dirs: &[PathBuf]) -> CompileIn {
        match (&self.worker, self.in_process || env.in_process) {
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
        }
    }

    /// Every decision of the build from what was asked and what `env` says,
    /// with workers loading plugins from `plugin_dirs`: the shared cache
    /// (opened), upload, the farm (connected; one that cannot be reached is
    /// a warning and the build compiles here), in-process compiles or workers.
    pub fn resolve(self, env: &BuildEnv, plugin_dirs: &[PathBuf]) -> Result<Resolved, ConfigError> {
        let mut warnings = Vec::new();
        let remote_url = self.remote.clone().or_else(|| env.remote.clone().filter(|_| self.remote_from_environment));
        #[cfg(feature = "remote-cache")]
        let remote = match &remote_url {
            Some(url) => Some(Arc::new(xr_remote::Remote::open(&xr_remote::RemoteConfig::from_url(url)?)?)),
            None => None,
        };
        #[cfg(not(feature = "remote-cache"))]
        if let Some(url) = remote_url {
            return Err(ConfigError::NoRemoteSupport(url));
        }
        #[cfg(feature = "remote-cache")]
        let has_remote = remote.is_some();
        #[cfg(not(feature = "remote-cache"))]
        let has_remote = false;
        // A flag asking to upload with nowhere to upload to is a mistake; the
        // environment's standing ask is only void then.
        if self.upload && !has_remote {
            return Err(ConfigError::UploadWithoutRemote);
        }
        if env.remote_upload && !self.upload && !has_remote && self.remote_from_environment {
            warnings.push(format!(
                "{REMOTE_UPLOAD}=1 asks to upload, but no shared cache is named (--remote URL or XR_REMOTE): nothing is uploaded"
            ));
        }
        let upload = (self.upload || env.remote_upload) && has_remote;
        let farm_url = self.farm.url.clone().or_else(|| env.remote_exec.clone().filter(|_| self.farm_from_environment));
        #[cfg(feature = "farm")]
        let remote_exec = connect_farm(farm_url, &self.farm, env, &mut warnings)?.map(Arc::new);
        #[cfg(not(feature = "farm"))]
        match (&self.farm.url, &farm_url) {
            (Some(url), _) => return Err(ConfigError::NoFarmSupport(url.clone())),
            (None, Some(url)) => warnings.push(format!(
                "{REMOTE_EXEC} names a farm ({url}), but this build of XR has no Remote Execution support: compiling here"
            )),
            (None, None) => {}
        }
        let compile_in = self.compile_in(env, plugin_dirs);
        let request = BuildRequest {
            jobs: self.jobs,
            targets: self.targets,
            programs: self.programs,
            shard: self.shard,
            used: self.used,
            #[cfg(feature = "remote-cache")]
            remote,
            upload,
            compile_in,
            #[cfg(feature = "farm")]
            remote_exec,
        };
        Ok(Resolved { request, warnings })
    }
}

#[cfg(feature = "farm")]
/// The farm at `url` (the flag's, or [`REMOTE_EXEC`]'s), as `asked`,
/// connected; `None` when none is named, or (with a warning in
/// `warnings`) when it cannot be reached, so the build compiles here.
fn connect_farm(
    url: Option<String>,
    asked: &FarmAsked,
    env: &BuildEnv,
    warnings: &mut Vec<String>,
) -> Result<Option<crate::remote_exec::RemoteExec>, ConfigError> {
    use xr_remote_exec::{Connection, Endpoint, ExecutorConfig, RemoteExecutor};
    let Some(url) = url else { return Ok(None) };
    let endpoint = Endpoint::parse(&url).map_err(|e| ConfigError::FarmUsage(e.to_string()))?;
    let jobs = asked.jobs.unwrap_or(64);
    if jobs == 0 {
        return Err(ConfigError::FarmUsage("--remote-jobs takes a number greater than 0".into()));
    }
    let mut properties = Vec::new();
    for property in &asked.properties {
        let (key, value) = property
            .split_once('=')
            .ok_or_else(|| ConfigError::FarmUsage(format!("--remote-property {property}: write KEY=VALUE")))?;
        properties.push((key.to_owned(), value.to_owned()));
    }
    #[cfg(feature = "remote-cache")]
    let login = xr_remote::credentials::login_for_text(&url).ok().flatten().map(|l| (l.user, l.password));
    #[cfg(not(feature = "remote-cache"))]
    let login = None;
    let instance = asked.instance.clone().or_else(|| env.remote_instance.clone()).unwrap_or_default();
    let tool = crate::remote_exec::ActionTool::find(asked.persistent_workers)?;
    let connection = Connection::open(&endpoint, &instance, login, env.remote_exec_token.clone())
        .map_err(|e| ConfigError::FarmSetup(format!("the farm at {}: {e}", endpoint.shown)))?;
    match RemoteExecutor::connect(&connection, ExecutorConfig { jobs, ..ExecutorConfig::default() }) {
        Ok(executor) => {
            Ok(Some(crate::remote_exec::RemoteExec::new(executor, jobs, properties, tool, asked.persistent_workers)?))
        }
        Err(e) => {
            warnings.push(format!("{e}; compiling here"));
            Ok(None)
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
        // Read through the tracked reader: what a build script watches.
        BuildEnv::read();
        let read = xr_env::names_read();
        for variable in [IN_PROCESS, REMOTE_UPLOAD, REMOTE_EXEC, REMOTE_INSTANCE, REMOTE_EXEC_TOKEN] {
            assert!(read.iter().any(|name| name == variable), "{variable} is not in the record: {read:?}");
        }
    }

    #[test]
    fn workers_unless_in_process_is_asked_and_upload_only_with_a_remote() {
        let start = WorkerStart { program: "/bin/xr".into(), args: vec!["worker".into()] };
        let asked = Asked { worker: Some(start), ..Asked::default() };
        let resolve = |asked: Asked, env: &BuildEnv, dirs: &[PathBuf]| asked.resolve(env, dirs).unwrap().request;
        let request = resolve(asked.clone(), &BuildEnv::default(), &["/plugins".into()]);
        let CompileIn::Workers(workers) = &request.compile_in else { panic!("workers") };
        assert_eq!(workers.pool.command.args, ["worker", "--plugin-dir", "/plugins"].map(OsString::from));
        assert_eq!(workers.pool.memory_limit, Some(DEFAULT_WORKER_MEMORY));
        let standing = BuildEnv { remote_upload: true, ..BuildEnv::default() };
        assert!(!resolve(asked.clone(), &standing, &[]).upload, "the environment's upload, no remote: void");
        let flagged = Asked { upload: true, ..asked.clone() }.resolve(&BuildEnv::default(), &[]);
        assert!(matches!(flagged, Err(ConfigError::UploadWithoutRemote)), "{flagged:?}");
        let env = BuildEnv { in_process: true, ..BuildEnv::default() };
        assert!(matches!(resolve(asked.clone(), &env, &[]).compile_in, CompileIn::Process));
        let uncapped = resolve(Asked { worker_memory: Some(0), ..asked }, &BuildEnv::default(), &[]);
        let CompileIn::Workers(workers) = &uncapped.compile_in else { panic!("workers") };
        assert_eq!(workers.pool.memory_limit, None);
    }

    /// What the environment names counts only for the front ends that take
    /// it: hot reload (the default) takes neither its shared cache nor its
    /// farm, and says nothing; `xr build` is told of an upload with nowhere
    /// to go.
    #[test]
    fn the_environment_s_shared_cache_and_farm_count_only_where_a_front_end_takes_them() {
        let env =
            BuildEnv { remote_upload: true, remote_exec: Some("grpc://127.0.0.1:1".into()), ..BuildEnv::default() };
        let quiet = Asked::default().resolve(&env, &[]).unwrap();
        assert!(quiet.warnings.is_empty(), "{:?}", quiet.warnings);
        assert!(!quiet.request.upload);
        #[cfg(feature = "farm")]
        assert!(quiet.request.remote_exec.is_none(), "no farm connected for a front end that takes none");
        let told = Asked { remote_from_environment: true, ..Asked::default() }.resolve(&env, &[]).unwrap();
        assert!(
            told.warnings
                .iter()
                .any(|w| w.starts_with("XR_REMOTE_UPLOAD=1 asks to upload, but no shared cache is named")),
            "{:?}",
            told.warnings
        );
    }

    #[cfg(feature = "farm")]
    #[test]
    fn the_farm_s_flags_are_checked_before_anything_connects() {
        let farm = |url: &str, jobs: Option<usize>, properties: &[&str]| FarmAsked {
            url: Some(url.to_owned()),
            jobs,
            properties: properties.iter().map(|p| p.to_string()).collect(),
            ..FarmAsked::default()
        };
        for (asked, says) in [
            (farm("http://farm:1", None, &[]), "grpc"),
            (farm("grpc://farm:1", Some(0), &[]), "greater than 0"),
            (farm("grpc://farm:1", None, &["no-equals"]), "KEY=VALUE"),
        ] {
            let error = Asked { farm: asked, ..Asked::default() }.resolve(&BuildEnv::default(), &[]).unwrap_err();
            assert!(matches!(error, ConfigError::FarmUsage(_)) && error.to_string().contains(says), "{error}");
        }
    }
}
