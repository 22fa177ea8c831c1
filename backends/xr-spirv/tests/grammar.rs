//! Instructions newer than the reflection library's SPIR-V grammar (the
//! Vulkan SDK 1.3.268's), spliced into real modules that glslang wrote:
//! skipped in a function body, refused among the declarations.

use xr_sourcebuild::{ShaderStage, SourceDesc};
use xr_spirv::container::spirv::{Capability, Op};
use xr_spirv::container::walk::{instruction_list, literal_string, string_operand};
use xr_spirv::{SpirvCompiler, SpirvOptions, TargetEnv, reflect};

/// `OpReorderThreadWithHintEXT %hint %bits` (SPV_EXT_shader_invocation_reorder,
/// SPIR-V of 2025): an instruction of function bodies.
const REORDER_THREAD_WITH_HINT_EXT: u32 = 5314;
/// `%id = OpTypeHitObjectEXT` (the same extension): a declaration.
const TYPE_HIT_OBJECT_EXT: u32 = 5313;
/// `OpTypeUntypedPointerKHR` (SPV_KHR_untyped_pointers, which the glslang
/// of 2026 writes for descriptor heaps).
const TYPE_UNTYPED_POINTER_KHR: u32 = 4417;
/// An opcode no grammar has.
const MADE_UP: u32 = 0xFFF0;
/// `ShaderInvocationReorderEXT`: a capability newer than the grammar too.
const SHADER_INVOCATION_REORDER_EXT: u32 = 5388;

/// A ray generation stage of two functions and a loop (several blocks),
/// with an acceleration structure, a storage image, a uniform block it
/// reads, one it never reads, a specialization constant and a payload.
const RAY_GENERATION: &str = "#version 460
#extension GL_EXT_ray_tracing : require
layout(set = 0, binding = 0) uniform accelerationStructureEXT scene;
layout(set = 0, binding = 1, rgba8) uniform writeonly image2D target;
layout(set = 0, binding = 2) uniform Camera { mat4 inverse_view; vec4 origin; } camera;
layout(set = 0, binding = 3) uniform Unused { vec4 never; } unused;
layout(constant_id = 0) const uint SAMPLES = 4;
layout(location = 0) rayPayloadEXT vec3 color;
vec3 direction(uvec2 pixel) { return normalize((camera.inverse_view * vec4(vec2(pixel), 1.0, 0.0)).xyz); }
void main() {
    vec3 sum = vec3(0.0);
    for (uint i = 0; i < SAMPLES; ++i) {
        traceRayEXT(scene, gl_RayFlagsOpaqueEXT, 0xFF, 0, 0, 0, camera.origin.xyz, 0.001,
                    direction(gl_LaunchIDEXT.xy), 1000.0, 0);
        sum += color;
    }
    imageStore(target, ivec2(gl_LaunchIDEXT.xy), vec4(sum / float(SAMPLES), 1.0));
}
";

fn ray_generation() -> Vec<u32> {
    let options = SpirvOptions::new(TargetEnv::Vulkan12).for_stages(&[ShaderStage::RayGeneration]).unwrap();
    let desc = SourceDesc::new("glsl", ShaderStage::RayGeneration, "camera.rgen", RAY_GENERATION);
    SpirvCompiler::new().unwrap().compile(&desc, &options).unwrap_or_else(|e| panic!("{e}")).words
}

/// The words of an instruction `opcode` with `operands`.
fn instruction(opcode: u32, operands: &[u32]) -> Vec<u32> {
    let mut words = vec![((operands.len() as u32 + 1) << 16) | opcode];
    words.extend_from_slice(operands);
    words
}

/// `words` with `make(label)` after every `OpLabel %label`: in every block
/// of every function.
fn after_every_label(words: &[u32], make: impl Fn(u32) -> Vec<u32>) -> Vec<u32> {
    let mut out = words[..5].to_vec();
    for i in instruction_list(words).unwrap() {
        out.extend_from_slice(&words[i.offset..i.end()]);
        if i.op() == Some(Op::Label) {
            out.extend(make(i.operands[0]));
        }
    }
    out
}

/// `words` with `spliced` before the first instruction `op`, and the word
/// it is at.
fn before_first(words: &[u32], op: Op, spliced: &[u32]) -> (Vec<u32>, usize) {
    let at = instruction_list(words).unwrap().iter().find(|i| i.op() == Some(op)).unwrap().offset;
    (words[..at].iter().chain(spliced).chain(&words[at..]).copied().collect(), at)
}

/// `words` declaring `capability` and `extension` too, where the grammar
/// puts them (after the other capabilities, after the other extensions).
fn declaring(words: &[u32], capability: u32, extension: &str) -> Vec<u32> {
    let (words, _) = before_first(words, Op::Extension, &instruction(Op::Capability as u32, &[capability]));
    let (words, _) =
        before_first(&words, Op::ExtInstImport, &instruction(Op::Extension as u32, &string_operand(extension)));
    words
}

/// The id `OpName` gives `name`.
fn id_named(words: &[u32], name: &str) -> u32 {
    instruction_list(words)
        .unwrap()
        .iter()
        .find(|i| i.op() == Some(Op::Name) && literal_string(&i.operands[1..]) == name)
        .unwrap_or_else(|| panic!("no OpName {name}"))
        .operands[0]
}

fn block_names(reflection: &reflect::Reflection) -> Vec<&str> {
    reflection.uniform_blocks.iter().map(|b| b.name.as_str()).collect()
}

/// A module that uses shader invocation reordering as the extension of
/// 2025 writes it (its capability and extension declared, its instruction
/// in every block of both functions) reflects as the module without it:
/// the instruction is skipped by its word count, whatever its length, and
/// the capability is carried by its number.
#[test]
fn an_instruction_newer_than_the_grammar_in_a_function_body_is_skipped_by_its_word_count() {
    let words = ray_generation();
    let expected = reflect(&words, "main").unwrap();
    // What there is to lose: every kind of thing reflection reports.
    let kinds: Vec<&str> = expected.images.iter().map(|i| i.kind).collect();
    assert_eq!(kinds, ["acceleration structure", "storage image"]);
    assert_eq!(block_names(&expected), ["Camera"], "the block main never reads is not listed");
    assert_eq!(expected.uniform_blocks[0].members.len(), 2);
    assert_eq!(expected.spec_constants.len(), 1);
    let list = instruction_list(&words).unwrap();
    let count = |op| list.iter().filter(|i| i.op() == Some(op)).count();
    assert!(count(Op::Function) >= 2 && count(Op::Label) >= 5, "two functions, several blocks");

    let reordering = declaring(&words, SHADER_INVOCATION_REORDER_EXT, "SPV_EXT_shader_invocation_reorder");
    for (what, spliced) in [
        (
            "OpReorderThreadWithHintEXT",
            after_every_label(&reordering, |l| instruction(REORDER_THREAD_WITH_HINT_EXT, &[l, l])),
        ),
        ("7 words of a made-up opcode", after_every_label(&reordering, |l| instruction(MADE_UP, &[l; 6]))),
        ("1 word of a made-up opcode", after_every_label(&words, |_| instruction(MADE_UP, &[]))),
    ] {
        assert!(spliced.len() >= words.len() + count(Op::Label), "{what}: spliced in every block");
        let reflection = reflect(&spliced, "main").unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(reflection, expected, "{what}");
        // The readers that walk the words themselves read it too.
        assert_eq!(reflect::entry_points(&spliced).unwrap(), ["main"], "{what}");
        assert_eq!(reflect::ray_interface(&spliced).unwrap(), reflect::ray_interface(&words).unwrap(), "{what}");
        assert!(reflect::traces_rays(&spliced).unwrap(), "{what}");
    }
    // The capability the grammar does not know is declared by its number,
    // after the module's own, for the device check to judge.
    let declared = reflect::declared_capabilities(&reordering).unwrap();
    assert_eq!(declared.last(), Some(&SHADER_INVOCATION_REORDER_EXT), "{declared:?}");
    assert!(declared.contains(&(Capability::RayTracingKHR as u32)), "{declared:?}");
    let extensions = reflect::declared_extensions(&reordering).unwrap();
    assert_eq!(extensions.last().map(String::as_str), Some("SPV_EXT_shader_invocation_reorder"));
}

/// A resource that only a skipped instruction reads stays in the
/// reflection: each of its operands counts as read, as a pipeline layout
/// without the resource would be wrong. Uniform blocks (through the
/// reflection library) and OpenGL's uniforms outside blocks (read from the
/// words) alike.
#[test]
fn a_resource_only_a_skipped_instruction_reads_stays_in_the_reflection() {
    let words = ray_generation();
    let unused = id_named(&words, "unused");
    let spliced = after_every_label(&words, |label| instruction(REORDER_THREAD_WITH_HINT_EXT, &[unused, label]));
    let reflection = reflect(&spliced, "main").unwrap();
    assert_eq!(block_names(&reflection), ["Camera", "Unused"]);
    assert_eq!((reflection.uniform_blocks[1].set, reflection.uniform_blocks[1].binding), (0, 3));

    let source = "#version 450
uniform float used_value;
uniform float unused_value;
layout(location = 0) out vec4 color;
void main() { color = vec4(used_value); }
";
    let desc = SourceDesc::new("glsl", ShaderStage::Fragment, "loose.frag", source);
    let gl = SpirvCompiler::new().unwrap().compile(&desc, &SpirvOptions::new(TargetEnv::OpenGl45)).unwrap().words;
    let names = |words: &[u32]| -> Vec<String> {
        reflect(words, "main").unwrap().uniforms.into_iter().map(|u| u.name).collect()
    };
    assert_eq!(names(&gl), ["used_value"]);
    let unused = id_named(&gl, "unused_value");
    let spliced = after_every_label(&gl, |_| instruction(MADE_UP, &[unused]));
    assert_eq!(names(&spliced), ["used_value", "unused_value"]);
}

/// Among the declarations, an instruction the grammar does not know is
/// refused, naming it (by a newer grammar's name where that knows it, else
/// by its opcode) and its word; the readers that walk the words still read
/// the module.
#[test]
fn an_instruction_newer_than_the_grammar_among_the_declarations_is_refused_naming_it_and_its_word() {
    let words = ray_generation();
    let bound = words[3];
    let (mut hit_object, at) = before_first(&words, Op::Function, &instruction(TYPE_HIT_OBJECT_EXT, &[bound]));
    hit_object[3] = bound + 1;
    let error = reflect(&hit_object, "main").unwrap_err();
    assert!(
        error.message.contains(&format!(
            "the instruction at word {at}, OpTypeHitObjectEXT (opcode 5313), is among the module's declarations \
             and newer than XR's SPIR-V grammar (Vulkan SDK 1.3.268)"
        )),
        "{error}"
    );
    assert_eq!(reflect::entry_points(&hit_object).unwrap(), ["main"]);

    // One no grammar knows, among the types: by its opcode.
    let (made_up, at) = before_first(&words, Op::TypeVoid, &instruction(MADE_UP, &[1, 2, 3]));
    let error = reflect(&made_up, "main").unwrap_err();
    assert!(error.message.contains(&format!("the instruction at word {at}, opcode 65520, is among")), "{error}");

    // After the last function, where no body is: refused too.
    let mut appended = words.clone();
    appended.push((1 << 16) | TYPE_UNTYPED_POINTER_KHR);
    let error = reflect(&appended, "main").unwrap_err();
    assert!(
        error.message.contains(&format!(
            "the instruction at word {}, OpTypeUntypedPointerKHR (opcode 4417), is among",
            words.len()
        )),
        "{error}"
    );
}
