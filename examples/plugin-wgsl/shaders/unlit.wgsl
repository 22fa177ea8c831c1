// Unlit: a rectangle in one colour. The WGSL port of XR's GLSL sample
// (vertex + fragment), for xr-compiler-wgsl: entry points vs_main and fs_main.

// Per-draw constants, one uniform block (the constant table finds them by
// member name).
struct Constants {
    u_rect: vec4<f32>,
    u_color: vec4<f32>,
}

@group(0) @binding(0) var<uniform> constants: Constants;

// Specialization constants: set at load time.
@id(0) override GAIN: f32 = 1.0;
@id(1) override BIAS: f32 = 0.0;

struct VertexOutput {
    @builtin(position) position: vec4<f32>,
    @location(0) v_uv: vec2<f32>,
}

@vertex
fn vs_main(@location(0) in_position: vec2<f32>) -> VertexOutput {
    var out: VertexOutput;
    out.v_uv = in_position;
    out.position = vec4<f32>(constants.u_rect.xy + in_position * constants.u_rect.zw, 0.0, 1.0);
    return out;
}

@fragment
fn fs_main(@location(0) v_uv: vec2<f32>) -> @location(0) vec4<f32> {
    // v_uv is unused, but naga keeps it in the stage interface (location 0,
    // matching the vertex output).
    let color = constants.u_color.rgb;
    return vec4<f32>(color * GAIN + BIAS, 1.0);
}
