//! Helpers for XR's integration tests: build the plugins the way a user
//! does, find them on disk, open a real device and attach a real compiler.

pub mod servers;
pub mod xvfb;

use std::{
    ffi::OsStr,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::OnceLock,
};
use xr_device::{
    DeviceBox, DeviceCapabilities, DeviceKind, DeviceOptions, DrawCall, Image, VertexAttribute, VertexLayout,
};
use xr_host::Registry;
use xr_sourcebuild::{
    AttachedBuildSystemBox, BuildError, BuildOptions, BuiltProgram, ProgramDesc, ShaderStage, SourceDesc,
};

/// `plugins.txt` at the workspace root: the plugins XR ships, the list the
/// scripts read too (`scripts/install.sh` installs them).
const PLUGINS_FILE: &str = include_str!("../../plugins.txt");

/// The plugins XR ships, by crate name, in the order of `plugins.txt`.
pub fn plugins() -> &'static [&'static str] {
    static PLUGINS: OnceLock<Vec<&'static str>> = OnceLock::new();
    PLUGINS.get_or_init(|| parse_plugin_list(PLUGINS_FILE))
}

/// The names of a plugin list: its lines but comments (`#…`) and empty
/// ones, taken as they are, as the scripts' `grep -v` takes them.
fn parse_plugin_list(text: &str) -> Vec<&str> {
    text.lines().filter(|line| !line.is_empty() && !line.starts_with('#')).collect()
}

/// The workspace's root directory.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ lives in the workspace").to_path_buf()
}

/// The loader manifest of Debian 12's own lavapipe (Mesa 22.3: Vulkan 1.3,
/// no descriptor indexing, no dynamic rendering local read, no ray queries).
pub const SYSTEM_LAVAPIPE: &str = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

/// The loader manifest of the lavapipe the setup puts in the checkout
/// (Mesa 25: Vulkan 1.4; scripts/setup-lavapipe.sh).
pub fn setup_lavapipe() -> PathBuf {
    profile_dir().parent().expect("target/<profile> has a parent").join("lavapipe/lvp_icd.json")
}

/// `target/<profile>` of the running test binary (`target/<profile>/deps/<test>`).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent().and_then(Path::parent).expect("test binary sits in target/<profile>/deps").to_path_buf()
}

/// The name of [`profile_dir`] (`debug`, `release`).
pub fn profile_name() -> String {
    profile_dir().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "debug".into())
}

/// What a test asks cargo to build of a workspace.
enum Packages<'a> {
    /// Every member, the unit set `cargo build` at the root builds.
    Workspace,
    /// One package.
    One(&'a str),
}

/// `cargo build` of `manifest`'s workspace into `target_dir`, in the
/// profile of the running test binary.
fn cargo_build(manifest: &Path, target_dir: &Path, packages: Packages) {
    let mut command = cargo_command();
    command.arg("build").arg("--manifest-path").arg(manifest);
    command.arg("--target-dir").arg(target_dir);
    if profile_name() == "release" {
        command.arg("--release");
    }
    match packages {
        Packages::Workspace => command.arg("--workspace"),
        Packages::One(package) => command.args(["-p", package]),
    };
    let output = command.output().expect("cargo runs");
    assert!(
        output.status.success(),
        "building {} failed:\n{}",
        manifest.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `cargo`, as the test runner was started (`$CARGO`), for a build a test
/// starts, in the environment the test command's own cargo had.
///
/// Cargo gives a test process its package's variables (`CARGO_PKG_NAME`,
/// `CARGO_MANIFEST_DIR`, …), and build scripts watch some of them (ring's
/// reads `CARGO_PKG_NAME` and tells cargo to rerun when it changes): a
/// cargo started with them reran those scripts and recompiled ring, rustls,
/// tonic, reqwest and the XR crates above them, and the next plain cargo
/// command did it all again (65 s twice on a clean clone). Nor does it pass
/// on `RUSTC_BOOTSTRAP`: the per-test timings (`scripts/test-times.sh`) set
/// it for libtest's `--report-time` alone, and cargo recompiles everything
/// when it changes.
pub fn cargo_command() -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(set_by_cargo_for_a_test) {
            command.env_remove(name);
        }
    }
    command.env_remove("RUSTC_BOOTSTRAP");
    command
}

/// A variable cargo sets for the crate it runs (its manifest, package,
/// binaries, output directory), never one a user sets to configure cargo.
fn set_by_cargo_for_a_test(name: &str) -> bool {
    ["CARGO_PKG_", "CARGO_MANIFEST_", "CARGO_BIN_EXE_"].iter().any(|prefix| name.starts_with(prefix))
        || matches!(
            name,
            "CARGO_CRATE_NAME"
                | "CARGO_BIN_NAME"
                | "CARGO_PRIMARY_PACKAGE"
                | "CARGO_TARGET_TMPDIR"
                | "CARGO_RUSTC_CURRENT_DIR"
                | "OUT_DIR"
        )
}

/// Builds `package`, a plugin in a cargo workspace of its own (`manifest`,
/// relative to the workspace root: the out-of-tree WGSL plugin, the frozen
/// ABI fixture), into the fixtures' target directory, never next to `xr`,
/// and returns its library file.
pub fn out_of_tree_plugin(manifest: &str, package: &str) -> PathBuf {
    let target = profile_dir().parent().expect("target dir").join("fixtures");
    cargo_build(&workspace_root().join(manifest), &target, Packages::One(package));
    let file = format!("{}{}{}", std::env::consts::DLL_PREFIX, package.replace('-', "_"), std::env::consts::DLL_SUFFIX);
    target.join(profile_name()).join(file)
}

/// Builds the plugins, `xr`, the samples and the fixtures once per test binary.
///
/// The whole workspace, never a list of its packages: cargo unifies the
/// features of what one command builds, so `-p xr-cli -p triangle` compiles
/// xr-build and the plugins again with other features than `cargo build`
/// did (and writes them over its files), minutes on a clean clone. The
/// workspace after `cargo build` is nothing to do.
fn build_all() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let target = profile_dir().parent().expect("target dir").to_path_buf();
        let root = workspace_root();
        cargo_build(&root.join("Cargo.toml"), &target, Packages::Workspace);
        // The fixtures are a workspace of their own, built into their own
        // target directory: never next to `xr`, where discovery would load them.
        cargo_build(&root.join("tests/fixtures/Cargo.toml"), &target.join("fixtures"), Packages::Workspace);
    });
}

/// The directory holding the built plugins, `xr` and the samples.
pub fn plugin_dir() -> PathBuf {
    build_all();
    profile_dir()
}

/// A built executable of the workspace (`xr`, `triangle`).
pub fn executable(name: &str) -> PathBuf {
    plugin_dir().join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// The shared library file of a workspace plugin or fixture crate.
pub fn library(crate_name: &str) -> PathBuf {
    build_all();
    let file =
        format!("{}{}{}", std::env::consts::DLL_PREFIX, crate_name.replace('-', "_"), std::env::consts::DLL_SUFFIX);
    if crate_name.starts_with("xr-fixture-") {
        profile_dir().parent().expect("target dir").join("fixtures").join(profile_name()).join(file)
    } else {
        profile_dir().join(file)
    }
}

/// A test's own directory under the system temp dir: removed when the test
/// passes, kept (and named on stderr) when it fails, for a look at what the
/// test left.
#[derive(Debug)]
pub struct TestDir {
    path: PathBuf,
}

impl TestDir {
    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl std::ops::Deref for TestDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for TestDir {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl From<&TestDir> for PathBuf {
    fn from(dir: &TestDir) -> PathBuf {
        dir.path.clone()
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept {} for the failed test", self.path.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Little-endian bytes read back from a buffer as its 32-bit words.
pub fn u32_words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
}

/// A fresh empty directory for one test, unique per call (see [`TestDir`]).
pub fn temp_dir(label: &str) -> TestDir {
    use std::sync::atomic::{AtomicU32, Ordering};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("xr-test-{label}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    TestDir { path: dir }
}

/// `xr` or a sample as a user runs it: the built executable, with no
/// `XR_PLUGIN_PATH` unless a test gives one (so that it finds the plugins
/// next to itself). The tests start every program of the workspace through
/// this builder, so the environment they share is set here alone.
pub struct Xr {
    command: Command,
    /// The program's name in failure messages (`xr`, `materials`).
    name: String,
    /// Directories the run uses, removed after it.
    dirs: Vec<TestDir>,
}

/// What a finished program said.
#[derive(Debug)]
pub struct XrRun {
    /// Whether it exited with status 0.
    pub ok: bool,
    /// Its exit code (`None`: ended by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Xr {
    /// `xr ARGS…`.
    pub fn new<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>) -> Self {
        Self::program(executable("xr"), args)
    }

    /// The sample `name` (`triangle`, `materials`, `viewer`) with `args`.
    ///
    /// # Panics
    ///
    /// When the workspace built no program `name`.
    #[track_caller]
    pub fn sample<S: AsRef<OsStr>>(name: &str, args: impl IntoIterator<Item = S>) -> Self {
        let program = executable(name);
        assert!(program.is_file(), "the workspace built no sample '{name}' ({} is missing)", program.display());
        Self::program(program, args)
    }

    /// The program at `path` with `args`, in the environment of [`Xr::new`]:
    /// a copy of a workspace program put elsewhere, or a command that starts
    /// one (`setpriv … PROGRAM`).
    pub fn program<S: AsRef<OsStr>>(path: impl AsRef<OsStr>, args: impl IntoIterator<Item = S>) -> Self {
        let path = Path::new(path.as_ref());
        let name = path.file_name().unwrap_or(path.as_os_str()).to_string_lossy().into_owned();
        let mut command = Command::new(path);
        command.args(args).env_remove("XR_PLUGIN_PATH");
        Self { command, name, dirs: Vec::new() }
    }

    /// Adds an argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.command.arg(arg);
        self
    }

    /// Adds arguments.
    pub fn args<S: AsRef<OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.command.args(args);
        self
    }

    /// OpenGL on llvmpipe (`XR_GL_DEVICE=software`), whatever the machine's
    /// GPU, with Mesa's shader cache as the environment has it.
    pub fn software_gl(self) -> Self {
        self.env("XR_GL_DEVICE", "software")
    }

    /// On llvmpipe with a Mesa shader cache of its own (empty, so that
    /// program binaries are on offer), whatever the machine's GPU.
    pub fn software_device(mut self) -> Self {
        let cache = temp_dir("mesa-cache");
        self = self.software_device_cache(cache.path());
        self.dirs.push(cache);
        self
    }

    /// [`Xr::software_device`] with the Mesa shader cache in `dir`, which
    /// outlives the run: for processes that share a cache, or a test that
    /// keeps one per process.
    pub fn software_device_cache(self, dir: impl AsRef<Path>) -> Self {
        self.software_gl().env("MESA_SHADER_CACHE_DIR", dir.as_ref()).env_remove("MESA_SHADER_CACHE_DISABLE")
    }

    /// Runs in `dir`.
    pub fn dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.command.current_dir(dir);
        self
    }

    /// Finds plugins in `dir` (`XR_PLUGIN_PATH`).
    pub fn plugins(mut self, dir: impl AsRef<Path>) -> Self {
        self.command.env("XR_PLUGIN_PATH", dir.as_ref());
        self
    }

    /// Sets an environment variable.
    pub fn env(mut self, name: &str, value: impl AsRef<OsStr>) -> Self {
        self.command.env(name, value);
        self
    }

    /// Removes an environment variable.
    pub fn env_remove(mut self, name: &str) -> Self {
        self.command.env_remove(name);
        self
    }

    /// Offers the Vulkan loader only the drivers of `manifests` (a path,
    /// or several joined with `:`), not the setup's lavapipe beside them.
    pub fn vulkan_drivers(self, manifests: impl AsRef<OsStr>) -> Self {
        self.env("VK_DRIVER_FILES", manifests).env("VK_ADD_DRIVER_FILES", "")
    }

    /// The command, for a test that spawns and signals it.
    pub fn command(self) -> Command {
        self.command
    }

    /// Runs it to the end.
    pub fn run(mut self) -> XrRun {
        let output = self.command.output().unwrap_or_else(|e| panic!("{} does not start: {e}", self.name));
        XrRun {
            ok: output.status.success(),
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Runs it; it must succeed (the failure shows both streams).
    #[track_caller]
    pub fn ok(self) -> XrRun {
        let name = self.name.clone();
        let run = self.run();
        assert!(run.ok, "{name} failed ({:?}):\n{}\n{}", run.code, run.stdout, run.stderr);
        run
    }

    /// Runs it; it must fail.
    #[track_caller]
    pub fn fails(self) -> XrRun {
        let name = self.name.clone();
        let run = self.run();
        assert!(!run.ok, "{name} succeeded where it must fail:\n{}\n{}", run.stdout, run.stderr);
        run
    }
}

impl XrRun {
    /// (ok, stdout, stderr).
    pub fn parts(self) -> (bool, String, String) {
        (self.ok, self.stdout, self.stderr)
    }
}

/// The materials sample's Slang program, which [`materials_copy`] leaves out.
pub const MATERIALS_SLANG_PROGRAM: &str = "unlit-slang";

/// A copy of the materials sample (manifest and shaders) in a fresh
/// directory, with its store at `store/` inside it: its GLSL programs (111
/// artifacts). The tests of the store, the journal, gc, workers and remotes
/// use it; they are about the build, not about a compiler, and do not
/// depend on the Slang library. [`materials_full_copy`] has the Slang
/// program too.
pub fn materials_copy(label: &str) -> TestDir {
    let dir = temp_dir(label);
    write_materials(&dir, false);
    dir
}

/// A copy of the whole materials sample, its Slang program included (123
/// artifacts), with its store at `store/` inside it.
pub fn materials_full_copy(label: &str) -> TestDir {
    let dir = temp_dir(label);
    write_materials(&dir, true);
    dir
}

/// Writes the materials sample into `dir` (made if need be), as
/// [`materials_full_copy`] (`slang`) or [`materials_copy`] do: a checkout
/// of it anywhere.
pub fn write_materials(dir: &Path, slang: bool) {
    let sample = workspace_root().join("samples/materials");
    copy_dir(&sample.join("shaders"), &dir.join("shaders"));
    let manifest = std::fs::read_to_string(sample.join("xr.toml")).expect("the sample's manifest");
    let mut manifest = manifest.replace("../../target/xr-store/materials", "store");
    if !slang {
        let name = manifest.find(&format!("name = \"{MATERIALS_SLANG_PROGRAM}\"")).expect("the sample's Slang program");
        // From the comment above its `[[program]]` to the next table or the end.
        let table = manifest[..name].rfind("[[program]]").expect("its table");
        let start = manifest[..table].trim_end().rfind("\n\n").map_or(table, |i| i + 1);
        let end = manifest[name..].find("\n[[").map_or(manifest.len(), |i| name + i + 1);
        manifest = format!("{}{}", &manifest[..start], &manifest[end..]);
    }
    std::fs::write(dir.join("xr.toml"), manifest).expect("write the manifest");
}

/// [`materials_full_copy`], built with `xr build` into its store.
pub fn materials_full_built(label: &str) -> TestDir {
    let dir = materials_full_copy(label);
    xr_build(&dir);
    dir
}

/// [`materials_copy`], built with `xr build` into its store.
pub fn materials_built(label: &str) -> TestDir {
    let dir = materials_copy(label);
    xr_build(&dir);
    dir
}

/// Runs `xr build -m xr.toml -q` in `dir`; it must succeed.
pub fn xr_build(dir: &Path) {
    Xr::new(["build", "-m", "xr.toml", "-q"]).dir(dir).ok();
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).expect("read dir").map(|e| e.expect("dir entry")) {
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
        }
    }
}

/// The directory `scripts/setup.sh` unpacks the Slang library into.
pub fn slang_library_dir() -> PathBuf {
    profile_dir().parent().expect("target dir").join("slang")
}

/// A directory holding copies of the given plugin and fixture libraries.
pub fn plugin_dir_with(label: &str, crates: &[&str]) -> TestDir {
    let dir = temp_dir(label);
    for name in crates {
        let from = library(name);
        let to = dir.join(from.file_name().expect("library file name"));
        std::fs::copy(&from, &to).unwrap_or_else(|e| panic!("copy {}: {e}", from.display()));
    }
    dir
}

/// Starts `command` with its stdout and stderr piped, to be read by
/// `wait_with_output` (several processes run at once).
pub fn spawn_captured(command: &mut Command) -> Child {
    command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap_or_else(|e| panic!("{command:?} starts: {e}"))
}

/// A GLSL fragment source `file` of text `source`.
pub fn glsl_fragment(file: &str, source: &str) -> SourceDesc {
    SourceDesc::new("glsl", ShaderStage::Fragment, file, source)
}

/// The registry of the built plugins.
pub fn registry() -> Registry {
    Registry::load_dirs([plugin_dir()])
}

/// An open OpenGL device with the GLSL build system attached, from `registry`.
pub struct GlBench {
    /// The build system attached to it; dropped first, while the device is open.
    pub compiler: AttachedBuildSystemBox,
    /// The device.
    pub device: DeviceBox,
    /// Its capabilities.
    pub capabilities: DeviceCapabilities,
}

/// Size of the images `GlBench::render_full` draws.
pub const BENCH_SIZE: u32 = 16;

/// A full-screen vertex shader writing `v_uv`.
pub const FULLSCREEN_VERT: &str = "#version 450 core
layout(location = 0) in vec2 in_position;
out vec2 v_uv;
void main() {
    v_uv = in_position * 0.5 + 0.5;
    gl_Position = vec4(in_position, 0.0, 1.0);
}
";

impl GlBench {
    /// Opens the OpenGL device and attaches the build system named `compiler`.
    pub fn open(registry: &Registry, compiler: &str) -> Self {
        Self::open_with(registry, DeviceKind::OPENGL, compiler, &DeviceOptions::default())
    }

    /// Opens the Vulkan device with validation on and attaches `compiler`.
    pub fn vulkan(registry: &Registry, compiler: &str) -> Self {
        Self::open_with(
            registry,
            DeviceKind::VULKAN,
            compiler,
            &DeviceOptions { validation: true, ..DeviceOptions::default() },
        )
    }

    /// Opens a device of `kind` and attaches the build system named `compiler`.
    pub fn open_with(registry: &Registry, kind: DeviceKind, compiler: &str, options: &DeviceOptions) -> Self {
        let attached = registry
            .open_with(kind, compiler, options)
            .unwrap_or_else(|e| panic!("a {} device with {compiler} attached: {e}", kind.name()));
        Self { device: attached.device, capabilities: attached.capabilities, compiler: attached.compiler }
    }

    /// Builds a program from a full-screen vertex shader and `fragment`.
    pub fn build_fragment(&mut self, fragment: SourceDesc) -> Result<BuiltProgram, BuildError> {
        let vertex = SourceDesc::new("glsl", ShaderStage::Vertex, "fullscreen.vert", FULLSCREEN_VERT);
        self.compiler
            .build_program(&ProgramDesc::new("test", [vertex, fragment]), &BuildOptions::default())
            .into_result()
    }

    /// Draws two triangles covering the target with `program`; returns the pixels.
    pub fn render_full(&mut self, program: &BuiltProgram) -> Image {
        render_quad(&mut self.device, program.program, BENCH_SIZE, [0.0; 4])
    }

    /// The error of loading `object` (a program's stored object) with one
    /// instruction of its last module overwritten: a damaged object must be
    /// refused by the validator, naming the environment.
    pub fn load_damaged(&mut self, desc: &ProgramDesc, object: &xr_sourcebuild::ProgramBinary) -> String {
        let mut bytes = object.bytes.to_vec();
        let at = bytes.len() - 40;
        bytes[at..at + 4].copy_from_slice(&0xffff_ffffu32.to_le_bytes());
        let damaged = xr_sourcebuild::ProgramBinary { format: object.format, bytes: bytes.into() };
        let error = self.compiler.load_program_binary(desc, &BuildOptions::default(), &damaged).into_result();
        error.err().expect("a damaged object is refused").to_string()
    }

    /// The centre pixel of a full-screen render with `program`.
    pub fn centre_pixel(&mut self, program: &BuiltProgram) -> [u8; 4] {
        let image = self.render_full(program);
        image.pixel(BENCH_SIZE / 2, BENCH_SIZE / 2).expect("centre pixel")
    }
}

/// Clears a `size` × `size` target of `device` to `clear`, draws two
/// triangles covering it (a quad of -1..1, `vec2` at location 0) with
/// `program`, and returns the pixels.
#[track_caller]
pub fn render_quad(device: &mut DeviceBox, program: xr_device::ProgramRef, size: u32, clear: [f32; 4]) -> Image {
    let target = device.create_render_target(size, size).into_result().expect("target");
    let quad = [-1.0f32, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0, -1.0, 1.0, 1.0, -1.0, 1.0];
    let layout =
        VertexLayout { stride: 2, attributes: vec![VertexAttribute { location: 0, components: 2, offset: 0 }].into() };
    let vertices = device.create_vertex_buffer(quad.as_slice().into(), &layout).into_result().expect("vb");
    device.clear(target, &clear).into_result().expect("clear");
    let draw = DrawCall::triangles(target, program, vertices, 6);
    device.draw(&draw).into_result().expect("draw");
    device.read_pixels(target).into_result().expect("read pixels")
}

/// Asserts that a successful run's standard error says nothing that reads
/// as a failure: no line starting with `error:` or `warning:`, no raw log
/// line (a timestamp, colour codes).
#[track_caller]
pub fn assert_quiet(what: &str, stderr: &str) {
    for line in stderr.lines() {
        let alarming = line.starts_with("error:") || line.starts_with("warning:");
        let raw_log = line.contains('\u{1b}')
            || line.get(..4).is_some_and(|y| y.starts_with("20") && y.bytes().all(|b| b.is_ascii_digit()));
        assert!(!alarming && !raw_log, "{what} succeeded but said: {line}\n(all of it:\n{stderr})");
    }
}

/// Asserts that two RGBA8 colours differ by at most `tolerance` per channel.
#[track_caller]
pub fn assert_rgba_near(actual: [u8; 4], expected: [u8; 4], tolerance: u8) {
    let close = actual.iter().zip(expected).all(|(a, e)| a.abs_diff(e) <= tolerance);
    assert!(close, "pixel {actual:?} is not within {tolerance} of {expected:?}");
}

/// A float colour as the RGBA8 the target stores.
pub fn rgba8(color: [f32; 4]) -> [u8; 4] {
    color.map(|c| (c.clamp(0.0, 1.0) * 255.0).round() as u8)
}

/// An HLSL source for `stage` with entry point `entry`.
pub fn hlsl(stage: ShaderStage, file: &str, entry: &str, source: &str) -> SourceDesc {
    let mut desc = SourceDesc::new("glsl", stage, file, source);
    desc.language = "hlsl".into();
    desc.entry_point = entry.into();
    desc
}

/// A vertex shader written the way D3D9-era HLSL was (a view-projection
/// matrix in the globals, `mul`, a diffuse colour) and a pixel shader
/// passing the colour on, as one program: the shape of shader that engines
/// moving off `ID3DXConstantTable` bring along.
pub fn d3d9_style_program() -> ProgramDesc {
    let vs = hlsl(
        ShaderStage::Vertex,
        "d3d9.hlsl",
        "Main",
        "float4x4 ViewProjMatrix;
         float4 Blue;
         struct VS_INPUT { float2 position : POSITION; };
         struct VS_OUTPUT { float4 position : SV_Position; float4 diffuse : COLOR; };
         VS_OUTPUT Main(VS_INPUT input) {
             VS_OUTPUT output = (VS_OUTPUT)0;
             output.position = mul(float4(input.position, 0.0, 1.0), ViewProjMatrix);
             output.diffuse = Blue;
             return output;
         }",
    );
    let ps = hlsl(
        ShaderStage::Fragment,
        "d3d9_ps.hlsl",
        "PixelMain",
        "float4 PixelMain(float4 diffuse : COLOR) : SV_Target { return diffuse; }",
    );
    ProgramDesc::new("d3d9", [vs, ps])
}

/// A column-major 4×4 identity.
pub const IDENTITY: [f32; 16] = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0];

/// The number before `label` in an `xr build` summary line
/// (`xr build: 3 built, 0 fetched, 105 reused, 0 failed; 96 unique objects, …`).
pub fn summary_count(line: &str, label: &str) -> usize {
    let words: Vec<&str> = line.split(|c: char| c.is_whitespace() || c == ',' || c == ';').collect();
    words
        .windows(2)
        .find(|pair| pair[1] == label)
        .and_then(|pair| pair[0].parse().ok())
        .unwrap_or_else(|| panic!("no '{label}' count in: {line}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This test runs as cargo runs it, its package's variables set: the
    /// cargo a test starts gets none of them, and keeps what a user set.
    #[test]
    fn a_cargo_a_test_starts_drops_the_variables_cargo_set_for_the_test() {
        assert!(std::env::var_os("CARGO_PKG_NAME").is_some(), "run by cargo test, CARGO_PKG_NAME set");
        let command = cargo_command();
        let removed: Vec<String> = command
            .get_envs()
            .filter(|(_, value)| value.is_none())
            .map(|(name, _)| name.to_string_lossy().into_owned())
            .collect();
        for name in ["CARGO_PKG_NAME", "CARGO_MANIFEST_DIR", "CARGO_PKG_VERSION_MAJOR"] {
            assert!(removed.iter().any(|r| r == name), "{name} passed on to cargo: removed only {removed:?}");
        }
        for kept in ["CARGO_HOME", "CARGO_TARGET_DIR", "CARGO_INCREMENTAL", "CARGO_BUILD_JOBS", "CARGO", "PATH"] {
            assert!(!set_by_cargo_for_a_test(kept), "{kept} is the user's");
        }
    }

    /// The plugins whose shared library a crate under `backends/` builds,
    /// by `cargo metadata`: each cdylib crate is `<plugin>-cdylib` and its
    /// library keeps the plugin's name (the helper crates xr-gl-common,
    /// xr-spirv and xr-spirv-object build Rust libraries only).
    fn cdylib_backends() -> Vec<String> {
        let root = workspace_root();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let output = Command::new(cargo)
            .args(["metadata", "--no-deps", "--offline", "--format-version", "1", "--manifest-path"])
            .arg(root.join("Cargo.toml"))
            .output()
            .expect("cargo metadata runs");
        assert!(output.status.success(), "cargo metadata failed:\n{}", String::from_utf8_lossy(&output.stderr));
        let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).expect("cargo metadata's JSON");
        let backends = root.join("backends");
        let mut names: Vec<String> = metadata["packages"]
            .as_array()
            .expect("a package list")
            .iter()
            .filter(|package| {
                package["manifest_path"].as_str().is_some_and(|path| Path::new(path).starts_with(&backends))
            })
            .filter_map(|package| {
                let cdylib = package["targets"].as_array().into_iter().flatten().find(|target| {
                    target["crate_types"].as_array().into_iter().flatten().any(|kind| kind == "cdylib")
                })?;
                let name = package["name"].as_str().expect("a package name");
                let plugin = name
                    .strip_suffix("-cdylib")
                    .unwrap_or_else(|| panic!("{name}: a plugin's library is built by a crate named <plugin>-cdylib"));
                let library = cdylib["name"].as_str().expect("a target name");
                assert_eq!(library, plugin.replace('-', "_"), "{name}'s library must keep its plugin's name");
                Some(plugin.to_owned())
            })
            .collect();
        names.sort();
        names
    }

    #[test]
    fn the_plugin_list_names_exactly_the_cdylib_crates_of_backends() {
        for name in plugins() {
            assert!(
                !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "plugins.txt: '{}' is not a crate name alone (the scripts read the line as it is)",
                name.escape_debug()
            );
        }
        let mut listed: Vec<String> = plugins().iter().map(|name| name.to_string()).collect();
        listed.sort();
        let built = cdylib_backends();
        assert!(!built.is_empty(), "cargo metadata found no cdylib crate under backends/");
        assert_eq!(listed, built, "plugins.txt (left) and the cdylib crates of backends/ (right) must agree");
    }

    #[test]
    fn a_plugin_list_skips_comments_and_empty_lines() {
        assert_eq!(parse_plugin_list("# header\n\nxr-a\n#xr-b\nxr-c\n"), ["xr-a", "xr-c"]);
    }
}
