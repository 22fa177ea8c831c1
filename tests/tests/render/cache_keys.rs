//! The caches a load goes through, driven through the run-time library:
//! one artifact loaded twice on one device with two override values. A
//! binary kept for one value must never be served for the other (the
//! override values are part of the key), so each load reports which
//! binary it took and each draw gives its own pixels.

use std::path::Path;
use xr_device::{DeviceKind, DeviceOptions, DrawCall, VertexAttribute, VertexLayout};
use xr_library::{DeviceLoader, LoadPath, LoadRequest, ShaderLibrary};
use xr_sourcebuild::ConstantTableExt;
use xr_tests::{materials_built, registry};

/// `unlit` flat, base colour (0.2, 0.6, 1.0): GAIN scales it.
/// On OpenGL, the stored GLSL's path (the SPIR-V one keeps no binary).
fn request(gain: f64, kind: DeviceKind) -> LoadRequest<'static> {
    let paths = if kind == DeviceKind::OPENGL { vec![LoadPath::DeviceBinary, LoadPath::Source] } else { Vec::new() };
    LoadRequest {
        program: "unlit",
        variant: vec![("TINT", "0"), ("PATTERN", "flat")],
        overrides: vec![("GAIN", gain)],
        paths,
    }
}

/// Loads `unlit` with `gain` on `device` and draws it over an 8 × 8
/// target: the path it took, why, and the centre pixel.
fn load_and_draw(
    device: &mut xr_device::DeviceBox,
    loader: &mut DeviceLoader,
    library: &ShaderLibrary,
    gain: f64,
    kind: DeviceKind,
) -> (LoadPath, String, [u8; 4]) {
    let mut loaded = loader.load(library, &request(gain, kind)).unwrap_or_else(|e| panic!("GAIN {gain}: {e}"));
    let constants = &mut loaded.built.constants;
    constants.set_vector(constants.handle("u_rect").unwrap(), &[-1.0, -1.0, 2.0, 2.0]).unwrap();
    constants.set_vector(constants.handle("u_color").unwrap(), &[0.2, 0.6, 1.0, 1.0]).unwrap();
    let layout =
        VertexLayout { stride: 2, attributes: vec![VertexAttribute { location: 0, components: 2, offset: 0 }].into() };
    let quad = device.create_vertex_buffer(materials::QUAD.as_slice().into(), &layout).into_result().unwrap();
    let target = device.create_render_target(8, 8).into_result().unwrap();
    device.clear(target, &[0.0; 4]).into_result().unwrap();
    device.draw(&DrawCall::triangles(target, loaded.built.program, quad, 6)).into_result().unwrap();
    let image = device.read_pixels(target).into_result().unwrap();
    let at = (4 * 8 + 4) * 4;
    let pixel = [image.rgba[at], image.rgba[at + 1], image.rgba[at + 2], image.rgba[at + 3]];
    (loaded.path, loaded.reason, pixel)
}

/// Loads GAIN 0.5 then 1.0 twice over, on one device: the paths taken and
/// the pixels drawn.
fn twice_with_two_values(store: &Path, kind: DeviceKind, options: &DeviceOptions) -> Vec<(LoadPath, String, [u8; 4])> {
    let registry = registry();
    let library = ShaderLibrary::open(store).unwrap();
    let mut device = registry.open_device(kind, options).expect("device");
    let mut loader = DeviceLoader::attach(&registry, &device, &library).expect("attach");
    let loads = [0.5, 1.0, 0.5, 1.0].map(|gain| load_and_draw(&mut device, &mut loader, &library, gain, kind)).to_vec();
    drop(loader);
    loads
}

/// GAIN 0.5 halves the base colour; 1.0 keeps it.
fn assert_pixels(loads: &[(LoadPath, String, [u8; 4])]) {
    let near = |a: [u8; 4], b: [u8; 4]| a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= 1);
    assert!(near(loads[0].2, [26, 77, 128, 255]), "GAIN 0.5: {:?}", loads[0]);
    assert!(near(loads[1].2, [51, 153, 255, 255]), "GAIN 1.0: {:?}", loads[1]);
    assert_eq!(loads[2].2, loads[0].2, "GAIN 0.5 again draws its own pixels");
    assert_eq!(loads[3].2, loads[1].2, "GAIN 1.0 again draws its own pixels");
}

/// Shader objects (lavapipe 25): the first load of each value makes its
/// own shader binaries; the second load of each takes them.
#[test]
fn shader_binaries_of_one_object_with_two_override_values_are_two_binaries() {
    let dir = materials_built("cache-keys-shader-binaries");
    let loads = twice_with_two_values(&dir.join("store"), DeviceKind::VULKAN, &DeviceOptions::default());
    let paths: Vec<LoadPath> = loads.iter().map(|l| l.0).collect();
    assert_eq!(
        paths,
        [LoadPath::CompatibleObject, LoadPath::CompatibleObject, LoadPath::DeviceBinary, LoadPath::DeviceBinary],
        "GAIN 1.0 must not be served GAIN 0.5's binaries: {loads:?}"
    );
    assert!(loads[1].1.contains("shader binaries written back"), "{loads:?}");
    assert!(loads[3].1.contains("the driver's stored shader binaries"), "{loads:?}");
    assert_pixels(&loads);
}

/// Pipelines (under the validation layers, which predate shader objects):
/// the values are specialization constants of each pipeline.
#[test]
fn pipelines_of_one_object_with_two_override_values_draw_their_own_pixels() {
    let dir = materials_built("cache-keys-pipelines");
    let options = DeviceOptions { validation: true, ..DeviceOptions::default() };
    let loads = twice_with_two_values(&dir.join("store"), DeviceKind::VULKAN, &options);
    assert!(loads.iter().all(|l| l.0 == LoadPath::CompatibleObject), "{loads:?}");
    assert_pixels(&loads);
}

/// OpenGL: the values are defines of the stored GLSL; each value's
/// program binary is its own.
#[test]
fn program_binaries_of_one_artifact_with_two_override_values_are_two_binaries() {
    let dir = materials_built("cache-keys-program-binaries");
    let loads = twice_with_two_values(&dir.join("store"), DeviceKind::OPENGL, &DeviceOptions::default());
    let paths: Vec<LoadPath> = loads.iter().map(|l| l.0).collect();
    assert_eq!(
        paths,
        [LoadPath::Source, LoadPath::Source, LoadPath::DeviceBinary, LoadPath::DeviceBinary],
        "GAIN 1.0 must not be served GAIN 0.5's program binary: {loads:?}"
    );
    assert_pixels(&loads);
}
