//! Constants and resources with their type in Rust's: the handles the code
//! `xr bindgen` generates resolves once at load ([`Constant`],
//! [`Texture`], [`Buffer`]). A `vec4` constant takes `[f32; 4]` and
//! nothing else, so a wrong type is a compile error rather than a failed
//! set; its declared type is checked once, at [`Constant::resolve`]. A set
//! is the table's set of a resolved handle, as [`ConstantTableExt`]'s.

use super::{
    abi::{ConstantData, ConstantHandle, ConstantType, ScalarKind, value},
    cache::ConstantTableBox,
    setters::ConstantTableExt,
};
use core::marker::PhantomData;
use xr_device::ResourceBinding;
pub use xr_device::XrError;

/// A GLSL type as Rust holds one element of it.
pub trait ConstantKind {
    /// The declared type of one element.
    const TYPE: ConstantType;
    /// One element: `f32`, `[f32; 4]`, `[f32; 16]` (a matrix column by column).
    type Element: Copy;
    /// Sets `elements` from the handle's element on.
    fn set<T: ConstantTableExt + ?Sized>(
        table: &mut T,
        handle: ConstantHandle,
        elements: &[Self::Element],
    ) -> Result<(), XrError>;
}

macro_rules! kinds {
    ($($(#[$doc:meta])* $name:ident: $element:ty = $scalar:ident $columns:literal x $rows:literal, $data:ident $(, $flatten:ident)*;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name;

        impl ConstantKind for $name {
            const TYPE: ConstantType = ConstantType { scalar: ScalarKind::$scalar, columns: $columns, rows: $rows };
            type Element = $element;
            #[inline]
            fn set<T: ConstantTableExt + ?Sized>(
                table: &mut T,
                handle: ConstantHandle,
                elements: &[$element],
            ) -> Result<(), XrError> {
                table.set_value(handle, value(Self::TYPE, ConstantData::$data(elements$(.$flatten())*.into())))
            }
        }
    )*};
}

kinds! {
    /// `float`.
    Float: f32 = Float 1 x 1, Float;
    /// `vec2`.
    Vec2: [f32; 2] = Float 1 x 2, Float, as_flattened;
    /// `vec3`.
    Vec3: [f32; 3] = Float 1 x 3, Float, as_flattened;
    /// `vec4`.
    Vec4: [f32; 4] = Float 1 x 4, Float, as_flattened;
    /// `int`.
    Int: i32 = Int 1 x 1, Int;
    /// `ivec2`.
    IVec2: [i32; 2] = Int 1 x 2, Int, as_flattened;
    /// `ivec3`.
    IVec3: [i32; 3] = Int 1 x 3, Int, as_flattened;
    /// `ivec4`.
    IVec4: [i32; 4] = Int 1 x 4, Int, as_flattened;
    /// `uint`.
    UInt: u32 = UInt 1 x 1, UInt;
    /// `uvec2`.
    UVec2: [u32; 2] = UInt 1 x 2, UInt, as_flattened;
    /// `uvec3`.
    UVec3: [u32; 3] = UInt 1 x 3, UInt, as_flattened;
    /// `uvec4`.
    UVec4: [u32; 4] = UInt 1 x 4, UInt, as_flattened;
    /// `mat2`, column by column.
    Mat2: [f32; 4] = Float 2 x 2, Float, as_flattened;
    /// `mat3`, column by column.
    Mat3: [f32; 9] = Float 3 x 3, Float, as_flattened;
    /// `mat4`, column by column (`glam::Mat4::to_cols_array`'s order).
    Mat4: [f32; 16] = Float 4 x 4, Float, as_flattened;
}

/// `bool`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bool;

impl ConstantKind for Bool {
    const TYPE: ConstantType = ConstantType::vector(ScalarKind::Bool, 1);
    type Element = bool;
    fn set<T: ConstantTableExt + ?Sized>(
        table: &mut T,
        handle: ConstantHandle,
        elements: &[bool],
    ) -> Result<(), XrError> {
        table.set_bool_array(handle, elements)
    }
}

/// A constant of the kind `K`, resolved in one program's table.
pub struct Constant<K> {
    handle: ConstantHandle,
    array_size: u32,
    kind: PhantomData<fn() -> K>,
}

impl<K> Clone for Constant<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for Constant<K> {}

impl<K> core::fmt::Debug for Constant<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Constant").field("handle", &self.handle).field("array_size", &self.array_size).finish()
    }
}

impl<K: ConstantKind> Constant<K> {
    /// Looks `name` up in `table` and checks that it is declared `K`: an
    /// error names the constant and both types (the program was rebuilt
    /// from a changed source the bindings were not generated from).
    pub fn resolve(table: &ConstantTableBox, name: &str) -> Result<Self, XrError> {
        let handle = table.handle(name)?;
        let constants = table.constants().into_result()?;
        let info = constants.iter().find(|c| c.name.as_str() == name.trim_end_matches("[0]"));
        let array_size = match info {
            Some(info) if info.ty == K::TYPE => info.array_size,
            Some(info) => {
                return Err(XrError::invalid_input(format!(
                    "constant '{name}' is declared {} in the program loaded, and {} in its bindings: \
                     generate them again from this build",
                    info.ty,
                    K::TYPE
                )));
            }
            None => 1,
        };
        Ok(Self { handle, array_size, kind: PhantomData })
    }

    /// The handle, for the untyped setters.
    pub fn handle(&self) -> ConstantHandle {
        self.handle
    }

    /// The array length (1 for a non-array).
    pub fn array_size(&self) -> u32 {
        self.array_size
    }

    /// Sets the constant (a non-array's value, an array's first element).
    #[inline]
    pub fn set<T: ConstantTableExt + ?Sized>(&self, table: &mut T, value: &K::Element) -> Result<(), XrError> {
        K::set(table, self.handle, core::slice::from_ref(value))
    }

    /// Sets an array's elements from the first on.
    #[inline]
    pub fn set_array<T: ConstantTableExt + ?Sized>(&self, table: &mut T, values: &[K::Element]) -> Result<(), XrError> {
        K::set(table, self.handle, values)
    }
}

macro_rules! resource {
    ($(#[$doc:meta])* $name:ident, $setter:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name {
            handle: ConstantHandle,
        }

        impl $name {
            /// Looks the resource `name` up in `table`.
            pub fn resolve(table: &ConstantTableBox, name: &str) -> Result<Self, XrError> {
                Ok(Self { handle: table.handle(name)? })
            }

            /// Binds `binding` to it.
            pub fn set<T: ConstantTableExt + ?Sized>(&self, table: &mut T, binding: &ResourceBinding) -> Result<(), XrError> {
                table.$setter(self.handle, binding)
            }

            /// The handle, for the untyped setters.
            pub fn handle(&self) -> ConstantHandle {
                self.handle
            }
        }
    };
}

resource!(
    /// A texture (a sampled or storage image, with its sampler where it is read through one).
    Texture,
    set_texture
);
resource!(
    /// A uniform or storage buffer.
    Buffer,
    set_buffer
);
