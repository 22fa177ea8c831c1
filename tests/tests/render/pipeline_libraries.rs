//! Draws that never wait on Vulkan: a program from the materials store
//! drawn into targets of formats it was never drawn into, under each
//! policy (`NotReady`), with pipelines (`XR_VK_SHADER_OBJECTS=off`) under
//! the validation layers. The setup's lavapipe 25 has graphics pipeline
//! libraries: a draw that does not wait gets a pipeline linked from them
//! at once, and the optimized one replaces it when it is done. Without
//! them (`XR_VK_PIPELINE_LIBRARIES=off`, or Debian 12's lavapipe 22.3) the
//! pipeline compiles whole on another thread, and the draw is skipped or
//! drawn by its fallback until it is done.
//!
//! Each test runs again in a process of its own, where the variables are
//! set before the device opens; the store is built once, by the parent.

use std::time::{Duration, Instant};
use xr_device::{
    DeviceBox, DeviceKind, DeviceOptions, DrawCall, NotReady, ProgramRef, Readiness, RenderTargetDesc, RenderTargetId,
    TextureFormat, VertexAttribute, VertexBufferId, VertexLayout,
};
use xr_library::{DeviceLoader, LoadRequest, Loaded, ShaderLibrary};
use xr_sourcebuild::ConstantTableExt;
use xr_tests::{materials_built, registry};

/// Set in the child process: the store it loads from.
const CHILD_STORE: &str = "XR_TEST_PIPELINE_LIBRARIES_STORE";

/// The target's clear colour: what a skipped draw leaves.
const CLEAR: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

/// Runs the test `name` (`pipeline_libraries::…`) again in a child process
/// with shader objects off and `vars` set, over a freshly built materials
/// store; `None` in the parent (which checks the child passed), the
/// store's directory in the child.
fn in_child(name: &str, vars: &[(&str, &str)]) -> Option<std::path::PathBuf> {
    if let Some(store) = std::env::var_os(CHILD_STORE) {
        return Some(store.into());
    }
    let dir = materials_built(&name.replace("::", "-"));
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command
        .args([&format!("pipeline_libraries::{name}"), "--exact", "--nocapture"])
        .env(CHILD_STORE, dir.join("store"))
        .env("XR_VK_SHADER_OBJECTS", "off");
    for (var, value) in vars {
        command.env(var, value);
    }
    let output = command.output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success() && said.contains("1 passed"), "{said}");
    // What the child measured, for `--nocapture`.
    for line in said.lines().filter(|l| l.starts_with("measured:")) {
        eprintln!("{line}");
    }
    None
}

/// The variables that offer the Vulkan loader Debian 12's lavapipe alone.
fn old_driver() -> [(&'static str, &'static str); 2] {
    [("VK_DRIVER_FILES", xr_tests::SYSTEM_LAVAPIPE), ("VK_ADD_DRIVER_FILES", "")]
}

/// A Vulkan device under the validation layers with the materials store
/// attached, and a quad to draw.
struct Scene {
    /// The programs loaded; dropped before the loader and the device.
    loaded: Vec<Loaded>,
    loader: DeviceLoader,
    library: ShaderLibrary,
    device: DeviceBox,
    quad: VertexBufferId,
}

impl Scene {
    fn open(store: &std::path::Path) -> Self {
        let registry = registry();
        let library = ShaderLibrary::open(store).unwrap();
        let options = DeviceOptions { validation: true, ..DeviceOptions::default() };
        let mut device = registry.open_device(DeviceKind::VULKAN, &options).expect("a Vulkan device");
        let loader = DeviceLoader::attach(&registry, &device, &library).expect("attach");
        let layout = VertexLayout {
            stride: 2,
            attributes: vec![VertexAttribute { location: 0, components: 2, offset: 0 }].into(),
        };
        let quad = device.create_vertex_buffer(materials::QUAD.as_slice().into(), &layout).into_result().unwrap();
        Self { loaded: Vec::new(), loader, library, device, quad }
    }

    /// Whether the device offers graphics pipeline libraries.
    fn has_libraries(&self) -> bool {
        let capabilities = self.device.capabilities().into_result().unwrap();
        capabilities.has_extension("VK_EXT_graphics_pipeline_library")
    }

    /// Loads the unlit material with `pattern`, covering the target in `color`.
    fn load(&mut self, pattern: &str, color: [f32; 4]) -> ProgramRef {
        let request = LoadRequest {
            program: "unlit",
            variant: vec![("TINT", "1"), ("PATTERN", pattern)],
            ..LoadRequest::default()
        };
        let mut loaded = self.loader.load(&self.library, &request).unwrap();
        let constants = &mut loaded.built.constants;
        let rect = constants.handle("u_rect").unwrap();
        constants.set_vector(rect, &[-1.0, -1.0, 2.0, 2.0]).unwrap();
        let tint = constants.handle("u_color").unwrap();
        constants.set_vector(tint, &color).unwrap();
        let program = loaded.built.program;
        self.loaded.push(loaded);
        program
    }

    /// A new 8 × 8 target of `colors`, cleared.
    fn target(&mut self, colors: &[TextureFormat]) -> RenderTargetId {
        let desc = RenderTargetDesc { width: 8, height: 8, colors: colors.to_vec().into(), depth: false };
        let target = self.device.create_render_target_with(&desc).into_result().unwrap();
        self.device.clear(target, &CLEAR).into_result().unwrap();
        target
    }

    /// Draws `program` into `target` under `policy`.
    fn draw(&mut self, target: RenderTargetId, program: ProgramRef, policy: NotReady) {
        let draw = DrawCall::triangles(target, program, self.quad, 6).when_not_ready(policy);
        self.device.draw(&draw).into_result().unwrap_or_else(|e| panic!("{} draw: {e}", policy.name()));
        let messages = self.device.take_validation_messages().into_result().unwrap();
        assert!(messages.is_empty(), "{messages:?}");
    }

    /// The bytes of `target`'s first attachment.
    fn pixels(&mut self, target: RenderTargetId) -> Vec<u8> {
        let texture = self.device.render_target_texture(target, 0).into_result().unwrap();
        self.device.read_texture(texture, 0).into_result().unwrap().to_vec()
    }

    fn readiness(&self, program: ProgramRef, target: RenderTargetId) -> Readiness {
        self.device.readiness(program, target).into_result().unwrap()
    }

    /// Waits (30 s at most) until `program` is ready for `target`.
    fn until_ready(&self, program: ProgramRef, target: RenderTargetId) {
        let start = Instant::now();
        while self.readiness(program, target) != Readiness::Ready {
            assert!(start.elapsed() < Duration::from_secs(30), "still {:?}", self.readiness(program, target));
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The device counter `name`.
    fn device_counter(&self, name: &str) -> u64 {
        let counters = self.device.counters().into_result().unwrap();
        counters.iter().find(|c| c.name.as_str() == name).map(|c| c.value).unwrap_or_else(|| panic!("no {name}"))
    }

    /// The build systems' counter `name`.
    fn counter(&self, name: &str) -> u64 {
        self.loader.counter(name)
    }

    /// What the device counts of draws not given their program: (skipped, by the fallback).
    fn not_ready(&self) -> (u64, u64) {
        (
            self.device_counter(xr_device::readiness::DRAWS_SKIPPED),
            self.device_counter(xr_device::readiness::DRAWS_BY_FALLBACK),
        )
    }
}

impl Drop for Scene {
    fn drop(&mut self) {
        self.loaded.clear();
    }
}

/// The pixels of a cleared target: nothing was drawn.
fn cleared(scene: &mut Scene, colors: &[TextureFormat]) -> Vec<u8> {
    let target = scene.target(colors);
    scene.pixels(target)
}

const LINKED: &str = "pipelines linked from libraries";
const OPTIMIZED: &str = "pipelines optimized in the background";
const COMPILED: &str = "pipelines compiled";

#[test]
fn a_pipeline_linked_from_libraries_and_the_optimized_one_that_replaces_it_draw_the_same_pixels() {
    let name = "a_pipeline_linked_from_libraries_and_the_optimized_one_that_replaces_it_draw_the_same_pixels";
    // No Mesa shader cache: the times measured are compiles.
    let Some(store) = in_child(name, &[("MESA_SHADER_CACHE_DISABLE", "true")]) else {
        return;
    };
    let mut scene = Scene::open(&store);
    assert!(scene.has_libraries(), "the setup's lavapipe offers graphics pipeline libraries");
    let color = [0.3, 0.6, 0.9, 1.0];
    let linked_first = scene.load("checker", color);
    let whole = scene.load("checker", color);
    // A float target: its pixels say which formats the pipeline wrote for.
    let formats = [TextureFormat::Rgba16Float, TextureFormat::Rgba8];
    let target = scene.target(&formats);
    scene.draw(target, linked_first, NotReady::Skip);
    assert_eq!(scene.counter(LINKED), 1, "the first draw linked a pipeline at once");
    let linked = scene.pixels(target);
    assert_ne!(linked, cleared(&mut scene, &formats), "the linked pipeline drew");
    scene.until_ready(linked_first, target);
    assert_eq!(scene.counter(OPTIMIZED), 1, "the optimized pipeline replaced it");
    let again = scene.target(&formats);
    scene.draw(again, linked_first, NotReady::Skip);
    assert_eq!(scene.pixels(again), linked, "the optimized pipeline draws what the linked one drew");
    // The same program compiled whole, as a draw that waits makes it.
    let compiled_before = scene.counter(COMPILED);
    let waited = scene.target(&formats);
    scene.draw(waited, whole, NotReady::Wait);
    assert_eq!(scene.counter(COMPILED), compiled_before + 1);
    assert_eq!(scene.pixels(waited), linked, "a whole pipeline draws the same");
    assert_eq!(scene.not_ready(), (0, 0), "nothing was skipped");

    // What each costs, for a state neither program has: a fast link (the
    // fragment output library and the link, as a draw's question makes
    // them), the optimized link after it, and a whole compile.
    let float = scene.target(&[TextureFormat::Rgba32Float]);
    let started = Instant::now();
    assert_eq!(scene.readiness(linked_first, float), Readiness::Linked);
    let link = started.elapsed();
    scene.until_ready(linked_first, float);
    let optimized = started.elapsed();
    let started = Instant::now();
    let made = scene.loader.warm_draw_states(&scene.loaded[1], &["colors=rgba32f".to_owned()]).unwrap();
    let compile = started.elapsed();
    assert_eq!(made, 1);
    eprintln!("measured: fast link {link:?}, optimized ready after {optimized:?}, whole compile {compile:?}");
}

#[test]
fn under_skip_a_draw_whose_pipeline_compiles_draws_nothing_until_it_is_ready() {
    let vars = [("XR_VK_PIPELINE_LIBRARIES", "off")];
    let Some(store) = in_child("under_skip_a_draw_whose_pipeline_compiles_draws_nothing_until_it_is_ready", &vars)
    else {
        return;
    };
    let mut scene = Scene::open(&store);
    assert_eq!(scene.counter("pipeline libraries compiled"), 0, "libraries off: none made at load");
    let program = scene.load("stripes", [0.8, 0.4, 0.2, 1.0]);
    let formats = [TextureFormat::Rgba8];
    let target = scene.target(&formats);
    let clear = scene.pixels(target);
    scene.draw(target, program, NotReady::Skip);
    assert_eq!(scene.pixels(target), clear, "the skipped draw drew nothing");
    assert_eq!(scene.not_ready(), (1, 0));
    scene.until_ready(program, target);
    scene.draw(target, program, NotReady::Skip);
    let drawn = scene.pixels(target);
    assert_ne!(drawn, clear, "once ready, the draw draws");
    assert_eq!(scene.not_ready(), (1, 0), "and is not counted");
    assert_eq!(scene.counter(LINKED), 0, "no libraries: compiled whole");
    // The program's pixels: those of its own target, the same format.
    let own = scene.device.create_render_target(8, 8).into_result().unwrap();
    scene.device.clear(own, &CLEAR).into_result().unwrap();
    scene.draw(own, program, NotReady::Wait);
    assert_eq!(scene.device.read_pixels(own).into_result().unwrap().rgba.to_vec(), drawn);
}

#[test]
fn under_fallback_the_fallback_draws_until_the_program_is_ready() {
    let vars = [("XR_VK_PIPELINE_LIBRARIES", "off")];
    let Some(store) = in_child("under_fallback_the_fallback_draws_until_the_program_is_ready", &vars) else {
        return;
    };
    let mut scene = Scene::open(&store);
    let uber = scene.load("flat", [0.5, 0.5, 0.5, 1.0]);
    let program = scene.load("checker", [0.1, 0.9, 0.3, 1.0]);
    let formats = [TextureFormat::Rgba8];
    // The fallback has its pipeline for these formats: it was drawn into them.
    let warm = scene.target(&formats);
    scene.draw(warm, uber, NotReady::Wait);
    let fallback_pixels = scene.pixels(warm);
    let target = scene.target(&formats);
    scene.draw(target, program, NotReady::Fallback(uber));
    assert_eq!(scene.pixels(target), fallback_pixels, "the fallback drew");
    assert_eq!(scene.not_ready(), (0, 1));
    scene.until_ready(program, target);
    scene.draw(target, program, NotReady::Fallback(uber));
    let drawn = scene.pixels(target);
    assert_ne!(drawn, fallback_pixels, "once ready, the program draws");
    assert_eq!(scene.not_ready(), (0, 1));
}

#[test]
fn under_wait_the_draw_draws_the_program_and_nothing_is_counted() {
    let Some(store) = in_child("under_wait_the_draw_draws_the_program_and_nothing_is_counted", &[]) else {
        return;
    };
    let mut scene = Scene::open(&store);
    let program = scene.load("checker", [0.7, 0.2, 0.9, 1.0]);
    let compiled = scene.counter(COMPILED);
    let target = scene.target(&[TextureFormat::Rgba8]);
    scene.draw(target, program, NotReady::Wait);
    assert_eq!(scene.readiness(program, target), Readiness::Ready, "waited for");
    let own = scene.device.create_render_target(8, 8).into_result().unwrap();
    scene.device.clear(own, &CLEAR).into_result().unwrap();
    scene.draw(own, program, NotReady::Wait);
    let expected = scene.device.read_pixels(own).into_result().unwrap().rgba.to_vec();
    assert_eq!(scene.pixels(target), expected, "the program's pixels, as its own target has them");
    assert_eq!(scene.not_ready(), (0, 0));
    assert_eq!((scene.counter(COMPILED), scene.counter(LINKED)), (compiled + 1, 0), "compiled whole, as before");
}

#[test]
fn a_pipeline_linked_from_libraries_is_counted_apart_from_one_compiled_whole() {
    let Some(store) = in_child("a_pipeline_linked_from_libraries_is_counted_apart_from_one_compiled_whole", &[]) else {
        return;
    };
    let mut scene = Scene::open(&store);
    assert!(scene.has_libraries());
    let loaded_before =
        scene.counter("pipeline libraries compiled") + scene.counter("pipeline libraries from the pipeline cache");
    let program = scene.load("stripes", [0.2, 0.3, 0.4, 1.0]);
    let libraries =
        scene.counter("pipeline libraries compiled") + scene.counter("pipeline libraries from the pipeline cache");
    assert_eq!(libraries - loaded_before, 4, "its four parts, at load (two fragment shaders: with depth, without)");
    let compiled = scene.counter(COMPILED);
    let device_pipelines = scene.device_counter("pipelines");
    let linked_target = scene.target(&[TextureFormat::Rgba32Float]);
    scene.draw(linked_target, program, NotReady::Skip);
    assert_eq!((scene.counter(LINKED), scene.counter(COMPILED)), (1, compiled), "linked, not compiled");
    let whole_target = scene.target(&[TextureFormat::Rgba16Float]);
    scene.draw(whole_target, program, NotReady::Wait);
    assert_eq!((scene.counter(LINKED), scene.counter(COMPILED)), (1, compiled + 1), "compiled whole");
    scene.until_ready(program, linked_target);
    assert_eq!(scene.counter(OPTIMIZED), 1);
    assert_eq!(scene.device_counter("pipelines"), device_pipelines + 3, "linked, whole, optimized");
}

/// Debian 12's lavapipe (Mesa 22.3) offers graphics pipeline libraries
/// too: its first draws under every policy, with the libraries it has.
#[test]
fn the_old_driver_draws_under_every_policy() {
    let Some(store) = in_child("the_old_driver_draws_under_every_policy", &old_driver()) else {
        return;
    };
    let mut scene = Scene::open(&store);
    assert!(scene.has_libraries(), "Debian 12's lavapipe offers graphics pipeline libraries");
    draws_under_every_policy(&mut scene, true);
}

/// The same driver with the libraries off: each first draw that does not
/// wait finds its pipeline compiling.
#[test]
fn the_old_driver_without_libraries_draws_under_every_policy() {
    let mut vars = old_driver().to_vec();
    vars.push(("XR_VK_PIPELINE_LIBRARIES", "off"));
    let Some(store) = in_child("the_old_driver_without_libraries_draws_under_every_policy", &vars) else {
        return;
    };
    let mut scene = Scene::open(&store);
    draws_under_every_policy(&mut scene, false);
}

/// A program's first draw into new formats under each policy, then again
/// once it is ready: with `libraries`, every first draw draws the program
/// (linked at once); without, the skipped one draws nothing and the
/// fallback's draws the fallback.
fn draws_under_every_policy(scene: &mut Scene, libraries: bool) {
    let capabilities = scene.device.capabilities().into_result().unwrap();
    assert!(!capabilities.has_extension("VK_EXT_shader_object"), "Mesa 22.3 has no shader objects: {capabilities:?}");
    let uber = scene.load("flat", [0.5, 0.5, 0.5, 1.0]);
    let made =
        scene.counter("pipeline libraries compiled") + scene.counter("pipeline libraries from the pipeline cache");
    assert_eq!(made > 0, libraries, "libraries made at load");
    let formats = [TextureFormat::Rgba8];
    let warm = scene.target(&formats);
    scene.draw(warm, uber, NotReady::Wait);
    let fallback_pixels = scene.pixels(warm);
    let clear = cleared(scene, &formats);
    for (i, policy) in [NotReady::Wait, NotReady::Skip, NotReady::Fallback(uber)].into_iter().enumerate() {
        // A program of its own per policy: each first draw finds no pipeline.
        let program = scene.load(["checker", "stripes", "flat"][i], [0.9, 0.1, 0.4, 1.0]);
        let target = scene.target(&formats);
        scene.draw(target, program, policy);
        let first = scene.pixels(target);
        match policy {
            NotReady::Skip if !libraries => assert_eq!(first, clear, "skipped"),
            NotReady::Fallback(_) if !libraries => assert_eq!(first, fallback_pixels, "the fallback drew"),
            _ => assert!(first != clear && first != fallback_pixels, "{}: the program drew", policy.name()),
        }
        scene.until_ready(program, target);
        scene.draw(target, program, policy);
        let drawn = scene.pixels(target);
        assert!(drawn != clear && drawn != fallback_pixels, "{}: once ready, the program draws", policy.name());
    }
    let counted = if libraries { (0, 0) } else { (1, 1) };
    assert_eq!(scene.not_ready(), counted);
}

/// A device closed while pipelines compile on other threads for its
/// programs (the engine drops it before them) first waits for those
/// threads (`VulkanProgram::settle`): each may be inside a call on the
/// device. Without libraries, each new draw state compiles whole on a
/// thread; right after the device is gone, every one of them has finished.
#[test]
fn a_device_closed_while_its_pipelines_compile_waits_for_them_first() {
    let name = "a_device_closed_while_its_pipelines_compile_waits_for_them_first";
    let Some(store) = in_child(name, &[("XR_VK_PIPELINE_LIBRARIES", "off")]) else {
        return;
    };
    let registry = registry();
    let library = ShaderLibrary::open(&store).unwrap();
    let mut device = registry.open_device(DeviceKind::VULKAN, &DeviceOptions::default()).expect("a Vulkan device");
    let mut loader = DeviceLoader::attach(&registry, &device, &library).expect("attach");
    let request =
        LoadRequest { program: "unlit", variant: vec![("TINT", "1"), ("PATTERN", "flat")], ..LoadRequest::default() };
    let mut loaded = loader.load(&library, &request).unwrap();
    let constants = &mut loaded.built.constants;
    let rect = constants.handle("u_rect").unwrap();
    constants.set_vector(rect, &[-1.0, -1.0, 2.0, 2.0]).unwrap();
    let layout =
        VertexLayout { stride: 2, attributes: vec![VertexAttribute { location: 0, components: 2, offset: 0 }].into() };
    let quad = device.create_vertex_buffer(materials::QUAD.as_slice().into(), &layout).into_result().unwrap();
    // Every list of one to three of the three formats, with depth and
    // without: 78 states, more compiles than the device's close outlasts.
    let formats = [TextureFormat::Rgba8, TextureFormat::Rgba16Float, TextureFormat::Rgba32Float];
    let mut shapes: Vec<(Vec<TextureFormat>, bool)> = Vec::new();
    for count in 1..=3u32 {
        for index in 0..3usize.pow(count) {
            let colors: Vec<TextureFormat> = (0..count).map(|i| formats[index / 3usize.pow(i) % 3]).collect();
            shapes.push((colors.clone(), false));
            shapes.push((colors, true));
        }
    }
    let before = loader.counter(COMPILED);
    let targets: Vec<RenderTargetId> = shapes
        .iter()
        .map(|(colors, depth)| {
            let desc = RenderTargetDesc { width: 8, height: 8, colors: colors.clone().into(), depth: *depth };
            device.create_render_target_with(&desc).into_result().unwrap()
        })
        .collect();
    // The draws skip at once, each starting a compile: the device closes
    // while most of them run.
    for target in targets {
        let draw = DrawCall::triangles(target, loaded.built.program, quad, 6).when_not_ready(NotReady::Skip);
        device.draw(&draw).into_result().unwrap();
    }
    let done_before_close = loader.counter(COMPILED) - before;
    println!("measured: {done_before_close} of {} compiles done when the device closed", shapes.len());
    drop(device);
    let compiled = loader.counter(COMPILED) - before;
    assert_eq!(compiled, shapes.len() as u64, "every compile started had ended when the device was gone");
    // xr_compiler_vk_spirv::counter::THREADS_SETTLED: the device waited for
    // the threads it found (at least the last one started, never joined before).
    let waited = loader.counter("pipeline threads a closing device waited for");
    assert!(waited > 0, "the closing device waited for the program's threads");
    drop(loaded);
    drop(loader);
}
