//! `triangle`: renders the sample triangle and writes a PNG.

use anyhow::Context;
use clap::Parser;
use std::path::PathBuf;
use triangle::{PathArgs, TriangleParams, default_shader_dir, render_path, translation, write_png};
use xr_host::Registry;

/// Render a triangle through XR's plugins into a PNG.
#[derive(Parser)]
struct Args {
    #[command(flatten)]
    common: PathArgs,
    /// Directory holding triangle.vert, triangle.frag and their includes.
    #[arg(long)]
    shaders: Option<PathBuf>,
    /// Triangle colour as four numbers from 0 to 1.
    #[arg(long, num_args = 4, value_names = ["R", "G", "B", "A"], default_values_t = [1.0, 0.5, 0.0, 1.0])]
    color: Vec<f32>,
    /// Move the triangle by X and Y in clip space.
    #[arg(long, num_args = 2, value_names = ["X", "Y"], allow_negative_numbers = true, default_values_t = [0.0, 0.0])]
    offset: Vec<f32>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let registry = Registry::discover();
    for skipped in registry.skipped() {
        eprintln!("skipped {}: {}", skipped.path.display(), skipped.reason);
    }
    let params = TriangleParams {
        color: [args.color[0], args.color[1], args.color[2], args.color[3]],
        transform: translation(args.offset[0], args.offset[1]),
    };
    let shaders = args.shaders.unwrap_or_else(default_shader_dir);
    let options = args.common.options();
    let paths = args.common.paths().map_err(anyhow::Error::msg)?;
    let mut failed = 0;
    for path in paths {
        match render_path(&registry, path, &params, &shaders, &options) {
            Ok(image) => {
                let out = args.common.out.join(format!("triangle-{}.png", path.name));
                write_png(&image, &out).context("writing the PNG")?;
                println!(
                    "triangle: {:<9} wrote {}x{} image to {}",
                    path.name,
                    image.width,
                    image.height,
                    out.display()
                );
            }
            Err(e) => {
                failed += 1;
                println!("triangle: {:<9} not rendered: {e}", path.name);
            }
        }
    }
    if failed > 0 && args.common.path.is_some() {
        anyhow::bail!("the triangle did not render");
    }
    Ok(())
}
