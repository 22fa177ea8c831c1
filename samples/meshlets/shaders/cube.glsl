// What the task and mesh stages share: the cube's vertices as the vertex
// pipeline reads them (position, normal, texture coordinate: 8 floats a
// vertex, 4 vertices a face, in the textured sample's order), and the
// faces the task stage passes on.
#extension GL_EXT_mesh_shader : require

layout(std430, set = 0, binding = 1) readonly buffer CubeVertices {
    float cube_vertices[];
};

/// The faces a task work group hands its mesh work groups, one each.
struct Faces {
    uint face[6];
};

// The textured sample's constants, the same block its vertex stage reads.
layout(push_constant) uniform Constants {
    mat4 u_mvp;
    mat4 u_model;
};

/// The first float of a face's corner.
uint cube_vertex(uint face, uint corner) {
    return (face * 4u + corner) * 8u;
}

vec3 cube_position(uint face, uint corner) {
    uint at = cube_vertex(face, corner);
    return vec3(cube_vertices[at], cube_vertices[at + 1u], cube_vertices[at + 2u]);
}

vec3 cube_normal(uint face, uint corner) {
    uint at = cube_vertex(face, corner) + 3u;
    return vec3(cube_vertices[at], cube_vertices[at + 1u], cube_vertices[at + 2u]);
}

vec2 cube_uv(uint face, uint corner) {
    uint at = cube_vertex(face, corner) + 6u;
    return vec2(cube_vertices[at], cube_vertices[at + 1u]);
}
