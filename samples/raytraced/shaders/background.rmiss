#version 460
#extension GL_EXT_ray_tracing : require

// A primary ray that hits nothing: the raster sample's clear colour.
layout(location = 0) rayPayloadInEXT vec3 color;

void main() {
    color = vec3(0.02, 0.02, 0.05);
}
