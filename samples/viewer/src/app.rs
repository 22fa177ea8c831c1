//! The window: a winit event loop that opens the session's device on its
//! window, resizes it with the window, and draws a frame whenever winit
//! asks for one.

use crate::session::{Next, Session, Settings};
use anyhow::Context;
use std::path::PathBuf;
use winit::{
    application::ApplicationHandler,
    dpi::PhysicalSize,
    event::WindowEvent,
    event_loop::{ActiveEventLoop, ControlFlow, EventLoop},
    raw_window_handle::{HasDisplayHandle, HasWindowHandle},
    window::{Window, WindowId},
};
use xr_device::{DeviceKind, DeviceOptions, NativeWindow};
use xr_host::Registry;
use xr_library::ShaderLibrary;

/// A size change the tests ask for at a presented frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScriptedResize {
    /// After this many frames drawn (presented or skipped).
    pub frame: u64,
    /// The new size; 0 × 0 stands for a minimised window.
    pub width: u32,
    /// Height.
    pub height: u32,
}

/// Everything the window needs to start.
pub struct Start {
    /// The registry.
    pub registry: Registry,
    /// The store's programs.
    pub library: ShaderLibrary,
    /// The device kind chosen.
    pub kind: DeviceKind,
    /// Why it was chosen.
    pub why: String,
    /// Vulkan validation layers.
    pub validation: bool,
    /// Frames, captures and size.
    pub settings: Settings,
    /// The manifest to hot reload from.
    pub watch: Option<PathBuf>,
    /// Size changes to make.
    pub resizes: Vec<ScriptedResize>,
}

struct App {
    start: Start,
    // Dropped before the window it draws into.
    session: Option<Session>,
    window: Option<Window>,
    error: Option<anyhow::Error>,
}

/// Opens the window and runs until it is closed or the session is done.
pub fn run(start: Start) -> anyhow::Result<()> {
    let event_loop = EventLoop::new().map_err(|e| {
        let display = std::env::var("DISPLAY").unwrap_or_default();
        if display.is_empty() {
            anyhow::anyhow!(
                "cannot open a window: DISPLAY is not set (no X server to connect to). Start one (Xvfb :99 & DISPLAY=:99), or render without a window: --headless ({e})"
            )
        } else {
            anyhow::anyhow!("cannot open a window on DISPLAY={display}: {e}")
        }
    })?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let mut app = App { start, session: None, window: None, error: None };
    event_loop.run_app(&mut app).context("the window's event loop failed")?;
    match app.error.take() {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

impl App {
    fn open(&mut self, event_loop: &ActiveEventLoop) -> anyhow::Result<()> {
        let size = self.start.settings.size;
        let attributes = Window::default_attributes()
            .with_title(format!("XR viewer: {}", self.start.kind.name()))
            .with_inner_size(PhysicalSize::new(size, size));
        let window = event_loop.create_window(attributes).context("creating the window")?;
        let inner = window.inner_size();
        let native = NativeWindow::from_raw(
            window.display_handle().context("the window's display")?.as_raw(),
            window.window_handle().context("the window's handle")?.as_raw(),
            inner.width,
            inner.height,
        )?;
        let options = DeviceOptions {
            validation: self.start.validation,
            window: abi_stable::std_types::ROption::RSome(native),
            ..DeviceOptions::default()
        };
        let start = &mut self.start;
        let session = Session::open(
            &start.registry,
            &mut start.library,
            start.kind,
            &options,
            start.settings.clone(),
            start.watch.as_deref(),
        )?;
        println!("{}", start.why);
        session.print_loads();
        window.set_title(&format!("XR viewer: {} | {}", start.kind.name(), session.paths_line()));
        window.request_redraw();
        self.session = Some(session);
        self.window = Some(window);
        Ok(())
    }

    fn redraw(&mut self, event_loop: &ActiveEventLoop) -> anyhow::Result<()> {
        let (Some(session), Some(window)) = (self.session.as_mut(), self.window.as_ref()) else { return Ok(()) };
        let before = session.drawn();
        let next = session.frame(&self.start.registry, &mut self.start.library)?;
        let now = session.drawn();
        for resize in self.start.resizes.iter().filter(|r| r.frame > before && r.frame <= now) {
            println!("frame {now}: resizing to {}x{}", resize.width, resize.height);
            if resize.width == 0 || resize.height == 0 {
                // X11 has no zero-size windows: tell the device what a
                // minimised window (Resized to 0 × 0 elsewhere) tells it.
                session.resize(0, 0)?;
            } else {
                // The device follows at once; winit's Resized event confirms the size later.
                let asked = PhysicalSize::new(resize.width, resize.height);
                let size = window.request_inner_size(asked).unwrap_or(asked);
                session.resize(size.width, size.height)?;
            }
        }
        if next == Next::Exit {
            event_loop.exit();
        }
        Ok(())
    }

    fn fail(&mut self, event_loop: &ActiveEventLoop, error: anyhow::Error) {
        self.error.get_or_insert(error);
        event_loop.exit();
    }
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.window.is_none()
            && let Err(e) = self.open(event_loop)
        {
            self.fail(event_loop, e);
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let result = match event {
            WindowEvent::CloseRequested => {
                event_loop.exit();
                Ok(())
            }
            WindowEvent::Resized(size) => match self.session.as_mut() {
                Some(session) => session.resize(size.width, size.height),
                None => Ok(()),
            },
            WindowEvent::RedrawRequested => self.redraw(event_loop),
            _ => Ok(()),
        };
        if let Err(e) = result {
            self.fail(event_loop, e);
        }
    }

    fn about_to_wait(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(window) = &self.window {
            window.request_redraw();
        }
    }

    fn exiting(&mut self, _event_loop: &ActiveEventLoop) {
        if self.error.is_none()
            && let Some(session) = self.session.as_ref()
            && let Err(e) = session.finish()
        {
            self.error = Some(e);
        }
        // The device draws into the window, and both need the event loop's
        // X connection, which closes when the loop ends: device, then window, now.
        self.session = None;
        self.window = None;
    }
}
