// The manifest's overrides: specialization constants on SPIR-V. On gl-glsl
// the driver builds the source, and XR defines GAIN and BIAS to the values
// asked for at load time instead (glslang defines GL_SPIRV or VULKAN only
// when it compiles to SPIR-V).
#if defined(GL_SPIRV) || defined(VULKAN)
layout(constant_id = 0) const float GAIN = 1.0;
layout(constant_id = 1) const float BIAS = 0.0;
#endif
