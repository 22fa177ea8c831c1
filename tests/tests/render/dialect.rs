//! A plugin of a language of its own that writes `gl-glsl`
//! (`xr-fixture-dialect`: GLSL spelling `vec4` as `COLOUR`, rewritten into
//! GLSL and stored as a source bundle): its objects load wherever `gl-glsl`
//! loads, on the OpenGL driver and through Vulkan's source path, because a
//! bundle loads in its loader's language, not the one the plugin compiled
//! from (`xr_plugin_kit::SourceBundle::program`). Its `#include`s are
//! GLSL's: the file a stage includes, rewritten too, travels in the bundle.

use xr_library::{DeviceLoader, LoadPath, LoadRequest, ShaderLibrary};

const VERTEX: &str = "#version 450 core
layout(location = 0) in vec2 in_position;
void main() { gl_Position = COLOUR(in_position, 0.0, 1.0); }
";

const FRAGMENT: &str = "#version 450 core
#include \"palette.gld\"
layout(location = 0) out COLOUR out_color;
void main() { out_color = green(); }
";

/// Included by the fragment stage, from the include directory.
const PALETTE: &str = "COLOUR green() { return COLOUR(0.0, 1.0, 0.0, 1.0); }\n";

#[test]
fn a_dialect_that_writes_gl_glsl_draws_on_opengl_and_vulkan() {
    let dir = xr_tests::temp_dir("dialect");
    std::fs::create_dir_all(dir.join("shaders")).unwrap();
    std::fs::write(dir.join("shaders/quad.gld"), VERTEX).unwrap();
    std::fs::write(dir.join("shaders/green.gld"), FRAGMENT).unwrap();
    std::fs::create_dir_all(dir.join("include")).unwrap();
    std::fs::write(dir.join("include/palette.gld"), PALETTE).unwrap();
    std::fs::write(
        dir.join("xr.toml"),
        r#"store = "store"
[[program]]
name = "green"
targets = ["gl-glsl"]
include = ["include"]
stages = [
    { stage = "vertex", file = "shaders/quad.gld" },
    { stage = "fragment", file = "shaders/green.gld" },
]
"#,
    )
    .unwrap();
    let fixture = xr_tests::plugin_dir_with("dialect-plugin", &["xr-fixture-dialect"]);
    let path = std::env::join_paths([fixture.path(), xr_tests::plugin_dir().as_path()]).unwrap();
    let run = xr_tests::Xr::new(["build", "-m", "xr.toml"]).dir(&dir).env("XR_PLUGIN_PATH", &path).run();
    assert!(run.ok, "{}{}", run.stdout, run.stderr);

    let mut registry = xr_tests::registry();
    registry.load_dir(fixture.path());
    let library = ShaderLibrary::open(&dir.join("store")).unwrap();
    for kind in [xr_device::DeviceKind::OPENGL, xr_device::DeviceKind::VULKAN] {
        let mut device = registry.open_device(kind, &Default::default()).unwrap();
        let mut loader = DeviceLoader::attach(&registry, &device, &library).unwrap();
        let request =
            LoadRequest { program: "green", variant: vec![], overrides: vec![], paths: vec![LoadPath::Source] };
        let loaded = loader.load(&library, &request).unwrap_or_else(|e| panic!("{}: {e}", kind.name()));
        assert_eq!(loaded.target, "gl-glsl", "{}", kind.name());
        let image = xr_tests::render_quad(&mut device, loaded.built.program, 8, [0.0, 0.0, 0.0, 1.0]);
        assert_eq!(image.pixel(4, 4), Some([0, 255, 0, 255]), "{}", kind.name());
        drop(loaded);
        drop(loader);
    }
}
