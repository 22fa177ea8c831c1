//! Warming before the first frame: a usage log recorded while the engine
//! loads, then `xr warm` on a fresh copy of the store, after which every
//! logged program loads as a device binary (a GL program binary, Vulkan
//! shader binaries), and a second warm finds nothing to do.

use std::path::Path;
use xr_device::{DeviceKind, DeviceOptions};
use xr_library::{DeviceLoader, LoadPath, LoadRequest, ShaderLibrary};
use xr_tests::{Xr, materials_built, registry};

/// The engine's loads: three programs, one with an override value.
fn requests() -> Vec<LoadRequest<'static>> {
    vec![
        LoadRequest { program: "unlit", variant: vec![("TINT", "0"), ("PATTERN", "flat")], ..LoadRequest::default() },
        LoadRequest {
            program: "toon",
            variant: vec![("PATTERN", "stripes"), ("BANDS", "2")],
            overrides: vec![("GAIN", 0.25)],
            ..LoadRequest::default()
        },
        LoadRequest {
            program: "lit",
            variant: vec![("TINT", "1"), ("PATTERN", "checker"), ("BANDS", "3")],
            ..LoadRequest::default()
        },
    ]
}

/// Loads [`requests`] from the store in `dir` on `kind`, recording them
/// in `log` when given; the path each took.
fn load_all(dir: &Path, kind: DeviceKind, log: Option<&Path>) -> Vec<LoadPath> {
    let registry = registry();
    let mut library = ShaderLibrary::open(&dir.join("store")).unwrap();
    if let Some(log) = log {
        library = library.with_usage_log(Some(log)).unwrap();
    }
    let device = registry.open_device(kind, &DeviceOptions::default()).expect("device");
    let mut loader = DeviceLoader::attach(&registry, &device, &library).expect("attach");
    let paths = requests()
        .iter()
        .map(|request| loader.load(&library, request).unwrap_or_else(|e| panic!("{}: {e}", request.program)).path)
        .collect();
    drop(loader);
    paths
}

fn warm(dir: &Path, device: &str, log: &Path, mesa_cache: &Path) -> String {
    let run = Xr::new(["warm", "--store", "store", "--device", device])
        .arg("--log")
        .arg(log)
        .software_device_cache(mesa_cache)
        .dir(dir)
        .ok();
    run.stderr
}

fn record_then_warm_a_fresh_store(label: &str, kind: DeviceKind, device: &str, first_path: &str) {
    let recorded = materials_built(&format!("{label}-record"));
    let log = recorded.join("usage.jsonl");
    load_all(&recorded, kind, Some(&log));
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 3);

    // A fresh store, as an install or a first launch has it.
    let fresh = materials_built(&format!("{label}-fresh"));
    let mesa_cache = xr_tests::temp_dir(&format!("{label}-mesa"));
    let first = warm(&fresh, device, &log, &mesa_cache);
    assert!(
        first.contains(&format!("3 programs: 0 already warm, 3 warmed (3 from {first_path}), 0 failed")),
        "{first}"
    );
    let second = warm(&fresh, device, &log, &mesa_cache);
    assert!(second.contains("3 programs: 3 already warm, 0 warmed, 0 failed"), "incremental: {second}");
    assert_eq!(load_all(&fresh, kind, None), [LoadPath::DeviceBinary; 3], "every load is a device binary");
}

/// lavapipe 25 has `VK_EXT_shader_object`: the SPIR-V load writes the
/// driver's shader binaries back, and the engine's loads take them.
#[test]
fn vulkan_loads_every_logged_program_as_shader_binaries_after_xr_warm() {
    record_then_warm_a_fresh_store("warm-vulkan", DeviceKind::Vulkan, "vulkan", "compatible-object");
}

/// On OpenGL the SPIR-V path keeps no program binary; the driver's
/// compile of the stored GLSL does, and warming takes that path.
#[test]
fn opengl_loads_every_logged_program_as_a_program_binary_after_xr_warm() {
    record_then_warm_a_fresh_store("warm-opengl", DeviceKind::OpenGl, "opengl", "source");
}

#[test]
fn a_program_the_store_no_longer_has_fails_its_warm_by_name_and_the_rest_are_warmed() {
    let dir = materials_built("warm-renamed");
    let log = dir.join("usage.jsonl");
    let usage = |program: &str, variant: &str| xr_store::usage::Usage {
        program: program.into(),
        variant: variant.into(),
        target: "vk-spirv".into(),
        overrides: Default::default(),
    };
    let recorder = xr_store::usage::UsageLog::open(&log).unwrap();
    recorder.record(&usage("unlit", "unlit[TINT=1,PATTERN=stripes]")).unwrap();
    recorder.record(&usage("toon", "toon[SHADES=3]")).unwrap();
    drop(recorder);
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str("{\"program\":\"li");
    std::fs::write(&log, text).unwrap();
    let mesa_cache = xr_tests::temp_dir("warm-renamed-mesa");
    let run = Xr::new(["warm", "--store", "store", "--log", "usage.jsonl"])
        .software_device_cache(&mesa_cache)
        .dir(&dir)
        .fails();
    assert!(
        run.stderr.contains("cannot warm toon[SHADES=3] of 'toon': toon[SHADES=3] is not in the store's catalog"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("usage.jsonl:3: not a usage entry (a line cut short?), skipped"), "{}", run.stderr);
    assert!(
        run.stderr.contains("2 programs: 0 already warm, 1 warmed (1 from compatible-object), 1 failed"),
        "{}",
        run.stderr
    );
}

/// Strict mode, in development: the one program a shortened log left out
/// (so that `xr warm` did not make it) is named with its variant, override
/// values, target and the path it had to load by; the warmed ones are not.
#[test]
fn strict_mode_names_the_one_program_a_shortened_log_left_out() {
    let recorded = materials_built("warm-strict-record");
    let full = recorded.join("usage.jsonl");
    load_all(&recorded, DeviceKind::Vulkan, Some(&full));
    let dir = materials_built("warm-strict");
    let text = std::fs::read_to_string(&full).unwrap();
    let shortened: String = text.lines().filter(|l| !l.contains("\"toon\"")).map(|l| format!("{l}\n")).collect();
    assert_eq!(shortened.lines().count(), 2);
    let log = dir.join("usage.jsonl");
    std::fs::write(&log, shortened).unwrap();
    let mesa_cache = xr_tests::temp_dir("warm-strict-mesa");
    let warmed = warm(&dir, "vulkan", &log, &mesa_cache);
    assert!(warmed.contains("2 programs: 0 already warm, 2 warmed"), "{warmed}");

    let registry = registry();
    let library =
        ShaderLibrary::open(&dir.join("store")).unwrap().with_usage_log(Some(&log)).unwrap().strict_warm(true);
    let device = registry.open_device(DeviceKind::Vulkan, &DeviceOptions::default()).expect("device");
    let mut loader = DeviceLoader::attach(&registry, &device, &library).expect("attach");
    let paths: Vec<LoadPath> = requests().iter().map(|r| loader.load(&library, r).unwrap().path).collect();
    assert_eq!(paths, [LoadPath::DeviceBinary, LoadPath::CompatibleObject, LoadPath::DeviceBinary]);
    let misses = library.strict_misses();
    assert_eq!(misses.len(), 1, "{misses:?}");
    assert_eq!(
        (misses[0].usage.program.as_str(), misses[0].usage.variant.as_str(), misses[0].path),
        ("toon", "toon[PATTERN=stripes,BANDS=2]", LoadPath::CompatibleObject)
    );
    assert_eq!(misses[0].usage.overrides.get("GAIN").map(String::as_str), Some("0.25"));
    // Loaded again, it is not reported twice.
    loader.load(&library, &requests()[1]).unwrap();
    assert_eq!(library.strict_misses().len(), 1);
    drop(loader);
}

/// A log names programs, not objects: after an edit to one shader and a
/// rebuild, the old log warms the edited program under its new object,
/// the others are warm already, and strict mode reports nothing missing.
#[test]
fn after_an_edit_the_old_log_warms_the_edited_program_under_its_new_object() {
    let recorded = materials_built("warm-edit-record");
    let log = recorded.join("usage.jsonl");
    load_all(&recorded, DeviceKind::Vulkan, Some(&log));
    let dir = materials_built("warm-edit");
    let mesa_cache = xr_tests::temp_dir("warm-edit-mesa");
    assert!(warm(&dir, "vulkan", &log, &mesa_cache).contains("3 warmed"));
    let toon_object = || {
        let (programs, _) = xr_store::catalog::read_all(&dir.join("store"));
        programs["toon"].object("toon[PATTERN=stripes,BANDS=2]", "vk-spirv").map(str::to_owned)
    };
    let before = toon_object();

    let shader = dir.join("shaders/toon.frag");
    let text = std::fs::read_to_string(&shader).unwrap();
    let edited = text.replace("(0.25 + 0.75 * light)", "(0.5 + 0.5 * light)");
    assert_ne!(edited, text);
    std::fs::write(&shader, edited).unwrap();
    xr_tests::xr_build(&dir);
    assert_ne!(toon_object(), before, "the edit made a new object");

    let again = warm(&dir, "vulkan", &log, &mesa_cache);
    assert!(again.contains("3 programs: 2 already warm, 1 warmed (1 from compatible-object), 0 failed"), "{again}");
    let registry = registry();
    let library =
        ShaderLibrary::open(&dir.join("store")).unwrap().with_usage_log(Some(&log)).unwrap().strict_warm(true);
    let device = registry.open_device(DeviceKind::Vulkan, &DeviceOptions::default()).expect("device");
    let mut loader = DeviceLoader::attach(&registry, &device, &library).expect("attach");
    for request in requests() {
        let loaded = loader.load(&library, &request).unwrap();
        assert_eq!(loaded.path, LoadPath::DeviceBinary, "{}: {}", request.program, loaded.reason);
    }
    assert_eq!(library.strict_misses(), [], "nothing is reported missing");
    drop(loader);
}
