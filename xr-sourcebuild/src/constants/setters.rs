//! The host's typed setters over a constant table: [`ConstantTableExt`]
//! (D3DX's `SetFloat` / `SetVector` / `SetMatrix` family, for any table and
//! for [`ThroughPipeline`]), and the setters resolved once for one
//! constant ([`Setter`], and [`FloatSetter`] with its type checked once).
//! A resolved setter's set is one check and one call ([`ResolvedSetter`]'s
//! `takes` and `call` below), the same for [`Setter`], [`FloatSetter`] and
//! the setters a [`ConstantTableBox`] keeps.

use super::{
    abi::{
        ConstantData, ConstantHandle, ConstantInfo, ConstantSet, ConstantType, ConstantValue, ResolvedSetter,
        ScalarKind, SetStatus, value,
    },
    cache::ConstantTableBox,
};
use xr_device::{ProgramRef, ResourceBinding};
// Named in the docs only.
#[cfg(doc)]
use super::ConstantTable;

/// The host's side of a resolved setter: the checks a value passes before
/// the plugin's write, and the write.
impl ResolvedSetter {
    /// Elements from the handle's on.
    #[inline]
    fn remaining(&self) -> usize {
        self.array_size.saturating_sub(self.element) as usize
    }

    /// The common case of [`ConstantInfo::check`] without building a
    /// name: the declared type, whole elements that fit.
    #[inline]
    pub(super) fn takes(&self, value: &ConstantValue<'_>) -> bool {
        value.ty == self.ty
            && value.data.holds(value.ty.scalar)
            && value.element_count().is_some_and(|count| count <= self.remaining())
    }

    /// [`ConstantInfo::check`] for this setter's constant, whose error names it.
    #[cold]
    fn check(&self, value: &ConstantValue<'_>) -> Result<usize, xr_device::XrError> {
        let info = ConstantInfo { name: self.name.clone(), ty: self.ty, array_size: self.array_size };
        info.check(self.element, value)
    }

    /// The plugin's write, its failure naming the constant.
    ///
    /// # Safety
    /// The setter's table is alive, and `value` passed [`Self::takes`] or
    /// [`Self::check`].
    #[inline]
    unsafe fn call(&self, value: &ConstantValue<'_>) -> Result<(), xr_device::XrError> {
        // SAFETY: as the caller promises.
        match unsafe { (self.write)(self, value) } {
            SetStatus::SET => Ok(()),
            status => Err(SetStatus::error(status, &self.name)),
        }
    }
}

/// A constant's setter resolved once ([`ConstantTableBox::setter`]): the
/// typed setters of [`ConstantTableExt`] for one constant, at nearly the
/// raw API call's cost. It borrows its table, which therefore outlives it;
/// like the table, it stays on the thread of the table's device (it is
/// neither `Send` nor `Sync`).
#[derive(Debug)]
pub struct Setter<'t> {
    resolved: ResolvedSetter,
    table: core::marker::PhantomData<&'t ConstantTableBox>,
}

impl Setter<'_> {
    /// A setter over `resolved`, for as long as its table is borrowed
    /// ([`ConstantTableBox::setter`]).
    pub(super) fn new(resolved: ResolvedSetter) -> Self {
        Self { resolved, table: core::marker::PhantomData }
    }

    /// The constant's declared type.
    pub fn ty(&self) -> ConstantType {
        self.resolved.ty
    }

    /// Sets any value: its type must be the declared one and it must fit
    /// the array from the handle's element on.
    #[inline]
    pub fn set(&self, value: ConstantValue<'_>) -> Result<(), xr_device::XrError> {
        if !self.resolved.takes(&value) {
            self.resolved.check(&value)?;
        }
        // SAFETY: the setter borrows its table, which is alive; the value
        // is of the declared type and fits (checked above).
        unsafe { self.resolved.call(&value) }
    }

    /// `float`.
    #[inline]
    pub fn set_float(&self, v: f32) -> Result<(), xr_device::XrError> {
        self.set(ConstantValue::floats(ConstantType::vector(ScalarKind::Float, 1), core::slice::from_ref(&v)))
    }
    /// `vec2`–`vec4` (by the slice's length).
    #[inline]
    pub fn set_vector(&self, v: &[f32]) -> Result<(), xr_device::XrError> {
        self.set(ConstantValue::floats(ConstantType::vector(ScalarKind::Float, rows(v.len())), v))
    }
    /// `vec4[]`, from the handle's element on.
    #[inline]
    pub fn set_vec4_array(&self, v: &[[f32; 4]]) -> Result<(), xr_device::XrError> {
        self.set(ConstantValue::floats(ConstantType::vector(ScalarKind::Float, 4), v.as_flattened()))
    }
    /// `mat4`, column-major.
    #[inline]
    pub fn set_matrix4(&self, m: &[f32; 16]) -> Result<(), xr_device::XrError> {
        self.set(ConstantValue::floats(ConstantType::matrix(4, 4), m))
    }
    /// `int` (also a sampler's unit).
    #[inline]
    pub fn set_int(&self, v: i32) -> Result<(), xr_device::XrError> {
        self.set(ConstantValue::ints(ConstantType::vector(ScalarKind::Int, 1), core::slice::from_ref(&v)))
    }
    /// `uint`.
    #[inline]
    pub fn set_uint(&self, v: u32) -> Result<(), xr_device::XrError> {
        self.set(ConstantValue::uints(ConstantType::vector(ScalarKind::UInt, 1), core::slice::from_ref(&v)))
    }
}

impl<'t> Setter<'t> {
    /// This setter for values of `N` floats an element (`vec4`: 4, `mat4`:
    /// 16), its type checked now, once, rather than at every set: an
    /// engine that sets one constant every frame pays only the plugin's
    /// write and the driver's call. Fails, naming the constant, where the
    /// declared type is not `N` floats.
    pub fn floats<const N: usize>(self) -> Result<FloatSetter<'t, N>, xr_device::XrError> {
        let ty = self.resolved.ty;
        if ty.scalar != ScalarKind::Float || usize::from(ty.columns) * usize::from(ty.rows) != N {
            return Err(xr_device::XrError::invalid_input(format!(
                "'{}' is {}, not {N} floats an element",
                self.resolved.name, ty
            )));
        }
        Ok(FloatSetter { resolved: self.resolved, table: core::marker::PhantomData })
    }
}

/// A [`Setter`] whose type was checked once ([`Setter::floats`]): `N`
/// floats an element, column-major for matrices.
#[derive(Debug)]
pub struct FloatSetter<'t, const N: usize> {
    resolved: ResolvedSetter,
    table: core::marker::PhantomData<&'t ConstantTableBox>,
}

impl<const N: usize> FloatSetter<'_, N> {
    /// Sets the element the handle addresses.
    #[inline]
    pub fn set(&self, value: &[f32; N]) -> Result<(), xr_device::XrError> {
        self.write(value)
    }

    /// Sets elements from the handle's on: they must fit the array.
    #[inline]
    pub fn set_array(&self, values: &[[f32; N]]) -> Result<(), xr_device::XrError> {
        if values.is_empty() || values.len() > self.resolved.remaining() {
            self.resolved.check(&ConstantValue::floats(self.resolved.ty, values.as_flattened()))?;
        }
        self.write(values.as_flattened())
    }

    #[inline]
    fn write(&self, floats: &[f32]) -> Result<(), xr_device::XrError> {
        // SAFETY: the setter borrows its table, which is alive; the type
        // was checked when this setter was made, and the count by the
        // callers.
        unsafe { self.resolved.call(&ConstantValue::floats(self.resolved.ty, floats)) }
    }
}

/// A constant table's setters routed through a pipeline's active program;
/// see [`ConstantTable::set_through_pipeline`].
pub struct ThroughPipeline<'a> {
    table: &'a mut ConstantTableBox,
    pipeline: ProgramRef,
}

impl<'a> ThroughPipeline<'a> {
    /// `table`'s setters through `pipeline` ([`ConstantTableBox::through_pipeline`]).
    pub(super) fn new(table: &'a mut ConstantTableBox, pipeline: ProgramRef) -> Self {
        Self { table, pipeline }
    }
}

impl ConstantTableExt for ThroughPipeline<'_> {
    fn handle(&self, name: &str) -> Result<ConstantHandle, xr_device::XrError> {
        self.table.handle(name)
    }

    fn set_value(&mut self, handle: ConstantHandle, value: ConstantValue<'_>) -> Result<(), xr_device::XrError> {
        self.table.set_through_pipeline(self.pipeline, handle, &value).into_result()
    }

    fn set_binding(&mut self, handle: ConstantHandle, binding: &ResourceBinding) -> Result<(), xr_device::XrError> {
        self.table.set_resource(handle, binding).into_result()
    }
}

/// Typed setters over [`ConstantTable::set`], named after D3DX's
/// `SetBool` / `SetInt` / `SetFloat` / `SetVector` / `SetMatrix` family.
pub trait ConstantTableExt {
    /// Looks `name` up and fails with its name in the message.
    fn handle(&self, name: &str) -> Result<ConstantHandle, xr_device::XrError>;
    /// Sets any value.
    fn set_value(&mut self, handle: ConstantHandle, value: ConstantValue<'_>) -> Result<(), xr_device::XrError>;

    /// Sets several values: one call across the ABI for all of them where
    /// the table has [`ConstantTable::set_many`], else one set each.
    fn set_values(&mut self, sets: &[ConstantSet<'_>]) -> Result<(), xr_device::XrError> {
        for set in sets {
            self.set_value(set.handle, set.value)?;
        }
        Ok(())
    }
    /// Binds a texture or buffer ([`ConstantTable::set_resource`]).
    fn set_binding(&mut self, handle: ConstantHandle, binding: &ResourceBinding) -> Result<(), xr_device::XrError>;

    /// A texture (with its sampler, for a texture read through one) from
    /// `Device::texture_binding`.
    fn set_texture(&mut self, h: ConstantHandle, texture: &ResourceBinding) -> Result<(), xr_device::XrError> {
        if !texture.is_texture {
            return Err(xr_device::XrError::invalid_input("set_texture was given a buffer: use set_buffer"));
        }
        self.set_binding(h, texture)
    }
    /// A uniform or storage buffer from `Device::buffer_binding`.
    fn set_buffer(&mut self, h: ConstantHandle, buffer: &ResourceBinding) -> Result<(), xr_device::XrError> {
        if buffer.is_texture {
            return Err(xr_device::XrError::invalid_input("set_buffer was given a texture: use set_texture"));
        }
        if buffer.acceleration_structure {
            return Err(xr_device::XrError::invalid_input(
                "set_buffer was given an acceleration structure: use set_acceleration_structure",
            ));
        }
        self.set_binding(h, buffer)
    }
    /// A top-level acceleration structure from `Device::acceleration_structure_binding`.
    fn set_acceleration_structure(
        &mut self,
        h: ConstantHandle,
        scene: &ResourceBinding,
    ) -> Result<(), xr_device::XrError> {
        if !scene.acceleration_structure {
            return Err(xr_device::XrError::invalid_input(format!(
                "set_acceleration_structure was given a {}",
                scene.what()
            )));
        }
        self.set_binding(h, scene)
    }

    /// `bool`.
    fn set_bool(&mut self, h: ConstantHandle, v: bool) -> Result<(), xr_device::XrError> {
        self.set_bool_array(h, &[v])
    }
    /// `bool[]`.
    fn set_bool_array(&mut self, h: ConstantHandle, v: &[bool]) -> Result<(), xr_device::XrError> {
        let ty = ConstantType::vector(ScalarKind::Bool, 1);
        // Bools cross as words; short arrays without an allocation.
        let mut short = [0u32; 16];
        if v.len() <= short.len() {
            for (word, b) in short.iter_mut().zip(v) {
                *word = u32::from(*b);
            }
            return self.set_value(h, value(ty, ConstantData::Bool(short[..v.len()].into())));
        }
        let words: Vec<u32> = v.iter().map(|b| u32::from(*b)).collect();
        self.set_value(h, value(ty, ConstantData::Bool(words.as_slice().into())))
    }
    /// `int` (also a sampler's texture unit).
    fn set_int(&mut self, h: ConstantHandle, v: i32) -> Result<(), xr_device::XrError> {
        self.set_int_array(h, &[v])
    }
    /// `int[]`.
    fn set_int_array(&mut self, h: ConstantHandle, v: &[i32]) -> Result<(), xr_device::XrError> {
        self.set_value(h, value(ConstantType::vector(ScalarKind::Int, 1), ConstantData::Int(v.into())))
    }
    /// `ivecN`, N = `v.len()`.
    fn set_ivec(&mut self, h: ConstantHandle, v: &[i32]) -> Result<(), xr_device::XrError> {
        self.set_value(h, value(ConstantType::vector(ScalarKind::Int, rows(v.len())), ConstantData::Int(v.into())))
    }
    /// Sampler texture unit.
    fn set_sampler(&mut self, h: ConstantHandle, unit: i32) -> Result<(), xr_device::XrError> {
        self.set_value(h, value(ConstantType::vector(ScalarKind::Sampler, 1), ConstantData::Int([unit][..].into())))
    }
    /// `uint`.
    fn set_uint(&mut self, h: ConstantHandle, v: u32) -> Result<(), xr_device::XrError> {
        self.set_uvec(h, &[v])
    }
    /// `uvecN`, N = `v.len()`.
    fn set_uvec(&mut self, h: ConstantHandle, v: &[u32]) -> Result<(), xr_device::XrError> {
        self.set_value(h, value(ConstantType::vector(ScalarKind::UInt, rows(v.len())), ConstantData::UInt(v.into())))
    }
    /// `float`.
    fn set_float(&mut self, h: ConstantHandle, v: f32) -> Result<(), xr_device::XrError> {
        self.set_float_array(h, &[v])
    }
    /// `float[]`.
    fn set_float_array(&mut self, h: ConstantHandle, v: &[f32]) -> Result<(), xr_device::XrError> {
        self.set_value(h, value(ConstantType::vector(ScalarKind::Float, 1), ConstantData::Float(v.into())))
    }
    /// `vecN`, N = `v.len()`.
    fn set_vector(&mut self, h: ConstantHandle, v: &[f32]) -> Result<(), xr_device::XrError> {
        self.set_value(h, value(ConstantType::vector(ScalarKind::Float, rows(v.len())), ConstantData::Float(v.into())))
    }
    /// `vec4[]`.
    fn set_vec4_array(&mut self, h: ConstantHandle, v: &[[f32; 4]]) -> Result<(), xr_device::XrError> {
        self.set_value(
            h,
            value(ConstantType::vector(ScalarKind::Float, 4), ConstantData::Float(v.as_flattened().into())),
        )
    }
    /// `mat4`, column-major.
    fn set_matrix4(&mut self, h: ConstantHandle, m: &[f32; 16]) -> Result<(), xr_device::XrError> {
        self.set_matrix(h, 4, 4, m, false)
    }
    /// `mat4`, row-major (`SetMatrixTranspose`).
    fn set_matrix4_transpose(&mut self, h: ConstantHandle, m: &[f32; 16]) -> Result<(), xr_device::XrError> {
        self.set_matrix(h, 4, 4, m, true)
    }
    /// Any `matCxR` or array of them; `m` holds whole matrices.
    fn set_matrix(
        &mut self,
        h: ConstantHandle,
        columns: u8,
        rows: u8,
        m: &[f32],
        transpose: bool,
    ) -> Result<(), xr_device::XrError> {
        self.set_value(
            h,
            ConstantValue { ty: ConstantType::matrix(columns, rows), transpose, data: ConstantData::Float(m.into()) },
        )
    }
}

/// A vector length as the `rows` of a type; lengths over 255 cannot match any type.
fn rows(len: usize) -> u8 {
    u8::try_from(len).unwrap_or(u8::MAX)
}
