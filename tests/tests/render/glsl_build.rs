//! Building GLSL through the plugin: includes, defines, and errors at the
//! file and line the user wrote.

use xr_device::ErrorKind;
use xr_sourcebuild::{BuildError, Severity, ShaderStage, SourceDesc};
use xr_tests::{GlBench, glsl_fragment, registry, temp_dir};

/// The error of building the GLSL fragment source `file` of text `source`
/// on OpenGL, which must fail.
fn fragment_build_error(file: &str, source: &str) -> BuildError {
    let registry = registry();
    let mut bench = GlBench::open(&registry, "xr-compiler-glsl");
    bench.build_fragment(glsl_fragment(file, source)).err().expect("the build fails")
}

const GREEN_OR_RED: &str = "#version 450 core
#include \"colors.glsl\"
out vec4 c;
void main() {
#ifdef RED
    c = RED_COLOR;
#else
    c = GREEN_COLOR;
#endif
}
";

#[test]
fn includes_from_disk_and_defines_change_the_pixels() {
    let dir = temp_dir("defines");
    std::fs::create_dir_all(dir.join("include")).unwrap();
    std::fs::write(
        dir.join("include/colors.glsl"),
        "#pragma once\nconst vec4 RED_COLOR = vec4(1.0, 0.0, 0.0, 1.0);\nconst vec4 GREEN_COLOR = vec4(0.0, 1.0, 0.0, 1.0);\n",
    )
    .unwrap();
    let source = |defines: &[(&str, &str)]| {
        let path = dir.join("shade.frag");
        let mut desc = SourceDesc::new("glsl", ShaderStage::Fragment, path.to_string_lossy(), GREEN_OR_RED)
            .with_include_dir(dir.join("include").to_string_lossy());
        for (name, value) in defines {
            desc = desc.with_define(*name, *value);
        }
        desc
    };
    let registry = registry();
    let mut bench = GlBench::open(&registry, "xr-compiler-glsl");
    let green = bench.build_fragment(source(&[])).expect("builds");
    assert_eq!(bench.centre_pixel(&green), [0, 255, 0, 255]);
    let red = bench.build_fragment(source(&[("RED", "1")])).expect("builds");
    assert_eq!(bench.centre_pixel(&red), [255, 0, 0, 255]);
}

#[test]
fn a_syntax_error_in_an_included_file_names_that_file_and_line() {
    let dir = temp_dir("include-error");
    std::fs::write(
        dir.join("lighting.glsl"),
        "// lighting\nfloat lambert(vec3 n, vec3 l) {\n    return max(dot(n, l), 0.0)\n}\n",
    )
    .unwrap();
    let main = dir.join("lit.frag");
    let source = "#version 450 core\n#include \"lighting.glsl\"\nout vec4 c;\nvoid main() { c = vec4(lambert(vec3(0, 0, 1), vec3(0, 0, 1))); }\n";
    std::fs::write(&main, source).unwrap();
    let registry = registry();
    let mut bench = GlBench::open(&registry, "xr-compiler-glsl");
    let error =
        bench.build_fragment(SourceDesc::read("glsl", ShaderStage::Fragment, &main).unwrap()).err().expect("fails");
    assert_eq!(error.error.kind, ErrorKind::Build);
    let first = error.diagnostics.iter().find(|d| d.severity == Severity::Error).expect("an error diagnostic");
    assert!(first.file.ends_with("lighting.glsl"), "error should point into the include: {first}");
    // The missing `;` is reported where the parser notices it: line 3 or the `}` on line 4.
    assert!((3..=4).contains(&first.line), "{first}");
    let message = error.to_string();
    assert!(message.contains(&format!("lighting.glsl:{}", first.line)), "{message}");
    assert!(!message.contains('\n'), "one line: {message}");
}

#[test]
fn a_missing_include_names_the_including_file_and_line() {
    let source = "#version 450 core\n\n#include \"nowhere.glsl\"\nvoid main() {}\n";
    let error = fragment_build_error("main.frag", source);
    assert_eq!(error.diagnostics.len(), 1);
    let d = &error.diagnostics[0];
    assert_eq!((d.file.as_str(), d.line), ("main.frag", 3));
    assert!(error.to_string().contains("main.frag:3: error: cannot find include file 'nowhere.glsl'"), "{error}");
}

#[test]
fn a_fragment_input_no_vertex_output_writes_is_a_link_error_naming_it() {
    let source = "#version 450 core\nin vec3 v_normal;\nout vec4 c;\nvoid main() { c = vec4(v_normal, 1.0); }\n";
    let error = fragment_build_error("needs_normal.frag", source);
    assert_eq!(error.error.kind, ErrorKind::Build);
    let message = error.to_string();
    assert!(message.contains("link failed"), "{message}");
    assert!(message.contains("v_normal"), "the error must name the variable: {message}");
}

#[test]
fn errors_in_two_stages_are_all_reported() {
    let registry = registry();
    let mut bench = GlBench::open(&registry, "xr-compiler-glsl");
    let vertex = SourceDesc::new(
        "glsl",
        ShaderStage::Vertex,
        "a.vert",
        "#version 450 core\nvoid main() { gl_Position = undefined_a; }\n",
    );
    let fragment = SourceDesc::new(
        "glsl",
        ShaderStage::Fragment,
        "b.frag",
        "#version 450 core\nout vec4 c;\nvoid main() { c = undefined_b; }\n",
    );
    let desc = xr_sourcebuild::ProgramDesc::new("two", [vertex, fragment]);
    let error = bench.compiler.build_program(&desc, &Default::default()).into_result().err().expect("fails");
    let located: Vec<(String, u32)> = error
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| (d.file.to_string(), d.line))
        .collect();
    assert!(located.contains(&("a.vert".to_owned(), 2)), "{located:?}");
    assert!(located.contains(&("b.frag".to_owned(), 3)), "{located:?}");
}

#[test]
fn wrong_language_entry_point_or_define_is_refused_before_the_driver() {
    let registry = registry();
    let mut bench = GlBench::open(&registry, "xr-compiler-glsl");
    let mut hlsl = SourceDesc::new("glsl", ShaderStage::Fragment, "x.hlsl", "float4 main() : SV_Target { return 1; }");
    hlsl.language = "hlsl".into();
    assert!(bench.build_fragment(hlsl).err().unwrap().to_string().contains("builds GLSL, not hlsl"));
    let mut entry = SourceDesc::new("glsl", ShaderStage::Fragment, "x.frag", "#version 450 core\nvoid ps_main() {}\n");
    entry.entry_point = "ps_main".into();
    assert!(bench.build_fragment(entry).err().unwrap().to_string().contains("entry point must be 'main'"));
    let special = SourceDesc::new("glsl", ShaderStage::Fragment, "x.frag", "#version 450 core\nvoid main() {}\n")
        .with_specialization(0, 1);
    let error = bench.build_fragment(special).err().unwrap().to_string();
    assert!(error.contains("has no specialization constants"), "{error}");
    let define = SourceDesc::new("glsl", ShaderStage::Fragment, "x.frag", "#version 450 core\nvoid main() {}\n")
        .with_define("A B", "1");
    assert!(bench.build_fragment(define).err().unwrap().to_string().contains("x.frag: error: invalid define 'A B=1'"));
}
