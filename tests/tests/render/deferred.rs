//! The deferred sample through every path: a bindless G-buffer pass into
//! three attachments and a lighting pass reading them give the same image
//! on OpenGL (textures) and Vulkan (input attachments, under the
//! validation layers with pipelines, and with shader objects without them).

use deferred::{ALBEDOS, BACKGROUND, CHOSEN, PATHS, SIZE, render};
use xr_device::{DeviceKind, DeviceOptions, Image};
use xr_tests::registry;

fn worst(a: &Image, b: &Image) -> u8 {
    a.rgba.iter().zip(b.rgba.iter()).map(|(x, y)| x.abs_diff(*y)).max().unwrap_or(0)
}

#[test]
fn the_deferred_sample_renders_the_same_through_every_path() {
    let registry = registry();
    let images: Vec<Image> = PATHS
        .iter()
        .map(|p| {
            let options = DeviceOptions { validation: p.kind == DeviceKind::VULKAN, ..DeviceOptions::default() };
            render(&registry, *p, &options).unwrap_or_else(|e| panic!("{}: {e}", p.name))
        })
        .collect();
    for (path, image) in PATHS.iter().zip(&images) {
        assert_eq!((image.width, image.height), (SIZE, SIZE));
        // The G-buffer holds the same texels and normals on every path (one
        // rasteriser, RGBA16F normals); the lighting is compiled by two
        // compilers (GL's own, glslang's SPIR-V), which may round one step apart.
        let differs = worst(&images[0], image);
        assert!(differs <= 1, "{}: differs from {} by {differs}", path.name, PATHS[0].name);
        let rgba = |c: [f32; 4]| c.map(|v| (v * 255.0).round() as u8);
        assert_eq!(image.pixel(1, 1), Some(rgba(BACKGROUND)), "{}: where nothing is drawn", path.name);
        // The cube shows the chosen texture (blue) and none of the others
        // (red, green, grey): blue dominates every lit pixel.
        let [dark, light] = ALBEDOS[CHOSEN as usize];
        assert!(dark[2] > dark[0] && light[2] > light[0]);
        let (mut cube, mut blue) = (0, 0);
        for y in 0..SIZE {
            for x in 0..SIZE {
                let pixel = image.pixel(x, y).unwrap();
                if pixel != rgba(BACKGROUND) {
                    cube += 1;
                    if pixel[2] > pixel[0] && pixel[2] > pixel[1] {
                        blue += 1;
                    }
                }
            }
        }
        assert!(cube > 3000 && blue == cube, "{}: {blue} of {cube} cube pixels blue", path.name);
    }
    // Without the layers the setup's lavapipe draws with shader objects
    // (the lighting pass reads its input attachments by local read): the
    // same bytes as its pipelines under the layers.
    for (path, pipelines) in PATHS.iter().zip(&images).filter(|(p, _)| p.kind == DeviceKind::VULKAN) {
        let objects =
            render(&registry, *path, &DeviceOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", path.name));
        assert!(
            objects.rgba == pipelines.rgba,
            "{}: shader objects and pipelines differ by {}",
            path.name,
            worst(&objects, pipelines)
        );
    }
}
