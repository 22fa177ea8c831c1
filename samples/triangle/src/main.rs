//! `triangle`: renders the sample triangle and writes a PNG.

use anyhow::Context;
use clap::Parser;
use std::path::PathBuf;
use triangle::{TriangleParams, default_shader_dir, render, translation, write_png};
use xr_sourcebuild::Registry;

/// Render a triangle through XR's plugins into a PNG.
#[derive(Parser)]
struct Args {
    /// Where to write the PNG.
    #[arg(long, default_value = "target/xr-samples/triangle.png")]
    out: PathBuf,
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
    let image = render(&registry, &params, &shaders).context("rendering the triangle")?;
    write_png(&image, &args.out).context("writing the PNG")?;
    println!("triangle: wrote {}x{} image to {}", image.width, image.height, args.out.display());
    Ok(())
}
