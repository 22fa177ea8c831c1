#version 450 core
#include "transform.glsl"

layout(location = 0) in vec2 in_position;

uniform mat4 u_transform;

void main() {
    gl_Position = apply_transform(u_transform, in_position);
}
