#version 460
#extension GL_EXT_ray_tracing : require

// The raster sample's lighting (mesh.frag) at the point a primary ray
// hit: the normal and texture coordinate interpolated from the triangle's
// corners, a shadow ray towards the light where the surface faces it.
layout(binding = 0) uniform accelerationStructureEXT scene;
layout(binding = 2) uniform sampler2D albedo;
// The cube's vertices as the raster sample draws them: position, normal,
// texture coordinate (8 floats), and its 32-bit indices.
layout(std430, binding = 3) readonly buffer CubeVertices { float vertices[]; };
layout(std430, binding = 4) readonly buffer CubeIndices { uint indices[]; };

layout(location = 0) rayPayloadInEXT vec3 color;
layout(location = 1) rayPayloadEXT bool shadowed;
hitAttributeEXT vec2 barycentrics;

vec3 corner3(uint vertex, uint offset) {
    uint at = vertex * 8 + offset;
    return vec3(vertices[at], vertices[at + 1], vertices[at + 2]);
}

vec2 corner2(uint vertex, uint offset) {
    uint at = vertex * 8 + offset;
    return vec2(vertices[at], vertices[at + 1]);
}

void main() {
    uint first = gl_PrimitiveID * 3;
    uvec3 corners = uvec3(indices[first], indices[first + 1], indices[first + 2]);
    vec3 weights = vec3(1.0 - barycentrics.x - barycentrics.y, barycentrics.x, barycentrics.y);
    vec3 normal = corner3(corners.x, 3) * weights.x + corner3(corners.y, 3) * weights.y + corner3(corners.z, 3) * weights.z;
    vec2 uv = corner2(corners.x, 6) * weights.x + corner2(corners.y, 6) * weights.y + corner2(corners.z, 6) * weights.z;
    vec3 world_normal = normalize(mat3(gl_ObjectToWorldEXT) * normal);

    vec3 light = normalize(vec3(0.4, 0.7, 0.6));
    float facing = max(dot(world_normal, light), 0.0);
    if (facing > 0.0) {
        // Anything between the point and the light shadows it: the first
        // hit ends the ray, and no hit stage runs for it (miss index 1).
        shadowed = true;
        vec3 at = gl_WorldRayOriginEXT + gl_WorldRayDirectionEXT * gl_HitTEXT + world_normal * 1e-3;
        uint flags = gl_RayFlagsOpaqueEXT | gl_RayFlagsTerminateOnFirstHitEXT | gl_RayFlagsSkipClosestHitShaderEXT;
        traceRayEXT(scene, flags, 0xff, 0, 0, 1, at, 0.0, light, 100.0, 1);
        if (shadowed) {
            facing = 0.0;
        }
    }
    float lit = 0.3 + 0.7 * facing;
    // No derivatives in a hit stage: level 0, which is all the texture has.
    color = textureLod(albedo, uv, 0.0).rgb * lit;
}
