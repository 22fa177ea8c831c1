//! `meshlets`: the textured cube drawn by task and mesh stages, written to
//! PNG beside the vertex pipeline's image of it; fails where the two differ.

use anyhow::bail;

fn main() -> anyhow::Result<()> {
    let args = triangle::parse_path_args!(
        "Draw the cube through task and mesh stages and compare it with the vertex pipeline."
    );
    args.render_each(meshlets::skipped, meshlets::render, |path, rendered| {
        let file = args.out.join(format!("meshlets-{}.png", path.name));
        meshlets::write_png(&rendered.meshlets, &file)?;
        let differing = meshlets::differing_pixels(&rendered.meshlets, &rendered.vertex_pipeline);
        println!(
            "{:<9} -> {} ({} of 6 faces drawn after culling; {differing} pixels differ from the vertex pipeline's)",
            path.name,
            file.display(),
            rendered.faces_drawn
        );
        if differing != 0 {
            let vertex = args.out.join(format!("meshlets-{}-vertex-pipeline.png", path.name));
            meshlets::write_png(&rendered.vertex_pipeline, &vertex)?;
            bail!(
                "the mesh stages drew {differing} pixels unlike the vertex pipeline (its image: {})",
                vertex.display()
            );
        }
        Ok(())
    })
}
