//! The worker's side: a process that loads the plugins once and serves
//! compiles until its input closes (`xr worker`, started by the pool).

use crate::protocol::{CompileFailure, Compiled, FrameError, Job, Reply, read_frame, write_frame};
use std::{
    fs::File,
    io::{self, Read, Write},
};
use xr_host::Registry;
use xr_sourcebuild::{BuildError, OfflineArtifact, OfflineRequest, SourceBuildSystemBox};

/// Compiles `request` with `system` in this process: what a worker does
/// for each job, and what the build does when it runs compiles in process.
pub fn compile_in_process(system: &SourceBuildSystemBox, request: &OfflineRequest) -> Result<Compiled, CompileFailure> {
    // A build keeps the bytes, the files read and the warnings: the
    // compiler may skip the reflection and the stage outputs.
    compiled(system.compile_for_store(request).into_result(), false)
}

/// [`compile_in_process`] in full (`compile_offline`): with each stage's
/// output and the reflection, for a guarded source or bindings.
pub fn compile_whole_in_process(
    system: &SourceBuildSystemBox,
    request: &OfflineRequest,
) -> Result<Compiled, CompileFailure> {
    compiled(system.compile_offline(request).into_result(), true)
}

fn compiled(result: Result<OfflineArtifact, BuildError>, whole: bool) -> Result<Compiled, CompileFailure> {
    match result {
        Ok(artifact) => Ok(Compiled {
            bytes: artifact.bytes.into_vec(),
            files_read: artifact.files_read.into_vec(),
            warnings: artifact.warnings.into_vec(),
            stage_outputs: if whole { artifact.stages.iter().map(|s| s.bytes.to_vec()).collect() } else { Vec::new() },
            reflection: if whole { artifact.reflection.json.into_string() } else { String::new() },
        }),
        Err(e) => Err(CompileFailure { message: e.error.message.into_string(), diagnostics: e.diagnostics.into_vec() }),
    }
}

/// Serves jobs from `input` with the build systems of `registry`, one
/// reply per job on `output`, until `input` closes between frames.
pub fn serve(registry: &Registry, input: &mut impl Read, output: &mut impl Write) -> Result<(), FrameError> {
    while let Some(job) = read_frame::<Job>(input)? {
        let request = OfflineRequest::try_from(job.request)?;
        write_frame(output, &Reply::of(compile_job(registry, &job.compiler, &request, job.whole)))?;
    }
    Ok(())
}

/// One job's compile with the build system named `compiler`, or why the
/// worker has none of that name.
fn compile_job(
    registry: &Registry,
    compiler: &str,
    request: &OfflineRequest,
    whole: bool,
) -> Result<Compiled, CompileFailure> {
    match registry.build_system_named(compiler) {
        Some(system) if whole => compile_whole_in_process(system, request),
        Some(system) => compile_in_process(system, request),
        None => Err(CompileFailure::message(format!(
            "the compiler worker found no build system named '{compiler}' in {}",
            plugin_dirs(registry)
        ))),
    }
}

/// A worker process's whole life (`xr worker`, and a build script's
/// workers): caps its memory, takes stdout for the protocol, loads the
/// plugins of `plugin_dirs` and serves until stdin closes.
pub fn run_worker(plugin_dirs: Vec<std::path::PathBuf>, memory_limit: Option<u64>) -> io::Result<()> {
    run_worker_with(&[], plugin_dirs, memory_limit)
}

/// [`run_worker`] in a program that links plugins: `linked` are registered
/// first, as the process that started this worker registered them.
pub fn run_worker_with(
    linked: &[xr_host::LinkedPlugin],
    plugin_dirs: Vec<std::path::PathBuf>,
    memory_limit: Option<u64>,
) -> io::Result<()> {
    if let Some(bytes) = memory_limit {
        limit_memory(bytes).map_err(|e| io::Error::new(e.kind(), format!("capping the worker's memory: {e}")))?;
    }
    let output = take_protocol_stdout()
        .map_err(|e| io::Error::new(e.kind(), format!("taking stdout for the worker protocol: {e}")))?;
    let mut registry = Registry::linked(linked.iter().copied()).map_err(io::Error::other)?;
    for dir in plugin_dirs {
        registry.load_dir(&dir);
    }
    serve(&registry, &mut io::stdin().lock(), &mut io::BufWriter::new(output)).map_err(io::Error::other)
}

/// One job from the file `job`, its reply written to the file `reply`:
/// the worker as a remote executor runs it (`xr worker --job --reply`),
/// one process per action, in a directory that holds the plugins, the
/// request and the sources it reads. A request whose source root is
/// relative (a remote action names no path of the machine that sent it)
/// reads from that root under the current directory.
pub fn run_one_job(
    dirs: Vec<std::path::PathBuf>,
    memory_limit: Option<u64>,
    job: &std::path::Path,
    reply: &std::path::Path,
) -> io::Result<()> {
    if let Some(bytes) = memory_limit {
        limit_memory(bytes).map_err(|e| io::Error::new(e.kind(), format!("capping the worker's memory: {e}")))?;
    }
    let registry = Registry::load_dirs(dirs);
    serve_job_file(&registry, &std::env::current_dir()?, job, reply)
}

/// One action's job with the plugins of `registry`: the job read from the
/// file `job`, its reply written to the file `reply`, both relative to
/// `base`, the directory that holds the action's inputs; a relative source
/// root reads under `base` too. A worker that serves many actions (a
/// farm's persistent worker) calls it once per action, each in its own
/// directory.
pub fn serve_job_file(
    registry: &Registry,
    base: &std::path::Path,
    job: &std::path::Path,
    reply: &std::path::Path,
) -> io::Result<()> {
    let job_file = base.join(job);
    let mut input = io::BufReader::new(
        File::open(&job_file)
            .map_err(|e| io::Error::new(e.kind(), format!("opening the job {}: {e}", job_file.display())))?,
    );
    let job: Job = read_frame(&mut input).map_err(io::Error::other)?.ok_or_else(|| {
        io::Error::new(io::ErrorKind::UnexpectedEof, format!("the job file {} is empty", job_file.display()))
    })?;
    let mut request = OfflineRequest::try_from(job.request).map_err(io::Error::other)?;
    for stage in request.program.stages.iter_mut() {
        let root = std::path::Path::new(stage.source_root.as_str());
        if root.is_relative() {
            stage.source_root = base.join(root).to_string_lossy().as_ref().into();
        }
    }
    let result = compile_job(registry, &job.compiler, &request, job.whole);
    let mut output = io::BufWriter::new(File::create(base.join(reply))?);
    write_frame(&mut output, &Reply::of(result)).map_err(io::Error::other)?;
    output.flush()
}

fn plugin_dirs(registry: &Registry) -> String {
    let dirs: Vec<String> = registry.searched().iter().map(|d| d.display().to_string()).collect();
    if dirs.is_empty() { "no plugin directory".to_owned() } else { dirs.join(", ") }
}

/// Takes the process's stdout for the protocol and points file descriptor
/// 1 at stderr: a compiler that prints (glslang, a driver, a plugin's
/// debugging line) must not write into the middle of a frame.
pub fn take_protocol_stdout() -> io::Result<File> {
    use std::os::fd::FromRawFd;
    // SAFETY: dup and dup2 on the process's own standard descriptors, which
    // are open for the life of the process; no Rust object owns fd 1 (the
    // std handle writes to the number, not an owned descriptor), so
    // replacing it leaves nothing dangling.
    unsafe {
        let protocol = libc::dup(libc::STDOUT_FILENO);
        if protocol < 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO) < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `protocol` is a fresh descriptor this function owns.
        Ok(File::from_raw_fd(protocol))
    }
}

/// Caps the process's address space at `bytes`: an allocation past it
/// fails (Rust and C++ abort on it), so a compiler that allocates without
/// bound ends its worker instead of the machine's memory.
pub fn limit_memory(bytes: u64) -> io::Result<()> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the struct it is given and nothing else.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // Only the soft limit: raising it past the hard one is not allowed.
    limit.rlim_cur = (bytes as libc::rlim_t).min(limit.rlim_max);
    // SAFETY: setrlimit reads the struct it is given and nothing else.
    if unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
