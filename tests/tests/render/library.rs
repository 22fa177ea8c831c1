//! The run-time library over a store `xr build` wrote: the materials scene
//! through every load path, and what happens when the store is damaged or
//! the request is wrong.

use materials::{SCENE, SIZE, tile_rect};
use xr_device::{DeviceKind, DeviceOptions, Image};
use xr_library::{DeviceLoader, LibraryError, LoadPath, LoadRequest, ShaderLibrary};
use xr_plugin_kit::{decode_binary_record, encode_binary_record};
use xr_sourcebuild::ProgramBinary;
use xr_store::ObjectKey;
use xr_tests::{Xr, assert_rgba_near, materials_full_built, registry, rgba8, xr_build};

/// The pixel at (`u`, `v`) of tile `index` (v up, as the shaders see it).
fn pixel_at(image: &Image, index: usize, u: f32, v: f32) -> [u8; 4] {
    let [x0, y0, w, h] = tile_rect(index);
    let (x, y) = (x0 + u * w, y0 + v * h);
    let px = ((x + 1.0) * 0.5 * SIZE as f32) as u32;
    let py = ((1.0 - y) * 0.5 * SIZE as f32) as u32;
    image.pixel(px, py).expect("inside the image")
}

/// The path column of a row of the sample's table (after the variant, which
/// may carry overrides: the first of the known path names).
fn path_of(row: &str) -> &str {
    row.split_whitespace().find(|w| ["device-binary", "compatible-object", "source"].contains(w)).unwrap_or("")
}

/// The object column: the word after the path.
fn target_of(row: &str) -> &str {
    let words: Vec<&str> = row.split_whitespace().collect();
    words.iter().position(|w| *w == path_of(row)).and_then(|i| words.get(i + 1)).copied().unwrap_or("")
}

fn decode(path: &std::path::Path) -> Vec<u8> {
    image::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).to_rgba8().into_raw()
}

/// Runs the materials sample on the store in `dir`, writing its images to
/// `dir/out`; returns what it printed.
/// The wgpu runs' Wayland probe once printed `error:` lines on success.
fn render_sample(dir: &std::path::Path) -> String {
    let run = materials(dir).software_gl().ok();
    xr_tests::assert_quiet("materials", &run.stderr);
    run.stdout
}

/// The materials sample on the store in `dir`, writing its images to `dir/out`.
fn materials(dir: &std::path::Path) -> Xr {
    Xr::sample(
        "materials",
        ["--store", dir.join("store").to_str().unwrap(), "--out", dir.join("out").to_str().unwrap()],
    )
}

/// Runs the materials sample on llvmpipe over `dir`'s store with `extra`
/// arguments (program binaries off with `no_binaries`, as on a driver that
/// has none); it must succeed. Returns what it printed.
fn run_sample(dir: &std::path::Path, extra: &[&str], no_binaries: bool) -> String {
    let sample = materials(dir).args(extra).software_gl();
    let sample = if no_binaries { sample.env("XR_GL_PROGRAM_BINARIES", "off") } else { sample };
    sample.ok().stdout
}

/// The largest difference of one channel between two images' bytes.
fn worst_difference(a: &[u8], b: &[u8]) -> u8 {
    a.iter().zip(b).map(|(a, b)| a.abs_diff(*b)).max().unwrap_or(0)
}

#[test]
fn the_sample_renders_the_scene_through_every_path_into_identical_images() {
    let dir = materials_full_built("library-sample");
    let out = dir.join("out");
    let stdout = render_sample(&dir);

    let rows = |run: &str| -> Vec<String> {
        stdout.lines().filter(|l| l.starts_with(&format!("{run} ")) && !l.contains("->")).map(str::to_owned).collect()
    };
    for (run, path, target) in [
        ("gl-source", "source", "gl-glsl"),
        ("gl-device-binary", "device-binary", "gl-glsl"),
        ("gl-spirv", "compatible-object", "gl-spirv"),
        ("gl-best", "device-binary", "gl-glsl"),
        ("vk-spirv", "compatible-object", "vk-spirv"),
        ("vk-source", "source", "gl-glsl"),
        // vk-spirv wrote the driver's shader binaries back (lavapipe 25 has
        // shader objects): the library's choice is them.
        ("vk-best", "device-binary", "vk-spirv"),
        // wgpu loads the Vulkan SPIR-V on both of its back ends.
        ("wgpu-spirv", "compatible-object", "vk-spirv"),
        ("wgpu-gl-spirv", "compatible-object", "vk-spirv"),
    ] {
        let rows = rows(run);
        assert_eq!(rows.len(), SCENE.len(), "{run}: one row per tile in\n{stdout}");
        for row in rows {
            assert_eq!((path_of(&row), target_of(&row)), (path, target), "{run}: {row}");
        }
    }
    assert!(rows("gl-source")[0].contains("program binary written back to the store"), "{stdout}");
    assert!(rows("vk-spirv")[0].contains("shader binaries written back to the store"), "{stdout}");
    assert!(rows("vk-best")[0].contains("the driver's stored shader binaries"), "{stdout}");
    assert!(rows("wgpu-spirv").iter().all(|r| r.contains("SPIR-V passed through")), "{stdout}");
    assert!(rows("wgpu-gl-spirv").iter().all(|r| r.contains("SPIR-V through naga")), "{stdout}");

    // The same SPIR-V drawn with pipelines instead of shader objects.
    let pipelines = dir.join("pipelines");
    let store = dir.join("store");
    Xr::sample("materials", ["--store", store.to_str().unwrap(), "--out", pipelines.to_str().unwrap()])
        .args(["--run", "vk-spirv"])
        .env("XR_VK_SHADER_OBJECTS", "off")
        .ok();
    // Debian 12's lavapipe (Mesa 22.3) has no shader objects: pipelines.
    let debian = dir.join("debian-lavapipe");
    let said = Xr::sample("materials", ["--store", store.to_str().unwrap(), "--out", debian.to_str().unwrap()])
        .args(["--run", "vk-best"])
        .env("VK_DRIVER_FILES", xr_tests::SYSTEM_LAVAPIPE)
        .env("VK_ADD_DRIVER_FILES", "")
        .ok()
        .stdout;
    let first = said.lines().find(|l| l.starts_with("vk-best ")).unwrap_or_default();
    assert!(first.contains("compatible-object") && first.contains("gives no shader binaries back"), "{said}");
    let spirv = decode(&out.join("materials-vk-spirv.png"));
    assert_eq!(decode(&pipelines.join("materials-vk-spirv.png")), spirv, "pipelines and shader objects differ");
    assert_eq!(decode(&debian.join("materials-vk-best.png")), spirv, "Mesa 22.3's pipelines differ");
    assert_eq!(decode(&out.join("materials-vk-best.png")), spirv, "device binaries and SPIR-V differ");
    // wgpu hands lavapipe the same SPIR-V (passthrough), and llvmpipe the
    // GLSL naga writes from it: both draw their native path's pixels, byte
    // for byte.
    assert_eq!(decode(&out.join("materials-wgpu-spirv.png")), spirv, "wgpu on Vulkan differs from vk-spirv");
    let gl_spirv = decode(&out.join("materials-gl-spirv.png"));
    assert_eq!(decode(&out.join("materials-wgpu-gl-spirv.png")), gl_spirv, "wgpu on OpenGL differs from gl-spirv");

    let reference = decode(&out.join("materials-gl-source.png"));
    for run in ["gl-device-binary", "gl-spirv", "gl-best", "vk-spirv", "vk-source", "vk-best"] {
        let worst = worst_difference(&reference, &decode(&out.join(format!("materials-{run}.png"))));
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
fn load_unlit(library: &ShaderLibrary, kind: DeviceKind) -> (LoadPath, String, String) {
    let registry = registry();
    let device = registry.open_device(kind, &DeviceOptions::default()).expect("device");
    let mut loader = DeviceLoader::attach(&registry, &device, library).expect("attach");
    let request =
        LoadRequest { program: "unlit", variant: vec![("TINT", "0"), ("PATTERN", "flat")], ..LoadRequest::default() };
    let loaded = loader.load(library, &request).expect("loads");
    let result = (loaded.path, loaded.target.clone(), loaded.reason.clone());
    drop(loaded);
    drop(loader);
    result
}

fn corrupt_object(dir: &std::path::Path, library: &ShaderLibrary, target: &str) {
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
    let dir = materials_full_built("library-corrupt");
    let library = ShaderLibrary::open(&dir.join("store")).unwrap();

    // OpenGL: no device binary yet, SPIR-V corrupt → built from source, binary written back.
    corrupt_object(&dir, &library, "gl-spirv");
    let (path, target, reason) = load_unlit(&library, DeviceKind::OPENGL);
    assert_eq!((path, target.as_str()), (LoadPath::Source, "gl-glsl"), "{reason}");
    assert!(reason.contains("no program binary of this driver yet"), "{reason}");
    assert!(
        reason.contains("compatible-object: its gl-spirv object is unusable") && reason.contains("corrupt object"),
        "{reason}"
    );
    // The binary it wrote back is the best path next time.
    let (path, _, reason) = load_unlit(&library, DeviceKind::OPENGL);
    assert_eq!(path, LoadPath::DeviceBinary, "{reason}");

    // A stored binary whose bytes the driver refuses (its checksum is fine):
    // the next paths are tried (the SPIR-V is still corrupt), and the source
    // path writes a good binary over it.
    let store = library.store();
    for key in store.keys().unwrap() {
        // (The corrupt SPIR-V object does not read back; it is not a binary.)
        let Ok(Some(payload)) = store.get(&key) else { continue };
        if let Ok((identity, binary)) = decode_binary_record(&payload) {
            let garbage = ProgramBinary { format: binary.format, bytes: vec![0x5a; 64].into() };
            store.put(&key, &encode_binary_record("unlit[TINT=0,PATTERN=flat]", &identity, &garbage)).unwrap();
        }
    }
    let (path, target, reason) = load_unlit(&library, DeviceKind::OPENGL);
    assert_eq!((path, target.as_str()), (LoadPath::Source, "gl-glsl"), "{reason}");
    assert!(reason.contains("device-binary: driver rejected the stored binary"), "{reason}");
    let (path, _, reason) = load_unlit(&library, DeviceKind::OPENGL);
    assert_eq!(path, LoadPath::DeviceBinary, "the source path wrote a good binary back: {reason}");

    // Vulkan: SPIR-V corrupt → the stored sources compiled on the spot.
    corrupt_object(&dir, &library, "vk-spirv");
    let (path, target, reason) = load_unlit(&library, DeviceKind::VULKAN);
    assert_eq!((path, target.as_str()), (LoadPath::Source, "gl-glsl"), "{reason}");
    assert!(reason.contains("its vk-spirv object is unusable"), "{reason}");
}

/// Rewrites the stored Vulkan shader binaries of `library`'s store with
/// `change` applied to their record's driver identity and bytes; returns
/// how many records it rewrote.
fn rewrite_shader_binaries(
    library: &ShaderLibrary,
    change: impl Fn(&mut xr_plugin_kit::DriverIdentity, &mut Vec<u8>),
) -> usize {
    let store = library.store();
    let mut rewritten = 0;
    for key in store.keys().unwrap() {
        let Ok(Some(payload)) = store.get(&key) else { continue };
        let Ok((mut identity, binary)) = decode_binary_record(&payload) else { continue };
        if !identity.version.starts_with("shaderBinaryUUID") {
            continue;
        }
        let mut bytes = binary.bytes.to_vec();
        change(&mut identity, &mut bytes);
        let changed = ProgramBinary { format: binary.format, bytes: bytes.into() };
        store.put(&key, &encode_binary_record("unlit[TINT=0,PATTERN=flat]", &identity, &changed)).unwrap();
        rewritten += 1;
    }
    rewritten
}

#[test]
fn a_vulkan_shader_binary_of_another_driver_or_damaged_loads_from_spirv_and_is_made_again() {
    let dir = materials_full_built("library-vk-binaries");
    let library = ShaderLibrary::open(&dir.join("store")).unwrap();
    let (path, target, reason) = load_unlit(&library, DeviceKind::VULKAN);
    assert_eq!((path, target.as_str()), (LoadPath::CompatibleObject, "vk-spirv"), "{reason}");
    assert!(reason.contains("no shader binary of this driver yet"), "{reason}");
    assert!(reason.contains("shader binaries written back to the store"), "{reason}");
    let (path, _, reason) = load_unlit(&library, DeviceKind::VULKAN);
    assert_eq!(path, LoadPath::DeviceBinary, "{reason}");

    // Another driver build: refused by the record's UUID before the driver sees it.
    let flipped = rewrite_shader_binaries(&library, |identity, _| {
        let uuid = identity.version.split_off("shaderBinaryUUID ".len());
        let first = if uuid.starts_with('0') { '1' } else { '0' };
        identity.version.push(first);
        identity.version.push_str(&uuid[1..]);
    });
    assert_eq!(flipped, 1);
    let (path, target, reason) = load_unlit(&library, DeviceKind::VULKAN);
    assert_eq!((path, target.as_str()), (LoadPath::CompatibleObject, "vk-spirv"), "{reason}");
    assert!(reason.contains("device-binary: stored shader binaries were made by another driver"), "{reason}");
    assert!(reason.contains("shader binaries written back to the store"), "{reason}");
    let (path, _, reason) = load_unlit(&library, DeviceKind::VULKAN);
    assert_eq!(path, LoadPath::DeviceBinary, "remade: {reason}");

    // Damaged bytes under a whole record: the driver refuses them.
    let damaged = rewrite_shader_binaries(&library, |_, bytes| {
        let at = bytes.len() - 8;
        bytes[at] ^= 0xff;
    });
    assert_eq!(damaged, 1);
    let (path, target, reason) = load_unlit(&library, DeviceKind::VULKAN);
    assert_eq!((path, target.as_str()), (LoadPath::CompatibleObject, "vk-spirv"), "{reason}");
    assert!(reason.contains("VK_INCOMPATIBLE_SHADER_BINARY_EXT"), "{reason}");
    let (path, _, reason) = load_unlit(&library, DeviceKind::VULKAN);
    assert_eq!(path, LoadPath::DeviceBinary, "remade: {reason}");
}

#[test]
fn a_request_that_misses_an_axis_or_names_an_unknown_one_is_refused() {
    let dir = materials_full_built("library-requests");
    let library = ShaderLibrary::open(&dir.join("store")).unwrap();
    let registry = registry();
    let device = registry.open_device(DeviceKind::OPENGL, &DeviceOptions::default()).expect("device");
    let mut loader = DeviceLoader::attach(&registry, &device, &library).expect("attach");
    let mut load = |request: LoadRequest<'_>| match loader.load(&library, &request) {
        Ok(_) => panic!("{request:?} loaded"),
        Err(e) => e,
    };
    // (program, axis values, overrides, what the error says)
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a [(&'a str, f64)], &'a str);
    let cases: [Case<'_>; 5] = [
        ("lit", &[("TINT", "0"), ("PATTERN", "flat")], &[], "needs a value for axis 'BANDS'"),
        ("unlit", &[("TINT", "0"), ("PATTERN", "flat"), ("BANDS", "1")], &[], "has no axis 'BANDS'"),
        ("unlit", &[("TINT", "0"), ("PATTERN", "plaid")], &[], "'plaid' is not a value of axis 'PATTERN'"),
        ("lit", &[("TINT", "0"), ("PATTERN", "flat"), ("BANDS", "3")], &[], "is not a variant of the build"),
        ("unlit", &[("TINT", "0"), ("PATTERN", "flat")], &[("GIAN", 2.0)], "no override 'GIAN' (it has: GAIN, BIAS)"),
    ];
    for (program, variant, overrides, expected) in cases {
        let error = load(LoadRequest {
            program,
            variant: variant.to_vec(),
            overrides: overrides.to_vec(),
            ..Default::default()
        });
        assert!(error.to_string().contains(expected), "{program} {variant:?}: {error}");
    }
    let program = load(LoadRequest { program: "shiny", ..Default::default() });
    assert!(matches!(program, LibraryError::UnknownProgram { .. }), "{program}");
    drop(loader);
}

#[test]
fn a_store_without_builds_or_with_a_broken_catalog_file_says_so() {
    let empty = xr_tests::temp_dir("library-empty");
    let error = match ShaderLibrary::open(&empty) {
        Ok(_) => panic!("an empty store opened"),
        Err(e) => e,
    };
    assert!(
        matches!(error, LibraryError::Empty { .. }) && error.to_string().contains("run `xr build` first"),
        "{error}"
    );

    // A catalog file that does not parse is skipped; the others load.
    let dir = materials_full_built("library-broken-catalog");
    std::fs::write(dir.join("store/catalog/lit.json"), b"{ not json").unwrap();
    let library = ShaderLibrary::open(&dir.join("store")).unwrap();
    assert_eq!(library.programs().keys().cloned().collect::<Vec<_>>(), ["textured", "toon", "unlit", "unlit-slang"]);
    let error = library.program("lit").expect_err("lit is gone");
    assert!(
        error.to_string().contains("no program named 'lit' in the store (it has: textured, toon, unlit, unlit-slang)"),
        "{error}"
    );
}

#[test]
fn a_load_whose_allowed_paths_all_fail_names_each_reason() {
    let dir = materials_full_built("library-no-path");
    let library = ShaderLibrary::open(&dir.join("store")).unwrap();
    let registry = registry();
    let device = registry.open_device(DeviceKind::OPENGL, &DeviceOptions::default()).expect("device");
    let mut loader = DeviceLoader::attach(&registry, &device, &library).expect("attach");
    // A fresh store has no device binary yet.
    let request = LoadRequest {
        program: "unlit",
        variant: vec![("TINT", "0"), ("PATTERN", "flat")],
        paths: vec![LoadPath::DeviceBinary],
        ..LoadRequest::default()
    };
    let error = loader.load(&library, &request).err().expect("no path");
    assert!(matches!(error, LibraryError::NoPath { .. }), "{error}");
    assert!(
        error.to_string()
            == "unlit[TINT=0,PATTERN=flat]: no load path worked: device-binary: no program binary of this driver yet; \
                no build system on this device loads vk-spirv",
        "{error}"
    );
    drop(loader);
}

#[test]
fn a_driver_without_program_binaries_builds_from_source_or_takes_the_spirv() {
    let dir = materials_full_built("library-no-binaries");
    let run = |name: &str| {
        run_sample(&dir, &["--run", name], true)
            .lines()
            .filter(|l| l.starts_with(&format!("{name} ")) && !l.contains("->"))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let source = run("gl-source");
    assert_eq!(source.len(), SCENE.len());
    for row in &source {
        assert_eq!(path_of(row), "source", "{row}");
        assert!(row.contains("built on the device; this driver gives no program binaries back"), "{row}");
    }
    for row in run("gl-best") {
        assert_eq!(path_of(&row), "compatible-object", "{row}");
        assert!(row.contains("device-binary: this driver gives no program binaries back"), "{row}");
    }
}

/// The `materials` sample's `vk-spirv` run on the store of `dir`, logging
/// warnings; its stderr.
fn vulkan_run(dir: &std::path::Path) -> String {
    materials(dir).args(["--run", "vk-spirv"]).env("XR_LOG", "warn").ok().stderr
}

/// The store's Vulkan pipeline cache: the one object that starts with a
/// pipeline cache header (32 bytes, version 1). The host never names it.
fn pipeline_cache(store: &xr_store::Store) -> (ObjectKey, Vec<u8>) {
    let caches: Vec<(ObjectKey, Vec<u8>)> = store
        .keys()
        .unwrap()
        .into_iter()
        .filter_map(|key| Some((key, store.get(&key).ok()??)))
        .filter(|(_, data)| data.len() >= 32 && data[..8] == [32, 0, 0, 0, 1, 0, 0, 0])
        .collect();
    assert_eq!(caches.len(), 1, "one pipeline cache");
    caches.into_iter().next().unwrap()
}

#[test]
fn a_pipeline_cache_of_another_driver_is_discarded_and_the_log_says_so() {
    let dir = materials_full_built("library-pipeline-cache");
    let quiet = vulkan_run(&dir);
    assert!(!quiet.contains("discarding"), "{quiet}");
    let store = xr_store::Store::open(dir.join("store")).unwrap();
    let (key, mine) = pipeline_cache(&store);

    // Whole (its checksum is right), but made by another driver build.
    let mut foreign = mine.clone();
    foreign[20] ^= 0xff;
    store.put(&key, &foreign).unwrap();
    let stderr = vulkan_run(&dir);
    assert!(
        stderr.contains("discarding the stored Vulkan pipeline cache: made by another driver build"),
        "the plugin's warning reaches the host's log:\n{stderr}"
    );
    // Rebuilt and saved for this device.
    let (_, saved) = pipeline_cache(&store);
    assert_eq!(saved[16..32], mine[16..32]);
}

#[test]
fn each_device_attaches_the_loaders_that_declare_it_and_ranks_their_targets_by_path() {
    let dir = materials_full_built("library-loaders");
    let library = ShaderLibrary::open(&dir.join("store")).unwrap();
    let registry = registry();
    /// A device kind, the loaders it attaches, and the targets they load.
    type Expected<'a> = (DeviceKind, &'a [&'a str], &'a [(&'a str, LoadPath)]);
    let expected: [Expected<'_>; 2] = [
        (
            DeviceKind::OPENGL,
            &["xr-compiler-glsl", "xr-compiler-gl-spirv"],
            &[
                ("gl-glsl", LoadPath::DeviceBinary),
                ("gl-spirv", LoadPath::CompatibleObject),
                ("gl-glsl", LoadPath::Source),
            ],
        ),
        (
            DeviceKind::VULKAN,
            &["xr-compiler-vk-spirv"],
            &[
                ("vk-spirv", LoadPath::DeviceBinary),
                ("vk-spirv", LoadPath::CompatibleObject),
                ("gl-glsl", LoadPath::Source),
            ],
        ),
    ];
    for (kind, loaders, targets) in expected {
        let device = registry.open_device(kind, &DeviceOptions::default()).expect("device");
        let loader = DeviceLoader::attach(&registry, &device, &library).expect("attach");
        assert_eq!(loader.loaders(), loaders, "{kind:?}: highest priority first");
        let targets: Vec<(String, LoadPath)> = targets.iter().map(|(t, p)| (t.to_string(), *p)).collect();
        assert_eq!(loader.targets(), targets, "{kind:?}: best path first");
        drop(loader);
    }
}

/// `optimize = "performance"` on every program's SPIR-V targets: the SPIR-V objects change,
/// and every path still finds its constants by name and renders the scene
/// as the GLSL source path does.
#[test]
fn an_optimised_library_renders_the_same_scene_on_every_path() {
    let dir = materials_full_built("library-optimised");
    let catalog = |name: &str| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(dir.join("store/catalog").join(format!("{name}.json"))).unwrap()).unwrap()
    };
    let before = catalog("lit");
    let manifest = std::fs::read_to_string(dir.join("xr.toml")).unwrap();
    let optimized =
        "target_options = { gl-spirv = { optimize = \"performance\" }, vk-spirv = { optimize = \"performance\" } }";
    std::fs::write(dir.join("xr.toml"), manifest.replace("targets = [", &format!("{optimized}\ntargets = ["))).unwrap();
    xr_build(&dir);
    let after = catalog("lit");
    for (variant, objects) in after["variants"].as_object().unwrap() {
        for target in ["gl-spirv", "vk-spirv"] {
            assert_ne!(
                objects["objects"][target], before["variants"][variant]["objects"][target],
                "{variant} {target}"
            );
        }
    }

    render_sample(&dir);
    let out = dir.join("out");
    let reference = decode(&out.join("materials-gl-source.png"));
    for run in ["gl-spirv", "vk-spirv", "vk-best"] {
        let worst = worst_difference(&reference, &decode(&out.join(format!("materials-{run}.png"))));
        assert!(worst <= 1, "{run} (optimised) differs from gl-source by up to {worst}");
    }
}

/// The materials library's textured program, from the store through every
/// load path on both devices: its texture is bound by name and drawn.
/// Through the sample's generated bindings: the program's typed request,
/// its constants and its texture resolved once, each constant's declared
/// type checked (a handle of another type is refused by name). On Vulkan
/// three times: under the validation layers (pipelines), without (shader
/// objects from SPIR-V, their binaries written back) and again (the
/// driver's shader binaries): the same texels each time.
#[test]
fn the_textured_material_loads_through_every_path_and_draws_the_texture_bound_by_name() {
    use materials::shaders::textured;
    use xr_device::{Filter, SamplerDesc, TextureDesc, TextureFormat, VertexAttribute, VertexLayout, Wrap};
    use xr_sourcebuild::typed;
    let dir = materials_full_built("library-textured");
    let registry = registry();
    let library = ShaderLibrary::open(&dir.join("store")).unwrap();
    let texels: Vec<u8> = [[255u8, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255], [255, 255, 255, 255]].concat();
    let passes = |kind| if kind == DeviceKind::VULKAN { &[true, false, false][..] } else { &[false][..] };
    for (run, &validation) in
        materials::runs().into_iter().flat_map(|run| passes(run.kind).iter().map(move |v| (run.clone(), v)))
    {
        let options = DeviceOptions { validation, ..DeviceOptions::default() };
        let mut device = registry.open_device(run.kind, &options).unwrap();
        let mut loader = DeviceLoader::attach(&registry, &device, &library).unwrap();
        let request = textured::request(&textured::Variant {}, &textured::Overrides {}, &run.paths);
        if [materials::WGPU, materials::WGPU_GL].contains(&run.kind) {
            // wgpu binds a texture and its sampler apart: a sampler2D is
            // refused at load, naming it and what to write instead.
            let error = loader.load(&library, &request).err().expect("wgpu refuses a sampler2D").to_string();
            assert!(error.contains("'albedo' is a texture combined with its sampler (sampler2D)"), "{error}");
            assert!(error.contains("declare a texture2D and a sampler apart"), "{error}");
            continue;
        }
        let mut loaded = loader.load(&library, &request).unwrap_or_else(|e| panic!("{}: {e}", run.name));
        let resources = loaded.built.constants.resources().into_result().unwrap();
        assert_eq!(resources.len(), 1, "{}: {resources:?}", run.name);
        assert_eq!(resources[0].kind, xr_device::ResourceKind::CombinedImageSampler);
        let desc = TextureDesc { width: 2, height: 2, format: TextureFormat::Rgba8, mip_levels: 1, storage: false };
        let texture = device.create_texture(&desc, texels.as_slice().into(), 1).into_result().unwrap();
        let sampler = device
            .create_sampler(&SamplerDesc { filter: Filter::Nearest, mipmap: Filter::Nearest, wrap: Wrap::ClampToEdge })
            .into_result()
            .unwrap();
        let table = &mut loaded.built.constants;
        let wrong = typed::Constant::<typed::Float>::resolve(table, "u_color").unwrap_err().to_string();
        assert!(wrong.contains("'u_color' is declared vec4") && wrong.contains("float in its bindings"), "{wrong}");
        let bound = textured::Constants::resolve(table).unwrap_or_else(|e| panic!("{}: {e}", run.name));
        bound.u_rect.set(table, &[-1.0, -1.0, 2.0, 2.0]).unwrap();
        bound.u_color.set(table, &[1.0, 1.0, 1.0, 1.0]).unwrap();
        let binding = device.texture_binding(texture, Some(sampler).into()).into_result().unwrap();
        bound.albedo.set(table, &binding).unwrap();
        let layout = VertexLayout {
            stride: 2,
            attributes: vec![VertexAttribute { location: 0, components: 2, offset: 0 }].into(),
        };
        let quad = device.create_vertex_buffer(materials::QUAD.as_slice().into(), &layout).into_result().unwrap();
        let target = device.create_render_target(4, 4).into_result().unwrap();
        device.clear(target, &[0.0; 4]).into_result().unwrap();
        device.draw(&xr_device::DrawCall::triangles(target, loaded.built.program, quad, 6)).into_result().unwrap();
        let image = device.read_pixels(target).into_result().unwrap();
        // Texel (0, 0) at v = 0, the bottom row.
        assert_eq!(image.pixel(0, 3), Some([255, 0, 0, 255]), "{} ({})", run.name, loaded.path);
        assert_eq!(image.pixel(3, 3), Some([0, 255, 0, 255]), "{}", run.name);
        assert_eq!(image.pixel(0, 0), Some([0, 0, 255, 255]), "{}", run.name);
        assert_eq!(image.pixel(3, 0), Some([255, 255, 255, 255]), "{}", run.name);
        if run.kind == DeviceKind::VULKAN && run.name != "vk-source" {
            // vk-spirv without the layers wrote the binaries back; vk-best takes them there.
            let binaries = !validation && run.name == "vk-best";
            let expected = if binaries { LoadPath::DeviceBinary } else { LoadPath::CompatibleObject };
            assert_eq!(loaded.path, expected, "{} (validation {validation})", run.name);
        }
        drop(loaded);
        drop(loader);
    }
}

/// The materials sample's Slang program, the `unlit` program's twin, draws
/// the `unlit` row's pixels on every path that loads it (its targets are
/// the SPIR-V ones), within 1 per channel (two compilers may order the same
/// float operations differently; on llvmpipe and lavapipe they match).
#[test]
fn the_slang_twin_draws_the_unlit_row_on_every_path_that_loads_it() {
    let dir = materials_full_built("library-slang-twin");
    let registry = registry();
    let library = ShaderLibrary::open(&dir.join("store")).unwrap();
    let mut compared = Vec::new();
    for run in materials::runs().into_iter().filter(materials::twin_loads_on) {
        let (glsl, _) = materials::render_unlit_row(&registry, &library, &run, materials::DrawnBy::Own).unwrap();
        let (slang, loads) = materials::render_unlit_row(&registry, &library, &run, materials::DrawnBy::SlangTwin)
            .unwrap_or_else(|e| panic!("{}: {e}", run.name));
        assert_eq!(loads.len(), 3, "{}", run.name);
        // vk-best loads the shader binaries the vk-spirv run wrote back.
        let path = if run.name == "vk-best" { LoadPath::DeviceBinary } else { LoadPath::CompatibleObject };
        assert!(loads.iter().all(|l| l.path == path), "{}: {loads:?}", run.name);
        assert!(materials::max_difference(&glsl, &slang) <= 1, "{}: the twin's pixels differ", run.name);
        // Drawn: the stripes tile's lit stripe is its tinted white, not the clear colour.
        assert_rgba_near(pixel_at(&slang, 1, 0.1, 0.5), [255, 128, 128, 255], 1);
        compared.push(run.name);
    }
    assert_eq!(compared, ["gl-spirv", "gl-best", "vk-spirv", "vk-best", "wgpu-spirv", "wgpu-gl-spirv"]);
}

/// A build that fails keeps the last good objects: an error in an include
/// that `unlit`, `lit` and `toon` read (108 of the 123 artifacts) leaves
/// their last good objects in the catalog, marked stale; `xr store gc`
/// keeps them, `xr store verify` lists them, and the library loads them,
/// says they are stale and why, and draws the last good pixels. Restored,
/// the include builds nothing: every artifact is what it was.
#[test]
fn a_failed_build_keeps_the_last_good_objects_and_the_library_draws_them_marked_stale() {
    let dir = materials_full_built("library-last-good");
    let store = dir.join("store");
    let registry = registry();
    let runs: Vec<materials::Run> =
        materials::runs().into_iter().filter(|run| ["gl-spirv", "vk-spirv"].contains(&run.name)).collect();
    let render = |library: &ShaderLibrary| -> Vec<Image> {
        let rendered = runs.iter().map(|run| materials::render(&registry, library, run));
        rendered.map(|r| r.unwrap_or_else(|e| panic!("the scene renders: {e}")).0).collect()
    };
    let good = render(&ShaderLibrary::open(&store).unwrap());

    let include = dir.join("shaders/include/pattern.glsl");
    let text = std::fs::read_to_string(&include).unwrap();
    let broken = text.replacen("float pattern(vec2 uv) {", "float pattern(vec2 uv) {\n    broken_here;", 1);
    std::fs::write(&include, &broken).unwrap();
    let line = broken.lines().position(|l| l.contains("broken_here")).unwrap() + 1;
    let place = format!("shaders/include/pattern.glsl:{line}:");
    let run = Xr::new(["build", "-m", "xr.toml", "-q"]).dir(&dir).fails();
    assert!(
        run.stderr.contains("0 built, 0 fetched, 15 reused, 108 failed (last good kept for 108)"),
        "{}",
        run.stderr
    );

    let gc = Xr::new(["store", "gc", "-m", "xr.toml"]).dir(&dir).ok().stderr;
    assert!(gc.contains(", 0 removed"), "the stale objects are named by the catalog: {gc}");
    let verify = Xr::new(["store", "verify", "--store", "store"]).dir(&dir).ok().stderr;
    let stale: Vec<&str> = verify.lines().filter(|l| l.starts_with("stale: ")).collect();
    assert_eq!(stale.len(), 108, "{verify}");
    let listed = format!("stale: 'unlit' unlit[TINT=0,PATTERN=flat] (vk-spirv): the last good object is kept; {place}");
    assert!(stale.iter().any(|l| l.starts_with(&listed)), "{verify}");
    assert!(verify.contains("0 problems; 108 stale"), "{verify}");

    let library = ShaderLibrary::open(&store).unwrap();
    let device = registry.open_device(DeviceKind::VULKAN, &DeviceOptions::default()).expect("device");
    let mut loader = DeviceLoader::attach(&registry, &device, &library).expect("attach");
    let request =
        LoadRequest { program: "unlit", variant: vec![("TINT", "0"), ("PATTERN", "flat")], ..LoadRequest::default() };
    let loaded = loader.load(&library, &request).expect("the last good object loads");
    let why = loaded.stale.clone().unwrap_or_default();
    assert!(why.starts_with(&place) && why.contains("broken_here"), "reported stale, with why: {why:?}");
    // The program, then the loader's build systems, then the device.
    drop(loaded);
    drop(loader);
    drop(device);
    for (run, (last_good, now)) in runs.iter().zip(good.iter().zip(render(&library))) {
        assert!(last_good.rgba == now.rgba, "{}: the stale objects draw the last good pixels", run.name);
    }
    // The log says it too, at XR_LOG=info.
    let log = materials(&dir).args(["--run", "vk-spirv"]).env("XR_LOG", "info").env("NO_COLOR", "1").ok().stderr;
    let logged =
        log.lines().find(|l| l.contains("stale: loaded the last good vk-spirv object of unlit[TINT=0,PATTERN=flat]"));
    let logged = logged.unwrap_or_else(|| panic!("no stale line in the log:\n{log}"));
    assert!(logged.contains("program=unlit") && logged.contains(&place), "{logged}");

    std::fs::write(&include, &text).unwrap();
    let run = Xr::new(["build", "-m", "xr.toml", "-q"]).dir(&dir).ok();
    assert!(run.stderr.contains("0 built, 0 fetched, 123 reused, 0 failed;"), "{}", run.stderr);
    let library = ShaderLibrary::open(&store).unwrap();
    assert!(
        library.programs().values().all(|p| p.variants.values().all(|v| v.stale.is_empty())),
        "built again: no stale mark left"
    );
}

/// A library with a usage log records each program it loads once, by
/// program, variant, the target whose object it loaded and the override
/// values; a second library on the same log (another run of the engine)
/// adds only what is new.
#[test]
fn loads_are_recorded_in_the_usage_log_by_name_once_each() {
    let dir = materials_full_built("library-usage-log");
    let log_path = dir.join("store").join(xr_store::usage::STORE_FILE);
    let registry = registry();
    let device = registry.open_device(DeviceKind::VULKAN, &DeviceOptions::default()).expect("device");
    let unlit =
        LoadRequest { program: "unlit", variant: vec![("TINT", "0"), ("PATTERN", "flat")], ..LoadRequest::default() };
    let toon = LoadRequest {
        program: "toon",
        variant: vec![("PATTERN", "stripes"), ("BANDS", "2")],
        overrides: vec![("GAIN", 0.25)],
        ..LoadRequest::default()
    };
    let mut targets = Vec::new();
    for run in 0..2 {
        let library = ShaderLibrary::open(&dir.join("store")).unwrap().with_usage_log(None).unwrap();
        assert_eq!(library.usage_log().map(|l| l.path()), Some(log_path.as_path()));
        let mut loader = DeviceLoader::attach(&registry, &device, &library).expect("attach");
        for request in [&unlit, &unlit, &toon] {
            let loaded = loader.load(&library, request).unwrap_or_else(|e| panic!("run {run}: {e}"));
            targets.push(loaded.target.clone());
        }
    }
    let text = std::fs::read_to_string(&log_path).unwrap();
    assert_eq!(text.lines().count(), 2, "each load once, over both runs: {text}");
    let read = xr_store::usage::read(&log_path).unwrap();
    type Entry<'a> = (&'a str, &'a str, &'a str, Vec<(&'a str, &'a str)>);
    let entries: Vec<Entry<'_>> = read
        .entries
        .iter()
        .map(|u| {
            let overrides = u.overrides.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            (u.program.as_str(), u.variant.as_str(), u.target.as_str(), overrides)
        })
        .collect();
    assert_eq!(
        entries,
        [
            ("toon", "toon[PATTERN=stripes,BANDS=2]", targets[2].as_str(), vec![("GAIN", "0.25")]),
            ("unlit", "unlit[TINT=0,PATTERN=flat]", targets[0].as_str(), vec![]),
        ]
    );
}
