//! Persistent workers: an action that asks for one (its platform names a
//! `persistentWorkerKey` and the JSON protocol,
//! [`xr_remote_exec::persistent_worker`]) runs as a request to a process
//! this bot keeps, instead of a process of its own. Actions with the same
//! key and start-up arguments share a worker; the first one's input root
//! is staged as the worker's directory (its tools are every such action's
//! tools, which is what the client's key says) and the worker started
//! there; each action's own inputs are staged in `sandbox/<n>` under it,
//! named in the request.
//!
//! An action with a working directory, or another protocol, runs once.
//! A worker that dies, answers what is not a response or runs past an
//! action's time limit is killed and forgotten; the action is answered as
//! a command that failed that way, and the next one starts a fresh worker.

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    sync::Mutex,
};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use xr_remote_exec::{
    digest,
    persistent_worker::{
        JSON_PROTOCOL, KEY_PROPERTY, PERSISTENT_FLAG, PROTOCOL_PROPERTY, WorkRequest, WorkResponse, split_arguments,
    },
    proto,
};

/// Workers kept at once; the least recently used goes first.
const MAX_WORKERS: usize = 4;
/// The end of a dead worker's standard error returned with its action.
const LAST_WORDS: usize = 4 << 10;

/// What a persistent worker did with one request.
pub struct Answer {
    /// The action's exit code.
    pub exit_code: i32,
    /// Its output, or why the worker gave none.
    pub output: Vec<u8>,
    /// Whether it ran past its time limit.
    pub timed_out: bool,
}

/// The workers this bot keeps, under one directory.
pub struct Workers {
    dir: PathBuf,
    /// (key, worker), the most recently used last.
    kept: Mutex<Vec<(String, Worker)>>,
}

/// A running worker and its directory.
pub struct Worker {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: BufReader<tokio::process::ChildStdout>,
    root: PathBuf,
    stderr: PathBuf,
}

/// The worker `command` asks for: its key (the client's key, the start-up
/// arguments and the environment, which all shape the process), or `None`
/// for an action that runs once, as any does.
pub fn requested(action: &proto::Action, command: &proto::Command) -> Option<String> {
    // The Action's platform, or the Command's where an older client put it.
    #[allow(deprecated)]
    let properties = action.platform.as_ref().or(command.platform.as_ref())?;
    let property = |name: &str| properties.properties.iter().find(|p| p.name == name).map(|p| p.value.as_str());
    let key = property(KEY_PROPERTY)?;
    // A protocol this bot does not speak, or a working directory below the
    // input root (a sandbox is named relative to the worker's directory):
    // the action still runs once, as any does.
    if property(PROTOCOL_PROPERTY) != Some(JSON_PROTOCOL) || !command.working_directory.is_empty() {
        return None;
    }
    let (startup, _) = split_arguments(&command.arguments);
    let mut shape = vec![key.to_owned()];
    shape.extend(startup);
    shape.extend(command.environment_variables.iter().map(|v| format!("{}={}", v.name, v.value)));
    Some(digest::of(shape.join("\0").as_bytes()).hash)
}

impl Workers {
    /// Workers under `dir`, which is emptied: a killed bot's workers are gone.
    pub fn new(dir: PathBuf) -> std::io::Result<Self> {
        if let Err(e) = std::fs::remove_dir_all(&dir)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            return Err(e);
        }
        std::fs::create_dir_all(&dir)?;
        Ok(Self { dir, kept: Mutex::new(Vec::new()) })
    }

    /// An idle worker of `key`, taken out of the pool.
    pub fn take(&self, key: &str) -> Option<Worker> {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let at = kept.iter().position(|(k, _)| k == key)?;
        Some(kept.remove(at).1)
    }

    /// Gives `worker` back, idle; the least recently used goes past [`MAX_WORKERS`].
    pub fn give_back(&self, key: String, worker: Worker) {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.push((key, worker));
        while kept.len() > MAX_WORKERS {
            kept.remove(0);
        }
    }

    /// A fresh directory for a new worker, `name` under this pool's.
    pub fn new_root(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Starts the worker of `command` in `root`, where the first action's
    /// inputs are staged.
    pub fn start(&self, command: &proto::Command, root: &Path) -> anyhow::Result<Worker> {
        let (startup, _) = split_arguments(&command.arguments);
        let program = startup.first().ok_or_else(|| anyhow::anyhow!("a command with no arguments"))?;
        let program = if program.contains('/') { root.join(program) } else { PathBuf::from(program) };
        let stderr = root.with_extension("stderr");
        let mut child = tokio::process::Command::new(&program)
            .args(&startup[1..])
            .arg(PERSISTENT_FLAG)
            .current_dir(root)
            .env_clear()
            .envs(command.environment_variables.iter().map(|v| (&v.name, &v.value)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr)?)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| anyhow::anyhow!("starting {} as a persistent worker: {e}", program.display()))?;
        let stdin = child.stdin.take().ok_or_else(|| anyhow::anyhow!("the worker has no stdin"))?;
        let stdout = BufReader::new(child.stdout.take().ok_or_else(|| anyhow::anyhow!("the worker has no stdout"))?);
        tracing::info!("persistent worker started: {} in {}", program.display(), root.display());
        Ok(Worker { child, stdin, stdout, root: root.to_path_buf(), stderr })
    }
}

impl Worker {
    /// The worker's directory, under which each request's inputs are staged.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Sends the request of `command`, whose inputs are staged at
    /// `sandbox` (relative to the worker's directory), and waits at most
    /// `timeout` for its answer. The worker comes back when it is still fit
    /// for another request.
    pub async fn ask(
        mut self,
        command: &proto::Command,
        sandbox: &str,
        timeout: std::time::Duration,
    ) -> (Answer, Option<Worker>) {
        let (_, arguments) = split_arguments(&command.arguments);
        let request = WorkRequest { arguments, request_id: 0, sandbox_dir: sandbox.to_owned() };
        let asked = tokio::time::timeout(timeout, self.exchange(&request)).await;
        match asked {
            Ok(Ok(response)) => (
                Answer { exit_code: response.exit_code, output: response.output.into_bytes(), timed_out: false },
                Some(self),
            ),
            Ok(Err(why)) => (self.last_words(why).await, None),
            // Dropping the worker kills it.
            Err(_) => (
                Answer {
                    exit_code: 124,
                    output: format!(
                        "the command ran past its time limit of {} s in a persistent worker, which was killed\n",
                        timeout.as_secs()
                    )
                    .into_bytes(),
                    timed_out: true,
                },
                None,
            ),
        }
    }

    async fn exchange(&mut self, request: &WorkRequest) -> anyhow::Result<WorkResponse> {
        let mut line = serde_json::to_vec(request)?;
        line.push(b'\n');
        self.stdin.write_all(&line).await?;
        self.stdin.flush().await?;
        let mut answer = String::new();
        if self.stdout.read_line(&mut answer).await? == 0 {
            anyhow::bail!("it ended before answering");
        }
        serde_json::from_str(&answer)
            .map_err(|e| anyhow::anyhow!("it answered what is not a work response ({e}): {}", answer.trim_end()))
    }

    /// The answer for a worker that failed its request: how it ended, and
    /// the end of its standard error.
    async fn last_words(mut self, why: anyhow::Error) -> Answer {
        let _ = self.child.start_kill();
        let ended = self.child.wait().await.ok();
        use std::os::unix::process::ExitStatusExt;
        let (exit_code, how) = match ended.map(|s| (s.code(), s.signal())) {
            Some((Some(code), _)) => (if code == 0 { 1 } else { code }, format!("exit status {code}")),
            Some((None, Some(signal))) => (128 + signal, format!("signal {signal}")),
            _ => (1, "an unknown end".to_owned()),
        };
        let stderr = std::fs::read(&self.stderr).unwrap_or_default();
        let tail = &stderr[stderr.len().saturating_sub(LAST_WORDS)..];
        let mut output = format!("the persistent worker failed the request: {why} ({how})\n").into_bytes();
        output.extend_from_slice(tail);
        Answer { exit_code, output, timed_out: false }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        let _ = std::fs::remove_dir_all(&self.root);
        let _ = std::fs::remove_file(&self.stderr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn action(properties: &[(&str, &str)]) -> proto::Action {
        let properties = properties
            .iter()
            .map(|(n, v)| proto::platform::Property { name: (*n).into(), value: (*v).into() })
            .collect();
        proto::Action { platform: Some(proto::Platform { properties }), ..Default::default() }
    }

    fn command(arguments: &[&str]) -> proto::Command {
        proto::Command { arguments: arguments.iter().map(|a| (*a).into()).collect(), ..Default::default() }
    }

    #[test]
    fn only_an_action_that_asks_for_a_json_worker_gets_one_keyed_by_what_starts_it() {
        let asks = action(&[("OSFamily", "linux"), (KEY_PROPERTY, "k1"), (PROTOCOL_PROPERTY, JSON_PROTOCOL)]);
        let run = command(&["tool/bin/t", "--plugin-dir", "tool/plugins", "@request"]);
        let key = requested(&asks, &run).expect("a worker");
        // Another request (flag file) shares the worker; other start-up arguments do not.
        assert_eq!(
            requested(&asks, &command(&["tool/bin/t", "--plugin-dir", "tool/plugins", "@other"])),
            Some(key.clone())
        );
        assert_ne!(
            requested(&asks, &command(&["tool/bin/t", "--plugin-dir", "elsewhere", "@request"])),
            Some(key.clone())
        );
        let other_key = action(&[(KEY_PROPERTY, "k2"), (PROTOCOL_PROPERTY, JSON_PROTOCOL)]);
        assert_ne!(requested(&other_key, &run), Some(key));
        // Bazel's binary protocol, no protocol, no key, or a working directory: run once.
        assert_eq!(requested(&action(&[(KEY_PROPERTY, "k1"), (PROTOCOL_PROPERTY, "proto")]), &run), None);
        assert_eq!(requested(&action(&[(KEY_PROPERTY, "k1")]), &run), None);
        assert_eq!(requested(&action(&[(PROTOCOL_PROPERTY, JSON_PROTOCOL)]), &run), None);
        let below = proto::Command { working_directory: "sub".into(), ..run.clone() };
        assert_eq!(requested(&asks, &below), None);
    }
}
