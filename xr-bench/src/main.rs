//! `xr-bench`: XR's benchmarks. Run `scripts/bench.sh` (it builds the
//! plugins in release first).

mod program_binaries;

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
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().bench {
        Bench::GlProgramBinaries(args) => program_binaries::run(args),
    }
}
