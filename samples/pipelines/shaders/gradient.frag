#version 450 core
#include "interface.glsl"

layout(location = UV_LOCATION) in vec2 v_uv;
layout(location = 0) out vec4 out_color;

void main() {
    out_color = vec4(v_uv, 0.5, 1.0);
}
