//! Windows a device presents into.
//!
//! The host owns the window and its event loop (winit allows one event loop
//! per process, on the main thread, and its types do not cross a plugin
//! boundary); a device opened with [`crate::DeviceOptions::window`] gets
//! only the native handles of that window and draws into it: OpenGL through
//! an EGL window surface, Vulkan through `VK_KHR_surface` and a swapchain.
//! The host tells the device when the window's size changes
//! ([`crate::Device::resize_window`]) and hands it a render target to show
//! ([`crate::Device::present`]).

use crate::{commands::Image, error::XrError};
use abi_stable::{StableAbi, std_types::ROption};
use raw_window_handle::{RawDisplayHandle, RawWindowHandle};

/// The window system a [`NativeWindow`] belongs to.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WindowSystem {
    /// X11 through Xlib: `display` is a `Display*`, `window` an X `Window`.
    Xlib,
}

/// The native handles of a window the host created, and its size now.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NativeWindow {
    /// Its window system.
    pub system: WindowSystem,
    /// The connection: an Xlib `Display*`.
    pub display: usize,
    /// The X screen.
    pub screen: i32,
    /// The window: an X `Window` id.
    pub window: u64,
    /// Width of its drawable area, in pixels.
    pub width: u32,
    /// Height of its drawable area, in pixels.
    pub height: u32,
}

impl NativeWindow {
    /// The window behind a pair of `raw-window-handle` handles (what winit
    /// hands out), `width` × `height` pixels large now.
    pub fn from_raw(
        display: RawDisplayHandle,
        window: RawWindowHandle,
        width: u32,
        height: u32,
    ) -> Result<Self, XrError> {
        match (display, window) {
            // `Window` is a C `unsigned long`: 64 bits here, 32 on some targets.
            #[allow(clippy::useless_conversion)]
            (RawDisplayHandle::Xlib(display), RawWindowHandle::Xlib(window)) => {
                let connection = display
                    .display
                    .ok_or_else(|| XrError::invalid_input("the Xlib display handle has no Display pointer"))?;
                Ok(Self {
                    system: WindowSystem::Xlib,
                    display: connection.as_ptr() as usize,
                    screen: display.screen,
                    window: u64::from(window.window),
                    width,
                    height,
                })
            }
            (display, _) => Err(XrError::unavailable(format!(
                "XR's device systems present into X11 (Xlib) windows; this window is on {}",
                display_system_name(&display)
            ))),
        }
    }

    /// The handles again, for crates that take `raw-window-handle` types (glutin).
    pub fn raw_handles(&self) -> Result<(RawDisplayHandle, RawWindowHandle), XrError> {
        match self.system {
            WindowSystem::Xlib => {
                let display = std::ptr::NonNull::new(self.display as *mut std::ffi::c_void)
                    .ok_or_else(|| XrError::invalid_input("the window's Display pointer is null"))?;
                let window = std::os::raw::c_ulong::try_from(self.window)
                    .map_err(|_| XrError::invalid_input("the X window id does not fit a Window"))?;
                Ok((
                    RawDisplayHandle::Xlib(raw_window_handle::XlibDisplayHandle::new(Some(display), self.screen)),
                    RawWindowHandle::Xlib(raw_window_handle::XlibWindowHandle::new(window)),
                ))
            }
        }
    }
}

fn display_system_name(display: &RawDisplayHandle) -> &'static str {
    match display {
        RawDisplayHandle::Xlib(_) => "X11 (Xlib)",
        RawDisplayHandle::Xcb(_) => "X11 (XCB)",
        RawDisplayHandle::Wayland(_) => "Wayland",
        RawDisplayHandle::Windows(_) => "Windows",
        RawDisplayHandle::AppKit(_) => "macOS",
        _ => "another window system",
    }
}

/// What [`crate::Device::present`] did.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PresentStatus {
    /// The target is on screen.
    Presented,
    /// Nothing was shown: the window has no area (minimised, or resized to
    /// 0 × 0). Not an error; present again once it has a size.
    Skipped,
}

/// The result of a present.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct Presented {
    /// Whether the frame reached the window.
    pub status: PresentStatus,
    /// The window's image as presented, read back from the window's own
    /// buffer (the GL back buffer, the Vulkan swapchain image) when asked
    /// for and presented.
    pub image: ROption<Image>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use raw_window_handle::{WaylandDisplayHandle, WaylandWindowHandle, XlibDisplayHandle, XlibWindowHandle};
    use std::ptr::NonNull;

    #[test]
    fn an_xlib_window_goes_through_and_back() {
        let mut connection = 0u8;
        let display = NonNull::from(&mut connection).cast();
        let window = NativeWindow::from_raw(
            RawDisplayHandle::Xlib(XlibDisplayHandle::new(Some(display), 1)),
            RawWindowHandle::Xlib(XlibWindowHandle::new(42)),
            640,
            480,
        )
        .expect("an Xlib window");
        assert_eq!((window.screen, window.window, window.width, window.height), (1, 42, 640, 480));
        match window.raw_handles().expect("handles") {
            (RawDisplayHandle::Xlib(d), RawWindowHandle::Xlib(w)) => {
                assert_eq!((d.display, d.screen, w.window), (Some(display), 1, 42));
            }
            other => panic!("not Xlib: {other:?}"),
        }
    }

    #[test]
    fn other_window_systems_and_a_missing_display_are_refused_by_name() {
        let mut surface = 0u8;
        let pointer = NonNull::from(&mut surface).cast();
        let error = NativeWindow::from_raw(
            RawDisplayHandle::Wayland(WaylandDisplayHandle::new(pointer)),
            RawWindowHandle::Wayland(WaylandWindowHandle::new(pointer)),
            1,
            1,
        )
        .expect_err("a Wayland window");
        assert!(error.to_string().contains("Wayland"), "{error}");
        let error = NativeWindow::from_raw(
            RawDisplayHandle::Xlib(XlibDisplayHandle::new(None, 0)),
            RawWindowHandle::Xlib(XlibWindowHandle::new(1)),
            1,
            1,
        )
        .expect_err("no Display pointer");
        assert!(error.to_string().contains("Display pointer"), "{error}");
    }
}
