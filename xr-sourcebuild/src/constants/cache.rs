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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        backend::{ConstantTableBackend, constant_table_box},
        constants::{ConstantInfo, ConstantType, ResourceInfo, ScalarKind},
    };
    use std::{cell::RefCell, rc::Rc};
    use xr_device::{ErrorKind, XrError};

    /// What the fake table was asked to do, and what its kept setter answers.
    #[derive(Default)]
    struct Calls {
        resolved: u32,
        kept_writes: u32,
        table_writes: u32,
        table_sets: u32,
        kept_status: u32,
    }

    /// A table of one constant, `vec4 weights[3]` (index 0) of program 1,
    /// that resolves setters for its handles where `resolves`, and counts.
    struct Fake {
        calls: Rc<RefCell<Calls>>,
        resolves: bool,
    }

    const VEC4: ConstantType = ConstantType::vector(ScalarKind::Float, 4);
    const WEIGHTS: ConstantHandle = ConstantHandle { owner: 1, index: 0, element: 0, location: 0 };
    const THIRD: ConstantHandle = ConstantHandle { owner: 1, index: 0, element: 2, location: 2 };
    const FOREIGN: ConstantHandle = ConstantHandle { owner: 2, index: 0, element: 0, location: 0 };

    fn info() -> ConstantInfo {
        ConstantInfo { name: "weights".into(), ty: VEC4, array_size: 3 }
    }

    impl Fake {
        fn check(&self, handle: ConstantHandle, value: &ConstantValue<'_>) -> Result<(), XrError> {
            if handle.owner != 1 {
                return Err(XrError::invalid_input("the handle does not belong to this table"));
            }
            info().check(handle.element, value).map(drop)
        }
    }

    unsafe extern "C" fn kept_write(setter: &ResolvedSetter, _: &ConstantValue<'_>) -> u32 {
        // SAFETY: `context` is the test's `Calls`, alive while its table is.
        let calls = unsafe { &*setter.context.cast::<RefCell<Calls>>() };
        let mut calls = calls.borrow_mut();
        calls.kept_writes += 1;
        calls.kept_status
    }

    impl ConstantTableBackend for Fake {
        fn constants(&self) -> Result<Vec<ConstantInfo>, XrError> {
            Ok(vec![info()])
        }
        fn lookup(&self, _: &str) -> Result<ConstantHandle, XrError> {
            Err(XrError::invalid_input("not looked up here"))
        }
        fn set(&mut self, handle: ConstantHandle, value: &ConstantValue<'_>) -> Result<(), XrError> {
            self.calls.borrow_mut().table_sets += 1;
            self.check(handle, value)
        }
        fn set_defaults(&mut self) -> Result<(), XrError> {
            Ok(())
        }
        fn set_through_pipeline(
            &mut self,
            _: ProgramRef,
            handle: ConstantHandle,
            value: &ConstantValue<'_>,
        ) -> Result<(), XrError> {
            self.set(handle, value)
        }
        fn resources(&self) -> Result<Vec<ResourceInfo>, XrError> {
            Ok(Vec::new())
        }
        fn set_resource(&mut self, _: ConstantHandle, _: &ResourceBinding) -> Result<(), XrError> {
            Ok(())
        }
        fn resolve(&self, handle: ConstantHandle) -> Result<ResolvedSetter, XrError> {
            self.calls.borrow_mut().resolved += 1;
            if !self.resolves {
                return Err(XrError::unavailable("no setters"));
            }
            if handle.owner != 1 {
                return Err(XrError::invalid_input("the handle does not belong to this table"));
            }
            Ok(ResolvedSetter {
                write: kept_write,
                context: Rc::as_ptr(&self.calls).cast(),
                words: [0; 4],
                ty: VEC4,
                element: handle.element,
                array_size: 3,
                name: "weights".into(),
            })
        }
        fn write(&mut self, handle: ConstantHandle, value: &ConstantValue<'_>) -> u32 {
            self.calls.borrow_mut().table_writes += 1;
            if self.check(handle, value).is_ok() { SetStatus::SET } else { SetStatus::REFUSED }
        }
    }

    fn fake(resolves: bool) -> (ConstantTableBox, Rc<RefCell<Calls>>) {
        let calls = Rc::new(RefCell::new(Calls::default()));
        (constant_table_box(Fake { calls: calls.clone(), resolves }), calls)
    }

    fn counts(calls: &RefCell<Calls>) -> [u32; 4] {
        let calls = calls.borrow();
        [calls.resolved, calls.kept_writes, calls.table_writes, calls.table_sets]
    }

    #[test]
    fn a_set_through_the_table_takes_its_kept_setter_and_the_table_the_rest() {
        let (mut table, calls) = fake(true);
        let one = [0.5f32; 4];
        // Seen first, a handle of another program takes no slot.
        let foreign = table.set_vector(FOREIGN, &one).unwrap_err();
        assert!(foreign.message.contains("does not belong"), "{foreign}");
        assert_eq!(counts(&calls), [1, 0, 1, 1], "[resolved, kept writes, table writes, table sets]");
        for _ in 0..3 {
            table.set_vector(WEIGHTS, &one).unwrap();
        }
        assert_eq!(counts(&calls), [2, 3, 1, 1], "resolved on the first set, kept from then on");
        table.set_vec4_array(WEIGHTS, &[one; 3]).unwrap();
        assert_eq!(counts(&calls), [2, 4, 1, 1], "elements that fit: kept");

        // Another element of the array, whose slot the first handle holds: the table's.
        table.set_vector(THIRD, &one).unwrap();
        assert_eq!(counts(&calls), [2, 4, 2, 1]);
        // What the kept setter does not take goes to the table, whose `set` says why.
        let wrong = table.set_float(WEIGHTS, 1.0).unwrap_err();
        assert!(wrong.message.contains("'weights' is vec4, cannot set it from a float"), "{wrong}");
        let past = table.set_vec4_array(WEIGHTS, &[one; 4]).unwrap_err();
        assert!(past.message.contains("do not fit 'weights'"), "{past}");
        let foreign = table.set_vector(FOREIGN, &one).unwrap_err();
        assert!(foreign.message.contains("does not belong"), "{foreign}");
        assert_eq!(counts(&calls), [2, 4, 5, 4]);

        // A batch: the kept setter while it takes them, the rest in one call.
        let value = ConstantValue::floats(VEC4, &one);
        let sets = [ConstantSet { handle: WEIGHTS, value }, ConstantSet { handle: THIRD, value }];
        table.set_values(&sets).unwrap();
        assert_eq!(counts(&calls), [2, 5, 5, 5]);

        // A kept write that fails is an error naming the constant, not retried by the table.
        calls.borrow_mut().kept_status = SetStatus::DEVICE_UNAVAILABLE;
        let closed = table.set_vector(WEIGHTS, &one).unwrap_err();
        assert_eq!(closed.kind, ErrorKind::Unavailable);
        assert!(closed.message.contains("setting 'weights'"), "{closed}");
        let closed = table.set_values(&sets).unwrap_err();
        assert!(closed.message.contains("setting 'weights'"), "{closed}");
        assert_eq!(counts(&calls), [2, 7, 5, 5]);
    }

    #[test]
    fn a_table_that_resolves_no_setters_is_asked_once_a_handle_and_sets_every_value() {
        let (mut table, calls) = fake(false);
        for _ in 0..3 {
            table.set_vector(WEIGHTS, &[0.5; 4]).unwrap();
        }
        table.set_vector(THIRD, &[0.5; 4]).unwrap();
        let wrong = table.set_float(WEIGHTS, 1.0).unwrap_err();
        assert!(wrong.message.contains("cannot set it from a float"), "{wrong}");
        assert_eq!(counts(&calls), [1, 0, 5, 1], "[resolved, kept writes, table writes, table sets]");
    }
}
