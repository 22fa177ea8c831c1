//! GLSL written once for every device: loose uniforms (`uniform vec4
//! tint;`), as OpenGL code has them, built for gl-glsl, gl-spirv and
//! vk-spirv, set by name through the constant table, draw the same pixels
//! on OpenGL, Vulkan and wgpu. On Vulkan XR places them in one uniform
//! block (`xr_spirv::loose_uniforms`): the vertex stage's and the fragment
//! stage's, one of them from an included file, at one offset each.

use xr_library::{DeviceLoader, LoadPath, LoadRequest, ShaderLibrary};
use xr_sourcebuild::ConstantTableExt;

const VERTEX: &str = "#version 450 core
layout(location = 0) in vec2 in_position;
// Where the quad goes: x, y of its corner and its size, in clip space.
uniform vec4 rect;
void main() {
    gl_Position = vec4(rect.xy + (in_position * 0.5 + 0.5) * rect.zw, 0.0, 1.0);
}
";

const FRAGMENT: &str = "#version 450 core
#include \"gain.glsl\"
uniform vec4 tint;
layout(location = 0) out vec4 out_color;
void main() {
    out_color = vec4(tint.rgb * gain, 1.0);
}
";

/// Where the quad is drawn, the tint and the gain each draw sets.
const RECT: [f32; 4] = [-1.0, -1.0, 1.0, 2.0];
const TINT: [f32; 4] = [0.2, 0.4, 0.6, 1.0];
const GAIN: f32 = 1.5;

/// A test directory with the tinted program's shaders under `shaders/`.
fn with_tinted_shaders(label: &str) -> xr_tests::TestDir {
    let dir = xr_tests::temp_dir(label);
    let shaders = dir.join("shaders");
    std::fs::create_dir_all(&shaders).unwrap();
    std::fs::write(shaders.join("quad.vert"), VERTEX).unwrap();
    std::fs::write(shaders.join("tint.frag"), FRAGMENT).unwrap();
    std::fs::write(shaders.join("gain.glsl"), "uniform float gain;\n").unwrap();
    dir
}

fn built() -> xr_tests::TestDir {
    let dir = with_tinted_shaders("loose-uniforms");
    std::fs::write(
        dir.join("xr.toml"),
        r#"store = "store"
[[program]]
name = "tinted"
targets = ["gl-glsl", "gl-spirv", "vk-spirv"]
stages = [
    { stage = "vertex", file = "shaders/quad.vert" },
    { stage = "fragment", file = "shaders/tint.frag" },
]
"#,
    )
    .unwrap();
    xr_tests::xr_build(&dir);
    dir
}

#[test]
fn loose_uniforms_set_by_name_draw_the_same_pixels_on_every_device_and_target() {
    let dir = built();
    let registry = xr_tests::registry();
    let library = ShaderLibrary::open(&dir.join("store")).unwrap();
    let runs = [
        (xr_device::DeviceKind::OPENGL, LoadPath::Source, "gl-glsl"),
        (xr_device::DeviceKind::OPENGL, LoadPath::CompatibleObject, "gl-spirv"),
        (xr_device::DeviceKind::VULKAN, LoadPath::CompatibleObject, "vk-spirv"),
        (materials::WGPU, LoadPath::CompatibleObject, "vk-spirv"),
    ];
    let mut images = Vec::new();
    for (kind, path, target) in runs {
        let run = format!("{} through {target}", kind.name());
        let mut device = registry.open_device(kind, &Default::default()).unwrap_or_else(|e| panic!("{run}: {e}"));
        let mut loader = DeviceLoader::attach(&registry, &device, &library).unwrap();
        let request = LoadRequest { program: "tinted", variant: vec![], overrides: vec![], paths: vec![path] };
        let mut loaded = loader.load(&library, &request).unwrap_or_else(|e| panic!("{run}: {e}"));
        assert_eq!(loaded.target, target, "{run}");
        let table = &mut loaded.built.constants;
        for (name, set) in [("rect", &RECT[..]), ("tint", &TINT[..])] {
            let handle = table.handle(name).unwrap_or_else(|e| panic!("{run}: {e}"));
            table.set_vector(handle, set).unwrap_or_else(|e| panic!("{run}: {name}: {e}"));
        }
        let gain = table.handle("gain").unwrap_or_else(|e| panic!("{run}: {e}"));
        table.set_float(gain, GAIN).unwrap_or_else(|e| panic!("{run}: gain: {e}"));
        let image = xr_tests::render_quad(&mut device, loaded.built.program, 16, [0.0, 0.0, 0.0, 1.0]);
        // The rect covers the left half: tinted there, cleared on the right.
        let tinted = xr_tests::rgba8([TINT[0] * GAIN, TINT[1] * GAIN, TINT[2] * GAIN, 1.0]);
        xr_tests::assert_rgba_near(image.pixel(4, 8).unwrap(), tinted, 1);
        xr_tests::assert_rgba_near(image.pixel(12, 8).unwrap(), [0, 0, 0, 255], 0);
        images.push((run, image.rgba.to_vec()));
        drop(loaded);
        drop(loader);
    }
    let (first, pixels) = &images[0];
    for (run, other) in &images[1..] {
        assert!(other == pixels, "{run} drew other pixels than {first}");
    }
}

#[test]
fn a_loose_uniform_vulkan_cannot_take_is_one_error_at_its_line_saying_what_to_write() {
    let dir = with_tinted_shaders("loose-uniforms-refused");
    let shaders = dir.join("shaders");
    std::fs::write(
        shaders.join("light.frag"),
        "#version 450 core\nstruct Light { vec3 colour; };\nuniform Light light;\nlayout(location = 0) out vec4 o;\n\
         void main() { o = vec4(light.colour, 1.0); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("xr.toml"),
        r#"store = "store"
[[program]]
name = "lit"
targets = ["vk-spirv"]
stages = [
    { stage = "vertex", file = "shaders/quad.vert" },
    { stage = "fragment", file = "shaders/light.frag" },
]

[[program]]
name = "tinted"
targets = ["vk-spirv"]
stages = [
    { stage = "vertex", file = "shaders/quad.vert" },
    { stage = "fragment", file = "shaders/tint.frag" },
]
"#,
    )
    .unwrap();
    let run = xr_tests::Xr::new(["build", "-m", "xr.toml"]).dir(&dir).plugins(xr_tests::plugin_dir()).fails();
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(said.contains("shaders/light.frag:3"), "the refusal names the file and line:\n{said}");
    assert!(said.contains("'light' is of type 'Light'") && said.contains("uniform block"), "{said}");
    assert!(said.contains("1 built"), "the other program still builds:\n{said}");
}
