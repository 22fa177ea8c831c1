//! Draws that do not wait for a compile: the materials scene's programs
//! drawn into targets of formats they were never drawn into, under each
//! policy (`NotReady`), on the real drivers: the pixels each policy
//! promises, and the device's counts of draws skipped or drawn by the
//! fallback. (Vulkan's pipelines linked from libraries: pipeline_libraries.rs.)

use materials::{CLEAR, QUAD, SIZE};
use xr_device::{
    DeviceBox, DeviceKind, DeviceOptions, DrawCall, Image, NotReady, ProgramRef, Readiness, RenderTargetDesc,
    RenderTargetId, TextureFormat, VertexAttribute, VertexBufferId, VertexLayout,
    readiness::{DRAWS_BY_FALLBACK, DRAWS_SKIPPED},
};
use xr_host::Registry;
use xr_library::{DeviceLoader, ShaderLibrary};
use xr_tests::{materials_built, registry};

/// A device with the scene loaded: its programs (constants set) and a
/// quad. The fields drop in order: the programs before the loader that
/// made them, and it before the device.
struct Drawn {
    scene: materials::Scene,
    quad: VertexBufferId,
    loader: DeviceLoader,
    device: DeviceBox,
}

impl Drawn {
    fn open(registry: &Registry, library: &ShaderLibrary, kind: DeviceKind) -> Self {
        let mut device = registry.open_device(kind, &DeviceOptions::default()).expect("device");
        let mut loader = DeviceLoader::attach(registry, &device, library).expect("attach");
        let scene = materials::Scene::load(&mut device, &mut loader, library, &[], SIZE).expect("the scene loads");
        let layout = VertexLayout {
            stride: 2,
            attributes: vec![VertexAttribute { location: 0, components: 2, offset: 0 }].into(),
        };
        let quad = device.create_vertex_buffer(QUAD.as_slice().into(), &layout).into_result().expect("quad");
        Self { scene, quad, loader, device }
    }

    fn programs(&self) -> Vec<ProgramRef> {
        self.scene.programs()
    }

    /// A target of `colors` (attachment 0 RGBA8, so that it reads back), with or without depth.
    fn target(&mut self, colors: &[TextureFormat], depth: bool) -> RenderTargetId {
        let desc = RenderTargetDesc { width: SIZE, height: SIZE, colors: colors.to_vec().into(), depth };
        self.device.create_render_target_with(&desc).into_result().expect("target")
    }

    /// Clears `target`, draws `programs` into it under `policy`, reads it back.
    fn draw(&mut self, target: RenderTargetId, programs: &[ProgramRef], policy: NotReady) -> Image {
        self.device.clear(target, &CLEAR).into_result().expect("clear");
        for program in programs {
            let call = DrawCall::triangles(target, *program, self.quad, 6).when_not_ready(policy);
            self.device.draw(&call).into_result().expect("a draw that is not ready is no error");
        }
        self.device.read_pixels(target).into_result().expect("read back")
    }

    fn counter(&self, name: &str) -> u64 {
        let counters = self.device.counters().into_result().expect("counters");
        counters.iter().find(|c| c.name == name).map_or(0, |c| c.value)
    }

    fn readiness(&self, program: ProgramRef, target: RenderTargetId) -> Readiness {
        self.device.readiness(program, target).into_result().expect("readiness")
    }

    /// Waits, boundedly, until every one of `programs` is ready for `target`.
    fn wait_until_ready(&self, programs: &[ProgramRef], target: RenderTargetId) {
        let started = std::time::Instant::now();
        while programs.iter().any(|p| self.readiness(*p, target) != Readiness::Ready) {
            assert!(started.elapsed().as_secs() < 60, "the pipelines were not made in a minute");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

fn cleared(image: &Image) -> bool {
    let clear = xr_tests::rgba8(CLEAR);
    image.rgba.chunks(4).all(|p| p == clear)
}

/// On wgpu a pipeline is made per draw state; a draw that does not wait
/// finds none for a new target and starts it on a worker thread: under
/// `skip` the first frame into the target draws nothing (counted), and
/// once the pipelines are made the scene is the one `wait` draws; under
/// `fallback`, every tile not ready draws the fallback's pixels instead.
#[test]
fn a_wgpu_draw_that_does_not_wait_makes_its_pipeline_on_a_worker_thread_and_draws_by_its_policy() {
    let dir = materials_built("not-ready-wgpu");
    let registry = registry();
    let Some(kind) = registry.device_kind_named("wgpu") else { panic!("no wgpu device system") };
    let library = ShaderLibrary::open(&dir.join("store")).unwrap();
    let mut drawn = Drawn::open(&registry, &library, kind);
    let programs = drawn.programs();
    let tiles = programs.len() as u64;

    // Today's behaviour: the draws wait, the scene is there at once.
    let waited_into = drawn.target(&[TextureFormat::Rgba8], false);
    let waited = drawn.draw(waited_into, &programs, NotReady::Wait);
    assert!(!cleared(&waited), "the scene is drawn");
    assert_eq!((drawn.counter(DRAWS_SKIPPED), drawn.counter(DRAWS_BY_FALLBACK)), (0, 0), "waiting counts nothing");

    // A target with depth is a new draw state: nothing drawn, all counted.
    let skipped_into = drawn.target(&[TextureFormat::Rgba8], true);
    assert_eq!(drawn.readiness(programs[1], skipped_into), Readiness::Compiling);
    let first = drawn.draw(skipped_into, &programs, NotReady::Skip);
    assert!(cleared(&first), "under skip, no tile waits for its pipeline");
    assert_eq!(drawn.counter(DRAWS_SKIPPED), tiles);
    drawn.wait_until_ready(&programs, skipped_into);
    let later = drawn.draw(skipped_into, &programs, NotReady::Skip);
    assert_eq!(later, waited, "once made, the pipelines draw what waiting drew");
    assert_eq!(drawn.counter(DRAWS_SKIPPED), tiles, "nothing skipped once ready");

    // Another new state: the fallback (the first tile's program, made for
    // this target first) draws in place of every tile not ready.
    let fallen_into = drawn.target(&[TextureFormat::Rgba8, TextureFormat::Rgba16Float], false);
    let fallback = programs[0];
    let fallback_alone = drawn.draw(fallen_into, &[fallback], NotReady::Wait);
    let with_fallback = drawn.draw(fallen_into, &programs, NotReady::Fallback(fallback));
    assert_eq!(drawn.counter(DRAWS_BY_FALLBACK), tiles - 1, "every tile but the fallback's own");
    assert_eq!(with_fallback, fallback_alone, "the fallback's pixels, and only them");
    drawn.wait_until_ready(&programs, fallen_into);
    assert_eq!(drawn.draw(fallen_into, &programs, NotReady::Fallback(fallback)), waited);
    assert_eq!(drawn.counter(DRAWS_BY_FALLBACK), tiles - 1);
}

/// OpenGL turns on the driver's parallel shader compile and, under `skip`
/// or `fallback`, draws by the link's completion status. Mesa's llvmpipe
/// links before `glLinkProgram` returns (the build systems' count of links
/// still running then is 0): every program is ready at once, so each
/// policy draws the scene `wait` draws and counts nothing. On a driver that
/// links on threads of its own, the same draws would skip or fall back
/// while the count says links were running.
#[test]
fn an_opengl_draw_follows_the_link_status_the_driver_reports() {
    let dir = materials_built("not-ready-gl");
    let registry = registry();
    let library = ShaderLibrary::open(&dir.join("store")).unwrap();
    let mut drawn = Drawn::open(&registry, &library, DeviceKind::OPENGL);
    let programs = drawn.programs();
    // xr_gl_common::link::LINKS_RUNNING_AT_RETURN, kept by each GL build
    // system where the driver has parallel compile (llvmpipe has).
    let counted: Vec<u64> = drawn
        .loader
        .counters()
        .into_iter()
        .filter(|(_, name, _)| name == "links still running when glLinkProgram returned")
        .map(|(_, _, value)| value)
        .collect();
    assert!(!counted.is_empty(), "the GL build systems watch the links of a driver with parallel compile");
    let running: u64 = counted.iter().sum();
    println!("links still running when glLinkProgram returned: {running}");
    let target = drawn.target(&[TextureFormat::Rgba8, TextureFormat::Rgba16Float], true);
    let ready = programs.iter().filter(|p| drawn.readiness(**p, target) == Readiness::Ready).count();
    if running == 0 {
        assert_eq!(ready, programs.len(), "no link was running, so every program is ready");
    }
    let waited = drawn.draw(target, &programs, NotReady::Wait);
    assert!(!cleared(&waited), "the scene is drawn");
    let skipped = drawn.draw(target, &programs, NotReady::Skip);
    let fell_back = drawn.draw(target, &programs, NotReady::Fallback(programs[0]));
    let not_ready = (programs.len() - ready) as u64;
    assert_eq!(drawn.counter(DRAWS_SKIPPED), not_ready, "{running} links were running at return");
    assert_eq!(drawn.counter(DRAWS_BY_FALLBACK), not_ready);
    if not_ready == 0 {
        assert_eq!(skipped, waited, "ready programs draw under skip");
        assert_eq!(fell_back, waited, "ready programs draw themselves under fallback");
    }
    // A name that is no program is an error under every policy, never a
    // draw skipped as "not ready".
    for policy in [NotReady::Wait, NotReady::Skip, NotReady::Fallback(programs[0])] {
        let call = DrawCall::triangles(target, ProgramRef::program(999_999), drawn.quad, 6).when_not_ready(policy);
        let error = drawn.device.draw(&call).into_result().expect_err("no such program");
        assert!(error.message.contains("999999 is not a program on this device"), "{policy:?}: {error}");
    }
    assert_eq!(drawn.counter(DRAWS_SKIPPED), not_ready, "nothing counted for it");
}
