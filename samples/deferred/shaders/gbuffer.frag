#version 450 core
// The G-buffer pass, bindless: the albedo comes from one array of textures,
// at the index the draw gives. On Vulkan an array of unknown size indexed
// through descriptor indexing; OpenGL has no such arrays, so there it is an
// array of the size the sample fills.
// Attachment 0 is the lit image (the lighting pass writes it); this pass
// writes the albedo into attachment 1 and the normal into attachment 2.
#ifdef VULKAN
#extension GL_EXT_nonuniform_qualifier : require
layout(set = 0, binding = 0) uniform sampler2D textures[];
// After the vertex stage's matrices in the one push constant range.
layout(push_constant) uniform Material { layout(offset = 128) int u_texture; };
#define ALBEDO(uv) texture(textures[nonuniformEXT(u_texture)], uv)
#else
layout(binding = 1) uniform sampler2D textures[4];
uniform int u_texture;
#define ALBEDO(uv) texture(textures[u_texture], uv)
#endif

layout(location = 0) in vec3 v_normal;
layout(location = 1) in vec2 v_uv;

layout(location = 1) out vec4 g_albedo;
layout(location = 2) out vec4 g_normal;

void main() {
    g_albedo = vec4(ALBEDO(v_uv).rgb, 1.0);
    g_normal = vec4(normalize(v_normal), 1.0);
}
