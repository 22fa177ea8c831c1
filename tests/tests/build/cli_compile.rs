//! `xr compile` and `xr reflect`, run as a user runs them.

use std::process::Command;
use xr_plugin_kit::SourceBundle;
use xr_tests::{TestDir, Xr, temp_dir};

fn xr(args: &[&str]) -> (bool, String, String) {
    Xr::new(args).software_device().run().parts()
}

#[test]
fn compiles_d3d9_style_hlsl_to_valid_spirv_for_vulkan_and_opengl() {
    let dir = temp_dir("cli-hlsl");
    let source = dir.join("d3d9.hlsl");
    std::fs::write(&source, xr_tests::d3d9_style_program().stages[0].source.as_str()).unwrap();
    for (target, env) in [("vk-spirv", "vulkan1.1"), ("gl-spirv", "opengl4.5")] {
        let out = dir.join(format!("{target}.spv"));
        let mut args = vec!["compile", source.to_str().unwrap(), "--option", "profile=vs_5_0", "--entry", "Main"];
        args.extend(["--target", target, "-o", out.to_str().unwrap()]);
        if target == "vk-spirv" {
            args.extend(["--option", "vulkan=1.1"]);
        }
        let (ok, stdout, stderr) = xr(&args);
        assert!(ok, "{stderr}");
        assert!(stderr.contains(&format!("to {}", out.display())) && stdout.is_empty(), "{stdout}{stderr}");
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(&bytes[..4], &0x0723_0203u32.to_le_bytes());
        let validated = Command::new("spirv-val").args(["--target-env", env]).arg(&out).status().unwrap();
        assert!(validated.success(), "spirv-val rejects {}", out.display());
    }
    let (ok, _, stderr) = xr(&[
        "compile",
        source.to_str().unwrap(),
        "--option",
        "profile=vs_5_0",
        "--entry",
        "VSMain",
        "-o",
        "/dev/null",
    ]);
    assert!(!ok);
    assert!(stderr.contains("entry point 'VSMain' not found"), "{stderr}");
}

/// Options are the compiler's: `xr plugins` lists them, `xr compile
/// --help` has no flag of any one target, and an option the chosen
/// compiler does not declare, or a value it does not take, is one error
/// naming the compiler and what it takes — before anything compiles.
#[test]
fn compiler_options_are_declared_by_plugins_listed_and_checked() {
    let (ok, help, _) = xr(&["compile", "--help"]);
    assert!(ok);
    assert!(help.contains("--option <NAME=VALUE>"), "{help}");
    for gone in ["--vulkan", "--spirv-version", "--profile", "--optimize"] {
        assert!(!help.contains(gone), "{gone} is a per-target flag: {help}");
    }
    let (ok, plugins, _) = xr(&["plugins"]);
    assert!(ok);
    assert!(
        plugins.contains("vulkan = 1.0 | 1.1 | 1.2 | 1.3, default 1.0 [glsl → vk-spirv, hlsl → vk-spirv]"),
        "{plugins}"
    );
    assert!(plugins.contains("profile = vs_* | ps_* | gs_* | hs_* | ds_* | cs_* [hlsl → vk-spirv]"), "{plugins}");
    assert!(
        plugins.contains("optimize = none | size | performance, default none [glsl → gl-spirv, hlsl → gl-spirv]"),
        "{plugins}"
    );

    let dir = temp_dir("cli-options");
    let frag = dir.join("a.frag");
    std::fs::write(&frag, "#version 450\nlayout(location = 0) out vec4 c;\nvoid main() { c = vec4(1.0); }\n").unwrap();
    let out = dir.join("a.spv");
    let compile = |target: &str, option: &str| {
        xr(&["compile", frag.to_str().unwrap(), "--target", target, "--option", option, "-o", out.to_str().unwrap()])
    };
    let (ok, _, stderr) = compile("vk-spirv", "vulkn=1.3");
    assert!(!ok);
    assert!(
        stderr.contains("xr-compiler-vk-spirv takes no option 'vulkn' for glsl → vk-spirv (it takes: optimize = none | size | performance; spirv-version = 1.0 |"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().filter(|l| l.contains("error")).count(), 1, "one error: {stderr}");
    let (ok, _, stderr) = compile("vk-spirv", "vulkan=2.0");
    assert!(!ok);
    assert!(
        stderr.contains("takes vulkan = 1.0 | 1.1 | 1.2 | 1.3 for glsl → vk-spirv, not vulkan = '2.0'"),
        "{stderr}"
    );
    // The Vulkan version is the Vulkan compiler's: the GL SPIR-V one does not take it.
    let (ok, _, stderr) = compile("gl-spirv", "vulkan=1.3");
    assert!(!ok);
    assert!(stderr.contains("xr-compiler-gl-spirv takes no option 'vulkan' for glsl → gl-spirv"), "{stderr}");
    let (ok, _, stderr) = compile("vk-spirv", "novalue");
    assert!(!ok);
    assert!(stderr.contains("--option takes NAME=VALUE, not 'novalue'"), "{stderr}");
    assert!(!out.exists(), "nothing written");
    let (ok, _, stderr) = compile("vk-spirv", "vulkan=1.3");
    assert!(ok, "{stderr}");
    assert!(out.exists());
}

/// An HLSL profile names the stage of a file whose name does not, and a
/// profile of another stage than the file's is refused by the compiler.
#[test]
fn an_hlsl_profile_option_names_the_stage() {
    let dir = temp_dir("cli-profile");
    let source = dir.join("shade.hlsl");
    std::fs::write(&source, "float4 main() : SV_Target { return float4(1, 0, 0, 1); }\n").unwrap();
    let out = dir.join("shade.spv");
    let run = |extra: &[&str]| {
        let mut args = vec!["compile", source.to_str().unwrap(), "--target", "vk-spirv", "-o", out.to_str().unwrap()];
        args.extend(extra);
        xr(&args)
    };
    let (ok, _, stderr) = run(&[]);
    assert!(!ok);
    assert!(stderr.contains("cannot tell the stage of"), "{stderr}");
    assert!(stderr.contains("--option profile = vs_* | ps_*"), "{stderr}");
    let (ok, _, stderr) = run(&["--option", "profile=ps_5_0"]);
    assert!(ok, "{stderr}");
    let (ok, _, stderr) = run(&["--option", "profile=ps_five"]);
    assert!(!ok);
    assert!(stderr.contains("unknown HLSL profile 'ps_five'"), "{stderr}");
    let (ok, _, stderr) = run(&["--stage", "vertex", "--option", "profile=ps_5_0"]);
    assert!(!ok);
    assert!(stderr.contains("profile ps_5_0 is for fragment stages"), "{stderr}");
}

#[test]
fn compile_errors_name_the_included_file_and_exit_non_zero() {
    let dir = temp_dir("cli-include");
    std::fs::write(dir.join("common.glsl"), "vec4 tint() {\n    return vec4(1.0) * missing_scale;\n}\n").unwrap();
    let main = dir.join("main.frag");
    std::fs::write(&main, "#version 450\n#extension GL_GOOGLE_include_directive : require\n#include \"common.glsl\"\nlayout(location = 0) out vec4 c;\nvoid main() { c = tint(); }\n").unwrap();
    let (ok, stdout, stderr) =
        xr(&["compile", main.to_str().unwrap(), "--target", "vk-spirv", "-o", dir.join("x.spv").to_str().unwrap()]);
    assert!(!ok, "{stdout}");
    // The error once, at the included file's line, with that line and the include chain.
    assert_eq!(stderr.matches("missing_scale").count(), 2, "message and source line, nothing more:\n{stderr}");
    assert_eq!(stderr.lines().filter(|l| l.starts_with("error")).count(), 1, "{stderr}");
    assert!(stderr.contains("common.glsl:2:"), "{stderr}");
    assert!(stderr.contains("2 |     return vec4(1.0) * missing_scale;"), "{stderr}");
    assert!(stderr.contains(&format!("included from {}:3", main.display())), "{stderr}");
    assert!(!dir.join("x.spv").exists(), "nothing written on failure");
}

#[test]
fn reflect_prints_the_constant_table_as_text_and_json() {
    let dir = temp_dir("cli-reflect");
    let frag = dir.join("material.frag");
    std::fs::write(
        &frag,
        "#version 450
layout(constant_id = 0) const float GAIN = 1.5;
layout(binding = 0) uniform Material { vec4 tint; float roughness; } material;
layout(binding = 1) uniform sampler2D albedo;
layout(location = 0) in vec2 v_uv;
layout(location = 0) out vec4 c;
void main() { c = texture(albedo, v_uv) * material.tint * material.roughness * GAIN; }
",
    )
    .unwrap();
    let (ok, stdout, stderr) = xr(&["reflect", frag.to_str().unwrap(), "--json"]);
    assert!(ok, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    // What every build system reports, then its own full reflection per stage.
    assert_eq!(report["target"], "vk-spirv");
    let constants: Vec<&str> =
        report["constants"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(constants, ["tint", "roughness"]);
    assert_eq!(report["resources"][1]["name"], "albedo", "{report}");
    assert_eq!(report["overrides"][0]["name"], "GAIN");
    assert_eq!(report["overrides"][0]["id"], 0);
    let json = &report["details"]["stages"][0];
    assert_eq!(json["stage"], "fragment");
    let members = &json["uniform_blocks"][0]["members"];
    assert_eq!(members[0]["name"], "tint");
    assert_eq!(members[1]["name"], "roughness");
    assert_eq!(members[1]["offset"], 16);
    assert_eq!(json["images"][0]["name"], "albedo");
    assert_eq!(json["spec_constants"][0]["default"], "1.5");
    assert_eq!(json["inputs"][0]["name"], "v_uv");

    let (ok, stdout, _) = xr(&["reflect", frag.to_str().unwrap()]);
    assert!(ok);
    assert!(stdout.contains("+16   roughness"), "{stdout}");
    assert!(stdout.contains("specialization constant GAIN (id 0)"), "{stdout}");

    // OpenGL SPIR-V keeps uniforms outside blocks, set by location.
    let vert = dir.join("t.vert");
    std::fs::write(&vert, "#version 450\nlayout(location = 0) in vec2 p;\nuniform mat4 u_transform;\nvoid main() { gl_Position = u_transform * vec4(p, 0.0, 1.0); }\n").unwrap();
    let (ok, stdout, stderr) = xr(&["reflect", vert.to_str().unwrap(), "--target", "gl-spirv"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("uniform location 0 : u_transform mat4x4<f32>"), "{stdout}");
}

#[test]
fn gl_glsl_writes_the_sources_a_driver_builds_with_their_includes() {
    let dir = temp_dir("cli-gl-glsl");
    let vert = dir.join("t.vert");
    std::fs::write(dir.join("pos.glsl"), "vec4 position(vec2 p) { return vec4(p, 0.0, 1.0); }\n").unwrap();
    std::fs::write(&vert, "#version 450 core\n#include \"pos.glsl\"\nlayout(location = 0) in vec2 p;\nout gl_PerVertex { vec4 gl_Position; };\nvoid main() { gl_Position = position(p); }\n").unwrap();
    let out = dir.join("t.bundle");
    let (ok, _, stderr) =
        xr(&["compile", vert.to_str().unwrap(), "--target", "gl-glsl", "-D", "FANCY=1", "-o", out.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    let bundle = SourceBundle::decode(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(bundle.stages.len(), 1);
    assert_eq!(bundle.stages[0].stage, "vertex");
    assert_eq!(
        bundle.files,
        [("pos.glsl".to_owned(), "vec4 position(vec2 p) { return vec4(p, 0.0, 1.0); }\n".to_owned())]
    );
    assert_eq!(bundle.defines, [("FANCY".to_owned(), "1".to_owned())]);
}

/// Writes `files` (name, text) into a fresh directory; returns it (kept
/// while the caller holds it) and their paths.
fn shader_files(label: &str, files: &[(&str, &str)]) -> (TestDir, Vec<String>) {
    let dir = temp_dir(label);
    let paths = files
        .iter()
        .map(|(name, text)| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            path.to_string_lossy().into_owned()
        })
        .collect();
    (dir, paths)
}

#[test]
fn a_whole_program_builds_on_a_live_device_and_prints_its_table_on_every_target() {
    let shaders = textured::shader_dir();
    let (vert, frag, comp) = (shaders.join("mesh.vert"), shaders.join("mesh.frag"), shaders.join("paint.comp"));
    let (vert, frag, comp) = (vert.to_str().unwrap(), frag.to_str().unwrap(), comp.to_str().unwrap());
    for (target, device, place) in [
        ("vk-spirv", "(vulkan, Vulkan 1.", "(set 0, binding 0)"),
        ("gl-spirv", "(opengl, OpenGL 4.5)", "(set 0, binding 1)"),
        ("gl-glsl", "(opengl, OpenGL 4.5)", "(set 0, binding 1)"),
    ] {
        let (ok, stdout, stderr) = xr(&["compile", frag, vert, "--target", target, "--device"]);
        assert!(ok, "{target}: {stdout}{stderr}");
        assert!(stdout.contains(device) && stdout.contains("constant u_mvp : mat4"), "{target}: {stdout}");
        assert!(stdout.contains(&format!("texture with sampler albedo {place}")), "{target}: {stdout}");
        let (ok, stdout, stderr) = xr(&["compile", comp, "--target", target, "--device"]);
        assert!(ok, "{target}: {stdout}{stderr}");
        assert!(
            stdout.contains("storage image painted") && stdout.contains("storage buffer Palette"),
            "{target}: {stdout}"
        );
    }
}

#[test]
fn hlsl_registers_become_sets_and_bindings_and_a_texture_with_its_sampler_one_descriptor() {
    let (_dir, files) = shader_files(
        "cli-hlsl-registers",
        &[
            ("quad.vs.hlsl", "float4 main(float2 pos : POSITION) : SV_Position { return float4(pos, 0, 1); }"),
            (
                "lit.ps.hlsl",
                "Texture2D albedo : register(t1, space2);
SamplerState linear_sampler : register(s1, space2);
cbuffer Material : register(b0, space1) { float4 tint; };
RWStructuredBuffer<float4> results : register(u2);
float4 main(float4 pos : SV_Position) : SV_Target {
    results[0] = tint;
    return albedo.Sample(linear_sampler, pos.xy) * tint;
}",
            ),
        ],
    );
    let (ok, stdout, stderr) = xr(&["compile", &files[0], &files[1], "--target", "vk-spirv", "--device"]);
    assert!(ok, "{stdout}{stderr}");
    assert!(stdout.contains("constant tint : vec4"), "{stdout}");
    assert!(stdout.contains("texture with sampler albedo (set 2, binding 1)"), "{stdout}");
    assert!(stdout.contains("storage buffer results (set 0, binding 2)"), "{stdout}");
}

#[test]
fn tessellation_and_geometry_stages_build_on_both_apis() {
    let (_dir, files) = shader_files(
        "cli-stages",
        &[
            ("p.vert", "#version 450\nlayout(location = 0) in vec3 p;\nvoid main() { gl_Position = vec4(p, 1.0); }\n"),
            (
                "p.tesc",
                "#version 450\nlayout(vertices = 3) out;\nvoid main() {\n    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;\n    gl_TessLevelInner[0] = 2.0;\n    gl_TessLevelOuter[0] = 2.0; gl_TessLevelOuter[1] = 2.0; gl_TessLevelOuter[2] = 2.0;\n}\n",
            ),
            (
                "p.tese",
                "#version 450\nlayout(triangles) in;\nvoid main() {\n    gl_Position = gl_TessCoord.x * gl_in[0].gl_Position + gl_TessCoord.y * gl_in[1].gl_Position + gl_TessCoord.z * gl_in[2].gl_Position;\n}\n",
            ),
            (
                "p.geom",
                "#version 450\nlayout(triangles) in;\nlayout(triangle_strip, max_vertices = 3) out;\nvoid main() {\n    for (int i = 0; i < 3; i++) { gl_Position = gl_in[i].gl_Position; EmitVertex(); }\n    EndPrimitive();\n}\n",
            ),
            ("p.frag", "#version 450\nlayout(location = 0) out vec4 c;\nvoid main() { c = vec4(1.0); }\n"),
        ],
    );
    let all: Vec<&str> = files.iter().map(String::as_str).collect();
    for target in ["vk-spirv", "gl-spirv", "gl-glsl"] {
        let mut args = vec!["compile"];
        args.extend(&all);
        args.extend(["--target", target, "--device"]);
        let (ok, stdout, stderr) = xr(&args);
        assert!(ok, "{target}: {stdout}{stderr}");
        assert!(stdout.contains("xr compile: p built on"), "{target}: {stdout}");
    }
}

#[test]
fn a_program_that_cannot_build_on_the_device_exits_non_zero_with_the_reason() {
    let (_dir, files) = shader_files(
        "cli-device-errors",
        &[
            ("only.frag", "#version 450\nlayout(location = 0) out vec4 c;\nvoid main() { c = vec4(1.0); }\n"),
            ("broken.vert", "#version 450\nvoid main() {\n    gl_Position = vec4(1.0)\n}\n"),
            ("other.frag", "#version 450\nlayout(location = 0) out vec4 c;\nvoid main() { c = vec4(0.0); }\n"),
        ],
    );
    let (ok, _, stderr) = xr(&["compile", &files[0], "--target", "vk-spirv", "--device"]);
    assert!(!ok && stderr.contains("a graphics program needs a vertex stage"), "{stderr}");
    let (ok, _, stderr) = xr(&["compile", &files[1], &files[0], "--target", "vk-spirv", "--device"]);
    assert!(!ok && stderr.contains("broken.vert:4:") && stderr.contains("error"), "{stderr}");
    let (ok, _, stderr) = xr(&["compile", &files[0], &files[2], "--target", "vk-spirv", "--device"]);
    assert!(!ok && stderr.contains("are both fragment stages"), "{stderr}");
    let (ok, _, stderr) = xr(&["compile", &files[0], "--target", "vk-spirv"]);
    assert!(!ok && stderr.contains("nothing to do: give -o FILE, --check, --device, or -o with --device"), "{stderr}");
}

#[test]
fn descriptors_the_vulkan_loader_cannot_bind_are_refused_before_the_driver() {
    // Three input attachments: lavapipe died of this program (SIGSEGV,
    // exit 139) when XR left them out of the pipeline layout.
    let (_dir, files) = shader_files(
        "cli-device-unbindable",
        &[
            ("a.vert", "#version 320 es\nvoid main() { gl_Position = vec4(0.0); }\n"),
            (
                "a.frag",
                "#version 450\n\
                 layout(input_attachment_index = 0, binding = 0) uniform subpassInput r;\n\
                 layout(input_attachment_index = 1, binding = 1) uniform subpassInput g;\n\
                 layout(input_attachment_index = 2, binding = 2) uniform subpassInput b;\n\
                 layout(location = 0) out vec4 o;\n\
                 void main() { o = subpassLoad(r) + subpassLoad(g) + subpassLoad(b); }\n",
            ),
            (
                "texel.frag",
                "#version 450\nlayout(binding = 0) uniform samplerBuffer table;\nlayout(location = 0) out vec4 o;\n\
                 void main() { o = texelFetch(table, 3); }\n",
            ),
        ],
    );
    // Input attachments build on the device with dynamicRenderingLocalRead
    // (the setup's lavapipe, read within dynamic rendering) and on one
    // without (Debian 12's, drawn in a render pass of the device's).
    let (setup, system) = (xr_tests::setup_lavapipe(), std::path::Path::new(xr_tests::SYSTEM_LAVAPIPE));
    let on = |driver: &std::path::Path, fragment: &str| {
        Xr::new(["compile", &files[0], fragment, "--target", "vk-spirv", "--option", "vulkan=1.3", "--device"])
            .software_device()
            .vulkan_drivers(driver)
            .run()
    };
    for (driver, version) in [(setup.as_path(), "Vulkan 1.4"), (system, "Vulkan 1.3")] {
        let built = on(driver, &files[1]);
        let said = format!("{}{}", built.stdout, built.stderr);
        assert!(built.ok && said.contains("built on") && said.contains(version), "{said}");
    }
    for (driver, fragment, says) in [
        (system, &files[2], "'table' (set 0, binding 0) in fragment stage"),
        (setup.as_path(), &files[2], "'table' (set 0, binding 0) in fragment stage"),
    ] {
        let run = on(driver, fragment);
        assert_eq!(run.code, Some(1), "refused with exit status 1, not killed by a signal:\n{}", run.stderr);
        assert!(run.stderr.contains(says), "{}", run.stderr);
    }
    let run = Xr::new(["compile", &files[0], &files[2], "--target", "vk-spirv", "--option", "vulkan=1.3", "--device"])
        .software_device()
        .run();
    assert!(run.stderr.contains("is a uniform texel buffer (samplerBuffer)"), "{}", run.stderr);
    // OpenGL's GLSL has no input attachments: both OpenGL targets refuse
    // the program at the declaration's line and column, before any device.
    for target in ["gl-glsl", "gl-spirv"] {
        let run = Xr::new(["compile", &files[0], &files[1], "--target", target, "--device"]).software_device().run();
        assert_eq!(run.code, Some(1), "{target}: {}", run.stderr);
        assert!(
            run.stderr.contains("'input_attachment_index' : only allowed when using GLSL for Vulkan")
                && run.stderr.contains("a.frag:2:8"),
            "{target}: {}",
            run.stderr
        );
    }
}

/// `xr compile a.vert a.frag --target vk-spirv --device` (Vulkan 1.3) in a
/// new directory `name` holding the two stages; the run and all it said.
fn vulkan_program_on_the_device(name: &str, vertex: &str, fragment: &str) -> (xr_tests::XrRun, String) {
    let dir = temp_dir(name);
    std::fs::write(dir.join("a.vert"), vertex).unwrap();
    std::fs::write(dir.join("a.frag"), fragment).unwrap();
    let run = Xr::new(["compile", "a.vert", "a.frag", "--target", "vk-spirv", "--option", "vulkan=1.3", "--device"])
        .dir(&dir)
        .software_device()
        .run();
    let said = format!("{}{}", run.stdout, run.stderr);
    (run, said)
}

/// `xr compile --device --option {vulkan}` of `vertex` and `fragment` (as
/// `a.vert` and `a.frag` in a directory labelled `name`) on the setup's
/// lavapipe, then on Debian 12's own: each run, with what it printed.
fn vulkan_program_on_both_lavapipes(
    name: &str,
    vulkan: &str,
    vertex: &str,
    fragment: &str,
) -> [(xr_tests::XrRun, String); 2] {
    let dir = temp_dir(name);
    std::fs::write(dir.join("a.vert"), vertex).unwrap();
    std::fs::write(dir.join("a.frag"), fragment).unwrap();
    compile_on_both_lavapipes(&dir, &["a.vert", "a.frag", "--option", vulkan])
}

/// `xr compile ARGS --target vk-spirv --device` in `dir` on the setup's
/// lavapipe, then on Debian 12's, each with all it printed.
fn compile_on_both_lavapipes<S: AsRef<std::ffi::OsStr>>(
    dir: &std::path::Path,
    args: &[S],
) -> [(xr_tests::XrRun, String); 2] {
    let (setup, system) = (xr_tests::setup_lavapipe(), std::path::PathBuf::from(xr_tests::SYSTEM_LAVAPIPE));
    [setup, system].map(|driver| {
        let run = Xr::new(["compile"])
            .args(args)
            .args(["--target", "vk-spirv", "--device"])
            .dir(dir)
            .software_device()
            .vulkan_drivers(driver)
            .run();
        let said = format!("{}{}", run.stdout, run.stderr);
        (run, said)
    })
}

/// Asserts that `run` (which printed `said`) failed with exit status 1,
/// saying `reason`: a program refused before the driver saw it.
#[track_caller]
fn assert_refused_before_the_driver(run: &xr_tests::XrRun, said: &str, reason: &str) {
    assert_eq!(run.code, Some(1), "{said}");
    assert!(said.contains(reason), "named before the driver: {said}");
}

/// Whether `run` (which printed `said`) was refused: a device with what the
/// program needs builds it; one without refuses it before its driver,
/// saying `reason`.
#[track_caller]
fn built_or_refused_before_the_driver(run: &xr_tests::XrRun, said: &str, reason: &str) -> bool {
    if run.ok {
        assert!(said.contains("built on"), "{said}");
        return false;
    }
    assert_refused_before_the_driver(run, said, reason);
    true
}

/// Two lavapipes offered to the Vulkan loader, as the scripts offer the
/// setup's (Mesa 25, Vulkan 1.4) beside Debian 12's (Mesa 22.3, Vulkan
/// 1.3): the device takes the newest, whichever the loader lists first.
#[test]
fn of_two_software_vulkan_drivers_the_newest_is_picked_in_either_order() {
    let (setup, system) = (xr_tests::setup_lavapipe(), std::path::Path::new(xr_tests::SYSTEM_LAVAPIPE));
    assert!(setup.is_file(), "scripts/setup.sh puts a current lavapipe in {}", setup.display());
    assert!(system.is_file(), "Debian's mesa-vulkan-drivers installs {}", system.display());
    let dir = temp_dir("compile-two-drivers");
    std::fs::write(dir.join("a.comp"), "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n").unwrap();
    let built_on = |drivers: String| {
        let run = Xr::new(["compile", "a.comp", "--target", "vk-spirv", "--device"])
            .dir(&dir)
            .software_device()
            .vulkan_drivers(drivers)
            .ok();
        run.stdout.lines().find(|l| l.contains("built on")).map(str::to_owned).unwrap_or_else(|| run.stdout.clone())
    };
    let alone = |manifest: &std::path::Path| built_on(manifest.display().to_string());
    assert!(alone(system).contains("(vulkan, Vulkan 1.3)"), "{}", alone(system));
    assert!(alone(&setup).contains("(vulkan, Vulkan 1.4)"), "{}", alone(&setup));
    for order in [[system, setup.as_path()], [setup.as_path(), system]] {
        let both = built_on(format!("{}:{}", order[0].display(), order[1].display()));
        assert!(both.contains("(vulkan, Vulkan 1.4)"), "{order:?}: {both}");
    }
}

/// An array of textures of unknown size (`sampler2D textures[]`, the
/// bindless form): on a device with descriptor indexing (the setup's
/// lavapipe) it builds with 1024 elements; on one without (Debian 12's own
/// lavapipe) it is refused before the driver, naming the feature.
#[test]
fn a_bindless_texture_array_builds_where_the_device_has_descriptor_indexing_and_is_refused_by_name_elsewhere() {
    let [(built, said_built), (refused, said)] = vulkan_program_on_both_lavapipes(
        "compile-bindless",
        "vulkan=1.2",
        "#version 450\nlayout(location = 0) in vec2 p;\nlayout(location = 0) out vec2 uv;\n\
         void main() { uv = p; gl_Position = vec4(p, 0.0, 1.0); }\n",
        "#version 450\n#extension GL_EXT_nonuniform_qualifier : require\n\
         layout(set = 0, binding = 1) uniform sampler2D textures[];\nlayout(push_constant) uniform P { int index; };\n\
         layout(location = 0) in vec2 uv;\nlayout(location = 0) out vec4 o;\n\
         void main() { o = texture(textures[nonuniformEXT(index)], uv); }\n",
    );
    assert!(built.ok, "{said_built}");
    assert!(built.stdout.contains("textures[1024] (set 0, binding 1)"), "{}", built.stdout);
    assert_refused_before_the_driver(
        &refused,
        &said,
        "uses the SPIR-V capability RuntimeDescriptorArray, which needs the device feature runtimeDescriptorArray",
    );
}

/// Ray queries: a fragment stage that traces against an acceleration
/// structure builds on a device with ray queries (the setup's lavapipe: the
/// device enables the extensions and the structure is laid out and listed)
/// and is refused before the driver on one without (Debian 12's), naming
/// the capability and the extension.
#[test]
fn a_ray_query_program_builds_where_the_device_has_ray_queries_and_is_refused_by_name_elsewhere() {
    let [(built, said_built), (refused, said)] = vulkan_program_on_both_lavapipes(
        "compile-ray-query",
        "vulkan=1.3",
        "#version 460\nlayout(location = 0) in vec3 p;\nlayout(location = 0) out vec3 world;\n\
         void main() { world = p; gl_Position = vec4(p, 1.0); }\n",
        "#version 460\n#extension GL_EXT_ray_query : require\n\
         layout(set = 0, binding = 1) uniform accelerationStructureEXT scene;\n\
         layout(location = 0) in vec3 world;\nlayout(location = 0) out vec4 o;\n\
         void main() {\n  rayQueryEXT query;\n\
         rayQueryInitializeEXT(query, scene, gl_RayFlagsTerminateOnFirstHitEXT, 0xFF, world, 0.01, vec3(0, 1, 0), 100.0);\n\
         rayQueryProceedEXT(query);\n\
         float lit = rayQueryGetIntersectionTypeEXT(query, true) == gl_RayQueryCommittedIntersectionNoneEXT ? 1.0 : 0.3;\n\
         o = vec4(vec3(lit), 1.0);\n}\n",
    );
    assert!(built.ok, "{said_built}");
    assert!(said_built.contains("acceleration structure scene (set 0, binding 1)"), "{said_built}");
    assert_refused_before_the_driver(
        &refused,
        &said,
        "uses the SPIR-V capability RayQueryKHR, which needs the device feature rayQuery of VK_KHR_ray_query",
    );
}

/// Fragment shader barycentrics: the fragment stage reads `pervertexEXT
/// vec3 c[]`, an array of the vertex stage's `vec3 c`, one per vertex.
/// XR's stage-interface check takes it as that (it once said "stages do
/// not match"), and a device without the extension (lavapipe 22.3) refuses
/// the program before its driver, naming the capability and the extension.
#[test]
fn per_vertex_inputs_match_their_vertex_output_and_a_missing_extension_is_named_before_the_driver() {
    let (run, said) = vulkan_program_on_the_device(
        "compile-barycentrics",
        "#version 450\nlayout(location = 0) in vec3 p;\nlayout(location = 0) out vec3 c;\n\
         void main() { c = p; gl_Position = vec4(p, 1.0); }\n",
        "#version 450\n#extension GL_EXT_fragment_shader_barycentric : require\n\
         layout(location = 0) pervertexEXT in vec3 c[];\nlayout(location = 0) out vec4 o;\n\
         void main() { o = vec4(c[0] * gl_BaryCoordEXT.x + c[1] * gl_BaryCoordEXT.y + c[2] * gl_BaryCoordEXT.z, 1.0); }\n",
    );
    assert!(!said.contains("stages do not match"), "the per-vertex input is the vertex output's array: {said}");
    // A device with fragment shader barycentrics builds it.
    built_or_refused_before_the_driver(
        &run,
        &said,
        "uses the SPIR-V capability FragmentBarycentricKHR, which needs the device feature fragmentShaderBarycentric of VK_KHR_fragment_shader_barycentric",
    );
}

/// 16-bit stage inputs and outputs (`StorageInputOutput16`) need the
/// device feature `storageInputOutput16`, which lavapipe lacks: refused
/// before the driver by name, from the registry's whole capability table,
/// where the driver would answer with validation errors.
#[test]
fn sixteen_bit_stage_inputs_are_refused_by_name_where_the_device_lacks_the_feature() {
    let extensions = "#version 450\n#extension GL_EXT_shader_16bit_storage : require\n\
                      #extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\n";
    let (run, said) = vulkan_program_on_the_device(
        "compile-16-bit-inputs",
        &format!(
            "{extensions}layout(location = 0) in vec2 p;\nlayout(location = 0) out f16vec2 h;\n\
             void main() {{ h = f16vec2(p); gl_Position = vec4(p, 0.0, 1.0); }}\n"
        ),
        &format!(
            "{extensions}layout(location = 0) in f16vec2 h;\nlayout(location = 0) out vec4 o;\n\
             void main() {{ o = vec4(vec2(h), 0.0, 1.0); }}\n"
        ),
    );
    let refused = built_or_refused_before_the_driver(
        &run,
        &said,
        "the vertex stage a.vert uses the SPIR-V capability StorageInputOutput16, which needs the device feature \
         storageInputOutput16; this device (llvmpipe",
    );
    if refused {
        assert!(!said.contains("validation message"), "refused before the driver saw it: {said}");
    }
}

/// A module declaring a capability that needs a core feature the device
/// lacks (`MinLod`: a texture read clamped to a level of detail needs
/// `shaderResourceMinLod`, which lavapipe does not have) is refused before
/// the driver with one error naming the capability, the feature and the
/// device, not left to the validation layers (or a driver crash).
#[test]
fn a_capability_whose_core_feature_the_device_lacks_is_named_before_the_driver() {
    let (run, said) = vulkan_program_on_the_device(
        "compile-min-lod",
        "#version 450\nlayout(location = 0) in vec2 p;\nlayout(location = 0) out vec2 uv;\n\
         void main() { uv = p; gl_Position = vec4(p, 0.0, 1.0); }\n",
        "#version 450\n#extension GL_ARB_sparse_texture_clamp : require\n\
         layout(binding = 0) uniform sampler2D t;\nlayout(location = 0) in vec2 uv;\n\
         layout(location = 0) out vec4 o;\nvoid main() { o = textureClampARB(t, uv, 1.0); }\n",
    );
    // A device with the feature (most GPUs) builds it.
    let refused = built_or_refused_before_the_driver(
        &run,
        &said,
        "the fragment stage a.frag uses the SPIR-V capability MinLod, which needs the device feature shaderResourceMinLod; this device (llvmpipe",
    );
    if refused {
        assert!(!said.contains("validation message"), "refused before the driver saw it: {said}");
    }
}

/// The names in `dir`, sorted.
fn listing(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// A vertex and fragment program of the materials sample, its includes, and
/// a fragment shader that does not compile, in a fresh directory; `xr` runs
/// there.
fn materials_program(label: &str) -> TestDir {
    let dir = xr_tests::materials_copy(label);
    std::fs::write(dir.join("broken.frag"), "#version 450 core\nvoid main() { typo_here; }\n").unwrap();
    dir
}

fn xr_in(dir: &std::path::Path, args: &[&str]) -> xr_tests::XrRun {
    Xr::new(args).software_device().dir(dir).run()
}

const PROGRAM: [&str; 4] = ["shaders/quad.vert", "shaders/unlit.frag", "-I", "shaders/include"];

/// `--check` compiles, validates and writes nothing; its exit status says
/// whether the program compiled.
#[test]
fn check_writes_nothing_and_its_exit_status_says_whether_it_compiled() {
    let dir = materials_program("cli-check");
    let before = listing(&dir);
    let run = xr_in(&dir, &[&["compile", "--check"], &PROGRAM[..]].concat());
    assert!(run.ok, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("quad compiles for vk-spirv (2 stages); nothing written (--check)"), "{}", run.stderr);
    let run = xr_in(&dir, &["compile", "--check", "shaders/quad.vert", "broken.frag"]);
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("typo_here"), "{}", run.stderr);
    assert_eq!(listing(&dir), before, "--check wrote something");
    let (ok, _, stderr) = xr(&["compile", "--check", "-o", "x.spv", "a.vert"]);
    assert!(!ok && stderr.contains("cannot be used with") && stderr.contains("'--out <FILE>'"), "{stderr}");
}

/// A failed compile writes no `-o` file, partial or empty, and leaves one
/// already there as it was; no temporary file stays behind.
#[test]
fn a_failed_compile_leaves_the_file_at_o_untouched_and_writes_none_where_there_was_none() {
    let dir = materials_program("cli-failed-out");
    std::fs::create_dir(dir.join("out")).unwrap();
    std::fs::write(dir.join("out/kept.spv"), b"the previous build").unwrap();
    for (out, split) in
        [("out/kept.spv", false), ("out/absent.spv", false), ("out/new-dir/absent.spv", false), ("out", true)]
    {
        let mut args = vec!["compile", "shaders/quad.vert", "broken.frag", "-o", out];
        args.extend(split.then_some("--split"));
        let run = xr_in(&dir, &args);
        assert_eq!(run.code, Some(1), "{out}: {}{}", run.stdout, run.stderr);
        assert!(!run.stdout.contains("wrote"), "{}", run.stdout);
        assert_eq!(listing(&dir.join("out")), ["kept.spv"], "{out}");
        assert_eq!(std::fs::read(dir.join("out/kept.spv")).unwrap(), b"the previous build");
    }
    // A good compile replaces it whole.
    let run = xr_in(&dir, &[&["compile", "-o", "out/kept.spv"], &PROGRAM[..]].concat());
    assert!(run.ok, "{}", run.stderr);
    assert_eq!(listing(&dir.join("out")), ["kept.spv"]);
    assert_ne!(std::fs::read(dir.join("out/kept.spv")).unwrap(), b"the previous build");
}

/// An override (a specialization constant on SPIR-V) reaches the OpenGL
/// driver, which builds gl-glsl's sources, as a define: by default its
/// default, else the value `--override` gives. A bad `--override` is a
/// usage error before anything is built.
#[test]
fn overrides_reach_the_gl_glsl_driver_and_a_bad_one_is_refused() {
    let dir = materials_program("cli-overrides");
    // On the driver COUNT is a define: 0 is an array of no element, which the driver refuses.
    std::fs::write(
        dir.join("count.frag"),
        "#version 450 core\n\
         #if defined(GL_SPIRV) || defined(VULKAN)\n\
         layout(constant_id = 0) const int COUNT = 2;\n\
         #endif\n\
         layout(location = 0) out vec4 color;\n\
         void main() { float w[COUNT]; w[0] = 0.5; color = vec4(w[0]); }\n",
    )
    .unwrap();
    let device = ["--target", "gl-glsl", "--device"];
    for overrides in [&[][..], &["--override", "GAIN=2", "--override", "BIAS=-0.5"]] {
        let run = xr_in(&dir, &[&["compile"], &PROGRAM[..], &device, overrides].concat());
        assert!(run.ok, "{overrides:?}: {}{}", run.stdout, run.stderr);
        assert!(run.stdout.contains("by xr-compiler-glsl"), "{}", run.stdout);
    }
    let run = xr_in(&dir, &[&["compile", "count.frag", "--override", "COUNT=3"], &device[..]].concat());
    assert!(run.ok, "{}{}", run.stdout, run.stderr);
    let run = xr_in(&dir, &[&["compile", "count.frag", "--override", "COUNT=0"], &device[..]].concat());
    assert_eq!(run.code, Some(1), "COUNT=0 must reach the driver: {}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("array size"), "{}", run.stderr);
    let before = listing(&dir);
    for (bad, says) in [
        ("GAIN", "--override takes NAME=VALUE (GAIN=1.5), not 'GAIN'"),
        ("GAN=1", "program 'quad' declares no override 'GAN' (it declares GAIN (f32), BIAS (f32))"),
        ("GAIN=loud", "--override GAIN=loud: override 'GAIN' takes a float (a number like 1.5), not 'loud'"),
    ] {
        let run = xr_in(&dir, &[&["compile", "-o", "x.bundle", "--override", bad], &PROGRAM[..], &device].concat());
        assert_eq!(run.code, Some(2), "{bad}: {}{}", run.stdout, run.stderr);
        assert!(run.stderr.contains(says), "{bad}: {}", run.stderr);
        assert!(!run.stdout.contains("built on"), "{bad}: {}", run.stdout);
    }
    assert_eq!(listing(&dir), before);
}

/// `-v` says which target `xr compile` picked when none was given, and why.
#[test]
fn verbose_names_the_default_target() {
    let dir = materials_program("cli-verbose-target");
    let run = xr_in(&dir, &[&["compile", "--check", "-v"], &PROGRAM[..]].concat());
    assert!(run.ok, "{}", run.stderr);
    assert!(
        run.stderr.contains("xr compile: target vk-spirv (the default for glsl: the first portable target of the highest-priority plugin), compiled by xr-compiler-vk-spirv"),
        "{}",
        run.stderr
    );
    let run = xr_in(&dir, &[&["compile", "--check", "-v", "--target", "gl-spirv"], &PROGRAM[..]].concat());
    assert!(run.stderr.contains("target gl-spirv (as --target asks)"), "{}", run.stderr);
    let run = xr_in(&dir, &[&["compile", "--check"], &PROGRAM[..]].concat());
    assert!(!run.stderr.contains("target vk-spirv"), "{}", run.stderr);
}

/// `-o DIR --split` writes one SPIR-V module per stage, DIR/NAME.STAGE.spv;
/// a target with no output per stage refuses it, writing nothing.
#[test]
fn split_writes_one_valid_spirv_module_per_stage() {
    let dir = materials_program("cli-split");
    for (target, env) in [("vk-spirv", "vulkan1.0"), ("gl-spirv", "opengl4.5")] {
        let out = format!("spv-{target}");
        let run = xr_in(&dir, &[&["compile", "-o", &out, "--split", "--target", target], &PROGRAM[..]].concat());
        assert!(run.ok, "{target}: {}", run.stderr);
        assert_eq!(listing(&dir.join(&out)), ["quad.fragment.spv", "quad.vertex.spv"], "{target}");
        for stage in ["vertex", "fragment"] {
            let file = dir.join(&out).join(format!("quad.{stage}.spv"));
            assert!(
                run.stderr.contains(&format!(
                    "to {}",
                    std::path::Path::new(&out).join(format!("quad.{stage}.spv")).display()
                )),
                "{}",
                run.stderr
            );
            let bytes = std::fs::read(&file).unwrap();
            assert_eq!(&bytes[..4], &0x0723_0203u32.to_le_bytes(), "{}", file.display());
            let validated = Command::new("spirv-val").args(["--target-env", env]).arg(&file).status().unwrap();
            assert!(validated.success(), "spirv-val rejects {}", file.display());
        }
    }
    let before = listing(&dir);
    let run = xr_in(&dir, &[&["compile", "-o", "bundles", "--split", "--target", "gl-glsl"], &PROGRAM[..]].concat());
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("--split: gl-glsl gives no output per stage"), "{}", run.stderr);
    assert_eq!(listing(&dir), before);
    let run = xr_in(&dir, &[&["compile", "-o", "spv-vk-spirv"], &PROGRAM[..]].concat());
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("is a directory: name a file, or give --split"), "{}", run.stderr);
}

/// `-o -` writes the artifact to standard output and says so on stderr:
/// the same bytes as `-o FILE`.
#[test]
fn dash_writes_the_artifact_to_standard_output() {
    let dir = materials_program("cli-stdout");
    let run = Xr::new([&["compile", "-o", "-", "--target", "vk-spirv"], &PROGRAM[..]].concat()).dir(&dir).command();
    let output = { run }.output().expect("xr runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stderr).contains("bytes to standard output"));
    let file = dir.join("program.bin");
    xr_in(&dir, &[&["compile", "-o", "program.bin", "--target", "vk-spirv"], &PROGRAM[..]].concat());
    assert_eq!(output.stdout, std::fs::read(&file).unwrap(), "-o - and -o FILE write the same bytes");
    assert!(!dir.join("-").exists(), "no file named -");
    let run = xr_in(&dir, &[&["compile", "-o", "-", "--split"], &PROGRAM[..]].concat());
    assert_eq!(run.code, Some(2), "--split needs a directory: {}", run.stderr);
}

/// A task + mesh + fragment program builds on a device with mesh shaders
/// (the setup's lavapipe) and is refused before the driver on one without
/// (Debian 12's lavapipe 22.3), naming the capability and the extension.
#[test]
fn a_mesh_program_builds_where_the_device_has_mesh_shaders_and_is_refused_by_name_elsewhere() {
    let root = xr_tests::workspace_root();
    let files = [
        root.join("samples/meshlets/shaders/cube.task"),
        root.join("samples/meshlets/shaders/cube.mesh"),
        root.join("samples/textured/shaders/mesh.frag"),
    ];
    let dir = temp_dir("compile-mesh");
    let [(built, said_built), (refused, said)] = compile_on_both_lavapipes(&dir, &files);
    assert!(
        built.ok && said_built.contains("built on") && said_built.contains("storage buffer CubeVertices"),
        "{said_built}"
    );
    assert_refused_before_the_driver(
        &refused,
        &said,
        "the task stage cube.task uses the SPIR-V capability MeshShadingEXT, which needs VK_EXT_mesh_shader; this device (llvmpipe",
    );
}

/// A ray tracing program of two miss stages builds on a device with ray
/// tracing pipelines (the setup's lavapipe: pipeline and binding table,
/// under the validation layers) and is refused before the driver on one
/// without (Debian 12's lavapipe 22.3), naming the capability and the feature.
#[test]
fn a_ray_tracing_program_builds_where_the_device_traces_rays_and_is_refused_by_name_elsewhere() {
    let shaders = xr_tests::workspace_root().join("samples/raytraced/shaders");
    let files = ["trace.rgen", "background.rmiss", "shadow.rmiss", "shade.rchit"].map(|f| shaders.join(f));
    let dir = temp_dir("compile-ray-tracing");
    let [(built, said_built), (refused, said)] = compile_on_both_lavapipes(&dir, &files);
    assert!(
        built.ok
            && said_built.contains("built on")
            && said_built.contains("acceleration structure scene (set 0, binding 0)"),
        "{said_built}"
    );
    assert_refused_before_the_driver(
        &refused,
        &said,
        "the ray-generation stage trace.rgen uses the SPIR-V capability RayTracingKHR, which needs the device feature \
         rayTracingPipeline of VK_KHR_ray_tracing_pipeline; this device (llvmpipe",
    );
}

/// HLSL ray tracing stages, which glslang's HLSL front end cannot read, go
/// to the Slang plugin (the one HLSL compiler that takes them), with DXC's
/// register mapping; a classic HLSL program still goes to glslang's.
#[test]
fn hlsl_ray_tracing_stages_are_compiled_by_the_compiler_that_has_them() {
    let dir = temp_dir("compile-hlsl-ray-tracing");
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    write(
        "trace.rgen",
        "RaytracingAccelerationStructure scene : register(t0);\nRWTexture2D<float4> image : register(u1);\n\
         struct Payload { float3 color; };\n\
         [shader(\"raygeneration\")]\nvoid main() {\n  uint2 at = DispatchRaysIndex().xy;\n  RayDesc ray;\n\
         ray.Origin = float3(at, -1.0); ray.Direction = float3(0, 0, 1); ray.TMin = 0.0; ray.TMax = 10.0;\n\
         Payload payload;\n  TraceRay(scene, RAY_FLAG_NONE, 0xff, 0, 0, 0, ray, payload);\n\
         image[at] = float4(payload.color, 1.0);\n}\n",
    );
    write(
        "sky.rmiss",
        "struct Payload { float3 color; };\n[shader(\"miss\")]\nvoid main(inout Payload payload) { payload.color = float3(0.1, 0.2, 0.4); }\n",
    );
    write(
        "shade.rchit",
        "struct Payload { float3 color; };\n\
         [shader(\"closesthit\")]\nvoid main(inout Payload payload, in BuiltInTriangleIntersectionAttributes hit) {\n\
         payload.color = float3(1.0 - hit.barycentrics.x - hit.barycentrics.y, hit.barycentrics); }\n",
    );
    let files = ["trace.rgen", "sky.rmiss", "shade.rchit"].map(|f| dir.join(f));
    let run = Xr::new(["compile", "-v", "--lang", "hlsl", "--target", "vk-spirv", "--device"])
        .args(&files)
        .dir(&dir)
        .software_device()
        .vulkan_drivers(xr_tests::setup_lavapipe())
        .run();
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(run.ok, "{said}");
    assert!(said.contains("compiled by xr-compiler-slang") && said.contains("built on"), "{said}");
    // DXC's mapping: register(t0) is binding 0, register(u1) binding 1.
    assert!(said.contains("acceleration structure scene (set 0, binding 0)"), "{said}");
    assert!(said.contains("storage image image (set 0, binding 1)"), "{said}");
    std::fs::write(dir.join("plain.frag"), "float4 main() : SV_Target { return float4(1, 0, 0, 1); }\n").unwrap();
    let run =
        Xr::new(["compile", "-v", "--check", "--lang", "hlsl", "--target", "vk-spirv", "plain.frag"]).dir(&dir).run();
    assert!(run.ok && run.stderr.contains("compiled by xr-compiler-vk-spirv"), "{}", run.stderr);
}

/// `--hit-group` names a ray tracing program's hit groups, each its files;
/// a group that breaks the rule is one usage error naming the file, before
/// any compile. (That the named groups are the ones rays meet: the render
/// test `named_hit_groups_put_each_closest_hit_stage_where_the_manifest_says`.)
#[test]
fn hit_groups_named_on_the_command_line_are_checked_before_the_compile() {
    let dir = temp_dir("compile-hit-groups");
    let shaders = xr_tests::workspace_root().join("samples/raytraced/shaders");
    for name in ["trace.rgen", "background.rmiss", "shadow.rmiss", "shade.rchit"] {
        std::fs::copy(shaders.join(name), dir.join(name)).unwrap();
    }
    std::fs::write(
        dir.join("red.rchit"),
        "#version 460\n#extension GL_EXT_ray_tracing : require\n\
         layout(location = 0) rayPayloadInEXT vec3 color;\nvoid main() { color = vec3(1.0, 0.0, 0.0); }\n",
    )
    .unwrap();
    let compile = |groups: &[&str]| {
        let mut args = vec!["compile", "--check", "--target", "vk-spirv"];
        args.extend(["trace.rgen", "background.rmiss", "shadow.rmiss", "red.rchit", "shade.rchit"]);
        for group in groups {
            args.extend(["--hit-group", group]);
        }
        Xr::new(args).dir(&dir).run()
    };
    for groups in [&[][..], &["shade.rchit", "red.rchit"]] {
        let run = compile(groups);
        assert!(run.ok, "{groups:?}: {}", run.stderr);
    }
    for (groups, said) in [
        (
            &["red.rchit"][..],
            "shade.rchit: the closest-hit stage names no hit group, while red.rchit names hit group 0",
        ),
        (&["shade.rchit,red.rchit"], "shade.rchit: hit group 0 already has a closest-hit stage (red.rchit)"),
        (&["shade.rchit", "gone.rchit"], "--hit-group names gone.rchit, which is not one of the files given"),
        (&["shade.rchit", "red.rchit", "shade.rchit"], "shade.rchit is in hit group 0 and hit group 2"),
        (&["shade.rchit", "red.rchit", "trace.rgen"], "puts trace.rgen in hit group 2, but it has no closest-hit"),
    ] {
        let run = compile(groups);
        assert!(!run.ok && run.stderr.contains(said), "{groups:?}: {}", run.stderr);
        assert_eq!(run.stderr.matches("error").count(), 1, "one error: {}", run.stderr);
    }
}
