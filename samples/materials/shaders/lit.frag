#version 450 core
#include "constants.glsl"
#include "overrides.glsl"
#include "pattern.glsl"
#include "lighting.glsl"

layout(location = 0) in vec2 v_uv;
layout(location = 0) out vec4 out_color;

void main() {
    vec3 color = u_color.rgb * pattern(v_uv) * (0.2 + 0.8 * lambert(v_uv));
#if TINT
    color *= vec3(1.0, 0.5, 0.5);
#endif
    out_color = vec4(color * GAIN + BIAS, 1.0);
}
