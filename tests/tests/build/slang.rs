//! The Slang compiler (`xr-compiler-slang`), loaded from disk with the
//! Slang library the setup unpacked: a file's entry points compiled and
//! built on both devices, reflection, modules as inputs of the build, and
//! each failure path: the library absent or of another release, an error
//! in an imported module, an unknown entry point, a missing module. (The
//! materials sample's Slang twin and a manifest mixing four languages are
//! in `render` and `plugin_wgsl`.)

use std::path::Path;
use xr_tests::{TestDir, Xr, temp_dir};

/// A module with an interface and a generic, imported by the program.
const MODULE: &str = "module shading;\n\
public interface ITint { float3 apply(float3 c); }\n\
public struct Warm : ITint { public float3 apply(float3 c) { return c * float3(1.0, 0.8, 0.6); } }\n\
public float3 tinted<T : ITint>(T tint, float3 c) { return tint.apply(c); }\n";

/// Two entry points, push constants on Vulkan and a uniform block on
/// OpenGL, a specialization constant and a texture.
const PROGRAM: &str = "import shading;\n\
struct Constants { float4 u_rect; float4 u_color; };\n\
#ifdef VULKAN\n[[vk::push_constant]] ConstantBuffer<Constants> constants;\n#else\nConstantBuffer<Constants> constants;\n#endif\n\
[vk::constant_id(3)] const float GAIN = 1.0;\n\
Sampler2D albedo;\n\
struct V { float4 position : SV_Position; float2 uv; };\n\
[shader(\"vertex\")]\n\
V vertexMain(float2 p : POSITION) { V v; v.uv = p; v.position = float4(constants.u_rect.xy + p * constants.u_rect.zw, 0, 1); return v; }\n\
[shader(\"fragment\")]\n\
float4 fragmentMain(V v) : SV_Target { Warm w; return float4(tinted(w, constants.u_color.rgb * albedo.Sample(v.uv).rgb) * GAIN, 1); }\n";

/// A directory with `tile.slang` importing `include/shading.slang`.
fn sources(label: &str) -> TestDir {
    let dir = temp_dir(label);
    std::fs::create_dir_all(dir.join("include")).unwrap();
    std::fs::write(dir.join("include/shading.slang"), MODULE).unwrap();
    std::fs::write(dir.join("tile.slang"), PROGRAM).unwrap();
    dir
}

fn xr(dir: &Path, args: &[&str]) -> xr_tests::XrRun {
    Xr::new(args).dir(dir).software_device().run()
}

#[test]
fn xr_plugins_lists_slang_and_a_file_s_entry_points_build_on_both_devices() {
    let dir = sources("slang-compile");
    let plugins = xr(&dir, &["plugins"]);
    assert!(plugins.ok, "{}", plugins.stderr);
    let listing = &plugins.stdout[plugins.stdout.find("build system xr-compiler-slang").expect("listed")..];
    assert!(listing.contains("compiles: slang → vk-spirv, gl-spirv"), "{listing}");
    assert!(listing.lines().nth(1).unwrap().contains("flags: OfflineCompile | CompatibleObject"), "{listing}");

    for target in ["vk-spirv", "gl-spirv"] {
        let run = xr(&dir, &["compile", "tile.slang", "-I", "include", "--target", target, "--device"]);
        assert!(run.ok, "{target}: {}\n{}", run.stdout, run.stderr);
        assert!(run.stdout.contains("tile built on llvmpipe"), "{target}: {}", run.stdout);
        assert!(run.stdout.contains("constant u_color : vec4"), "{target}: bound by name: {}", run.stdout);
    }
}

#[test]
fn xr_reflect_json_lists_entry_points_constants_overrides_and_resources() {
    let dir = sources("slang-reflect");
    let run = xr(&dir, &["reflect", "tile.slang", "-I", "include", "--target", "vk-spirv", "--json"]);
    assert!(run.ok, "{}", run.stderr);
    let value: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    let names = |key: &str| -> Vec<String> {
        value[key].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_owned()).collect()
    };
    assert!(names("constants").contains(&"u_rect".to_owned()), "{value}");
    assert!(names("resources").contains(&"albedo".to_owned()), "{value}");
    assert_eq!(value["overrides"][0]["name"], "GAIN");
    assert_eq!(value["overrides"][0]["id"], 3);
    let stages: Vec<(String, String)> = value["details"]["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["stage"].as_str().unwrap().to_owned(), s["entry_point"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(
        stages,
        [("vertex".to_owned(), "vertexMain".to_owned()), ("fragment".to_owned(), "fragmentMain".to_owned())]
    );
}

#[test]
fn stages_of_two_files_each_get_their_own_entry_point() {
    // Slang numbers entry points file by file; the program's stages
    // interleave the files (vertex and fragment in one, tessellation in
    // the other), so a stage taking another's number is caught here.
    let dir = temp_dir("slang-two-files");
    std::fs::write(
        dir.join("base.slang"),
        "struct V { float4 p : SV_Position; };\n\
         [shader(\"vertex\")] V vertexMain(float4 p : POSITION) { V v; v.p = p; return v; }\n\
         [shader(\"fragment\")] float4 fragmentMain(V v) : SV_Target { return float4(1, 0, 0, 1); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("tess.slang"),
        "struct V { float4 p : SV_Position; };\n\
         struct PC { float e[3] : SV_TessFactor; float i : SV_InsideTessFactor; };\n\
         PC constants(InputPatch<V, 3> patch) { PC c; c.e[0] = 1; c.e[1] = 1; c.e[2] = 1; c.i = 1; return c; }\n\
         [shader(\"hull\")] [domain(\"tri\")] [partitioning(\"integer\")] [outputtopology(\"triangle_cw\")]\n\
         [outputcontrolpoints(3)] [patchconstantfunc(\"constants\")]\n\
         V hullMain(InputPatch<V, 3> patch, uint i : SV_OutputControlPointID) { return patch[i]; }\n\
         [shader(\"domain\")] [domain(\"tri\")]\n\
         V domainMain(PC c, float3 t : SV_DomainLocation, const OutputPatch<V, 3> patch) {\n\
           V v; v.p = patch[0].p * t.x + patch[1].p * t.y + patch[2].p * t.z; return v; }\n",
    )
    .unwrap();
    let run = xr(&dir, &["reflect", "base.slang", "tess.slang", "--target", "vk-spirv", "--option", "vulkan=1.1"]);
    assert!(run.ok, "{}\n{}", run.stdout, run.stderr);
    for line in [
        "base.slang (vertex entry point 'vertexMain')",
        "tess.slang (tess-control entry point 'hullMain')",
        "tess.slang (tess-evaluation entry point 'domainMain')",
        "base.slang (fragment entry point 'fragmentMain')",
    ] {
        assert!(run.stdout.contains(line), "{line}:\n{}", run.stdout);
    }
    let device = xr(&dir, &["compile", "base.slang", "tess.slang", "--target", "vk-spirv", "--device"]);
    assert!(device.ok, "{}\n{}", device.stdout, device.stderr);
}

#[test]
fn an_edited_module_rebuilds_the_programs_that_import_it_and_no_other() {
    let dir = sources("slang-module-input");
    std::fs::write(
        dir.join("plain.slang"),
        PROGRAM.replace("import shading;", "import other;").replace(
            "Warm w; return float4(tinted(w, constants.u_color.rgb * albedo.Sample(v.uv).rgb) * GAIN, 1);",
            "return constants.u_color * albedo.Sample(v.uv) * GAIN;",
        ),
    )
    .unwrap();
    std::fs::write(dir.join("include/other.slang"), "module other;\n").unwrap();
    let stages = |file: &str| {
        format!(
            "stages = [\n  {{ stage = \"vertex\", file = \"{file}\", entry = \"vertexMain\" }},\n  \
             {{ stage = \"fragment\", file = \"{file}\", entry = \"fragmentMain\" }},\n]\n"
        )
    };
    std::fs::write(
        dir.join("xr.toml"),
        format!(
            "store = \"store\"\n[[program]]\nname = \"tile\"\ntargets = [\"vk-spirv\", \"gl-spirv\"]\ninclude = [\"include\"]\n{}\
             [[program]]\nname = \"plain\"\ntargets = [\"vk-spirv\"]\ninclude = [\"include\"]\n{}",
            stages("tile.slang"),
            stages("plain.slang")
        ),
    )
    .unwrap();
    let build = || {
        let run = xr(&dir, &["build", "-m", "xr.toml"]);
        assert!(run.ok, "{}\n{}", run.stdout, run.stderr);
        let line = run.stderr.lines().find(|l| l.starts_with("xr build:")).unwrap().to_owned();
        (xr_tests::summary_count(&line, "built"), xr_tests::summary_count(&line, "reused"))
    };
    assert_eq!(build(), (3, 0));
    // The build stamp answers a no-op from the inputs it recorded: the
    // module is one of them.
    assert_eq!(build(), (0, 3));
    std::fs::write(dir.join("include/shading.slang"), MODULE.replace("0.8, 0.6", "0.7, 0.5")).unwrap();
    assert_eq!(build(), (2, 1), "the two artifacts of `tile`, which imports the module; `plain` reused");
}

#[test]
fn without_the_library_the_plugin_says_why_and_the_other_programs_build() {
    let dir = sources("slang-absent");
    std::fs::write(dir.join("a.vert"), "#version 450\nvoid main() { gl_Position = vec4(0.0); }\n").unwrap();
    std::fs::write(
        dir.join("xr.toml"),
        "store = \"store\"\n[[program]]\nname = \"glsl\"\ntargets = [\"vk-spirv\"]\nstages = [{ stage = \"vertex\", file = \"a.vert\" }]\n\
         [[program]]\nname = \"tile\"\ntargets = [\"vk-spirv\"]\ninclude = [\"include\"]\n\
         stages = [{ stage = \"vertex\", file = \"tile.slang\", entry = \"vertexMain\" }]\n",
    )
    .unwrap();
    let missing = dir.join("no-such-dir/libslang-compiler.so.0.2026.12");
    let plugins = Xr::new(["plugins"]).env("XR_SLANG_LIBRARY", &missing).run();
    assert!(plugins.ok, "{}", plugins.stderr);
    let listing = &plugins.stdout[plugins.stdout.find("build system xr-compiler-slang").expect("still listed")..];
    let first = listing.lines().next().unwrap();
    assert!(first.contains("unavailable: the Slang library"), "{first}");
    assert!(first.contains(&missing.display().to_string()) && first.contains("scripts/setup.sh"), "{first}");
    assert!(listing.lines().nth(1).unwrap().contains("flags: (none)"), "no availability flags: {listing}");

    let build = Xr::new(["build", "-m", "xr.toml"]).dir(&dir).env("XR_SLANG_LIBRARY", &missing).run();
    assert_eq!(build.code, Some(1), "{}\n{}", build.stdout, build.stderr);
    let line = build.stderr.lines().find(|l| l.starts_with("xr build:")).unwrap();
    assert_eq!((xr_tests::summary_count(line, "built"), xr_tests::summary_count(line, "failed")), (1, 1), "{line}");
    assert!(
        build.stderr.contains("the Slang library (libslang-compiler.so.0.2026.12) was not found"),
        "{}",
        build.stderr
    );
}

#[test]
fn a_library_of_another_slang_release_is_refused_by_its_version() {
    let dir = sources("slang-old");
    let old = xr_tests::library("xr-fixture-old-slang");
    let run =
        Xr::new(["compile", "tile.slang", "-I", "include", "--target", "vk-spirv", "--stage", "fragment", "-o", "x"])
            .dir(&dir)
            .env("XR_SLANG_LIBRARY", &old)
            .run();
    assert_eq!(run.code, Some(1), "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("is Slang 2025.1, but xr-compiler-slang is written for Slang 2026.12"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_error_in_an_imported_module_names_the_module_s_line_and_the_import() {
    let dir = sources("slang-module-error");
    std::fs::write(dir.join("include/shading.slang"), MODULE.replace("c * float3", "c * undefined_factor * float3"))
        .unwrap();
    let run = xr(&dir, &["compile", "tile.slang", "-I", "include", "--target", "vk-spirv", "-o", "out.spv"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let errors: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors, ["error: undefined identifier 'undefined_factor'."], "one error:\n{}", run.stderr);
    assert!(run.stderr.contains("--> include/shading.slang:3:"), "at the module's line:\n{}", run.stderr);
    assert!(run.stderr.contains("included from tile.slang:1"), "and the import that read it:\n{}", run.stderr);
    assert!(!dir.join("out.spv").exists());
}

#[test]
fn an_unknown_entry_point_and_a_missing_module_are_one_error_each_at_their_place() {
    let dir = sources("slang-unknown");
    let unknown = xr(
        &dir,
        &["compile", "tile.slang", "-I", "include", "--entry", "shadowMain", "--target", "vk-spirv", "-o", "x"],
    );
    assert_eq!(unknown.code, Some(2), "{}", unknown.stderr);
    assert!(
        unknown.stderr.contains(
            "tile.slang declares no entry point 'shadowMain'; it declares vertexMain (vertex), fragmentMain (fragment)"
        ),
        "{}",
        unknown.stderr
    );
    // Named in a manifest, where the stage is given: Slang's own error.
    std::fs::write(
        dir.join("xr.toml"),
        "store = \"store\"\n[[program]]\nname = \"tile\"\ntargets = [\"vk-spirv\"]\ninclude = [\"include\"]\n\
         stages = [\n  { stage = \"vertex\", file = \"tile.slang\", entry = \"vertexMain\" },\n  \
         { stage = \"fragment\", file = \"tile.slang\", entry = \"shadowMain\" },\n]\n",
    )
    .unwrap();
    let build = xr(&dir, &["build", "-m", "xr.toml"]);
    assert_eq!(build.code, Some(1), "{}", build.stderr);
    assert!(build.stderr.contains("no function found matching entry point name 'shadowMain'"), "{}", build.stderr);

    std::fs::remove_file(dir.join("include/shading.slang")).unwrap();
    let missing = xr(
        &dir,
        &[
            "compile",
            "tile.slang",
            "-I",
            "include",
            "--stage",
            "vertex",
            "--entry",
            "vertexMain",
            "--target",
            "vk-spirv",
            "-o",
            "x",
        ],
    );
    assert_eq!(missing.code, Some(1), "{}", missing.stderr);
    let errors: Vec<&str> = missing.stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors, ["error: cannot open file 'shading.slang'"], "{}", missing.stderr);
    assert!(missing.stderr.contains("--> tile.slang:1:8"), "at the import: {}", missing.stderr);
}

#[test]
fn parameter_blocks_and_explicit_sets_build_on_vulkan_and_on_opengl_which_has_no_sets() {
    // A ParameterBlock gets a set of its own, the cbuffer set 2: both
    // blocks are binding 0 of their set, which OpenGL (no sets) would
    // take for one block declared twice.
    let dir = temp_dir("slang-sets");
    std::fs::write(
        dir.join("sets.slang"),
        "struct Material { float4 tint; Sampler2D albedo; };\n\
         ParameterBlock<Material> material;\n\
         [[vk::binding(0, 2)]] cbuffer Frame { float4x4 viewProj; };\n\
         struct V { float4 p : SV_Position; float2 uv; };\n\
         [shader(\"vertex\")] V vertexMain(float3 p : POSITION, float2 uv : TEXCOORD) { V v; v.p = mul(viewProj, float4(p, 1)); v.uv = uv; return v; }\n\
         [shader(\"fragment\")] float4 fragmentMain(V v) : SV_Target { return material.tint * material.albedo.Sample(v.uv); }\n",
    )
    .unwrap();
    for target in ["vk-spirv", "gl-spirv"] {
        let run = xr(&dir, &["compile", "sets.slang", "--target", target, "--device"]);
        assert!(run.ok, "{target}: {}\n{}", run.stdout, run.stderr);
        for line in ["constant viewProj : mat4", "constant tint : vec4", "texture with sampler material.albedo"] {
            assert!(run.stdout.contains(line), "{target}: {line}: {}", run.stdout);
        }
    }
}

/// What one file cannot be as one program, each one error naming it:
/// push constants on OpenGL, compute and graphics entry points together
/// (two programs: `--entry` picks), two entry points of one stage.
#[test]
fn what_a_file_cannot_be_as_one_program_is_one_error_naming_it() {
    let dir = temp_dir("slang-one-program");
    std::fs::write(
        dir.join("push.slang"),
        "struct C { float4 tint; };\n[[vk::push_constant]] ConstantBuffer<C> c;\n\
         [shader(\"fragment\")] float4 fragmentMain() : SV_Target { return c.tint; }\n",
    )
    .unwrap();
    let run = xr(&dir, &["compile", "push.slang", "--target", "gl-spirv", "-o", "x"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("reads push constants ('C_std430'), which OpenGL does not have"), "{}", run.stderr);
    let vulkan = xr(&dir, &["compile", "push.slang", "--target", "vk-spirv", "-o", "x"]);
    assert!(vulkan.ok, "Vulkan has them: {}", vulkan.stderr);

    std::fs::write(
        dir.join("mixed.slang"),
        "RWStructuredBuffer<float> data;\n\
         [shader(\"compute\")] [numthreads(1, 1, 1)] void computeMain(uint3 id : SV_DispatchThreadID) { data[id.x] = 1; }\n\
         [shader(\"vertex\")] float4 vertexMain(float4 p : POSITION) : SV_Position { return p; }\n\
         [shader(\"fragment\")] float4 fragmentMain() : SV_Target { return float4(1, 0, 0, 1); }\n\
         [shader(\"fragment\")] float4 otherMain() : SV_Target { return float4(0, 1, 0, 1); }\n",
    )
    .unwrap();
    let mixed = xr(&dir, &["compile", "mixed.slang", "--target", "vk-spirv", "-o", "x"]);
    assert_eq!(mixed.code, Some(2), "{}", mixed.stderr);
    assert!(mixed.stderr.contains("declares entry points of several kinds of pipeline"), "{}", mixed.stderr);
    // A mesh entry point beside a vertex one is a mesh program and a
    // graphics program; `--entry` picks the mesh one, which Slang builds.
    std::fs::write(
        dir.join("mesh.slang"),
        "struct V { float4 p : SV_Position; };\n\
         [shader(\"vertex\")] float4 vertexMain(float4 p : POSITION) : SV_Position { return p; }\n\
         [shader(\"mesh\")] [outputtopology(\"triangle\")] [numthreads(1, 1, 1)]\n\
         void meshMain(out indices uint3 tris[1], out vertices V verts[3]) { SetMeshOutputCounts(0, 0); }\n\
         [shader(\"fragment\")] float4 fragmentMain() : SV_Target { return float4(1, 0, 0, 1); }\n",
    )
    .unwrap();
    let both = xr(&dir, &["compile", "mesh.slang", "--target", "vk-spirv", "-o", "x"]);
    assert_eq!(both.code, Some(2), "{}", both.stderr);
    assert!(both.stderr.contains("vertexMain (vertex), meshMain (mesh)"), "{}", both.stderr);
    let mesh = xr(
        &dir,
        &["compile", "mesh.slang", "--entry", "meshMain", "--entry", "fragmentMain", "--target", "vk-spirv", "-o", "x"],
    );
    assert!(mesh.ok, "{}", mesh.stderr);
    let two = xr(
        &dir,
        &[
            "compile",
            "mixed.slang",
            "--entry",
            "fragmentMain",
            "--entry",
            "otherMain",
            "--target",
            "vk-spirv",
            "-o",
            "x",
        ],
    );
    assert_eq!(two.code, Some(2), "{}", two.stderr);
    assert!(two.stderr.contains("declares more than one fragment entry point"), "{}", two.stderr);
    for entries in [&["--entry", "computeMain"][..], &["--entry", "vertexMain", "--entry", "fragmentMain"][..]] {
        let args = [&["compile", "mixed.slang"][..], entries, &["--target", "vk-spirv", "--device"][..]].concat();
        let chosen = xr(&dir, &args);
        assert!(chosen.ok, "{entries:?}: {}\n{}", chosen.stdout, chosen.stderr);
    }
}

/// Slang 2026 writes a `ConstBufferPointer` read in a loop as a
/// `PhysicalStorageBuffer` pointer in a function variable without
/// `AliasedPointer`: Debian 12's SPIRV-Tools (2023.1) refuses such a module,
/// SPIRV-Tools of 2026 (shipped with Slang) accepts it, and XR judges a
/// module by a validator as new as its compiler.
#[test]
fn a_slang_module_with_buffer_pointers_is_judged_by_the_validator_of_its_time_and_builds() {
    let dir = temp_dir("slang-buffer-pointers");
    std::fs::write(
        dir.join("sum.slang"),
        "struct Node { ConstBufferPointer<uint> indices; uint count; };\n\
         StructuredBuffer<Node> nodes;\n\
         RWStructuredBuffer<uint> result;\n\
         [shader(\"compute\")]\n\
         [numthreads(1, 1, 1)]\n\
         void sumMain(uint3 id : SV_DispatchThreadID) {\n\
             Node node = nodes[id.x];\n\
             uint sum = 0;\n\
             for (uint i = 0; i < 3; i++) { sum += node.indices[id.x * 3 + i]; }\n\
             result[id.x] = sum;\n\
         }\n",
    )
    .unwrap();
    let args = ["compile", "sum.slang", "--option", "vulkan=1.3", "--target", "vk-spirv", "--device", "-o", "sum.spv"];
    let run = xr(&dir, &args);
    assert!(run.ok, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("sum built on llvmpipe"), "{}", run.stdout);
    let old = std::process::Command::new("spirv-val")
        .args(["--target-env", "vulkan1.3"])
        .arg(dir.join("sum.spv"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&old.stderr);
    assert!(!old.status.success() && said.contains("AliasedPointer"), "Debian's spirv-val refuses it: {said}");
}

/// HLSL written for DXC, in a stage glslang's HLSL front end lacks: Slang
/// refuses DXC's implicit truncation of a vector, at its file and line,
/// and the message says what DXC does and how to write it for both.
#[test]
fn hlsl_written_for_dxc_is_refused_at_the_form_with_what_dxc_does_with_it() {
    let dir = temp_dir("slang-dxc-forms");
    std::fs::write(
        dir.join("gen.rgen"),
        "RWTexture2D<float4> image : register(u1);\n\
         [shader(\"raygeneration\")]\n\
         void main() {\n\
             float4 c = float4(1, 0, 0, 1);\n\
             float3 rgb = c;\n\
             image[DispatchRaysIndex().xy] = float4(rgb, 1);\n\
         }\n",
    )
    .unwrap();
    let run = xr(&dir, &["compile", "gen.rgen", "--lang", "hlsl", "--target", "vk-spirv", "--check"]);
    assert!(!run.ok, "{}", run.stdout);
    assert!(run.stderr.contains("gen.rgen:5"), "at the line: {}", run.stderr);
    assert!(
        run.stderr.contains("DXC truncates vector<float,4> to vector<float,3>, with a warning; Slang does not"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("gen.rgen is HLSL, compiled by Slang's HLSL front end"), "{}", run.stderr);
}

/// GLSL that only the glslang of 2026 shipped with Slang knows: it compiles
/// where the Slang distribution is, and is refused by name, at the
/// `#extension` line, where it is not (Debian's glslang alone).
#[test]
fn glsl_only_glslang_2026_knows_compiles_beside_the_slang_library_and_is_refused_by_name_without_it() {
    let dir = temp_dir("glslang-2026");
    std::fs::write(
        dir.join("hit.rchit"),
        "#version 460\n#extension GL_EXT_ray_tracing : require\n\
         #extension GL_EXT_ray_tracing_position_fetch : require\n\
         layout(location = 0) rayPayloadInEXT vec3 color;\n\
         void main() {\n    color = gl_HitTriangleVertexPositionsEXT[0];\n}\n",
    )
    .unwrap();
    let args = ["compile", "hit.rchit", "--target", "vk-spirv", "--check"];
    let run = xr(&dir, &args);
    assert!(run.ok, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("compiled by glslang 2026.12 (Slang's)"), "{}", run.stderr);
    let missing = dir.join("no-slang-here");
    let without = Xr::new(args).dir(&dir).software_device().env("XR_SLANG_LIBRARY", &missing).run();
    assert!(!without.ok, "{}", without.stdout);
    assert!(
        without.stderr.contains("extension not supported: GL_EXT_ray_tracing_position_fetch")
            && without.stderr.contains("hit.rchit:3"),
        "{}",
        without.stderr
    );
}

/// Every SPIR-V build system's compiler identity names the glslang and
/// SPIRV-Tools of 2026 where the Slang distribution's module is present,
/// and says there is none where it is not: so objects of the two setups
/// never meet in one store (or stage cache, or farm), where one would be
/// served for the other.
#[test]
fn the_compiler_identity_names_the_2026_tools_present_and_objects_of_the_two_setups_never_meet() {
    let dir = temp_dir("identity-newer-toolchain");
    std::fs::write(dir.join("a.vert"), "#version 450\nvoid main() { gl_Position = vec4(0.0, 0.0, 0.0, 1.0); }\n")
        .unwrap();
    std::fs::write(
        dir.join("a.frag"),
        "#version 450\nlayout(location = 0) out vec4 o;\nvoid main() { o = vec4(1.0, 0.5, 0.25, 1.0); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("xr.toml"),
        "store = \"store\"\n[[program]]\nname = \"flat\"\ntargets = [\"vk-spirv\", \"gl-spirv\"]\n\
         stages = [{ stage = \"vertex\", file = \"a.vert\" }, { stage = \"fragment\", file = \"a.frag\" }]\n",
    )
    .unwrap();
    // A directory without the module: Debian's tools alone.
    let without = dir.join("no-slang-distribution");
    std::fs::create_dir(&without).unwrap();
    let run = |args: &[&str], newer: bool| {
        let xr = Xr::new(args).dir(&dir).software_device();
        let xr = if newer { xr } else { xr.env("XR_SLANG_LIBRARY", &without) };
        xr.ok()
    };
    let identities = |newer: bool| {
        let report: serde_json::Value = serde_json::from_str(&run(&["plugins", "--json"], newer).stdout).unwrap();
        let mut found = std::collections::BTreeMap::new();
        for plugin in report["plugins"].as_array().unwrap() {
            for system in plugin["build_systems"].as_array().unwrap() {
                let name = system["name"].as_str().unwrap().to_owned();
                found.insert(name, system["compiler_identity"].as_str().unwrap_or_default().to_owned());
            }
        }
        found
    };
    let (with_module, debian_only) = (identities(true), identities(false));
    for compiler in ["xr-compiler-vk-spirv", "xr-compiler-gl-spirv", "xr-compiler-glsl"] {
        let (a, b) = (&with_module[compiler], &debian_only[compiler]);
        assert!(a.contains("glslang and SPIRV-Tools 2026.12 (Slang's)"), "{compiler} beside the module: {a}");
        assert!(b.contains("no glslang or SPIRV-Tools newer than Debian's"), "{compiler} without it: {b}");
        assert_eq!(
            a.replace("glslang and SPIRV-Tools 2026.12 (Slang's)", ""),
            b.replace("no glslang or SPIRV-Tools newer than Debian's", ""),
            "only the tools differ"
        );
    }

    // One store, the setups in turn: neither reuses the other's objects.
    let build = |newer: bool| {
        let stderr = run(&["build", "-m", "xr.toml"], newer).stderr;
        let line = stderr.lines().find(|l| l.starts_with("xr build:")).unwrap_or_else(|| panic!("{stderr}")).to_owned();
        (xr_tests::summary_count(&line, "built"), xr_tests::summary_count(&line, "reused"))
    };
    assert_eq!(build(true), (2, 0), "beside the module, cold");
    assert_eq!(build(false), (2, 0), "Debian's tools alone build their own");
    assert_eq!(build(true), (0, 2), "and the first setup's objects are still its own");
    assert_eq!(build(false), (0, 2));
}
