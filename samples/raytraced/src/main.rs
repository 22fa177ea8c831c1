//! `raytraced`: the textured cube traced through a ray tracing pipeline,
//! written to PNG beside its raster image; fails where the two differ
//! beyond the bounds the sample's library documents.

use anyhow::bail;

fn main() -> anyhow::Result<()> {
    let args = triangle::parse_path_args!(
        "Trace the cube through a ray tracing pipeline and compare it with the raster image."
    );
    args.render_each(raytraced::skipped, raytraced::render, |path, rendered| {
        let file = args.out.join(format!("raytraced-{}.png", path.name));
        raytraced::write_png(&rendered.traced, &file)?;
        let raster = args.out.join(format!("raytraced-{}-raster.png", path.name));
        raytraced::write_png(&rendered.raster, &raster)?;
        let c = raytraced::compare(&rendered.traced, &rendered.raster, raytraced::background());
        println!(
            "{:<9} -> {} ({} pixels of the cube; against the raster image: {} on the silhouette, {} shaded apart, \
             largest difference {})",
            path.name,
            file.display(),
            c.covered,
            c.silhouette,
            c.shaded,
            c.largest
        );
        if !c.within_bounds() {
            bail!(
                "the traced cube differs from the raster one beyond the bounds ({} silhouette pixels of at most {}, \
                 {} shaded of at most {}; the raster image: {})",
                c.silhouette,
                raytraced::MAX_SILHOUETTE_PIXELS,
                c.shaded,
                raytraced::MAX_SHADED_PIXELS,
                raster.display()
            );
        }
        Ok(())
    })
}
