#version 450 core
// The lighting pass covers the target with one quad.
layout(location = 0) in vec2 in_position;

void main() { gl_Position = vec4(in_position, 0.0, 1.0); }
