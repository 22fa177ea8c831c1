#version 450 core

// The texture the compute pass wrote, read through the caller's sampler.
layout(binding = 0) uniform sampler2D albedo;

layout(location = 0) in vec3 v_normal;
layout(location = 1) in vec2 v_uv;
layout(location = 0) out vec4 out_color;

void main() {
    vec3 light = normalize(vec3(0.4, 0.7, 0.6));
    float lit = 0.3 + 0.7 * max(dot(normalize(v_normal), light), 0.0);
    out_color = vec4(texture(albedo, v_uv).rgb * lit, 1.0);
}
