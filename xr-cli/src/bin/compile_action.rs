//! `xr-compile-action`: the program a farm runs for a compile that `xr
//! build --remote-exec` sends it. It is `xr worker --job --reply` without
//! the rest of `xr`: a few megabytes where `xr` is tens, and a file that
//! changes only when the compile path does, so that a new `xr` whose
//! compiles are unchanged still finds its actions in the farm's cache.
//!
//! Once per action (any farm): `xr-compile-action --plugin-dir tool/plugins
//! @request`, where the flag file `request` holds `--job FILE --reply FILE`.
//! As a persistent worker (a farm that keeps workers, asked through the
//! action's platform properties): started with `--persistent_worker`, it
//! loads its plugins once and serves each action's request, read in
//! Bazel's JSON worker protocol, in the action's own directory.

use clap::Parser;
use std::{
    io::{self, BufRead, Write},
    path::{Path, PathBuf},
};
use xr_remote_exec::persistent_worker::{WorkRequest, WorkResponse, expand_flag_files, split_arguments};
use xr_worker::serve;

/// Runs compiles that a build sent to a farm.
#[derive(Parser, Debug)]
#[command(name = "xr-compile-action", version)]
struct Args {
    /// A directory of compiler plugins (repeatable).
    #[arg(long = "plugin-dir", value_name = "DIR")]
    plugin_dirs: Vec<PathBuf>,
    /// Cap the process's memory (address space) at this many bytes.
    #[arg(long, value_name = "BYTES")]
    memory_limit: Option<u64>,
    /// Serve requests on stdin in Bazel's JSON worker protocol until it closes.
    #[arg(long = "persistent_worker")]
    persistent_worker: bool,
    #[command(flatten)]
    request: RequestArgs,
}

/// One action's request: in the command line, or in a flag file.
#[derive(clap::Args, Debug)]
struct RequestArgs {
    /// The job (a frame of the worker protocol).
    #[arg(long, value_name = "FILE")]
    job: Option<PathBuf>,
    /// Where its reply goes.
    #[arg(long, value_name = "FILE")]
    reply: Option<PathBuf>,
}

/// A request's own arguments, parsed as the program's.
#[derive(Parser, Debug)]
#[command(name = "xr-compile-action request", no_binary_name = true)]
struct Request {
    #[command(flatten)]
    request: RequestArgs,
}

impl RequestArgs {
    fn files(self) -> Result<(PathBuf, PathBuf), String> {
        match (self.job, self.reply) {
            (Some(job), Some(reply)) => Ok((job, reply)),
            _ => Err("a request needs --job FILE and --reply FILE".into()),
        }
    }
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xr-compile-action: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let here = std::env::current_dir().map_err(|e| format!("reading the current directory: {e}"))?;
    // Flag files are read relative to where the action runs.
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let arguments = expand_flag_files(&arguments, &here).map_err(|e| e.to_string())?;
    let args = Args::try_parse_from(std::iter::once("xr-compile-action".to_owned()).chain(arguments))
        .map_err(|e| e.to_string())?;
    if let Some(bytes) = args.memory_limit {
        serve::limit_memory(bytes).map_err(|e| format!("capping the memory: {e}"))?;
    }
    if args.persistent_worker {
        // Compilers that print must not write into the middle of a response.
        let output = serve::take_protocol_stdout().map_err(|e| format!("taking stdout for the protocol: {e}"))?;
        let registry = xr_host::Registry::load_dirs(args.plugin_dirs);
        return serve_requests(&registry, &here, &mut io::stdin().lock(), &mut io::BufWriter::new(output))
            .map_err(|e| format!("serving requests: {e}"));
    }
    // A request that is incomplete is refused before any plugin loads.
    let (job, reply) = args.request.files()?;
    let registry = xr_host::Registry::load_dirs(args.plugin_dirs);
    serve::serve_job_file(&registry, &here, &job, &reply).map_err(|e| e.to_string())
}

/// Answers each request on `input` until it closes. A request that fails
/// (a missing job file, an unwritable reply) is answered with exit code 1
/// and the reason; the worker goes on with the next.
fn serve_requests(
    registry: &xr_host::Registry,
    here: &Path,
    input: &mut impl BufRead,
    output: &mut impl Write,
) -> io::Result<()> {
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return Ok(());
        }
        if line.trim().is_empty() {
            continue;
        }
        let request: WorkRequest = serde_json::from_str(&line).map_err(io::Error::other)?;
        let base = here.join(&request.sandbox_dir);
        let answer = answer(registry, &base, &request.arguments);
        let response = match answer {
            Ok(()) => WorkResponse { request_id: request.request_id, ..WorkResponse::default() },
            Err(reason) => WorkResponse {
                exit_code: 1,
                output: format!("xr-compile-action: {reason}\n"),
                request_id: request.request_id,
                ..WorkResponse::default()
            },
        };
        serde_json::to_writer(&mut *output, &response).map_err(io::Error::other)?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
}

/// One request's compile in `base`, its own directory.
fn answer(registry: &xr_host::Registry, base: &Path, arguments: &[String]) -> Result<(), String> {
    let (startup, _) = split_arguments(arguments);
    if !startup.is_empty() {
        return Err(format!("a request takes flag files only, not {}", startup.join(" ")));
    }
    let arguments = expand_flag_files(arguments, base).map_err(|e| e.to_string())?;
    let (job, reply) = Request::try_parse_from(arguments).map_err(|e| e.to_string())?.request.files()?;
    serve::serve_job_file(registry, base, &job, &reply).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn responses(output: &[u8]) -> Vec<WorkResponse> {
        let text = std::str::from_utf8(output).expect("utf-8");
        text.lines().map(|l| serde_json::from_str(l).expect("a response per line")).collect()
    }

    #[test]
    fn a_failed_request_is_answered_with_its_reason_and_the_worker_goes_on() {
        let here = std::env::temp_dir().join(format!("xr-compile-action-test-{}", std::process::id()));
        std::fs::create_dir_all(here.join("sandbox/1")).expect("a sandbox");
        std::fs::write(here.join("sandbox/1/request"), "--job\njob\n--reply\nreply\n").expect("a flag file");
        let registry = xr_host::Registry::load_dirs(Vec::new());
        let input = concat!(
            r#"{"arguments":["@request"],"sandboxDir":"sandbox/1","requestId":4}"#,
            "\n\n",
            r#"{"arguments":["--job","job"],"sandboxDir":"sandbox/1"}"#,
            "\n",
        );
        let mut output = Vec::new();
        serve_requests(&registry, &here, &mut input.as_bytes(), &mut output).expect("serves until the input ends");
        let answered = responses(&output);
        assert_eq!(answered.len(), 2, "{answered:?}");
        assert_eq!((answered[0].exit_code, answered[0].request_id), (1, 4));
        assert!(answered[0].output.contains("sandbox/1/job"), "the missing job named: {}", answered[0].output);
        assert_eq!(answered[1].exit_code, 1);
        assert!(answered[1].output.contains("flag files only"), "{}", answered[1].output);
        // A line that is not a request ends the worker, with the reason.
        let mut output = Vec::new();
        let error = serve_requests(&registry, &here, &mut "not json\n".as_bytes(), &mut output).expect_err("refused");
        assert!(output.is_empty() && error.to_string().contains("expected"), "{error}");
        let _ = std::fs::remove_dir_all(&here);
    }
}
