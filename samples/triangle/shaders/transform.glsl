// Shared by the triangle's vertex shader through #include.
vec4 apply_transform(mat4 transform, vec2 position) {
    return transform * vec4(position, 0.0, 1.0);
}
