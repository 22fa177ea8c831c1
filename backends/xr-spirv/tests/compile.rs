//! The SPIR-V core against real shaderc, spirv-val and SPIR-V reflection.

use xr_sourcebuild::{Severity, ShaderStage, SourceDesc};
use xr_spirv::{Optimization, SpirvCompiler, SpirvOptions, SpirvVersion, TargetEnv, reflect, validate};

fn glsl(stage: ShaderStage, name: &str, source: &str) -> SourceDesc {
    SourceDesc::new("glsl", stage, name, source)
}

fn hlsl_source(profile: &str, name: &str, entry: &str, source: &str) -> SourceDesc {
    let stage = match &profile[..2] {
        "vs" => ShaderStage::Vertex,
        "ps" => ShaderStage::Fragment,
        other => panic!("profile {other}"),
    };
    let mut desc = SourceDesc::new("glsl", stage, name, source);
    desc.language = "hlsl".into();
    desc.entry_point = entry.into();
    desc
}

const VERTEX: &str = "#version 450
layout(location = 0) in vec2 in_position;
layout(location = 0) out vec2 v_uv;
void main() { v_uv = in_position * 0.5 + 0.5; gl_Position = vec4(in_position, 0.0, 1.0); }
";

/// A D3D9-era vertex shader: a view-projection matrix, `mul`, a blue diffuse colour.
const D3D9_STYLE_VS: &str = "
float4x4 ViewProjMatrix;
float4 Blue = {0.0f, 0.0f, 1.0f, 1.0f};
struct VS_INPUT { float4 position : POSITION; };
struct VS_OUTPUT { float4 position : SV_Position; float4 diffuse : COLOR; };
VS_OUTPUT Main(VS_INPUT input) {
    VS_OUTPUT output = (VS_OUTPUT)0;
    output.position = mul(input.position, ViewProjMatrix);
    output.diffuse = Blue;
    return output;
}
";

#[test]
fn glsl_compiles_for_every_target_and_spirv_version() {
    let compiler = SpirvCompiler::new().unwrap();
    for (target, version) in [
        (TargetEnv::OpenGl45, 0x0001_0000),
        (TargetEnv::Vulkan10, 0x0001_0000),
        (TargetEnv::Vulkan11, 0x0001_0300),
        (TargetEnv::Vulkan12, 0x0001_0500),
        (TargetEnv::Vulkan13, 0x0001_0600),
    ] {
        let module =
            compiler.compile(&glsl(ShaderStage::Vertex, "a.vert", VERTEX), &SpirvOptions::new(target)).unwrap();
        assert_eq!(module.words[0], 0x0723_0203);
        assert_eq!(module.words[1], version, "{target:?}");
        validate(&module.words, target).unwrap();
    }
    let mut options = SpirvOptions::new(TargetEnv::Vulkan12);
    options.spirv_version = Some(SpirvVersion::V1_3);
    for optimization in [Optimization::Size, Optimization::Performance] {
        options.optimization = optimization;
        let module = compiler.compile(&glsl(ShaderStage::Vertex, "a.vert", VERTEX), &options).unwrap();
        assert_eq!(module.words[1], 0x0001_0300);
    }
}

#[test]
fn defines_change_the_module() {
    let compiler = SpirvCompiler::new().unwrap();
    let source = "#version 450\nlayout(location = 0) out vec4 c;\nvoid main() { c = vec4(VALUE); }\n";
    let options = SpirvOptions::new(TargetEnv::Vulkan10);
    let one =
        compiler.compile(&glsl(ShaderStage::Fragment, "d.frag", source).with_define("VALUE", "1.0"), &options).unwrap();
    let two =
        compiler.compile(&glsl(ShaderStage::Fragment, "d.frag", source).with_define("VALUE", "0.5"), &options).unwrap();
    assert_ne!(one.words, two.words);
    let error = compiler.compile(&glsl(ShaderStage::Fragment, "d.frag", source), &options).unwrap_err();
    assert!(error.to_string().contains("d.frag:3"), "an undefined macro is an error at its line: {error}");
}

#[test]
fn d3d9_style_hlsl_with_profiles_semantics_and_any_entry_point() {
    let compiler = SpirvCompiler::new().unwrap();
    let pixel = "float4 PixelMain(float4 diffuse : COLOR) : SV_Target { return diffuse; }";
    for target in [TargetEnv::OpenGl45, TargetEnv::Vulkan11] {
        let vs = compiler
            .compile(&hlsl_source("vs_5_0", "d3d9.hlsl", "Main", D3D9_STYLE_VS), &SpirvOptions::new(target))
            .unwrap();
        assert_eq!(vs.stage, ShaderStage::Vertex);
        assert_eq!(vs.entry_point, "Main");
        let ps = compiler
            .compile(&hlsl_source("ps_5_0", "d3d9_ps.hlsl", "PixelMain", pixel), &SpirvOptions::new(target))
            .unwrap();
        assert_eq!(ps.stage, ShaderStage::Fragment);
    }
    let vs = compiler
        .compile(&hlsl_source("vs_5_0", "d3d9.hlsl", "Main", D3D9_STYLE_VS), &SpirvOptions::new(TargetEnv::Vulkan11))
        .unwrap();
    let reflection = reflect(&vs.words, "Main").unwrap();
    let globals = &reflection.uniform_blocks[0];
    let members: Vec<(&str, usize)> = globals.members.iter().map(|m| (m.name.as_str(), m.offset)).collect();
    assert_eq!(members, [("ViewProjMatrix", 0), ("Blue", 64)]);
    assert_eq!(reflection.outputs.len(), 1, "the diffuse colour; SV_Position is a built-in");
}

#[test]
fn hlsl_with_a_missing_entry_point_is_a_clear_error() {
    let compiler = SpirvCompiler::new().unwrap();
    let error = compiler
        .compile(
            &hlsl_source("vs_5_0", "d3d9.hlsl", "VertexMain", D3D9_STYLE_VS),
            &SpirvOptions::new(TargetEnv::Vulkan10),
        )
        .unwrap_err();
    let message = error.to_string();
    assert!(message.contains("entry point 'VertexMain' not found in d3d9.hlsl"), "{message}");
    assert!(!message.contains('\n'));
}

#[test]
fn errors_in_includes_name_the_included_file_and_line() {
    let dir = std::env::temp_dir().join(format!("xr-spirv-includes-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::write(dir.join("lib/shading.glsl"), "// shading\nvec4 shade() {\n    return undefined_colour;\n}\n")
        .unwrap();
    let main = dir.join("lit.frag");
    let source = "#version 450\n#extension GL_GOOGLE_include_directive : require\n#include \"shading.glsl\"\nlayout(location = 0) out vec4 c;\nvoid main() { c = shade(); }\n";
    let desc =
        glsl(ShaderStage::Fragment, main.to_str().unwrap(), source).with_include_dir(dir.join("lib").to_str().unwrap());
    let compiler = SpirvCompiler::new().unwrap();
    let error = compiler.compile(&desc, &SpirvOptions::new(TargetEnv::Vulkan10)).unwrap_err();
    let first = error.diagnostics.iter().find(|d| d.severity == Severity::Error).unwrap();
    assert!(first.file.ends_with("lib/shading.glsl"), "{first}");
    assert_eq!(first.line, 3, "{first}");
    assert!(error.to_string().contains("shading.glsl:3: error:"), "{error}");

    let missing = glsl(
        ShaderStage::Fragment,
        main.to_str().unwrap(),
        "#version 450\n#extension GL_GOOGLE_include_directive : require\n\n#include \"absent.glsl\"\nvoid main() {}\n",
    );
    let error = compiler.compile(&missing, &SpirvOptions::new(TargetEnv::Vulkan10)).unwrap_err();
    let message = error.to_string();
    assert!(message.contains("lit.frag:4"), "names the including line: {message}");
    assert!(message.contains("absent.glsl"), "{message}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn invalid_spirv_is_rejected_with_the_validator_message() {
    let compiler = SpirvCompiler::new().unwrap();
    let module = compiler
        .compile(&glsl(ShaderStage::Vertex, "a.vert", VERTEX), &SpirvOptions::new(TargetEnv::Vulkan10))
        .unwrap();
    let error = validate(&module.words[..module.words.len() - 3], TargetEnv::Vulkan10).unwrap_err();
    assert!(error.message.starts_with("invalid SPIR-V for vulkan1.0:"), "{error}");
    assert!(error.message.len() > "invalid SPIR-V for vulkan1.0:".len() + 10, "carries the validator's words: {error}");
    let error = validate(&[1, 2, 3], TargetEnv::OpenGl45).unwrap_err();
    assert!(error.message.contains("no SPIR-V magic number"), "{error}");
}

/// The validator judges a module by the rules of the environment it is
/// asked about, so XR's target names must reach SPIRV-Tools as the same
/// environments: a module valid for one is refused by another.
#[test]
fn the_validator_applies_the_rules_of_the_target_environment() {
    let compiler = SpirvCompiler::new().unwrap();
    // Loose uniforms are OpenGL's: Vulkan refuses them.
    let loose = "#version 450\nuniform float gain;\nlayout(location = 0) out vec4 color;\nvoid main() { color = vec4(gain); }\n";
    let module = compiler
        .compile(&glsl(ShaderStage::Fragment, "a.frag", loose), &SpirvOptions::new(TargetEnv::OpenGl45))
        .unwrap();
    validate(&module.words, TargetEnv::OpenGl45).unwrap();
    let error = validate(&module.words, TargetEnv::Vulkan10).unwrap_err();
    assert!(error.message.starts_with("invalid SPIR-V for vulkan1.0:"), "{error}");
    // The message shows the instruction at fault with its names.
    assert!(error.message.contains("OpExecutionMode %main "), "names the entry point: {error}");
    // SPIR-V 1.6 is Vulkan 1.3's, too new for Vulkan 1.0.
    let module = compiler
        .compile(&glsl(ShaderStage::Vertex, "a.vert", VERTEX), &SpirvOptions::new(TargetEnv::Vulkan13))
        .unwrap();
    validate(&module.words, TargetEnv::Vulkan13).unwrap();
    let error = validate(&module.words, TargetEnv::Vulkan10).unwrap_err();
    assert!(error.message.contains("1.6"), "names the version: {error}");
}

#[test]
fn reflection_lists_used_resources_with_layout() {
    let source = "#version 450
layout(constant_id = 3) const float GAIN = 2.5;
layout(constant_id = 4) const int TAPS = 7;
layout(constant_id = 5) const bool FANCY = true;
layout(set = 0, binding = 1) uniform Material { vec4 tint; float roughness; mat4 model; } material;
layout(set = 0, binding = 2) uniform Unused { vec4 never; } unused;
layout(set = 1, binding = 0) uniform sampler2D albedo;
layout(set = 1, binding = 1) buffer Lights { vec4 positions[]; } lights;
layout(push_constant) uniform Push { vec2 offset; float time; } push;
layout(location = 0) in vec2 v_uv;
layout(location = 2) in vec3 v_normal;
layout(location = 0) out vec4 c;
void main() {
    vec4 l = lights.positions[TAPS];
    c = texture(albedo, v_uv + push.offset) * material.tint * GAIN * material.roughness + l * push.time
        + vec4(v_normal, 1.0) + material.model[0];
    if (FANCY) { c *= 0.5; }
}
";
    let compiler = SpirvCompiler::new().unwrap();
    let module = compiler
        .compile(&glsl(ShaderStage::Fragment, "r.frag", source), &SpirvOptions::new(TargetEnv::Vulkan10))
        .unwrap();
    let r = reflect(&module.words, "main").unwrap();
    assert_eq!(r.uniform_blocks.len(), 1, "the unused block does not appear: {:?}", r.uniform_blocks);
    let material = &r.uniform_blocks[0];
    assert_eq!((material.set, material.binding), (0, 1));
    let offsets: Vec<(&str, usize)> = material.members.iter().map(|m| (m.name.as_str(), m.offset)).collect();
    assert_eq!(offsets, [("tint", 0), ("roughness", 16), ("model", 32)]);
    assert_eq!(material.size, Some(96));
    assert_eq!(r.images.len(), 1);
    assert_eq!(
        (r.images[0].name.as_str(), r.images[0].set, r.images[0].binding, r.images[0].kind),
        ("albedo", 1, 0, "combined image sampler")
    );
    assert_eq!(r.storage_buffers.len(), 1);
    assert_eq!((r.storage_buffers[0].set, r.storage_buffers[0].binding), (1, 1));
    let push: Vec<(&str, usize)> = r.push_constants[0].members.iter().map(|m| (m.name.as_str(), m.offset)).collect();
    assert_eq!(push, [("offset", 0), ("time", 8)]);
    let specs: Vec<(u32, &str, &str)> =
        r.spec_constants.iter().map(|c| (c.id, c.name.as_str(), c.default.as_str())).collect();
    assert_eq!(specs, [(3, "GAIN", "2.5"), (4, "TAPS", "7"), (5, "FANCY", "true")]);
    let inputs: Vec<(&str, u32)> = r.inputs.iter().map(|v| (v.name.as_str(), v.location)).collect();
    assert_eq!(inputs, [("v_uv", 0), ("v_normal", 2)]);
    assert_eq!(r.outputs[0].name, "c");
}

#[test]
fn includes_work_without_the_extension_line_and_lines_stay_the_users() {
    let compiler = SpirvCompiler::new().unwrap();
    let source = "#version 450\n#include \"lib.glsl\"\nlayout(location = 0) out vec4 c;\n\nvoid main() { c = tint() * not_declared; }\n";
    let desc = glsl(ShaderStage::Fragment, "plain.frag", source)
        .with_virtual_file("lib.glsl", "vec4 tint() { return vec4(1.0); }\n");
    let error = compiler.compile(&desc, &SpirvOptions::new(TargetEnv::OpenGl45)).unwrap_err();
    let first = error.diagnostics.iter().find(|d| d.severity == Severity::Error).unwrap();
    assert_eq!((first.file.as_str(), first.line), ("plain.frag", 5), "{first}");
    let fixed = glsl(ShaderStage::Fragment, "plain.frag", &source.replace(" * not_declared", ""))
        .with_virtual_file("lib.glsl", "vec4 tint() { return vec4(1.0); }\n");
    compiler.compile(&fixed, &SpirvOptions::new(TargetEnv::OpenGl45)).unwrap();
}

/// A stage is compiled once per process for the defines it reads: each
/// compile below follows others of the same source, so a cache that keyed
/// on too few defines would hand back an earlier module, and a module that
/// must differ would come out the same.
#[test]
fn a_stage_compiled_again_reads_every_define_that_reaches_its_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let include = dir.path().join("tint.glsl");
    std::fs::write(&include, "vec4 tint() { return vec4(TINT_VALUE); }\n").unwrap();
    let compiler = SpirvCompiler::new().unwrap();
    let options = SpirvOptions::new(TargetEnv::Vulkan10);
    let compile = |name: &str, body: &str, defines: &[(&str, &str)]| {
        let source = format!("#version 450\n#include \"tint.glsl\"\nlayout(location = 0) out vec4 color;\n{body}\n");
        let file = dir.path().join(name);
        std::fs::write(&file, &source).unwrap();
        let mut desc = SourceDesc::new("glsl", ShaderStage::Fragment, file.to_string_lossy(), source);
        for (name, value) in defines {
            desc.defines.push(xr_sourcebuild::Define::new(*name, *value));
        }
        compiler.compile_unvalidated(&desc, &options).unwrap().words
    };
    // Read only through the include.
    let body = "void main() { color = tint(); }";
    let base = compile("a.frag", body, &[("TINT_VALUE", "0.5"), ("UNUSED", "1")]);
    assert_eq!(compile("a.frag", body, &[("TINT_VALUE", "0.5"), ("UNUSED", "7")]), base, "UNUSED is named nowhere");
    assert_ne!(compile("a.frag", body, &[("TINT_VALUE", "0.75"), ("UNUSED", "1")]), base);
    // Read only through another define's value.
    let body = "void main() { color = tint() * float(SCALE); }";
    let through = compile("b.frag", body, &[("TINT_VALUE", "0.5"), ("SCALE", "FACTOR"), ("FACTOR", "3")]);
    assert_ne!(compile("b.frag", body, &[("TINT_VALUE", "0.5"), ("SCALE", "FACTOR"), ("FACTOR", "4")]), through);
    // Named only by token pasting.
    let body = "#define PASTE(a, b) a##b\nvoid main() { color = tint() * float(PASTE(LEV, EL)); }";
    let pasted = compile("c.frag", body, &[("TINT_VALUE", "0.5"), ("LEVEL", "1")]);
    assert_ne!(compile("c.frag", body, &[("TINT_VALUE", "0.5"), ("LEVEL", "2")]), pasted);
    // Named only across a line continuation.
    let body = "void main() { color = tint() * float(LEV\\\nEL); }";
    let continued = compile("d.frag", body, &[("TINT_VALUE", "0.5"), ("LEVEL", "1")]);
    assert_ne!(compile("d.frag", body, &[("TINT_VALUE", "0.5"), ("LEVEL", "2")]), continued);
    // An edited include is read again.
    std::fs::write(&include, "vec4 tint() { return vec4(TINT_VALUE) * 0.5; }\n").unwrap();
    let body = "void main() { color = tint(); }";
    assert_ne!(compile("a.frag", body, &[("TINT_VALUE", "0.5"), ("UNUSED", "1")]), base);
    // A bad define name is refused even where a compiled module is kept and
    // the text never names it.
    let file = dir.path().join("a.frag");
    let mut desc =
        SourceDesc::new("glsl", ShaderStage::Fragment, file.to_string_lossy(), std::fs::read_to_string(&file).unwrap());
    desc.defines.push(xr_sourcebuild::Define::new("TINT_VALUE", "0.5"));
    desc.defines.push(xr_sourcebuild::Define::new("NOT-A-NAME", "1"));
    let error = compiler.compile_unvalidated(&desc, &options).unwrap_err();
    assert!(error.to_string().contains("invalid define 'NOT-A-NAME=1'"), "{error}");
}

/// Optimised SPIR-V stays usable: constants and resources keep their names
/// (the constant table finds everything by name), and what the shader never
/// reads is absent from reflection at every level, on both environments.
#[test]
fn every_optimisation_level_keeps_names_and_drops_what_is_never_read() {
    let gl = "#version 450
uniform vec4 used_color;
uniform float unused_gain;
layout(std140, binding = 1) uniform Params { vec4 tint; } params;
layout(std140, binding = 2) uniform Unused { vec4 nothing; } unused_block;
layout(location = 0) out vec4 color;
void main() { color = used_color * params.tint; }
";
    let vk = "#version 450
layout(push_constant) uniform Push { vec4 used_color; } push;
layout(std140, binding = 1) uniform Params { vec4 tint; } params;
layout(std140, binding = 2) uniform Unused { vec4 nothing; } unused_block;
layout(location = 0) out vec4 color;
void main() { color = push.used_color * params.tint; }
";
    let compiler = SpirvCompiler::new().unwrap();
    for level in [Optimization::None, Optimization::Size, Optimization::Performance] {
        for (target, source) in [(TargetEnv::OpenGl45, gl), (TargetEnv::Vulkan10, vk)] {
            let options = SpirvOptions { optimization: level, ..SpirvOptions::new(target) };
            let module = compiler.compile(&glsl(ShaderStage::Fragment, "o.frag", source), &options).unwrap();
            let r = reflect(&module.words, "main").unwrap();
            let what = format!("{target:?} at {level:?}");
            let blocks: Vec<&str> = r.uniform_blocks.iter().map(|b| b.name.as_str()).collect();
            assert_eq!(blocks, ["Params"], "{what}: {r:?}");
            assert_eq!(r.uniform_blocks[0].members[0].name, "tint", "{what}");
            let loose: Vec<&str> = r.uniforms.iter().map(|u| u.name.as_str()).collect();
            let pushed: Vec<&str> =
                r.push_constants.iter().flat_map(|b| b.members.iter().map(|m| m.name.as_str())).collect();
            if target == TargetEnv::OpenGl45 {
                assert_eq!(loose, ["used_color"], "{what}: unused_gain is never read");
            } else {
                assert_eq!(pushed, ["used_color"], "{what}");
            }
            assert_eq!(r.outputs[0].name, "color", "{what}");
        }
    }
}

#[test]
fn stripping_keeps_names_drops_source_text_and_leaves_non_semantic_modules_whole() {
    use xr_spirv::compile::strip_source_debug_info;
    use xr_spirv::container::spirv::Op;
    use xr_spirv::container::walk::{MAGIC, instruction as op, string_operand};
    let header = [MAGIC, 0x0001_0000, 0, 10, 0];
    let name = op(Op::Name, &[[4].as_slice(), &string_operand("gain")].concat());
    let string = op(Op::String, &[[1].as_slice(), &string_operand("a.frag")].concat());
    let source = op(Op::Source, &[2, 450, 1]);
    let module = [header.as_slice(), &string, &source, &name].concat();
    // OpString gone, OpSource without its file, OpName kept.
    assert_eq!(strip_source_debug_info(&module), [header.as_slice(), &op(Op::Source, &[2, 450]), &name].concat());
    let import = op(Op::ExtInstImport, &[[3].as_slice(), &string_operand("NonSemantic.DebugPrintf")].concat());
    let printing = [header.as_slice(), &import, &string, &source, &name].concat();
    assert_eq!(strip_source_debug_info(&printing), printing, "debugPrintf's strings stay");
    assert_eq!(strip_source_debug_info(&[1, 2, 3]), [1, 2, 3], "not SPIR-V: left alone");
}

/// A SPIR-V plugin asked for a target that is not its own refuses by name,
/// before compiling anything.
#[test]
fn an_offline_compile_for_another_target_is_refused_naming_the_plugin() {
    use xr_sourcebuild::{OfflineRequest, ProgramDesc};
    use xr_spirv::offline::{Reflect, compile_for_target};
    let program = ProgramDesc::new("p", [glsl(ShaderStage::Vertex, "a.vert", VERTEX)]);
    let plugin = ("xr-compiler-vk-spirv", "vk-spirv");
    let error =
        compile_for_target(&OfflineRequest::new(program.clone(), "gl-spirv"), plugin, TargetEnv::Vulkan10, Reflect::No)
            .unwrap_err();
    assert!(error.to_string().contains("xr-compiler-vk-spirv compiles into vk-spirv, not gl-spirv"), "{error}");
    compile_for_target(&OfflineRequest::new(program, "vk-spirv"), plugin, TargetEnv::Vulkan10, Reflect::No)
        .expect("its own target compiles");
}

/// Mesh and ray tracing stages are compiled for SPIR-V 1.4 at least: a
/// Vulkan 1.0 or 1.1 target is raised to Vulkan 1.2's rules with SPIR-V
/// 1.4, a newer one keeps its own version, an older SPIR-V asked for and
/// an OpenGL target are refused naming the stage, and classic stages keep
/// what was asked.
#[test]
fn mesh_and_ray_tracing_stages_raise_the_environment_to_spirv_1_4() {
    let mesh = [ShaderStage::Task, ShaderStage::Mesh, ShaderStage::Fragment];
    let raised = SpirvOptions::new(TargetEnv::Vulkan10).for_stages(&mesh).unwrap();
    assert_eq!((raised.target, raised.spirv_version), (TargetEnv::Vulkan12, Some(SpirvVersion::V1_4)));
    let raised = SpirvOptions::new(TargetEnv::Vulkan11).for_stages(&[ShaderStage::RayGeneration]).unwrap();
    assert_eq!((raised.target, raised.spirv_version), (TargetEnv::Vulkan12, Some(SpirvVersion::V1_4)));
    let kept = SpirvOptions::new(TargetEnv::Vulkan13).for_stages(&mesh).unwrap();
    assert_eq!((kept.target, kept.spirv_version), (TargetEnv::Vulkan13, None));
    let classic = SpirvOptions::new(TargetEnv::Vulkan10).for_stages(&[ShaderStage::Vertex]).unwrap();
    assert_eq!((classic.target, classic.spirv_version), (TargetEnv::Vulkan10, None));
    let old = SpirvOptions { spirv_version: Some(SpirvVersion::V1_3), ..SpirvOptions::new(TargetEnv::Vulkan11) };
    let error = old.for_stages(&mesh).unwrap_err();
    assert!(error.message.contains("a task stage needs SPIR-V 1.4 or later; spirv-version 1.3"), "{error}");
    let error = SpirvOptions::new(TargetEnv::OpenGl45).for_stages(&mesh).unwrap_err();
    assert!(error.message.contains("OpenGL has no task stage"), "{error}");
    // What the raised options compile validates under them.
    let source = "#version 460\n#extension GL_EXT_mesh_shader : require\nlayout(local_size_x = 1) in;\n\
                  layout(triangles, max_vertices = 3, max_primitives = 1) out;\nvoid main() { SetMeshOutputsEXT(0, 0); }\n";
    let options = SpirvOptions::new(TargetEnv::Vulkan10).for_stages(&[ShaderStage::Mesh]).unwrap();
    SpirvCompiler::new().unwrap().compile(&glsl(ShaderStage::Mesh, "a.mesh", source), &options).unwrap();
}

/// A ray tracing stage's payloads, hit attributes and callable data, read
/// from what glslang writes: their names, their types by structure and the
/// scalars they are made of (which is what two stages must agree on).
#[test]
fn a_ray_tracing_stage_s_interface_is_read_by_structure_and_by_scalars() {
    let source = "#version 460\n#extension GL_EXT_ray_tracing : require\n\
                  struct Hit { vec3 color; float distance; };\n\
                  layout(location = 0) rayPayloadInEXT Hit hit;\n\
                  layout(location = 1) rayPayloadEXT bool shadowed;\n\
                  layout(location = 2) callableDataEXT vec3 tint;\n\
                  hitAttributeEXT vec2 barycentrics;\n\
                  void main() { hit.color = vec3(barycentrics, 0.0); hit.distance = gl_HitTEXT; }\n";
    let options = SpirvOptions::new(TargetEnv::Vulkan12).for_stages(&[ShaderStage::ClosestHit]).unwrap();
    let module = SpirvCompiler::new().unwrap().compile(&glsl(ShaderStage::ClosestHit, "a.rchit", source), &options);
    let words = module.unwrap_or_else(|e| panic!("{e}")).words;
    let mut interface = reflect::ray_interface(&words).unwrap();
    interface.sort_by(|a, b| a.name.cmp(&b.name));
    let seen: Vec<(reflect::RayStorage, &str, &str, usize)> =
        interface.iter().map(|v| (v.storage, v.name.as_str(), v.ty.as_str(), v.scalars.len())).collect();
    assert_eq!(
        seen,
        [
            (reflect::RayStorage::HitAttribute, "barycentrics", "vec2<f32>", 2),
            (reflect::RayStorage::IncomingPayload, "hit", "{vec3<f32>, f32}", 4),
            (reflect::RayStorage::Payload, "shadowed", "bool", 1),
            (reflect::RayStorage::CallableData, "tint", "vec3<f32>", 3),
        ]
    );
    assert_eq!(interface[1].scalars, ["f32"; 4]);
    assert!(!reflect::traces_rays(&words).unwrap(), "this stage traces no ray");
}

/// Hit groups that break their rule are refused before any stage compiles,
/// naming the file, whoever sends the program (a build script's request
/// has not been through the manifest's check); the stored modules keep the
/// groups that were named.
#[test]
fn a_program_whose_hit_groups_break_the_rule_is_refused_and_named_ones_are_kept() {
    const HIT: &str = "#version 460\n#extension GL_EXT_ray_tracing : require\n\
        layout(location = 0) rayPayloadInEXT vec3 color;\nvoid main() { color = vec3(1.0); }\n";
    const GENERATE: &str = "#version 460\n#extension GL_EXT_ray_tracing : require\n\
        layout(location = 0) rayPayloadEXT vec3 color;\nvoid main() {}\n";
    let options = SpirvOptions::new(TargetEnv::Vulkan10)
        .for_stages(&[ShaderStage::RayGeneration, ShaderStage::ClosestHit])
        .unwrap();
    let compiler = SpirvCompiler::new().unwrap();
    let program = |groups: [Option<u32>; 2]| {
        let mut stages = vec![glsl(ShaderStage::RayGeneration, "a.rgen", GENERATE)];
        for (name, group) in ["a.rchit", "b.rchit"].into_iter().zip(groups) {
            let mut hit = glsl(ShaderStage::ClosestHit, name, HIT);
            hit.hit_group = group.into();
            stages.push(hit);
        }
        xr_sourcebuild::ProgramDesc::new("p", stages)
    };
    let refused = match compiler.compile_program(&program([Some(0), None]), &options) {
        Ok(_) => panic!("a hit stage without a group among named ones compiled"),
        Err(error) => error,
    };
    assert!(
        refused.to_string().contains("program 'p': b.rchit: the closest-hit stage names no hit group"),
        "{refused}"
    );
    let built = compiler.compile_program(&program([Some(1), Some(0)]), &options).unwrap_or_else(|e| panic!("{e}"));
    let groups: Vec<Option<u32>> = built.modules.iter().map(|m| m.hit_group).collect();
    assert_eq!(groups, [None, Some(1), Some(0)]);
}

/// A closest-hit stage reading its triangle's vertex positions
/// (`GL_EXT_ray_tracing_position_fetch`, which Debian 12's glslang does not
/// know), with a helper from an include.
const POSITION_FETCH_HIT: &str = "#version 460
#extension GL_EXT_ray_tracing : require
#extension GL_EXT_ray_tracing_position_fetch : require
#include \"face.glsl\"
layout(location = 0) rayPayloadInEXT vec3 color;
void main() {
    color = face_normal(gl_HitTriangleVertexPositionsEXT[0], gl_HitTriangleVertexPositionsEXT[1],
                        gl_HitTriangleVertexPositionsEXT[2]);
}
";

fn position_fetch_dir(label: &str, face: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("xr-spirv-{label}-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::write(dir.join("lib/face.glsl"), face).unwrap();
    dir
}

fn declares_capability(words: &[u32], capability: u32) -> bool {
    // OpCapability: word count 2, opcode 17.
    words.windows(2).any(|w| w[0] == (2 << 16) | 17 && w[1] == capability)
}

/// Debian's glslang refuses the extension; the glslang of 2026 that ships
/// with Slang compiles the stage, includes resolved by XR, and the module
/// is accepted by the validator of 2026 where Debian's refuses it.
#[test]
fn a_stage_debian_s_glslang_refuses_is_compiled_by_glslang_2026_with_its_includes() {
    let dir = position_fetch_dir(
        "position-fetch",
        "vec3 face_normal(vec3 a, vec3 b, vec3 c) {\n    return normalize(cross(b - a, c - a));\n}\n",
    );
    let main = dir.join("hit.rchit");
    let desc = glsl(ShaderStage::ClosestHit, main.to_str().unwrap(), POSITION_FETCH_HIT)
        .with_include_dir(dir.join("lib").to_str().unwrap());
    let options = SpirvOptions::new(TargetEnv::Vulkan12).for_stages(&[ShaderStage::ClosestHit]).unwrap();
    let compiler = SpirvCompiler::new().unwrap();
    let module = compiler.compile_unvalidated(&desc, &options).unwrap_or_else(|e| panic!("{e}"));
    // RayTracingPositionFetchKHR.
    assert!(declares_capability(&module.words, 5336), "the capability of position fetch");
    let note = module.warnings.iter().find(|d| d.severity == Severity::Info).expect("a note says which glslang");
    assert!(
        note.message.contains("glslang 2026.12") && note.message.contains("GL_EXT_ray_tracing_position_fetch"),
        "{note}"
    );
    assert!(module.includes.iter().any(|i| i.path.ends_with("face.glsl")), "{:?}", module.includes);
    // Every key names the tools present, so these objects never meet
    // those of a process without them.
    assert!(xr_spirv::compiler_identity().contains("glslang and SPIRV-Tools 2026.12 (Slang's)"));
    validate(&module.words, options.target).unwrap_or_else(|e| panic!("{e}"));
    // Debian's own validator, run as a tool, refuses what the newer one accepts.
    let spv = dir.join("hit.spv");
    std::fs::write(&spv, module.to_bytes()).unwrap();
    let old = std::process::Command::new("spirv-val").arg("--target-env").arg("vulkan1.2").arg(&spv).output().unwrap();
    assert!(!old.status.success(), "Debian's spirv-val refuses capability 5336");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An error in a stage only the glslang of 2026 can read is that glslang's,
/// at the included file's line, not Debian's "extension not supported".
#[test]
fn an_error_in_a_stage_only_glslang_2026_reads_is_its_own_at_the_included_line() {
    let dir = position_fetch_dir(
        "position-fetch-error",
        "// a helper\nvec3 face_normal(vec3 a, vec3 b, vec3 c) {\n    return undefined_axis;\n}\n",
    );
    let main = dir.join("hit.rchit");
    let desc = glsl(ShaderStage::ClosestHit, main.to_str().unwrap(), POSITION_FETCH_HIT)
        .with_include_dir(dir.join("lib").to_str().unwrap());
    let options = SpirvOptions::new(TargetEnv::Vulkan12).for_stages(&[ShaderStage::ClosestHit]).unwrap();
    let error = SpirvCompiler::new().unwrap().compile_unvalidated(&desc, &options).unwrap_err();
    let first = error.diagnostics.iter().find(|d| d.severity == Severity::Error).unwrap();
    assert!(first.file.ends_with("face.glsl") && first.line == 3, "{first}");
    assert!(first.message.contains("undefined_axis"), "{first}");
    assert!(!error.to_string().contains("extension not supported"), "{error}");
    assert!(first.included_from.iter().any(|site| site.file.ends_with("hit.rchit") && site.line == 4), "{first:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A module both validators refuse is refused with the newer one's words,
/// and the rules of the target environment still hold where the module
/// is valid SPIR-V.
#[test]
fn a_module_both_validators_refuse_says_both_and_environment_rules_stand() {
    let compiler = SpirvCompiler::new().unwrap();
    let module = compiler
        .compile(&glsl(ShaderStage::Vertex, "a.vert", VERTEX), &SpirvOptions::new(TargetEnv::Vulkan10))
        .unwrap();
    // Without its OpMemoryModel (opcode 14, 3 words): invalid anywhere.
    let at = module.words.iter().position(|w| *w == (3 << 16) | 14).unwrap();
    let mut broken = module.words.clone();
    broken.drain(at..at + 3);
    let error = validate(&broken, TargetEnv::Vulkan10).unwrap_err();
    assert!(
        error.message.contains("(SPIRV-Tools 2026.12; Debian's older one says:")
            && error.message.to_lowercase().contains("memory model"),
        "{error}"
    );
}
