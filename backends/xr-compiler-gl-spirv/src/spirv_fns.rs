//! `glShaderBinary` and `glSpecializeShader`, which glow does not wrap.

use std::ffi::{CStr, c_char, c_void};
use xr_device::{GlLoader, XrError};
use xr_gl_common::gl_ext::entry_point;

/// `GL_SHADER_BINARY_FORMAT_SPIR_V_ARB`.
pub const SHADER_BINARY_FORMAT_SPIR_V: u32 = 0x9551;

type ShaderBinary =
    unsafe extern "system" fn(count: i32, shaders: *const u32, format: u32, binary: *const c_void, length: i32);
type SpecializeShader = unsafe extern "system" fn(
    shader: u32,
    entry_point: *const c_char,
    count: u32,
    indices: *const u32,
    values: *const u32,
);

/// The SPIR-V loading entry points.
pub struct SpirvFns {
    shader_binary: ShaderBinary,
    specialize_shader: SpecializeShader,
}

impl SpirvFns {
    /// Loads both entry points (`glSpecializeShaderARB` where core 4.6 is absent).
    pub fn load(loader: &GlLoader) -> Result<Self, XrError> {
        let shader_binary = entry_point(loader, c"glShaderBinary")?;
        let specialize =
            entry_point(loader, c"glSpecializeShader").or_else(|_| entry_point(loader, c"glSpecializeShaderARB"))?;
        // SAFETY: each pointer is the entry point of that name, of this type.
        unsafe {
            Ok(Self {
                shader_binary: std::mem::transmute::<*const c_void, ShaderBinary>(shader_binary),
                specialize_shader: std::mem::transmute::<*const c_void, SpecializeShader>(specialize),
            })
        }
    }

    /// Hands `words` to `shader` and specializes its `entry_point`.
    ///
    /// # Safety
    /// The device's context must be current and `shader` a shader object on it.
    pub unsafe fn load_module(&self, shader: u32, words: &[u32], entry_point: &CStr, constants: &[(u32, u32)]) {
        let ids: Vec<u32> = constants.iter().map(|(id, _)| *id).collect();
        let values: Vec<u32> = constants.iter().map(|(_, bits)| *bits).collect();
        // SAFETY: upheld by the caller; the pointers are valid for the lengths given.
        unsafe {
            (self.shader_binary)(
                1,
                &shader,
                SHADER_BINARY_FORMAT_SPIR_V,
                words.as_ptr().cast(),
                (words.len() * 4) as i32,
            );
            (self.specialize_shader)(shader, entry_point.as_ptr(), ids.len() as u32, ids.as_ptr(), values.as_ptr());
        }
    }
}
