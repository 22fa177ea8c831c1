//! One action on this bot: its Command and input root read from the CAS
//! (blobs kept in a cache under the work directory, so a toolchain that
//! every action carries is fetched once), staged read-only into a scratch
//! directory by hard links from the cache, the command run there with the
//! action's time limit, its outputs and streams sent back. An action that
//! asks for a persistent worker runs as a request to one this bot keeps
//! ([`crate::persistent`]).

use crate::persistent::{self, Workers};
use googleapis_tonic_google_devtools_remoteworkers_v1test2::google::rpc::Status as RpcStatus;
use prost::Message;
use std::{
    collections::{HashMap, HashSet},
    path::{Path, PathBuf},
    sync::{
        Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};
use xr_remote_exec::{Connection, cas::Cas, digest, proto, tree};

/// How an `Any` names a message type.
pub const TYPE_PREFIX: &str = "type.googleapis.com/";
/// A command with no timeout of its own stops after this long.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// Standard output and error up to this size go inline in the result too.
const INLINE_LIMIT: usize = 64 << 10;

/// Runs actions: the CAS they come from and the bot's scratch space.
pub struct Runner {
    cas: Cas,
    work: PathBuf,
    directories: Mutex<HashMap<String, proto::Directory>>,
    sequence: AtomicU64,
    workers: Workers,
}

impl Runner {
    /// A runner on `connection`'s CAS, caching under `work`.
    pub fn new(connection: &Connection, work: PathBuf) -> anyhow::Result<Self> {
        std::fs::create_dir_all(work.join("cas"))?;
        // Absolute: a program's path is joined to it and run from below it.
        let work = work.canonicalize()?;
        let runs = work.join("runs");
        // Left by a bot that was killed: nothing in it is anyone's any more.
        let _ = remove_run(&runs);
        std::fs::create_dir_all(&runs)?;
        Ok(Self {
            cas: Cas::new(connection),
            workers: Workers::new(work.join("workers"))?,
            work,
            directories: Mutex::new(HashMap::new()),
            sequence: AtomicU64::new(0),
        })
    }

    /// Runs the action a lease carries: its result, and the lease's status
    /// (OK, or DEADLINE_EXCEEDED when it ran past its time limit).
    pub async fn run(&self, payload: Option<prost_types::Any>) -> anyhow::Result<(proto::ActionResult, RpcStatus)> {
        let worker_start = xr_remote_exec::timestamp_now();
        let payload = payload.ok_or_else(|| anyhow::anyhow!("a lease with no payload"))?;
        let action = match payload_action(&payload)? {
            Payload::Action(action) => action,
            Payload::Digest(d) => proto::Action::decode(self.blob(&d).await?.as_slice())?,
        };
        let command_digest =
            action.command_digest.clone().ok_or_else(|| anyhow::anyhow!("an action with no command"))?;
        let command = proto::Command::decode(self.blob(&command_digest).await?.as_slice())?;
        let root = action.input_root_digest.clone().ok_or_else(|| anyhow::anyhow!("an action with no input root"))?;
        let input_fetch_start = xr_remote_exec::timestamp_now();
        let files = self.input_files(&root).await?;
        self.fetch_missing(&files).await?;
        let name = format!("{}-{}", std::process::id(), self.sequence.fetch_add(1, Ordering::Relaxed));
        let cache = self.work.join("cas");
        let stage = |files: &[tree::TreeFile], dir: &Path| -> anyhow::Result<()> {
            std::fs::create_dir_all(dir)?;
            Ok(tree::stage(files, dir, |file, path| link_or_copy(&cache.join(cache_name(file)), path))?)
        };
        let worker_key = persistent::requested(&action, &command);
        let (dir, worker) = match &worker_key {
            Some(key) => {
                let worker = match self.workers.take(key) {
                    Some(worker) => worker,
                    None => {
                        // The worker's directory holds its tools (what its key
                        // covers), never one action's sources for the next to read.
                        let root = self.workers.new_root(&name);
                        let tools = persistent::tool_files(&command, &files);
                        let started = stage(&tools, &root).and_then(|()| self.workers.start(&command, &root));
                        match started {
                            Ok(worker) => worker,
                            Err(e) => {
                                self.workers.discard(&root);
                                return Err(e);
                            }
                        }
                    }
                };
                (worker.root().join("sandbox").join(&name), Some(worker))
            }
            None => (self.work.join("runs").join(&name), None),
        };
        // A worker's request runs in its sandbox: its outputs' directories are made here.
        let staged = stage(&files, &dir).and_then(|()| match worker {
            Some(_) => Ok(make_output_dirs(&command, &dir)?),
            None => Ok(()),
        });
        if let Err(e) = staged {
            if let (Some(worker), Some(key)) = (worker, worker_key) {
                self.workers.give_back(key, worker);
            }
            let _ = remove_run(&dir);
            return Err(e);
        }
        let input_fetch_completed = xr_remote_exec::timestamp_now();
        let timeout = action
            .timeout
            .as_ref()
            .map(|t| Duration::new(t.seconds.max(0) as u64, t.nanos.max(0) as u32))
            .filter(|t| !t.is_zero())
            .unwrap_or(DEFAULT_TIMEOUT);
        let outcome = match (worker, worker_key) {
            (Some(worker), Some(key)) => {
                let (answer, kept) = worker.ask(&command, &format!("sandbox/{name}"), timeout).await;
                if let Some(worker) = kept {
                    self.workers.give_back(key, worker);
                }
                Ok(Ran {
                    exit_code: answer.exit_code,
                    stdout: Vec::new(),
                    stderr: answer.output,
                    timed_out: answer.timed_out,
                })
            }
            _ => self.execute(&command, &dir, timeout).await,
        };
        let execution_completed = xr_remote_exec::timestamp_now();
        let result = match outcome {
            Ok(ran) => self.collect(&command, &dir, ran).await,
            Err(e) => Err(e),
        };
        // Where the action's time went, as the API's metadata says it.
        let result = result.map(|(mut result, status)| {
            let upload = result.execution_metadata.take().unwrap_or_default();
            result.execution_metadata = Some(proto::ExecutedActionMetadata {
                worker: format!("xr-bot {}", std::process::id()),
                worker_start_timestamp: Some(worker_start),
                input_fetch_start_timestamp: Some(input_fetch_start),
                input_fetch_completed_timestamp: Some(input_fetch_completed),
                execution_start_timestamp: Some(input_fetch_completed),
                execution_completed_timestamp: Some(execution_completed),
                worker_completed_timestamp: Some(xr_remote_exec::timestamp_now()),
                ..upload
            });
            (result, status)
        });
        remove_run(&dir)?;
        result
    }

    async fn execute(&self, command: &proto::Command, dir: &Path, timeout: Duration) -> anyhow::Result<Ran> {
        let program = command.arguments.first().ok_or_else(|| anyhow::anyhow!("a command with no arguments"))?;
        let cwd = dir.join(&command.working_directory);
        // A relative program is a path in the input root, as the API says.
        let program = if program.contains('/') { cwd.join(program) } else { PathBuf::from(program) };
        let mut child = tokio::process::Command::new(&program);
        child
            .args(&command.arguments[1..])
            .current_dir(&cwd)
            .env_clear()
            .envs(command.environment_variables.iter().map(|v| (&v.name, &v.value)))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        make_output_dirs(command, &cwd)?;
        let child = child.spawn().map_err(|e| anyhow::anyhow!("starting {}: {e}", program.display()))?;
        match tokio::time::timeout(timeout, child.wait_with_output()).await {
            Ok(output) => {
                let output = output?;
                use std::os::unix::process::ExitStatusExt;
                let (exit_code, mut stderr) = match (output.status.code(), output.status.signal()) {
                    (Some(code), _) => (code, output.stderr),
                    (None, Some(signal)) => {
                        let mut stderr = output.stderr;
                        stderr.extend_from_slice(format!("\nthe command was killed by signal {signal}\n").as_bytes());
                        (128 + signal, stderr)
                    }
                    (None, None) => (1, output.stderr),
                };
                stderr.shrink_to_fit();
                Ok(Ran { exit_code, stdout: output.stdout, stderr, timed_out: false })
            }
            // The future owned the child: dropping it killed the command.
            Err(_) => Ok(Ran {
                exit_code: 124,
                stdout: Vec::new(),
                stderr: format!("the command ran past its time limit of {} s and was killed\n", timeout.as_secs())
                    .into_bytes(),
                timed_out: true,
            }),
        }
    }

    async fn collect(
        &self,
        command: &proto::Command,
        dir: &Path,
        ran: Ran,
    ) -> anyhow::Result<(proto::ActionResult, RpcStatus)> {
        let cwd = dir.join(&command.working_directory);
        let mut blobs = Vec::new();
        let mut output_files = Vec::new();
        if !ran.timed_out {
            for path in outputs_of(command) {
                let file = cwd.join(path);
                let Ok(bytes) = std::fs::read(&file) else { continue };
                use std::os::unix::fs::PermissionsExt;
                let executable = std::fs::metadata(&file).map(|m| m.permissions().mode() & 0o111 != 0).unwrap_or(false);
                let d = digest::of(&bytes);
                output_files.push(proto::OutputFile {
                    path: path.to_owned(),
                    digest: Some(d.clone()),
                    is_executable: executable,
                    ..Default::default()
                });
                blobs.push((d, bytes));
            }
        }
        let stdout_digest = digest::of(&ran.stdout);
        let stderr_digest = digest::of(&ran.stderr);
        let inline = |bytes: &[u8]| if bytes.len() <= INLINE_LIMIT { bytes.to_vec() } else { Vec::new() };
        let mut result = proto::ActionResult {
            output_files,
            exit_code: ran.exit_code,
            stdout_raw: inline(&ran.stdout),
            stderr_raw: inline(&ran.stderr),
            stdout_digest: Some(stdout_digest.clone()),
            stderr_digest: Some(stderr_digest.clone()),
            ..Default::default()
        };
        blobs.push((stdout_digest, ran.stdout));
        blobs.push((stderr_digest, ran.stderr));
        let mut seen = HashSet::new();
        blobs.retain(|(d, _)| seen.insert(d.hash.clone()));
        let output_upload_start = xr_remote_exec::timestamp_now();
        let missing: HashSet<String> = self
            .cas
            .missing(blobs.iter().map(|(d, _)| d.clone()).collect())
            .await?
            .into_iter()
            .map(|d| d.hash)
            .collect();
        blobs.retain(|(d, _)| missing.contains(&d.hash));
        self.cas.upload(blobs).await?;
        result.execution_metadata = Some(proto::ExecutedActionMetadata {
            output_upload_start_timestamp: Some(output_upload_start),
            output_upload_completed_timestamp: Some(xr_remote_exec::timestamp_now()),
            ..Default::default()
        });
        let status = if ran.timed_out {
            RpcStatus {
                code: tonic::Code::DeadlineExceeded as i32,
                message: "the action ran past its timeout".into(),
                details: Vec::new(),
            }
        } else {
            RpcStatus { code: 0, message: String::new(), details: Vec::new() }
        };
        Ok((result, status))
    }

    async fn blob(&self, d: &proto::Digest) -> anyhow::Result<Vec<u8>> {
        let mut blobs = self.cas.download(std::slice::from_ref(d)).await?;
        blobs.remove(&d.hash).ok_or_else(|| anyhow::anyhow!("the CAS has no blob {}", digest::text(d)))
    }

    /// The files under `root`, reading the directories this bot has not seen.
    async fn input_files(&self, root: &proto::Digest) -> anyhow::Result<Vec<tree::TreeFile>> {
        let mut wanted = vec![root.clone()];
        while !wanted.is_empty() {
            let unknown: Vec<proto::Digest> = {
                let known = self.directories.lock().unwrap_or_else(|p| p.into_inner());
                wanted.iter().filter(|d| !known.contains_key(&d.hash)).cloned().collect()
            };
            let fetched = self.cas.download(&unknown).await?;
            let mut known = self.directories.lock().unwrap_or_else(|p| p.into_inner());
            for (hash, bytes) in fetched {
                known.insert(hash, proto::Directory::decode(bytes.as_slice())?);
            }
            wanted = wanted.iter().filter_map(|d| known.get(&d.hash)).flat_map(tree::child_directories).collect();
        }
        let known = self.directories.lock().unwrap_or_else(|p| p.into_inner());
        Ok(tree::files_of(root, &known)?)
    }

    /// Brings the blobs of `files` the cache lacks into it.
    async fn fetch_missing(&self, files: &[tree::TreeFile]) -> anyhow::Result<()> {
        let cache = self.work.join("cas");
        let mut seen = HashSet::new();
        let missing: Vec<&tree::TreeFile> =
            files.iter().filter(|f| !cache.join(cache_name(f)).exists() && seen.insert(cache_name(f))).collect();
        let digests: Vec<proto::Digest> = missing.iter().map(|f| f.digest.clone()).collect();
        let blobs = self.cas.download(&digests).await?;
        for file in missing {
            let bytes = blobs.get(&file.digest.hash).ok_or_else(|| anyhow::anyhow!("the CAS lost {}", file.path))?;
            let target = cache.join(cache_name(file));
            let temp = cache.join(format!("{}.{}.tmp", cache_name(file), std::process::id()));
            std::fs::write(&temp, bytes)?;
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(
                &temp,
                std::fs::Permissions::from_mode(if file.executable { 0o555 } else { 0o444 }),
            )?;
            std::fs::rename(&temp, &target)?;
        }
        Ok(())
    }
}

/// What a command did.
struct Ran {
    exit_code: i32,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    timed_out: bool,
}

/// Each output's directory, made before the command runs, as the API promises.
fn make_output_dirs(command: &proto::Command, cwd: &Path) -> std::io::Result<()> {
    for output in outputs_of(command) {
        if let Some(parent) = cwd.join(output).parent() {
            std::fs::create_dir_all(parent)?;
        }
    }
    Ok(())
}

/// The paths a command writes: `output_paths`, or the older `output_files`.
fn outputs_of(command: &proto::Command) -> impl Iterator<Item = &String> {
    #[allow(deprecated)]
    let older = &command.output_files;
    let paths = if command.output_paths.is_empty() { older } else { &command.output_paths };
    // Never outside the run's directory.
    paths.iter().filter(|p| !p.starts_with('/') && !p.split('/').any(|c| c == ".."))
}

/// A blob's name in the cache; executables apart, since a hard link shares its mode.
fn cache_name(file: &tree::TreeFile) -> String {
    format!("{}{}", file.digest.hash, if file.executable { ".x" } else { "" })
}

fn link_or_copy(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::hard_link(from, to).or_else(|_| std::fs::copy(from, to).map(|_| ()))
}

/// Removes a run's directory. Its staged files are read-only, its
/// directories are not, which is all a removal needs.
fn remove_run(dir: &Path) -> std::io::Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// The Action a lease's payload carries: inline, or by digest.
fn payload_action(payload: &prost_types::Any) -> anyhow::Result<Payload> {
    let kind = payload.type_url.rsplit('/').next().unwrap_or_default();
    match kind {
        "build.bazel.remote.execution.v2.Action" => {
            Ok(Payload::Action(proto::Action::decode(payload.value.as_slice())?))
        }
        "build.bazel.remote.execution.v2.Digest" => {
            Ok(Payload::Digest(proto::Digest::decode(payload.value.as_slice())?))
        }
        other => anyhow::bail!("a lease whose payload is a {other}, not a REAPI Action"),
    }
}

/// What a lease names.
enum Payload {
    /// The Action itself.
    Action(proto::Action),
    /// The Action's digest, to read from the CAS.
    Digest(proto::Digest),
}
