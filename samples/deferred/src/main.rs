//! `deferred`: a bindless G-buffer pass into three attachments, a lighting
//! pass reading them, through each path; one PNG per path.

fn main() -> anyhow::Result<()> {
    triangle::parse_path_args!("Render the deferred-shaded cube through every path.")
        .write_each_path("deferred", deferred::render)
}
