#version 450 core
#include "interface.glsl"

layout(location = UV_LOCATION) in vec2 v_uv;
layout(location = 0) out vec4 out_color;

// Set with glProgramUniform* on this stage's program.
uniform vec4 u_color;

void main() {
    out_color = u_color;
}
