//! Builds the material library (`xr.toml`) into a store under `OUT_DIR`,
//! as `xr build` would, with the compilers linked into this script, and
//! writes its typed bindings there for `src/lib.rs` to include: cargo
//! reruns this when a shader, an include, the manifest or a compiler
//! changes, and only then.
fn main() {
    xr_cargo::Build::new("xr.toml")
        .compiler(xr_compiler_glsl::PLUGIN)
        .compiler(xr_compiler_gl_spirv::PLUGIN)
        .compiler(xr_compiler_vk_spirv::PLUGIN)
        .compiler(xr_compiler_slang::PLUGIN)
        .bindings("materials.rs")
        .compile();
}
