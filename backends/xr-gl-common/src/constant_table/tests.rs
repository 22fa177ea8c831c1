use super::*;

#[test]
fn array_index_is_split_only_at_the_end() {
    assert_eq!(split_index("weights[2]"), ("weights", Some(2)));
    assert_eq!(split_index("lights[1].color"), ("lights[1].color", None));
    assert_eq!(split_index("lights[1].colors[3]"), ("lights[1].colors", Some(3)));
    assert_eq!(split_index("color"), ("color", None));
    assert_eq!(split_index("bad[x]"), ("bad[x]", None));
}

#[test]
fn gl_types_map_to_constant_types() {
    assert_eq!(constant_type(glow::FLOAT_VEC4).to_string(), "vec4");
    assert_eq!(constant_type(glow::FLOAT_MAT4x3).to_string(), "mat4x3");
    assert_eq!(constant_type(glow::SAMPLER_2D).scalar, ScalarKind::Sampler);
    assert_eq!(constant_type(glow::DOUBLE).scalar, ScalarKind::Unsupported);
}
