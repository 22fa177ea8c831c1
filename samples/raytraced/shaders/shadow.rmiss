#version 460
#extension GL_EXT_ray_tracing : require

// A shadow ray that reaches the light unblocked.
layout(location = 1) rayPayloadInEXT bool shadowed;

void main() {
    shadowed = false;
}
