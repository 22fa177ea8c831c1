//! The constant table: lookup by name (struct members, array elements),
//! typed setters through glProgramUniform*, defaults, and refused misuse.
//! Every value set is checked in rendered pixels.

use xr_device::ErrorKind;
use xr_sourcebuild::{
    ConstantSet, ConstantTableBox, ConstantTableExt, ConstantType, ConstantValue, ScalarKind, Setter, ShaderStage,
    SourceDesc,
};
use xr_tests::{GlBench, assert_rgba_near, registry};

fn fragment(source: &str) -> SourceDesc {
    SourceDesc::new("glsl", ShaderStage::Fragment, "constants.frag", source)
}

/// The setter `table` resolves for the constant `name`.
fn setter<'t>(table: &'t ConstantTableBox, name: &str) -> Setter<'t> {
    table.setter(table.handle(name).unwrap()).unwrap()
}

/// A column-major 4×4 translation by `x` along x.
fn translation_x(x: f32) -> [f32; 16] {
    let mut matrix = xr_tests::IDENTITY;
    matrix[12] = x;
    matrix
}

const STRUCT_AND_ARRAY: &str = "#version 450 core
struct Tint { vec4 color; float scale; };
uniform Tint tint;
uniform float weights[4];
out vec4 c;
void main() { c = vec4(tint.color.rgb * tint.scale * weights[2] + weights[3], 1.0); }
";

#[test]
fn struct_members_and_array_elements_are_set_by_name() {
    let registry = registry();
    let mut bench = GlBench::open(&registry, "xr-compiler-glsl");
    let mut built = bench.build_fragment(fragment(STRUCT_AND_ARRAY)).expect("builds");
    let table = &mut built.constants;
    let color = table.handle("tint.color").unwrap();
    table.set_vector(color, &[1.0, 0.5, 0.25, 1.0]).unwrap();
    let scale = table.handle("tint.scale").unwrap();
    table.set_float(scale, 0.8).unwrap();
    // Whole array from element 0, then one element by name.
    let weights = table.handle("weights").unwrap();
    table.set_float_array(weights, &[0.0, 0.0, 0.5, 0.0]).unwrap();
    let third = table.handle("weights[2]").unwrap();
    table.set_float(third, 1.0).unwrap();
    assert_rgba_near(bench.centre_pixel(&built), [204, 102, 51, 255], 1);

    let mut names: Vec<(String, ConstantType, u32)> = built
        .constants
        .constants()
        .into_result()
        .unwrap()
        .into_iter()
        .map(|c| (c.name.to_string(), c.ty, c.array_size))
        .collect();
    names.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        names,
        [
            ("tint.color".to_owned(), ConstantType::vector(ScalarKind::Float, 4), 1),
            ("tint.scale".to_owned(), ConstantType::vector(ScalarKind::Float, 1), 1),
            ("weights".to_owned(), ConstantType::vector(ScalarKind::Float, 1), 4),
        ]
    );
}

#[test]
fn int_uint_bool_and_matrices_with_transpose() {
    let registry = registry();
    let mut bench = GlBench::open(&registry, "xr-compiler-glsl");
    let source = "#version 450 core
uniform int mode;
uniform uint level;
uniform bool flag;
uniform ivec2 pair;
uniform mat4 m;
out vec4 c;
void main() {
    vec4 moved = m * vec4(0.0, 0.0, 0.0, 1.0);
    c = vec4(float(mode) / 4.0, float(level) / 4.0 + moved.x, flag ? 1.0 : 0.0, float(pair.y - pair.x) / 4.0);
}
";
    let mut built = bench.build_fragment(fragment(source)).expect("builds");
    let t = &mut built.constants;
    let (mode, level, flag, pair, m) = (
        t.handle("mode").unwrap(),
        t.handle("level").unwrap(),
        t.handle("flag").unwrap(),
        t.handle("pair").unwrap(),
        t.handle("m").unwrap(),
    );
    t.set_int(mode, 2).unwrap();
    t.set_uint(level, 1).unwrap();
    t.set_bool(flag, true).unwrap();
    t.set_ivec(pair, &[1, 4]).unwrap();
    // Column-major: translation in the last column (elements 12..15).
    let mut column_major = [0.0f32; 16];
    for i in 0..4 {
        column_major[i * 5] = 1.0;
    }
    column_major[12] = 0.25;
    t.set_matrix4(m, &column_major).unwrap();
    let expected = [128, 128, 255, 191];
    assert_rgba_near(bench.centre_pixel(&built), expected, 1);

    // The same matrix given row-major with transpose gives the same pixels.
    let mut row_major = [0.0f32; 16];
    for r in 0..4 {
        for c in 0..4 {
            row_major[r * 4 + c] = column_major[c * 4 + r];
        }
    }
    built.constants.set_matrix4(m, &[0.0; 16]).unwrap();
    assert_rgba_near(bench.centre_pixel(&built), [128, 64, 255, 191], 1);
    built.constants.set_matrix4_transpose(m, &row_major).unwrap();
    assert_rgba_near(bench.centre_pixel(&built), expected, 1);
}

#[test]
fn set_defaults_restores_the_initialisers_in_the_source() {
    let registry = registry();
    let mut bench = GlBench::open(&registry, "xr-compiler-glsl");
    let source = "#version 450 core
uniform vec4 base = vec4(0.0, 1.0, 0.0, 1.0);
uniform float gains[2] = float[2](0.5, 1.0);
out vec4 c;
void main() { c = base * gains[1]; }
";
    let mut built = bench.build_fragment(fragment(source)).expect("builds");
    assert_eq!(bench.centre_pixel(&built), [0, 255, 0, 255], "initialisers apply after linking");
    let base = built.constants.handle("base").unwrap();
    built.constants.set_vector(base, &[1.0, 0.0, 0.0, 1.0]).unwrap();
    let gains = built.constants.handle("gains").unwrap();
    built.constants.set_float_array(gains, &[1.0, 0.5]).unwrap();
    assert_rgba_near(bench.centre_pixel(&built), [128, 0, 0, 128], 1);
    built.constants.set_defaults().into_result().unwrap();
    assert_eq!(bench.centre_pixel(&built), [0, 255, 0, 255]);
}

#[test]
fn unknown_names_wrong_types_and_overflows_are_errors() {
    let registry = registry();
    let mut bench = GlBench::open(&registry, "xr-compiler-glsl");
    let mut built = bench.build_fragment(fragment(STRUCT_AND_ARRAY)).expect("builds");
    let table = &mut built.constants;

    let error = table.handle("tint.colour").unwrap_err();
    assert_eq!(error.kind, ErrorKind::InvalidInput);
    assert!(error.message.contains("no active constant 'tint.colour'"), "{error}");
    assert!(error.message.contains("tint.color"), "lists what exists: {error}");

    let error = table.handle("weights[4]").unwrap_err();
    assert!(error.message.contains("index 4 is out of range"), "{error}");

    let color = table.handle("tint.color").unwrap();
    let error = table.set_float(color, 1.0).unwrap_err();
    assert_eq!(error.kind, ErrorKind::InvalidInput);
    assert!(error.message.contains("'tint.color' is vec4, cannot set it from a float"), "{error}");
    let error = table.set_int(color, 1).unwrap_err();
    assert!(error.message.contains("from a int"), "{error}");
    let error = table.set_vector(color, &[1.0, 2.0, 3.0]).unwrap_err();
    assert!(error.message.contains("from a vec3"), "{error}");

    let third = table.handle("weights[2]").unwrap();
    let error = table.set_float_array(third, &[1.0, 1.0, 1.0]).unwrap_err();
    assert!(error.message.contains("3 elements do not fit 'weights' from element 2"), "{error}");
    let error = table.set_float_array(third, &[]).unwrap_err();
    assert!(error.message.contains("not a whole number"), "{error}");

    // A handle from another program is refused, not applied to the wrong uniform.
    let other = bench
        .build_fragment(fragment("#version 450 core\nuniform vec4 a;\nuniform vec4 b;\nuniform vec4 z;\nout vec4 c;\nvoid main() { c = a + b + z; }\n"))
        .expect("builds");
    let foreign = other.constants.handle("z").unwrap();
    let error = built.constants.set_vector(foreign, &[0.0; 4]).unwrap_err();
    assert!(error.message.contains("does not belong"), "{error}");

    // None of the refused calls changed anything: the program still renders black.
    assert_eq!(bench.centre_pixel(&built), [0, 0, 0, 255]);
}

#[test]
fn a_batch_sets_every_value_and_a_bad_one_names_its_constant() {
    let registry = registry();
    // One constant table serves both GL build systems; this program's struct members are GLSL's.
    {
        let compiler = "xr-compiler-glsl";
        let mut bench = GlBench::open(&registry, compiler);
        let mut built = bench.build_fragment(fragment(STRUCT_AND_ARRAY)).expect("builds");
        let table = &mut built.constants;
        let (color, scale, weights) = (
            table.handle("tint.color").unwrap(),
            table.handle("tint.scale").unwrap(),
            table.handle("weights").unwrap(),
        );
        let float = |n| ConstantType::vector(ScalarKind::Float, n);
        let rgba = [1.0, 0.5, 0.25, 1.0];
        let sets = [
            ConstantSet { handle: color, value: ConstantValue::floats(float(4), &rgba) },
            ConstantSet { handle: scale, value: ConstantValue::floats(float(1), &[0.8]) },
            ConstantSet { handle: weights, value: ConstantValue::floats(float(1), &[0.0, 0.0, 1.0, 0.0]) },
        ];
        table.set_values(&sets).unwrap();
        assert_rgba_near(bench.centre_pixel(&built), [204, 102, 51, 255], 1);

        // The second set is wrong: the first lands, the error names the second, the third is not made.
        let sets = [
            ConstantSet { handle: scale, value: ConstantValue::floats(float(1), &[0.4]) },
            ConstantSet { handle: color, value: ConstantValue::floats(float(3), &[1.0, 1.0, 1.0]) },
            ConstantSet { handle: weights, value: ConstantValue::floats(float(1), &[0.0, 0.0, 0.0, 0.0]) },
        ];
        let error = built.constants.set_values(&sets).unwrap_err();
        assert!(error.message.contains("'tint.color' is vec4, cannot set it from a vec3"), "{compiler}: {error}");
        assert_rgba_near(bench.centre_pixel(&built), [102, 51, 26, 255], 1);
    }
}

/// A program and its build system may outlive their device (an engine that
/// drops them in the wrong order): once the device is closed, their calls
/// are errors and dropping them is harmless — the device left nothing for
/// its loader to reach, so nothing reads freed memory.
#[test]
fn programs_that_outlive_their_device_fail_cleanly() {
    let registry = registry();
    let GlBench { mut compiler, device, .. } = GlBench::open(&registry, "xr-compiler-glsl");
    let vertex = SourceDesc::new("glsl", ShaderStage::Vertex, "fullscreen.vert", xr_tests::FULLSCREEN_VERT);
    let program = xr_sourcebuild::ProgramDesc::new("late", [vertex, fragment(STRUCT_AND_ARRAY)]);
    let mut built = compiler.build_program(&program, &Default::default()).into_result().expect("builds");
    let scale = built.constants.handle("tint.scale").unwrap();
    let resolved = built.constants.setter(scale).unwrap();
    resolved.set_float(0.25).unwrap();
    drop(device);
    let error = resolved.set_float(0.5).expect_err("the device is gone");
    assert_eq!(error.kind, ErrorKind::Unavailable);
    assert!(error.message.contains("setting 'tint.scale': the device is closed"), "{error}");
    drop(resolved);
    // Through the setter the table resolves for the handle at its first set.
    let error = built.constants.set_float(scale, 0.5).expect_err("the device is gone");
    assert_eq!(error.kind, ErrorKind::Unavailable);
    assert!(error.message.contains("setting 'tint.scale': the device is closed"), "{error}");
    // And through the table itself: `weights` takes the array's slot, so
    // `weights[1]` has no setter kept.
    let (weights, second) = (built.constants.handle("weights").unwrap(), built.constants.handle("weights[1]").unwrap());
    let error = built.constants.set_float(weights, 0.5).expect_err("the device is gone");
    assert!(error.message.contains("setting 'weights': the device is closed"), "{error}");
    let error = built.constants.set_float(second, 0.5).expect_err("the device is gone");
    assert_eq!(error.kind, ErrorKind::Unavailable);
    assert!(error.message.contains("the OpenGL device is closed"), "{error}");
    let error = built.constants.set_defaults().into_result().expect_err("the device is gone");
    assert!(error.message.contains("the OpenGL device is closed"), "{error}");
    let error = compiler.build_program(&program, &Default::default()).into_result().err().expect("no device");
    assert!(error.to_string().contains("the OpenGL device is closed"), "{error}");
    drop(built);
    drop(compiler);
}

/// Plain uniforms of each type a resolved setter has a write of its own
/// for (vec4, float array, mat4) and one it has not (int).
const RESOLVABLE: &str = "#version 450 core
layout(location = 0) uniform vec4 tint;
layout(location = 1) uniform float weights[4];
layout(location = 5) uniform mat4 m;
layout(location = 9) uniform int mode;
layout(location = 0) out vec4 c;
void main() {
    vec4 moved = m * vec4(0.0, 0.0, 0.0, 1.0);
    c = vec4(tint.r * weights[2], tint.g + moved.x, float(mode) / 4.0, 1.0);
}
";

/// Setters resolved once per handle set the same pixels as the table, on
/// both GL build systems, and refuse what the table refuses, naming the
/// constant.
#[test]
fn resolved_setters_set_what_the_table_sets_and_refuse_what_it_refuses() {
    let registry = registry();
    for system in ["xr-compiler-glsl", "xr-compiler-gl-spirv"] {
        let mut bench = GlBench::open(&registry, system);
        let built = bench.build_fragment(fragment(RESOLVABLE)).expect("builds");
        let table = &built.constants;
        let tint = setter(table, "tint");
        let third = setter(table, "weights[2]");
        let all = setter(table, "weights");
        let m = setter(table, "m");
        let mode = setter(table, "mode");
        tint.set_vector(&[1.0, 0.25, 0.0, 1.0]).unwrap();
        all.set(ConstantValue::floats(ConstantType::vector(ScalarKind::Float, 1), &[0.0, 0.0, 0.0])).unwrap();
        third.set_float(0.5).unwrap();
        let translate = translation_x(0.25);
        m.set_matrix4(&translate).unwrap();
        mode.set_int(3).unwrap();
        assert_rgba_near(bench.centre_pixel(&built), [128, 128, 191, 255], 1);

        let wrong = tint.set_float(1.0).unwrap_err();
        assert_eq!(wrong.kind, ErrorKind::InvalidInput);
        assert!(wrong.message.contains("'tint' is vec4"), "{system}: {}", wrong.message);
        // The array has 3 active elements (glslang) or 4 (SPIR-V keeps the declaration).
        let past = third.set(ConstantValue::floats(ConstantType::vector(ScalarKind::Float, 1), &[1.0, 1.0, 1.0]));
        let past = past.unwrap_err().message;
        assert!(past.contains("3 elements do not fit 'weights' from element 2"), "{system}: {past}");
        assert_rgba_near(bench.centre_pixel(&built), [128, 128, 191, 255], 1);
    }
}

/// Typed setters (the type checked once, at `floats::<N>()`) set the same
/// pixels, on both GL build systems; a wrong element size is refused when
/// the setter is typed, and values past the array when they are set, each
/// naming the constant.
#[test]
fn typed_setters_set_what_the_table_sets_and_check_their_type_once() {
    let registry = registry();
    for system in ["xr-compiler-glsl", "xr-compiler-gl-spirv"] {
        let mut bench = GlBench::open(&registry, system);
        let source = "#version 450 core
layout(location = 0) uniform vec4 tint;
layout(location = 1) uniform vec4 colors[3];
layout(location = 4) uniform mat4 m;
layout(location = 0) out vec4 c;
void main() {
    vec4 moved = m * vec4(0.0, 0.0, 0.0, 1.0);
    c = vec4(tint.r, colors[1].g + moved.x, colors[2].b, 1.0);
}
";
        let built = bench.build_fragment(fragment(source)).expect("builds");
        let table = &built.constants;
        let tint = setter(table, "tint").floats::<4>().unwrap();
        let colors = setter(table, "colors").floats::<4>().unwrap();
        let m = setter(table, "m").floats::<16>().unwrap();
        tint.set(&[0.5, 0.0, 0.0, 1.0]).unwrap();
        colors.set_array(&[[0.0; 4], [0.0, 0.25, 0.0, 0.0], [0.0, 0.0, 0.75, 0.0]]).unwrap();
        let translate = translation_x(0.25);
        m.set(&translate).unwrap();
        assert_rgba_near(bench.centre_pixel(&built), [128, 128, 191, 255], 1);

        let wrong = setter(table, "tint").floats::<16>().unwrap_err();
        assert_eq!(wrong.kind, ErrorKind::InvalidInput);
        assert!(wrong.message.contains("'tint' is vec4, not 16 floats an element"), "{system}: {}", wrong.message);
        let past = colors.set_array(&[[1.0; 4]; 4]).unwrap_err().message;
        assert!(past.contains("'colors'"), "{system}: {past}");
        assert_rgba_near(bench.centre_pixel(&built), [128, 128, 191, 255], 1);
    }
}

/// A set through the table resolves its handle on the first set and takes
/// that setter from then on; what it cannot take it for (another element
/// of an array whose slot a first handle holds, a wrong type, a handle of
/// another program — even one seen first) the table itself sets or
/// refuses. Every value is checked in pixels, on both GL build systems.
#[test]
fn sets_through_the_table_take_the_setter_it_resolved_and_stay_right() {
    let registry = registry();
    for system in ["xr-compiler-glsl", "xr-compiler-gl-spirv"] {
        let mut bench = GlBench::open(&registry, system);
        let mut built = bench.build_fragment(fragment(RESOLVABLE)).expect("builds");
        let other =
            bench.build_fragment(fragment("#version 450 core\nuniform vec4 z;\nout vec4 c;\nvoid main() { c = z; }\n"));
        let foreign = other.expect("builds").constants.handle("z").unwrap();
        let table = &mut built.constants;
        let names = ["tint", "weights", "weights[2]", "m", "mode"];
        let [tint, weights, third, m, mode] = names.map(|name| table.handle(name).unwrap());
        assert!(
            [tint, weights, m, mode].iter().any(|h| h.index == foreign.index),
            "{system}: the foreign handle shares an index with one of this table's"
        );
        // Seen first, the foreign handle is refused and takes no slot.
        let error = table.set_vector(foreign, &[1.0; 4]).unwrap_err();
        assert!(error.message.contains("does not belong"), "{system}: {error}");

        let mut translate = xr_tests::IDENTITY;
        for (round, (tint_rgba, third_value, moved, mode_value, expected)) in [
            ([1.0, 0.25, 0.0, 1.0], 0.5, 0.25, 3, [128, 128, 191, 255]),
            ([0.5, 0.5, 0.0, 1.0], 1.0, 0.25, 2, [128, 191, 128, 255]),
            ([0.25, 0.0, 0.0, 1.0], 1.0, 0.5, 4, [64, 128, 255, 255]),
        ]
        .into_iter()
        .enumerate()
        {
            let table = &mut built.constants;
            table.set_vector(tint, &tint_rgba).unwrap();
            table.set_float_array(weights, &[0.0, 0.0, 0.0]).unwrap();
            table.set_float(third, third_value).unwrap();
            translate[12] = moved;
            table.set_matrix4(m, &translate).unwrap();
            table.set_int(mode, mode_value).unwrap();
            assert_rgba_near(bench.centre_pixel(&built), expected, 1);
            let table = &mut built.constants;
            // Refused on a handle whose setter is kept: named, nothing set.
            let wrong = table.set_float(tint, 1.0).unwrap_err();
            assert!(wrong.message.contains("'tint' is vec4, cannot set it from a float"), "{system} {round}: {wrong}");
            let past = table.set_float_array(third, &[1.0, 1.0, 1.0]).unwrap_err();
            assert!(past.message.contains("do not fit 'weights' from element 2"), "{system} {round}: {past}");
            let error = table.set_vector(foreign, &[1.0; 4]).unwrap_err();
            assert!(error.message.contains("does not belong"), "{system} {round}: {error}");
            assert_rgba_near(bench.centre_pixel(&built), expected, 1);
        }
    }
}

#[test]
fn uniform_block_members_and_vulkan_push_constants_resolve_no_setter() {
    let registry = registry();
    let mut bench = GlBench::open(&registry, "xr-compiler-gl-spirv");
    let block = "#version 450 core
layout(binding = 0, std140) uniform Material { vec4 tint; } material;
layout(location = 0) out vec4 c;
void main() { c = material.tint; }
";
    let built = bench.build_fragment(fragment(block)).expect("builds");
    let member = built.constants.handle("Material.tint").or_else(|_| built.constants.handle("tint")).unwrap();
    let refused = built.constants.setter(member).unwrap_err();
    assert_eq!(refused.kind, ErrorKind::Unavailable, "{}", refused.message);

    let mut vulkan = GlBench::vulkan(&registry, "xr-compiler-vk-spirv");
    let push = "#version 450
layout(push_constant) uniform Push { vec4 tint; } push;
layout(location = 0) out vec4 c;
void main() { c = push.tint; }
";
    let built = vulkan.build_fragment(fragment(push)).expect("builds");
    let handle = built.constants.handle("tint").or_else(|_| built.constants.handle("push.tint")).unwrap();
    assert_eq!(built.constants.setter(handle).unwrap_err().kind, ErrorKind::Unavailable);
}
