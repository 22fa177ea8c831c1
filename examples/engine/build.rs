//! Builds the engine's shaders (`shaders/xr.toml`) into a store under
//! `OUT_DIR` with the compilers linked into this script, and writes their
//! typed bindings beside it. Cargo reruns it when a shader, the manifest
//! or a compiler crate changes.
fn main() {
    xr_cargo::Build::new("shaders/xr.toml")
        .compiler(xr_compiler_glsl::PLUGIN)
        .compiler(xr_compiler_gl_spirv::PLUGIN)
        .compiler(xr_compiler_vk_spirv::PLUGIN)
        .bindings("shaders.rs")
        .compile();
}
