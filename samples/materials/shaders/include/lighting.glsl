// A dome lit from the upper left: the tile's uv as a normal.
float lambert(vec2 uv) {
    vec3 normal = normalize(vec3(uv * 2.0 - 1.0, 1.0));
    return max(dot(normal, normalize(vec3(-0.5, 0.5, 1.0))), 0.0);
}
