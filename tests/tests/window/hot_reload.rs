//! Hot reload in the run-time library, with no window: which programs an
//! edit rebuilds and names for swapping, what a broken edit reports, and
//! that a swapped program loads and draws the new shader.

use std::{
    path::Path,
    time::{Duration, Instant},
};
use xr_device::{DeviceKind, DeviceOptions};
use xr_host::Registry;
use xr_library::{DeviceLoader, LoadRequest, ShaderLibrary, hot_reload::HotReload, hot_reload::Reload};
use xr_tests::{materials_built, registry};

/// Polls until a reload comes, within 20 s.
fn next_reload(hot: &mut HotReload, registry: &Registry, library: &mut ShaderLibrary) -> Reload {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Some(reload) = hot.poll(registry, library) {
            return reload;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("no reload within 20 s");
}

/// Polls for `time`; there must be no reload.
fn no_reload(hot: &mut HotReload, registry: &Registry, library: &mut ShaderLibrary, time: Duration) {
    let deadline = Instant::now() + time;
    while Instant::now() < deadline {
        assert_eq!(hot.poll(registry, library), None);
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn edit(file: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(file).expect("the shader");
    assert!(text.contains(from), "{} no longer contains '{from}'; update this test", file.display());
    std::fs::write(file, text.replace(from, to)).expect("write the shader");
}

#[test]
fn an_edit_rebuilds_and_swaps_exactly_the_programs_that_read_the_file() {
    let dir = materials_built("hot-reload-library");
    let registry = registry();
    let targets = vec!["vk-spirv".to_owned()];
    let mut hot = HotReload::watch(&dir.join("xr.toml"), &registry, &[], &targets).expect("watching");
    // After the watch's first build (file names reach the objects, and this
    // test names the manifest by another path than `xr build` was given).
    let mut library = ShaderLibrary::open(&dir.join("store")).expect("the store");
    let watched: Vec<String> = hot.inputs().map(|p| p.display().to_string()).collect();
    for file in ["xr.toml", "unlit.frag", "quad.vert", "pattern.glsl"] {
        assert!(watched.iter().any(|w| w.ends_with(file)), "{file} is not watched: {watched:?}");
    }
    no_reload(&mut hot, &registry, &mut library, Duration::from_millis(150));

    // A file no program reads: nothing to do.
    std::fs::write(dir.join("shaders/notes.txt"), "not a shader").expect("write");
    no_reload(&mut hot, &registry, &mut library, Duration::from_millis(150));

    // One program's fragment shader: its 6 variants for vk-spirv, nothing else.
    edit(&dir.join("shaders/unlit.frag"), "color * GAIN + BIAS", "color * GAIN * 0.5 + BIAS");
    let reload = next_reload(&mut hot, &registry, &mut library);
    assert_eq!(reload.swapped, ["unlit"], "{reload:?}");
    assert_eq!((reload.built, reload.failed.len(), reload.errors.len()), (6, 0, 0), "{reload:?}");
    assert!(reload.changed.iter().any(|p| p.ends_with("shaders/unlit.frag")), "{reload:?}");

    // An include every program reads: all three.
    let include = dir.join("shaders/include/pattern.glsl");
    let text = std::fs::read_to_string(&include).expect("the include");
    std::fs::write(&include, format!("{text}\n// edited\n")).expect("write");
    let reload = next_reload(&mut hot, &registry, &mut library);
    assert_eq!(reload.swapped, ["lit", "toon", "unlit"], "{reload:?}");

    // A broken edit: the program is failed, not swapped; its error once, at file:line.
    edit(&dir.join("shaders/toon.frag"), "void main() {", "void main() { undeclared_name;");
    let reload = next_reload(&mut hot, &registry, &mut library);
    assert_eq!(reload.failed, ["toon"], "{reload:?}");
    assert!(reload.swapped.is_empty(), "{reload:?}");
    assert_eq!(reload.errors.len(), 1, "{:#?}", reload.errors);
    assert!(reload.errors[0].contains("toon.frag:") && reload.errors[0].contains("undeclared_name"), "{reload:?}");

    // Fixed: swapped again.
    edit(&dir.join("shaders/toon.frag"), "void main() { undeclared_name;", "void main() {");
    let reload = next_reload(&mut hot, &registry, &mut library);
    assert_eq!((reload.swapped.as_slice(), reload.failed.len()), (["toon".to_owned()].as_slice(), 0), "{reload:?}");
}

#[test]
fn a_swapped_program_draws_the_edited_shader() {
    let dir = materials_built("hot-reload-draw");
    let registry = registry();
    let mut library = ShaderLibrary::open(&dir.join("store")).expect("the store");
    let mut device = registry.open_device(DeviceKind::VULKAN, &DeviceOptions::default()).expect("a device");
    let mut loader = DeviceLoader::attach(&registry, &device, &library).expect("loaders");
    let targets: Vec<String> = loader.targets().into_iter().map(|(t, _)| t).collect();
    let mut hot = HotReload::watch(&dir.join("xr.toml"), &registry, &[], &targets).expect("watching");
    library.reread_catalog().expect("the catalog after the watch's first build");
    let mut scene = materials::Scene::load(&mut device, &mut loader, &library, &[], 96).expect("the scene");
    let centre = |scene: &materials::Scene, device: &mut xr_device::DeviceBox| {
        scene.draw(device).expect("draws");
        let image = device.read_pixels(scene.target()).into_result().expect("pixels");
        image.pixel(16, 16).expect("inside")
    };
    let before = centre(&scene, &mut device);
    edit(&dir.join("shaders/unlit.frag"), "color * GAIN + BIAS", "vec3(1.0, 0.0, 1.0)");
    let reload = next_reload(&mut hot, &registry, &mut library);
    assert_eq!(reload.swapped, ["unlit"], "{reload:?}");
    assert_eq!(scene.reload(&mut loader, &library, "unlit").expect("reloads"), 3);
    let after = centre(&scene, &mut device);
    assert_ne!(before, after);
    assert_eq!(after, [255, 0, 255, 255], "the first unlit tile draws the edited colour");
    // A load request for the program now gets the new object, too.
    let request =
        LoadRequest { program: "unlit", variant: vec![("TINT", "0"), ("PATTERN", "flat")], ..Default::default() };
    assert!(loader.load(&library, &request).is_ok());
    drop(scene);
    drop(loader);
}

/// A Slang module is an input like an `#include`: an edit to the module
/// rebuilds and swaps the program that imports it, and no other.
#[test]
fn an_edited_slang_module_swaps_the_program_that_imports_it() {
    let dir = xr_tests::materials_full_built("hot-reload-slang");
    let registry = registry();
    let targets = vec!["vk-spirv".to_owned()];
    let mut hot = HotReload::watch(&dir.join("xr.toml"), &registry, &[], &targets).expect("watching");
    let mut library = ShaderLibrary::open(&dir.join("store")).expect("the store");
    let watched: Vec<String> = hot.inputs().map(|p| p.display().to_string()).collect();
    for file in ["unlit.slang", "patterns.slang"] {
        assert!(watched.iter().any(|w| w.ends_with(file)), "{file} is not watched: {watched:?}");
    }
    edit(&dir.join("shaders/include/patterns.slang"), "return 1.0; }", "return 0.5; }");
    let reload = next_reload(&mut hot, &registry, &mut library);
    assert_eq!(reload.swapped, ["unlit-slang"], "{reload:?}");
    assert_eq!((reload.built, reload.failed.len(), reload.errors.len()), (6, 0, 0), "{reload:?}");
    assert!(reload.changed.iter().any(|p| p.ends_with("patterns.slang")), "{reload:?}");
}
