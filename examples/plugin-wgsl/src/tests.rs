//! End-to-end checks of the compile, called directly (not through the ABI).

use crate::compile::compile;
use crate::spec::{self, SpecScalar};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use xr_device::ErrorKind;
use xr_sourcebuild::{Availability, BuildError, OfflineArtifact, OfflineRequest, ProgramDesc, ShaderStage, SourceBuildSystem, SourceDesc};
use xr_spirv_object::spirv::Op;
use xr_spirv_object::walk::instruction_list;

const UNLIT: &str = include_str!("../shaders/unlit.wgsl");

fn wgsl(stage: ShaderStage, entry_point: &str, file: &str, source: &str) -> SourceDesc {
    let mut desc = SourceDesc::new("glsl", stage, file, source).with_language("wgsl");
    desc.entry_point = entry_point.into();
    desc
}

fn unlit() -> ProgramDesc {
    ProgramDesc::new(
        "unlit",
        [
            wgsl(ShaderStage::Vertex, "vs_main", "shaders/unlit.wgsl", UNLIT),
            wgsl(ShaderStage::Fragment, "fs_main", "shaders/unlit.wgsl", UNLIT),
        ],
    )
}

fn build(program: ProgramDesc, target: &str) -> Result<OfflineArtifact, BuildError> {
    compile(&OfflineRequest::new(program, target))
}

fn build_one(source: &str, stage: ShaderStage, entry_point: &str, target: &str) -> Result<OfflineArtifact, BuildError> {
    build(ProgramDesc::new("test", [wgsl(stage, entry_point, "shade.wgsl", source)]), target)
}

fn words_of(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// Runs `tool` on `words` written to a file; `None` if the tool is not
/// installed, else its success and output.
fn run_tool(tool: &str, args: &[&str], words: &[u32]) -> Option<(bool, String)> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let path: PathBuf = std::env::temp_dir().join(format!(
        "xr-compiler-wgsl-{}-{}.spv",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&path, words.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>()).expect("write module");
    let output = Command::new(tool).args(args).arg(&path).output();
    let _ = std::fs::remove_file(&path);
    match output {
        Ok(o) => Some((
            o.status.success(),
            format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("{tool} is not installed: skipped");
            None
        }
        Err(e) => panic!("{tool}: {e}"),
    }
}

/// spirv-val on both target environments.
fn validate(words: &[u32], what: &str) {
    for env in ["vulkan1.0", "opengl4.5"] {
        if let Some((ok, output)) = run_tool("spirv-val", &["--target-env", env], words) {
            assert!(ok, "{what}: spirv-val --target-env {env} failed:\n{output}");
        }
    }
}

fn disassemble(words: &[u32]) -> Option<String> {
    let (ok, text) = run_tool("spirv-dis", &[], words)?;
    assert!(ok, "spirv-dis failed:\n{text}");
    Some(text)
}

#[test]
fn unlit_compiles_for_both_targets_with_spec_constants() {
    for target in ["vk-spirv", "gl-spirv"] {
        let artifact = build(unlit(), target).unwrap_or_else(|e| panic!("{target}: {e}: {:?}", e.diagnostics));
        assert!(artifact.warnings.is_empty());
        assert_eq!(artifact.files_read.len(), 1, "one file, read by both stages");
        assert_eq!(artifact.files_read[0].path.as_str(), "shaders/unlit.wgsl");

        let modules = xr_spirv_object::decode(&artifact.bytes).expect("the artifact decodes");
        assert_eq!(modules.len(), 2);
        assert_eq!(artifact.stages.len(), 2);
        for (module, output) in modules.iter().zip(artifact.stages.iter()) {
            assert_eq!(module.stage, output.stage);
            assert_eq!(words_of(&output.bytes), module.words);
            assert_eq!(module.words[0], spec::MAGIC);
            assert_eq!(module.words[1], 0x0001_0000, "SPIR-V 1.0");
            assert!(module.specializations.is_empty());
            assert_eq!(module.file, "shaders/unlit.wgsl");
            validate(&module.words, &format!("{target} {}", module.entry_point));
        }
        assert_eq!((modules[0].stage, modules[0].entry_point.as_str()), (ShaderStage::Vertex, "vs_main"));
        assert_eq!((modules[1].stage, modules[1].entry_point.as_str()), (ShaderStage::Fragment, "fs_main"));

        // The fragment stage has exactly GAIN and BIAS as spec constants; the
        // vertex stage, which uses neither, has none.
        assert_eq!(spec::spec_constants(&modules[0].words).expect("vertex"), vec![]);
        assert_eq!(
            spec::spec_constants(&modules[1].words).expect("fragment"),
            vec![(0, SpecScalar::Float, 1.0f32.to_bits()), (1, SpecScalar::Float, 0.0f32.to_bits())]
        );
        let count = |words: &[u32], op: Op| {
            instruction_list(words).expect("well formed").iter().filter(|i| i.op() == Some(op)).count()
        };
        assert_eq!(count(&modules[1].words, Op::SpecConstant), 2);
        // No sentinel survived anywhere.
        for m in &modules {
            for index in 0..2 {
                assert!(!m.words.contains(&spec::sentinel(SpecScalar::Float, index)));
            }
        }

        // Names the loaders look constants up by.
        for m in &modules {
            if let Some(text) = disassemble(&m.words) {
                assert!(text.contains(&format!("OpEntryPoint {}", stage_model(m.stage))), "{text}");
                assert!(text.contains(&format!("\"{}\"", m.entry_point)), "{text}");
                assert!(text.contains("OpMemberName %Constants 0 \"u_rect\""), "{text}");
                assert!(text.contains("OpMemberName %Constants 1 \"u_color\""), "{text}");
                assert!(text.contains("OpName %constants \"constants\""), "{text}");
                assert!(text.contains("OpDecorate %constants DescriptorSet 0"), "{text}");
                assert!(text.contains("OpDecorate %constants Binding 0"), "{text}");
                // The struct itself is the Block (naga's wrapper removed).
                assert!(text.contains("OpDecorate %Constants Block"), "{text}");
                assert!(text.contains("%constants = OpVariable %_ptr_Uniform_Constants Uniform"), "{text}");
                // The fragment input v_uv stays in the interface.
                if m.stage == ShaderStage::Fragment {
                    assert!(text.contains("OpEntryPoint Fragment %fs_main \"fs_main\" %v_uv"), "{text}");
                }
                if m.stage == ShaderStage::Fragment {
                    assert!(text.contains("OpDecorate %GAIN SpecId 0"), "{text}");
                    assert!(text.contains("OpDecorate %BIAS SpecId 1"), "{text}");
                    assert!(text.contains("%GAIN = OpSpecConstant %float 1"), "{text}");
                    assert!(text.contains("%BIAS = OpSpecConstant %float 0"), "{text}");
                }
                // The vertex output and the fragment input at location 0.
                assert!(text.contains("Location 0"), "{text}");
            }
        }

        // Reflection.
        let r = &artifact.reflection;
        let constants: Vec<(String, String, ShaderStage)> =
            r.constants.iter().map(|c| (c.name.to_string(), c.ty.to_string(), c.stage)).collect();
        for stage in [ShaderStage::Vertex, ShaderStage::Fragment] {
            assert!(constants.contains(&("u_rect".into(), "vec4<f32>".into(), stage)), "{constants:?}");
            assert!(constants.contains(&("u_color".into(), "vec4<f32>".into(), stage)), "{constants:?}");
        }
        assert_eq!(r.resources.len(), 2);
        for res in r.resources.iter() {
            assert_eq!(
                (res.name.as_str(), res.kind.as_str(), res.set, res.binding),
                ("constants", "uniform-block", 0, 0)
            );
        }
        let overrides: Vec<(String, u32, String, String)> =
            r.overrides.iter().map(|o| (o.name.to_string(), o.id, o.ty.to_string(), o.default.to_string())).collect();
        assert_eq!(
            overrides,
            vec![("GAIN".into(), 0, "float".into(), "1".into()), ("BIAS".into(), 1, "float".into(), "0".into())]
        );
        let json: serde_json::Value = serde_json::from_str(&r.json).expect("reflection JSON");
        assert_eq!(json["stages"][0]["stage"], "vertex");
        assert_eq!(json["stages"][0]["entry_point"], "vs_main");
        assert_eq!(json["stages"][1]["constants"][1]["name"], "u_color");
        assert_eq!(json["stages"][1]["resources"][0]["kind"], "uniform-block");
        assert_eq!(json["overrides"][0]["name"], "GAIN");
        assert!(r.text.contains("  constant u_color : vec4<f32>"), "{}", r.text);
        assert!(r.text.contains("  override GAIN (id 0) : float = 1"), "{}", r.text);
        assert!(r.text.contains("  override BIAS (id 1) : float = 0"), "{}", r.text);
    }
}

fn stage_model(stage: ShaderStage) -> &'static str {
    match stage {
        ShaderStage::Vertex => "Vertex",
        ShaderStage::Fragment => "Fragment",
        _ => "GLCompute",
    }
}

#[test]
fn syntax_error_is_at_the_users_line() {
    let bad = "struct S {\n    a: f32,\n} oops\n@fragment fn fs_main() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }\n";
    assert_eq!(bad.lines().nth(2), Some("} oops"));
    let error = build_one(bad, ShaderStage::Fragment, "fs_main", "vk-spirv").expect_err("a syntax error");
    assert_eq!(error.error.kind, ErrorKind::Build);
    assert_eq!(error.diagnostics.len(), 1);
    let d = &error.diagnostics[0];
    assert_eq!((d.file.as_str(), d.line), ("shade.wgsl", 3), "{d}");
    assert!(d.column > 0);
    assert!(error.error.message.starts_with("program 'test': shade.wgsl:3:"), "{}", error.error.message);

    // Two stages of the one broken file: the error is reported once.
    let program = ProgramDesc::new(
        "two",
        [
            wgsl(ShaderStage::Vertex, "vs_main", "shade.wgsl", bad),
            wgsl(ShaderStage::Fragment, "fs_main", "shade.wgsl", bad),
        ],
    );
    assert_eq!(build(program, "gl-spirv").expect_err("a syntax error").diagnostics.len(), 1);
}

#[test]
fn validation_error_is_at_the_users_line() {
    let source = "@fragment\nfn fs_main() -> @location(0) vec4<f32> {\n    let x: f32 = 1.0;\n    return vec4<f32>(x) + vec3<f32>(x);\n}\n";
    let error = build_one(source, ShaderStage::Fragment, "fs_main", "vk-spirv").expect_err("a type error");
    let d = &error.diagnostics[0];
    assert_eq!((d.file.as_str(), d.line), ("shade.wgsl", 4), "{d}");
}

#[test]
fn defines_are_refused_by_name() {
    let mut desc = wgsl(ShaderStage::Fragment, "fs_main", "shaders/unlit.wgsl", UNLIT);
    desc = desc.with_define("A", "1").with_define("B", "2");
    let error = build(ProgramDesc::new("p", [desc]), "gl-spirv").expect_err("defines");
    let d = &error.diagnostics[0];
    assert_eq!(d.file.as_str(), "shaders/unlit.wgsl");
    assert!(
        d.message.contains("WGSL has no preprocessor: the defines A=1, B=2 cannot be applied; use overrides"),
        "{d}"
    );
}

#[test]
fn other_languages_targets_stages_and_entry_points_are_refused() {
    let mut glsl = wgsl(ShaderStage::Fragment, "main", "a.frag", "void main() {}");
    glsl.language = "glsl".into();
    let error = build(ProgramDesc::new("p", [glsl]), "vk-spirv").expect_err("glsl");
    assert!(error.diagnostics[0].message.contains("'glsl'"), "{error}");
    assert_eq!(error.diagnostics[0].file.as_str(), "a.frag");

    let error = build(unlit(), "msl").expect_err("unknown target");
    assert_eq!(error.error.kind, ErrorKind::InvalidInput);

    let error = build_one(UNLIT, ShaderStage::Fragment, "main", "vk-spirv").expect_err("no such entry point");
    assert!(error.diagnostics[0].message.contains("fragment 'fs_main'"), "{error}");

    let error = build_one(UNLIT, ShaderStage::Geometry, "vs_main", "vk-spirv").expect_err("geometry");
    assert!(error.diagnostics[0].message.contains("geometry"), "{error}");

    let request = OfflineRequest::new(unlit(), "gl-spirv").with_option("spirv-version", "1.3");
    assert!(compile(&request).is_err());
    let request = OfflineRequest::new(unlit(), "vk-spirv").with_option("spirv-version", "1.3");
    let artifact = compile(&request).expect("SPIR-V 1.3 for Vulkan");
    let modules = xr_spirv_object::decode(&artifact.bytes).expect("decodes");
    assert_eq!(modules[0].words[1], 0x0001_0300);
}

const FRAGMENT_HEAD: &str = "struct C { tint: vec4<f32> }\n@group(0) @binding(0) var<uniform> c: C;\n";

#[test]
fn override_limits_are_errors_at_their_line() {
    let cases = [
        // (source after the head, message part, line)
        (
            "override GAIN: f32 = 1.0;\n@fragment fn fs_main() -> @location(0) vec4<f32> { return c.tint * GAIN; }\n",
            "no @id",
            3,
        ),
        (
            "@id(0) override ON: bool = true;\n@fragment fn fs_main() -> @location(0) vec4<f32> { return select(c.tint, vec4<f32>(0.0), ON); }\n",
            "is a bool",
            3,
        ),
        (
            "@id(0) override GAIN: f32 = 1.0;\n@fragment fn fs_main() -> @location(0) vec4<f32> {\n    let g = GAIN * 2.0;\n    return c.tint * g;\n}\n",
            "override 'GAIN' is used in an expression of overrides",
            5,
        ),
        (
            "@id(0) override A: f32 = 1.0;\n@id(1) override B: f32 = A * 2.0;\n@fragment fn fs_main() -> @location(0) vec4<f32> { return c.tint * B; }\n",
            "override 'B': its default must be a constant value",
            4,
        ),
        (
            "@id(0) override H: f32;\n@fragment fn fs_main() -> @location(0) vec4<f32> { return c.tint * H; }\n",
            "no default",
            3,
        ),
    ];
    for (body, part, line) in cases {
        let source = format!("{FRAGMENT_HEAD}{body}");
        let error =
            build_one(&source, ShaderStage::Fragment, "fs_main", "vk-spirv").expect_err(&format!("refused: {source}"));
        let d = &error.diagnostics[0];
        assert!(d.message.contains(part), "{part}: {d}");
        assert_eq!(d.line, line, "{d}");
    }
}

#[test]
fn int_uint_and_vector_overrides_are_spec_constants() {
    let source = format!(
        "{FRAGMENT_HEAD}@id(4) override LEVEL: i32 = -3;\n@id(5) override MASK: u32 = 7u;\n\
         @id(6) override FADE: f32 = 0.25;\n@id(7) override UNUSED: f32 = 2.0;\n\
         @fragment fn fs_main(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {{\n\
         let i = i32(p.x) + LEVEL;\n let u = u32(p.y) & MASK;\n\
         let v = vec3<f32>(FADE) + c.tint.rgb;\n\
         return vec4<f32>(v * f32(i) * f32(u), 1.0);\n}}\n"
    );
    for target in ["vk-spirv", "gl-spirv"] {
        let artifact = build_one(&source, ShaderStage::Fragment, "fs_main", target)
            .unwrap_or_else(|e| panic!("{e}: {:?}", e.diagnostics));
        let words = words_of(&artifact.stages[0].bytes);
        validate(&words, "int, uint and vector overrides");
        let mut found = spec::spec_constants(&words).expect("spec constants");
        found.sort();
        assert_eq!(
            found,
            vec![
                (4, SpecScalar::Int, (-3i32) as u32),
                (5, SpecScalar::UInt, 7),
                (6, SpecScalar::Float, 0.25f32.to_bits()),
            ]
        );
        // UNUSED is listed (the loaders pass only the ids a module has).
        assert_eq!(artifact.reflection.overrides.len(), 4);
        assert_eq!(artifact.reflection.overrides[0].default.as_str(), "-3");
    }
}

#[test]
fn compute_stage_and_resources() {
    let source = "struct P { scale: f32 }\n\
        var<immediate> push: P;\n\
        @group(0) @binding(0) var<storage, read_write> data: array<f32>;\n\
        @group(0) @binding(1) var tex: texture_2d<f32>;\n\
        @group(0) @binding(2) var samp: sampler;\n\
        @group(0) @binding(3) var img: texture_storage_2d<rgba8unorm, write>;\n\
        @id(2) override K: f32 = 3.0;\n\
        @compute @workgroup_size(8)\n\
        fn main(@builtin(global_invocation_id) id: vec3<u32>) {\n\
            let t = textureSampleLevel(tex, samp, vec2<f32>(0.5), 0.0);\n\
            textureStore(img, vec2<i32>(id.xy), t);\n\
            data[id.x] = data[id.x] * push.scale * K;\n\
        }\n";
    let artifact = build_one(source, ShaderStage::Compute, "main", "vk-spirv")
        .unwrap_or_else(|e| panic!("{e}: {:?}", e.diagnostics));
    let words = words_of(&artifact.stages[0].bytes);
    if let Some((ok, output)) = run_tool("spirv-val", &["--target-env", "vulkan1.0"], &words) {
        assert!(ok, "{output}");
    }
    if let Some(text) = disassemble(&words) {
        // The push-constant struct is the Block itself, as for uniforms.
        assert!(text.contains("OpDecorate %P Block"), "{text}");
        assert!(text.contains("OpMemberName %P 0 \"scale\""), "{text}");
    }
    let r = &artifact.reflection;
    let kinds: Vec<(&str, &str)> = r.resources.iter().map(|x| (x.name.as_str(), x.kind.as_str())).collect();
    assert_eq!(
        kinds,
        vec![("data", "storage-buffer"), ("tex", "sampled-image"), ("samp", "sampler"), ("img", "storage-image")]
    );
    assert_eq!(r.constants.len(), 1);
    assert_eq!((r.constants[0].name.as_str(), r.constants[0].ty.as_str()), ("scale", "f32"));
    assert_eq!(spec::spec_constants(&words).expect("K"), vec![(2, SpecScalar::Float, 3.0f32.to_bits())]);

    // OpenGL has neither push constants nor descriptor sets.
    let error = build_one(source, ShaderStage::Compute, "main", "gl-spirv").expect_err("immediate on GL");
    assert!(error.diagnostics.iter().any(|d| d.message.contains("var<immediate>") && d.line == 2), "{error}");
}

#[test]
fn info_and_attach() {
    let system = xr_plugin::Guarded(crate::WgslSystem);
    let info = system.info().into_result().expect("info");
    assert_eq!(info.name.as_str(), "xr-compiler-wgsl");
    assert_eq!(info.availability, Availability::OFFLINE_COMPILE | Availability::COMPATIBLE_OBJECT);
    assert!(info.attachable.is_empty() && info.loads.is_empty());
    assert!(info.accepts("wgsl"));
    assert!(info.compiles_pair("wgsl", "vk-spirv") && info.compiles_pair("wgsl", "gl-spirv"));
    assert!(info.compiler_identity.contains("naga 30.0.2"), "{}", info.compiler_identity);
    let artifact = system.compile_offline(&OfflineRequest::new(unlit(), "vk-spirv")).into_result().expect("compiles");
    assert_eq!(artifact.stages.len(), 2);
}

/// naga wraps uniform structs in an anonymous Block; `blocks::unwrap`
/// removes the wrapper where it safely can. Every shape stays valid.
#[test]
fn uniform_blocks_are_unwrapped_where_safe() {
    let shapes = [
        // A non-struct keeps its wrapper, whose member gets the variable's name.
        (
            "@group(0) @binding(0) var<uniform> mvp: mat4x4<f32>;\n\
          @vertex fn main(@location(0) p: vec4<f32>) -> @builtin(position) vec4<f32> { return mvp * p; }\n",
            "OpMemberName %_struct_7 0 \"mvp\"",
        ),
        // The struct is also a function variable's type: the wrapper stays.
        (
            "struct L { a: vec4<f32>, b: vec4<f32> }\n@group(0) @binding(0) var<uniform> l: L;\n\
          @vertex fn main(@location(0) p: vec4<f32>) -> @builtin(position) vec4<f32> {\n\
          var x: L = l; x.a = x.a + p; return x.a + x.b; }\n",
            "= OpTypeStruct %L\n",
        ),
        // A struct nested in another keeps its wrapper; the outer one is unwrapped.
        (
            "struct I { a: vec4<f32> }\nstruct O { i: I, b: vec4<f32> }\n\
          @group(0) @binding(0) var<uniform> i: I;\n@group(0) @binding(1) var<uniform> o: O;\n\
          @vertex fn main(@location(0) p: vec4<f32>) -> @builtin(position) vec4<f32> { return i.a + o.i.a + o.b + p; }\n",
            "OpDecorate %O Block",
        ),
        // Two variables of one struct, a whole-struct argument, a helper function.
        (
            "struct L { a: vec4<f32> }\n@group(0) @binding(0) var<uniform> l0: L;\n\
          @group(0) @binding(1) var<uniform> l1: L;\n\
          @vertex fn main(@location(0) p: vec4<f32>) -> @builtin(position) vec4<f32> { return l0.a + l1.a + p; }\n",
            "OpDecorate %L Block",
        ),
        (
            "struct L { a: vec4<f32>, b: vec4<f32> }\n@group(0) @binding(0) var<uniform> l: L;\n\
          fn f(v: L) -> vec4<f32> { return v.a * v.b; }\n\
          @vertex fn main(@location(0) p: vec4<f32>) -> @builtin(position) vec4<f32> { return f(l) + p; }\n",
            "OpDecorate %L Block",
        ),
        (
            "struct L { a: vec4<f32> }\n@group(0) @binding(0) var<uniform> l: L;\nfn g() -> vec4<f32> { return l.a; }\n\
          @vertex fn main(@location(0) p: vec4<f32>) -> @builtin(position) vec4<f32> { return g() + l.a + p; }\n",
            "OpDecorate %L Block",
        ),
        // naga splits two-row matrices of uniforms into columns (std140).
        (
            "struct L { m: mat3x2<f32>, a: vec4<f32> }\n@group(0) @binding(0) var<uniform> l: L;\n\
          @vertex fn main(@location(0) p: vec4<f32>) -> @builtin(position) vec4<f32> {\n\
          return vec4<f32>(l.m * p.xyz, 0.0, 1.0) + l.a; }\n",
            "OpDecorate %std140_L Block",
        ),
    ];
    for (source, expected) in shapes {
        for target in ["vk-spirv", "gl-spirv"] {
            let artifact = build_one(source, ShaderStage::Vertex, "main", target)
                .unwrap_or_else(|e| panic!("{e}: {:?}\n{source}", e.diagnostics));
            let words = words_of(&artifact.stages[0].bytes);
            validate(&words, source);
            if let Some(text) = disassemble(&words) {
                assert!(text.contains(expected), "{expected} in\n{text}");
            }
        }
    }
}
