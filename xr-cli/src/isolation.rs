//! Where `xr` runs native compilers and drivers: in worker processes for
//! `xr build`, in a child process for `xr compile` and `xr reflect`, so
//! that a segmentation fault or an abort inside one is reported as such
//! instead of ending the command with no word. `--in-process` (or
//! `XR_IN_PROCESS=1`) runs everything here, for a debugger.

use crate::messages::{MessageArgs, Reported};
use anyhow::Context;
use std::{
    os::unix::process::ExitStatusExt,
    path::{Path, PathBuf},
    time::Duration,
};
use xr_build::config::{Asked, WorkerStart};
use xr_build::report::Reports;
use xr_worker::{serve, signal_name};

/// Set in the child that `xr compile` and `xr reflect` run themselves in,
/// and honoured by every command: compile in this process.
pub const IN_PROCESS_VARIABLE: &str = xr_build::config::IN_PROCESS;

/// How `xr build` runs its compiles.
#[derive(clap::Args, Clone, Debug)]
pub struct WorkerArgs {
    /// Compile in this process instead of worker processes (to debug a
    /// plugin under a debugger; a crashing compiler then ends the build).
    #[arg(long)]
    in_process: bool,
    /// Stop a compile that runs longer than this and fail it (a program's
    /// `compile_timeout` in the manifest wins) [default: 300].
    #[arg(long, value_name = "SECONDS")]
    compile_timeout: Option<f64>,
    /// Cap each compiler worker's memory (address space) at this many MiB;
    /// 0: no cap [default: 4096].
    #[arg(long, value_name = "MIB")]
    worker_memory: Option<u64>,
}

/// Whether `XR_IN_PROCESS=1` asks for in-process compiles.
pub fn in_process_by_environment() -> bool {
    xr_build::config::BuildEnv::read().in_process
}

impl WorkerArgs {
    /// What the flags ask of the build's compiles (the environment has its
    /// say in [`Asked::resolve`]).
    pub fn asked(&self) -> anyhow::Result<Asked> {
        let time_limit = match self.compile_timeout {
            Some(seconds) => {
                Some(Duration::try_from_secs_f64(seconds).ok().filter(|d| !d.is_zero()).ok_or_else(|| {
                    crate::messages::usage("--compile-timeout takes a number of seconds greater than 0")
                })?)
            }
            None => None,
        };
        let worker = if self.in_process {
            None
        } else {
            let program = std::env::current_exe().context(
                "finding xr's own executable to start compiler workers (--in-process compiles without them)",
            )?;
            Some(WorkerStart { program, args: vec!["worker".into()] })
        };
        Ok(Asked {
            in_process: self.in_process,
            worker,
            worker_memory: self.worker_memory.map(|mib| mib.saturating_mul(1 << 20)),
            time_limit,
            ..Asked::default()
        })
    }
}

/// `xr worker --job FILE --reply FILE`: one job, as a remote executor runs it.
pub fn run_one_job(
    plugin_dirs: Vec<PathBuf>,
    memory_limit: Option<u64>,
    job: &Path,
    reply: &Path,
) -> anyhow::Result<()> {
    Ok(serve::run_one_job(plugin_dirs, memory_limit, job, reply)?)
}

/// `xr worker`: serves compiles on stdin and stdout until stdin closes.
pub fn serve_as_worker(plugin_dirs: Vec<PathBuf>, memory_limit: Option<u64>) -> anyhow::Result<()> {
    Ok(serve::run_worker(plugin_dirs, memory_limit)?)
}

/// Runs this very command again in a child process with in-process
/// compiles, its output passed through, and ends as it ended. A child
/// killed by a signal (a compiler or a driver crashed) is reported as one
/// error naming the signal and `files`, with exit status 1; but one ended
/// by SIGPIPE met a reader that stopped reading (`xr reflect … | head -1`),
/// which is no crash: xr ends quietly, with status 0.
pub fn run_in_child(command: &str, files: &[PathBuf], messages: &MessageArgs) -> anyhow::Result<()> {
    let program = std::env::current_exe().context("finding xr's own executable to run the compile in a child")?;
    let status = std::process::Command::new(&program)
        .args(std::env::args_os().skip(1))
        .env(IN_PROCESS_VARIABLE, "1")
        .status()
        .with_context(|| format!("starting {}", program.display()))?;
    match (status.code(), status.signal()) {
        (Some(0), _) => Ok(()),
        (Some(code), _) => Err(Reported { status: u8::try_from(code).unwrap_or(1) }.into()),
        (None, Some(libc::SIGPIPE)) => Ok(()),
        (None, signal) => {
            let signal = signal.map_or_else(|| status.to_string(), signal_name);
            let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
            let message = format!(
                "{command} crashed: {signal} in a compiler or a driver while building {} \
                 (--in-process runs it in xr itself, for a debugger)",
                files.join(", ")
            );
            messages.print_reports(&Reports::of_message(&message));
            if messages.json() {
                println!("{}", serde_json::json!({"type": "summary", "success": false, "errors": 1, "warnings": 0}));
            }
            Err(Reported { status: 1 }.into())
        }
    }
}
