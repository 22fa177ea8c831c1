//! A current OpenGL context: on an EGL device with no surface (headless),
//! or on the window system's EGL display with a window surface.

use glutin::{
    api::egl::{
        config::Config, context::PossiblyCurrentContext, device::Device as EglDevice, display::Display,
        surface::Surface,
    },
    config::{Api, ConfigSurfaceTypes, ConfigTemplateBuilder},
    context::{ContextApi, ContextAttributesBuilder, GlProfile, Version},
    prelude::*,
    surface::{SurfaceAttributesBuilder, WindowSurface},
};
use std::cell::Cell;
use std::{
    cell::RefCell,
    collections::BTreeMap,
    ffi::{CStr, c_char, c_void},
    num::NonZeroU32,
    rc::Rc,
    sync::atomic::{AtomicBool, AtomicUsize, Ordering},
};
use xr_device::{GlBindingSpace, GlLoader, NativeWindow, XrError};

/// Set to `software` to skip hardware EGL devices even where they exist.
pub const DEVICE_VAR: &str = "XR_GL_DEVICE";

/// Set to `off` to use no program binaries even where the driver offers
/// them: for a driver whose binaries are broken, and to see what such a
/// driver gets (Mesa's llvmpipe offers them since Mesa 23 even with its
/// shader cache disabled).
pub const PROGRAM_BINARIES_VAR: &str = "XR_GL_PROGRAM_BINARIES";

/// Whether [`PROGRAM_BINARIES_VAR`] turns program binaries off.
pub fn program_binaries_off() -> bool {
    xr_env::var(PROGRAM_BINARIES_VAR).is_some_and(|v| v.eq_ignore_ascii_case("off"))
}

const SOFTWARE_EXTENSION: &str = "EGL_MESA_device_software";

/// Core versions tried, newest first.
const VERSIONS: [(u8, u8); 5] = [(4, 6), (4, 5), (4, 3), (4, 1), (3, 3)];

/// An EGL display and a context made current on it without a surface.
///
/// Build systems reach it through the [`GlLoader`] of [`loader`], which
/// may outlive the device (a program object dropped after its device): the
/// loader carries the device's number in this thread's table of open
/// devices, not a pointer, so that once the device closed, later loader
/// calls find nothing and fail cleanly instead of touching freed memory.
pub struct GlContext {
    /// Unique in the process: what a thread remembers as made current.
    id: u64,
    display: Display,
    context: RefCell<Option<PossiblyCurrentContext>>,
    /// The window surface of a windowed device; made current with the context.
    surface: RefCell<Option<Surface<WindowSurface>>>,
    /// Binding points handed out to programs, per [`GlBindingSpace`]: used or not.
    bindings: std::sync::Mutex<[Vec<bool>; 4]>,
    /// Programs with resources: where each keeps its count of unbound ones.
    programs: std::sync::Mutex<std::collections::HashMap<u32, usize>>,
}

impl GlContext {
    /// Opens the first EGL device that gives a core context: hardware first
    /// unless `prefer_software` (or `XR_GL_DEVICE=software`).
    pub fn open(prefer_software: bool) -> Result<Self, XrError> {
        let prefer_software =
            prefer_software || xr_env::var(DEVICE_VAR).is_some_and(|v| v.eq_ignore_ascii_case("software"));
        let mut devices: Vec<EglDevice> =
            EglDevice::query_devices().map_err(|e| XrError::unavailable(format!("no EGL devices: {e}")))?.collect();
        devices.sort_by_key(|d| d.extensions().contains(SOFTWARE_EXTENSION) != prefer_software);
        let mut failures = Vec::new();
        for device in &devices {
            match Self::open_device(device) {
                Ok(context) => return Ok(context),
                Err(e) => failures.push(format!("{}: {e}", device.name().unwrap_or("EGL device"))),
            }
        }
        if failures.is_empty() {
            failures.push("no EGL device found".to_owned());
        }
        Err(XrError::unavailable(format!("no OpenGL core context could be created ({})", failures.join("; "))))
    }

    fn open_device(device: &EglDevice) -> Result<Self, String> {
        // SAFETY: no native display is passed; the device outlives the call.
        let display = unsafe { Display::with_device(device, None) }.map_err(|e| e.to_string())?;
        let template =
            ConfigTemplateBuilder::new().with_surface_type(ConfigSurfaceTypes::empty()).with_api(Api::OPENGL).build();
        // SAFETY: the template is valid for this display.
        let config = unsafe { display.find_configs(template) }
            .map_err(|e| e.to_string())?
            .next()
            .ok_or("no surfaceless OpenGL config")?;
        let mut last_error = String::from("no core version accepted");
        for (major, minor) in VERSIONS {
            let attributes = ContextAttributesBuilder::new()
                .with_profile(GlProfile::Core)
                .with_context_api(ContextApi::OpenGl(Some(Version::new(major, minor))))
                .build(None);
            // SAFETY: config comes from this display; no window is involved.
            match unsafe { display.create_context(&config, &attributes) } {
                Ok(context) => {
                    let context = context.make_current_surfaceless().map_err(|e| e.to_string())?;
                    return Ok(Self::made_current(display, context, None));
                }
                Err(e) => last_error = format!("OpenGL {major}.{minor} core: {e}"),
            }
        }
        Err(last_error)
    }

    /// Opens a core context on the EGL display of `window`'s window system
    /// (EGL_PLATFORM_X11 for Xlib), with a surface on the window.
    pub fn open_window(window: &NativeWindow) -> Result<Self, XrError> {
        let (raw_display, raw_window) = window.raw_handles()?;
        let failed = |what: &str, e: &dyn std::fmt::Display| XrError::unavailable(format!("{what}: {e}"));
        // SAFETY: the host keeps the display connection and the window alive
        // while the device lives (`DeviceOptions::window`).
        let display = unsafe { Display::new(raw_display) }
            .map_err(|e| failed("no EGL display for the window's X11 connection", &e))?;
        let template = ConfigTemplateBuilder::new()
            .compatible_with_native_window(raw_window)
            .with_surface_type(ConfigSurfaceTypes::WINDOW)
            .with_api(Api::OPENGL)
            .with_alpha_size(8)
            .build();
        // SAFETY: the template is valid for this display.
        let config: Config = unsafe { display.find_configs(template) }
            .map_err(|e| failed("no EGL config for the window", &e))?
            .next()
            .ok_or_else(|| XrError::unavailable("no EGL config draws OpenGL into this window"))?;
        let size = |v: u32| NonZeroU32::new(v.max(1)).unwrap_or(NonZeroU32::MIN);
        let attributes =
            SurfaceAttributesBuilder::<WindowSurface>::new().build(raw_window, size(window.width), size(window.height));
        // SAFETY: the window is alive (as above) and the config is this display's.
        let surface = unsafe { display.create_window_surface(&config, &attributes) }
            .map_err(|e| failed("cannot create an EGL window surface", &e))?;
        let mut last_error = String::from("no core version accepted");
        for (major, minor) in VERSIONS {
            let attributes = ContextAttributesBuilder::new()
                .with_profile(GlProfile::Core)
                .with_context_api(ContextApi::OpenGl(Some(Version::new(major, minor))))
                .build(Some(raw_window));
            // SAFETY: config comes from this display; the window is alive.
            match unsafe { display.create_context(&config, &attributes) } {
                Ok(context) => {
                    let context =
                        context.make_current(&surface).map_err(|e| failed("eglMakeCurrent on the window", &e))?;
                    return Ok(Self::made_current(display, context, Some(surface)));
                }
                Err(e) => last_error = format!("OpenGL {major}.{minor} core: {e}"),
            }
        }
        Err(XrError::unavailable(format!("no OpenGL core context for the window ({last_error})")))
    }

    fn made_current(
        display: Display,
        context: PossiblyCurrentContext,
        surface: Option<Surface<WindowSurface>>,
    ) -> Self {
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        set_current(id);
        Self {
            id,
            display,
            context: RefCell::new(Some(context)),
            surface: RefCell::new(surface),
            bindings: std::sync::Mutex::new(Default::default()),
            programs: std::sync::Mutex::new(std::collections::HashMap::new()),
        }
    }

    /// Shows the back buffer of the window surface.
    pub fn swap_buffers(&self) -> Result<(), XrError> {
        let context = self.context.try_borrow().map_err(|_| XrError::driver("GL context is busy"))?;
        let context = context.as_ref().ok_or_else(|| XrError::unavailable("the OpenGL device was closed"))?;
        let surface = self.surface.try_borrow().map_err(|_| XrError::driver("GL surface is busy"))?;
        let surface = surface.as_ref().ok_or_else(|| XrError::invalid_input("this OpenGL device has no window"))?;
        surface.swap_buffers(context).map_err(|e| XrError::driver(format!("eglSwapBuffers failed: {e}")))
    }

    /// Follows a new window size (EGL on X11 follows by itself; other window
    /// systems need to be told).
    pub fn resize(&self, width: u32, height: u32) {
        let (Some(width), Some(height)) = (NonZeroU32::new(width), NonZeroU32::new(height)) else { return };
        if let (Ok(context), Ok(surface)) = (self.context.try_borrow(), self.surface.try_borrow())
            && let (Some(context), Some(surface)) = (context.as_ref(), surface.as_ref())
        {
            surface.resize(context, width, height);
        }
    }

    /// Makes the context current on this thread.
    pub fn make_current(&self) -> Result<(), XrError> {
        let context = self.context.try_borrow().map_err(|_| XrError::driver("GL context is busy"))?;
        let context = context.as_ref().ok_or_else(|| XrError::unavailable("the OpenGL device was closed"))?;
        // Every GL call of a build system or constant table asks for the
        // context first, and every EGL call costs a system call (libglvnd
        // checks for a fork with getpid): eglMakeCurrent cost six times a
        // glProgramUniform4fv on llvmpipe. So the thread remembers which of
        // XR's contexts it made current last (by an id never reused, not by
        // an address a later context could get) and skips making it
        // current again. An engine that makes a context of its own current
        // on a thread that XR's device also uses calls the loader's
        // `forget_current` after (docs/PLUGINS.md).
        if CURRENT.with(Cell::get) == self.id {
            return Ok(());
        }
        let surface = self.surface.try_borrow().map_err(|_| XrError::driver("GL surface is busy"))?;
        match surface.as_ref() {
            Some(surface) => context.make_current(surface),
            None => context.make_current_surfaceless(),
        }
        .map_err(|e| XrError::driver(format!("eglMakeCurrent failed: {e}")))?;
        set_current(self.id);
        Ok(())
    }

    /// Destroys the EGL context; every later call fails with `Unavailable`.
    pub fn release(&self) {
        if let Ok(mut context) = self.context.try_borrow_mut() {
            forget_current();
            // Not current on this thread once destroyed: EGL keeps a
            // destroyed context current until another is made so, and the
            // next library that saves and puts back the thread's context
            // (wgpu-gl does) would try to put back a dead one.
            if let Some(current) = context.as_ref().filter(|c| c.is_current()) {
                let _ = current.make_not_current_in_place();
            }
            context.take();
            if let Ok(mut surface) = self.surface.try_borrow_mut() {
                surface.take();
            }
        }
    }

    /// Looks up a GL entry point.
    pub fn get_proc_address(&self, name: &CStr) -> *const c_void {
        self.display.get_proc_address(name)
    }

    /// Sets how many binding points of `space` the device has. Texture
    /// unit 0 is the device's own (it binds textures there to fill them).
    pub fn set_binding_limit(&self, space: GlBindingSpace, count: usize) {
        if let Ok(mut bindings) = self.bindings.lock() {
            let points = &mut bindings[space as usize];
            points.resize(count, false);
            if space == GlBindingSpace::TextureUnit
                && let Some(unit0) = points.first_mut()
            {
                *unit0 = true;
            }
        }
    }

    /// The unbound-resource count of `program`, if a build system registered one.
    pub fn unbound_resources(&self, program: u32) -> u32 {
        let Ok(programs) = self.programs.lock() else { return 0 };
        match programs.get(&program) {
            // SAFETY: the build system keeps the count alive until it unregisters the program.
            Some(&count) if count != 0 => unsafe { *(count as *const u32) },
            _ => 0,
        }
    }
}

thread_local! {
    /// The open devices' contexts on this thread, by the number their
    /// loaders carry as context. A GL context belongs to the thread that
    /// made it, and so do the build systems attached to it: a thread's own
    /// table needs no lock. A device adds its context when it opens and
    /// removes it first thing when it closes, so that a build system that
    /// outlives its device (a constant table dropped after it) finds nothing
    /// and fails cleanly instead of reading freed memory.
    static OPEN: RefCell<BTreeMap<usize, Rc<GlContext>>> = const { RefCell::new(BTreeMap::new()) };
}

/// The number the next device opened gets (never 0: a null context is no device's).
static NEXT_DEVICE: AtomicUsize = AtomicUsize::new(1);

/// Adds an open device's context to this thread's table; its number is what
/// [`loader`] hands out.
pub fn register(context: Rc<GlContext>) -> usize {
    let key = NEXT_DEVICE.fetch_add(1, Ordering::Relaxed);
    // Leaked on purpose (one byte a device): loaders hand the flag out,
    // and what a build system keeps of a loader may outlive the device.
    let flag: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
    let _ = FLAGS.try_with(|flags| flags.borrow_mut().insert(key, flag));
    // Only fails while the thread exits, when no device can be opened anyway.
    let _ = OPEN.try_with(|open| open.borrow_mut().insert(key, context));
    key
}

/// Removes a closing device's context from this thread's table.
pub fn unregister(key: usize) {
    if CURRENT_KEY.try_with(Cell::get).is_ok_and(|current| current == key) {
        mark_current(0);
    }
    // The flag stays clear for good: a table that outlives its device still reads it.
    let _ = FLAGS.try_with(|flags| flags.borrow_mut().remove(&key));
    // A device dropped while its thread exits: the table is gone already.
    let _ = OPEN.try_with(|open| open.borrow_mut().remove(&key));
}

/// The context of the open device whose loader carries `context`; `None`
/// once that device is closed. The pointer is only compared, never
/// dereferenced.
fn open_context(context: *const c_void) -> Option<Rc<GlContext>> {
    // `try_with`: a loader called while the thread exits finds nothing
    // instead of panicking across the C boundary.
    OPEN.try_with(|open| open.borrow().get(&context.addr()).cloned()).ok().flatten()
}

/// The loader handed to build systems for the device registered as `key`.
pub fn loader(key: usize) -> GlLoader {
    GlLoader {
        context: std::ptr::without_provenance(key),
        get_proc_address: loader_get_proc_address,
        make_current: loader_make_current,
        allocate_binding: loader_allocate_binding,
        release_binding: loader_release_binding,
        binding_limit: loader_binding_limit,
        register_program: loader_register_program,
        unregister_program: loader_unregister_program,
        forget_current: loader_forget_current,
        current: FLAGS
            .try_with(|flags| flags.borrow().get(&key).map_or(std::ptr::null(), |flag| *flag as *const AtomicBool))
            .unwrap_or(std::ptr::null()),
    }
}

unsafe extern "C" fn loader_get_proc_address(context: *const c_void, name: *const c_char) -> *const c_void {
    let Some(context) = open_context(context) else { return std::ptr::null() };
    if name.is_null() {
        return std::ptr::null();
    }
    // SAFETY: `name` is a NUL-terminated string (the loader's contract).
    let name = unsafe { CStr::from_ptr(name) };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| context.get_proc_address(name)))
        .unwrap_or(std::ptr::null())
}

unsafe extern "C" fn loader_make_current(context: *const c_void) -> bool {
    let key = context.addr();
    // Every GL call of a constant table asks this first: when this device's
    // context is the one the loader made current last, answer without the
    // table lookup (a set costs about 35 ns; the lookup was a third of it).
    if CURRENT_KEY.try_with(|current| current.get() == key).unwrap_or(false) {
        return true;
    }
    let Some(context) = open_context(context) else { return false };
    let made =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| context.make_current().is_ok())).unwrap_or(false);
    if made {
        mark_current(key);
    }
    made
}

unsafe extern "C" fn loader_allocate_binding(context: *const c_void, space: u32) -> i32 {
    let (Some(context), Some(space)) = (open_context(context), GlBindingSpace::from_u32(space)) else {
        return -1;
    };
    let Ok(mut bindings) = context.bindings.lock() else { return -1 };
    let points = &mut bindings[space as usize];
    match points.iter().position(|used| !used) {
        Some(free) => {
            points[free] = true;
            free as i32
        }
        None => -1,
    }
}

unsafe extern "C" fn loader_release_binding(context: *const c_void, space: u32, binding: u32) {
    let (Some(context), Some(space)) = (open_context(context), GlBindingSpace::from_u32(space)) else {
        return;
    };
    let never_given = space == GlBindingSpace::TextureUnit && binding == 0;
    if let Ok(mut bindings) = context.bindings.lock()
        && !never_given
        && let Some(used) = bindings[space as usize].get_mut(binding as usize)
    {
        *used = false;
    }
}

unsafe extern "C" fn loader_binding_limit(context: *const c_void, space: u32) -> u32 {
    let (Some(context), Some(space)) = (open_context(context), GlBindingSpace::from_u32(space)) else {
        return 0;
    };
    let Ok(bindings) = context.bindings.lock() else { return 0 };
    let all = bindings[space as usize].len() as u32;
    if space == GlBindingSpace::TextureUnit { all.saturating_sub(1) } else { all }
}

unsafe extern "C" fn loader_register_program(context: *const c_void, program: u32, unbound: *const u32) {
    if let Some(context) = open_context(context)
        && let Ok(mut programs) = context.programs.lock()
    {
        programs.insert(program, unbound as usize);
    }
}

unsafe extern "C" fn loader_unregister_program(context: *const c_void, program: u32) {
    if let Some(context) = open_context(context)
        && let Ok(mut programs) = context.programs.lock()
    {
        programs.remove(&program);
    }
}

thread_local! {
    /// The id of the context XR last made current on this thread (0: none).
    static CURRENT: Cell<u64> = const { Cell::new(0) };
    /// The loader key (never reused) of the device whose context the
    /// loader found or made current last on this thread, while that is
    /// still so: 0 once any other context is made current, the thread's
    /// current context is forgotten, or that device is unregistered.
    static CURRENT_KEY: Cell<usize> = const { Cell::new(0) };
    /// The flag of the device `CURRENT_KEY` names (`GlLoader::current`).
    /// Derivable from `FLAGS`, but kept apart: it has no destructor, so a
    /// device dropped while its thread exits, after `FLAGS` is gone, still
    /// clears its flag.
    static CURRENT_FLAG: Cell<Option<&'static AtomicBool>> = const { Cell::new(None) };
    /// Each open device's flag, by loader key. A flag is set exactly while
    /// `CURRENT_KEY` names its device: `mark_current` is the one place
    /// either changes.
    static FLAGS: RefCell<BTreeMap<usize, &'static AtomicBool>> = const { RefCell::new(BTreeMap::new()) };
}

/// Records that the device with loader key `key` (0: none) has its
/// context current on this thread, as the loader found or made it: its
/// flag set, the previous device's cleared.
fn mark_current(key: usize) {
    if let Ok(Some(previous)) = CURRENT_FLAG.try_with(Cell::take) {
        previous.store(false, Ordering::Relaxed);
    }
    let _ = CURRENT_KEY.try_with(|current| current.set(key));
    let flag = FLAGS.try_with(|flags| flags.borrow().get(&key).copied()).ok().flatten();
    if let Some(flag) = flag {
        flag.store(true, Ordering::Relaxed);
        let _ = CURRENT_FLAG.try_with(|current| current.set(Some(flag)));
    }
}

/// Records that the context `id` is now current on this thread.
fn set_current(id: u64) {
    CURRENT.with(|current| current.set(id));
    mark_current(0);
}

/// Ids of contexts, never reused (0 means none).
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Forgets which context this thread made current, so that the next GL use
/// of an XR OpenGL device makes its context current again: for an engine
/// that made a context of its own current on this thread in between
/// (reached through [`GlLoader::forget_current`]).
pub fn forget_current() {
    CURRENT.with(|current| current.set(0));
    mark_current(0);
}

unsafe extern "C" fn loader_forget_current() {
    forget_current();
}
