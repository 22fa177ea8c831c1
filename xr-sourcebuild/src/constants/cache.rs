//! The host side of a table behind the ABI: [`ConstantTableBox`], which
//! keeps the setter the plugin resolves for each handle set through it, so
//! that a set through the table costs a resolved setter's set. Its layout
//! crosses the plugin boundary (plugins return it in a built program), so
//! a change to its fields is a change of the interface; its methods run
//! in the host.

use super::{
    abi::{ConstantHandle, ConstantSet, ConstantTable_TO, ConstantValue, ResolvedSetter, SetStatus},
    setters::{ConstantTableExt, Setter, ThroughPipeline},
};
use abi_stable::{
    StableAbi,
    std_types::{
        RBox,
        ROption::{self, RNone, RSome},
        RSlice, RVec,
    },
};
use xr_device::{ProgramRef, ResourceBinding, XrResult};
// Named in the docs only.
#[cfg(doc)]
use super::ConstantTable;

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

/// What the box offers beside the table's own `&self` calls (`Deref`):
/// setters resolved once, the pipeline's setters, and the table's `&mut
/// self` calls forwarded. There is no `DerefMut`: a table swapped or
/// replaced through it would leave its kept setters beside another table.
impl ConstantTableBox {
    /// Wraps a plugin's table (plugins call `constant_table_box`).
    pub fn new(table: ConstantTable_TO<'static, RBox<()>>) -> Self {
        Self { table, resolved: RVec::new(), constant_count: u32::MAX }
    }

    /// A setter resolved once for `handle`; `Unavailable` where the table
    /// has none for it (Vulkan's push constants are copied into the table's
    /// bytes, already at a copy's cost: set through the table there).
    pub fn setter(&self, handle: ConstantHandle) -> Result<Setter<'_>, xr_device::XrError> {
        let resolved = self.resolve(handle).into_result()?;
        Ok(Setter::new(resolved))
    }

    /// The same typed setters, applied with `glActiveShaderProgram` + `glUniform*`.
    pub fn through_pipeline(&mut self, pipeline: ProgramRef) -> ThroughPipeline<'_> {
        ThroughPipeline::new(self, pipeline)
    }

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

/// The kept setters: a set through the table takes the one kept for its
/// handle, resolved on the handle's first set.
impl ConstantTableBox {
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
