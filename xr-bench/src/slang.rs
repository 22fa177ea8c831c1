//! Slang: a cold `xr build` of a Slang variant matrix against the same
//! compiles made by a plain program calling the Slang library directly
//! (no validation, no reflection, no store: the compiles no build can
//! avoid), at 1x and 10x the matrix; and the plain program's two ways of
//! sharing Slang between threads: a global session per thread against one
//! global session behind a lock.
//!
//! The matrix is the materials sample's `unlit.slang` (and its `patterns`
//! module) with a LEVEL axis written into its output, so that every variant
//! differs: TINT (2) x PATTERN (3) x LEVEL (12 at 1x), for `vk-spirv` and
//! `gl-spirv`. `scripts/bench.sh slang` runs it; docs/PERFORMANCE.md has
//! its results.

use anyhow::{Context, ensure};
use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::{
        Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Instant,
};
use xr_compiler_slang::{ffi, library, session};

/// Arguments.
#[derive(clap::Args)]
pub struct Args {
    /// Matrix sizes, as multiples of the 1x matrix.
    #[arg(long, value_delimiter = ',', default_value = "1,10")]
    scales: Vec<usize>,
    /// LEVEL values of the 1x matrix (12: 144 artifacts; CI's smoke takes 1).
    #[arg(long, default_value_t = 12)]
    base_levels: usize,
    /// Rounds per scenario (the median is reported).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Threads (`xr build -j`, and the plain program's).
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Where to write the matrix and the stores.
    #[arg(long, default_value = "target/bench-slang")]
    dir: PathBuf,
}

const TARGETS: [&str; 2] = ["vk-spirv", "gl-spirv"];
const PATTERNS: [&str; 3] = ["flat", "stripes", "checker"];

/// One variant: TINT, PATTERN (index), LEVEL.
#[derive(Clone, Copy)]
struct Variant {
    tint: usize,
    pattern: usize,
    level: usize,
}

fn variants(levels: usize) -> Vec<Variant> {
    let mut all = Vec::new();
    for tint in 0..2 {
        for pattern in 0..3 {
            for level in 0..levels {
                all.push(Variant { tint, pattern, level });
            }
        }
    }
    all
}

/// Writes the program, its module and a manifest for `levels` LEVEL values.
fn write_matrix(dir: &Path, root: &Path, levels: usize) -> anyhow::Result<()> {
    let shaders = root.join("samples/materials/shaders");
    std::fs::create_dir_all(dir.join("include"))?;
    std::fs::copy(shaders.join("include/patterns.slang"), dir.join("include/patterns.slang"))?;
    let source = std::fs::read_to_string(shaders.join("unlit.slang"))?;
    let with_level = source.replace(
        "return float4(color * GAIN + BIAS, 1.0);",
        "return float4(color * GAIN + BIAS + float(LEVEL) * 0.0001, 1.0);",
    );
    ensure!(with_level != source, "unlit.slang no longer ends as the benchmark expects");
    std::fs::write(dir.join("unlit.slang"), with_level)?;
    let manifest = format!(
        "store = \"store\"\n\
         [[axis]]\nname = \"TINT\"\nkind = \"bool\"\n\
         [[axis]]\nname = \"PATTERN\"\nkind = \"enum\"\nvalues = [\"flat\", \"stripes\", \"checker\"]\n\
         [[axis]]\nname = \"LEVEL\"\nkind = \"int\"\nrange = [0, {}]\n\
         [[program]]\nname = \"unlit\"\naxes = [\"TINT\", \"PATTERN\", \"LEVEL\"]\ntargets = [\"vk-spirv\", \"gl-spirv\"]\n\
         include = [\"include\"]\n\
         stages = [\n  {{ stage = \"vertex\", file = \"unlit.slang\", entry = \"vertexMain\" }},\n  \
         {{ stage = \"fragment\", file = \"unlit.slang\", entry = \"fragmentMain\" }},\n]\n\
         overrides = [\n  {{ name = \"GAIN\", id = 0, type = \"float\", default = 1.0 }},\n  \
         {{ name = \"BIAS\", id = 1, type = \"float\", default = 0.0 }},\n]\n",
        levels - 1
    );
    std::fs::write(dir.join("xr.toml"), manifest)?;
    Ok(())
}

/// A cold `xr build -j jobs` of the matrix in `dir`: its wall seconds.
fn xr_build(xr: &Path, dir: &Path, jobs: usize, artifacts: usize) -> anyhow::Result<f64> {
    let _ = std::fs::remove_dir_all(dir.join("store"));
    let start = Instant::now();
    let output = Command::new(xr)
        .args(["build", "-q", "-m", "xr.toml", "-j", &jobs.to_string()])
        .current_dir(dir)
        .output()
        .context("running xr build")?;
    let seconds = start.elapsed().as_secs_f64();
    // The summary is on stderr, as every diagnostic.
    let stderr = String::from_utf8_lossy(&output.stderr);
    ensure!(output.status.success(), "xr build failed:\n{}{stderr}", String::from_utf8_lossy(&output.stdout));
    ensure!(stderr.contains(&format!("{artifacts} built")), "xr build did not build {artifacts}: {stderr}");
    Ok(seconds)
}

/// Compiles one variant for one target through the library, as the plugin
/// asks it (same options, both entry points in one request).
fn compile_direct(
    slang: &library::Slang,
    session: session::Session,
    dir: &Path,
    source: &str,
    variant: Variant,
    target: &str,
) -> anyhow::Result<usize> {
    let mut request = session::Request::new(slang, session).map_err(anyhow::Error::msg)?;
    request.target_spirv(session, "spirv_1_0").map_err(anyhow::Error::msg)?;
    request.matrix_layout(ffi::MATRIX_LAYOUT_COLUMN_MAJOR);
    request.optimization(ffi::OPTIMIZATION_DEFAULT);
    request.arguments(&xr_compiler_slang::compile::ARGUMENTS).map_err(anyhow::Error::msg)?;
    request.search_path(&dir.to_string_lossy());
    request.search_path(&dir.join("include").to_string_lossy());
    let file = dir.join("unlit.slang");
    let unit = request.translation_unit(&file.to_string_lossy(), source, ffi::SLANG_SOURCE_LANGUAGE_SLANG);
    request.define(unit, if target == "vk-spirv" { "VULKAN" } else { "GL_SPIRV" }, "1");
    request.define(unit, "TINT", &variant.tint.to_string());
    request.define(unit, "PATTERN", &variant.pattern.to_string());
    request.define(unit, &format!("PATTERN_{}", PATTERNS[variant.pattern].to_uppercase()), "1");
    request.define(unit, "LEVEL", &variant.level.to_string());
    request.entry_point(unit, "vertexMain", ffi::stage::VERTEX);
    request.entry_point(unit, "fragmentMain", ffi::stage::FRAGMENT);
    ensure!(request.compile(), "{}", request.diagnostics());
    let words = request.code(0).map_or(0, |w| w.len()) + request.code(1).map_or(0, |w| w.len());
    ensure!(words > 0, "no SPIR-V");
    Ok(words)
}

/// Every variant for both targets on `jobs` threads: with a global
/// session per thread, or with one behind a lock. Wall seconds.
fn direct(dir: &Path, variants: &[Variant], jobs: usize, shared: bool) -> anyhow::Result<f64> {
    let slang = library::slang()?;
    let source = std::fs::read_to_string(dir.join("unlit.slang"))?;
    let work: Vec<(Variant, &str)> = variants.iter().flat_map(|v| TARGETS.iter().map(move |t| (*v, *t))).collect();
    let next = AtomicUsize::new(0);
    // The shared session is made on this thread and used by all, one at a
    // time: it lives inside the lock.
    let shared_session = if shared {
        Some(Mutex::new(LockedSession(session::session(slang).map_err(anyhow::Error::msg)?)))
    } else {
        None
    };
    let start = Instant::now();
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                scope.spawn(|| -> anyhow::Result<()> {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some((variant, target)) = work.get(i) else { return Ok(()) };
                        match &shared_session {
                            Some(lock) => {
                                let held = lock.lock().unwrap_or_else(|e| e.into_inner());
                                compile_direct(slang, held.0, dir, &source, *variant, target)?;
                            }
                            None => {
                                let session = session::session(slang).map_err(anyhow::Error::msg)?;
                                compile_direct(slang, session, dir, &source, *variant, target)?;
                            }
                        }
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.join().map_err(|_| anyhow::anyhow!("a thread panicked"))??;
        }
        Ok(())
    })?;
    Ok(start.elapsed().as_secs_f64())
}

/// A global session that one thread at a time uses, behind a `Mutex`.
struct LockedSession(session::Session);

// SAFETY: Slang's global session may be used from any thread, one at a
// time; the only copy lives in the Mutex, and every use holds the lock.
unsafe impl Send for LockedSession {}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The plain program's measurement in a child process of this binary, so
/// that every round pays the sessions' creation as a build does.
fn direct_in_child(dir: &Path, levels: usize, jobs: usize, shared: bool) -> anyhow::Result<f64> {
    let output = Command::new(std::env::current_exe()?)
        .args(["slang-direct", "--dir"])
        .arg(dir)
        .args(["--levels", &levels.to_string(), "--jobs", &jobs.to_string()])
        .args(shared.then_some("--shared"))
        .output()?;
    ensure!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    Ok(String::from_utf8_lossy(&output.stdout).trim().parse()?)
}

/// Arguments of the child.
#[derive(clap::Args)]
pub struct DirectArgs {
    #[arg(long)]
    dir: PathBuf,
    #[arg(long)]
    levels: usize,
    #[arg(long)]
    jobs: usize,
    #[arg(long)]
    shared: bool,
}

/// The child: prints its wall seconds.
pub fn run_direct(args: DirectArgs) -> anyhow::Result<()> {
    println!("{}", direct(&args.dir, &variants(args.levels), args.jobs, args.shared)?);
    Ok(())
}

/// Runs the benchmark and prints its table.
pub fn run(args: Args) -> anyhow::Result<()> {
    let root = std::env::current_dir()?;
    let xr = std::env::current_exe()?.with_file_name("xr");
    ensure!(xr.exists(), "{} is not built", xr.display());
    println!(
        "| matrix | artifacts | xr build (s) | library directly, session per thread (s) | XR overhead | one session behind a lock (s) | xr ms per artifact |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for scale in &args.scales {
        let levels = args.base_levels * scale;
        let dir = root.join(&args.dir).join(format!("{scale}x"));
        write_matrix(&dir, &root, levels)?;
        let artifacts = variants(levels).len() * TARGETS.len();
        let (mut xr_times, mut direct_times, mut locked_times) = (Vec::new(), Vec::new(), Vec::new());
        // Side by side, round by round.
        for _ in 0..args.rounds {
            xr_times.push(xr_build(&xr, &dir, args.jobs, artifacts)?);
            direct_times.push(direct_in_child(&dir, levels, args.jobs, false)?);
            locked_times.push(direct_in_child(&dir, levels, args.jobs, true)?);
        }
        let (x, d, l) = (median(xr_times), median(direct_times), median(locked_times));
        println!(
            "| {scale}x | {artifacts} | {x:.3} | {d:.3} | {:+.0}% | {l:.3} | {:.2} |",
            (x / d - 1.0) * 100.0,
            x * 1000.0 / artifacts as f64
        );
    }
    Ok(())
}
