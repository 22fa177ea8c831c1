//! The constant table: XR's take on D3DX's `ID3DXConstantTable`.
//!
//! Look a constant up by name once (`"color"`, `"light.position"`,
//! `"weights[2]"`) into a [`ConstantHandle`], then set it with a typed
//! setter from [`ConstantTableExt`]. The build system checks the value's type
//! and count against the declaration: a wrong type or an unknown name is an
//! error returned to the caller, never a silent driver error.

// `#[sabi_trait]` expands to impls inside a const block.
#![allow(non_local_definitions)]

use abi_stable::{
    StableAbi, sabi_trait,
    std_types::{
        RBox,
        ROption::{self, RNone, RSome},
        RSlice, RStr, RString, RVec,
    },
};
use std::fmt;
use xr_device::{ProgramRef, ResourceBinding, ResourceKind, XrResult};

/// The scalar kind of a constant's components.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarKind {
    /// `bool`, `bvecN`.
    Bool,
    /// `int`, `ivecN`.
    Int,
    /// `uint`, `uvecN`.
    UInt,
    /// `float`, `vecN`, `matNxM`.
    Float,
    /// A sampler or image unit, set with an int.
    Sampler,
    /// A type XR cannot set (doubles, atomic counters).
    Unsupported,
}

/// The declared type of a constant: a scalar, vector or matrix of a kind.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConstantType {
    /// Kind of each component.
    pub scalar: ScalarKind,
    /// Matrix columns; 1 for scalars and vectors.
    pub columns: u8,
    /// Components per column: 1 for scalars, N for `vecN`, M for `matNxM`.
    pub rows: u8,
}

impl ConstantType {
    /// A scalar or vector of `rows` components.
    pub const fn vector(scalar: ScalarKind, rows: u8) -> Self {
        Self { scalar, columns: 1, rows }
    }

    /// A float matrix of `columns` × `rows`.
    pub const fn matrix(columns: u8, rows: u8) -> Self {
        Self { scalar: ScalarKind::Float, columns, rows }
    }

    /// Components in one element.
    pub fn components(self) -> usize {
        usize::from(self.columns) * usize::from(self.rows)
    }
}

impl fmt::Display for ConstantType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (scalar, prefix) = match self.scalar {
            ScalarKind::Bool => ("bool", "b"),
            ScalarKind::Int => ("int", "i"),
            ScalarKind::UInt => ("uint", "u"),
            ScalarKind::Float => ("float", ""),
            ScalarKind::Sampler => return f.write_str("sampler"),
            ScalarKind::Unsupported => return f.write_str("unsupported"),
        };
        match (self.columns, self.rows) {
            (1, 1) => f.write_str(scalar),
            (1, n) => write!(f, "{prefix}vec{n}"),
            (c, r) if c == r => write!(f, "mat{c}"),
            (c, r) => write!(f, "mat{c}x{r}"),
        }
    }
}

/// One active constant of a built program.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct ConstantInfo {
    /// Full name without a trailing `[0]`: `color`, `light.position`, `weights`.
    pub name: RString,
    /// Declared type of one element.
    pub ty: ConstantType,
    /// Array length; 1 for a non-array.
    pub array_size: u32,
}

impl ConstantInfo {
    /// Checks that `value` may be set from array element `element` on: its
    /// type is the declared one (a sampler also takes an `int`), its data is
    /// whole elements, and they fit the array. Returns the element count.
    pub fn check(&self, element: u32, value: &ConstantValue<'_>) -> Result<usize, xr_device::XrError> {
        use xr_device::XrError;
        if let Some(count) = self.fits(element, value) {
            return Ok(count);
        }
        let declared = self.ty;
        let name = &self.name;
        let accepts = value.ty == declared
            || (declared.scalar == ScalarKind::Sampler && value.ty == ConstantType::vector(ScalarKind::Int, 1));
        if !accepts || !value.data.holds(declared.scalar) {
            return Err(XrError::invalid_input(format!(
                "constant '{name}' is {declared}, cannot set it from a {} value",
                value.ty
            )));
        }
        let count = value.element_count().ok_or_else(|| {
            XrError::invalid_input(format!("value for '{name}' is not a whole number of {declared} elements"))
        })?;
        let remaining = self.array_size.saturating_sub(element) as usize;
        if count > remaining {
            return Err(XrError::invalid_input(format!(
                "{count} elements do not fit '{name}' from element {element} ({} active element(s): elements past the last one the shader uses are removed by the compiler)",
                self.array_size
            )));
        }
        Ok(count)
    }

    /// [`ConstantInfo::check`] without its error, for the hot path: the
    /// element count where `value` may be set from element `element` on.
    #[inline]
    pub fn fits(&self, element: u32, value: &ConstantValue<'_>) -> Option<usize> {
        let declared = self.ty;
        let accepts = value.ty == declared
            || (declared.scalar == ScalarKind::Sampler && value.ty == ConstantType::vector(ScalarKind::Int, 1));
        if !accepts || !value.data.holds(declared.scalar) {
            return None;
        }
        let count = value.element_count()?;
        (count <= self.array_size.saturating_sub(element) as usize).then_some(count)
    }
}

/// Where a constant that lives in a buffer (a uniform block member, a push
/// constant) keeps each component, as SPIR-V reflection gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberLayout {
    /// Type of one element.
    pub ty: ConstantType,
    /// Array length; 1 for a non-array.
    pub array_size: u32,
    /// Bytes from one array element to the next.
    pub array_stride: usize,
    /// Bytes from one matrix column (or row, if `row_major`) to the next.
    pub matrix_stride: usize,
    /// The matrix is stored row by row.
    pub row_major: bool,
}

impl MemberLayout {
    /// Where each word of `value` goes when the member starts at byte
    /// `offset`, from array element `first` on: (byte offset, word).
    /// `value` must have passed [`ConstantInfo::check`].
    #[cfg(test)]
    fn writes(&self, offset: usize, first: u32, value: &ConstantValue<'_>) -> Vec<(usize, u32)> {
        let mut writes = Vec::with_capacity(value.data.len());
        self.visit(offset, first, value, |at, word| writes.push((at, word)));
        writes
    }

    /// Writes `value` into `target` (the block's bytes, little-endian)
    /// where the member starting at byte `offset` keeps it, from array
    /// element `first` on, without allocating. Writes nothing and returns
    /// `false` where a component would lie outside `target`. `value` must
    /// have passed [`ConstantInfo::check`].
    pub fn write_into(&self, target: &mut [u8], offset: usize, first: u32, value: &ConstantValue<'_>) -> bool {
        let mut end = 0;
        self.visit(offset, first, value, |at, _| end = end.max(at + 4));
        if end > target.len() {
            return false;
        }
        self.visit(offset, first, value, |at, word| target[at..at + 4].copy_from_slice(&word.to_le_bytes()));
        true
    }

    /// Calls `write(byte offset, word)` for each component of `value`.
    #[inline]
    fn visit(&self, offset: usize, first: u32, value: &ConstantValue<'_>, mut write: impl FnMut(usize, u32)) {
        let (columns, rows) = (usize::from(self.ty.columns), usize::from(self.ty.rows));
        let per = (columns * rows).max(1);
        let elements = value.element_count().unwrap_or(0);
        for element in 0..elements {
            let start = offset + (first as usize + element) * self.array_stride;
            for c in 0..columns {
                for r in 0..rows {
                    let index = element * per + if value.transpose { r * columns + c } else { c * rows + r };
                    let at = if columns == 1 {
                        start + r * 4
                    } else if self.row_major {
                        start + r * self.matrix_stride + c * 4
                    } else {
                        start + c * self.matrix_stride + r * 4
                    };
                    write(at, value.data.word(index));
                }
            }
        }
    }
}

/// One resource of a built program: a texture, sampler, storage image or
/// buffer the caller binds ([`ConstantTableExt::set_texture`],
/// [`ConstantTableExt::set_buffer`]).
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct ResourceInfo {
    /// The name in the source: `albedo`, `particles` (a block's instance
    /// name, or its block name when it has none).
    pub name: RString,
    /// What is bound to it.
    pub kind: ResourceKind,
    /// Vulkan descriptor set; 0 on OpenGL.
    pub set: u32,
    /// Vulkan binding; on OpenGL the texture unit, image unit or buffer
    /// binding point the device gave the program.
    pub binding: u32,
    /// Array length; 1 for a non-array.
    pub array_size: u32,
    /// Bytes a buffer must have at least (the block's fixed part); 0 when unknown.
    pub min_size: u64,
}

/// Marks the handles of resources (their `index` counts resources, not constants).
pub const RESOURCE_HANDLE: u32 = 1 << 30;

/// A looked-up constant, valid for the table that returned it.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConstantHandle {
    /// Identifies the table (program) that returned the handle.
    pub owner: u32,
    /// Index into the table's constants.
    pub index: u32,
    /// First array element the handle addresses.
    pub element: u32,
    /// Where that element lives on the device: a GL uniform location, or
    /// the byte offset of a block member (uniform blocks, Vulkan push
    /// constants and uniform buffers).
    pub location: i32,
}

/// Component values, by scalar kind, borrowed from the caller: a set
/// crosses the plugin ABI without an allocation on either side.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq)]
pub enum ConstantData<'a> {
    /// Bools as 0 or 1.
    Bool(RSlice<'a, u32>),
    /// Signed ints (also sampler units).
    Int(RSlice<'a, i32>),
    /// Unsigned ints.
    UInt(RSlice<'a, u32>),
    /// Floats; matrices column-major unless `transpose` is set.
    Float(RSlice<'a, f32>),
}

impl ConstantData<'_> {
    /// Whether these are components of `scalar` (a sampler's unit is an int).
    #[inline]
    pub fn holds(&self, scalar: ScalarKind) -> bool {
        matches!(
            (scalar, self),
            (ScalarKind::Float, ConstantData::Float(_))
                | (ScalarKind::Int | ScalarKind::Sampler, ConstantData::Int(_))
                | (ScalarKind::UInt, ConstantData::UInt(_))
                | (ScalarKind::Bool, ConstantData::Bool(_))
        )
    }

    /// Component `index` as a 32-bit word (a float as its bits, a bool as 0 or 1).
    #[inline]
    pub fn word(&self, index: usize) -> u32 {
        match self {
            ConstantData::Float(v) => v[index].to_bits(),
            ConstantData::Int(v) => v[index] as u32,
            ConstantData::UInt(v) | ConstantData::Bool(v) => v[index],
        }
    }

    /// Number of components.
    pub fn len(&self) -> usize {
        match self {
            ConstantData::Bool(v) | ConstantData::UInt(v) => v.len(),
            ConstantData::Int(v) => v.len(),
            ConstantData::Float(v) => v.len(),
        }
    }

    /// Whether there are no components.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A value to set: the type the caller means, and one or more elements,
/// borrowed.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq)]
pub struct ConstantValue<'a> {
    /// The type of one element, which must equal the declared type.
    pub ty: ConstantType,
    /// Matrices given row-major (`SetMatrixTranspose`).
    pub transpose: bool,
    /// `ty.components()` values per element, one or more elements.
    pub data: ConstantData<'a>,
}

impl<'a> ConstantValue<'a> {
    /// Floats of type `ty` (column-major matrices), borrowed.
    pub fn floats(ty: ConstantType, data: &'a [f32]) -> Self {
        Self { ty, transpose: false, data: ConstantData::Float(data.into()) }
    }

    /// Ints of type `ty`, borrowed.
    pub fn ints(ty: ConstantType, data: &'a [i32]) -> Self {
        Self { ty, transpose: false, data: ConstantData::Int(data.into()) }
    }

    /// Unsigned ints of type `ty`, borrowed.
    pub fn uints(ty: ConstantType, data: &'a [u32]) -> Self {
        Self { ty, transpose: false, data: ConstantData::UInt(data.into()) }
    }
}

/// One set of a batch ([`ConstantTable::set_many`]).
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq)]
pub struct ConstantSet<'a> {
    /// The constant.
    pub handle: ConstantHandle,
    /// Its value.
    pub value: ConstantValue<'a>,
}

impl ConstantValue<'_> {
    /// Number of whole elements in `data`, or `None` if it is not a whole number.
    pub fn element_count(&self) -> Option<usize> {
        let per = self.ty.components();
        let len = self.data.len();
        if per == 0 || len == 0 {
            return None;
        }
        // One element, the common set, without a division.
        if len == per {
            return Some(1);
        }
        // Arrays: a division by each element size the types have is a
        // multiply and a shift; by a run-time value it costs tens of cycles
        // on a hot path whose driver call costs about a hundred.
        let count = match per {
            1 => len,
            2 => len / 2,
            3 => len / 3,
            4 => len / 4,
            6 => len / 6,
            8 => len / 8,
            9 => len / 9,
            12 => len / 12,
            16 => len / 16,
            _ => len / per,
        };
        (count * per == len).then_some(count)
    }
}

/// The constant table of one built program.
#[sabi_trait]
pub trait ConstantTable {
    /// Every active constant.
    fn constants(&self) -> XrResult<RVec<ConstantInfo>>;

    /// Looks a constant up by name: `color`, `light.position`, `weights[2]`.
    fn lookup(&self, name: RStr<'_>) -> XrResult<ConstantHandle>;

    /// Sets a value; its type must match and it must fit the array.
    fn set(&mut self, handle: ConstantHandle, value: &ConstantValue<'_>) -> XrResult<()>;

    /// Sets several values in one call (a material's whole set); stops at
    /// the first that fails, with that constant named.
    fn set_many(&mut self, sets: RSlice<'_, ConstantSet<'_>>) -> XrResult<()>;

    /// Restores every constant to the initialiser written in the source.
    fn set_defaults(&mut self) -> XrResult<()>;

    /// Sets a value the classic way, for hosts that use `glUniform*`: binds
    /// `pipeline`, makes this table's program its active program
    /// (`glActiveShaderProgram`), then calls `glUniform*`.
    fn set_through_pipeline(
        &mut self,
        pipeline: ProgramRef,
        handle: ConstantHandle,
        value: &ConstantValue<'_>,
    ) -> XrResult<()>;

    /// Every resource the program binds.
    fn resources(&self) -> XrResult<RVec<ResourceInfo>>;

    /// Binds a texture or buffer of the program's device to a resource
    /// (`handle` from `lookup`, array element included): the wrong kind, a
    /// buffer smaller than the block, or another device's object is an error.
    #[sabi(last_prefix_field)]
    fn set_resource(&mut self, handle: ConstantHandle, binding: &ResourceBinding) -> XrResult<()>;

    /// Resolves `handle` once into a [`ResolvedSetter`] whose sets skip the
    /// table; `Unavailable` where the table has none for it (set through
    /// [`ConstantTable::set`] then). A plugin built before this method
    /// existed answers with the default, `Unavailable`.
    fn resolve(&self, handle: ConstantHandle) -> XrResult<ResolvedSetter> {
        let _ = handle;
        abi_stable::std_types::RResult::RErr(xr_device::XrError::unavailable(
            "this constant table resolves no setters; set through the table",
        ))
    }

    /// Sets a value on the hot path ([`ConstantTableExt`]'s setters call
    /// it where the table resolved no setter for the handle): the same checks as [`ConstantTable::set`], answered with
    /// a [`SetStatus`] code instead of an error value, so that a set moves
    /// no error across the ABI and pays no `Result` conversion. Any status
    /// but [`SetStatus::SET`] means "not set": the host then calls `set`,
    /// whose error names the constant. It must not unwind. The default,
    /// [`SetStatus::REFUSED`], sends every set to `set`.
    fn write(&mut self, handle: ConstantHandle, value: &ConstantValue<'_>) -> u32 {
        let _ = (handle, value);
        SetStatus::REFUSED
    }
}

/// A setter a table resolved once for one constant
/// ([`ConstantTable::resolve`]). A set through it skips the table's
/// per-call work (the call through the trait object, the panic guard, the
/// handle's lookup and check): the caller checks the value against `ty`
/// and the array, then calls the plugin's `write` directly. Valid while
/// its table lives, whatever else is done with the table meanwhile (a
/// plugin's `write` holds what stays put — a program and a location, the
/// device — not a borrow of table state a call could move):
/// [`ConstantTableBox`] keeps the setters it resolved beside the table and
/// mixes their sets with the table's own calls, and [`Setter`] borrows the
/// table for as long as it lives.
#[repr(C)]
#[derive(StableAbi, Clone)]
pub struct ResolvedSetter {
    /// The plugin's write of a value already checked against `ty` and the
    /// array: a [`SetStatus`] code. It must not unwind (it catches its own
    /// panics: [`SetStatus::PANICKED`]).
    pub write: unsafe extern "C" fn(&ResolvedSetter, &ConstantValue<'_>) -> u32,
    /// The plugin's state for `write` (its table's device), valid while the
    /// table lives.
    pub context: *const core::ffi::c_void,
    /// The plugin's words for `write` (a program and a location).
    pub words: [u32; 4],
    /// The constant's declared type.
    pub ty: ConstantType,
    /// The array element the handle addresses (0 for a non-array).
    pub element: u32,
    /// The array's length (1 for a non-array).
    pub array_size: u32,
    /// The constant's name, for errors.
    pub name: RString,
}

/// What a [`ResolvedSetter`]'s write returns: a plain code, so that a set
/// moves no error value across the ABI; the host names the constant.
pub struct SetStatus;

impl SetStatus {
    /// The value was set.
    pub const SET: u32 = 0;
    /// The device is closed, or its context cannot be made current.
    pub const DEVICE_UNAVAILABLE: u32 = 1;
    /// The plugin panicked.
    pub const PANICKED: u32 = 2;
    /// Not set: the handle or the value does not pass the table's checks,
    /// or the table has no fast path for it ([`ConstantTable::write`]).
    pub const REFUSED: u32 = 3;
    /// The driver reported an error (its code in the low 16 bits), where
    /// the plugin polls for one.
    pub const DRIVER_ERROR: u32 = 1 << 16;

    /// The error a status other than [`SetStatus::SET`] means, for the constant `name`.
    pub fn error(status: u32, name: &str) -> xr_device::XrError {
        use xr_device::{ErrorKind, XrError};
        match status {
            Self::DEVICE_UNAVAILABLE => XrError::unavailable(format!(
                "setting '{name}': the device is closed or its context cannot be made current"
            )),
            Self::PANICKED => XrError::new(ErrorKind::Panic, format!("plugin panicked setting '{name}'")),
            code if code & Self::DRIVER_ERROR != 0 => {
                XrError::driver(format!("setting '{name}' failed with driver error 0x{:04x}", code & 0xffff))
            }
            code => XrError::driver(format!("setting '{name}' failed (status {code})")),
        }
    }
}

impl ResolvedSetter {
    /// Elements from the handle's on.
    #[inline]
    fn remaining(&self) -> usize {
        self.array_size.saturating_sub(self.element) as usize
    }

    /// The common case of [`ConstantInfo::check`] without building a
    /// name: the declared type, whole elements that fit.
    #[inline]
    fn takes(&self, value: &ConstantValue<'_>) -> bool {
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

impl fmt::Debug for ResolvedSetter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResolvedSetter")
            .field("name", &self.name)
            .field("ty", &self.ty)
            .field("element", &self.element)
            .field("array_size", &self.array_size)
            .finish_non_exhaustive()
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

impl ConstantTableBox {
    /// A setter resolved once for `handle`; `Unavailable` where the table
    /// has none for it (Vulkan's push constants are copied into the table's
    /// bytes, already at a copy's cost: set through the table there).
    pub fn setter(&self, handle: ConstantHandle) -> Result<Setter<'_>, xr_device::XrError> {
        let resolved = self.resolve(handle).into_result()?;
        Ok(Setter { resolved, table: core::marker::PhantomData })
    }
}

impl Setter<'_> {
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

impl ConstantTableBox {
    /// The same typed setters, applied with `glActiveShaderProgram` + `glUniform*`.
    pub fn through_pipeline(&mut self, pipeline: ProgramRef) -> ThroughPipeline<'_> {
        ThroughPipeline { table: self, pipeline }
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

/// A constant table behind the ABI, with the setters it resolved for the
/// handles set through it.
///
/// A set through the table ([`ConstantTableExt`]) of a handle seen before
/// takes a resolved setter's path ([`ConstantTableBox::setter`]): the
/// first set of a handle asks the plugin to resolve it
/// ([`ConstantTable::resolve`]) and keeps the answer, so that later sets
/// skip the call through the trait object, the panic guard and the
/// table's lookup, and cost what a typed setter costs. Where the table
/// resolves none (Vulkan, uniform-block members, a plugin without
/// setters) the set goes to [`ConstantTable::write`], then, if that did
/// not set it, to [`ConstantTable::set`] for the error. The resolved
/// setters live and die with the table (this struct owns both): none
/// outlives it. Every other operation is the table's own (`Deref`).
#[repr(C)]
#[derive(StableAbi)]
pub struct ConstantTableBox {
    table: ConstantTable_TO<'static, RBox<()>>,
    /// By handle index: the first handle of that index set through the
    /// table, and what resolving it gave.
    resolved: RVec<ROption<CachedSetter>>,
    /// How many constants the table has (indices at or past it are kept
    /// nowhere); `u32::MAX` until the first handle is resolved.
    constant_count: u32,
}

/// A handle's resolved setter, kept by its [`ConstantTableBox`].
#[repr(C)]
#[derive(StableAbi)]
struct CachedSetter {
    handle: ConstantHandle,
    /// `None` where the table resolves no setter for the handle.
    setter: ROption<ResolvedSetter>,
}

impl ConstantTableBox {
    /// Wraps a plugin's table (plugins call `constant_table_box`).
    pub fn new(table: ConstantTable_TO<'static, RBox<()>>) -> Self {
        Self { table, resolved: RVec::new(), constant_count: u32::MAX }
    }

    /// Resolves `handle` and keeps what that gave, unless its slot is
    /// taken or the handle is not the table's (that error is `set`'s to
    /// report).
    #[cold]
    fn remember(&mut self, handle: ConstantHandle) {
        if self.constant_count == u32::MAX {
            // Once: a handle's index counts the table's constants (resources
            // and block members are marked by high bits, and resolve none).
            let count = self.table.constants().into_result().map_or(0, |constants| constants.len());
            self.constant_count = u32::try_from(count).unwrap_or(0).min(u32::MAX - 1);
        }
        let index = handle.index as usize;
        if index >= self.constant_count as usize || matches!(self.resolved.get(index), Some(RSome(_))) {
            return;
        }
        let setter = match self.table.resolve(handle).into_result() {
            Ok(setter) => RSome(setter),
            Err(error) if error.kind == xr_device::ErrorKind::Unavailable => RNone,
            Err(_) => return,
        };
        while self.resolved.len() <= index {
            self.resolved.push(RNone);
        }
        self.resolved[index] = RSome(CachedSetter { handle, setter });
    }

    /// Sets `value` through the setter resolved for `handle` (resolving it
    /// on the handle's first set): the write's [`SetStatus`], or
    /// [`SetStatus::REFUSED`], having tried nothing, where there is none or
    /// the value does not pass its checks. A plain code keeps the hot path
    /// free of error values; [`Self::kept_error`] names the constant.
    #[inline]
    fn set_resolved(&mut self, handle: ConstantHandle, value: &ConstantValue<'_>) -> u32 {
        let index = handle.index as usize;
        if let Some(RSome(kept)) = self.resolved.get(index) {
            return if kept.handle == handle { kept.set(value) } else { SetStatus::REFUSED };
        }
        self.remember(handle);
        match self.resolved.get(index) {
            Some(RSome(kept)) if kept.handle == handle => kept.set(value),
            _ => SetStatus::REFUSED,
        }
    }

    /// The error a kept setter's failed write means, naming the constant.
    #[cold]
    fn kept_error(&self, handle: ConstantHandle, status: u32) -> xr_device::XrError {
        let name = match self.resolved.get(handle.index as usize) {
            Some(RSome(CachedSetter { setter: RSome(setter), .. })) => setter.name.as_str(),
            _ => "?",
        };
        SetStatus::error(status, name)
    }
}

impl CachedSetter {
    /// Sets `value` through the kept setter: its write's status, or
    /// [`SetStatus::REFUSED`] where there is none or the value is not of
    /// the declared type or does not fit.
    #[inline]
    fn set(&self, value: &ConstantValue<'_>) -> u32 {
        let RSome(setter) = &self.setter else { return SetStatus::REFUSED };
        if !setter.takes(value) {
            return SetStatus::REFUSED;
        }
        // SAFETY: the setter was resolved from the table this one is kept
        // beside, which is alive (the caller borrows it) and cannot have
        // been swapped out (the box hands out no `&mut` to it); the value
        // is of the declared type and fits the array from the handle's
        // element (checked above).
        unsafe { (setter.write)(setter, value) }
    }
}

impl core::ops::Deref for ConstantTableBox {
    type Target = ConstantTable_TO<'static, RBox<()>>;

    fn deref(&self) -> &Self::Target {
        &self.table
    }
}

// No `DerefMut`: a table swapped or replaced through it would leave its
// kept setters beside another table. The table's `&mut self` calls are
// forwarded instead.
impl ConstantTableBox {
    /// [`ConstantTable::set`].
    pub fn set(&mut self, handle: ConstantHandle, value: &ConstantValue<'_>) -> XrResult<()> {
        self.table.set(handle, value)
    }

    /// [`ConstantTable::set_many`].
    pub fn set_many(&mut self, sets: RSlice<'_, ConstantSet<'_>>) -> XrResult<()> {
        self.table.set_many(sets)
    }

    /// [`ConstantTable::set_defaults`].
    pub fn set_defaults(&mut self) -> XrResult<()> {
        self.table.set_defaults()
    }

    /// [`ConstantTable::set_through_pipeline`].
    pub fn set_through_pipeline(
        &mut self,
        pipeline: ProgramRef,
        handle: ConstantHandle,
        value: &ConstantValue<'_>,
    ) -> XrResult<()> {
        self.table.set_through_pipeline(pipeline, handle, value)
    }

    /// [`ConstantTable::set_resource`].
    pub fn set_resource(&mut self, handle: ConstantHandle, binding: &ResourceBinding) -> XrResult<()> {
        self.table.set_resource(handle, binding)
    }

    /// [`ConstantTable::write`].
    pub fn write(&mut self, handle: ConstantHandle, value: &ConstantValue<'_>) -> u32 {
        self.table.write(handle, value)
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
        self.set_binding(h, buffer)
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

fn value(ty: ConstantType, data: ConstantData<'_>) -> ConstantValue<'_> {
    ConstantValue { ty, transpose: false, data }
}

/// A vector length as the `rows` of a type; lengths over 255 cannot match any type.
fn rows(len: usize) -> u8 {
    u8::try_from(len).unwrap_or(u8::MAX)
}

impl ConstantTableExt for ConstantTableBox {
    fn handle(&self, name: &str) -> Result<ConstantHandle, xr_device::XrError> {
        self.lookup(name.into()).into_result()
    }

    #[inline]
    fn set_value(&mut self, handle: ConstantHandle, value: ConstantValue<'_>) -> Result<(), xr_device::XrError> {
        match self.set_resolved(handle, &value) {
            SetStatus::SET => return Ok(()),
            // Tried once: a write that panicked or met a closed device is not repeated.
            status if status != SetStatus::REFUSED => return Err(self.kept_error(handle, status)),
            _ => {}
        }
        if self.table.write(handle, &value) == SetStatus::SET {
            return Ok(());
        }
        // Not set: `set` checks again and says why, naming the constant.
        self.table.set(handle, &value).into_result()
    }

    /// Each set through its resolved setter while there is one; the rest
    /// in one call across the ABI ([`ConstantTable::set_many`]).
    fn set_values(&mut self, sets: &[ConstantSet<'_>]) -> Result<(), xr_device::XrError> {
        for (done, set) in sets.iter().enumerate() {
            match self.set_resolved(set.handle, &set.value) {
                SetStatus::SET => {}
                SetStatus::REFUSED => return self.table.set_many(sets[done..].into()).into_result(),
                status => return Err(self.kept_error(set.handle, status)),
            }
        }
        Ok(())
    }

    fn set_binding(&mut self, handle: ConstantHandle, binding: &ResourceBinding) -> Result<(), xr_device::XrError> {
        self.set_resource(handle, binding).into_result()
    }
}

/// Checks that `binding` may go to `resource`: a texture to a texture
/// kind, a buffer to a buffer kind, a storage image made for storage, a
/// buffer as large as the block, an object of `device`.
pub fn check_binding(
    resource: &ResourceInfo,
    binding: &ResourceBinding,
    device: u64,
) -> Result<(), xr_device::XrError> {
    use xr_device::XrError;
    let name = &resource.name;
    if binding.device != device {
        return Err(XrError::invalid_input(format!(
            "'{name}': the {} belongs to another device than this program's",
            if binding.is_texture { "texture" } else { "buffer" }
        )));
    }
    if resource.kind.takes_texture() != binding.is_texture {
        return Err(XrError::invalid_input(format!(
            "'{name}' is a {}: it takes a {}, not a {}",
            resource.kind.name(),
            if resource.kind.takes_texture() { "texture" } else { "buffer" },
            if binding.is_texture { "texture" } else { "buffer" }
        )));
    }
    match resource.kind {
        ResourceKind::AccelerationStructure => Err(XrError::invalid_input(format!(
            "'{name}' is an acceleration structure: XR's devices make none to bind (the program builds and lists it, \
             and cannot be drawn without one)"
        ))),
        ResourceKind::CombinedImageSampler | ResourceKind::Sampler if binding.sampler == 0 => Err(
            XrError::invalid_input(format!("'{name}' is a {}: bind a texture with a sampler", resource.kind.name())),
        ),
        ResourceKind::StorageImage if !binding.storage => Err(XrError::invalid_input(format!(
            "'{name}' is a storage image: the texture must be made with TextureDesc::storage"
        ))),
        ResourceKind::StorageBuffer if !binding.storage => Err(XrError::invalid_input(format!(
            "'{name}' is a storage buffer: the buffer must be made with BufferUsage::STORAGE"
        ))),
        ResourceKind::UniformBuffer | ResourceKind::StorageBuffer if binding.size < resource.min_size => {
            Err(XrError::invalid_input(format!(
                "'{name}' needs a buffer of at least {} bytes; this one has {}",
                resource.min_size, binding.size
            )))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_binds_to_an_acceleration_structure_and_buffers_bind_by_their_size() {
        let info =
            |kind, min_size| ResourceInfo { name: "scene".into(), kind, set: 0, binding: 1, array_size: 1, min_size };
        let buffer =
            ResourceBinding { device: 7, is_texture: false, handle: 1, object: 1, sampler: 0, size: 64, storage: true };
        let error = check_binding(&info(ResourceKind::AccelerationStructure, 0), &buffer, 7).unwrap_err().to_string();
        assert!(error.contains("'scene' is an acceleration structure: XR's devices make none to bind"), "{error}");
        assert!(check_binding(&info(ResourceKind::StorageBuffer, 64), &buffer, 7).is_ok());
        let error = check_binding(&info(ResourceKind::StorageBuffer, 65), &buffer, 7).unwrap_err().to_string();
        assert!(error.contains("at least 65 bytes; this one has 64"), "{error}");
    }

    #[test]
    fn type_names() {
        assert_eq!(ConstantType::vector(ScalarKind::Float, 4).to_string(), "vec4");
        assert_eq!(ConstantType::vector(ScalarKind::Int, 1).to_string(), "int");
        assert_eq!(ConstantType::vector(ScalarKind::UInt, 3).to_string(), "uvec3");
        assert_eq!(ConstantType::matrix(4, 4).to_string(), "mat4");
        assert_eq!(ConstantType::matrix(2, 3).to_string(), "mat2x3");
    }

    #[test]
    fn member_writes_follow_strides_and_majority() {
        let m = MemberLayout {
            ty: ConstantType::matrix(2, 2),
            array_size: 1,
            array_stride: 0,
            matrix_stride: 16,
            row_major: false,
        };
        let v = value(ConstantType::matrix(2, 2), ConstantData::Float((&[1.0, 2.0, 3.0, 4.0][..]).into()));
        let at: Vec<usize> = m.writes(32, 0, &v).iter().map(|(at, _)| *at).collect();
        assert_eq!(at, [32, 36, 48, 52], "column-major: columns 16 bytes apart");
        let row_major = MemberLayout { row_major: true, ..m };
        let w = row_major.writes(0, 0, &v);
        assert_eq!(w[1], (16, 2.0f32.to_bits()), "element (column 0, row 1) is in the second row");
        let array = MemberLayout {
            ty: ConstantType::vector(ScalarKind::Float, 1),
            array_size: 3,
            array_stride: 16,
            matrix_stride: 0,
            row_major: false,
        };
        let v = value(ConstantType::vector(ScalarKind::Float, 1), ConstantData::Float((&[5.0, 6.0][..]).into()));
        let at: Vec<usize> = array.writes(0, 1, &v).iter().map(|(at, _)| *at).collect();
        assert_eq!(at, [16, 32], "std140 arrays: 16-byte stride, from element 1");
    }

    #[test]
    fn the_hot_path_check_agrees_with_the_one_that_explains() {
        let info =
            ConstantInfo { name: "weights".into(), ty: ConstantType::vector(ScalarKind::Float, 2), array_size: 3 };
        let sampler =
            ConstantInfo { name: "albedo".into(), ty: ConstantType::vector(ScalarKind::Sampler, 1), array_size: 1 };
        let floats = [0.0f32; 8];
        let vec2 = ConstantType::vector(ScalarKind::Float, 2);
        let cases = [
            (&info, 0, ConstantValue::floats(vec2, &floats[..2])),
            (&info, 0, ConstantValue::floats(vec2, &floats[..6])),
            (&info, 1, ConstantValue::floats(vec2, &floats[..6])),
            (&info, 2, ConstantValue::floats(vec2, &floats[..2])),
            (&info, 3, ConstantValue::floats(vec2, &floats[..2])),
            (&info, 0, ConstantValue::floats(vec2, &floats[..3])),
            (&info, 0, ConstantValue::floats(vec2, &[])),
            (&info, 0, ConstantValue::floats(ConstantType::vector(ScalarKind::Float, 4), &floats[..4])),
            (&info, 0, value(vec2, ConstantData::Int((&[0i32, 0][..]).into()))),
            (&sampler, 0, ConstantValue::ints(ConstantType::vector(ScalarKind::Int, 1), &[3])),
            (&sampler, 0, ConstantValue::uints(ConstantType::vector(ScalarKind::UInt, 1), &[3])),
        ];
        let fitting: Vec<Option<usize>> =
            cases.iter().map(|(info, element, value)| info.fits(*element, value)).collect();
        assert_eq!(fitting, [Some(1), Some(3), None, Some(1), None, None, None, None, None, Some(1), None]);
        for ((info, element, value), fits) in cases.iter().zip(fitting) {
            assert_eq!(info.check(*element, value).ok(), fits, "{value:?} from element {element}");
        }
    }

    #[test]
    fn a_member_written_into_its_block_lands_where_its_layout_says_or_nowhere() {
        let array = MemberLayout {
            ty: ConstantType::vector(ScalarKind::Float, 2),
            array_size: 2,
            array_stride: 16,
            matrix_stride: 0,
            row_major: false,
        };
        let v =
            value(ConstantType::vector(ScalarKind::Float, 2), ConstantData::Float((&[1.0, 2.0, 3.0, 4.0][..]).into()));
        let mut block = [0u8; 40];
        assert!(array.write_into(&mut block, 8, 0, &v));
        let word = |at: usize| f32::from_le_bytes(block[at..at + 4].try_into().unwrap());
        assert_eq!([word(8), word(12), word(24), word(28)], [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(array.writes(8, 0, &v).len(), 4);
        // One word past the end: nothing written at all.
        let mut short = [0u8; 31];
        assert!(!array.write_into(&mut short, 8, 0, &v));
        assert_eq!(short, [0u8; 31]);
    }

    #[test]
    fn element_count_needs_whole_elements() {
        let v = value(ConstantType::vector(ScalarKind::Float, 3), ConstantData::Float((&[0.0; 6][..]).into()));
        assert_eq!(v.element_count(), Some(2));
        let v = value(ConstantType::vector(ScalarKind::Float, 3), ConstantData::Float((&[0.0; 4][..]).into()));
        assert_eq!(v.element_count(), None);
        let v = value(ConstantType::vector(ScalarKind::Float, 3), ConstantData::Float((&[][..]).into()));
        assert_eq!(v.element_count(), None);
    }
}
