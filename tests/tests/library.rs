//! The run-time library over a store `xr build` wrote: the materials scene
//! through every load path, and what happens when the store is damaged or
//! the request is wrong.

use materials::{SCENE, SIZE, tile_rect};
use std::process::Command;
use xr_build::{
    LoadPath, Target,
    library::{DeviceLoader, LibraryError, LoadRequest, ShaderLibrary},
};
use xr_device::{DeviceKind, DeviceOptions, Image};
use xr_sourcebuild::ObjectKey;
use xr_tests::{assert_rgba_near, executable, materials_built, registry, rgba8};

/// The pixel at (`u`, `v`) of tile `index` (v up, as the shaders see it).
fn pixel_at(image: &Image, index: usize, u: f32, v: f32) -> [u8; 4] {
    let [x0, y0, w, h] = tile_rect(index);
    let (x, y) = (x0 + u * w, y0 + v * h);
    let px = ((x + 1.0) * 0.5 * SIZE as f32) as u32;
    let py = ((1.0 - y) * 0.5 * SIZE as f32) as u32;
    image.pixel(px, py).expect("inside the image")
}

fn decode(path: &std::path::Path) -> Vec<u8> {
    image::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).to_rgba8().into_raw()
}

#[test]
fn the_sample_renders_the_scene_through_every_path_into_identical_images() {
    let dir = materials_built("library-sample");
    let out = dir.join("out");
    let output = Command::new(executable("materials"))
        .args(["--store", dir.join("store").to_str().unwrap(), "--out", out.to_str().unwrap()])
        .env("XR_GL_DEVICE", "software")
        .env_remove("XR_PLUGIN_PATH")
        .output()
        .expect("sample runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));

    let rows = |run: &str| -> Vec<String> {
        stdout.lines().filter(|l| l.starts_with(&format!("{run} ")) && !l.contains("->")).map(str::to_owned).collect()
    };
    let path_of = |row: &str| {
        row.split_whitespace().rev().find(|w| ["device-binary", "spirv", "source"].contains(w)).map(str::to_owned)
    };
    for (run, path, target) in [
        ("gl-source", "source", "gl-glsl"),
        ("gl-device-binary", "device-binary", "gl-glsl"),
        ("gl-spirv", "spirv", "gl-spirv"),
        ("gl-best", "device-binary", "gl-glsl"),
        ("vk-spirv", "spirv", "vk-spirv"),
        ("vk-source", "source", "vk-spirv"),
        ("vk-best", "spirv", "vk-spirv"),
    ] {
        let rows = rows(run);
        assert_eq!(rows.len(), SCENE.len(), "{run}: one row per tile in\n{stdout}");
        for row in rows {
            assert!(row.contains(&format!(" {path} ")) && row.contains(&format!(" {target} ")), "{run}: {row}");
            let _ = path_of(&row);
        }
    }
    assert!(rows("gl-source")[0].contains("program binary written back to the store"), "{stdout}");

    let reference = decode(&out.join("materials-gl-source.png"));
    for run in ["gl-device-binary", "gl-spirv", "gl-best", "vk-spirv", "vk-source", "vk-best"] {
        let image = decode(&out.join(format!("materials-{run}.png")));
        let worst = reference.iter().zip(&image).map(|(a, b)| a.abs_diff(*b)).max().unwrap();
        assert!(worst <= 1, "{run} differs from gl-source by up to {worst}");
    }

    let image = Image { width: SIZE, height: SIZE, rgba: reference.into() };
    // unlit, flat: the base colour.
    assert_rgba_near(pixel_at(&image, 0, 0.5, 0.5), rgba8([0.2, 0.6, 1.0, 1.0]), 1);
    // unlit, checker, GAIN = 0.5 at load time: half the base colour on a light cell.
    assert_rgba_near(pixel_at(&image, 2, 0.25, 0.25), rgba8([0.5, 0.4, 0.1, 1.0]), 2);
    // lit, checker, BIAS = 0.2: 0.3 * (0.2 + 0.8 * 2/3) + 0.2 on a light cell.
    let lit = 0.2 + 0.8 * (2.0 / 3.0);
    assert_rgba_near(
        pixel_at(&image, 5, 0.25, 0.25),
        rgba8([0.3 * lit + 0.2, 0.3 * lit + 0.2, 0.8 * lit + 0.2, 1.0]),
        3,
    );
    // toon, flat, 2 bands: full light at the centre.
    assert_rgba_near(pixel_at(&image, 6, 0.5, 0.5), rgba8([0.2, 0.9, 0.3, 1.0]), 2);
    // The clear colour between tiles.
    assert_rgba_near(image.pixel(0, 0).unwrap(), rgba8(materials::CLEAR), 1);
}

/// Loads `unlit[TINT=0,PATTERN=flat]` on a device of `kind` with every path allowed.
fn load_unlit(library: &ShaderLibrary, kind: DeviceKind) -> (LoadPath, Target, String) {
    let registry = registry();
    let device = registry.open_device(kind, &DeviceOptions::default()).expect("device");
    let mut loader = DeviceLoader::attach(&registry, &device, library).expect("attach");
    let request =
        LoadRequest { program: "unlit", variant: vec![("TINT", "0"), ("PATTERN", "flat")], ..LoadRequest::default() };
    let loaded = loader.load(library, &request).expect("loads");
    let result = (loaded.path, loaded.target, loaded.reason.clone());
    drop(loaded);
    drop(loader);
    result
}

fn corrupt_object(dir: &std::path::Path, library: &ShaderLibrary, target: Target) {
    let hex = library.program("unlit").unwrap().object("unlit[TINT=0,PATTERN=flat]", target).unwrap().to_owned();
    let path = library.store().path_of(&ObjectKey::from_hex(&hex).unwrap());
    assert!(path.starts_with(dir));
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&path, bytes).unwrap();
}

#[test]
fn a_corrupt_object_falls_back_to_the_next_path_and_says_why() {
    let dir = materials_built("library-corrupt");
    let library = ShaderLibrary::open(&dir.join("store")).unwrap();

    // OpenGL: no device binary yet, SPIR-V corrupt → built from source, binary written back.
    corrupt_object(&dir, &library, Target::GlSpirv);
    let (path, target, reason) = load_unlit(&library, DeviceKind::OpenGl);
    assert_eq!((path, target), (LoadPath::Source, Target::GlGlsl), "{reason}");
    assert!(reason.contains("no program binary of this driver yet"), "{reason}");
    assert!(reason.contains("spirv: its gl-spirv object is unusable") && reason.contains("corrupt object"), "{reason}");
    // The binary it wrote back is the best path next time.
    let (path, _, reason) = load_unlit(&library, DeviceKind::OpenGl);
    assert_eq!(path, LoadPath::DeviceBinary, "{reason}");

    // Vulkan: SPIR-V corrupt → the stored sources compiled on the spot.
    corrupt_object(&dir, &library, Target::VkSpirv);
    let (path, target, reason) = load_unlit(&library, DeviceKind::Vulkan);
    assert_eq!((path, target), (LoadPath::Source, Target::VkSpirv), "{reason}");
    assert!(reason.contains("its vk-spirv object is unusable"), "{reason}");
}

#[test]
fn a_request_that_misses_an_axis_or_names_an_unknown_one_is_refused() {
    let dir = materials_built("library-requests");
    let library = ShaderLibrary::open(&dir.join("store")).unwrap();
    let registry = registry();
    let device = registry.open_device(DeviceKind::OpenGl, &DeviceOptions::default()).expect("device");
    let mut loader = DeviceLoader::attach(&registry, &device, &library).expect("attach");
    let mut load = |request: LoadRequest<'_>| match loader.load(&library, &request) {
        Ok(_) => panic!("{request:?} loaded"),
        Err(e) => e,
    };
    let missing =
        load(LoadRequest { program: "lit", variant: vec![("TINT", "0"), ("PATTERN", "flat")], ..Default::default() });
    assert!(missing.to_string().contains("needs a value for axis 'BANDS'"), "{missing}");
    let unknown = load(LoadRequest {
        program: "unlit",
        variant: vec![("TINT", "0"), ("PATTERN", "flat"), ("BANDS", "1")],
        ..Default::default()
    });
    assert!(unknown.to_string().contains("has no axis 'BANDS'"), "{unknown}");
    let value = load(LoadRequest {
        program: "unlit",
        variant: vec![("TINT", "0"), ("PATTERN", "plaid")],
        ..Default::default()
    });
    assert!(value.to_string().contains("'plaid' is not a value of axis 'PATTERN'"), "{value}");
    let filtered = load(LoadRequest {
        program: "lit",
        variant: vec![("TINT", "0"), ("PATTERN", "flat"), ("BANDS", "3")],
        ..Default::default()
    });
    assert!(filtered.to_string().contains("is not a variant of the build"), "{filtered}");
    let overridden = load(LoadRequest {
        program: "unlit",
        variant: vec![("TINT", "0"), ("PATTERN", "flat")],
        overrides: vec![("GIAN", 2.0)],
        ..Default::default()
    });
    assert!(overridden.to_string().contains("no override 'GIAN' (it has: GAIN, BIAS)"), "{overridden}");
    let program = load(LoadRequest { program: "shiny", ..Default::default() });
    assert!(matches!(program, LibraryError::UnknownProgram { .. }), "{program}");
    drop(loader);
}
