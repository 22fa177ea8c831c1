//! Persistent workers: an action that asks for one (its platform names a
//! `persistentWorkerKey` and the JSON protocol,
//! [`xr_remote_exec::persistent_worker`]) runs as a request to a process
//! this bot keeps, instead of a process of its own. Actions with the same
//! key and start-up arguments share a worker. The worker's directory holds
//! its tools: the first action's files under its program's top directory
//! (`tool/` for `tool/bin/x`; the whole root for a program at the top),
//! which is what the client's key covers, and never one action's sources
//! for the next to read. Each action's whole input root is staged in
//! `sandbox/<n>` under it, named in the request; what the worker prints on
//! stderr during the request comes back as the action's stderr.
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
    proto, tree,
};

/// Workers kept at once; the least recently used goes first.
const MAX_WORKERS: usize = 4;
/// The end of a dead worker's standard error returned with its action.
const LAST_WORDS: u64 = 4 << 10;
/// The most of a request's standard error returned with its action.
const REQUEST_OUTPUT: u64 = 64 << 10;

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

/// The files of `files` a worker of `command` is started with: those under
/// its program's top directory, all of them for a program at the top.
pub fn tool_files(command: &proto::Command, files: &[tree::TreeFile]) -> Vec<tree::TreeFile> {
    let program = command.arguments.first().map(String::as_str).unwrap_or_default();
    match program.split_once('/') {
        Some((top, _)) => {
            let prefix = format!("{top}/");
            files.iter().filter(|f| f.path.starts_with(&prefix)).cloned().collect()
        }
        None => files.to_vec(),
    }
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

    /// An idle worker of `key`, taken out of the pool; `None` when there is
    /// none, or when it ended while idle (it is forgotten, and the action
    /// starts a fresh one instead of failing on a dead one).
    pub fn take(&self, key: &str) -> Option<Worker> {
        let mut worker = {
            let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
            let at = kept.iter().position(|(k, _)| k == key)?;
            kept.remove(at).1
        };
        match worker.child.try_wait() {
            Ok(None) => Some(worker),
            ended => {
                tracing::warn!("a persistent worker ended while idle ({ended:?}); starting another");
                None
            }
        }
    }

    /// Removes what a worker that could not start left in `root`.
    pub fn discard(&self, root: &Path) {
        let _ = std::fs::remove_dir_all(root);
        let _ = std::fs::remove_file(root.with_extension("stderr"));
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
        let printed_before = std::fs::metadata(&self.stderr).map(|m| m.len()).unwrap_or(0);
        let asked = tokio::time::timeout(timeout, self.exchange(&request)).await;
        match asked {
            Ok(Ok(response)) => {
                let mut output = response.output.into_bytes();
                output.extend(read_from(&self.stderr, printed_before, REQUEST_OUTPUT));
                (Answer { exit_code: response.exit_code, output, timed_out: false }, Some(self))
            }
            Ok(Err(why)) => (self.last_words(why).await, None),
            Err(_) => {
                let _ = self.child.kill().await;
                (
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
                )
            }
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
        let response: WorkResponse = serde_json::from_str(&answer)
            .map_err(|e| anyhow::anyhow!("it answered what is not a work response ({e}): {}", answer.trim_end()))?;
        if response.request_id != request.request_id {
            anyhow::bail!("it answered request {} when asked request {}", response.request_id, request.request_id);
        }
        Ok(response)
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
        let printed = std::fs::metadata(&self.stderr).map(|m| m.len()).unwrap_or(0);
        let mut output = format!("the persistent worker failed the request: {why} ({how})\n").into_bytes();
        output.extend(read_from(&self.stderr, printed.saturating_sub(LAST_WORDS), LAST_WORDS));
        Answer { exit_code, output, timed_out: false }
    }
}

/// At most `limit` bytes of `file` from `offset` on (what a worker printed since then).
fn read_from(file: &Path, offset: u64, limit: u64) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let mut bytes = Vec::new();
    if let Ok(mut file) = std::fs::File::open(file)
        && file.seek(SeekFrom::Start(offset)).is_ok()
    {
        let _ = file.take(limit).read_to_end(&mut bytes);
    }
    bytes
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

    fn shell(script: &str) -> proto::Command {
        command(&["/bin/sh", "-c", script, "@request"])
    }

    #[tokio::test]
    async fn a_worker_answers_requests_and_one_that_died_idle_or_answered_garbage_is_not_used_again() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let workers = Workers::new(dir.path().join("workers")).expect("a pool");
        let timeout = std::time::Duration::from_secs(20);
        // A worker that answers each request, printing a line on stderr for it.
        let answering = shell(r#"while read -r line; do echo said >&2; echo '{"exitCode":5,"output":"out "}'; done"#);
        let root = workers.new_root("a");
        std::fs::create_dir_all(&root).expect("its directory");
        let worker = workers.start(&answering, &root).expect("starts");
        let (answer, kept) = worker.ask(&answering, "sandbox/1", timeout).await;
        assert_eq!((answer.exit_code, answer.timed_out), (5, false));
        assert_eq!(
            String::from_utf8_lossy(&answer.output),
            "out said\n",
            "its output, then its stderr for the request"
        );
        workers.give_back("a".into(), kept.expect("kept for the next request"));
        let worker = workers.take("a").expect("alive and idle");
        let (answer, _) = worker.ask(&answering, "sandbox/2", timeout).await;
        assert_eq!(String::from_utf8_lossy(&answer.output), "out said\n", "only this request's stderr");

        // A worker that ends while idle is not handed out.
        let ending = shell("exit 3");
        let root = workers.new_root("b");
        std::fs::create_dir_all(&root).expect("its directory");
        let worker = workers.start(&ending, &root).expect("starts");
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        workers.give_back("b".into(), worker);
        assert!(workers.take("b").is_none(), "a dead worker is forgotten");
        assert!(!root.exists(), "and its directory removed");

        // A line that is not a response fails the request, and the worker goes.
        let garbage = shell(r#"read -r line; echo '{"exit_code_typo":0}'; sleep 30"#);
        let root = workers.new_root("c");
        std::fs::create_dir_all(&root).expect("its directory");
        let worker = workers.start(&garbage, &root).expect("starts");
        let (answer, kept) = worker.ask(&garbage, "sandbox/1", timeout).await;
        assert!(kept.is_none());
        assert_ne!(answer.exit_code, 0);
        let output = String::from_utf8_lossy(&answer.output);
        assert!(output.contains("not a work response") && output.contains("exit_code_typo"), "{output}");
    }

    #[test]
    fn a_worker_starts_with_the_files_under_its_programs_top_directory() {
        let file =
            |path: &str| tree::TreeFile { path: path.into(), digest: digest::of(path.as_bytes()), executable: false };
        let files = [file("tool/bin/x"), file("tool/plugins/p.so"), file("src/a.frag"), file("job"), file("toolbox/y")];
        let names = |c: &proto::Command| -> Vec<String> { tool_files(c, &files).into_iter().map(|f| f.path).collect() };
        assert_eq!(names(&command(&["tool/bin/x", "@request"])), ["tool/bin/x", "tool/plugins/p.so"]);
        assert_eq!(names(&command(&["x", "@request"])).len(), files.len(), "a program at the top: every file");
    }

    #[tokio::test]
    async fn a_worker_that_ends_before_answering_fails_its_request_with_how_it_ended_and_its_last_words() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let workers = Workers::new(dir.path().join("workers")).expect("a pool");
        let timeout = std::time::Duration::from_secs(20);
        for (name, script, code, how) in [
            ("exits", "read -r line; echo 'no more' >&2; exit 3", 3, "exit status 3"),
            // Even a clean exit without an answer fails the action.
            ("quits", "read -r line; echo 'done early' >&2; exit 0", 1, "exit status 0"),
            ("killed", "read -r line; echo 'about to die' >&2; kill -9 $$", 137, "signal 9"),
        ] {
            let command = shell(script);
            let root = workers.new_root(name);
            std::fs::create_dir_all(&root).expect("its directory");
            let worker = workers.start(&command, &root).expect("starts");
            let (answer, kept) = worker.ask(&command, "sandbox/1", timeout).await;
            assert!(kept.is_none(), "{name}: a worker that ended is not kept");
            let output = String::from_utf8_lossy(&answer.output);
            assert_eq!(answer.exit_code, code, "{name}: {output}");
            assert!(output.contains("ended before answering") && output.contains(how), "{name}: {output}");
            let last = script.split('\'').nth(1).expect("the line it prints");
            assert!(output.ends_with(&format!("{last}\n")), "{name}: its stderr's end: {output}");
            assert!(!root.exists(), "{name}: its directory removed");
        }
    }

    #[tokio::test]
    async fn the_least_recently_used_worker_goes_past_the_most_kept_and_a_failed_start_leaves_nothing() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let workers = Workers::new(dir.path().join("workers")).expect("a pool");
        let waiting = shell("sleep 60");
        let mut roots = Vec::new();
        for n in 0..=MAX_WORKERS {
            let root = workers.new_root(&n.to_string());
            std::fs::create_dir_all(&root).expect("its directory");
            workers.give_back(n.to_string(), workers.start(&waiting, &root).expect("starts"));
            roots.push(root);
        }
        assert!(workers.take("0").is_none() && !roots[0].exists(), "the oldest went, and its directory");
        for n in 1..=MAX_WORKERS {
            assert!(workers.take(&n.to_string()).is_some(), "worker {n} kept");
        }

        let root = workers.new_root("absent");
        std::fs::create_dir_all(&root).expect("its directory");
        let error = workers.start(&command(&["tool/bin/absent", "@request"]), &root).err().expect("no such program");
        assert!(error.to_string().contains("tool/bin/absent"), "{error}");
        workers.discard(&root);
        assert!(!root.exists() && !root.with_extension("stderr").exists(), "nothing left of it");
    }
}
