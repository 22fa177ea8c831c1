//! wgpu's OpenGL back end makes its EGL context current for each of its
//! calls and leaves the thread with no context current after. XR's own
//! OpenGL device remembers which context it made current on a thread and
//! skips making it current again (every EGL call costs a system call), so
//! a wgpu call between two of its calls would leave it drawing with no
//! context. A wgpu-gl device is a good neighbour instead: each of its
//! calls puts back the context that was current before it.

use std::{ffi::c_void, sync::OnceLock};

type Handle = *mut c_void;

/// The EGL entry points this needs, from the system's libEGL.
struct Egl {
    get_current_display: unsafe extern "C" fn() -> Handle,
    get_current_surface: unsafe extern "C" fn(i32) -> Handle,
    get_current_context: unsafe extern "C" fn() -> Handle,
    make_current: unsafe extern "C" fn(Handle, Handle, Handle, Handle) -> u32,
    /// Keeps the library loaded.
    _library: libloading::Library,
}

// SAFETY: function pointers into a library that stays loaded for good.
unsafe impl Send for Egl {}
// SAFETY: as above; EGL's current state is per thread, the pointers are shared.
unsafe impl Sync for Egl {}

const EGL_DRAW: i32 = 0x3059;
const EGL_READ: i32 = 0x305A;

fn egl() -> Option<&'static Egl> {
    static EGL: OnceLock<Option<Egl>> = OnceLock::new();
    EGL.get_or_init(|| {
        // SAFETY: libEGL's initialisers are sound to run; the symbols
        // below have the types EGL 1.4 gives them.
        unsafe {
            let library = libloading::Library::new("libEGL.so.1").ok()?;
            Some(Egl {
                get_current_display: *library.get(b"eglGetCurrentDisplay\0").ok()?,
                get_current_surface: *library.get(b"eglGetCurrentSurface\0").ok()?,
                get_current_context: *library.get(b"eglGetCurrentContext\0").ok()?,
                make_current: *library.get(b"eglMakeCurrent\0").ok()?,
                _library: library,
            })
        }
    })
    .as_ref()
}

/// Puts back, when dropped, the EGL context current when it was made.
pub struct KeepCurrent {
    saved: Option<[Handle; 4]>,
}

// SAFETY: the handles are EGL's opaque names, never dereferenced here;
// EGL takes them on any thread (a device is used on the thread that
// opened it, where the value is made and dropped).
unsafe impl Send for KeepCurrent {}
// SAFETY: as above; nothing reads the value through a shared reference.
unsafe impl Sync for KeepCurrent {}

impl KeepCurrent {
    /// Remembers the context current on this thread now, if any.
    pub fn new() -> Self {
        let saved = egl().and_then(|egl| {
            // SAFETY: queries of this thread's current EGL state.
            unsafe {
                let context = (egl.get_current_context)();
                (!context.is_null()).then(|| {
                    [
                        (egl.get_current_display)(),
                        (egl.get_current_surface)(EGL_DRAW),
                        (egl.get_current_surface)(EGL_READ),
                        context,
                    ]
                })
            }
        });
        Self { saved }
    }
}

impl Drop for KeepCurrent {
    fn drop(&mut self) {
        let (Some([display, draw, read, context]), Some(egl)) = (self.saved, egl()) else { return };
        // SAFETY: the context and surfaces were current on this thread
        // when this was made; their owner destroys them only on this
        // thread, and so not during the wgpu call this spans.
        unsafe {
            if (egl.get_current_context)() != context && (egl.make_current)(display, draw, read, context) == 0 {
                tracing::warn!("could not make the thread's EGL context current again after a wgpu call");
            }
        }
    }
}
