//! The `glProgramUniform*` (and `glUniform*`) calls that set a constant,
//! and the writes of the setters a table resolves.

use super::poll_errors;
use crate::device_gl::DeviceGl;
use glow::HasContext;
use xr_device::XrError;
use xr_sourcebuild::{ConstantData, ConstantType, ConstantValue, ResolvedSetter, ScalarKind, SetStatus, guard_setter};

/// Which program `glUniform*` calls set.
pub(super) enum Target {
    /// `glProgramUniform*` on this program.
    Program(glow::Program),
    /// `glUniform*` on the active program of the bound pipeline.
    ActiveProgram,
}

/// The write of a resolved setter of type `ty`: a function of its own for
/// each float type (the type a constant, the dispatch on it gone at
/// compile time), one for the rest.
pub(super) fn resolved_write(ty: ConstantType) -> unsafe extern "C" fn(&ResolvedSetter, &ConstantValue<'_>) -> u32 {
    match (ty.scalar, ty.columns, ty.rows) {
        (ScalarKind::Float, 1, 1) => write_floats::<1, 1>,
        (ScalarKind::Float, 1, 2) => write_floats::<1, 2>,
        (ScalarKind::Float, 1, 3) => write_floats::<1, 3>,
        (ScalarKind::Float, 1, 4) => write_floats::<1, 4>,
        (ScalarKind::Float, 2, 2) => write_floats::<2, 2>,
        (ScalarKind::Float, 3, 3) => write_floats::<3, 3>,
        (ScalarKind::Float, 4, 4) => write_floats::<4, 4>,
        _ => write_any,
    }
}

/// A resolved float setter's write ([`resolved_write`]).
unsafe extern "C" fn write_floats<const COLUMNS: u8, const ROWS: u8>(
    setter: &ResolvedSetter,
    value: &ConstantValue<'_>,
) -> u32 {
    let ty = ConstantType { scalar: ScalarKind::Float, columns: COLUMNS, rows: ROWS };
    let ConstantData::Float(floats) = &value.data else {
        // SAFETY: as `write_checked` asks; `ty` is the setter's (see `resolved_write`).
        return guard_setter(|| unsafe { write_checked(setter, value, ty) });
    };
    // The hot path: the GL call chosen when this function was (its type is
    // the constant's, fixed at resolve time), no dispatch on the value.
    guard_setter(|| {
        // SAFETY: `context` is the table's `DeviceGl` (see `resolve`),
        // alive while the host may call the setter.
        let device = unsafe { &*setter.context.cast::<DeviceGl>() };
        let Ok(gl) = device.current() else { return SetStatus::DEVICE_UNAVAILABLE };
        let Some(program) = std::num::NonZeroU32::new(setter.words[0]) else {
            return SetStatus::DEVICE_UNAVAILABLE;
        };
        let (program, at) = (glow::NativeProgram(program), Some(&glow::NativeUniformLocation(setter.words[1])));
        let (transpose, v) = (value.transpose, floats.as_slice());
        // SAFETY: the program is alive (its table is); the host checked
        // that the value holds whole elements of this type that fit.
        unsafe {
            match (COLUMNS, ROWS) {
                (1, 1) => gl.program_uniform_1_f32_slice(program, at, v),
                (1, 2) => gl.program_uniform_2_f32_slice(program, at, v),
                (1, 3) => gl.program_uniform_3_f32_slice(program, at, v),
                (1, 4) => gl.program_uniform_4_f32_slice(program, at, v),
                (2, 2) => gl.program_uniform_matrix_2_f32_slice(program, at, transpose, v),
                (3, 3) => gl.program_uniform_matrix_3_f32_slice(program, at, transpose, v),
                _ => gl.program_uniform_matrix_4_f32_slice(program, at, transpose, v),
            }
            set_status(gl)
        }
    })
}

/// A resolved write's status: set, unless `XR_GL_CHECK_ERRORS` asks the
/// driver and it reports an error.
///
/// # Safety
/// `gl` is current, after the write.
#[inline(always)]
pub(super) unsafe fn set_status(gl: &glow::Context) -> u32 {
    if !poll_errors() {
        return SetStatus::SET;
    }
    // SAFETY: plain query on the current context.
    match unsafe { gl.get_error() } {
        glow::NO_ERROR => SetStatus::SET,
        error => SetStatus::DRIVER_ERROR | (error & 0xffff),
    }
}

/// A resolved setter's write for the types without one of their own.
unsafe extern "C" fn write_any(setter: &ResolvedSetter, value: &ConstantValue<'_>) -> u32 {
    // SAFETY: as `write_checked` asks.
    guard_setter(|| unsafe { write_checked(setter, value, setter.ty) })
}

/// Writes a value the host checked against the setter's type, straight
/// to `glProgramUniform*` on the table's program, behind the context check.
///
/// # Safety
/// `setter` is one the table's `resolve` made, its table alive; `ty` is
/// the setter's type and `value` was checked against it.
#[inline(always)]
unsafe fn write_checked(setter: &ResolvedSetter, value: &ConstantValue<'_>, ty: ConstantType) -> u32 {
    // SAFETY: `context` is the table's `DeviceGl` (see `resolve`), alive
    // while the host may call the setter.
    let device = unsafe { &*setter.context.cast::<DeviceGl>() };
    let Ok(gl) = device.current() else { return SetStatus::DEVICE_UNAVAILABLE };
    let Some(program) = std::num::NonZeroU32::new(setter.words[0]) else { return SetStatus::DEVICE_UNAVAILABLE };
    let location = glow::NativeUniformLocation(setter.words[1]);
    // SAFETY: the program is alive (its table is) and the value has the
    // declared type and fits the array.
    unsafe {
        write_value(gl, Target::Program(glow::NativeProgram(program)), &location, ty, value.transpose, &value.data);
        set_status(gl)
    }
}

/// Turns a pending GL error into an error naming the constant.
pub(super) unsafe fn gl_result(gl: &glow::Context, name: &str) -> Result<(), XrError> {
    // SAFETY: plain query on the current context.
    match unsafe { gl.get_error() } {
        glow::NO_ERROR => Ok(()),
        error => Err(XrError::driver(format!("setting '{name}' failed with GL error 0x{error:04x}"))),
    }
}

/// `glProgramUniform*` (or `glUniform*`) for one or more elements starting at `location`.
#[inline(always)]
pub(super) unsafe fn write_value(
    gl: &glow::Context,
    target: Target,
    location: &glow::NativeUniformLocation,
    ty: ConstantType,
    transpose: bool,
    data: &ConstantData<'_>,
) {
    let at = Some(location);
    // One call per GL entry point, for both targets.
    macro_rules! call {
        ($program_fn:ident, $classic_fn:ident $(, $arg:expr)*) => {
            match target {
                Target::Program(program) => gl.$program_fn(program, at $(, $arg)*),
                Target::ActiveProgram => gl.$classic_fn(at $(, $arg)*),
            }
        };
    }
    let ints: &[i32] = match data {
        ConstantData::Int(v) => v,
        // GL takes any non-zero int as true.
        // SAFETY: u32 and i32 have one size and alignment, and every bit
        // pattern is an i32; the slice borrows the caller's data as long.
        ConstantData::Bool(v) => unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<i32>(), v.len()) },
        _ => &[],
    };
    // SAFETY: the caller checked that `data` holds whole elements of `ty`.
    unsafe {
        match (data, ty.columns, ty.rows) {
            (ConstantData::Float(v), 1, 1) => call!(program_uniform_1_f32_slice, uniform_1_f32_slice, v),
            (ConstantData::Float(v), 1, 2) => call!(program_uniform_2_f32_slice, uniform_2_f32_slice, v),
            (ConstantData::Float(v), 1, 3) => call!(program_uniform_3_f32_slice, uniform_3_f32_slice, v),
            (ConstantData::Float(v), 1, 4) => call!(program_uniform_4_f32_slice, uniform_4_f32_slice, v),
            (ConstantData::Float(v), 2, 2) => {
                call!(program_uniform_matrix_2_f32_slice, uniform_matrix_2_f32_slice, transpose, v)
            }
            (ConstantData::Float(v), 2, 3) => {
                call!(program_uniform_matrix_2x3_f32_slice, uniform_matrix_2x3_f32_slice, transpose, v)
            }
            (ConstantData::Float(v), 2, 4) => {
                call!(program_uniform_matrix_2x4_f32_slice, uniform_matrix_2x4_f32_slice, transpose, v)
            }
            (ConstantData::Float(v), 3, 2) => {
                call!(program_uniform_matrix_3x2_f32_slice, uniform_matrix_3x2_f32_slice, transpose, v)
            }
            (ConstantData::Float(v), 3, 3) => {
                call!(program_uniform_matrix_3_f32_slice, uniform_matrix_3_f32_slice, transpose, v)
            }
            (ConstantData::Float(v), 3, 4) => {
                call!(program_uniform_matrix_3x4_f32_slice, uniform_matrix_3x4_f32_slice, transpose, v)
            }
            (ConstantData::Float(v), 4, 2) => {
                call!(program_uniform_matrix_4x2_f32_slice, uniform_matrix_4x2_f32_slice, transpose, v)
            }
            (ConstantData::Float(v), 4, 3) => {
                call!(program_uniform_matrix_4x3_f32_slice, uniform_matrix_4x3_f32_slice, transpose, v)
            }
            (ConstantData::Float(v), 4, 4) => {
                call!(program_uniform_matrix_4_f32_slice, uniform_matrix_4_f32_slice, transpose, v)
            }
            (ConstantData::Int(_) | ConstantData::Bool(_), 1, 1) => {
                call!(program_uniform_1_i32_slice, uniform_1_i32_slice, ints)
            }
            (ConstantData::Int(_) | ConstantData::Bool(_), 1, 2) => {
                call!(program_uniform_2_i32_slice, uniform_2_i32_slice, ints)
            }
            (ConstantData::Int(_) | ConstantData::Bool(_), 1, 3) => {
                call!(program_uniform_3_i32_slice, uniform_3_i32_slice, ints)
            }
            (ConstantData::Int(_) | ConstantData::Bool(_), 1, 4) => {
                call!(program_uniform_4_i32_slice, uniform_4_i32_slice, ints)
            }
            (ConstantData::UInt(v), 1, 1) => call!(program_uniform_1_u32_slice, uniform_1_u32_slice, v),
            (ConstantData::UInt(v), 1, 2) => call!(program_uniform_2_u32_slice, uniform_2_u32_slice, v),
            (ConstantData::UInt(v), 1, 3) => call!(program_uniform_3_u32_slice, uniform_3_u32_slice, v),
            (ConstantData::UInt(v), 1, 4) => call!(program_uniform_4_u32_slice, uniform_4_u32_slice, v),
            _ => {}
        }
    }
}
