//! `xr-bench`: XR's benchmarks. Run `scripts/bench.sh` (it builds the
//! plugins in release first).

mod child;
mod constant_setters;
mod not_ready;
mod plot_build;
mod program_binaries;
mod slang;
mod spirv_throughput;
mod vulkan_load;
mod warm;
mod wgpu_load;

use clap::{Parser, Subcommand};

/// XR benchmarks.
#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    bench: Bench,
}

#[derive(Subcommand)]
enum Bench {
    /// GL programs built from source vs loaded from stored program binaries,
    /// to "ready" and to "first draw done", with Mesa's shader cache cold and warm.
    GlProgramBinaries(program_binaries::Args),
    /// XR's SPIR-V core in process against glslc once per file, 2 jobs each.
    SpirvThroughput(spirv_throughput::Args),
    /// Setting a constant by handle against glProgramUniform* and push-constant writes.
    ConstantSetters(constant_setters::Args),
    /// Draws scripts/bench-build.sh's scale series as a PNG.
    PlotBuild(plot_build::Args),
    /// Cold `xr build` of a Slang matrix against the same compiles through
    /// the Slang library directly, and per-thread sessions against one shared.
    Slang(slang::Args),
    /// Vulkan: pipelines against shader objects at the first draw into new
    /// formats and over frames, and SPIR-V with a warm pipeline cache
    /// against stored shader binaries at load.
    VulkanLoad(vulkan_load::Args),
    /// Program load and first draw on wgpu: SPIR-V with and without the stored
    /// pipeline cache, WGSL through naga, and XR's own Vulkan path.
    WgpuLoad(wgpu_load::Args),
    /// The scene's first frame and frames without and with `xr warm` first,
    /// on pipelines and shader objects, and `xr build --used` against the matrix.
    Warm(warm::Args),
    /// The scene into new target formats with no warm, per device path and
    /// per policy for a program not ready (wait, skip, fallback).
    NotReady(not_ready::Args),
    /// (Used by `slang`: the direct compiles in a child process.)
    #[command(hide = true)]
    SlangDirect(slang::DirectArgs),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().bench {
        Bench::GlProgramBinaries(args) => program_binaries::run(args),
        Bench::SpirvThroughput(args) => spirv_throughput::run(args),
        Bench::PlotBuild(args) => plot_build::run(args),
        Bench::ConstantSetters(args) => constant_setters::run(args),
        Bench::Slang(args) => slang::run(args),
        Bench::VulkanLoad(args) => vulkan_load::run(args),
        Bench::WgpuLoad(args) => wgpu_load::run(args),
        Bench::Warm(args) => warm::run(args),
        Bench::NotReady(args) => not_ready::run(args),
        Bench::SlangDirect(args) => slang::run_direct(args),
    }
}
