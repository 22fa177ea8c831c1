//! Warming before the first frame: every program a usage log names is
//! loaded on this device through its best path, so that the driver objects
//! the build systems keep in the store (GL program binaries, Vulkan shader
//! binaries where the device has shader objects) are made during a loading
//! screen or an install step, not in the engine's first frames. Where the
//! device makes a pipeline per set of attachment formats (Vulkan without
//! shader objects), the pipelines of every draw state the log recorded are
//! made too, into the pipeline cache the build system keeps in the store.
//!
//! A driver may compile at a draw too, for the state it draws in (llvmpipe
//! makes its code for a program and a set of target formats at the first
//! draw; GPU drivers patch programs for state they did not expect). With a
//! device, [`DeviceLoader::warm_drawing`] also draws each warmed program
//! once, unseen, into a small target of each attachment state the log
//! names in the device contract's words and into the device's own target,
//! as Unity's `ShaderVariantCollection.WarmUp` draws its invisible
//! triangles: what the driver makes then goes into its own cache (Mesa's
//! shader cache) before the first frame. A draw the device refuses (a
//! compute program, a resource the program needs and the warm does not
//! bind) is counted as refused and the warm goes on.
//!
//! Warming is incremental: a program that already loads as a device binary
//! is valid for this driver, and is counted as warm without more work (its
//! draw states, where it has any, are made again: a pipeline cache cannot
//! be asked what it holds, and a pipeline found in it costs little). A log
//! is keyed by names, so a log recorded before a shader edit warms the
//! edited program under its new object.

use crate::{DeviceLoader, LoadPath, LoadRequest, Loaded, ShaderLibrary};
use std::collections::{BTreeMap, HashMap};
use xr_device::{
    AttachmentState, DeviceBox, DrawCall, RenderTargetDesc, RenderTargetId, VertexAttribute, VertexBufferId,
    VertexLayout,
};
use xr_store::usage::Usage;

/// What warming one logged program came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WarmOutcome {
    /// It loads as a device binary already: nothing to make.
    AlreadyWarm,
    /// It was loaded by `path`, which made and stored its device binary:
    /// a load by the device-binary path now finds it.
    Warmed {
        /// The path it loaded by.
        path: LoadPath,
        /// Pipelines made for its logged draw states.
        pipelines: u32,
    },
    /// It loads, but no path leaves a device binary on this device (Vulkan
    /// without shader objects keeps none): loading it, and making the
    /// pipelines of its logged draw states, was all there was to do.
    NoDeviceBinary {
        /// The path it loads by.
        path: LoadPath,
        /// Pipelines made for its logged draw states.
        pipelines: u32,
    },
    /// It could not be loaded: the store no longer has it (a program or
    /// variant renamed since the log was recorded), or the load failed.
    Failed {
        /// Why.
        reason: String,
    },
}

/// One step of warming, as a progress callback hears it.
#[derive(Debug)]
pub struct WarmStep<'a> {
    /// Programs done so far, this one included.
    pub done: usize,
    /// Programs to warm.
    pub total: usize,
    /// The log's entry.
    pub usage: &'a Usage,
    /// What came of it.
    pub outcome: &'a WarmOutcome,
}

/// What warming did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WarmReport {
    /// Programs that loaded as device binaries already.
    pub already_warm: usize,
    /// Programs whose device binaries were made, each by the path that made them.
    pub warmed: Vec<(Usage, LoadPath)>,
    /// Programs that load, by this path, but for which this device keeps
    /// no device binary.
    pub no_device_binary: Vec<(Usage, LoadPath)>,
    /// Pipelines made for the logged draw states, in all.
    pub pipelines: u32,
    /// Warm draws made ([`DeviceLoader::warm_drawing`]), and refused by the device.
    pub draws: usize,
    /// Warm draws the device refused (a compute program, an unbound resource).
    pub draws_refused: usize,
    /// Programs that could not be loaded, with why.
    pub failed: Vec<(Usage, String)>,
}

impl WarmReport {
    /// The programs the log named, each counted once however many targets
    /// and lines named it, whatever came of its warm.
    pub fn programs(&self) -> usize {
        self.already_warm + self.warmed.len() + self.no_device_binary.len() + self.failed.len()
    }
}

impl DeviceLoader {
    /// Loads every program of `entries` (a usage log's, read with
    /// [`xr_store::usage::read`]) on this device, best path first, and drops
    /// it again: what the loads keep in the store (program binaries, shader
    /// binaries) is what the engine's later loads find. Entries that differ
    /// only by the target they were recorded on are warmed once: this
    /// device loads its own best target. `progress` hears of each.
    pub fn warm<'u>(
        &mut self,
        library: &ShaderLibrary,
        entries: impl IntoIterator<Item = &'u Usage>,
        progress: &mut dyn FnMut(WarmStep<'_>),
    ) -> WarmReport {
        self.warm_with(library, entries, progress, None)
    }

    /// [`DeviceLoader::warm`], and each program then drawn once on `device`
    /// (the one this loader attached to) into a small target of each of
    /// its logged attachment states and into the device's own target, so
    /// that what the driver compiles at a draw is in its cache too (see
    /// the module documentation).
    pub fn warm_drawing<'u>(
        &mut self,
        library: &ShaderLibrary,
        device: &mut DeviceBox,
        entries: impl IntoIterator<Item = &'u Usage>,
        progress: &mut dyn FnMut(WarmStep<'_>),
    ) -> WarmReport {
        let mut draws = WarmDraws { device, triangle: None, targets: HashMap::new(), made: 0, refused: 0 };
        let mut report = self.warm_with(library, entries, progress, Some(&mut draws));
        draws.finish();
        (report.draws, report.draws_refused) = (draws.made, draws.refused);
        report
    }

    fn warm_with<'u>(
        &mut self,
        library: &ShaderLibrary,
        entries: impl IntoIterator<Item = &'u Usage>,
        progress: &mut dyn FnMut(WarmStep<'_>),
        mut draws: Option<&mut WarmDraws<'_>>,
    ) -> WarmReport {
        // Entries recorded on several targets are warmed once, in the order
        // first seen, with the draw states of all of them.
        let mut folded: Vec<Usage> = Vec::new();
        let mut index: HashMap<(String, String, BTreeMap<String, String>), usize> = HashMap::new();
        for usage in entries {
            let key = (usage.program.clone(), usage.variant.clone(), usage.overrides.clone());
            match index.get(&key) {
                Some(&at) => folded[at].draw_states.extend(usage.draw_states.iter().cloned()),
                None => {
                    index.insert(key, folded.len());
                    folded.push(usage.clone());
                }
            }
        }
        let entries = folded;
        let mut report = WarmReport::default();
        for (index, usage) in entries.iter().enumerate() {
            let outcome = self.warm_one(library, usage).unwrap_or_else(|reason| WarmOutcome::Failed { reason });
            if let Some(draws) = draws.as_deref_mut()
                && !matches!(outcome, WarmOutcome::Failed { .. })
            {
                self.draw_once(library, usage, draws);
            }
            match &outcome {
                WarmOutcome::AlreadyWarm => report.already_warm += 1,
                WarmOutcome::Warmed { path, pipelines } => {
                    report.warmed.push((usage.clone(), *path));
                    report.pipelines += pipelines;
                }
                WarmOutcome::NoDeviceBinary { path, pipelines } => {
                    report.no_device_binary.push((usage.clone(), *path));
                    report.pipelines += pipelines;
                }
                WarmOutcome::Failed { reason } => report.failed.push((usage.clone(), reason.clone())),
            }
            progress(WarmStep { done: index + 1, total: entries.len(), usage, outcome: &outcome });
        }
        report
    }

    /// Loads `usage` by the best path, as the engine will, makes its draw
    /// states and draws it once into a target of each.
    fn draw_once(&mut self, library: &ShaderLibrary, usage: &Usage, draws: &mut WarmDraws<'_>) {
        let Ok((variant, overrides)) = request_parts(library, usage) else { return };
        let request = LoadRequest { program: &usage.program, variant, overrides, paths: Vec::new() };
        let Ok(loaded) = self.load(library, &request) else { return };
        let states: Vec<String> = usage.draw_states.iter().cloned().collect();
        if let Err(e) = self.warm_draw_states(&loaded, &states) {
            tracing::debug!("{}: {e}", usage.variant);
        }
        let mut shapes: Vec<Option<AttachmentState>> = vec![None];
        shapes.extend(states.iter().filter_map(|s| s.parse::<AttachmentState>().ok()).map(Some));
        for shape in shapes {
            draws.draw(&loaded, shape.as_ref());
        }
    }

    /// Warms one entry: a device binary already there is enough; else each
    /// other path in turn, best first, until one leaves a device binary
    /// behind (on OpenGL, the driver's compile from source writes the
    /// program binary; the SPIR-V path does not). A path that loads but
    /// leaves none is kept as the answer when no later one does better.
    /// Whichever path loads it, the pipelines of its draw states are made
    /// on the program loaded.
    fn warm_one(&mut self, library: &ShaderLibrary, usage: &Usage) -> Result<WarmOutcome, String> {
        let (variant, overrides) = request_parts(library, usage)?;
        let request = |path: LoadPath| LoadRequest {
            program: &usage.program,
            variant: variant.clone(),
            overrides: overrides.clone(),
            paths: vec![path],
        };
        let states: Vec<String> = usage.draw_states.iter().cloned().collect();
        if let Ok(loaded) = self.load(library, &request(LoadPath::DeviceBinary)) {
            let pipelines = self.warm_draw_states(&loaded, &states).map_err(|e| e.to_string())?;
            return Ok(match pipelines {
                0 => WarmOutcome::AlreadyWarm,
                _ => WarmOutcome::Warmed { path: LoadPath::DeviceBinary, pipelines },
            });
        }
        let mut loaded_by = None;
        let mut reasons = Vec::new();
        for path in [LoadPath::CompatibleObject, LoadPath::Source] {
            match self.load(library, &request(path)) {
                Ok(loaded) => {
                    let pipelines = match loaded_by {
                        Some(_) => 0,
                        None => self.warm_draw_states(&loaded, &states).map_err(|e| e.to_string())?,
                    };
                    drop(loaded);
                    if self.load(library, &request(LoadPath::DeviceBinary)).is_ok() {
                        return Ok(WarmOutcome::Warmed { path, pipelines });
                    }
                    loaded_by.get_or_insert((path, pipelines));
                }
                Err(e) => reasons.push(e.to_string()),
            }
        }
        match loaded_by {
            Some((path, pipelines)) => Ok(WarmOutcome::NoDeviceBinary { path, pipelines }),
            None => Err(reasons.join("; ")),
        }
    }
}

/// A logged entry's variant values and override values, as a load asks for them.
#[allow(clippy::type_complexity)]
fn request_parts<'a>(
    library: &'a ShaderLibrary,
    usage: &'a Usage,
) -> Result<(Vec<(&'a str, &'a str)>, Vec<(&'a str, f64)>), String> {
    let program = library.program(&usage.program).map_err(|e| e.to_string())?;
    let stored = program
        .variants
        .get(&usage.variant)
        .ok_or_else(|| format!("{} is not in the store's catalog (renamed, dropped, or not built)", usage.variant))?;
    let overrides: Vec<(&str, f64)> = usage
        .overrides
        .iter()
        .map(|(name, value)| {
            value
                .parse::<f64>()
                .map(|v| (name.as_str(), v))
                .map_err(|_| format!("override {name} = '{value}' is not a number"))
        })
        .collect::<Result<_, _>>()?;
    let variant = stored.values.iter().map(|(a, v)| (a.as_str(), v.as_str())).collect();
    Ok((variant, overrides))
}

/// What warm draws draw with: the device, one triangle, and an 8 × 8
/// target per attachment state (`None`: the device's own target).
struct WarmDraws<'d> {
    device: &'d mut DeviceBox,
    triangle: Option<VertexBufferId>,
    targets: HashMap<Option<AttachmentState>, RenderTargetId>,
    made: usize,
    refused: usize,
}

impl WarmDraws<'_> {
    /// Draws `loaded` once into a target of `state`.
    fn draw(&mut self, loaded: &Loaded, state: Option<&AttachmentState>) {
        match self.try_draw(loaded, state) {
            Ok(()) => self.made += 1,
            Err(e) => {
                tracing::debug!(variant = %loaded.variant, "warm draw not made: {e}");
                self.refused += 1;
            }
        }
    }

    fn try_draw(&mut self, loaded: &Loaded, state: Option<&AttachmentState>) -> Result<(), xr_device::XrError> {
        let triangle = match self.triangle {
            Some(triangle) => triangle,
            None => {
                let layout = VertexLayout {
                    stride: 2,
                    attributes: vec![VertexAttribute { location: 0, components: 2, offset: 0 }].into(),
                };
                let corners = [-1.0f32, -1.0, 3.0, -1.0, -1.0, 3.0];
                let triangle = self.device.create_vertex_buffer(corners.as_slice().into(), &layout).into_result()?;
                *self.triangle.insert(triangle)
            }
        };
        let target = match self.targets.get(&state.cloned()) {
            Some(target) => *target,
            None => {
                let target = match state {
                    None => self.device.create_render_target(8, 8).into_result()?,
                    Some(state) => {
                        let desc = RenderTargetDesc {
                            width: 8,
                            height: 8,
                            colors: state.colors.clone().into(),
                            depth: state.depth,
                        };
                        self.device.create_render_target_with(&desc).into_result()?
                    }
                };
                *self.targets.entry(state.cloned()).or_insert(target)
            }
        };
        // A target with depth is drawn with the test and without: a driver
        // may compile for either.
        let depth_tests: &[bool] = if state.is_some_and(|s| s.depth) { &[false, true] } else { &[false] };
        for depth_test in depth_tests {
            let mut call = DrawCall::triangles(target, loaded.built.program, triangle, 3);
            call.depth_test = *depth_test;
            self.device.draw(&call).into_result()?;
        }
        Ok(())
    }

    /// Waits for every draw: reads each target back.
    fn finish(&mut self) {
        for target in self.targets.values() {
            let read = self
                .device
                .render_target_texture(*target, 0)
                .into_result()
                .and_then(|texture| self.device.read_texture(texture, 0).into_result());
            if let Err(e) = read {
                tracing::debug!("reading a warm target back: {e}");
            }
        }
    }
}
