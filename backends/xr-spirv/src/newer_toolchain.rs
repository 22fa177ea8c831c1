//! glslang and SPIRV-Tools of 2026, from the module the Slang distribution
//! ships beside its library (`libslang-glslang-2026.12.so`, found by
//! [`crate::slang_dir`]).
//!
//! XR links Debian 12's glslang and SPIRV-Tools (2023.1) for speed and a
//! build in seconds (docs/SPIRV.md). Both are older than what Slang 2026.12
//! writes and what collections' authors compile with: Debian's glslang
//! does not know `GL_EXT_ray_tracing_position_fetch`, and its validator
//! refuses capabilities and pointer forms that SPIR-V has had since. The
//! module's C interface (Slang's own way to these tools) gives two calls:
//!
//! - `glslang_compile_1_2`: GLSL to SPIR-V under Vulkan rules, one stage,
//!   no include callback and no automatic locations or bindings;
//! - `glslang_validateSPIRV`: the validator, in the universal SPIR-V 1.6
//!   environment with scalar block layouts (the only one the call offers).
//!   It prints its messages on the process's standard error and output,
//!   so [`NewerToolchain::validate`] takes them from there.
//!
//! When the module is missing, everything works as before with Debian's
//! tools alone, and what they do not know is refused by name.

use crate::compile::SpirvVersion;
use std::{
    ffi::{CString, c_char, c_int, c_uint, c_void},
    io::{Read, Seek, Write},
    path::PathBuf,
    sync::{Mutex, OnceLock},
};
use xr_sourcebuild::ShaderStage;

/// The Slang release whose glslang and SPIRV-Tools the module holds.
pub const RELEASE: &str = "2026.12";
/// The module's file name, as the `slangpy` 0.43.1 wheel ships it.
pub const MODULE_FILE: &str = "libslang-glslang-2026.12.so";

/// The module's tools, opened once per process.
pub struct NewerToolchain {
    compile: CompileFn,
    validate: ValidateFn,
    /// The file it was opened from.
    pub path: PathBuf,
    // Kept open for the process's life: the functions point into it.
    _library: libloading::Library,
}

/// The module of this process, or why there is none (the answer is kept:
/// the environment does not change under a build).
pub fn newer_toolchain() -> Result<&'static NewerToolchain, &'static str> {
    static TOOLCHAIN: OnceLock<Result<NewerToolchain, String>> = OnceLock::new();
    TOOLCHAIN
        .get_or_init(|| open(&crate::slang_dir::search(crate::slang_dir::Wanted::Companion(MODULE_FILE))))
        .as_ref()
        .map_err(String::as_str)
}

/// What the compiler identity says of the tools this process has: every
/// key of a SPIR-V artifact names it, so objects made where the module is
/// present never meet those made where it is not.
pub fn identity() -> String {
    match newer_toolchain() {
        Ok(_) => format!("glslang and SPIRV-Tools {RELEASE} (Slang's)"),
        Err(_) => "no glslang or SPIRV-Tools newer than Debian's".to_owned(),
    }
}

/// Opens the first of `candidates` that is a file.
pub fn open(candidates: &[PathBuf]) -> Result<NewerToolchain, String> {
    let Some(path) = candidates.iter().find(|p| p.is_file()) else {
        let searched = candidates.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ");
        return Err(format!("{MODULE_FILE} was not found (looked in: {searched}); scripts/setup.sh unpacks it"));
    };
    // SAFETY: opening a shared library runs its initialisers; this is the
    // module of the Slang distribution the setup unpacked or the user named.
    let library =
        unsafe { libloading::Library::new(path) }.map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let missing = |symbol: &str| format!("{} has no {symbol}", path.display());
    // SAFETY: the signatures of Slang 2026.12's `slang-glslang.h`.
    let compile = unsafe { library.get::<CompileFn>(b"glslang_compile_1_2\0") }
        .map(|f| *f)
        .map_err(|_| missing("glslang_compile_1_2"))?;
    // SAFETY: as above; the function returns a C++ `bool`.
    let validate = unsafe { library.get::<ValidateFn>(b"glslang_validateSPIRV\0") }
        .map(|f| *f)
        .map_err(|_| missing("glslang_validateSPIRV"))?;
    Ok(NewerToolchain { compile, validate, path: path.clone(), _library: library })
}

impl NewerToolchain {
    /// Compiles one GLSL stage, already preprocessed (includes expanded,
    /// `#line` directives naming files), for `spirv` under Vulkan rules.
    /// The error is glslang's log.
    pub fn compile_glsl(
        &self,
        text: &str,
        file: &str,
        stage: ShaderStage,
        spirv: SpirvVersion,
        entry_point: &str,
    ) -> Result<Vec<u32>, String> {
        let path = CString::new(file).map_err(|_| format!("{file}: a file name with a NUL byte"))?;
        let entry = CString::new(entry_point).map_err(|_| format!("{entry_point}: an entry point with a NUL byte"))?;
        let (major, minor) = spirv_numbers(spirv);
        let mut log = Vec::<u8>::new();
        let mut output = Vec::<u8>::new();
        let range = text.as_bytes().as_ptr_range();
        let mut request = CompileRequest {
            size_in_bytes: std::mem::size_of::<CompileRequest>(),
            source_path: path.as_ptr(),
            input_begin: range.start.cast(),
            input_end: range.end.cast(),
            diagnostic_func: append,
            diagnostic_user_data: (&raw mut log).cast(),
            output_func: append,
            output_user_data: (&raw mut output).cast(),
            slang_stage: slang_stage(stage),
            action: ACTION_COMPILE_GLSL_TO_SPIRV,
            // No optimisation: the constant table and reflection find
            // everything by name (docs/SPIRV.md).
            optimization_level: 0,
            debug_info_type: 0,
            spirv_target_name: std::ptr::null(),
            spirv_version: SpirvVersionNumbers { major, minor, patch: 0 },
            entry_point_name: entry.as_ptr(),
        };
        // glslang writes its messages through the callbacks, but prints a
        // failure to set up its built-ins (a stage its profile lacks) with
        // the whole built-in text: taken from the standard streams and
        // dropped, the failure is in the status.
        let (status, _) = capture_stdio(|| {
            // SAFETY: every pointer in `request` outlives the call; the
            // callbacks append to the two vectors their user data point at.
            unsafe { (self.compile)(&mut request) }
        });
        let log = String::from_utf8_lossy(&log).into_owned();
        if status != 0 || output.is_empty() {
            return Err(if log.trim().is_empty() { format!("glslang {RELEASE} failed ({status})") } else { log });
        }
        if !output.len().is_multiple_of(4) {
            return Err(format!("glslang {RELEASE} wrote {} bytes, not whole SPIR-V words", output.len()));
        }
        Ok(output.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect())
    }

    /// Validates `words` with SPIRV-Tools of 2026 (universal SPIR-V 1.6
    /// environment); the error is the validator's message.
    pub fn validate(&self, words: &[u32]) -> Result<(), String> {
        let size = c_int::try_from(words.len()).map_err(|_| format!("a module of {} words", words.len()))?;
        let (valid, printed) = capture_stdio(|| {
            // SAFETY: `words` is live for the call; the function reads `size` words.
            unsafe { (self.validate)(words.as_ptr(), size) }
        });
        let printed = printed.unwrap_or_default();
        let (ours, others) = split_validator_output(&printed);
        if !others.is_empty() {
            // Another thread's lines, printed in that instant.
            let _ = writeln!(std::io::stderr(), "{}", others.join("\n"));
        }
        if valid {
            return Ok(());
        }
        let errors: Vec<&str> =
            ours.iter().filter_map(|l| l.strip_prefix("error: ")).map(str::trim).filter(|l| !l.is_empty()).collect();
        Err(if errors.is_empty() { "refused, with no message".to_owned() } else { errors.join("; ") })
    }
}

/// What the validator printed, split into its messages (a line starting
/// with a severity, the indented lines after it joined to it: the
/// instruction it is about) and the other lines, which another thread
/// printed while the output was captured.
fn split_validator_output(printed: &str) -> (Vec<String>, Vec<&str>) {
    let mut ours: Vec<String> = Vec::new();
    let mut others: Vec<&str> = Vec::new();
    let mut in_message = false;
    for line in printed.lines().filter(|l| !l.trim().is_empty()) {
        if ["error: ", "warning: ", "info: "].iter().any(|p| line.starts_with(p)) {
            ours.push(line.trim().to_owned());
            in_message = true;
        } else if in_message && line.starts_with(char::is_whitespace) {
            if let Some(last) = ours.last_mut() {
                last.push(' ');
                last.push_str(line.trim());
            }
        } else {
            others.push(line);
            in_message = false;
        }
    }
    (ours, others)
}

/// Runs `f` with the process's standard output and error pointed at a
/// file of their own, and returns what was written there: the one way to
/// the validator's messages. A line another thread prints in that instant
/// lands there too; the callers give back what is not the module's.
fn capture_stdio<T>(f: impl FnOnce() -> T) -> (T, Option<String>) {
    static STDIO: Mutex<()> = Mutex::new(());
    let _guard = STDIO.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let _ = std::io::stdout().flush();
    // SAFETY: flushes C's buffers, so that nothing printed before lands in the capture.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    let Ok(mut capture) = memory_file() else { return (f(), None) };
    // SAFETY: plain descriptor calls; each duplicate is closed once below.
    let saved = unsafe { [libc::dup(1), libc::dup(2)] };
    if saved.contains(&-1) {
        for fd in saved.into_iter().filter(|fd| *fd >= 0) {
            // SAFETY: a descriptor dup just returned.
            unsafe { libc::close(fd) };
        }
        return (f(), None);
    }
    use std::os::fd::AsRawFd;
    // SAFETY: points 1 and 2 at the capture file, a live descriptor.
    unsafe {
        libc::dup2(capture.as_raw_fd(), 1);
        libc::dup2(capture.as_raw_fd(), 2);
    }
    let result = f();
    // SAFETY: flushes C's buffers into the capture file, then puts the
    // saved descriptors back and closes the copies.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::dup2(saved[0], 1);
        libc::dup2(saved[1], 2);
        libc::close(saved[0]);
        libc::close(saved[1]);
    }
    let mut text = String::new();
    if capture.rewind().is_err() || capture.read_to_string(&mut text).is_err() {
        return (result, None);
    }
    (result, Some(text))
}

/// An anonymous file in memory, gone when closed: nothing in the temp
/// directory to clean up or to collide with another process's.
fn memory_file() -> std::io::Result<std::fs::File> {
    // SAFETY: memfd_create reads the NUL-terminated name and returns a new
    // descriptor, or -1.
    let fd = unsafe { libc::memfd_create(c"xr-validator-output".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    use std::os::fd::FromRawFd;
    // SAFETY: `fd` is a fresh descriptor that nothing else owns.
    Ok(unsafe { std::fs::File::from_raw_fd(fd) })
}

fn spirv_numbers(version: SpirvVersion) -> (c_int, c_int) {
    match version {
        SpirvVersion::V1_0 => (1, 0),
        SpirvVersion::V1_1 => (1, 1),
        SpirvVersion::V1_2 => (1, 2),
        SpirvVersion::V1_3 => (1, 3),
        SpirvVersion::V1_4 => (1, 4),
        SpirvVersion::V1_5 => (1, 5),
        SpirvVersion::V1_6 => (1, 6),
    }
}

/// `SlangStage` of `slang.h`.
fn slang_stage(stage: ShaderStage) -> c_int {
    match stage {
        ShaderStage::Vertex => 1,
        ShaderStage::TessControl => 2,
        ShaderStage::TessEvaluation => 3,
        ShaderStage::Geometry => 4,
        ShaderStage::Fragment => 5,
        ShaderStage::Compute => 6,
        ShaderStage::RayGeneration => 7,
        ShaderStage::Intersection => 8,
        ShaderStage::AnyHit => 9,
        ShaderStage::ClosestHit => 10,
        ShaderStage::Miss => 11,
        ShaderStage::Callable => 12,
        ShaderStage::Mesh => 13,
        ShaderStage::Task => 14,
    }
}

const ACTION_COMPILE_GLSL_TO_SPIRV: c_uint = 0;

type OutputFn = unsafe extern "C" fn(data: *const c_void, size: usize, user_data: *mut c_void);
type CompileFn = unsafe extern "C" fn(request: *mut CompileRequest) -> c_int;
type ValidateFn = unsafe extern "C" fn(words: *const u32, size: c_int) -> bool;

/// Appends the bytes to the `Vec<u8>` `user_data` points at.
unsafe extern "C" fn append(data: *const c_void, size: usize, user_data: *mut c_void) {
    if data.is_null() || user_data.is_null() || size == 0 {
        return;
    }
    // SAFETY: `user_data` is the `Vec<u8>` of the request being compiled,
    // and `data` holds `size` bytes for the length of the call.
    unsafe { (*user_data.cast::<Vec<u8>>()).extend_from_slice(std::slice::from_raw_parts(data.cast::<u8>(), size)) };
}

/// `glsl_SPIRVVersion`.
#[repr(C)]
struct SpirvVersionNumbers {
    major: c_int,
    minor: c_int,
    patch: c_int,
}

/// `glslang_CompileRequest_1_2` of Slang's `slang-glslang.h`.
#[repr(C)]
struct CompileRequest {
    size_in_bytes: usize,
    source_path: *const c_char,
    input_begin: *const c_void,
    input_end: *const c_void,
    diagnostic_func: OutputFn,
    diagnostic_user_data: *mut c_void,
    output_func: OutputFn,
    output_user_data: *mut c_void,
    slang_stage: c_int,
    action: c_uint,
    optimization_level: c_uint,
    debug_info_type: c_uint,
    spirv_target_name: *const c_char,
    spirv_version: SpirvVersionNumbers,
    entry_point_name: *const c_char,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_module_names_where_it_was_looked_for() {
        let error = open(&[PathBuf::from("/nonexistent/x.so")]).err().unwrap_or_default();
        assert!(error.contains("/nonexistent/x.so") && error.contains("scripts/setup.sh"), "{error}");
    }

    #[test]
    fn a_library_without_the_calls_is_refused_by_name() {
        let error = open(&[PathBuf::from("/lib/x86_64-linux-gnu/libc.so.6")]).err().unwrap_or_default();
        assert!(error.contains("has no glslang_compile_1_2"), "{error}");
    }

    #[test]
    fn the_validators_messages_are_kept_and_another_threads_lines_given_back() {
        let printed = "error: line 12: ID '7' has not been defined\n  %9 = OpLoad %int %7\n\n\
                       a line another thread printed\nwarning: an unused variable\n";
        let (ours, others) = split_validator_output(printed);
        assert_eq!(
            ours,
            ["error: line 12: ID '7' has not been defined %9 = OpLoad %int %7", "warning: an unused variable"]
        );
        assert_eq!(others, ["a line another thread printed"]);
    }

    /// Set in the child process the capture test runs in.
    const CAPTURE_CHILD: &str = "XR_SPIRV_CAPTURE_TEST_CHILD";

    /// The capture points the whole process's descriptors 1 and 2 at a
    /// file: run alone, in a child process of this test binary, so that no
    /// other test's output (or the harness's own) lands in it.
    #[test]
    fn what_a_call_prints_on_both_streams_is_captured_and_the_streams_put_back() {
        let name = "newer_toolchain::tests::what_a_call_prints_on_both_streams_is_captured_and_the_streams_put_back";
        if xr_env::var_os(CAPTURE_CHILD).is_none() {
            let child = std::process::Command::new(std::env::current_exe().expect("the test binary"))
                .args(["--exact", name, "--test-threads=1", "--nocapture"])
                .env(CAPTURE_CHILD, "1")
                .output()
                .expect("the test binary runs");
            let stdout = String::from_utf8_lossy(&child.stdout);
            assert!(
                child.status.success() && stdout.contains("1 passed"),
                "{stdout}\n{}",
                String::from_utf8_lossy(&child.stderr)
            );
            return;
        }
        let identity = |fd| {
            // SAFETY: `stat` is plain integers, for which all zeros is a value.
            let mut stat: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: fstat writes the struct it is given.
            assert_eq!(unsafe { libc::fstat(fd, &mut stat) }, 0);
            (stat.st_dev, stat.st_ino)
        };
        let before = [identity(1), identity(2)];
        let (value, printed) = capture_stdio(|| {
            // SAFETY: C's printf family on a NUL-terminated format; fd 2 written directly.
            unsafe {
                libc::printf(c"from C's stdout\n".as_ptr());
                libc::write(2, c"from fd 2\n".as_ptr().cast(), 10);
            }
            7
        });
        assert_eq!(value, 7);
        let printed = printed.expect("captured");
        assert!(printed.contains("from C's stdout") && printed.contains("from fd 2"), "{printed:?}");
        // Later output goes to the real streams again, not to the capture.
        assert_eq!([identity(1), identity(2)], before);
    }
}
