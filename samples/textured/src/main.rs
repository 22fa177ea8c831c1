//! `textured`: a compute pass paints a texture, a lit cube samples it
//! (indexed, depth-tested), through each path; one PNG per path.

use clap::Parser;

/// Render the textured, compute-painted cube through every path.
#[derive(Parser)]
struct Args {
    #[command(flatten)]
    common: triangle::PathArgs,
}

fn main() -> anyhow::Result<()> {
    Args::parse().common.write_each_path("textured", textured::render)
}
