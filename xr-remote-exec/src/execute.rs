//! The executor: one [`Action`] in, its outputs out, as REAPI clients do
//! it — the action cache first, then only the blobs the farm lacks, then
//! Execute — with every output checked against its digest.
//!
//! Failure is a slower build, never a wrong one. Each way an action can go
//! wrong lands in one [`ExecError`], and only [`ExecError::Failed`] (the
//! command ran and failed) is the build's failure: everything else means
//! "run it here instead". Transient trouble (a broken stream, a server
//! restarting, a lost worker) is retried, as REAPI's idempotent Execute
//! allows; after [`ExecutorConfig::give_up_after`] actions in a row could
//! not reach the farm, the executor stops trying, so a farm that went
//! away costs a build one warning, not a timeout per compile.

use crate::{
    cas::{Cas, CasError, is_transient},
    connection::{AuthChannel, Connection},
    digest, proto, tree,
};
use bazel_remote_apis::google::longrunning::operation;
use prost::Message;
use proto::{
    action_cache_client::ActionCacheClient, capabilities_client::CapabilitiesClient, execution_client::ExecutionClient,
};
use std::{
    collections::{HashMap, HashSet},
    path::PathBuf,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering},
    },
    time::Duration,
};

/// Where an input's bytes are, when the farm lacks them.
#[derive(Clone, Debug)]
pub enum Content {
    /// In memory (a request, a source).
    Bytes(Arc<[u8]>),
    /// In a file, read only if the farm lacks it (an executable, a library).
    File(PathBuf),
}

/// One file of an action's input root.
#[derive(Clone, Debug)]
pub struct Input {
    /// Its place in the input root: relative, `/`-separated.
    pub path: String,
    /// Its digest.
    pub digest: proto::Digest,
    /// Whether it is run.
    pub executable: bool,
    /// Its bytes.
    pub content: Content,
}

impl Input {
    /// An input whose bytes are in memory.
    pub fn bytes(path: impl Into<String>, bytes: impl Into<Arc<[u8]>>, executable: bool) -> Self {
        let bytes: Arc<[u8]> = bytes.into();
        Self { path: path.into(), digest: digest::of(&bytes), executable, content: Content::Bytes(bytes) }
    }

    /// An input read from `file`, whose digest the caller knows.
    pub fn file(path: impl Into<String>, file: PathBuf, digest: proto::Digest, executable: bool) -> Self {
        Self { path: path.into(), digest, executable, content: Content::File(file) }
    }
}

/// A command to run on the farm: what it runs, what it reads, what it writes.
#[derive(Clone, Debug, Default)]
pub struct Action {
    /// The command line; the first is a path in the input root.
    pub arguments: Vec<String>,
    /// Its environment (nothing else of the worker's is passed).
    pub environment: Vec<(String, String)>,
    /// The input root's files.
    pub inputs: Vec<Input>,
    /// The files it writes, relative to the input root.
    pub outputs: Vec<String>,
    /// Platform properties a worker must have (`OSFamily`, `ISA`, `container-image`).
    pub platform: Vec<(String, String)>,
    /// How long it may run on the worker.
    pub timeout: Option<Duration>,
}

/// What an action gave back.
#[derive(Clone, Debug)]
pub struct Executed {
    /// Each output by its path, its bytes checked against its digest.
    pub outputs: HashMap<String, Vec<u8>>,
    /// The command's standard error.
    pub stderr: String,
    /// Whether it came from the action cache (nothing ran).
    pub cached: bool,
}

/// Why an action did not give outputs.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The command ran and failed: a non-zero exit, a signal, its time
    /// limit. The build's failure, reported as a local one would be.
    #[error("{message}")]
    Failed {
        /// One line: what happened.
        message: String,
        /// What the command wrote on its standard error.
        stderr: String,
    },
    /// The farm could not be reached, or refused, or kept breaking: run it here.
    #[error("the farm at {farm} did not run it: {why}")]
    Unavailable {
        /// The endpoint, as shown.
        farm: String,
        /// What went wrong.
        why: String,
    },
    /// The farm answered with something this client does not trust (an
    /// output whose bytes do not match its digest, an output missing):
    /// refused, run here.
    #[error("refused the farm's result: {0}")]
    Refused(String),
    /// The action cannot be sent (an input path that leaves its root).
    #[error("cannot send the action: {0}")]
    Unsendable(String),
}

impl ExecError {
    /// Whether the caller should run the work itself instead.
    pub fn runs_locally(&self) -> bool {
        !matches!(self, ExecError::Failed { .. })
    }
}

/// How the executor works.
#[derive(Clone, Debug)]
pub struct ExecutorConfig {
    /// Actions in flight at once.
    pub jobs: usize,
    /// How often a transiently failed action is tried again.
    pub retries: u32,
    /// After this many actions in a row that could not reach the farm, stop trying.
    pub give_up_after: u32,
    /// Wait this long for an action beyond its own timeout before calling its worker lost.
    pub grace: Duration,
    /// Do not ask the action cache (every action runs).
    pub skip_cache: bool,
}

impl Default for ExecutorConfig {
    fn default() -> Self {
        Self { jobs: 64, retries: 2, give_up_after: 3, grace: Duration::from_secs(30), skip_cache: false }
    }
}

/// How the executor's actions went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Run on the farm.
    pub executed: u64,
    /// Taken from the action cache.
    pub cached: u64,
    /// Given back to run locally.
    pub fallback: u64,
    /// Run on the farm and failed there.
    pub failed: u64,
    /// Bytes of blobs sent to the CAS.
    pub bytes_sent: u64,
    /// Bytes of outputs brought back.
    pub bytes_received: u64,
    /// Where the time of the executed actions went, summed over them.
    pub phases: Phases,
}

/// Microseconds, summed over the executed actions: the client's wait for
/// each (upload, queue, the worker, the answer), and what the workers say
/// of their part in `ExecutedActionMetadata` (staging the inputs, the
/// command, sending the outputs). The client's wait less the worker's
/// total is the farm's own cost: scheduling and transport.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Phases {
    /// Executed actions whose worker said its phases.
    pub timed: u64,
    /// The client's wait, from sending the inputs to the answer.
    pub client: u64,
    /// The worker's whole part, lease to result.
    pub worker: u64,
    /// Fetching and staging the input root.
    pub input_fetch: u64,
    /// The command itself (for XR: starting `xr worker`, loading the plugin, compiling).
    pub execution: u64,
    /// Sending the outputs.
    pub output_upload: u64,
}

#[derive(Default)]
struct Counters {
    executed: AtomicU64,
    cached: AtomicU64,
    fallback: AtomicU64,
    failed: AtomicU64,
    bytes_sent: AtomicU64,
    bytes_received: AtomicU64,
    timed: AtomicU64,
    client_micros: AtomicU64,
    worker_micros: AtomicU64,
    input_fetch_micros: AtomicU64,
    execution_micros: AtomicU64,
    output_upload_micros: AtomicU64,
}

/// A client of one farm, shared by the build's threads: each
/// [`RemoteExecutor::execute`] blocks its caller while the executor's own
/// runtime keeps up to [`ExecutorConfig::jobs`] actions in flight.
pub struct RemoteExecutor {
    runtime: tokio::runtime::Runtime,
    cas: Cas,
    execution: ExecutionClient<AuthChannel>,
    action_cache: ActionCacheClient<AuthChannel>,
    instance: String,
    farm: String,
    config: ExecutorConfig,
    slots: Arc<tokio::sync::Semaphore>,
    /// Blobs the CAS is known to hold: not asked about again.
    present: Mutex<HashSet<String>>,
    /// Held while an action sends its files (see `upload`).
    file_uploads: tokio::sync::Mutex<()>,
    unreachable_in_a_row: AtomicU32,
    given_up: AtomicBool,
    counters: Counters,
}

impl RemoteExecutor {
    /// Connects to the farm and asks what it offers: an error when it
    /// cannot be reached or offers no execution, so a build warns once
    /// and compiles locally.
    pub fn connect(connection: &Connection, config: ExecutorConfig) -> Result<Self, ExecError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("xr-remote-exec")
            .enable_all()
            .build()
            .map_err(|e| ExecError::Unavailable { farm: connection.shown.clone(), why: e.to_string() })?;
        let limit = crate::connection::MAX_MESSAGE;
        let executor = {
            let _entered = runtime.enter();
            Self {
                cas: Cas::new(connection),
                execution: ExecutionClient::new(connection.channel())
                    .max_decoding_message_size(limit)
                    .max_encoding_message_size(limit),
                action_cache: ActionCacheClient::new(connection.channel())
                    .max_decoding_message_size(limit)
                    .max_encoding_message_size(limit),
                instance: connection.instance.clone(),
                farm: connection.shown.clone(),
                slots: Arc::new(tokio::sync::Semaphore::new(config.jobs.max(1))),
                config,
                present: Mutex::new(HashSet::new()),
                file_uploads: tokio::sync::Mutex::new(()),
                unreachable_in_a_row: AtomicU32::new(0),
                given_up: AtomicBool::new(false),
                counters: Counters::default(),
                runtime,
            }
        };
        let mut capabilities = {
            let _entered = executor.runtime.enter();
            CapabilitiesClient::new(connection.channel())
        };
        let request = proto::GetCapabilitiesRequest { instance_name: connection.instance.clone() };
        let answer = executor.runtime.block_on(async {
            tokio::time::timeout(Duration::from_secs(10), capabilities.get_capabilities(request)).await
        });
        let capabilities = match answer {
            Ok(Ok(reply)) => reply.into_inner(),
            Ok(Err(status)) => return Err(executor.unavailable(status_text(&status))),
            Err(_) => return Err(executor.unavailable("no answer in 10 s".into())),
        };
        let executes = capabilities.execution_capabilities.as_ref().is_some_and(|e| e.exec_enabled);
        if !executes {
            return Err(executor.unavailable("the server offers no remote execution".into()));
        }
        Ok(executor)
    }

    /// The farm, as shown in messages.
    pub fn farm(&self) -> &str {
        &self.farm
    }

    /// Whether the executor still sends actions (it stops after the farm
    /// failed [`ExecutorConfig::give_up_after`] actions in a row).
    pub fn usable(&self) -> bool {
        !self.given_up.load(Ordering::Relaxed)
    }

    /// How the actions so far went.
    pub fn stats(&self) -> Stats {
        let c = &self.counters;
        Stats {
            executed: c.executed.load(Ordering::Relaxed),
            cached: c.cached.load(Ordering::Relaxed),
            fallback: c.fallback.load(Ordering::Relaxed),
            phases: Phases {
                timed: c.timed.load(Ordering::Relaxed),
                client: c.client_micros.load(Ordering::Relaxed),
                worker: c.worker_micros.load(Ordering::Relaxed),
                input_fetch: c.input_fetch_micros.load(Ordering::Relaxed),
                execution: c.execution_micros.load(Ordering::Relaxed),
                output_upload: c.output_upload_micros.load(Ordering::Relaxed),
            },
            failed: c.failed.load(Ordering::Relaxed),
            bytes_sent: c.bytes_sent.load(Ordering::Relaxed),
            bytes_received: c.bytes_received.load(Ordering::Relaxed),
        }
    }

    /// Notes that the caller ran an action itself after
    /// [`ExecError::runs_locally`] said so.
    pub fn note_fallback(&self) {
        self.counters.fallback.fetch_add(1, Ordering::Relaxed);
    }

    fn unavailable(&self, why: String) -> ExecError {
        ExecError::Unavailable { farm: self.farm.clone(), why }
    }

    /// Runs `action` on the farm (or takes it from the action cache),
    /// blocking the calling thread.
    pub fn execute(&self, action: &Action) -> Result<Executed, ExecError> {
        if !self.usable() {
            return Err(self.unavailable("given up on after repeated failures".into()));
        }
        let result = self.runtime.block_on(async {
            let _slot = self.slots.acquire().await.map_err(|_| self.unavailable("shutting down".into()))?;
            self.execute_with_retries(action).await
        });
        match &result {
            Ok(executed) if executed.cached => {
                self.counters.cached.fetch_add(1, Ordering::Relaxed);
            }
            Ok(_) => {
                self.counters.executed.fetch_add(1, Ordering::Relaxed);
            }
            Err(ExecError::Failed { .. }) => {
                self.counters.failed.fetch_add(1, Ordering::Relaxed);
            }
            Err(_) => {}
        }
        match &result {
            Err(ExecError::Unavailable { why, .. }) => {
                let in_a_row = self.unreachable_in_a_row.fetch_add(1, Ordering::Relaxed) + 1;
                if in_a_row >= self.config.give_up_after && !self.given_up.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        "the farm at {} failed {in_a_row} actions in a row ({why}); compiling the rest here",
                        self.farm
                    );
                }
            }
            _ => self.unreachable_in_a_row.store(0, Ordering::Relaxed),
        }
        result
    }

    async fn execute_with_retries(&self, action: &Action) -> Result<Executed, ExecError> {
        let prepared = prepare(action)?;
        let mut attempt = 0;
        loop {
            match self.execute_once(action, &prepared, attempt > 0).await {
                Err(Attempt::Transient(why)) if attempt < self.config.retries && self.usable() => {
                    tracing::debug!("retrying an action on {}: {why}", self.farm);
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(200 * u64::from(attempt * attempt))).await;
                }
                Err(Attempt::Transient(why)) => return Err(self.unavailable(why)),
                Err(Attempt::Final(e)) => return Err(e),
                Ok(executed) => return Ok(executed),
            }
        }
    }

    async fn execute_once(&self, action: &Action, prepared: &Prepared, retry: bool) -> Result<Executed, Attempt> {
        if !self.config.skip_cache
            && let Some(result) = self.cached_result(&prepared.action).await?
        {
            match self.outputs_of(action, &result, true).await {
                Ok(executed) => return Ok(executed),
                // An entry whose outputs the CAS lost: run it again.
                Err(Attempt::Final(ExecError::Refused(why))) => {
                    tracing::debug!("ignoring an action cache entry: {why}")
                }
                Err(e) => return Err(e),
            }
        }
        // After a failure the server may have lost what it was told it had.
        if retry {
            self.present.lock().unwrap_or_else(|p| p.into_inner()).clear();
        }
        let sent = std::time::Instant::now();
        self.upload(action, prepared).await?;
        let request = proto::ExecuteRequest {
            instance_name: self.instance.clone(),
            action_digest: Some(prepared.action.clone()),
            skip_cache_lookup: self.config.skip_cache,
            ..Default::default()
        };
        let wait = action.timeout.unwrap_or(Duration::from_secs(600)) + self.config.grace;
        let response = match tokio::time::timeout(wait, self.run(request)).await {
            Ok(response) => response?,
            Err(_) => return Err(Attempt::Transient(format!("no result in {} s: its worker is lost", wait.as_secs()))),
        };
        if let Some(status) = response.status.as_ref().filter(|s| s.code != 0) {
            let code = tonic::Code::from(status.code);
            if code == tonic::Code::DeadlineExceeded {
                return Err(Attempt::Final(ExecError::Failed {
                    message: format!(
                        "ran past its time limit of {} s on the farm",
                        action.timeout.map_or(0, |t| t.as_secs())
                    ),
                    stderr: String::new(),
                }));
            }
            // FAILED_PRECONDITION: blobs the server lost between upload and run.
            return Err(Attempt::Transient(format!("{code:?}: {}", status.message)));
        }
        let result = response.result.ok_or_else(|| Attempt::Transient("an execute response with no result".into()))?;
        let executed = self.outputs_of(action, &result, response.cached_result).await;
        if !response.cached_result {
            self.count_phases(sent.elapsed(), result.execution_metadata.as_ref());
        }
        executed
    }

    /// Adds an executed action's times to the counters, where its worker said them.
    fn count_phases(&self, waited: Duration, metadata: Option<&proto::ExecutedActionMetadata>) {
        use crate::micros_between as between;
        let Some(m) = metadata else { return };
        let Some(worker) = between(m.worker_start_timestamp.as_ref(), m.worker_completed_timestamp.as_ref()) else {
            return;
        };
        let c = &self.counters;
        c.timed.fetch_add(1, Ordering::Relaxed);
        c.client_micros.fetch_add(waited.as_micros() as u64, Ordering::Relaxed);
        c.worker_micros.fetch_add(worker, Ordering::Relaxed);
        for (start, end, counter) in [
            (&m.input_fetch_start_timestamp, &m.input_fetch_completed_timestamp, &c.input_fetch_micros),
            (&m.execution_start_timestamp, &m.execution_completed_timestamp, &c.execution_micros),
            (&m.output_upload_start_timestamp, &m.output_upload_completed_timestamp, &c.output_upload_micros),
        ] {
            counter.fetch_add(between(start.as_ref(), end.as_ref()).unwrap_or(0), Ordering::Relaxed);
        }
    }

    async fn cached_result(&self, action: &proto::Digest) -> Result<Option<proto::ActionResult>, Attempt> {
        let request = proto::GetActionResultRequest {
            instance_name: self.instance.clone(),
            action_digest: Some(action.clone()),
            inline_stderr: true,
            ..Default::default()
        };
        match self.action_cache.clone().get_action_result(request).await {
            Ok(reply) => Ok(Some(reply.into_inner()).filter(|r| r.exit_code == 0)),
            Err(status) if status.code() == tonic::Code::NotFound => Ok(None),
            Err(status) => Err(Attempt::Transient(format!("GetActionResult: {}", status_text(&status)))),
        }
    }

    async fn upload(&self, action: &Action, prepared: &Prepared) -> Result<(), Attempt> {
        // The files (an executable, a library: large, shared by every
        // action) one action at a time, so that many actions starting
        // together send each once; then the action's own small blobs.
        let files: Vec<&Input> = action.inputs.iter().filter(|i| matches!(i.content, Content::File(_))).collect();
        if files.iter().any(|i| !self.is_present(&i.digest)) {
            let _one_at_a_time = self.file_uploads.lock().await;
            self.send_missing(&[], &files).await?;
        }
        let small: Vec<&Input> = action.inputs.iter().filter(|i| matches!(i.content, Content::Bytes(_))).collect();
        self.send_missing(&prepared.blobs, &small).await
    }

    fn is_present(&self, d: &proto::Digest) -> bool {
        self.present.lock().unwrap_or_else(|p| p.into_inner()).contains(&d.hash)
    }

    /// Sends those of `blobs` and `inputs` the CAS lacks.
    async fn send_missing(&self, blobs: &[(proto::Digest, Vec<u8>)], inputs: &[&Input]) -> Result<(), Attempt> {
        let mut wanted: Vec<proto::Digest> = Vec::new();
        {
            let present = self.present.lock().unwrap_or_else(|p| p.into_inner());
            let mut seen = HashSet::new();
            for d in blobs.iter().map(|(d, _)| d).chain(inputs.iter().map(|i| &i.digest)) {
                if !present.contains(&d.hash) && seen.insert(d.hash.clone()) {
                    wanted.push(d.clone());
                }
            }
        }
        if wanted.is_empty() {
            return Ok(());
        }
        let missing = self.cas.missing(wanted.clone()).await.map_err(cas_attempt)?;
        let missing: HashSet<String> = missing.into_iter().map(|d| d.hash).collect();
        let mut sending = Vec::new();
        let mut taken = HashSet::new();
        for (d, bytes) in blobs {
            if missing.contains(&d.hash) && taken.insert(d.hash.clone()) {
                sending.push((d.clone(), bytes.clone()));
            }
        }
        for input in inputs {
            if !missing.contains(&input.digest.hash) || !taken.insert(input.digest.hash.clone()) {
                continue;
            }
            let bytes = match &input.content {
                Content::Bytes(bytes) => bytes.to_vec(),
                Content::File(file) => std::fs::read(file)
                    .map_err(|e| Attempt::Final(ExecError::Unsendable(format!("reading {}: {e}", file.display()))))?,
            };
            if !digest::matches(&input.digest, &bytes) {
                return Err(Attempt::Final(ExecError::Unsendable(format!("{} changed while it was sent", input.path))));
            }
            sending.push((input.digest.clone(), bytes));
        }
        let sent: u64 = sending.iter().map(|(_, b)| b.len() as u64).sum();
        self.cas.upload(sending).await.map_err(cas_attempt)?;
        self.counters.bytes_sent.fetch_add(sent, Ordering::Relaxed);
        self.present.lock().unwrap_or_else(|p| p.into_inner()).extend(wanted.into_iter().map(|d| d.hash));
        Ok(())
    }

    async fn run(&self, request: proto::ExecuteRequest) -> Result<proto::ExecuteResponse, Attempt> {
        let mut stream = self
            .execution
            .clone()
            .execute(request)
            .await
            .map_err(|s| Attempt::Transient(format!("Execute: {}", status_text(&s))))?
            .into_inner();
        loop {
            let operation = match stream.message().await {
                Ok(Some(operation)) => operation,
                Ok(None) => return Err(Attempt::Transient("the Execute stream ended before the action did".into())),
                Err(status) => return Err(Attempt::Transient(format!("Execute: {}", status_text(&status)))),
            };
            if !operation.done {
                continue;
            }
            return match operation.result {
                Some(operation::Result::Response(any)) => proto::ExecuteResponse::decode(any.value.as_slice())
                    .map_err(|e| Attempt::Transient(format!("an undecodable execute response: {e}"))),
                Some(operation::Result::Error(status)) => {
                    Err(Attempt::Transient(format!("{:?}: {}", tonic::Code::from(status.code), status.message)))
                }
                None => Err(Attempt::Transient("a finished operation with no result".into())),
            };
        }
    }

    /// The outputs `result` names, fetched and checked, or the failure it reports.
    async fn outputs_of(
        &self,
        action: &Action,
        result: &proto::ActionResult,
        cached: bool,
    ) -> Result<Executed, Attempt> {
        let stderr = match (&result.stderr_digest, result.stderr_raw.is_empty()) {
            (Some(d), true) if d.size_bytes > 0 && d.size_bytes < (1 << 20) => self
                .cas
                .download(std::slice::from_ref(d))
                .await
                .ok()
                .and_then(|mut b| b.remove(&d.hash))
                .unwrap_or_default(),
            _ => result.stderr_raw.clone(),
        };
        let stderr = String::from_utf8_lossy(&stderr).into_owned();
        if result.exit_code != 0 {
            return Err(Attempt::Final(ExecError::Failed {
                message: format!("the worker exited with status {} on the farm", result.exit_code),
                stderr,
            }));
        }
        let mut wanted = Vec::new();
        let mut outputs = HashMap::new();
        for path in &action.outputs {
            let file = result
                .output_files
                .iter()
                .find(|f| &f.path == path)
                .ok_or_else(|| Attempt::Final(ExecError::Refused(format!("the result lacks the output {path}"))))?;
            let d = file
                .digest
                .clone()
                .ok_or_else(|| Attempt::Final(ExecError::Refused(format!("{path} has no digest"))))?;
            if !file.contents.is_empty() || d.size_bytes == 0 {
                if !digest::matches(&d, &file.contents) {
                    return Err(Attempt::Final(ExecError::Refused(format!("{path}'s bytes do not match its digest"))));
                }
                outputs.insert(path.clone(), file.contents.clone());
            } else {
                wanted.push((path.clone(), d));
            }
        }
        let digests: Vec<proto::Digest> = wanted.iter().map(|(_, d)| d.clone()).collect();
        let mut blobs = self.cas.download(&digests).await.map_err(|e| match e {
            CasError::Mismatch(d) => {
                Attempt::Final(ExecError::Refused(format!("output {d}'s bytes do not match its digest")))
            }
            CasError::Missing(d) => Attempt::Final(ExecError::Refused(format!("the farm's CAS lost output {d}"))),
            e => cas_attempt(e),
        })?;
        for (path, d) in wanted {
            let bytes = blobs.remove(&d.hash).unwrap_or_default();
            outputs.insert(path, bytes);
        }
        let received: u64 = outputs.values().map(|b| b.len() as u64).sum();
        self.counters.bytes_received.fetch_add(received, Ordering::Relaxed);
        Ok(Executed { outputs, stderr, cached })
    }
}

/// An attempt's end: worth another try, or final.
enum Attempt {
    Transient(String),
    Final(ExecError),
}

impl From<ExecError> for Attempt {
    fn from(e: ExecError) -> Self {
        Attempt::Final(e)
    }
}

/// A failed call is worth another try (a refusing server too: the try
/// after it may land elsewhere, and the retries are few); a blob missing or
/// not matching its digest is an answer, and not trusted.
fn cas_attempt(e: CasError) -> Attempt {
    match e {
        CasError::Rpc { .. } => Attempt::Transient(e.to_string()),
        e => Attempt::Final(ExecError::Refused(e.to_string())),
    }
}

fn status_text(status: &tonic::Status) -> String {
    let code = status.code();
    let transient = if is_transient(code) { "" } else { " (refused)" };
    format!("{code:?}: {}{transient}", status.message())
}

/// An action's messages, encoded: the blobs it needs beside its inputs.
struct Prepared {
    action: proto::Digest,
    blobs: Vec<(proto::Digest, Vec<u8>)>,
}

/// The Command, input root and Action messages of `action`.
fn prepare(action: &Action) -> Result<Prepared, ExecError> {
    let mut environment: Vec<proto::command::EnvironmentVariable> = action
        .environment
        .iter()
        .map(|(name, value)| proto::command::EnvironmentVariable { name: name.clone(), value: value.clone() })
        .collect();
    // The API asks for sorted names and properties: the same action, the same digest.
    environment.sort_by(|a, b| a.name.cmp(&b.name));
    let mut properties: Vec<proto::platform::Property> = action
        .platform
        .iter()
        .map(|(name, value)| proto::platform::Property { name: name.clone(), value: value.clone() })
        .collect();
    properties.sort_by(|a, b| (&a.name, &a.value).cmp(&(&b.name, &b.value)));
    let platform = Some(proto::Platform { properties });
    let mut outputs = action.outputs.clone();
    outputs.sort();
    #[allow(deprecated)]
    let command = proto::Command {
        arguments: action.arguments.clone(),
        environment_variables: environment,
        // Both forms: servers before v2.1 read output_files.
        output_files: outputs.clone(),
        output_paths: outputs,
        platform: platform.clone(),
        ..Default::default()
    };
    let files: Vec<tree::TreeFile> = action
        .inputs
        .iter()
        .map(|i| tree::TreeFile { path: i.path.clone(), digest: i.digest.clone(), executable: i.executable })
        .collect();
    let root = tree::build(&files).map_err(|e| ExecError::Unsendable(e.to_string()))?;
    let (command_digest, command_bytes) = digest::of_message(&command);
    let message = proto::Action {
        command_digest: Some(command_digest.clone()),
        input_root_digest: Some(root.root.clone()),
        timeout: action.timeout.map(|t| bazel_remote_apis::google::protobuf::Duration {
            seconds: t.as_secs() as i64,
            nanos: t.subsec_nanos() as i32,
        }),
        platform,
        ..Default::default()
    };
    let (action_digest, action_bytes) = digest::of_message(&message);
    let mut blobs = root.directories;
    blobs.push((command_digest, command_bytes));
    blobs.push((action_digest.clone(), action_bytes));
    Ok(Prepared { action: action_digest, blobs })
}

/// The digest of the Action `action` becomes: what the action cache keys.
pub fn action_digest(action: &Action) -> Result<proto::Digest, ExecError> {
    Ok(prepare(action)?.action)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn action() -> Action {
        Action {
            arguments: vec!["bin/tool".into(), "in.txt".into()],
            environment: vec![("B".into(), "2".into()), ("A".into(), "1".into())],
            inputs: vec![
                Input::bytes("bin/tool", &b"#!/bin/sh\n"[..], true),
                Input::bytes("in.txt", &b"hi"[..], false),
            ],
            outputs: vec!["out.txt".into()],
            platform: vec![("OSFamily".into(), "linux".into())],
            timeout: Some(Duration::from_secs(60)),
        }
    }

    #[test]
    fn an_action_digest_follows_its_inputs_and_not_their_order() {
        let a = action_digest(&action()).unwrap();
        let mut reordered = action();
        reordered.inputs.reverse();
        reordered.environment.reverse();
        assert_eq!(action_digest(&reordered).unwrap(), a);
        let mut changed = action();
        changed.inputs[1] = Input::bytes("in.txt", &b"ho"[..], false);
        assert_ne!(action_digest(&changed).unwrap(), a, "a changed source is a new action");
        let mut escaping = action();
        escaping.inputs.push(Input::bytes("../etc/passwd", &b""[..], false));
        assert!(matches!(action_digest(&escaping), Err(ExecError::Unsendable(_))));
    }

    /// Each part of an action changed alone gives another digest: the
    /// arguments, the environment, an input's path, bytes and executable
    /// bit, the outputs, the platform and the time limit.
    #[test]
    fn each_part_of_an_action_changed_alone_gives_another_digest() {
        let base = action_digest(&action()).unwrap();
        let changed = |change: fn(&mut Action)| {
            let mut action = action();
            change(&mut action);
            action_digest(&action).unwrap()
        };
        let others = [
            ("an argument", changed(|a| a.arguments.push("--memory-limit".into()))),
            ("the environment", changed(|a| a.environment[0].1 = "3".into())),
            ("an input's path", changed(|a| a.inputs[1] = Input::bytes("in2.txt", &b"hi"[..], false))),
            ("an input's bytes", changed(|a| a.inputs[1] = Input::bytes("in.txt", &b"ho"[..], false))),
            ("an input's executable bit", changed(|a| a.inputs[1] = Input::bytes("in.txt", &b"hi"[..], true))),
            ("an input more", changed(|a| a.inputs.push(Input::bytes("inc/x.glsl", &b""[..], false)))),
            ("the outputs", changed(|a| a.outputs = vec!["reply".into()])),
            ("the platform", changed(|a| a.platform.push(("container-image".into(), "docker://x".into())))),
            ("the time limit", changed(|a| a.timeout = Some(Duration::from_secs(61)))),
        ];
        let mut seen = vec![("the base", base)];
        for (part, digest) in others {
            for (other, seen_digest) in &seen {
                assert_ne!(&digest, seen_digest, "{part} changed alone gives the digest of {other}");
            }
            seen.push((part, digest));
        }
    }

    #[test]
    fn an_unreachable_farm_is_an_error_to_run_locally_not_a_hang() {
        // A port nothing listens on: connection refused at once.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let endpoint = crate::Endpoint::parse(&format!("grpc://127.0.0.1:{port}")).unwrap();
        let connection = Connection::open(&endpoint, "", None, None).unwrap();
        let error = RemoteExecutor::connect(&connection, ExecutorConfig::default()).err().expect("nothing listens");
        assert!(error.runs_locally(), "{error}");
        assert!(matches!(error, ExecError::Unavailable { .. }), "{error}");
    }
}
