#version 450 core
#include "constants.glsl"

layout(location = 0) in vec2 in_position;
layout(location = 0) out vec2 v_uv;

void main() {
    v_uv = in_position;
    gl_Position = vec4(u_rect.xy + in_position * u_rect.zw, 0.0, 1.0);
}
