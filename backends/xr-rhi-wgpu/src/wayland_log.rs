//! Mesa's Vulkan device-select layer (an implicit layer Debian installs
//! with its Vulkan drivers) connects to a Wayland display whenever an
//! instance enables `VK_KHR_wayland_surface`, as wgpu's instances do. With
//! no Wayland session, libwayland-client then writes `error:
//! XDG_RUNTIME_DIR is invalid or not set in the environment.` to standard
//! error at each adapter enumeration, though nothing failed and nothing
//! here uses Wayland. So once the layer has loaded libwayland-client (never
//! loading it here), its log goes to XR's log at debug level instead.

use std::{
    ffi::{CStr, c_char, c_void},
    sync::Once,
};

/// libwayland's log handler: `void (*)(const char *fmt, va_list args)`.
/// On the platforms this runs on, a `va_list` argument is passed as a
/// pointer; the format alone is logged (libwayland's client messages are
/// whole sentences).
unsafe extern "C" fn to_debug_log(format: *const c_char, _args: *mut c_void) {
    if format.is_null() {
        return;
    }
    // SAFETY: libwayland passes its message's format, a NUL-terminated string.
    let message = unsafe { CStr::from_ptr(format) }.to_string_lossy();
    tracing::debug!("libwayland-client: {}", message.trim_end());
}

/// Sends libwayland-client's log to XR's debug log, if the library is
/// loaded in this process; once.
pub fn quiet_if_loaded() {
    static SET: Once = Once::new();
    SET.call_once(|| {
        // SAFETY: RTLD_NOLOAD opens nothing new: it only finds the library
        // if the process has it already, whose initialisers have run.
        let library = unsafe {
            libloading::os::unix::Library::open(Some("libwayland-client.so.0"), libc::RTLD_NOW | libc::RTLD_NOLOAD)
        };
        let Ok(library) = library else { return };
        // SAFETY: libwayland-client's `void wl_log_set_handler_client(wl_log_func_t)`.
        unsafe {
            type SetHandler = unsafe extern "C" fn(unsafe extern "C" fn(*const c_char, *mut c_void));
            if let Ok(set_handler) = library.get::<SetHandler>(b"wl_log_set_handler_client\0") {
                set_handler(to_debug_log);
            }
        }
        // The library stays loaded (the layer holds it): the handler stays valid.
        std::mem::forget(library);
    });
}
