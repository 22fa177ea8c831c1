//! `viewer`: the materials library in a window. Picks its back end at
//! start-up (`--backend opengl|vulkan|auto`), draws the scene from the
//! store through the run-time library, says in the title which load path
//! each program took, and swaps programs whose sources are edited while it
//! runs. `--headless` draws the same frames with no window.

mod app;
mod backend;
mod session;

use anyhow::Context;
use app::{ScriptedResize, Start};
use backend::Backend;
use clap::Parser;
use session::{Next, Session, Settings};
use std::path::PathBuf;
use tracing_subscriber::{filter::Targets, prelude::*};
use xr_device::DeviceOptions;
use xr_host::Registry;
use xr_library::ShaderLibrary;

/// View the material library (built with `xr build -m samples/materials/xr.toml`) in a window.
#[derive(Parser)]
struct Args {
    /// The back end, chosen at start-up.
    #[arg(long, value_enum, default_value = "auto")]
    backend: Backend,
    /// The store `xr build` wrote.
    #[arg(long, default_value = "target/xr-store/materials")]
    store: PathBuf,
    /// The manifest whose sources are watched and rebuilt when they change.
    #[arg(long, default_value = "samples/materials/xr.toml")]
    manifest: PathBuf,
    /// Do not watch the sources.
    #[arg(long)]
    no_watch: bool,
    /// Window and render size in pixels (square).
    #[arg(long, default_value_t = 384, value_parser = clap::value_parser!(u32).range(1..=8192))]
    size: u32,
    /// Exit after this many presented frames (default: when the window is closed).
    #[arg(long)]
    frames: Option<u64>,
    /// Write the last presented image, as read back from the window, to this PNG.
    #[arg(long)]
    screenshot: Option<PathBuf>,
    /// Draw offscreen, with no window (and no display needed).
    #[arg(long)]
    headless: bool,
    /// Turn on the Vulkan validation layers; any message is an error.
    #[arg(long)]
    validation: bool,
    /// Resize the window after a frame drawn: WIDTHxHEIGHT@FRAME (0x0: minimised). For tests.
    #[arg(long, value_parser = parse_resize)]
    resize: Vec<ScriptedResize>,
    /// Write ready.png (the first frame) and reload-N.png (the first frame after reload N) here. For tests.
    #[arg(long)]
    captures: Option<PathBuf>,
    /// Exit once this many reloads have been shown. For tests.
    #[arg(long)]
    exit_after_reloads: Option<u32>,
}

fn parse_resize(text: &str) -> Result<ScriptedResize, String> {
    let bad = || format!("'{text}' is not WIDTHxHEIGHT@FRAME (e.g. 320x200@5)");
    let (size, frame) = text.split_once('@').ok_or_else(bad)?;
    let (width, height) = size.split_once('x').ok_or_else(bad)?;
    Ok(ScriptedResize {
        frame: frame.parse().map_err(|_| bad())?,
        width: width.parse().map_err(|_| bad())?,
        height: height.parse().map_err(|_| bad())?,
    })
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let level = xr_host::log_level().unwrap_or(tracing::Level::WARN);
    // winit warns about every Xvfb (no XSETTINGS, a 0 mm screen): shown from XR_LOG=debug on.
    let winit = if level >= tracing::Level::DEBUG { level } else { tracing::Level::ERROR };
    let filter = Targets::new().with_default(level).with_target("winit", winit);
    tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .with(filter)
        .init();
    if let Some(dir) = &args.captures {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let registry = Registry::discover();
    let library = ShaderLibrary::open(&args.store).with_context(|| format!("opening {}", args.store.display()))?;
    let (kind, why) = backend::choose(&registry, args.backend)?;
    let settings = Settings {
        size: args.size,
        frames: args.frames,
        screenshot: args.screenshot,
        captures: args.captures,
        exit_after_reloads: args.exit_after_reloads,
    };
    let watch = (!args.no_watch).then_some(args.manifest);
    if args.headless {
        return headless(registry, library, kind, &why, args.validation, settings, watch);
    }
    app::run(Start { registry, library, kind, why, validation: args.validation, settings, watch, resizes: args.resize })
}

/// The same frames with no window: each read back instead of presented.
fn headless(
    registry: Registry,
    mut library: ShaderLibrary,
    kind: xr_device::DeviceKind,
    why: &str,
    validation: bool,
    mut settings: Settings,
    watch: Option<PathBuf>,
) -> anyhow::Result<()> {
    if settings.frames.is_none() && settings.exit_after_reloads.is_none() {
        settings.frames = Some(1);
    }
    let options = DeviceOptions { validation, ..DeviceOptions::default() };
    let mut session = Session::open(&registry, &mut library, kind, &options, settings, watch.as_deref())?;
    println!("{why} (headless)");
    session.print_loads();
    while session.frame(&registry, &mut library)? == Next::Continue {}
    session.finish()
}
