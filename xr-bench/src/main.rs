//! `xr-bench`: XR's benchmarks. Run `scripts/bench.sh` (it builds the
//! plugins in release first).

mod program_binaries;
mod spirv_throughput;

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
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().bench {
        Bench::GlProgramBinaries(args) => program_binaries::run(args),
        Bench::SpirvThroughput(args) => spirv_throughput::run(args),
    }
}
