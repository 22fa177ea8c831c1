// The PATTERN axis (enum: flat, stripes, checker) and the BANDS axis (1-4).
float pattern(vec2 uv) {
#if defined(PATTERN_STRIPES)
    return mod(floor(uv.x * float(BANDS) * 2.0), 2.0) < 0.5 ? 1.0 : 0.25;
#elif defined(PATTERN_CHECKER)
    vec2 cell = floor(uv * float(BANDS) * 2.0);
    return mod(cell.x + cell.y, 2.0) < 0.5 ? 1.0 : 0.25;
#else
    return 1.0;
#endif
}
