// The per-draw constants, one interface on every path: plain uniforms on
// OpenGL, a push constant block on Vulkan (glslang defines VULKAN there).
#ifdef VULKAN
layout(push_constant) uniform Constants {
    vec4 u_rect;   // clip-space x, y of the tile's corner; width, height
    vec4 u_color;  // base colour
};
#else
uniform vec4 u_rect;
uniform vec4 u_color;
#endif
