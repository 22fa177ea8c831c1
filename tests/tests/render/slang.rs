//! Slang programs drawn on both devices with the plugin's default options:
//! what Slang writes must be SPIR-V of the environment it was asked for.

use xr_device::{DeviceKind, DeviceOptions, DrawCall, VertexLayout};
use xr_library::{DeviceLoader, LoadPath, LoadRequest, ShaderLibrary};
use xr_tests::{registry, temp_dir, xr_build};

/// A full-screen triangle placed by `SV_VertexID` alone (no vertex input):
/// Slang writes it as `VertexIndex - BaseVertex`, which needs the
/// `DrawParameters` capability, core only from SPIR-V 1.3 (Vulkan 1.1); the
/// defaults are Vulkan 1.0's SPIR-V 1.0 and OpenGL's.
const VERTEX_ID: &str = r#"
struct VOut { float4 position : SV_Position; };

[shader("vertex")]
VOut vertexMain(uint id : SV_VertexID) {
    VOut o;
    float2 p = float2(float((id << 1u) & 2u), float(id & 2u));
    o.position = float4(p * 2.0 - 1.0, 0.0, 1.0);
    return o;
}

[shader("fragment")]
float4 fragmentMain(VOut i) : SV_Target { return float4(1.0, 0.5, 0.0, 1.0); }
"#;

#[test]
fn a_slang_vertex_stage_reading_sv_vertex_id_draws_on_vk_spirv_and_gl_spirv_with_the_default_options() {
    let dir = temp_dir("slang-vertex-id");
    std::fs::write(dir.join("fullscreen.slang"), VERTEX_ID).unwrap();
    std::fs::write(
        dir.join("xr.toml"),
        "store = \"store\"\n\n[[program]]\nname = \"fullscreen\"\ntargets = [\"vk-spirv\", \"gl-spirv\"]\nstages = [\n    \
         { stage = \"vertex\", file = \"fullscreen.slang\", entry = \"vertexMain\" },\n    \
         { stage = \"fragment\", file = \"fullscreen.slang\", entry = \"fragmentMain\" },\n]\n",
    )
    .unwrap();
    xr_build(&dir);
    let registry = registry();
    let library = ShaderLibrary::open(&dir.join("store")).unwrap();
    for kind in [DeviceKind::VULKAN, DeviceKind::OPENGL] {
        let options = DeviceOptions { validation: kind == DeviceKind::VULKAN, ..DeviceOptions::default() };
        let mut device = registry.open_device(kind, &options).unwrap();
        let mut loader = DeviceLoader::attach(&registry, &device, &library).unwrap();
        let request =
            LoadRequest { program: "fullscreen", paths: vec![LoadPath::CompatibleObject], ..LoadRequest::default() };
        let loaded = loader.load(&library, &request).unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        // Three vertices the shader does not read.
        let layout = VertexLayout { stride: 1, attributes: Vec::new().into() };
        let buffer = device.create_vertex_buffer([0.0f32; 3].as_slice().into(), &layout).into_result().unwrap();
        let target = device.create_render_target(8, 8).into_result().unwrap();
        device.clear(target, &[0.0, 0.0, 0.0, 1.0]).into_result().unwrap();
        device.draw(&DrawCall::triangles(target, loaded.built.program, buffer, 3)).into_result().unwrap();
        let image = device.read_pixels(target).into_result().unwrap();
        // Every pixel covered: the three vertices went where their index says.
        for (x, y) in [(0, 0), (7, 0), (0, 7), (7, 7), (4, 4)] {
            assert_eq!(image.pixel(x, y), Some([255, 128, 0, 255]), "{kind:?} ({}): pixel {x}, {y}", loaded.target);
        }
        drop(loaded);
        drop(loader);
    }
}
