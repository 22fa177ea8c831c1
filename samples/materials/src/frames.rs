//! The scene drawn frame after frame into targets of changing attachment
//! formats, as a renderer whose passes change targets draws: what a usage
//! log records (with its draw states) and what `xr warm` is measured on.
//! Each frame draws every tile into the next of five targets; the first
//! frame into each is where a device that makes a pipeline per format set
//! makes one.

use crate::{SampleError, Scene};
use std::{
    path::Path,
    time::{Duration, Instant},
};
use xr_device::{
    DeviceBox, DeviceKind, DeviceOptions, NotReady, ProgramRef, RenderTargetDesc, RenderTargetId, TextureFormat,
    readiness::{DRAWS_BY_FALLBACK, DRAWS_SKIPPED},
};
use xr_host::Registry;
use xr_library::{DeviceLoader, LoadPath, ShaderLibrary};

/// The five target shapes frames cycle through: (colour formats, depth).
pub fn target_shapes() -> [(Vec<TextureFormat>, bool); 5] {
    use TextureFormat::{Rgba8, Rgba16Float, Rgba32Float};
    [
        (vec![Rgba16Float], false),
        (vec![Rgba32Float], false),
        (vec![Rgba8, Rgba16Float], false),
        (vec![Rgba16Float], true),
        (vec![Rgba8], false),
    ]
}

/// What the tiles' draws do while their program is not ready for a target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Policy {
    /// Wait for the compile (every device's behaviour before readiness).
    Wait,
    /// Skip the draw.
    Skip,
    /// Draw the scene's first program (the flat unlit tile) instead, as an
    /// engine draws an ubershader compiled early.
    Fallback,
}

impl Policy {
    /// Every policy.
    pub const ALL: [Policy; 3] = [Policy::Wait, Policy::Skip, Policy::Fallback];

    /// How a table names it.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Wait => "wait",
            Policy::Skip => "skip",
            Policy::Fallback => "fallback",
        }
    }
}

/// Whether every one of `pairs` is ready with its final object.
fn all_ready(device: &DeviceBox, pairs: &[(ProgramRef, RenderTargetId)]) -> Result<bool, SampleError> {
    for (program, target) in pairs {
        if device.readiness(*program, *target).into_result()? != xr_device::Readiness::Ready {
            return Ok(false);
        }
    }
    Ok(true)
}

/// How long after `began` every one of `pairs` was ready, polled until
/// `limit` has passed since then; `None` where it was not.
fn all_ready_after(
    device: &DeviceBox,
    pairs: &[(ProgramRef, RenderTargetId)],
    began: Instant,
    limit: Duration,
) -> Result<Option<f64>, SampleError> {
    loop {
        if all_ready(device, pairs)? {
            return Ok(Some(began.elapsed().as_secs_f64() * 1e3));
        }
        if began.elapsed() > limit {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// What a run of frames measured and made.
#[derive(Clone, Debug, Default)]
pub struct FramesReport {
    /// The device's renderer.
    pub renderer: String,
    /// Loading the scene's programs, in milliseconds (with, under
    /// [`Policy::Fallback`], drawing the fallback once into each target).
    pub load_ms: f64,
    /// Each frame's time, in milliseconds.
    pub frames_ms: Vec<f64>,
    /// How each tile's program was loaded.
    pub paths: Vec<LoadPath>,
    /// What the build systems made at load and draw time, by how (summed
    /// over them): `pipelines compiled`, `shader objects from SPIR-V`, ….
    pub made: Vec<(String, u64)>,
    /// The device's counts of what its draws made: (`pipelines`, `shader
    /// objects`) made after the load.
    pub made_by_draws: Vec<(String, u64)>,
    /// Draws skipped while their program was not ready.
    pub skipped: u64,
    /// Draws made by the fallback program.
    pub by_fallback: u64,
    /// Milliseconds from the first frame's start until every program was
    /// ready with its final object for every target, asked after each frame
    /// once every target was drawn into (so never less than the first
    /// five frames), then polled after the frames; `None`: not within ten
    /// seconds after them.
    pub all_ready_ms: Option<f64>,
}

impl FramesReport {
    /// The count `name` of [`FramesReport::made`], 0 when no build system keeps it.
    pub fn made(&self, name: &str) -> u64 {
        self.made.iter().filter(|(n, _)| n == name).map(|(_, v)| v).sum()
    }
}

/// Opens a `kind` device, loads the scene from the store at `store` (its
/// loads, and at the end its draw states, recorded in `usage_log` when
/// given) and draws `frames` frames of `size` × `size`, each draw under
/// `policy` while its program is not ready.
pub fn run(
    registry: &Registry,
    store: &Path,
    kind: DeviceKind,
    usage_log: Option<&Path>,
    (frames, size): (usize, u32),
    policy: Policy,
) -> Result<FramesReport, SampleError> {
    let mut library = ShaderLibrary::open(store)?;
    if let Some(log) = usage_log {
        library = library.with_usage_log(Some(log))?;
    }
    let mut device = registry.open_device(kind, &DeviceOptions::default())?;
    let renderer = device.capabilities().into_result()?.renderer.to_string();
    let mut loader = DeviceLoader::attach(registry, &device, &library)?;
    let started = Instant::now();
    let mut scene = Scene::load(&mut device, &mut loader, &library, &[], size)?;
    let programs = scene.programs();
    scene.when_not_ready(match policy {
        Policy::Wait => NotReady::Wait,
        Policy::Skip => NotReady::Skip,
        Policy::Fallback => NotReady::Fallback(programs[0]),
    });
    let load_ms = started.elapsed().as_secs_f64() * 1e3;
    let loaded = device.counters().into_result()?;
    let targets: Vec<RenderTargetId> = target_shapes()
        .into_iter()
        .map(|(colors, depth)| {
            let desc = RenderTargetDesc { width: size, height: size, colors: colors.into(), depth };
            device.create_render_target_with(&desc).into_result()
        })
        .collect::<Result<_, _>>()?;
    let attachments: Vec<_> =
        targets.iter().map(|t| device.render_target_texture(*t, 0).into_result()).collect::<Result<_, _>>()?;
    // An engine makes its fallback ready for its targets before the first
    // frame (a fallback not ready is skipped): drawn once into each.
    let mut fallback_ms = 0.0;
    if let Policy::Fallback = policy {
        let started = Instant::now();
        for target in &targets {
            scene.draw_tile_into(&mut device, 0, *target)?;
        }
        fallback_ms = started.elapsed().as_secs_f64() * 1e3;
    }
    let mut frames_ms = Vec::with_capacity(frames);
    let pairs: Vec<_> = programs.iter().flat_map(|p| targets.iter().map(move |t| (*p, *t))).collect();
    // Readiness is asked between frames, outside their times, once every
    // target has been drawn into (asking sooner may start compiles).
    let mut all_ready_ms = None;
    let began = Instant::now();
    for frame in 0..frames {
        let started = Instant::now();
        scene.draw_into(&mut device, targets[frame % targets.len()])?;
        // A frame ends when its pixels are there.
        device.read_texture(attachments[frame % targets.len()], 0).into_result()?;
        frames_ms.push(started.elapsed().as_secs_f64() * 1e3);
        if all_ready_ms.is_none() && frame + 1 >= targets.len() && all_ready(&device, &pairs)? {
            all_ready_ms = Some(began.elapsed().as_secs_f64() * 1e3);
        }
    }
    if all_ready_ms.is_none() {
        all_ready_ms = all_ready_after(&device, &pairs, began, Duration::from_secs(10) + began.elapsed())?;
    }
    let paths = scene.loads().iter().map(|l| l.path).collect();
    let drawn = device.counters().into_result()?;
    let count = |name: &str| drawn.iter().find(|c| c.name == name).map_or(0, |c| c.value);
    let (skipped, by_fallback) = (count(DRAWS_SKIPPED), count(DRAWS_BY_FALLBACK));
    let made_by_draws = drawn
        .iter()
        .map(|after| {
            let before = loaded.iter().find(|c| c.name == after.name).map_or(0, |c| c.value);
            (after.name.to_string(), after.value - before)
        })
        .collect();
    let mut made: Vec<(String, u64)> = Vec::new();
    for (_, name, value) in loader.counters() {
        match made.iter_mut().find(|(n, _)| *n == name) {
            Some((_, sum)) => *sum += value,
            None => made.push((name, value)),
        }
    }
    drop(scene);
    // Dropping the loader records the draw states in the usage log, and
    // its build systems save their caches, before the device goes.
    drop(loader);
    drop(device);
    Ok(FramesReport {
        renderer,
        load_ms: load_ms + fallback_ms,
        frames_ms,
        paths,
        made,
        made_by_draws,
        skipped,
        by_fallback,
        all_ready_ms,
    })
}

/// The value below which a fraction `at` of `values` lie (1.0: the largest).
pub fn percentile(values: &[f64], at: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let index = ((sorted.len() as f64 * at).ceil() as usize).saturating_sub(1);
    sorted.get(index.min(sorted.len().saturating_sub(1))).copied().unwrap_or(0.0)
}
