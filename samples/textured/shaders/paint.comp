#version 450 core
// Paints the mesh's texture: a checker of the palette's two colours,
// shaded along the diagonal.
layout(local_size_x = 8, local_size_y = 8) in;

layout(binding = 0, rgba8) uniform writeonly image2D painted;

// Storage buffers are known by their block name on every path.
layout(binding = 1) readonly buffer Palette {
    vec4 colors[];
};

void main() {
    ivec2 texel = ivec2(gl_GlobalInvocationID.xy);
    int square = ((texel.x / 8) + (texel.y / 8)) & 1;
    float shade = 0.55 + 0.45 * float(texel.x + texel.y) / 126.0;
    imageStore(painted, texel, vec4(colors[square].rgb * shade, 1.0));
}
