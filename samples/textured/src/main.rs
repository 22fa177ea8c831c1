//! `textured`: a compute pass paints a texture, a lit cube samples it
//! (indexed, depth-tested), through each path; one PNG per path.

fn main() -> anyhow::Result<()> {
    triangle::parse_path_args!("Render the textured, compute-painted cube through every path.")
        .write_each_path("textured", textured::render)
}
