#version 450 core
#include "constants.glsl"
#include "overrides.glsl"
#include "pattern.glsl"
#include "lighting.glsl"

layout(location = 0) in vec2 v_uv;
layout(location = 0) out vec4 out_color;

void main() {
    float light = floor(lambert(v_uv) * float(BANDS) + 0.5) / float(BANDS);
    vec3 color = u_color.rgb * mix(0.6, 1.0, pattern(v_uv)) * (0.25 + 0.75 * light);
    out_color = vec4(color * GAIN + BIAS, 1.0);
}
