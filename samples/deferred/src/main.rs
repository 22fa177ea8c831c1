//! `deferred`: a bindless G-buffer pass into three attachments, a lighting
//! pass reading them, through each path; one PNG per path.

use clap::Parser;

/// Render the deferred-shaded cube through every path.
#[derive(Parser)]
struct Args {
    #[command(flatten)]
    common: triangle::PathArgs,
}

fn main() -> anyhow::Result<()> {
    Args::parse().common.write_each_path("deferred", deferred::render)
}
