//! Shaders built and rendered on real drivers (llvmpipe, lavapipe) through every load
//! path, with the plugins loaded from disk.

mod cache_keys;
mod constant_table;
mod deferred;
mod dialect;
mod gl_spirv;
mod glsl_build;
mod library;
mod loose_uniforms;
mod meshlets;
mod not_ready;
mod pipeline_libraries;
mod pipelines;
mod program_binaries;
mod raytraced;
mod resources;
mod shader_objects;
mod slang;
mod triangle;
mod vulkan;
mod warm;
mod wgpu;
