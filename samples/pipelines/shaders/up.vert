#version 450 core
#include "interface.glsl"

layout(location = 0) in vec2 in_position;
layout(location = UV_LOCATION) out vec2 v_uv;
out gl_PerVertex { vec4 gl_Position; };

uniform float u_scale;

void main() {
    v_uv = in_position * 0.5 + 0.5;
    gl_Position = vec4(in_position * u_scale, 0.0, 1.0);
}
