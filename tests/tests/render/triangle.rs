//! The triangle sample, rendered through plugins loaded from disk.

use triangle::{CLEAR, SIZE, TriangleParams, default_shader_dir, render, translation};
use xr_tests::{Xr, assert_rgba_near, registry, rgba8, temp_dir};

/// Pixel coordinates (x right, y down) of a clip-space point.
fn to_pixel(x: f32, y: f32) -> (u32, u32) {
    let px = ((x + 1.0) * 0.5 * SIZE as f32) as u32;
    let py = ((1.0 - (y + 1.0) * 0.5) * SIZE as f32) as u32;
    (px, py)
}

#[test]
fn renders_the_colour_and_transform_set_through_the_constant_table() {
    let registry = registry();
    for (color, offset) in [([1.0, 0.5, 0.0, 1.0], (0.0, 0.0)), ([0.2, 0.4, 1.0, 1.0], (0.4, -0.3))] {
        let params = TriangleParams { color, transform: translation(offset.0, offset.1) };
        let image = render(&registry, &params, &default_shader_dir()).expect("renders");
        assert_eq!((image.width, image.height), (SIZE, SIZE));
        // Inside: the triangle's centroid, moved by the offset.
        let (x, y) = to_pixel(offset.0, -1.0 / 6.0 + offset.1);
        assert_rgba_near(image.pixel(x, y).unwrap(), rgba8(color), 1);
        // Outside: corners, and a point just above the apex.
        for (x, y) in [(0, 0), (SIZE - 1, SIZE - 1), (0, SIZE - 1)] {
            assert_eq!(image.pixel(x, y).unwrap(), rgba8(CLEAR), "corner ({x}, {y})");
        }
        let (x, y) = to_pixel(offset.0, 0.6 + offset.1);
        assert_eq!(image.pixel(x, y).unwrap(), rgba8(CLEAR), "above the apex");
        // Below the base-left corner, outside the triangle.
        let (x, y) = to_pixel(-0.45 + offset.0, -0.6 + offset.1);
        assert_eq!(image.pixel(x, y).unwrap(), rgba8(CLEAR), "below the base");
        let covered = image.rgba.chunks_exact(4).filter(|p| *p == rgba8(color)).count();
        // The triangle covers 1/8 of clip space: 2048 of 16384 pixels, give or take its edges.
        assert!((1900..2200).contains(&covered), "{covered} pixels covered");
    }
}

#[test]
fn the_sample_binary_writes_one_png_per_path_and_they_agree() {
    let out = temp_dir("triangle-bin");
    let stdout = Xr::sample(
        "triangle",
        ["--out", out.to_str().unwrap(), "--color", "0", "1", "0", "1", "--offset", "0.3", "-0.2", "--validation"],
    )
    .software_gl()
    .ok()
    .stdout;
    let mut decoded = Vec::new();
    for path in ["gl-glsl", "gl-spirv", "vk-spirv"] {
        let file = out.join(format!("triangle-{path}.png"));
        assert!(stdout.contains(file.to_str().unwrap()), "{stdout}");
        let bytes = std::fs::read(&file).expect("png written");
        assert_eq!(&bytes[1..4], b"PNG");
        decoded.push(bytes);
    }
    // The same scene through three paths on Mesa's software rasterizer: identical files.
    assert_eq!(decoded[0], decoded[1]);
    assert_eq!(decoded[0], decoded[2]);

    // What the flags asked for: green, moved by (0.3, -0.2).
    let png = image::load_from_memory(&decoded[0]).expect("a PNG").to_rgba8();
    assert_eq!(png.dimensions(), (SIZE, SIZE));
    let pixel = |(x, y): (u32, u32)| png.get_pixel(x, y).0;
    let green = rgba8([0.0, 1.0, 0.0, 1.0]);
    assert_eq!(pixel(to_pixel(0.3, -1.0 / 6.0 - 0.2)), green, "the centroid, moved");
    assert_eq!(pixel(to_pixel(0.0, -1.0 / 6.0)), rgba8(CLEAR), "the unmoved centroid is left of the moved triangle");
    assert_eq!(pixel(to_pixel(0.3, 0.6 - 0.2)), rgba8(CLEAR), "above the moved apex");
    let covered = png.pixels().filter(|p| p.0 == green).count();
    assert!((1900..2200).contains(&covered), "{covered} green pixels");
}
