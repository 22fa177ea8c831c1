//! A compile as a Remote Execution action: the worker protocol's one job,
//! run on a farm's machine by `xr-compile-action --plugin-dir tool/plugins
//! @request` (the flag file `request` says `--job job --reply reply`), the
//! program installed beside `xr` for this: a few megabytes that change
//! only with the compile path, so that a new `xr` finds its old actions in
//! the farm's cache. Where it is missing, `xr worker --job job --reply
//! reply` runs instead.
//!
//! With persistent workers asked for (`--remote-persistent-workers`), an
//! action also names a `persistentWorkerKey`, the digest of its tools and
//! start-up arguments: a farm that keeps workers (xr-bot, BuildBuddy)
//! starts `xr-compile-action` once and sends it each action, so a
//! compiler's start-up (glslang's built-in tables, Slang's session: most
//! of a 60 to 200 ms action run alone) is paid once per worker, not per action
//! ([`xr_remote_exec::persistent_worker`]).
//!
//! The action's input root holds everything the worker reads, under
//! relative paths, so it names nothing of this machine and two checkouts
//! make the same action (and share the farm's action cache):
//!
//! ```text
//! tool/bin/xr-compile-action the program (or tool/bin/xr)
//! tool/plugins/<plugin>.so   the plugin of the compile's build system
//! tool/<dir>/<lib>.so        the libraries the plugins opened beside them
//!                            (the Slang library), at the same place
//!                            relative to the plugin directory
//! src/<name>                 the stage files and the files their
//!                            compiles reach, by the names the build
//!                            gives them
//! job                        the job, with the source root `src`
//! request                    the flag file naming the job and the reply
//! ```
//!
//! Only what a compile can read is sent, so an edit re-runs the actions
//! that read the edited file and no other. What that is, the pair the
//! compile's build system compiles declares ([`SourceReach`], by the
//! stage's language as the plan chose it: [`crate::Chosen::reach`]); the
//! host knows no language by name:
//!
//! - `INCLUDES`: `#include` directives are followed through the files they
//!   reach ([`xr_plugin_kit::includes`], the compilers' own resolution;
//!   every directive, whatever `#if` says, so never less than is read);
//! - `IMPORTS`: Slang-style `import`s and `#include`s the same way; a
//!   module found nowhere the compile is told to look sends the
//!   directories, as `UNKNOWN` does;
//! - `STAGE_ONLY`: the stage file alone;
//! - `UNKNOWN` (a pair that does not say, or a value this host does not
//!   know): the stage's directory and include directories, whole.
//!
//! A compile that reads what was not sent fails on the farm, where the
//! file is absent: a compile that fails there runs here, and its failure
//! here is the answer, so nothing stale is ever taken.
//!
//! The action digest then follows from the same inputs as the store's key:
//! a changed plugin, library or source is a new action. A compile that
//! reads outside what can be sent (a name with `..`, an absolute include
//! directory, a directory too large to send) runs here.

use crate::paths::SourceRoot;
use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::Duration,
};
use xr_remote_exec::{Action, ExecError, Input, RemoteExecutor, Stats, digest, persistent_worker};
use xr_sourcebuild::{OfflineRequest, SourceDesc, SourceReach};
use xr_worker::{CompileFailure, Compiled, Job, Reply};

/// The most files, and bytes, one directory of sources may send.
const MAX_DIRECTORY_FILES: usize = 4096;
const MAX_DIRECTORY_BYTES: u64 = 64 << 20;

/// Files of an input root (a source directory's, a plugin's tools), or why they cannot be sent.
type SourceFiles = Result<Arc<Vec<Input>>, FarmError>;
/// The program a farm runs for a compile, installed beside `xr`.
pub const COMPILE_ACTION: &str = "xr-compile-action";
/// The flag file an `xr-compile-action` action carries: its request.
const REQUEST: &[u8] = b"--job\njob\n--reply\nreply\n";
/// A stage's file and what its compile reaches; `None`: its directories go instead.
type ReachedFiles = Result<Option<Arc<Vec<Input>>>, FarmError>;

/// Why a compile did not run on the farm (it runs here instead, where the
/// build may compile here).
#[derive(Clone, Debug, thiserror::Error)]
pub enum FarmError {
    /// The build gave up on the farm after repeated failures to reach it.
    #[error("the farm is not used any more in this build")]
    GivenUp,
    /// xr's own executable, the action's tool, cannot be found.
    #[error("finding xr's own executable: {0}")]
    OwnExecutable(Arc<std::io::Error>),
    /// Persistent workers were asked for, but only `xr` itself, which
    /// speaks no worker protocol, can be sent.
    #[error(
        "persistent workers need {COMPILE_ACTION} beside {}, where it is not (it is built and installed with xr)",
        xr.display()
    )]
    NoCompileAction {
        /// The `xr` executable.
        xr: PathBuf,
    },
    /// A plugin's path has no directory or file name.
    #[error("{} is not a plugin file's path", plugin.display())]
    PluginPath {
        /// The path.
        plugin: PathBuf,
    },
    /// A file the action carries cannot be read.
    #[error("reading {}: {cause}", path.display())]
    Unreadable {
        /// The file or directory.
        path: PathBuf,
        /// The file system's error.
        cause: Arc<std::io::Error>,
    },
    /// A stage file or include directory outside the manifest's directory.
    #[error("'{}' is outside the manifest's directory, which an action cannot carry", name.display())]
    Outside {
        /// The name, as the build gives it.
        name: PathBuf,
    },
    /// A source directory too large for one action.
    #[error("{dir} holds more than {MAX_DIRECTORY_FILES} files or {} MiB, more than an action carries", MAX_DIRECTORY_BYTES >> 20)]
    TooLarge {
        /// The directory, as messages show it.
        dir: String,
    },
    /// The compile failed on the farm, where only the files its includes
    /// and imports reach were sent: it runs here, where every file is.
    #[error("it failed on the farm ({0}); compiled here, where every file it may read is")]
    FailedThere(String),
    /// The job could not be written into the action.
    #[error("writing the action's job: {0}")]
    Job(Arc<xr_worker::protocol::FrameError>),
    /// The farm's result has no reply file.
    #[error("the farm's result has no reply")]
    NoReply,
    /// The farm's reply is not a whole worker reply.
    #[error("the farm's reply is not a worker reply")]
    NotAReply,
    /// The farm could not run it, or its answer was refused.
    #[error(transparent)]
    Exec(Arc<ExecError>),
}

/// The persistent-worker key of an action run by `tools` with `arguments`:
/// actions share a worker when its tools and start-up arguments are the same.
fn worker_key(tools: &[Input], arguments: &[String]) -> String {
    let mut shape: Vec<String> = tools.iter().map(|i| format!("{} {}", i.path, i.digest.hash)).collect();
    // The libraries are found in the order the process mapped them: not part of the key.
    shape.sort();
    shape.extend(arguments.iter().cloned());
    digest::of(shape.join("\n").as_bytes()).hash
}

/// How an action starts its tool.
struct ToolStart {
    /// The command line.
    arguments: Vec<String>,
    /// The key of the persistent worker `xr-compile-action` may run in:
    /// made here from the same command line, so that two actions share a
    /// worker only when they would start it alike ([`worker_key`]).
    worker_key: String,
}

/// How `tool`, whose files are `tools`, starts for an action whose worker's
/// address space is capped at `memory_limit`.
fn tool_start(tool: &ActionTool, tools: &[Input], memory_limit: Option<u64>) -> ToolStart {
    let mut arguments: Vec<String> = match tool {
        ActionTool::CompileAction(_) => [tool.place(), "--plugin-dir", "tool/plugins"].map(String::from).to_vec(),
        ActionTool::Xr(_) => {
            [tool.place(), "worker", "--plugin-dir", "tool/plugins", "--job", "job", "--reply", "reply"]
                .map(String::from)
                .to_vec()
        }
    };
    // The same cap as a local worker's, so a compiler that eats memory fails alike.
    if let Some(bytes) = memory_limit {
        arguments.extend(["--memory-limit".to_owned(), bytes.to_string()]);
    }
    let worker_key = worker_key(tools, &arguments);
    ToolStart { arguments, worker_key }
}

/// `cause` reading `path`.
fn unreadable(path: &Path) -> impl FnOnce(std::io::Error) -> FarmError + '_ {
    move |cause| FarmError::Unreadable { path: path.to_path_buf(), cause: Arc::new(cause) }
}

/// The program an action runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ActionTool {
    /// `xr-compile-action`, beside `xr`.
    CompileAction(PathBuf),
    /// `xr` itself (`xr worker --job --reply`), where `xr-compile-action` is missing.
    Xr(PathBuf),
}

impl ActionTool {
    /// `xr-compile-action` beside this executable, else this executable;
    /// `persistent`: for persistent workers, which only the first can be.
    pub fn find(persistent: bool) -> Result<Self, FarmError> {
        let exe = std::env::current_exe().map_err(|e| FarmError::OwnExecutable(Arc::new(e)))?;
        let beside = exe.with_file_name(format!("{COMPILE_ACTION}{}", std::env::consts::EXE_SUFFIX));
        match (beside.is_file(), persistent) {
            (true, _) => Ok(Self::CompileAction(beside)),
            (false, false) => Ok(Self::Xr(exe)),
            (false, true) => Err(FarmError::NoCompileAction { xr: exe }),
        }
    }

    fn file(&self) -> &Path {
        match self {
            Self::CompileAction(file) | Self::Xr(file) => file,
        }
    }

    /// Its place in the input root.
    fn place(&self) -> &'static str {
        match self {
            Self::CompileAction(_) => "tool/bin/xr-compile-action",
            Self::Xr(_) => "tool/bin/xr",
        }
    }
}

/// Compiles on a farm, for one or more builds.
pub struct RemoteExec {
    executor: RemoteExecutor,
    /// The program each action runs.
    tool: ActionTool,
    /// Whether actions ask the farm for persistent workers.
    persistent: bool,
    /// Platform properties every action asks for.
    platform: Vec<(String, String)>,
    /// How many actions the build keeps in flight.
    jobs: usize,
    /// (path, digest) of each tool file, read once.
    tool_digests: Mutex<HashMap<PathBuf, xr_remote_exec::proto::Digest>>,
    /// Every plugin file the build loaded.
    plugins: Mutex<Vec<PathBuf>>,
    /// Each plugin's `tool/` inputs, found once per build: the scan of the
    /// process's mapped libraries is not redone for every action.
    tools: Mutex<HashMap<PathBuf, SourceFiles>>,
    /// The actions' `src/` inputs, found once per build.
    sources: Sources,
    /// Whether a compile that failed on the farm and ran here was told.
    said_failed_there: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for RemoteExec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteExec").field("farm", &self.executor.farm()).field("jobs", &self.jobs).finish()
    }
}

/// What became of a compile sent to the farm.
pub enum RemoteCompile {
    /// It ran there (or came from the action cache): its result, a
    /// compiler's failure included.
    Done(Result<Compiled, CompileFailure>),
    /// It could not, or its answer was not trusted: run it here.
    Local(FarmError),
}

/// One compile sent to the farm: `request` with the build system
/// `compiler` of the plugin at `plugin`, within `limit` and the address
/// space `memory_limit`, its sources read under `root`, each stage
/// reaching other files as `reach` says for its language.
#[derive(Clone, Copy)]
pub(crate) struct FarmJob<'a> {
    pub compiler: &'a str,
    pub plugin: &'a Path,
    pub reach: &'a [(String, SourceReach)],
    pub request: &'a OfflineRequest,
    pub limit: Duration,
    pub memory_limit: Option<u64>,
    pub root: &'a SourceRoot,
}

impl RemoteExec {
    /// Compiles through `executor`, `jobs` at a time, on workers with
    /// `properties` besides this machine's `OSFamily` and `ISA`, each
    /// action run by `tool`; `persistent`: in the farm's persistent
    /// workers, which only `xr-compile-action` can be.
    pub fn new(
        executor: RemoteExecutor,
        jobs: usize,
        properties: Vec<(String, String)>,
        tool: ActionTool,
        persistent: bool,
    ) -> Result<Self, FarmError> {
        if let (true, ActionTool::Xr(xr)) = (persistent, &tool) {
            return Err(FarmError::NoCompileAction { xr: xr.clone() });
        }
        let platform = xr_remote_exec::platform::host_properties(properties);
        Ok(Self {
            executor,
            tool,
            persistent,
            platform,
            jobs: jobs.max(1),
            tool_digests: Mutex::new(HashMap::new()),
            plugins: Mutex::new(Vec::new()),
            tools: Mutex::new(HashMap::new()),
            sources: Sources::default(),
            said_failed_there: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// The farm, as messages show it.
    pub fn farm(&self) -> &str {
        self.executor.farm()
    }

    /// Actions in flight at once.
    pub fn jobs(&self) -> usize {
        self.jobs
    }

    /// Whether the farm is still used (it is given up on after repeated failures).
    pub fn usable(&self) -> bool {
        self.executor.usable()
    }

    /// How the actions went so far.
    pub fn stats(&self) -> Stats {
        self.executor.stats()
    }

    /// Notes that a compile given back ran here.
    pub fn note_fallback(&self) {
        self.executor.note_fallback();
    }

    /// Starts a build with the plugins of `registry`: forgets the source
    /// directories read (they may have changed since the last build).
    pub(crate) fn begin_build(&self, registry: &xr_host::Registry) {
        self.sources.clear();
        self.tools.lock().unwrap_or_else(|p| p.into_inner()).clear();
        *self.plugins.lock().unwrap_or_else(|p| p.into_inner()) =
            registry.plugins().iter().map(|p| p.path.canonicalize().unwrap_or_else(|_| p.path.clone())).collect();
    }

    /// Runs `job` on the farm.
    pub(crate) fn compile(&self, job: &FarmJob<'_>) -> RemoteCompile {
        let action = match self.action(job) {
            Ok(action) => action,
            Err(why) => return RemoteCompile::Local(why),
        };
        match self.executor.execute(&action) {
            Ok(executed) => match executed.outputs.get("reply") {
                Some(bytes) => match reply_of(bytes) {
                    // A file the compile reads may not have been sent (the
                    // farm has only what the scan of its includes found).
                    RemoteCompile::Done(Err(failure)) => {
                        let first = failure
                            .diagnostics
                            .first()
                            .map(|d| format!("{}:{}: {}", d.file, d.line, d.message))
                            .unwrap_or(failure.message);
                        if !self.said_failed_there.swap(true, std::sync::atomic::Ordering::Relaxed) {
                            tracing::warn!(
                                "a compile failed on the farm at {} and is compiled here, where every file it may \
                                 read is (said once; the first: {first})",
                                self.executor.farm()
                            );
                        }
                        RemoteCompile::Local(FarmError::FailedThere(first))
                    }
                    done => done,
                },
                None => RemoteCompile::Local(FarmError::NoReply),
            },
            Err(ExecError::Failed { message, stderr }) => {
                let stderr = stderr.trim();
                let message = if stderr.is_empty() { message } else { format!("{message}: {stderr}") };
                RemoteCompile::Done(Err(CompileFailure::message(message)))
            }
            Err(other) => RemoteCompile::Local(FarmError::Exec(Arc::new(other))),
        }
    }

    fn action(&self, job: &FarmJob<'_>) -> Result<Action, FarmError> {
        let FarmJob { compiler, plugin, reach, request, limit, memory_limit, root } = *job;
        let tools = self.tool_inputs(plugin)?;
        let mut inputs = tools.to_vec();
        let mut request = request.clone();
        inputs.extend(self.sources.of_stages(&mut request.program.stages, reach, root)?);
        let mut job = Vec::new();
        xr_worker::protocol::write_frame(&mut job, &Job::new(compiler, &request))
            .map_err(|e| FarmError::Job(Arc::new(e)))?;
        inputs.push(Input::bytes("job", job, false));
        let ToolStart { mut arguments, worker_key } = tool_start(&self.tool, &tools, memory_limit);
        let mut platform = self.platform.clone();
        if let ActionTool::CompileAction(_) = self.tool {
            if self.persistent {
                platform.push((persistent_worker::KEY_PROPERTY.into(), worker_key));
                platform.push((persistent_worker::PROTOCOL_PROPERTY.into(), persistent_worker::JSON_PROTOCOL.into()));
            }
            inputs.push(Input::bytes("request", REQUEST, false));
            arguments.push("@request".into());
        }
        Ok(Action {
            arguments,
            environment: Vec::new(),
            inputs,
            outputs: vec!["reply".into()],
            platform,
            timeout: Some(limit),
        })
    }

    /// `tool/` for `plugin`, found on its first action of the build.
    fn tool_inputs(&self, plugin: &Path) -> SourceFiles {
        let mut tools = self.tools.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(known) = tools.get(plugin) {
            return known.clone();
        }
        let found = self.find_tool_inputs(plugin).map(Arc::new);
        tools.insert(plugin.to_path_buf(), found.clone());
        found
    }

    /// `tool/`: the executable, the plugin, and the libraries opened beside it.
    fn find_tool_inputs(&self, plugin: &Path) -> Result<Vec<Input>, FarmError> {
        let plugin = &plugin.canonicalize().unwrap_or_else(|_| plugin.to_path_buf());
        let not_a_plugin = || FarmError::PluginPath { plugin: plugin.clone() };
        let plugin_dir = plugin.parent().ok_or_else(not_a_plugin)?;
        let plugin_name = plugin.file_name().ok_or_else(not_a_plugin)?;
        let mut inputs = vec![
            self.tool_file(self.tool.place().into(), self.tool.file(), true)?,
            self.tool_file(format!("tool/plugins/{}", plugin_name.to_string_lossy()), plugin, true)?,
        ];
        let base = plugin_dir.parent().unwrap_or(plugin_dir);
        let plugins = self.plugins.lock().unwrap_or_else(|p| p.into_inner()).clone();
        for library in libraries_opened(plugin_dir) {
            // The other plugins stay home: the worker loads only this one.
            if plugins.contains(&library) {
                continue;
            }
            // Beside the plugins (in their directory, or one next to it), at
            // the same place relative to them; anything else is a system
            // library the worker's machine has.
            let place = if let Ok(rest) = library.strip_prefix(plugin_dir) {
                format!("tool/plugins/{}", rest.display())
            } else if let Ok(rest) = library.strip_prefix(base) {
                format!("tool/{}", rest.display())
            } else {
                continue;
            };
            inputs.push(self.tool_file(place, &library, true)?);
        }
        Ok(inputs)
    }

    fn tool_file(&self, place: String, file: &Path, executable: bool) -> Result<Input, FarmError> {
        let mut digests = self.tool_digests.lock().unwrap_or_else(|p| p.into_inner());
        let digest = match digests.get(file) {
            Some(d) => d.clone(),
            None => {
                let bytes = std::fs::read(file).map_err(unreadable(file))?;
                let d = digest::of(&bytes);
                digests.insert(file.to_path_buf(), d.clone());
                d
            }
        };
        Ok(Input::file(place, file.to_path_buf(), digest, executable))
    }
}

/// The `src/` inputs of actions: what each stage's compile reaches, and
/// the source directories read whole, each found once per build.
#[derive(Default)]
struct Sources {
    /// A source directory's files.
    directories: Mutex<HashMap<PathBuf, SourceFiles>>,
    /// A stage's file and what its compile reaches (`None`: its
    /// directories go instead), by the digest of what decides them: found
    /// once per build, not once per variant.
    reached: Mutex<HashMap<String, ReachedFiles>>,
}

impl Sources {
    /// Forgets what was read (the files may have changed since).
    fn clear(&self) {
        self.directories.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.reached.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// The `src/` inputs of a compile of `stages`, read under `root`: each
    /// stage's file and what its compile reaches as `reach` says for its
    /// language, or its directory and include directories whole. Each
    /// stage's source root becomes `src`, where the action has them.
    fn of_stages(
        &self,
        stages: &mut [SourceDesc],
        reach: &[(String, SourceReach)],
        root: &SourceRoot,
    ) -> Result<Vec<Input>, FarmError> {
        let mut inputs = Vec::new();
        let mut dirs = Vec::new();
        for stage in stages.iter_mut() {
            let file = Path::new(stage.file_name.as_str());
            match self.reached(stage, crate::plan::reach_of(reach, &stage.language))? {
                Some(files) => inputs.extend(files.iter().cloned()),
                None => {
                    dirs.push(sendable(file.parent().unwrap_or(Path::new("")))?);
                    for dir in stage.include_dirs.iter() {
                        dirs.push(sendable(Path::new(dir.as_str()))?);
                    }
                }
            }
            stage.source_root = "src".into();
        }
        dirs.sort();
        dirs.dedup();
        for dir in dirs {
            inputs.extend(self.directory(root, &dir)?.iter().cloned());
        }
        Ok(inputs)
    }

    /// `stage`'s file and the files a compile of it can read, reaching
    /// them by `reach`, as `src/` inputs, where they can be known before it
    /// runs ([`reached_files`]).
    fn reached(&self, stage: &SourceDesc, reach: SourceReach) -> ReachedFiles {
        // Variants differ in defines, which no scan reads: what decides
        // the files is how they are reached, the stage's text, names and
        // in-memory files.
        let mut key = vec![reach.0, 0];
        for part in [stage.language.as_str(), stage.file_name.as_str(), stage.source_root.as_str(), &stage.source] {
            key.extend_from_slice(part.as_bytes());
            key.push(0);
        }
        for dir in stage.include_dirs.iter() {
            key.extend_from_slice(dir.as_bytes());
            key.push(0);
        }
        for file in stage.virtual_files.iter() {
            key.extend_from_slice(file.name.as_bytes());
            key.push(0);
            key.extend_from_slice(file.contents.as_bytes());
            key.push(0);
        }
        let key = digest::of(&key).hash;
        let mut known = self.reached.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(found) = known.get(&key) {
            return found.clone();
        }
        let found = reached_files(stage, reach)
            .map(|files| {
                let file = sendable(Path::new(stage.file_name.as_str()))?;
                let mut inputs = vec![Input::bytes(
                    format!("src/{}", file.to_string_lossy()),
                    stage.source.as_bytes().to_vec(),
                    false,
                )];
                for found in files {
                    let name = sendable(Path::new(&found.display))?;
                    inputs.push(Input::bytes(
                        format!("src/{}", name.to_string_lossy()),
                        found.text.into_bytes(),
                        false,
                    ));
                }
                Ok(Arc::new(inputs))
            })
            .transpose();
        known.insert(key, found.clone());
        found
    }

    /// The files under the source directory named `dir`, as `src/` inputs.
    fn directory(&self, root: &SourceRoot, dir: &Path) -> SourceFiles {
        let mut directories = self.directories.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(known) = directories.get(dir) {
            return known.clone();
        }
        let read = read_directory(root, dir).map(Arc::new);
        directories.insert(dir.to_path_buf(), read.clone());
        read
    }
}

/// The compile a reply from the farm carries, when it is a whole worker
/// reply; anything else is not trusted and the compile runs here.
fn reply_of(bytes: &[u8]) -> RemoteCompile {
    let mut rest = bytes;
    match xr_worker::protocol::read_frame::<Reply>(&mut rest) {
        Ok(Some(reply)) if rest.is_empty() => RemoteCompile::Done(reply.into_result()),
        _ => RemoteCompile::Local(FarmError::NotAReply),
    }
}

/// The files a compile of `stage` that reaches them by `reach` can read
/// besides its own, where they can be known before it runs; `None` sends
/// its directories.
fn reached_files(stage: &SourceDesc, reach: SourceReach) -> Option<Vec<xr_plugin_kit::includes::FoundInclude>> {
    use xr_plugin_kit::includes::{reached_by_imports, reached_by_includes};
    // In-memory files travel in the job itself.
    let on_disk = |files: Vec<xr_plugin_kit::includes::FoundInclude>| {
        files.into_iter().filter(|f| f.path.is_some()).collect::<Vec<_>>()
    };
    match reach {
        SourceReach::INCLUDES => Some(on_disk(reached_by_includes(stage))),
        SourceReach::IMPORTS => reached_by_imports(stage).map(on_disk),
        SourceReach::STAGE_ONLY => Some(Vec::new()),
        // UNKNOWN, and a value of a later contract this host does not know.
        _ => None,
    }
}

/// A relative name without `..`: one that has a place under `src/`.
fn sendable(name: &Path) -> Result<PathBuf, FarmError> {
    use std::path::Component;
    if name.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir)) {
        Ok(name.components().filter(|c| matches!(c, Component::Normal(_))).collect())
    } else {
        Err(FarmError::Outside { name: name.to_path_buf() })
    }
}

/// Every file under `dir` (a name relative to the source root), read.
fn read_directory(root: &SourceRoot, dir: &Path) -> Result<Vec<Input>, FarmError> {
    let mut inputs = Vec::new();
    let mut bytes = 0u64;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        let on_disk = root.on_disk(&next.to_string_lossy());
        let entries = std::fs::read_dir(&on_disk).map_err(unreadable(&on_disk))?;
        for entry in entries.filter_map(|e| e.ok()) {
            let name = entry.file_name();
            let name_text = name.to_string_lossy();
            // Hidden files and directories (.git) are no shader's input.
            if name_text.starts_with('.') {
                continue;
            }
            let relative = next.join(&name);
            let Ok(kind) = entry.file_type() else { continue };
            let kind = if kind.is_symlink() {
                std::fs::metadata(entry.path()).map(|m| m.file_type()).ok()
            } else {
                Some(kind)
            };
            match kind {
                Some(k) if k.is_dir() => pending.push(relative),
                Some(k) if k.is_file() => {
                    let path = entry.path();
                    let contents = std::fs::read(&path).map_err(unreadable(&path))?;
                    bytes += contents.len() as u64;
                    inputs.push(Input::bytes(format!("src/{}", relative.to_string_lossy()), contents, false));
                }
                _ => {}
            }
            if inputs.len() > MAX_DIRECTORY_FILES || bytes > MAX_DIRECTORY_BYTES {
                return Err(FarmError::TooLarge { dir: root.shown(&dir.to_string_lossy()) });
            }
        }
    }
    Ok(inputs)
}

/// The shared libraries this process has mapped outside the system's
/// directories (what the plugins opened of their own), with every other
/// library in the directories they came from outside `plugin_dir`: a
/// library opens its companions only when a compile needs them (Slang its
/// glslang module), which the build's own process may never do.
fn libraries_opened(plugin_dir: &Path) -> Vec<PathBuf> {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else { return Vec::new() };
    let system = ["/usr/", "/lib/", "/lib64/", "/etc/", "/proc/", "/dev/", "/memfd:"];
    let mapped: Vec<PathBuf> = maps
        .lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .filter(|path| path.starts_with('/') && path.contains(".so"))
        .filter(|path| !system.iter().any(|s| path.starts_with(s)))
        .map(PathBuf::from)
        .collect();
    let mut libraries = mapped.clone();
    for dir in mapped.iter().filter_map(|l| l.parent()).filter(|d| *d != plugin_dir) {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        libraries.extend(
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n.to_string_lossy().contains(".so"))),
        );
    }
    libraries.sort();
    libraries.dedup();
    libraries
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_whole_worker_reply_is_taken_from_the_farm() {
        let compiled = Compiled { bytes: vec![1, 2, 3], ..Default::default() };
        let mut whole = Vec::new();
        xr_worker::protocol::write_frame(&mut whole, &Reply::of(Ok(compiled.clone()))).unwrap();
        assert!(matches!(reply_of(&whole), RemoteCompile::Done(Ok(c)) if c == compiled));
        for bad in [&whole[..whole.len() - 1], &[][..], b"garbage", &[whole.clone(), vec![0]].concat()[..]] {
            assert!(matches!(reply_of(bad), RemoteCompile::Local(FarmError::NotAReply)), "{bad:?}");
        }
    }

    /// A persistent worker serves every action of its key: two actions
    /// whose workers start differently (another memory cap, another tool
    /// or plugin) must not share one, and the order the process mapped its
    /// libraries in must not split them.
    #[test]
    fn actions_share_a_worker_only_when_its_tools_and_start_up_arguments_are_the_same() {
        let tool = ActionTool::CompileAction(PathBuf::from("/opt/xr/bin/xr-compile-action"));
        let tools = [
            Input::bytes("tool/bin/xr-compile-action", &b"compile-action"[..], true),
            Input::bytes("tool/plugins/libxr_compiler_glsl.so", &b"glsl plugin"[..], true),
            Input::bytes("tool/lib/libshaderc.so", &b"shaderc"[..], true),
        ];
        let one_gib = Some(1 << 30);
        let base = tool_start(&tool, &tools, one_gib);
        assert_eq!(tool_start(&tool, &tools, one_gib).worker_key, base.worker_key, "the same worker: one key");
        let mut reordered = tools.to_vec();
        reordered.rotate_left(1);
        assert_eq!(tool_start(&tool, &reordered, one_gib).worker_key, base.worker_key, "the order libraries mapped in");

        let mut rebuilt_plugin = tools.to_vec();
        rebuilt_plugin[1] = Input::bytes("tool/plugins/libxr_compiler_glsl.so", &b"glsl plugin, rebuilt"[..], true);
        let mut moved = tools.to_vec();
        moved[2] = Input::bytes("tool/plugins/libshaderc.so", &b"shaderc"[..], true);
        let others = [
            ("another memory cap", tool_start(&tool, &tools, Some(2 << 30)).worker_key),
            ("no memory cap", tool_start(&tool, &tools, None).worker_key),
            ("another argument", worker_key(&tools, &[base.arguments.clone(), vec!["--verbose".into()]].concat())),
            ("a rebuilt plugin", tool_start(&tool, &rebuilt_plugin, one_gib).worker_key),
            ("a library at another place", tool_start(&tool, &moved, one_gib).worker_key),
            ("one tool fewer", tool_start(&tool, &tools[..2], one_gib).worker_key),
        ];
        for (what, key) in &others {
            assert_ne!(*key, base.worker_key, "{what} must start another worker");
        }
        let distinct: std::collections::HashSet<&String> = others.iter().map(|(_, key)| key).collect();
        assert_eq!(distinct.len(), others.len(), "each change gives its own key: {others:?}");
        // The key is of the command line the action carries, its memory cap among it.
        assert_eq!(base.worker_key, worker_key(&tools, &base.arguments));
        assert!(
            base.arguments.ends_with(&["--memory-limit".to_owned(), (1u64 << 30).to_string()]),
            "{:?}",
            base.arguments
        );
    }

    /// A source tree: a stage of each way of reaching files, what each
    /// reaches, and files none of them reads.
    fn source_tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in [
            ("shaders/lit.gld", "#version 450\n#include \"light.gld\"\nvoid main() {}\n"),
            ("shaders/light.gld", "#include <common/math.gld>\n"),
            ("include/common/math.gld", "// reached through light.gld, from an include directory\n"),
            ("shaders/toon.slang", "import materials.pbr;\nfloat4 main() {}\n"),
            ("shaders/materials/pbr.slang", "import shared;\n"),
            ("include/shared.slang", "// imported from an include directory\n"),
            ("shaders/lost.slang", "import nowhere;\n"),
            ("shaders/plain.txt", "// reads nothing else\n"),
            ("shaders/unread.gld", "// no stage reads it\n"),
            ("include/unread.slang", "// no stage reads it\n"),
        ] {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    /// The `src/` inputs a compile of the stage `file` in `language`
    /// sends, where its build system declares `declared`.
    fn sent(root: &Path, language: &str, file: &str, declared: &[(&str, SourceReach)]) -> Vec<String> {
        let source = std::fs::read_to_string(root.join(file)).unwrap();
        let stage = SourceDesc::new(language, xr_sourcebuild::ShaderStage::Fragment, file, source)
            .with_source_root(root.to_string_lossy())
            .with_include_dir("include");
        let declared: Vec<(String, SourceReach)> = declared.iter().map(|(l, r)| ((*l).to_owned(), *r)).collect();
        let mut stages = [stage];
        let inputs = Sources::default().of_stages(&mut stages, &declared, &SourceRoot::new(root)).unwrap();
        assert_eq!(stages[0].source_root.as_str(), "src", "the job reads its sources where the action has them");
        let mut paths: Vec<String> = inputs.iter().map(|i| i.path.clone()).collect();
        paths.sort();
        paths
    }

    /// What an action carries of the sources is what the pair declares,
    /// whatever its language is called: the stage and what its includes
    /// reach, the stage and the modules it imports, the stage alone, or
    /// (declaring nothing) its directory and include directories whole.
    #[test]
    fn an_action_carries_the_files_its_pair_declares_its_compiles_reach() {
        let dir = source_tree();
        let root = dir.path();
        let names = |names: &[&str]| names.iter().map(|n| format!("src/{n}")).collect::<Vec<_>>();
        let every_file = names(&[
            "include/common/math.gld",
            "include/shared.slang",
            "include/unread.slang",
            "shaders/light.gld",
            "shaders/lit.gld",
            "shaders/lost.slang",
            "shaders/materials/pbr.slang",
            "shaders/plain.txt",
            "shaders/toon.slang",
            "shaders/unread.gld",
        ]);
        // A language XR has never heard of, whose plugin declares `#include`s.
        let includes = [("glsl-dialect", SourceReach::INCLUDES)];
        assert_eq!(
            sent(root, "glsl-dialect", "shaders/lit.gld", &includes),
            names(&["include/common/math.gld", "shaders/light.gld", "shaders/lit.gld"])
        );
        let imports = [("modules", SourceReach::IMPORTS)];
        assert_eq!(
            sent(root, "modules", "shaders/toon.slang", &imports),
            names(&["include/shared.slang", "shaders/materials/pbr.slang", "shaders/toon.slang"])
        );
        // A module found nowhere may be found by other means: everything goes.
        assert_eq!(sent(root, "modules", "shaders/lost.slang", &imports), every_file);
        let stage_only = [("plain", SourceReach::STAGE_ONLY)];
        assert_eq!(sent(root, "plain", "shaders/plain.txt", &stage_only), names(&["shaders/plain.txt"]));
        // The same stage, its pair saying nothing (or what this host does not
        // know, or another language's declaration): the directories, whole.
        for unknown in [[("glsl-dialect", SourceReach::UNKNOWN)], [("glsl-dialect", SourceReach(200))]] {
            assert_eq!(sent(root, "glsl-dialect", "shaders/lit.gld", &unknown), every_file);
        }
        assert_eq!(sent(root, "glsl-dialect", "shaders/lit.gld", &[("glsl", SourceReach::INCLUDES)]), every_file);
    }

    #[test]
    fn names_outside_the_manifests_directory_are_not_sent() {
        assert_eq!(sendable(Path::new("shaders/include")).unwrap(), PathBuf::from("shaders/include"));
        assert_eq!(sendable(Path::new("")).unwrap(), PathBuf::new());
        for outside in ["../common", "/usr/share/shaders"] {
            assert!(
                matches!(sendable(Path::new(outside)), Err(FarmError::Outside { name }) if name == Path::new(outside))
            );
        }
    }
}
