//! `xr`: the XR command line.

mod plugins;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// XR: shader build systems and rendering back ends as plugins.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List every plugin found, what each provides, and the live devices' capabilities.
    Plugins {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Search these directories instead of XR_PLUGIN_PATH and the directory of `xr`.
        #[arg(long = "plugin-dir", value_name = "DIR")]
        plugin_dirs: Vec<PathBuf>,
        /// List every extension of each device.
        #[arg(long)]
        extensions: bool,
    },
}

fn main() -> anyhow::Result<()> {
    let level = std::env::var("XR_LOG").ok().and_then(|v| v.parse().ok()).unwrap_or(tracing::Level::WARN);
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_max_level(level)
        .init();
    match Cli::parse().command {
        Command::Plugins { json, plugin_dirs, extensions } => plugins::run(json, plugin_dirs, extensions),
    }
}
