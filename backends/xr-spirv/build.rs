//! Links shaderc statically from Debian's archives.
//!
//! Debian's shared `libshaderc.so` leaves glslang symbols undefined for the
//! `shaderc` crate, and its `libshaderc_combined.a` holds only shaderc's own
//! objects; so `shaderc-sys` links `shaderc_combined` (feature
//! `prefer-static-linking`) and this script adds glslang and SPIRV-Tools
//! after it, in dependency order. See docs/SPIRV.md.

fn main() {
    let dir = std::env::var("XR_SHADERC_LIB_DIR").unwrap_or_else(|_| "/usr/lib/x86_64-linux-gnu".to_owned());
    println!("cargo:rerun-if-env-changed=XR_SHADERC_LIB_DIR");
    println!("cargo:rustc-link-search=native={dir}");
    for lib in [
        "shaderc_combined",
        "glslang",
        "MachineIndependent",
        "GenericCodeGen",
        "OSDependent",
        "HLSL",
        "OGLCompiler",
        "SPIRV",
        "glslang-default-resource-limits",
        "SPIRV-Tools-opt",
        "SPIRV-Tools",
    ] {
        if !std::path::Path::new(&dir).join(format!("lib{lib}.a")).exists() {
            panic!(
                "lib{lib}.a is not in {dir}: install Debian's libshaderc-dev, glslang-dev and spirv-tools \
                 (scripts/setup.sh does), or set XR_SHADERC_LIB_DIR"
            );
        }
        println!("cargo:rustc-link-lib=static={lib}");
    }
    println!("cargo:rustc-link-lib=dylib=stdc++");
}
