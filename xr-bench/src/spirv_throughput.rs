//! In-process compile throughput of XR's SPIR-V core against `glslc` run
//! once per file with 2 parallel jobs, over the same generated GLSL files,
//! with the same options, checking that both give the same, valid SPIR-V.

use anyhow::{Context, bail};
use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::atomic::{AtomicUsize, Ordering},
    time::Instant,
};
use xr_sourcebuild::{ShaderStage, SourceDesc};
use xr_spirv::{SpirvCompiler, SpirvOptions, TargetEnv};

/// Arguments of `xr-bench spirv-throughput`.
#[derive(clap::Args)]
pub struct Args {
    /// Number of shader files.
    #[arg(long, default_value_t = 200)]
    files: usize,
    /// Parallel jobs for both sides.
    #[arg(long, default_value_t = 2)]
    jobs: usize,
}

/// glslc's flags for the same module XR makes for Vulkan 1.0.
const GLSLC_FLAGS: [&str; 6] =
    ["--target-env=vulkan1.0", "-fauto-map-locations", "-fauto-bind-uniforms", "-g", "-O0", "-c"];

fn shader(index: usize) -> String {
    format!(
        "#version 450
layout(std140, binding = 0) uniform Frame {{ mat4 view_projection; vec4 light; float time; }};
layout(location = 0) in vec3 position;
layout(location = 1) in vec3 normal;
layout(location = 0) out vec3 v_normal;
layout(location = 1) out float v_shade;
float wave(float x) {{ return sin(x * {k}.0 + time) * 0.5 + 0.5; }}
void main() {{
    float shade = 0.0;
    for (int i = 0; i < {taps}; i++) {{ shade += wave(position.x + float(i)) * dot(normal, light.xyz); }}
    v_shade = shade / {taps}.0;
    v_normal = normal;
    gl_Position = view_projection * vec4(position + normal * {k}.0 * 0.01, 1.0);
}}
",
        k = index % 17 + 1,
        taps = index % 5 + 2,
    )
}

/// Runs the benchmark and prints the table.
pub fn run(args: Args) -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("xr-bench-spirv-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("xr"))?;
    std::fs::create_dir_all(dir.join("glslc"))?;
    let files: Vec<PathBuf> = (0..args.files)
        .map(|i| {
            let path = dir.join(format!("shader{i:03}.vert"));
            std::fs::write(&path, shader(i)).map(|()| path)
        })
        .collect::<Result<_, _>>()?;
    eprintln!("xr-bench: {} files, {} jobs, in {}", files.len(), args.jobs, dir.display());

    // Both sides run twice; the second run is reported (the first warms disks and caches).
    let mut xr = (0.0, 0.0);
    let mut glslc = 0.0;
    for _ in 0..2 {
        xr = xr_side(&files, &dir.join("xr"), args.jobs)?;
        glslc = glslc_side(&files, &dir.join("glslc"), args.jobs)?;
    }
    for file in &files {
        let name = file.file_name().context("file name")?;
        let ours = std::fs::read(dir.join("xr").join(name).with_extension("spv"))?;
        let theirs = std::fs::read(dir.join("glslc").join(name).with_extension("spv"))?;
        if ours != theirs {
            bail!("{}: XR and glslc made different SPIR-V", file.display());
        }
    }
    println!("| compiler | files | jobs | wall ms | files/s | vs glslc |");
    println!("|---|---|---|---|---|---|");
    let rate = |ms: f64| files.len() as f64 / (ms / 1000.0);
    println!(
        "| glslc, one process per file | {} | {} | {glslc:.0} | {:.0} | 1.00x |",
        files.len(),
        args.jobs,
        rate(glslc)
    );
    println!(
        "| XR SPIR-V core, in process, compile only | {} | {} | {:.0} | {:.0} | {:.2}x |",
        files.len(),
        args.jobs,
        xr.0,
        rate(xr.0),
        glslc / xr.0
    );
    println!(
        "| XR SPIR-V core, in process, compile + spirv-val | {} | {} | {:.0} | {:.0} | {:.2}x |",
        files.len(),
        args.jobs,
        xr.1,
        rate(xr.1),
        glslc / xr.1
    );
    println!("\nOutputs: byte-identical for all {} files; every module passed spirv-val.", files.len());
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// (compile only, compile + validation) wall times in ms; writes the .spv files.
fn xr_side(files: &[PathBuf], out: &Path, jobs: usize) -> anyhow::Result<(f64, f64)> {
    let options = SpirvOptions::new(TargetEnv::Vulkan10);
    let compile_all = |validate: bool| {
        // One compiler per worker, started inside the timing as glslc's start-up is.
        timed_pool(files, jobs, SpirvCompiler::new, |compiler, file| {
            let desc = SourceDesc::read("glsl", ShaderStage::Vertex, file)?;
            let module = if validate {
                compiler.compile(&desc, &options)?
            } else {
                compiler.compile_unvalidated(&desc, &options)?
            };
            let name = file.file_name().context("file name")?;
            std::fs::write(out.join(name).with_extension("spv"), module.to_bytes())?;
            Ok(())
        })
    };
    let compile_only = compile_all(false)?;
    let with_validation = compile_all(true)?;
    Ok((compile_only, with_validation))
}

/// Wall time in ms of `glslc` once per file, `jobs` at a time.
fn glslc_side(files: &[PathBuf], out: &Path, jobs: usize) -> anyhow::Result<f64> {
    timed_pool(
        files,
        jobs,
        || Ok::<_, anyhow::Error>(()),
        |(), file| {
            let name = file.file_name().context("file name")?;
            let status = Command::new("glslc")
                .args(GLSLC_FLAGS)
                .arg(file)
                .arg("-o")
                .arg(out.join(name).with_extension("spv"))
                .status()
                .context("running glslc (Debian package glslc)")?;
            if !status.success() {
                bail!("glslc failed on {}", file.display());
            }
            Ok(())
        },
    )
}

/// Wall time in ms of `work` on every file, `jobs` workers each taking the
/// next file and holding its own `init` state. A plain scoped pool, not
/// rayon, so that each worker's state is made exactly once and timed.
fn timed_pool<S, E>(
    files: &[PathBuf],
    jobs: usize,
    init: impl Fn() -> Result<S, E> + Sync,
    work: impl Fn(&S, &Path) -> anyhow::Result<()> + Sync,
) -> anyhow::Result<f64>
where
    anyhow::Error: From<E>,
{
    let next = AtomicUsize::new(0);
    let start = Instant::now();
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                scope.spawn(|| -> anyhow::Result<()> {
                    let state = init()?;
                    while let Some(file) = files.get(next.fetch_add(1, Ordering::Relaxed)) {
                        work(&state, file)?;
                    }
                    Ok(())
                })
            })
            .collect();
        for worker in workers {
            worker.join().map_err(|_| anyhow::anyhow!("worker panicked"))??;
        }
        Ok(())
    })?;
    Ok(start.elapsed().as_secs_f64() * 1e3)
}
