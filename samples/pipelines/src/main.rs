//! `pipelines`: 6 program pipelines from 5 stored stage binaries, one PNG.

use anyhow::Context;
use clap::Parser;
use pipelines::{default_shader_dir, render};
use std::path::PathBuf;
use xr_host::Registry;

/// Render every vertex × fragment stage combination through program pipelines.
#[derive(Parser)]
struct Args {
    /// Where to write the PNG grid.
    #[arg(long, default_value = "target/xr-samples/pipelines.png")]
    out: PathBuf,
    /// The store holding the stage programs' binaries.
    #[arg(long, default_value = "target/xr-store")]
    store: PathBuf,
    /// Directory holding the stage sources.
    #[arg(long)]
    shaders: Option<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    let level = xr_host::log_level().unwrap_or(tracing::Level::WARN);
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(level).init();
    let args = Args::parse();
    let registry = Registry::discover();
    let shaders = args.shaders.unwrap_or_else(default_shader_dir);
    let rendered = render(&registry, &shaders, &args.store).context("rendering the pipelines")?;
    triangle::write_png(&rendered.image, &args.out).context("writing the PNG")?;
    println!("{:<14} {:<15} why", "stage program", "loaded from");
    for (program, report) in &rendered.loads {
        println!("{program:<14} {:<15} {}", report.path.to_string(), report.reason);
    }
    println!(
        "pipelines: wrote 6 pipelines as a {}x{} grid to {}",
        rendered.image.width,
        rendered.image.height,
        args.out.display()
    );
    Ok(())
}
