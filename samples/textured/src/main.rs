//! `textured`: a compute pass paints a texture, a lit cube samples it
//! (indexed, depth-tested), through each path; one PNG per path.

use anyhow::Context;
use clap::Parser;
use std::path::PathBuf;
use textured::{PATHS, render, write_png};
use xr_device::DeviceOptions;
use xr_host::Registry;

/// Render the textured, compute-painted cube through every path.
#[derive(Parser)]
struct Args {
    /// Where to write the PNGs (textured-<path>.png).
    #[arg(long, default_value = "target/xr-samples")]
    out: PathBuf,
    /// Only this path (gl-glsl, gl-spirv, vk-spirv).
    #[arg(long)]
    path: Option<String>,
    /// Turn on the Vulkan validation layers; any message is an error.
    #[arg(long)]
    validation: bool,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let registry = Registry::discover();
    let options = DeviceOptions { validation: args.validation, ..DeviceOptions::default() };
    let paths: Vec<_> = PATHS.iter().filter(|p| args.path.as_deref().is_none_or(|name| name == p.name)).collect();
    anyhow::ensure!(!paths.is_empty(), "no path named {:?} (gl-glsl, gl-spirv, vk-spirv)", args.path);
    for path in paths {
        let image = render(&registry, *path, &options).with_context(|| format!("rendering through {}", path.name))?;
        let file = args.out.join(format!("textured-{}.png", path.name));
        write_png(&image, &file)?;
        println!("{:<9} -> {}", path.name, file.display());
    }
    Ok(())
}
