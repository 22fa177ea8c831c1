#version 450 core
// The lighting pass reads the G-buffer at its own pixel: as input
// attachments on Vulkan (the device binds attachments 1 and 2 of the target
// it draws into), as textures on OpenGL, whose GLSL has no input attachments.
#ifdef VULKAN
layout(input_attachment_index = 1, set = 0, binding = 0) uniform subpassInput g_albedo;
layout(input_attachment_index = 2, set = 0, binding = 1) uniform subpassInput g_normal;
layout(push_constant) uniform Light { vec4 u_light; vec4 u_background; };
vec4 albedo() { return subpassLoad(g_albedo); }
vec4 normal() { return subpassLoad(g_normal); }
#else
layout(binding = 0) uniform sampler2D g_albedo;
layout(binding = 1) uniform sampler2D g_normal;
uniform vec4 u_light;
uniform vec4 u_background;
vec4 albedo() { return texelFetch(g_albedo, ivec2(gl_FragCoord.xy), 0); }
vec4 normal() { return texelFetch(g_normal, ivec2(gl_FragCoord.xy), 0); }
#endif

layout(location = 0) out vec4 color;

void main() {
    vec4 n = normal();
    // Nothing drawn here: the G-buffer keeps its clear (alpha 0).
    if (n.a == 0.0) {
        color = u_background;
        return;
    }
    float diffuse = max(dot(normalize(n.xyz), normalize(u_light.xyz)), 0.0);
    color = vec4(albedo().rgb * (0.25 + 0.75 * diffuse), 1.0);
}
