//! What build systems reach the device through: the loader's context is
//! the device's number in [`OPEN`], and these functions look it up there
//! (see [`Shared`]).

use super::Shared;
use ash::vk::{self, Handle};
use std::{
    collections::BTreeMap,
    ffi::{c_char, c_void},
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
};
use xr_device::VulkanProgram;

/// The open devices' shared state, by the number their loaders carry as
/// context. A device adds itself when it opens and removes itself first
/// thing when it closes.
pub(super) static OPEN: Mutex<BTreeMap<usize, Arc<Shared>>> = Mutex::new(BTreeMap::new());

/// The number the next device opened gets (never 0: a null context is no device's).
pub(super) static NEXT_DEVICE: AtomicUsize = AtomicUsize::new(1);

/// The shared state of the open device whose loader carries `context`;
/// `None` once that device is closed. The context is only ever compared,
/// never dereferenced.
fn open_device(context: *const c_void) -> Option<Arc<Shared>> {
    // A poisoned table is still the truth about which devices are open.
    OPEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&context.addr()).cloned()
}

pub(super) unsafe extern "C" fn loader_get_instance_proc_addr(
    context: *const c_void,
    instance: u64,
    name: *const c_char,
) -> *const c_void {
    let Some(shared) = open_device(context) else { return std::ptr::null() };
    if name.is_null() {
        return std::ptr::null();
    }
    // SAFETY: `name` is a NUL-terminated string (the loader's contract) and
    // `instance` a handle the device gave out or null; `shared` keeps the
    // library the function lives in loaded across the call.
    match unsafe { (shared.entry.static_fn().get_instance_proc_addr)(vk::Instance::from_raw(instance), name) } {
        Some(f) => f as *const c_void,
        None => std::ptr::null(),
    }
}

pub(super) unsafe extern "C" fn loader_register_program(context: *const c_void, program: *const VulkanProgram) -> u32 {
    let Some(shared) = open_device(context) else { return 0 };
    if program.is_null() {
        return 0;
    }
    // SAFETY: a non-null `program` points to a valid description for the
    // duration of the call (the loader's contract); it is copied out.
    let program = unsafe { *program };
    let name = shared.next.fetch_add(1, Ordering::Relaxed);
    match shared.programs.lock() {
        Ok(mut programs) => {
            programs.insert(name, program);
            name
        }
        Err(_) => 0,
    }
}

pub(super) extern "C" fn loader_unregister_program(context: *const c_void, name: u32) {
    if let Some(mut programs) = open_device(context).as_ref().and_then(|shared| shared.programs.lock().ok()) {
        programs.remove(&name);
    }
}

pub(super) extern "C" fn loader_is_open(context: *const c_void) -> bool {
    open_device(context).is_some()
}
