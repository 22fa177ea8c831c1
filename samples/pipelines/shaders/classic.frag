#version 450 core
#include "interface.glsl"

layout(location = UV_LOCATION) in vec2 v_uv;
layout(location = 0) out vec4 out_color;

// Set the classic way: glActiveShaderProgram on the pipeline, then glUniform*.
uniform vec4 u_tint;

void main() {
    out_color = u_tint;
}
