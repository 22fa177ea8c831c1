//! Pipelines compiled on other threads, for draws that do not wait.
//!
//! A draw that does not wait gets a pipeline linked from the program's
//! libraries at once (or none yet, without libraries) and the pipeline it
//! should have, optimized (or whole), compiles on the plugin's background
//! pool (`xr_plugin_kit::background`) through the same pipeline cache (a `VkPipelineCache` is internally
//! synchronized). When it is done it replaces the linked one in the
//! program's table: later draws bind it. The linked one is kept until the
//! program is destroyed, not destroyed when replaced: a command buffer
//! recorded with it may still be pending on a device that does not wait
//! for each submission. XR's own Vulkan device waits for every
//! submission (a draw, a readback) before the call returns, so with it
//! nothing could use a replaced pipeline; a build system cannot know which
//! device draws, so it keeps them. Each thread holds the program's
//! pipelines (an `Arc`); what keeps the shader modules, the layout and
//! the device alive while it compiles is the join: the program's
//! destruction joins every thread before it destroys them, and a device
//! that closes first joins them through `VulkanProgram::settle`.

use super::{GraphicsPipelines, TargetShape, formats_of};
use ash::vk;
use std::sync::{PoisonError, atomic::Ordering};
use xr_device::XrError;

/// Where a program's pipeline for one target shape stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Slot {
    /// Compiling whole on another thread: none yet.
    Compiling,
    /// Linked from the libraries; the optimized one compiles on another thread.
    Linked(vk::Pipeline),
    /// Made: optimized, or compiled whole.
    Ready(vk::Pipeline),
    /// It could not be made (logged when it failed).
    Failed,
}

impl Slot {
    /// The pipeline it holds, if any.
    pub(super) fn pipeline(self) -> Option<vk::Pipeline> {
        match self {
            Slot::Linked(pipeline) | Slot::Ready(pipeline) => Some(pipeline),
            Slot::Compiling | Slot::Failed => None,
        }
    }
}

impl GraphicsPipelines {
    /// Starts the pipeline of `key` on the background pool (a few threads,
    /// the cores but one, shared by every program: hundreds of new states
    /// at once queue there, not on the cores beside the drawing thread):
    /// optimized from the libraries with the fragment output library
    /// `output`, or whole without one. Where the pool has no thread it is
    /// made on this one.
    pub(super) fn start(&self, key: TargetShape, output: Option<vk::Pipeline>) -> Result<(), XrError> {
        let me = self.me.upgrade().ok_or_else(|| XrError::driver(format!("{}: the program is gone", self.context)))?;
        let task = xr_plugin_kit::background::spawn(move || me.finish(key, output));
        let mut jobs = self.jobs.lock().unwrap_or_else(PoisonError::into_inner);
        // Jobs done are joined here, so that their handles do not pile up.
        for done in jobs.extract_if(.., |job| job.is_finished()) {
            if done.join().is_err() {
                tracing::error!("{}: a pipeline compile panicked", self.context);
            }
        }
        jobs.push(task);
        Ok(())
    }

    /// Compiles the pipeline of `key` and puts it in the table in place of
    /// the linked one, waking whoever waits for it. A program destroyed
    /// meanwhile compiles nothing.
    fn finish(&self, key: TargetShape, output: Option<vk::Pipeline>) {
        let compiled = if self.cancelled.load(Ordering::Acquire) {
            Err(XrError::driver(format!("{}: destroyed before its pipeline compiled", self.context)))
        } else {
            // A panic must still settle the slot: a draw may wait for it.
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.compile(&key, output)))
                .unwrap_or_else(|_| Err(XrError::driver(format!("{}: compiling a pipeline panicked", self.context))))
        };
        let mut made = self.made.lock().unwrap_or_else(PoisonError::into_inner);
        let slot = match (compiled, made.get(&key).copied()) {
            (Ok(pipeline), _) => Slot::Ready(pipeline),
            // The linked one draws the same pixels: it stays, as the final one.
            (Err(e), Some(Slot::Linked(linked))) => {
                tracing::warn!("{e}: the pipeline linked from libraries stays");
                Slot::Ready(linked)
            }
            (Err(e), _) => {
                tracing::error!("{e}");
                Slot::Failed
            }
        };
        if let Some(Slot::Linked(linked)) = made.insert(key, slot)
            && slot != Slot::Ready(linked)
        {
            self.retired.lock().unwrap_or_else(PoisonError::into_inner).push(linked);
        }
        self.changed.notify_all();
    }

    /// The pipeline of `key`, made now: optimized from the libraries with
    /// `output`, or whole.
    fn compile(&self, key: &TargetShape, output: Option<vk::Pipeline>) -> Result<vk::Pipeline, XrError> {
        let (colors, depth) = formats_of(&key.0, key.1);
        match (output, &self.libraries) {
            (Some(output), Some(libraries)) => libraries.link(self, output, depth.is_some(), true),
            _ => self.make(self.cache, &colors, depth, true, key.2),
        }
    }

    /// Waits for every compile this program started; how many it joined.
    pub fn join(&self) -> u64 {
        let mut joined = 0;
        loop {
            let jobs = std::mem::take(&mut *self.jobs.lock().unwrap_or_else(PoisonError::into_inner));
            if jobs.is_empty() {
                return joined;
            }
            joined += jobs.len() as u64;
            for job in jobs {
                if job.join().is_err() {
                    tracing::error!("{}: a pipeline compile panicked", self.context);
                }
            }
        }
    }
}
