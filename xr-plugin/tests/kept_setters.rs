//! The constant table's kept setters (`ConstantTableBox`), driven through
//! the adapter every plugin's table is boxed with: a set through the table
//! takes the setter the table resolved for its handle, and the table itself
//! everything that setter does not take.

use std::{cell::RefCell, rc::Rc};
use xr_device::{ErrorKind, XrError};
use xr_device::{ProgramRef, ResourceBinding};
use xr_plugin::constant_table_box;
use xr_sourcebuild::{
    ConstantHandle, ConstantInfo, ConstantSet, ConstantTableBackend, ConstantTableBox, ConstantTableExt, ConstantType,
    ConstantValue, ResolvedSetter, ResourceInfo, ScalarKind, SetStatus,
};

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
