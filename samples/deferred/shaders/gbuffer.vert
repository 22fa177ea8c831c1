#version 450 core
// The G-buffer pass: the textured sample's cube, turned and projected.
// A push constant block on Vulkan (glslang defines VULKAN), plain
// uniforms on OpenGL; set by name through the constant table on both.
#ifdef VULKAN
layout(push_constant) uniform Transform { mat4 u_mvp; mat4 u_model; };
#else
uniform mat4 u_mvp;
uniform mat4 u_model;
#endif

layout(location = 0) in vec3 in_position;
layout(location = 1) in vec3 in_normal;
layout(location = 2) in vec2 in_uv;

layout(location = 0) out vec3 v_normal;
layout(location = 1) out vec2 v_uv;

void main() {
    gl_Position = u_mvp * vec4(in_position, 1.0);
    v_normal = mat3(u_model) * in_normal;
    v_uv = in_uv;
}
