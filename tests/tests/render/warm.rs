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
    record_then_warm_a_fresh_store("warm-vulkan", DeviceKind::VULKAN, "vulkan", "compatible-object");
}

/// On OpenGL the SPIR-V path keeps no program binary; the driver's
/// compile of the stored GLSL does, and warming takes that path.
#[test]
fn opengl_loads_every_logged_program_as_a_program_binary_after_xr_warm() {
    record_then_warm_a_fresh_store("warm-opengl", DeviceKind::OPENGL, "opengl", "source");
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
        draw_states: Default::default(),
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
    load_all(&recorded, DeviceKind::VULKAN, Some(&full));
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
    let device = registry.open_device(DeviceKind::VULKAN, &DeviceOptions::default()).expect("device");
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
    load_all(&recorded, DeviceKind::VULKAN, Some(&log));
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
    let device = registry.open_device(DeviceKind::VULKAN, &DeviceOptions::default()).expect("device");
    let mut loader = DeviceLoader::attach(&registry, &device, &library).expect("attach");
    for request in requests() {
        let loaded = loader.load(&library, &request).unwrap();
        assert_eq!(loaded.path, LoadPath::DeviceBinary, "{}: {}", request.program, loaded.reason);
    }
    assert_eq!(library.strict_misses(), [], "nothing is reported missing");
    drop(loader);
}

/// The materials sample's `--frames` run in `dir`: the scene loaded from
/// `dir/store` on `device` and drawn into the five target shapes, with
/// the Mesa cache in `mesa`; its report.
fn frames(dir: &Path, device: &str, pipelines: bool, mesa: &Path, log: Option<&Path>) -> String {
    let store = dir.join("store");
    let mut run = Xr::sample("materials", ["--frames", "10", "--device", device])
        .arg("--store")
        .arg(&store)
        .software_device_cache(mesa);
    if let Some(log) = log {
        run = run.arg("--usage-log").arg(log);
    }
    if pipelines {
        run = run.env("XR_VK_SHADER_OBJECTS", "off");
    }
    run.ok().stdout
}

/// The count `name` in the line of `report` that starts with `line`.
fn count(report: &str, line: &str, name: &str) -> u64 {
    let line = report.lines().find(|l| l.starts_with(line)).unwrap_or_else(|| panic!("no '{line}' in\n{report}"));
    let (_, after) = line.split_once(&format!("{name} ")).unwrap_or_else(|| panic!("no '{name}' in '{line}'"));
    after.split(|c: char| !c.is_ascii_digit()).next().and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{line}"))
}

/// Records the materials scene drawn into five target formats, warms a
/// fresh copy of the store with an empty Mesa cache, and draws the same
/// frames again: the second run's report.
fn record_warm_and_draw_again(label: &str, device: &str, pipelines: bool) -> Warmed {
    record_rewrite_warm_and_draw_again(label, device, pipelines, &|log| log.to_owned())
}

/// [`record_warm_and_draw_again`], with the log as `rewrite` makes it
/// between the recording and the warm.
fn record_rewrite_warm_and_draw_again(
    label: &str,
    device: &str,
    pipelines: bool,
    rewrite: &dyn Fn(&str) -> String,
) -> Warmed {
    let recorded = materials_built(&format!("{label}-record"));
    let log = recorded.join("usage.jsonl");
    let first = frames(&recorded, device, pipelines, &xr_tests::temp_dir(&format!("{label}-mesa-record")), Some(&log));
    assert!(
        first.contains("loaded by: compatible-object 9"),
        "the recording loads from the portable objects:\n{first}"
    );
    let text = std::fs::read_to_string(&log).expect("the recorded log");
    std::fs::write(&log, rewrite(&text)).expect("the log rewritten");
    let fresh = materials_built(&format!("{label}-fresh"));
    let built_objects = objects(&fresh.join("store"));
    let mesa = xr_tests::temp_dir(&format!("{label}-mesa"));
    let mut warm = Xr::new(["warm", "--store", "store", "--device", device]).arg("--log").arg(&log);
    if pipelines {
        warm = warm.env("XR_VK_SHADER_OBJECTS", "off");
    }
    let warmed = warm.software_device_cache(&mesa).dir(&fresh).ok().stderr;
    assert!(warmed.contains(": 9 programs:") && warmed.contains("0 failed"), "{warmed}");
    let warmed_objects = objects(&fresh.join("store"));
    let added = warmed_objects.difference(&built_objects).cloned().collect();
    let again = frames(&fresh, device, pipelines, &mesa, Some(&log));
    Warmed { again, warmed, added, _dirs: vec![recorded, fresh, mesa] }
}

/// What [`record_warm_and_draw_again`] saw.
struct Warmed {
    /// The frames' report after the warm.
    again: String,
    /// What `xr warm` said.
    warmed: String,
    /// The objects `xr warm` added to the fresh store.
    added: Vec<String>,
    _dirs: Vec<xr_tests::TestDir>,
}

#[test]
fn after_xr_warm_the_scene_in_five_formats_makes_no_shader_object_from_spirv_and_no_pipeline() {
    let Warmed { again, warmed, added, .. } = record_warm_and_draw_again("warm-frames-objects", "vulkan", false);
    // Shader objects make nothing at a draw, but the device tells the build
    // system the formats: each program is drawn into its five and the
    // device's own target.
    assert!(warmed.contains("; 54 warm draws;"), "{warmed}");
    // A record of the driver's shader binaries per program, and the pipeline cache.
    assert_eq!(added.len(), 9 + 1, "{added:?}");
    assert!(again.contains("loaded by: device-binary 9"), "{again}");
    assert_eq!(count(&again, "made at load and draw:", "shader objects from SPIR-V"), 0, "{again}");
    assert_eq!(count(&again, "made at load and draw:", "shader objects from binaries"), 18, "{again}");
    assert_eq!(count(&again, "made at load and draw:", "pipelines compiled"), 0, "{again}");
    assert_eq!(count(&again, "made by the draws:", "pipelines"), 0, "{again}");
    assert_eq!(count(&again, "made by the draws:", "shader objects"), 0, "{again}");
}

/// Without shader objects, the recorded draw states (five sets of
/// attachment formats per program) are made when the program loads,
/// through the pipeline cache `xr warm` wrote into the store: the draws
/// make nothing. lavapipe keeps nothing in a pipeline cache (its data is
/// the 32-byte header), so there its loads still compile; a driver that
/// keeps one reports them as found in it.
#[test]
fn after_xr_warm_the_scene_in_five_formats_makes_no_pipeline_at_a_draw_and_the_store_has_the_pipeline_cache() {
    let Warmed { again, warmed, added, .. } = record_warm_and_draw_again("warm-frames-pipelines", "vulkan", true);
    assert!(warmed.contains("45 pipelines of logged draw states made"), "9 programs × 5 formats: {warmed}");
    assert!(warmed.contains("; 54 warm draws;"), "each program into its 5 formats and the device's own: {warmed}");
    assert!(again.contains("loaded by: compatible-object 9"), "{again}");
    assert_eq!(count(&again, "made by the draws:", "pipelines"), 0, "{again}");
    let made = count(&again, "made at load and draw:", "pipelines compiled")
        + count(&again, "made at load and draw:", "pipelines from the pipeline cache");
    assert_eq!(made, 9 * (2 + 5), "each program's own two and its five draw states, at the load: {again}");
    // The pipeline cache `xr warm` saved: the one object it adds to a store of SPIR-V.
    assert_eq!(added.len(), 1, "the pipeline cache alone: {added:?}");
}

/// Each program's draw states spread over lines of their own, on three
/// targets in turn: as several processes, or one that loaded a program
/// for several targets, leave a log.
fn spread_draw_states(log: &str) -> String {
    let mut spread = String::new();
    for line in log.lines() {
        let usage: xr_store::usage::Usage = serde_json::from_str(line).expect("a recorded entry");
        let targets = [usage.target.clone(), "gl-spirv".to_owned(), "gl-glsl".to_owned()];
        let mut parts: Vec<xr_store::usage::Usage> = usage
            .draw_states
            .iter()
            .enumerate()
            .map(|(i, state)| xr_store::usage::Usage {
                target: targets[i % targets.len()].clone(),
                draw_states: [state.clone()].into(),
                ..usage.clone()
            })
            .collect();
        if parts.is_empty() {
            parts.push(usage);
        }
        for part in parts {
            spread.push_str(&serde_json::to_string(&part).expect("an entry"));
            spread.push('\n');
        }
    }
    spread
}

/// A log in which each program's five draw states are spread over five
/// lines and three targets warms every state of every program, as the
/// log of one process that recorded each program once does: `xr warm`
/// folds one program's entries "with the draw states of all of them".
#[test]
fn a_log_that_spreads_each_program_s_draw_states_over_lines_and_targets_warms_every_state() {
    let spread_lines = std::cell::Cell::new(0);
    let Warmed { warmed, .. } = record_rewrite_warm_and_draw_again("warm-spread-log", "vulkan", true, &|log| {
        let spread = spread_draw_states(log);
        spread_lines.set(spread.lines().filter(|l| l.contains("\"draw_states\"")).count());
        spread
    });
    assert_eq!(spread_lines.get(), 9 * 5, "a line of its own for each program's each state");
    assert!(warmed.contains(": 9 programs:") && warmed.contains("0 failed"), "one entry per program: {warmed}");
    assert!(warmed.contains("45 pipelines of logged draw states made"), "9 programs × 5 states: {warmed}");
    assert!(warmed.contains("; 54 warm draws;"), "each program into its 5 formats and the device's own: {warmed}");
}

/// Every object name of the store at `store`.
fn objects(store: &Path) -> std::collections::BTreeSet<String> {
    let mut names = std::collections::BTreeSet::new();
    for shard in std::fs::read_dir(store.join("objects")).unwrap().map(Result::unwrap) {
        for object in std::fs::read_dir(shard.path()).unwrap().map(Result::unwrap) {
            names.insert(object.file_name().to_string_lossy().into_owned());
        }
    }
    names
}

#[test]
fn after_xr_warm_the_scene_on_opengl_links_no_program_from_source() {
    let Warmed { again, added, .. } = record_warm_and_draw_again("warm-frames-opengl", "opengl", false);
    assert_eq!(added.len(), 9, "a program binary per program: {added:?}");
    assert!(again.contains("loaded by: device-binary 9"), "{again}");
    assert_eq!(count(&again, "made at load and draw:", "programs linked from source"), 0, "{again}");
    assert_eq!(count(&again, "made at load and draw:", "programs linked from SPIR-V"), 0, "{again}");
    assert_eq!(count(&again, "made at load and draw:", "programs from program binaries"), 9, "{again}");
}

/// Two engines recording into one log at once leave whole lines (each
/// line one write to a file opened for appending), and a log cut in the
/// middle of its last line still warms what its whole lines name.
#[test]
fn a_log_two_processes_wrote_at_once_and_a_log_cut_mid_line_both_warm() {
    let dir = materials_built("warm-two-writers");
    let log = dir.join("usage.jsonl");
    let writers: Vec<std::process::Child> = (0..2)
        .map(|n| {
            let mesa = dir.join(format!("mesa-{n}"));
            Xr::sample("materials", ["--frames", "5", "--store", "store", "--usage-log", "usage.jsonl"])
                .env("XR_VK_SHADER_OBJECTS", "off")
                .software_device_cache(&mesa)
                .dir(&dir)
                .command()
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("materials starts")
        })
        .collect();
    for mut writer in writers {
        assert!(writer.wait().unwrap().success());
    }
    let read = xr_store::usage::read(&log).unwrap();
    assert!(read.skipped_lines.is_empty() && !read.torn, "{read:?}");
    assert_eq!(read.entries.len(), 9, "one entry per program, whichever process wrote it");
    assert!(read.entries.iter().all(|u| u.draw_states.len() == 5), "{:?}", read.entries);
    let mesa = xr_tests::temp_dir("warm-two-writers-mesa");
    let warm = |dir: &Path| {
        Xr::new(["warm", "--store", "store", "--log", "usage.jsonl"])
            .env("XR_VK_SHADER_OBJECTS", "off")
            .software_device_cache(&mesa)
            .dir(dir)
            .ok()
            .stderr
    };
    let whole = warm(&dir);
    assert!(whole.contains(": 9 programs:") && whole.contains("45 pipelines of logged draw states made"), "{whole}");

    let text = std::fs::read_to_string(&log).unwrap();
    let last = text.trim_end().rfind('\n').unwrap();
    // Cut halfway through the last line: its entry is lost, the rest warm.
    let cut_at = last + (text.len() - last) / 2;
    std::fs::write(&log, &text[..cut_at]).unwrap();
    let lines = text[..cut_at].lines().count();
    let cut = warm(&dir);
    assert!(cut.contains(&format!("usage.jsonl:{lines}: not a usage entry (a line cut short?), skipped")), "{cut}");
    assert!(cut.contains("0 failed"), "{cut}");
}

/// Strict mode names a draw state the log left out: the program, its
/// variant and the formats whose pipeline a warm from that log did not make.
#[test]
fn strict_mode_names_the_one_draw_state_a_shortened_log_left_out() {
    let dir = materials_built("warm-strict-state");
    let log = dir.join("usage.jsonl");
    let mesa = xr_tests::temp_dir("warm-strict-state-mesa");
    frames(&dir, "vulkan", true, &mesa, Some(&log));
    let dropped = "colors=rgba32f";
    let text = std::fs::read_to_string(&log).unwrap();
    let mut shortened = String::new();
    for line in text.lines() {
        let mut usage: xr_store::usage::Usage = serde_json::from_str(line).unwrap();
        if usage.variant == "toon[PATTERN=stripes,BANDS=4]" {
            assert!(usage.draw_states.is_empty() || usage.draw_states.remove(dropped), "{line}");
        }
        shortened.push_str(&serde_json::to_string(&usage).unwrap());
        shortened.push('\n');
    }
    std::fs::write(&log, shortened).unwrap();
    let run = Xr::sample("materials", ["--frames", "5", "--store", "store", "--usage-log", "usage.jsonl"])
        .env("XR_VK_SHADER_OBJECTS", "off")
        .env("XR_STRICT_WARM", "1")
        .software_device_cache(&mesa)
        .dir(&dir)
        .ok();
    let misses: Vec<&str> = run.stderr.lines().filter(|l| l.contains("strict warm:")).collect();
    assert_eq!(misses.len(), 1, "{}", run.stderr);
    assert!(
        misses[0].contains(&format!(
            "toon[PATTERN=stripes,BANDS=4] of 'toon' (vk-spirv, by compatible-object) was drawn in the state {dropped}"
        )),
        "{}",
        misses[0]
    );
    assert!(run.stdout.contains("made by the draws: pipelines 1,"), "the one state left out: {}", run.stdout);
}
