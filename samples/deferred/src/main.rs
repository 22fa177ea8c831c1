//! `deferred`: a bindless G-buffer pass into three attachments, a lighting
//! pass reading them, through each path; one PNG per path.

use anyhow::Context;
use clap::Parser;
use deferred::{render, write_png};
use xr_host::Registry;

/// Render the deferred-shaded cube through every path.
#[derive(Parser)]
struct Args {
    #[command(flatten)]
    common: triangle::PathArgs,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let registry = Registry::discover();
    let options = args.common.options();
    for path in args.common.paths().map_err(anyhow::Error::msg)? {
        let image = render(&registry, path, &options).with_context(|| format!("rendering through {}", path.name))?;
        let file = args.common.out.join(format!("deferred-{}.png", path.name));
        write_png(&image, &file)?;
        println!("{:<9} -> {}", path.name, file.display());
    }
    Ok(())
}
