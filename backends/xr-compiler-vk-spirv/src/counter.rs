//! What the build system makes on the device, counted twice: in the
//! device's [`CreatedObjectCounts`] (every pipeline and shader object, as
//! `Device::counters` reports them) and in its own counts, split by how
//! each was made (`AttachedBuildSystem::counters`): a pipeline the driver
//! compiled or found in the pipeline cache, a shader object made from
//! SPIR-V or from the driver's stored binary. The split is what shows that
//! a warm worked: after it, loads and draws compile nothing. Where the
//! device has graphics pipeline libraries, the libraries made at load, the
//! pipelines linked from them at once for a draw that does not wait, and
//! the optimized ones that replace those are counted apart from whole
//! compiles; libraries are not drawable pipelines, and the device does not
//! count them.

use ash::vk;
use std::sync::{
    Arc,
    atomic::{AtomicU64, Ordering},
};
use xr_device::{CreatedObjectCounts, DeviceCounter};

/// The count of pipelines linked from graphics pipeline libraries at once.
pub const PIPELINES_LINKED: &str = "pipelines linked from libraries";

/// The count of optimized pipelines linked on another thread, each
/// replacing one linked at once.
pub const PIPELINES_OPTIMIZED: &str = "pipelines optimized in the background";

/// Whether the driver said, validly, that it found the pipeline in the cache.
fn cache_hit(feedback: &vk::PipelineCreationFeedback) -> bool {
    feedback.flags.contains(vk::PipelineCreationFeedbackFlags::VALID)
        && feedback.flags.contains(vk::PipelineCreationFeedbackFlags::APPLICATION_PIPELINE_CACHE_HIT)
}

/// The count of threads compiling pipelines that a closing device waited
/// for before it destroyed anything.
pub const THREADS_SETTLED: &str = "pipeline threads a closing device waited for";

/// The build system's own counts.
#[derive(Default, Debug)]
struct Made {
    pipelines_compiled: AtomicU64,
    pipelines_from_cache: AtomicU64,
    pipelines_linked: AtomicU64,
    pipelines_optimized: AtomicU64,
    libraries_compiled: AtomicU64,
    libraries_from_cache: AtomicU64,
    shader_objects_from_spirv: AtomicU64,
    shader_objects_from_binaries: AtomicU64,
    threads_settled: AtomicU64,
}

/// Where a build system counts what it makes on the device.
#[derive(Clone)]
pub struct Counter {
    /// The device's counts, or null where it keeps none.
    device: *const CreatedObjectCounts,
    own: Arc<Made>,
}

// SAFETY: the device's counts are atomics it keeps while it is open; the
// build system only counts while it is (every object is made on an open
// device).
unsafe impl Send for Counter {}
// SAFETY: as for `Send`.
unsafe impl Sync for Counter {}

impl Counter {
    /// Counts into the device's `counts` (null: none kept) and counts of its own.
    pub fn new(counts: *const CreatedObjectCounts) -> Self {
        Self { device: counts, own: Arc::default() }
    }

    fn device(&self, field: impl Fn(&CreatedObjectCounts) -> &AtomicU64, n: u64) {
        // SAFETY: non-null counts are the open device's (see the type).
        if let Some(counts) = unsafe { self.device.as_ref() } {
            field(counts).fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Counts a pipeline made whole, by what the driver said of its creation
    /// (`VkPipelineCreationFeedback`): found whole in the pipeline cache,
    /// or compiled (also where the driver says nothing).
    pub fn pipeline(&self, feedback: &vk::PipelineCreationFeedback) {
        self.device(|c| &c.pipelines, 1);
        let count = if cache_hit(feedback) { &self.own.pipelines_from_cache } else { &self.own.pipelines_compiled };
        count.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a graphics pipeline library made at load: compiled, or found
    /// in the pipeline cache. Not a pipeline a draw binds: the device's
    /// count leaves it out.
    pub fn library(&self, feedback: &vk::PipelineCreationFeedback) {
        let count = if cache_hit(feedback) { &self.own.libraries_from_cache } else { &self.own.libraries_compiled };
        count.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a pipeline linked from libraries at once, for a draw that
    /// does not wait. The driver's feedback says nothing more here: a fast
    /// link compiles nothing, whether the cache had it or not.
    pub fn linked(&self, _feedback: &vk::PipelineCreationFeedback) {
        self.device(|c| &c.pipelines, 1);
        self.own.pipelines_linked.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts an optimized pipeline linked from libraries on another
    /// thread (to replace one linked at once); one the driver found in the
    /// pipeline cache counts as found there.
    pub fn optimized(&self, feedback: &vk::PipelineCreationFeedback) {
        self.device(|c| &c.pipelines, 1);
        let count = if cache_hit(feedback) { &self.own.pipelines_from_cache } else { &self.own.pipelines_optimized };
        count.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts `n` shader objects made, from the driver's binaries or from SPIR-V.
    pub fn shader_objects(&self, n: u64, from_binaries: bool) {
        self.device(|c| &c.shader_objects, n);
        let own = &self.own;
        let count = if from_binaries { &own.shader_objects_from_binaries } else { &own.shader_objects_from_spirv };
        count.fetch_add(n, Ordering::Relaxed);
    }

    /// Counts `n` threads compiling pipelines that a closing device waited
    /// for (`VulkanProgram::settle`).
    pub fn settled(&self, n: u64) {
        self.own.threads_settled.fetch_add(n, Ordering::Relaxed);
    }

    /// The build system's own counts, as `AttachedBuildSystem::counters` reports them.
    pub fn counters(&self) -> Vec<DeviceCounter> {
        let own = &self.own;
        [
            ("pipelines compiled", &own.pipelines_compiled),
            ("pipelines from the pipeline cache", &own.pipelines_from_cache),
            (PIPELINES_LINKED, &own.pipelines_linked),
            (PIPELINES_OPTIMIZED, &own.pipelines_optimized),
            ("pipeline libraries compiled", &own.libraries_compiled),
            ("pipeline libraries from the pipeline cache", &own.libraries_from_cache),
            ("shader objects from SPIR-V", &own.shader_objects_from_spirv),
            ("shader objects from binaries", &own.shader_objects_from_binaries),
            (THREADS_SETTLED, &own.threads_settled),
        ]
        .into_iter()
        .map(|(name, count)| DeviceCounter { name: name.into(), value: count.load(Ordering::Relaxed) })
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(counter: &Counter, name: &str) -> u64 {
        counter.counters().into_iter().find(|c| c.name.as_str() == name).map(|c| c.value).unwrap()
    }

    #[test]
    fn a_pipeline_counts_as_a_cache_hit_only_where_the_driver_says_so_validly() {
        let device = CreatedObjectCounts::default();
        let counter = Counter::new(&device);
        let flags = |f| vk::PipelineCreationFeedback { flags: f, duration: 0 };
        use vk::PipelineCreationFeedbackFlags as F;
        counter.pipeline(&flags(F::VALID | F::APPLICATION_PIPELINE_CACHE_HIT));
        counter.pipeline(&flags(F::VALID));
        counter.pipeline(&flags(F::APPLICATION_PIPELINE_CACHE_HIT));
        counter.pipeline(&flags(F::empty()));
        counter.shader_objects(2, true);
        counter.shader_objects(3, false);
        assert_eq!(value(&counter, "pipelines from the pipeline cache"), 1);
        assert_eq!(value(&counter, "pipelines compiled"), 3);
        assert_eq!(value(&counter, "shader objects from binaries"), 2);
        assert_eq!(value(&counter, "shader objects from SPIR-V"), 3);
        assert_eq!(device.pipelines.load(Ordering::Relaxed), 4);
        assert_eq!(device.shader_objects.load(Ordering::Relaxed), 5);
    }

    #[test]
    fn libraries_links_and_optimized_pipelines_are_counted_apart_from_whole_compiles() {
        let device = CreatedObjectCounts::default();
        let counter = Counter::new(&device);
        let none = vk::PipelineCreationFeedback::default();
        let hit = vk::PipelineCreationFeedback {
            flags: vk::PipelineCreationFeedbackFlags::VALID
                | vk::PipelineCreationFeedbackFlags::APPLICATION_PIPELINE_CACHE_HIT,
            duration: 0,
        };
        for _ in 0..4 {
            counter.library(&none);
        }
        counter.library(&hit);
        counter.linked(&none);
        counter.linked(&hit);
        counter.optimized(&none);
        counter.optimized(&hit);
        assert_eq!(value(&counter, "pipeline libraries compiled"), 4);
        assert_eq!(value(&counter, "pipeline libraries from the pipeline cache"), 1);
        assert_eq!(value(&counter, PIPELINES_LINKED), 2, "a fast link is one whatever the cache says");
        assert_eq!(value(&counter, PIPELINES_OPTIMIZED), 1);
        assert_eq!(value(&counter, "pipelines from the pipeline cache"), 1);
        assert_eq!(value(&counter, "pipelines compiled"), 0, "nothing was compiled whole");
        assert_eq!(device.pipelines.load(Ordering::Relaxed), 4, "libraries are no pipelines a draw binds");
    }
}
