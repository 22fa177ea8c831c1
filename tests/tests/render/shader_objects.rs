//! The Vulkan device's two ways of drawing a graphics program: shader
//! objects (the setup's lavapipe 25 has `VK_EXT_shader_object`; Debian 12's
//! validation layers predate it, so a device opened without validation
//! takes them) and pipelines (under the layers, or with
//! `XR_VK_SHADER_OBJECTS=off`). The device counts the pipelines and shader
//! objects its build systems make: a draw into a target of new formats
//! makes nothing with shader objects, and a pipeline with pipelines.

use xr_device::{DeviceKind, DeviceOptions, RenderTargetDesc, TextureFormat, VertexAttribute, VertexLayout};
use xr_sourcebuild::{BuildOptions, ConstantTableExt, ProgramDesc, ShaderStage, SourceDesc};
use xr_tests::{FULLSCREEN_VERT, GlBench, registry};

const VK_SPIRV: &str = "xr-compiler-vk-spirv";

/// Writes a colour set through a uniform block (location 0 only).
const TINTED: &str = "#version 450
layout(std140, binding = 0) uniform Material { vec4 tint; };
layout(location = 0) in vec2 v_uv;
layout(location = 0) out vec4 c;
void main() { c = tint; }
";

/// The device's pipelines and shader objects made so far.
fn created(bench: &GlBench) -> (u64, u64) {
    let counters = bench.device.counters().into_result().expect("counters");
    let count = |name: &str| {
        counters
            .iter()
            .find(|c| c.name.as_str() == name)
            .map(|c| c.value)
            .unwrap_or_else(|| panic!("no {name} counter"))
    };
    (count("pipelines"), count("shader objects"))
}

/// The first pixel of attachment `attachment` of `target` as floats.
fn first_pixel(
    bench: &mut GlBench,
    target: xr_device::RenderTargetId,
    format: TextureFormat,
    attachment: u32,
) -> [f32; 4] {
    let texture = bench.device.render_target_texture(target, attachment).into_result().expect("attachment texture");
    let bytes = bench.device.read_texture(texture, 0).into_result().expect("read back");
    let channel = |i: usize| match format {
        TextureFormat::Rgba8 => f32::from(bytes[i]) / 255.0,
        TextureFormat::Rgba16Float => half(u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]])),
        TextureFormat::Rgba32Float => f32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap()),
    };
    [channel(0), channel(1), channel(2), channel(3)]
}

/// An IEEE half's value (normal numbers and zero: what a colour target holds here).
fn half(bits: u16) -> f32 {
    let exponent = i32::from((bits >> 10) & 0x1f);
    let mantissa = f32::from(bits & 0x3ff) / 1024.0;
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    if exponent == 0 { sign * mantissa * 2f32.powi(-14) } else { sign * (1.0 + mantissa) * 2f32.powi(exponent - 15) }
}

/// The pipelines and shader objects made by building a program and by
/// drawing it.
struct Made {
    building: (u64, u64),
    drawing: (u64, u64),
}

fn since(before: (u64, u64), after: (u64, u64)) -> (u64, u64) {
    (after.0 - before.0, after.1 - before.1)
}

/// Builds a program writing attachment 0, draws it into five targets of
/// different attachment formats and checks what each holds.
fn draw_into_five_targets(bench: &mut GlBench) -> Made {
    let opened = created(bench);
    let vertex = SourceDesc::new("glsl", ShaderStage::Vertex, "fullscreen.vert", FULLSCREEN_VERT);
    let fragment = SourceDesc::new("glsl", ShaderStage::Fragment, "tinted.frag", TINTED);
    let desc = ProgramDesc::new("tinted", [vertex, fragment]);
    let mut built = bench.compiler.build_program(&desc, &BuildOptions::default()).into_result().expect("builds");
    let tint = built.constants.handle("tint").unwrap();
    built.constants.set_vector(tint, &[1.0, 0.5, 0.25, 1.0]).unwrap();
    let quad = [-1.0f32, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0, -1.0, 1.0, 1.0, -1.0, 1.0];
    let layout =
        VertexLayout { stride: 2, attributes: vec![VertexAttribute { location: 0, components: 2, offset: 0 }].into() };
    let quad = bench.device.create_vertex_buffer(quad.as_slice().into(), &layout).into_result().unwrap();
    use TextureFormat::{Rgba8, Rgba16Float, Rgba32Float};
    let shapes: [(&[TextureFormat], bool); 5] = [
        (&[Rgba8], false),
        (&[Rgba16Float], false),
        (&[Rgba32Float], false),
        (&[Rgba8, Rgba16Float], false),
        (&[Rgba16Float], true),
    ];
    let built_at = created(bench);
    for (colors, depth) in shapes {
        let desc = RenderTargetDesc { width: 8, height: 8, colors: colors.to_vec().into(), depth };
        let target = bench.device.create_render_target_with(&desc).into_result().expect("target");
        bench.device.clear(target, &[0.0, 0.0, 0.0, 0.0]).into_result().unwrap();
        let mut draw = xr_device::DrawCall::triangles(target, built.program, quad, 6);
        draw.depth_test = depth;
        bench.device.draw(&draw).into_result().unwrap_or_else(|e| panic!("drawing into {colors:?}: {e}"));
        let pixel = first_pixel(bench, target, colors[0], 0);
        let close = pixel.iter().zip([1.0, 0.5, 0.25, 1.0]).all(|(a, e)| (a - e).abs() < 0.01);
        assert!(close, "{colors:?}: attachment 0 holds {pixel:?}");
        if colors.len() > 1 {
            // The fragment stage writes no output for it: it keeps its clear colour.
            assert_eq!(first_pixel(bench, target, colors[1], 1), [0.0; 4], "{colors:?}: attachment 1");
        }
    }
    Made { building: since(opened, built_at), drawing: since(built_at, created(bench)) }
}

#[test]
fn drawing_into_five_targets_of_new_formats_makes_nothing_with_shader_objects() {
    let registry = registry();
    let mut bench = GlBench::open_with(&registry, DeviceKind::VULKAN, VK_SPIRV, &DeviceOptions::default());
    assert!(
        bench.capabilities.extensions.iter().any(|e| e.as_str() == "VK_EXT_shader_object"),
        "the setup's lavapipe offers shader objects ({}): is target/lavapipe in VK_ADD_DRIVER_FILES?",
        bench.capabilities.renderer
    );
    let made = draw_into_five_targets(&mut bench);
    // The build makes the program's two stages and no pipeline; the draws make nothing.
    assert_eq!(made.building, (0, 2), "building made (pipelines, shader objects)");
    assert_eq!(made.drawing, (0, 0), "the draws made (pipelines, shader objects)");
}

#[test]
fn with_pipelines_each_draw_into_a_target_of_new_formats_makes_one() {
    let registry = registry();
    // Debian 12's layers predate shader objects: under them, programs are pipelines.
    let mut bench = GlBench::vulkan(&registry, VK_SPIRV);
    let made = draw_into_five_targets(&mut bench);
    // The build makes the pipelines of the device's own target formats;
    // each of the five targets has others, and its first draw makes one.
    assert_eq!(made.building.1, 0, "no shader object on the pipeline path");
    assert_eq!(made.drawing, (5, 0), "the draws made (pipelines, shader objects)");
    let messages = bench.device.take_validation_messages().into_result().unwrap();
    assert!(messages.is_empty(), "{messages:?}");
}
