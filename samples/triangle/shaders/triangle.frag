#version 450 core
#include "constants.glsl"

layout(location = 0) out vec4 out_color;

void main() {
    out_color = u_color;
}
