// The triangle's constants, one interface on every path: plain uniforms on
// OpenGL (set with glProgramUniform*), push constants on Vulkan (glslang
// defines VULKAN there). The constant table finds them by the same names.
#ifdef VULKAN
layout(push_constant) uniform Constants {
    mat4 u_transform;
    vec4 u_color;
};
#else
uniform mat4 u_transform;
uniform vec4 u_color;
#endif
