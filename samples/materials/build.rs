//! Builds the material library (`xr.toml`) into a store under `OUT_DIR`,
//! as `xr build` would, and writes its typed bindings there for
//! `src/lib.rs` to include: cargo reruns this when a shader, an include,
//! the manifest or a plugin changes, and only then.
fn main() {
    xr_cargo::Build::new("xr.toml").bindings("materials.rs").compile();
}
