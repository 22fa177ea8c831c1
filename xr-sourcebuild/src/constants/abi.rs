//! What crosses the plugin boundary for a program's constants: the types
//! a constant, a resource, a handle and a value are made of, the
//! [`ConstantTable`] trait a plugin's table is behind, the
//! [`ResolvedSetter`] a table may hand out for one constant and the
//! [`SetStatus`] codes its writes answer with. A change to any of them is
//! a change of the interface (the crate's ABI rule). The checks a plugin
//! runs on what it is given sit with the types they check
//! ([`ConstantInfo::check`], [`check_binding`]).

// `#[sabi_trait]` expands to impls inside a const block.
#![allow(non_local_definitions)]

use abi_stable::{
    StableAbi, sabi_trait,
    std_types::{RSlice, RStr, RString, RVec},
};
use std::fmt;
use xr_device::{ProgramRef, ResourceBinding, ResourceKind, XrResult};
// Named in the docs only.
#[cfg(doc)]
use super::{ConstantTableBox, ConstantTableExt, Setter};

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

/// One set of a batch ([`ConstantTable::set_many`]).
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq)]
pub struct ConstantSet<'a> {
    /// The constant.
    pub handle: ConstantHandle,
    /// Its value.
    pub value: ConstantValue<'a>,
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
            binding.what()
        )));
    }
    let wanted = if resource.kind == ResourceKind::AccelerationStructure {
        "acceleration structure"
    } else if resource.kind.takes_texture() {
        "texture"
    } else {
        "buffer"
    };
    if wanted != binding.what() {
        let article = |what: &str| if what.starts_with('a') { format!("an {what}") } else { format!("a {what}") };
        return Err(XrError::invalid_input(format!(
            "'{name}' is {}: it takes {}, not {}",
            article(resource.kind.name()),
            article(wanted),
            article(binding.what())
        )));
    }
    match resource.kind {
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

/// A value of `ty` from `data`, not transposed.
pub(super) fn value(ty: ConstantType, data: ConstantData<'_>) -> ConstantValue<'_> {
    ConstantValue { ty, transpose: false, data }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acceleration_structures_bind_only_to_theirs_and_buffers_bind_by_their_size() {
        let info =
            |kind, min_size| ResourceInfo { name: "scene".into(), kind, set: 0, binding: 1, array_size: 1, min_size };
        let buffer = ResourceBinding {
            device: 7,
            is_texture: false,
            handle: 1,
            object: 1,
            sampler: 0,
            size: 64,
            storage: true,
            acceleration_structure: false,
        };
        let error = check_binding(&info(ResourceKind::AccelerationStructure, 0), &buffer, 7).unwrap_err().to_string();
        assert!(
            error.contains("'scene' is an acceleration structure: it takes an acceleration structure, not a buffer"),
            "{error}"
        );
        let scene = ResourceBinding { acceleration_structure: true, size: 0, storage: false, ..buffer };
        assert!(check_binding(&info(ResourceKind::AccelerationStructure, 0), &scene, 7).is_ok());
        let error = check_binding(&info(ResourceKind::StorageBuffer, 0), &scene, 7).unwrap_err().to_string();
        assert!(error.contains("it takes a buffer, not an acceleration structure"), "{error}");
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
    fn element_count_needs_whole_elements() {
        let v = value(ConstantType::vector(ScalarKind::Float, 3), ConstantData::Float((&[0.0; 6][..]).into()));
        assert_eq!(v.element_count(), Some(2));
        let v = value(ConstantType::vector(ScalarKind::Float, 3), ConstantData::Float((&[0.0; 4][..]).into()));
        assert_eq!(v.element_count(), None);
        let v = value(ConstantType::vector(ScalarKind::Float, 3), ConstantData::Float((&[][..]).into()));
        assert_eq!(v.element_count(), None);
    }
}
