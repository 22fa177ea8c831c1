#version 450 core

// A constant set by name at run time, written once for every device: a
// plain uniform, as OpenGL code has it (XR places it in a uniform block
// for Vulkan).
uniform vec4 tint;

layout(location = 0) out vec4 out_color;

void main() {
#if INVERT
    out_color = vec4(vec3(1.0) - tint.rgb, 1.0);
#else
    out_color = vec4(tint.rgb, 1.0);
#endif
}
