#version 450 core
#include "constants.glsl"

// A material with a texture: the engine binds it by name (set_texture).
layout(binding = 0) uniform sampler2D albedo;

layout(location = 0) in vec2 v_uv;
layout(location = 0) out vec4 out_color;

void main() {
    out_color = vec4(texture(albedo, v_uv).rgb * u_color.rgb, 1.0);
}
