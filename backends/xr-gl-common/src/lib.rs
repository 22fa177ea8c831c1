//! What XR's OpenGL build system plugins share, linked into each of them:
//! the device's GL reached through its native handles, the GL 4.1
//! separable-program entry points glow lacks, program creation and linking,
//! the constant table over `glProgramUniform*`, and driver info logs turned
//! into diagnostics.

pub mod constant_table;
pub mod device_gl;
pub mod gl_ext;
pub mod info_log;
pub mod link;
pub mod pipelines;
pub mod resources;
