// The constants: a push constant block on Vulkan (glslang defines VULKAN),
// plain uniforms on OpenGL; set by name through the constant table on both.
#ifdef VULKAN
layout(push_constant) uniform Constants {
    mat4 u_mvp;
    mat4 u_model;
};
#else
uniform mat4 u_mvp;
uniform mat4 u_model;
#endif
