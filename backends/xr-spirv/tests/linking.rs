//! Linking stages compiled apart: uniform locations shared across a
//! program's modules, and stage interfaces matched by name.

use xr_sourcebuild::{ShaderStage, SourceDesc};
use xr_spirv::{SpirvCompiler, SpirvOptions, TargetEnv, assign_uniform_locations, link_interface_locations, reflect};

fn module(compiler: &SpirvCompiler, stage: ShaderStage, source: &str) -> Vec<u32> {
    let desc = SourceDesc::new("glsl", stage, format!("{}.glsl", stage.name()), source);
    compiler.compile_unvalidated(&desc, &SpirvOptions::new(TargetEnv::OpenGl45)).unwrap().words
}

fn uniforms(words: &[u32]) -> Vec<(String, u32)> {
    let mut list: Vec<(String, u32)> =
        reflect::loose_uniforms(words).unwrap().into_iter().map(|u| (u.name, u.location)).collect();
    list.sort();
    list
}

#[test]
fn uniforms_get_one_location_per_element_across_the_program() {
    let compiler = SpirvCompiler::new().unwrap();
    let mut vertex = module(
        &compiler,
        ShaderStage::Vertex,
        "#version 450\nuniform mat4 a;\nuniform vec4 b[3];\nvoid main() { gl_Position = a * b[2]; }\n",
    );
    let mut fragment = module(
        &compiler,
        ShaderStage::Fragment,
        "#version 450\nuniform vec4 b[3];\nuniform float c;\nuniform vec2 d;\nlayout(location = 0) out vec4 o;\n\
         void main() { o = b[1] * c + vec4(d, 0.0, 0.0); }\n",
    );
    // glslang numbers each stage from 0: the stages collide before linking.
    assert_eq!(uniforms(&fragment)[0].1, uniforms(&vertex)[0].1);
    assign_uniform_locations(&mut [vertex.as_mut_slice(), fragment.as_mut_slice()]).unwrap();
    // a: 0; b: 1, 2, 3 (three elements); c: 4; d: 5. The same name, the same location.
    assert_eq!(uniforms(&vertex), [("a".to_owned(), 0), ("b".to_owned(), 1)]);
    assert_eq!(uniforms(&fragment), [("b".to_owned(), 1), ("c".to_owned(), 4), ("d".to_owned(), 5)]);
    // Linking twice changes nothing.
    assign_uniform_locations(&mut [vertex.as_mut_slice(), fragment.as_mut_slice()]).unwrap();
    assert_eq!(uniforms(&fragment), [("b".to_owned(), 1), ("c".to_owned(), 4), ("d".to_owned(), 5)]);
}

#[test]
fn inputs_take_the_location_of_the_output_of_their_name() {
    let compiler = SpirvCompiler::new().unwrap();
    let vertex = module(
        &compiler,
        ShaderStage::Vertex,
        "#version 450\nout vec2 uv;\nout vec3 n;\nvoid main() { uv = vec2(0.0); n = vec3(1.0); gl_Position = vec4(0.0); }\n",
    );
    // The same varyings, declared in the other order, and one the vertex stage lacks.
    let mut fragment = module(
        &compiler,
        ShaderStage::Fragment,
        "#version 450\nin vec3 n;\nin vec2 uv;\nlayout(location = 7) in float extra;\nlayout(location = 0) out vec4 o;\n\
         void main() { o = vec4(n, uv.x + extra); }\n",
    );
    let locations = |words: &[u32], outputs: bool| -> Vec<(String, u32)> {
        let r = reflect(words, "main").unwrap();
        let list = if outputs { r.outputs } else { r.inputs };
        let mut list: Vec<(String, u32)> = list.into_iter().map(|v| (v.name, v.location)).collect();
        list.sort();
        list
    };
    assert_eq!(locations(&vertex, true), [("n".to_owned(), 1), ("uv".to_owned(), 0)]);
    assert_eq!(locations(&fragment, false)[0], ("extra".to_owned(), 7));
    assert_eq!(locations(&fragment, false)[1], ("n".to_owned(), 0), "declaration order, before linking");
    link_interface_locations(&vertex, &mut fragment).unwrap();
    assert_eq!(
        locations(&fragment, false),
        [("extra".to_owned(), 7), ("n".to_owned(), 1), ("uv".to_owned(), 0)],
        "by name; an input with no output of its name keeps its location"
    );
}

#[test]
fn truncated_modules_are_refused_not_read_past_their_end() {
    let compiler = SpirvCompiler::new().unwrap();
    let vertex =
        module(&compiler, ShaderStage::Vertex, "#version 450\nuniform vec4 a;\nvoid main() { gl_Position = a; }\n");
    // A last instruction that claims five words where one is left.
    let mut cut = vertex.clone();
    cut.push(xr_spirv::container::walk::first_word(xr_spirv::container::spirv::Op::Undef, 5));
    assert!(assign_uniform_locations(&mut [cut.as_mut_slice()]).is_err());
    let mut fragment = module(
        &compiler,
        ShaderStage::Fragment,
        "#version 450\nlayout(location = 0) out vec4 o;\nvoid main() { o = vec4(1.0); }\n",
    );
    assert!(link_interface_locations(&cut, &mut fragment).is_err());
    let mut not_spirv = vec![1u32, 2, 3, 4, 5, 6];
    assert!(link_interface_locations(&vertex, &mut not_spirv).is_err());
}

#[test]
fn reflection_names_the_entry_point_and_lays_out_arrays_in_blocks() {
    let compiler = SpirvCompiler::new().unwrap();
    let fragment = module(
        &compiler,
        ShaderStage::Fragment,
        "#version 450\nlayout(binding = 0) uniform Block { vec4 tints[3]; float gain; };\n\
         layout(location = 0) out vec4 o;\nvoid main() { o = tints[2] * gain; }\n",
    );
    let r = reflect(&fragment, "main").unwrap();
    assert_eq!(r.entry_point, "main");
    let block = &r.uniform_blocks[0];
    let tints = block.members.iter().find(|m| m.name == "tints").unwrap();
    let layout = tints.layout.expect("an array of vec4 is settable");
    assert_eq!((tints.offset, layout.array_size, layout.array_stride), (0, 3, 16));
    let gain = block.members.iter().find(|m| m.name == "gain").unwrap();
    assert_eq!((gain.offset, gain.layout.unwrap().array_size), (48, 1));
}
