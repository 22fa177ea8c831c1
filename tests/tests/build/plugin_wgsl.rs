//! The WGSL compiler of `examples/plugin-wgsl`, built in its own cargo
//! workspace and dropped into a plugin directory beside the built-in
//! plugins, with no change to any crate outside it: `xr plugins`,
//! `xr compile`, `xr reflect`, `xr build` of a manifest with GLSL, HLSL,
//! WGSL and Slang programs, and WGSL and Slang programs loaded on Vulkan
//! and on OpenGL SPIR-V by the loaders already there, rendering what the
//! GLSL program renders.

use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::OnceLock,
};
use xr_device::{DeviceKind, DeviceOptions, DrawCall, Image, VertexAttribute, VertexLayout};
use xr_host::Registry;
use xr_library::{DeviceLoader, LoadPath, LoadRequest, ShaderLibrary};
use xr_sourcebuild::ConstantTableExt;
use xr_tests::{TestDir, Xr, library, out_of_tree_plugin, temp_dir};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf()
}

/// The example, built in its own workspace.
fn wgsl_plugin() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| out_of_tree_plugin("examples/plugin-wgsl/Cargo.toml", "xr-compiler-wgsl")).clone()
}

/// A plugin directory with the built-in plugins, and the WGSL one if `wgsl`.
fn plugin_dir(label: &str, wgsl: bool) -> TestDir {
    let dir = temp_dir(label);
    let mut files: Vec<PathBuf> = xr_tests::plugins().iter().map(|name| library(name)).collect();
    if wgsl {
        files.push(wgsl_plugin());
    }
    for from in files {
        std::fs::copy(&from, dir.join(from.file_name().expect("file name")))
            .unwrap_or_else(|e| panic!("copy {}: {e}", from.display()));
    }
    dir
}

fn xr(plugins: &Path, dir: &Path, args: &[&str]) -> (bool, String, String) {
    // The copied Slang plugin is away from the library the setup unpacked.
    let slang = xr_tests::slang_library_dir();
    Xr::new(args).dir(dir).plugins(plugins).env("XR_GL_DEVICE", "software").env("XR_SLANG_LIBRARY", slang).run().parts()
}

const HLSL: &str = "struct VSOut { float4 pos : SV_Position; };\n\
    cbuffer Constants : register(b0) { float4 u_rect; float4 u_color; };\n\
    VSOut vs_main(float2 p : POSITION) { VSOut o; o.pos = float4(u_rect.xy + p * u_rect.zw, 0.0, 1.0); return o; }\n\
    float4 ps_main(VSOut i) : SV_Target { return u_color; }\n";

/// The materials sample's `unlit` (GLSL), an HLSL program, the WGSL port
/// of `unlit` and its Slang twin (with its module) in one manifest.
fn three_languages(label: &str) -> TestDir {
    let dir = temp_dir(label);
    let sample = root().join("samples/materials/shaders");
    std::fs::create_dir_all(dir.join("shaders/include")).unwrap();
    for file in ["quad.vert", "unlit.frag", "unlit.slang"] {
        std::fs::copy(sample.join(file), dir.join("shaders").join(file)).unwrap();
    }
    for entry in std::fs::read_dir(sample.join("include")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join("shaders/include").join(entry.file_name())).unwrap();
    }
    std::fs::copy(root().join("examples/plugin-wgsl/shaders/unlit.wgsl"), dir.join("shaders/unlit.wgsl")).unwrap();
    std::fs::write(dir.join("shaders/tint.hlsl"), HLSL).unwrap();
    let overrides = "overrides = [\n    { name = \"GAIN\", id = 0, type = \"float\", default = 1.0 },\n    \
                     { name = \"BIAS\", id = 1, type = \"float\", default = 0.0 },\n]\n";
    let manifest = format!(
        "store = \"store\"\n\n\
         [[axis]]\nname = \"TINT\"\nkind = \"bool\"\n\n\
         [[axis]]\nname = \"PATTERN\"\nkind = \"enum\"\nvalues = [\"flat\", \"stripes\", \"checker\"]\n\n\
         [[program]]\nname = \"unlit\"\naxes = [\"TINT\", \"PATTERN\"]\ntargets = [\"gl-glsl\", \"gl-spirv\", \"vk-spirv\"]\n\
         include = [\"shaders/include\"]\n\
         stages = [\n    {{ stage = \"vertex\", file = \"shaders/quad.vert\" }},\n    {{ stage = \"fragment\", file = \"shaders/unlit.frag\" }},\n]\n{overrides}\n\
         [[program]]\nname = \"tint_hlsl\"\ntargets = [\"gl-spirv\", \"vk-spirv\"]\n\
         stages = [\n    {{ stage = \"vertex\", file = \"shaders/tint.hlsl\", entry = \"vs_main\" }},\n    {{ stage = \"fragment\", file = \"shaders/tint.hlsl\", entry = \"ps_main\" }},\n]\n\n\
         [[program]]\nname = \"unlit_wgsl\"\ntargets = [\"vk-spirv\", \"gl-spirv\"]\n\
         stages = [\n    {{ stage = \"vertex\", file = \"shaders/unlit.wgsl\", entry = \"vs_main\", language = \"wgsl\" }},\n    \
         {{ stage = \"fragment\", file = \"shaders/unlit.wgsl\", entry = \"fs_main\", language = \"wgsl\" }},\n]\n{overrides}\n\
         [[program]]\nname = \"unlit_slang\"\naxes = [\"TINT\", \"PATTERN\"]\ntargets = [\"vk-spirv\", \"gl-spirv\"]\n\
         include = [\"shaders/include\"]\n\
         stages = [\n    {{ stage = \"vertex\", file = \"shaders/unlit.slang\", entry = \"vertexMain\" }},\n    \
         {{ stage = \"fragment\", file = \"shaders/unlit.slang\", entry = \"fragmentMain\" }},\n]\n{overrides}"
    );
    std::fs::write(dir.join("xr.toml"), manifest).unwrap();
    dir
}

/// (built, reused, failed) from `xr build`'s summary line.
fn summary(said: &str) -> (usize, usize, usize) {
    let line = said.lines().find(|l| l.starts_with("xr build:")).unwrap_or_else(|| panic!("no summary in {said}"));
    let count = |label: &str| xr_tests::summary_count(line, label);
    (count("built"), count("reused"), count("failed"))
}

#[test]
fn the_out_of_tree_wgsl_plugin_lists_compiles_and_reflects() {
    let plugins = plugin_dir("wgsl-cli-plugins", true);
    let dir = temp_dir("wgsl-cli");
    let (ok, stdout, stderr) = xr(&plugins, &dir, &["plugins"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("build system xr-compiler-wgsl"), "{stdout}");
    assert!(stdout.contains("compiles: wgsl → vk-spirv, gl-spirv"), "{stdout}");

    let shader = root().join("examples/plugin-wgsl/shaders/unlit.wgsl");
    for (target, env) in [("vk-spirv", "vulkan1.0"), ("gl-spirv", "opengl4.5")] {
        let out = dir.join(format!("unlit.{target}.spv"));
        let args = [
            "compile",
            shader.to_str().unwrap(),
            "--stage",
            "fragment",
            "--entry",
            "fs_main",
            "--target",
            target,
            "-o",
        ];
        let (ok, stdout, stderr) = xr(&plugins, &dir, &[&args[..], &[out.to_str().unwrap()]].concat());
        assert!(ok, "the language comes from the .wgsl extension: {stderr}");
        assert!(stderr.contains("wrote") && stdout.is_empty(), "{stdout}{stderr}");
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(&bytes[..4], &0x0723_0203u32.to_le_bytes(), "a SPIR-V module");
        let valid = Command::new("spirv-val").args(["--target-env", env]).arg(&out).status().unwrap();
        assert!(valid.success(), "spirv-val refuses {}", out.display());
    }

    let args = ["reflect", shader.to_str().unwrap(), "--stage", "fragment", "--entry", "fs_main", "--json"];
    let (ok, stdout, stderr) = xr(&plugins, &dir, &args);
    assert!(ok, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let names = |key: &str| -> Vec<String> {
        report[key].as_array().unwrap().iter().map(|v| v["name"].as_str().unwrap().to_owned()).collect()
    };
    assert!(names("constants").contains(&"u_color".to_owned()), "{report}");
    assert_eq!(names("overrides"), ["GAIN", "BIAS"], "{report}");
    assert_eq!(report["overrides"][1]["id"], 1, "{report}");
}

#[test]
fn one_manifest_of_glsl_hlsl_and_wgsl_builds_and_wgsl_renders_like_glsl_on_both_apis() {
    let plugins = plugin_dir("wgsl-build-plugins", true);
    let dir = three_languages("wgsl-build");
    let (ok, stdout, stderr) = xr(&plugins, &dir, &["build", "-m", "xr.toml"]);
    assert!(ok, "{stdout}\n{stderr}");
    // unlit: 6 variants × 3 targets; tint_hlsl and unlit_wgsl: 1 × 2;
    // unlit_slang: 6 × 2.
    assert_eq!(summary(&stderr), (18 + 2 + 2 + 12, 0, 0), "{stderr}");

    let registry = Registry::load_dirs([plugins.to_path_buf()]);
    let library = ShaderLibrary::open(&dir.join("store")).unwrap();
    let overrides = vec![("GAIN", 0.5), ("BIAS", 0.2)];
    for kind in [DeviceKind::VULKAN, DeviceKind::OPENGL] {
        let glsl = LoadRequest {
            program: "unlit",
            variant: vec![("TINT", "0"), ("PATTERN", "flat")],
            overrides: overrides.clone(),
            paths: vec![LoadPath::CompatibleObject],
        };
        let wgsl = LoadRequest { program: "unlit_wgsl", overrides: overrides.clone(), ..LoadRequest::default() };
        let slang = LoadRequest { program: "unlit_slang", ..glsl.clone() };
        let (glsl_image, _) = render(&registry, &library, kind, &glsl);
        let (wgsl_image, wgsl_load) = render(&registry, &library, kind, &wgsl);
        let (slang_image, slang_load) = render(&registry, &library, kind, &slang);
        assert_eq!(slang_load.0, LoadPath::CompatibleObject, "{kind:?}: {}", slang_load.2);
        assert_eq!(materials::max_difference(&glsl_image, &slang_image), 0, "{kind:?}: the Slang twin");
        assert_eq!(wgsl_load.0, LoadPath::CompatibleObject, "{kind:?}: {}", wgsl_load.2);
        let expected_target = if kind == DeviceKind::VULKAN { "vk-spirv" } else { "gl-spirv" };
        assert_eq!(wgsl_load.1, expected_target, "{kind:?}");
        // color * GAIN + BIAS: (0.2, 0.6, 1.0) * 0.5 + 0.2, overrides applied by the loaders.
        let centre = wgsl_image.pixel(32, 32).unwrap();
        for (channel, expected) in [0.3f32, 0.5, 0.7].into_iter().enumerate() {
            let want = (expected * 255.0).round() as i32;
            assert!((centre[channel] as i32 - want).abs() <= 1, "{kind:?}: {centre:?}");
        }
        // The same pixels as the GLSL program, within 1 per channel: two
        // compilers may order float operations differently.
        for (a, b) in glsl_image.rgba.chunks(4).zip(wgsl_image.rgba.chunks(4)) {
            for (x, y) in a.iter().zip(b) {
                assert!((*x as i32 - *y as i32).abs() <= 1, "{kind:?}: GLSL {a:?} vs WGSL {b:?}");
            }
        }
    }
}

#[test]
fn without_the_wgsl_plugin_the_wgsl_program_fails_alone_and_the_rest_builds() {
    let plugins = plugin_dir("wgsl-absent-plugins", false);
    let dir = three_languages("wgsl-absent");
    let (ok, _, stderr) = xr(&plugins, &dir, &["build", "-m", "xr.toml"]);
    assert!(!ok, "{stderr}");
    assert_eq!(summary(&stderr), (18 + 2 + 12, 0, 1), "one failure: the WGSL program\n{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains("no plugin compiles language 'wgsl'"), "{stderr}");
    assert!(stderr.contains("--> xr.toml:"), "at its place in the manifest: {stderr}");
    assert!(errors[0].contains("(the plugins found compile: glsl, hlsl, slang)"), "{stderr}");
}

/// Renders one program over the whole target; the path, target and reason it took.
fn render(
    registry: &Registry,
    library: &ShaderLibrary,
    kind: DeviceKind,
    request: &LoadRequest<'_>,
) -> (Image, (LoadPath, String, String)) {
    let mut device = registry.open_device(kind, &DeviceOptions::default()).expect("device");
    let mut loader = DeviceLoader::attach(registry, &device, library).expect("attach");
    let mut loaded = loader.load(library, request).unwrap_or_else(|e| panic!("{kind:?}: {e}"));
    let rect = loaded.built.constants.handle("u_rect").unwrap();
    loaded.built.constants.set_vector(rect, &[-1.0, -1.0, 2.0, 2.0]).unwrap();
    let color = loaded.built.constants.handle("u_color").unwrap();
    loaded.built.constants.set_vector(color, &[0.2, 0.6, 1.0, 1.0]).unwrap();
    let target = device.create_render_target(64, 64).into_result().unwrap();
    let layout =
        VertexLayout { stride: 2, attributes: vec![VertexAttribute { location: 0, components: 2, offset: 0 }].into() };
    let quad: [f32; 12] = [0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0];
    let buffer = device.create_vertex_buffer(quad.as_slice().into(), &layout).into_result().unwrap();
    device.clear(target, &[0.0, 0.0, 0.0, 1.0]).into_result().unwrap();
    let call = DrawCall::triangles(target, loaded.built.program, buffer, 6);
    device.draw(&call).into_result().unwrap();
    let image = device.read_pixels(target).into_result().unwrap();
    let result = (loaded.path, loaded.target.clone(), loaded.reason.clone());
    drop(loaded);
    drop(loader);
    (image, result)
}
