#version 450 core
#include "transform.glsl"
#include "constants.glsl"

layout(location = 0) in vec2 in_position;

void main() {
    gl_Position = apply_transform(u_transform, in_position);
}
