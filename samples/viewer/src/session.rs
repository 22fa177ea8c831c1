//! One viewer session on one device: the materials scene loaded from the
//! store, drawn every frame, shown in the window (or read back when
//! headless), and swapped program by program when hot reload rebuilds one.

use anyhow::Context;
use materials::{SCENE, Scene};
use std::path::{Path, PathBuf};
use xr_device::{DeviceBox, DeviceKind, DeviceOptions, Image, PresentStatus};
use xr_host::Registry;
use xr_library::{DeviceLoader, ShaderLibrary, hot_reload::HotReload, hot_reload::Reload};

/// What the session does besides drawing, from the command line.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// Render and window size, pixels.
    pub size: u32,
    /// Stop after this many presented frames.
    pub frames: Option<u64>,
    /// Write the last presented image here.
    pub screenshot: Option<PathBuf>,
    /// Write `ready.png` (the first frame) and `reload-N.png` (the first
    /// frame after reload N) here.
    pub captures: Option<PathBuf>,
    /// Stop after this many reloads (and the frame that shows the last).
    pub exit_after_reloads: Option<u32>,
}

/// Whether to go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Draw another frame.
    Continue,
    /// Done: what was asked for has been shown.
    Exit,
}

/// The device, its loader and the scene, in the order they must be dropped.
pub struct Session {
    scene: Scene,
    loader: DeviceLoader,
    device: DeviceBox,
    windowed: bool,
    settings: Settings,
    hot: Option<HotReload>,
    presented: u64,
    drawn: u64,
    /// Frames the device skipped: the window had no area.
    skipped: u64,
    reloads: u32,
    /// The file to write the next presented frame to.
    capture_next: Option<PathBuf>,
    last_image: Option<Image>,
}

impl Session {
    /// Opens a device of `kind` (presenting into `options.window` if set),
    /// loads the scene, and with `watch` starts hot reload on `manifest`.
    pub fn open(
        registry: &Registry,
        library: &mut ShaderLibrary,
        kind: DeviceKind,
        options: &DeviceOptions,
        settings: Settings,
        watch: Option<&Path>,
    ) -> anyhow::Result<Self> {
        let mut device = registry.open_device(kind, options)?;
        let mut loader = DeviceLoader::attach(registry, &device, library)?;
        let hot = match watch {
            Some(manifest) => {
                let targets: Vec<String> = loader.targets().into_iter().map(|(target, _)| target).collect();
                let programs: Vec<String> = library.programs().keys().cloned().collect();
                match HotReload::watch(manifest, registry, &programs, &targets) {
                    Ok(hot) => {
                        println!("watching {} files of {} for changes", hot.inputs().count(), manifest.display());
                        // Its first build brought the store up to date with the sources.
                        library.reread_catalog()?;
                        Some(hot)
                    }
                    // The store still draws: hot reload is what is lost.
                    Err(e) => {
                        eprintln!("warning: hot reload is off: watching the sources of {}: {e}", manifest.display());
                        None
                    }
                }
            }
            None => None,
        };
        let scene = Scene::load(&mut device, &mut loader, library, &[], settings.size)?;
        let capture_next = settings.captures.as_ref().map(|dir| dir.join("ready.png"));
        Ok(Self {
            scene,
            loader,
            device,
            windowed: options.window.is_some(),
            settings,
            hot,
            presented: 0,
            drawn: 0,
            skipped: 0,
            reloads: 0,
            capture_next,
            last_image: None,
        })
    }

    /// One line per program: the path it was loaded through, for the title.
    pub fn paths_line(&self) -> String {
        let mut seen: Vec<String> = Vec::new();
        for (tile, load) in SCENE.iter().zip(self.scene.loads()) {
            let entry = format!("{}: {} ({})", tile.program(), load.path.name(), load.target);
            if !seen.contains(&entry) {
                seen.push(entry);
            }
        }
        seen.join(", ")
    }

    /// Prints how each tile was loaded.
    pub fn print_loads(&self) {
        for (tile, load) in SCENE.iter().zip(self.scene.loads()) {
            println!(
                "{:<6} {:<40} {:<17} {:<9} {}",
                tile.program(),
                load.variant,
                load.path.name(),
                load.target,
                load.reason
            );
        }
    }

    /// The window's drawable size changed.
    pub fn resize(&mut self, width: u32, height: u32) -> anyhow::Result<()> {
        self.device.resize_window(width, height).into_result()?;
        Ok(())
    }

    /// Frames drawn so far, presented or skipped (while the window has no area).
    pub fn drawn(&self) -> u64 {
        self.drawn
    }

    /// Swaps rebuilt programs in, draws, and presents one frame.
    pub fn frame(&mut self, registry: &Registry, library: &mut ShaderLibrary) -> anyhow::Result<Next> {
        if let Some(reload) = self.hot.as_mut().and_then(|hot| hot.poll(registry, library)) {
            self.swap(library, reload);
        }
        self.scene.draw(&mut self.device)?;
        self.drawn += 1;
        let last = self.settings.frames.is_some_and(|frames| self.presented + 1 >= frames);
        let capture = self.capture_next.is_some() || (last && self.settings.screenshot.is_some());
        let image = if self.windowed {
            let presented = self.device.present(self.scene.target(), capture).into_result()?;
            if presented.status == PresentStatus::Skipped {
                self.skipped += 1;
                return Ok(Next::Continue);
            }
            presented.image.into_option()
        } else {
            Some(self.device.read_pixels(self.scene.target()).into_result()?)
        };
        self.presented += 1;
        if let Some(image) = image {
            if let Some(path) = self.capture_next.take() {
                materials::write_png(&image, &path)?;
                println!("frame {}: wrote {}", self.presented, path.display());
            }
            self.last_image = Some(image);
        }
        let reloads_done = self.settings.exit_after_reloads.is_some_and(|n| self.reloads >= n);
        if last || (reloads_done && self.capture_next.is_none()) {
            return Ok(Next::Exit);
        }
        Ok(Next::Continue)
    }

    /// Writes the screenshot, if one was asked for.
    pub fn finish(&self) -> anyhow::Result<()> {
        let Some(path) = &self.settings.screenshot else { return Ok(()) };
        let image = self.last_image.as_ref().context("no frame was presented, so there is no screenshot")?;
        materials::write_png(image, path)?;
        println!(
            "{} frames presented, {} skipped (no window area); screenshot {}",
            self.presented,
            self.skipped,
            path.display()
        );
        Ok(())
    }

    /// Loads again what a reload rebuilt; a failure keeps the running program.
    fn swap(&mut self, library: &ShaderLibrary, reload: Reload) {
        self.reloads += 1;
        tracing::debug!(?reload, "hot reload");
        let number = self.reloads;
        let frame = self.presented + 1;
        for error in &reload.errors {
            println!("reload {number}: error (the last good program keeps running): {error}");
        }
        let mut swapped = Vec::new();
        for program in &reload.swapped {
            match self.scene.reload(&mut self.loader, library, program) {
                Ok(0) => {}
                Ok(_) => swapped.push(program.as_str()),
                Err(e) => println!("reload {number}: {program} did not load (kept the last good one): {e}"),
            }
        }
        let mut outcome = Vec::new();
        if !reload.failed.is_empty() {
            outcome.push(format!("failed {}", reload.failed.join(", ")));
        }
        if !swapped.is_empty() {
            outcome.push(format!("swapped {}", swapped.join(", ")));
        }
        let outcome = if outcome.is_empty() { "nothing to swap".to_owned() } else { outcome.join("; ") };
        println!(
            "reload {number}: {outcome} ({} built) before frame {frame}, {} frames after the change was seen",
            reload.built, reload.polls_waited
        );
        if let Some(dir) = &self.settings.captures {
            self.capture_next = Some(dir.join(format!("reload-{number}.png")));
        }
    }
}
