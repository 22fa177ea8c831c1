//! The pool of compiler workers a build runs its compiles in.
//!
//! Every compiler XR runs is native code (glslang through shaderc,
//! SPIRV-Tools, a vendor's library), and the panic guard cannot catch a
//! segmentation fault, an abort, a stack overflow or an endless loop. So a
//! build compiles in worker processes: a crash ends one worker, and the
//! build reports the job it had and goes on.
//!
//! - A build thread leases a worker for a compile and gives it back after:
//!   an idle worker that ran the same compiler before is preferred (its
//!   compiler is started, its caches are warm). Workers start on the first
//!   compile that finds none idle, so there are never more than the
//!   build's threads, and a build with nothing to compile starts none.
//! - A worker that dies (signal, abort, exit, a broken pipe) fails nothing
//!   at first: its job is tried once more in a fresh worker, so that a
//!   worker killed from outside costs one retry. A second death fails the
//!   job with the cause ([`WorkerFailure::Crashed`]).
//! - A job that runs past its time limit has its worker killed and fails,
//!   without a retry: a compile that loops loops again, and a retry would
//!   double the wait.
//! - A worker's address space can be capped ([`PoolConfig::memory_limit`]):
//!   an allocation past it aborts that worker, which is then a crash whose
//!   cause says the limit was reached.

use crate::protocol::{CompileFailure, Compiled, FrameError, Job, Reply, read_frame, write_frame};
use std::{
    collections::VecDeque,
    ffi::OsString,
    io::{BufRead, BufReader, BufWriter, Read, Write},
    os::fd::AsRawFd,
    os::unix::process::ExitStatusExt,
    path::PathBuf,
    process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio},
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    thread::JoinHandle,
    time::{Duration, Instant},
};
use xr_sourcebuild::OfflineRequest;

/// How to start a worker: a program that runs [`crate::serve::serve`] on
/// its stdin and stdout (`xr worker --plugin-dir …`). The pool appends
/// `--memory-limit BYTES` when a limit is set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerCommand {
    /// The executable.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
}

/// A pool's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolConfig {
    /// How to start a worker.
    pub command: WorkerCommand,
    /// Each worker's address-space cap in bytes; `None`: no cap.
    pub memory_limit: Option<u64>,
}

/// Why a job got no reply from a worker.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WorkerFailure {
    /// No worker could be started.
    #[error("cannot start a compiler worker ({program}): {message}")]
    Start {
        /// The worker's executable.
        program: String,
        /// Why.
        message: String,
    },
    /// The worker died on this job, and so did a fresh one.
    #[error("compiler crashed: {how} while compiling for {target}{}", said_text(said))]
    Crashed {
        /// How it ended: `SIGSEGV`, `exited with status 3`, with a note
        /// when it ran out of the memory it was allowed.
        how: String,
        /// Its last lines on stderr, if it left any.
        said: String,
        /// The job's target.
        target: String,
    },
    /// The job ran past its time limit; its worker was killed.
    #[error("compiler ran past its time limit of {} s while compiling for {target} and was stopped", limit.as_secs_f64())]
    TimedOut {
        /// The limit.
        limit: Duration,
        /// The job's target.
        target: String,
    },
}

fn said_text(said: &str) -> String {
    if said.is_empty() { String::new() } else { format!(" (it said: {said})") }
}

/// Worker processes, started on demand and reused.
pub struct Pool {
    config: PoolConfig,
    idle: Mutex<Vec<Worker>>,
    started: AtomicUsize,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").field("config", &self.config).field("started", &self.started()).finish()
    }
}

impl Pool {
    /// A pool that starts no worker until a job needs one.
    pub fn new(config: PoolConfig) -> Self {
        Self { config, idle: Mutex::new(Vec::new()), started: AtomicUsize::new(0) }
    }

    /// How its workers are started and capped.
    pub fn config(&self) -> &PoolConfig {
        &self.config
    }

    /// A lease on a worker, taken at its first job: an idle one (one that
    /// ran the job's compiler before, whose compiler is started and whose
    /// caches are warm, when there is one), else a new one.
    pub fn lease(&self) -> Lease<'_> {
        Lease { pool: self, worker: None }
    }

    fn idle_worker_for(&self, compiler: &str) -> Option<Worker> {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        let index = idle
            .iter()
            .position(|w| w.served.iter().any(|c| c == compiler))
            .or_else(|| idle.iter().position(|w| w.served.is_empty()))
            .or_else(|| idle.len().checked_sub(1))?;
        Some(idle.swap_remove(index))
    }

    /// How many workers this pool has started (replacements included).
    pub fn started(&self) -> usize {
        self.started.load(Ordering::Relaxed)
    }
}

/// One build thread's worker, given back to the pool when dropped.
pub struct Lease<'p> {
    pool: &'p Pool,
    worker: Option<Worker>,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(worker) = self.worker.take() {
            self.pool.idle.lock().unwrap_or_else(|p| p.into_inner()).push(worker);
        }
    }
}

impl Lease<'_> {
    /// Compiles `request` with the build system named `compiler` in this
    /// lease's worker, starting one if it has none: the compile's result,
    /// or why the worker gave none (see the module doc for
    /// retries and limits).
    pub fn compile(
        &mut self,
        compiler: &str,
        request: &OfflineRequest,
        time_limit: Duration,
    ) -> Result<Result<Compiled, CompileFailure>, WorkerFailure> {
        self.run(Job::new(compiler, request), compiler, request, time_limit)
    }

    /// [`Lease::compile`] in full: with each stage's output and the
    /// reflection ([`Job::whole`]), for a guarded source or bindings.
    pub fn compile_whole(
        &mut self,
        compiler: &str,
        request: &OfflineRequest,
        time_limit: Duration,
    ) -> Result<Result<Compiled, CompileFailure>, WorkerFailure> {
        self.run(Job::whole(compiler, request), compiler, request, time_limit)
    }

    fn run(
        &mut self,
        job: Job,
        compiler: &str,
        request: &OfflineRequest,
        time_limit: Duration,
    ) -> Result<Result<Compiled, CompileFailure>, WorkerFailure> {
        let target = || request.target.to_string();
        let mut deaths = 0;
        loop {
            if self.worker.is_none() {
                self.worker = self.pool.idle_worker_for(compiler);
            }
            let worker = match &mut self.worker {
                Some(worker) => worker,
                None => {
                    let worker = Worker::start(&self.pool.config).map_err(|e| WorkerFailure::Start {
                        program: self.pool.config.command.program.display().to_string(),
                        message: e.to_string(),
                    })?;
                    self.pool.started.fetch_add(1, Ordering::Relaxed);
                    self.worker.insert(worker)
                }
            };
            let ended = match worker.run(&job, time_limit) {
                Ok(reply) => {
                    if !worker.served.iter().any(|c| c == compiler) {
                        worker.served.push(compiler.to_owned());
                    }
                    worker.forward_stderr();
                    return Ok(reply.into_result());
                }
                Err(ended) => ended,
            };
            let Some(mut worker) = self.worker.take() else { continue };
            let timed_out = matches!(ended, Ended::TimedOut);
            let (status, last_words) = worker.shut_down(timed_out);
            if timed_out {
                return Err(WorkerFailure::TimedOut { limit: time_limit, target: target() });
            }
            let (how, said) = describe_end(status, &last_words, self.pool.config.memory_limit);
            deaths += 1;
            if deaths >= 2 {
                return Err(WorkerFailure::Crashed { how, said, target: target() });
            }
            tracing::info!("a compiler worker ended ({how}); trying its job once more in a fresh worker");
        }
    }
}

/// Why a worker gave no reply.
enum Ended {
    /// The pipe closed or broke: the worker is gone or going.
    Died,
    /// The time limit passed.
    TimedOut,
}

/// Drops the frames of a backtrace the Rust runtime prints (with
/// `RUST_BACKTRACE` set, a panic or an allocation failure is followed by
/// dozens of them), so that the lines kept for a report are what the
/// worker said ("memory allocation of … failed"), not where it was.
#[derive(Default)]
struct BacktraceFilter {
    inside: bool,
}

impl BacktraceFilter {
    fn keeps(&mut self, line: &str) -> bool {
        if line == "stack backtrace:" {
            self.inside = true;
            return false;
        }
        if self.inside {
            if line.starts_with(' ') || line.starts_with("note: Some details are omitted") {
                return false;
            }
            self.inside = false;
        }
        true
    }
}

/// Lines of a worker's stderr kept for the report of its end.
const STDERR_LINES: usize = 32;

struct Worker {
    child: Child,
    input: Option<BufWriter<ChildStdin>>,
    replies: BufReader<DeadlineReader>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    stderr_reader: Option<JoinHandle<()>>,
    ended: bool,
    /// The compilers it has run.
    served: Vec<String>,
}

impl Worker {
    fn start(config: &PoolConfig) -> std::io::Result<Self> {
        let mut command = Command::new(&config.command.program);
        command.args(&config.command.args);
        if let Some(limit) = config.memory_limit {
            command.arg("--memory-limit").arg(limit.to_string());
        }
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::other("the worker's pipes were not set up"));
        };
        let replies = BufReader::new(DeadlineReader { pipe: stdout, deadline: Instant::now() });
        let lines = Arc::new(Mutex::new(VecDeque::new()));
        let kept = Arc::clone(&lines);
        let stderr_reader = std::thread::Builder::new().name("xr-worker-stderr".into()).spawn(move || {
            let mut stderr = BufReader::new(stderr);
            let mut line = Vec::new();
            let mut backtrace = BacktraceFilter::default();
            while matches!(stderr.read_until(b'\n', &mut line), Ok(n) if n > 0) {
                let text = String::from_utf8_lossy(&line).trim_end().to_owned();
                line.clear();
                if !backtrace.keeps(&text) {
                    continue;
                }
                let mut kept = kept.lock().unwrap_or_else(|p| p.into_inner());
                if kept.len() == STDERR_LINES {
                    kept.pop_front();
                }
                kept.push_back(text);
            }
        })?;
        Ok(Self {
            child,
            input: Some(BufWriter::new(stdin)),
            replies,
            stderr: lines,
            stderr_reader: Some(stderr_reader),
            ended: false,
            served: Vec::new(),
        })
    }

    fn run(&mut self, job: &Job, time_limit: Duration) -> Result<Reply, Ended> {
        let Some(input) = &mut self.input else { return Err(Ended::Died) };
        if without_sigpipe(|| write_frame(input, job)).is_err() {
            return Err(Ended::Died);
        }
        self.replies.get_mut().deadline = Instant::now() + time_limit;
        match read_frame::<Reply>(&mut self.replies) {
            Ok(Some(reply)) => Ok(reply),
            Err(FrameError::Io(e)) if e.kind() == std::io::ErrorKind::TimedOut => Err(Ended::TimedOut),
            Ok(None) | Err(_) => Err(Ended::Died),
        }
    }

    /// Passes on what the worker printed during a job that succeeded (a
    /// plugin's warnings), as the build would have printed it in process.
    fn forward_stderr(&self) {
        let lines: Vec<String> = self.stderr.lock().unwrap_or_else(|p| p.into_inner()).drain(..).collect();
        if !lines.is_empty() {
            let mut stderr = std::io::stderr().lock();
            for line in lines {
                let _ = writeln!(stderr, "{line}");
            }
        }
    }

    /// Ends the worker (killing it when `kill`, else closing its input
    /// and giving it a moment to leave): how it ended, and its last lines
    /// on stderr.
    fn shut_down(&mut self, kill: bool) -> (Option<ExitStatus>, Vec<String>) {
        self.ended = true;
        self.input = None;
        if kill {
            let _ = self.child.kill();
        }
        let deadline = Instant::now() + Duration::from_secs(2);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
                Ok(None) => {
                    let _ = self.child.kill();
                    break self.child.wait().ok();
                }
                Err(_) => break None,
            }
        };
        if let Some(reader) = self.stderr_reader.take() {
            let _ = reader.join();
        }
        let lines = self.stderr.lock().unwrap_or_else(|p| p.into_inner()).drain(..).collect();
        (status, lines)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if !self.ended {
            self.shut_down(false);
        }
    }
}

/// A worker's stdout whose reads fail with `TimedOut` once the deadline
/// of the job in hand passes: the build thread waits for the reply itself,
/// with no thread between it and the pipe.
struct DeadlineReader {
    pipe: ChildStdout,
    deadline: Instant,
}

impl Read for DeadlineReader {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(std::io::ErrorKind::TimedOut.into());
            }
            let mut ready = libc::pollfd { fd: self.pipe.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            let millis = libc::c_int::try_from(left.as_millis().max(1)).unwrap_or(libc::c_int::MAX);
            // SAFETY: one pollfd, valid for the call; the descriptor is the
            // open pipe this reader owns.
            match unsafe { libc::poll(&mut ready, 1, millis) } {
                // Readable, closed or broken: read says which.
                1.. => return self.pipe.read(buffer),
                0 => continue,
                _ => {
                    let error = std::io::Error::last_os_error();
                    if error.kind() != std::io::ErrorKind::Interrupted {
                        return Err(error);
                    }
                }
            }
        }
    }
}

/// Runs `write` with SIGPIPE blocked on this thread, so that writing to a
/// worker that just died is an error (`EPIPE`) and not the end of the
/// build: `xr` keeps SIGPIPE's default action so that `xr … | head` ends
/// quietly. A SIGPIPE raised meanwhile is taken off the thread before the
/// mask is restored.
fn without_sigpipe<T, E>(write: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
    // SAFETY: sigset_t is plain data, initialised by sigemptyset before use;
    // pthread_sigmask changes this thread's mask only and is restored below;
    // sigtimedwait with a zero timeout only takes a pending SIGPIPE.
    unsafe {
        let mut pipe: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut pipe);
        libc::sigaddset(&mut pipe, libc::SIGPIPE);
        let mut previous: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_BLOCK, &pipe, &mut previous);
        let result = write();
        if result.is_err() {
            let zero = libc::timespec { tv_sec: 0, tv_nsec: 0 };
            libc::sigtimedwait(&pipe, std::ptr::null_mut(), &zero);
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &previous, std::ptr::null_mut());
        result
    }
}

/// How a worker ended (`SIGSEGV`, `SIGABRT, out of memory (…)`, `exited
/// with status 3`) and its last words on stderr, for a report.
fn describe_end(status: Option<ExitStatus>, last_words: &[String], memory_limit: Option<u64>) -> (String, String) {
    let mut how = match status {
        Some(status) => match (status.signal(), status.code()) {
            (Some(signal), _) => signal_name(signal),
            (None, Some(code)) => format!("exited with status {code}"),
            (None, None) => status.to_string(),
        },
        None => "ended for an unknown reason".to_owned(),
    };
    let out_of_memory = ["memory allocation of", "bad_alloc", "out of memory", "Cannot allocate memory"]
        .iter()
        .any(|sign| last_words.iter().any(|line| line.contains(sign)));
    let said: Vec<String> = last_words.iter().filter_map(|l| last_word(l)).collect();
    let mut said = said[said.len().saturating_sub(2)..].join("; ");
    if let (true, Some(limit)) = (out_of_memory, memory_limit) {
        how.push_str(&format!(", out of memory (the worker memory limit is {} MiB)", limit >> 20));
    }
    if said.len() > 300 {
        let cut = (0..=300).rev().find(|&i| said.is_char_boundary(i)).unwrap_or(0);
        said.truncate(cut);
        said.push('…');
    }
    (how, said)
}

/// A line of a dying worker's stderr worth reporting, without what differs
/// from run to run (a thread's id): not a backtrace's frame or notes.
fn last_word(line: &str) -> Option<String> {
    let line = line.trim();
    let frame = line.split_once(':').is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let noise = ["at ", "stack backtrace:", "note: Some details are omitted", "note: run with `RUST_BACKTRACE"];
    if line.is_empty() || frame || noise.iter().any(|n| line.starts_with(n)) {
        return None;
    }
    // `thread 'main' (17832) has overflowed its stack`: the id would keep
    // the same crash of two variants from folding into one report.
    let mut text = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(open) = rest.find(" (") {
        let (before, after) = rest.split_at(open);
        text.push_str(before);
        match after[2..].split_once(')') {
            Some((id, tail)) if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) => rest = tail,
            _ => {
                text.push_str(" (");
                rest = &after[2..];
            }
        }
    }
    text.push_str(rest);
    Some(text)
}

/// The name of a signal a compiler dies of: `SIGSEGV`, or `signal 40`.
pub fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGSYS => "SIGSYS",
        other => return format!("signal {other}"),
    };
    name.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backtrace_is_not_kept_among_a_worker_s_last_words() {
        let mut filter = BacktraceFilter::default();
        let printed = [
            "memory allocation of 67108864 bytes failed",
            "stack backtrace:",
            "   0: std::alloc::rust_oom",
            "             at /rustc/library/std/src/alloc.rs:424:5",
            "note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.",
            "after",
        ];
        let kept: Vec<&str> = printed.into_iter().filter(|l| filter.keeps(l)).collect();
        assert_eq!(kept, ["memory allocation of 67108864 bytes failed", "after"]);
    }
    use xr_sourcebuild::{ProgramDesc, ShaderStage, SourceDesc};

    /// A pool whose "worker" is a shell script.
    fn shell_pool(script: &str) -> Pool {
        let args = vec!["-c".into(), script.into()];
        Pool::new(PoolConfig { command: WorkerCommand { program: "/bin/sh".into(), args }, memory_limit: None })
    }

    fn request() -> OfflineRequest {
        let stage = SourceDesc::new("glsl", ShaderStage::Fragment, "a.frag", "void main() {}");
        OfflineRequest::new(ProgramDesc::new("p", [stage]), "vk-spirv")
    }

    #[test]
    fn a_worker_that_dies_is_replaced_once_then_its_job_fails_with_the_cause() {
        let pool = shell_pool("echo 'dying on purpose' >&2; exit 3");
        let failure = pool.lease().compile("c", &request(), Duration::from_secs(10)).unwrap_err();
        assert_eq!(
            failure,
            WorkerFailure::Crashed {
                how: "exited with status 3".into(),
                said: "dying on purpose".into(),
                target: "vk-spirv".into()
            }
        );
        assert_eq!(pool.started(), 2, "one retry in a fresh worker");
    }

    #[test]
    fn a_job_past_its_time_limit_is_stopped_without_a_retry() {
        let pool = shell_pool("exec sleep 30");
        let started = Instant::now();
        let failure = pool.lease().compile("c", &request(), Duration::from_millis(200)).unwrap_err();
        assert_eq!(failure, WorkerFailure::TimedOut { limit: Duration::from_millis(200), target: "vk-spirv".into() });
        assert_eq!(pool.started(), 1);
        assert!(started.elapsed() < Duration::from_secs(10), "the worker was killed, not waited for");
    }

    #[test]
    fn a_worker_that_cannot_start_fails_the_job_naming_the_program() {
        let pool = Pool::new(PoolConfig {
            command: WorkerCommand { program: "/nonexistent/xr".into(), args: vec![] },
            memory_limit: None,
        });
        let failure = pool.lease().compile("c", &request(), Duration::from_secs(1)).unwrap_err();
        assert!(matches!(&failure, WorkerFailure::Start { program, .. } if program == "/nonexistent/xr"), "{failure}");
        assert_eq!(pool.started(), 0);
    }

    #[test]
    fn an_end_names_the_signal_the_limit_and_the_last_words() {
        let segv = ExitStatus::from_raw(libc::SIGSEGV);
        assert_eq!(describe_end(Some(segv), &[], None), ("SIGSEGV".to_owned(), String::new()));
        let abort = ExitStatus::from_raw(libc::SIGABRT);
        let words = ["".to_owned(), "memory allocation of 67108864 bytes failed".to_owned()];
        let (how, said) = describe_end(Some(abort), &words, Some(512 << 20));
        assert_eq!(how, "SIGABRT, out of memory (the worker memory limit is 512 MiB)");
        assert_eq!(said, "memory allocation of 67108864 bytes failed");
        let failure = WorkerFailure::Crashed { how, said, target: "vk-spirv".into() };
        assert_eq!(
            failure.to_string(),
            "compiler crashed: SIGABRT, out of memory (the worker memory limit is 512 MiB) while compiling for \
             vk-spirv (it said: memory allocation of 67108864 bytes failed)"
        );
        let exit = ExitStatus::from_raw(3 << 8);
        assert_eq!(describe_end(Some(exit), &[], Some(1 << 30)).0, "exited with status 3");
        let backtrace: Vec<String> = [
            "memory allocation of 67108864 bytes failed",
            "stack backtrace:",
            "  34: <unknown>",
            "             at ./src/lib.rs:3:5",
            "note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.",
        ]
        .map(str::to_owned)
        .into();
        assert_eq!(describe_end(Some(abort), &backtrace, None).1, "memory allocation of 67108864 bytes failed");
        let overflow = ["thread 'main' (17832) has overflowed its stack (see (x))".to_owned()];
        assert_eq!(describe_end(Some(abort), &overflow, None).1, "thread 'main' has overflowed its stack (see (x))");
        let long = vec!["é".repeat(400)];
        assert!(describe_end(Some(segv), &long, None).1.ends_with('…'));
    }
}
