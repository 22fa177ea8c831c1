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
    /// The write of `value` by the setter kept for `handle`: its
    /// [`SetStatus`], or [`SetStatus::REFUSED`], having tried nothing, where
    /// none is kept for the handle or the value does not pass its checks.
    /// This and the write are all a set of a kept handle costs: one look-up
    /// by index (the slot, then its handle) before a resolved setter's own
    /// check and call. A plain code keeps the hot path free of error
    /// values; [`Self::kept_error`] names the constant. Always inlined, as
    /// `set_value` is: left to LLVM, one build inlined the hot path and the
    /// next did not (a set through the table 20 instructions dearer).
    #[inline(always)]
    fn write_kept(&self, handle: ConstantHandle, value: &ConstantValue<'_>) -> u32 {
        match self.resolved.get(handle.index as usize) {
            // The slot's index is the handle's: the rest must match.
            Some(RSome(CachedSetter { handle: kept, setter: RSome(setter) }))
                if kept.owner == handle.owner
                    && kept.element == handle.element
                    && kept.location == handle.location
                    && setter.takes(value) =>
            {
                // SAFETY: the setter was resolved from the table it is kept
                // beside, which is alive (the caller borrows it) and cannot
                // have been swapped out (the box hands out no `&mut` to it);
                // the value is of the declared type and fits the array from
                // the handle's element (`takes`).
                unsafe { (setter.write)(setter, value) }
            }
            _ => SetStatus::REFUSED,
        }
    }

    /// [`Self::write_kept`], the handle's setter resolved and kept on its
    /// first set (`set_values`' path).
    #[inline]
    fn set_resolved(&mut self, handle: ConstantHandle, value: &ConstantValue<'_>) -> u32 {
        match self.write_kept(handle, value) {
            SetStatus::REFUSED if self.remember(handle) => self.write_kept(handle, value),
            status => status,
        }
    }

    /// The rest of a set that the kept setter did not make (`status`, from
    /// [`Self::write_kept`]), out of line so that the callers' hot path
    /// stays the kept write: on the handle's first set its setter is
    /// resolved, kept and tried; a failed kept write is an error naming the
    /// constant; anything else goes to the table.
    #[inline(never)]
    fn set_unkept(
        &mut self,
        handle: ConstantHandle,
        value: &ConstantValue<'_>,
        status: u32,
    ) -> Result<(), xr_device::XrError> {
        let status = match status {
            SetStatus::REFUSED if self.remember(handle) => self.write_kept(handle, value),
            status => status,
        };
        match status {
            SetStatus::SET => return Ok(()),
            SetStatus::REFUSED => {}
            // Tried once: a write that panicked or met a closed device is not repeated.
            status => return Err(self.kept_error(handle, status)),
        }
        if self.table.write(handle, value) == SetStatus::SET {
            return Ok(());
        }
        // Not set: `set` checks again and says why, naming the constant.
        self.table.set(handle, value).into_result()
    }

    /// Keeps the setter the table resolves for `handle` where the handle's
    /// slot is free: whether it kept one. A taken slot (the handle's
    /// setter, or none, or another handle's of its index) costs a check.
    #[inline]
    fn remember(&mut self, handle: ConstantHandle) -> bool {
        !matches!(self.resolved.get(handle.index as usize), Some(RSome(_))) && self.keep(handle)
    }

    /// Resolves `handle` into its free slot: whether that kept a setter.
    /// Nothing is kept where the handle is not the table's (that error is
    /// `set`'s to report).
    #[cold]
    #[inline(never)]
    fn keep(&mut self, handle: ConstantHandle) -> bool {
        if self.constant_count == u32::MAX {
            // Once: a handle's index counts the table's constants (resources
            // and block members are marked by high bits, and resolve none).
            let count = self.table.constants().into_result().map_or(0, |constants| constants.len());
            self.constant_count = u32::try_from(count).unwrap_or(0).min(u32::MAX - 1);
        }
        let index = handle.index as usize;
        if index >= self.constant_count as usize {
            return false;
        }
        let setter = match self.table.resolve(handle).into_result() {
            Ok(setter) => RSome(setter),
            Err(error) if error.kind == xr_device::ErrorKind::Unavailable => RNone,
            Err(_) => return false,
        };
        let kept = setter.is_rsome();
        while self.resolved.len() <= index {
            self.resolved.push(RNone);
        }
        self.resolved[index] = RSome(CachedSetter { handle, setter });
        kept
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

    /// The kept setter's write, inlined into the caller; the rest of a set
    /// out of line (`set_unkept`).
    #[inline(always)]
    fn set_value(&mut self, handle: ConstantHandle, value: ConstantValue<'_>) -> Result<(), xr_device::XrError> {
        match self.write_kept(handle, &value) {
            SetStatus::SET => Ok(()),
            status => self.set_unkept(handle, &value, status),
        }
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
