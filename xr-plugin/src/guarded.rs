//! [`Guarded`]: the one adapter that puts a plugin's plain traits behind the
//! ABI traits of both contracts.
//!
//! The ABI traits speak abi_stable types, and every one of their methods must
//! catch panics: an unwind that reaches the `extern "C"` boundary aborts the
//! host. A plugin implements the plain traits instead — `xr_device`'s
//! [`DeviceSystemBackend`] and [`DeviceBackend`], `xr_sourcebuild`'s
//! [`SourceBuildSystemBackend`], [`AttachedBuildSystemBackend`] and
//! [`ConstantTableBackend`] — and `Guarded` implements the matching ABI trait
//! for each, running every call inside a guard that turns a panic into an
//! error. The guards and the conversions are written here once, for every
//! plugin of either kind, so no plugin can forget them.

use abi_stable::{
    sabi_trait::TD_Opaque,
    std_types::{ROption, RResult, RSlice, RStr, RString, RVec},
};
use xr_device::{
    AccelerationInstance, AccelerationStructureId, BottomLevelDesc, BufferId, BufferUsage, ComputeCall, Device,
    Device_TO, DeviceBackend, DeviceBox, DeviceCapabilities, DeviceCounter, DeviceOptions, DeviceSystem,
    DeviceSystemBackend, DeviceSystemInfo, DrawCall, Image, MeshDrawCall, NativeHandles, Presented, ProgramRef,
    Readiness, RenderTargetDesc, RenderTargetId, ResourceBinding, SamplerDesc, SamplerId, TextureDesc, TextureId,
    TraceRaysCall, VertexBufferId, VertexLayout, XrResult, guard,
};
use xr_sourcebuild::{
    ArtifactLoad, AttachedBuildSystem, AttachedBuildSystem_TO, AttachedBuildSystemBackend, AttachedBuildSystemBox,
    Availability, BuildError, BuildOptions, BuildSystemInfo, BuiltProgram, ConstantHandle, ConstantInfo, ConstantSet,
    ConstantTable, ConstantTable_TO, ConstantTableBackend, ConstantTableBox, ConstantValue, EntryPoint, LoadedArtifact,
    OfflineArtifact, OfflineRequest, ProgramBinary, ProgramDesc, ResolvedSetter, ResourceInfo, SourceBuildSystem,
    SourceBuildSystemBackend, SourceDesc, guard_build, guard_setter,
};

/// A plugin's value behind an ABI trait: `Guarded(backend)` implements the
/// ABI trait of the contract `backend` implements as a plain trait
/// ([`DeviceSystemBackend`] → [`DeviceSystem`], [`DeviceBackend`] →
/// [`Device`], [`SourceBuildSystemBackend`] → [`SourceBuildSystem`],
/// [`AttachedBuildSystemBackend`] → [`AttachedBuildSystem`],
/// [`ConstantTableBackend`] → [`ConstantTable`]), running every call inside a
/// guard so that a panic comes back as an error instead of unwinding into the
/// host.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Guarded<B>(pub B);

/// A device open behind the ABI: `backend` wrapped in [`Guarded`] and boxed.
pub fn device_box<B: DeviceBackend + 'static>(backend: B) -> DeviceBox {
    Device_TO::from_value(Guarded(backend), TD_Opaque)
}

/// An attached build system behind the ABI: `backend` wrapped in
/// [`Guarded`] and boxed.
pub fn attached_box<B: AttachedBuildSystemBackend + 'static>(backend: B) -> AttachedBuildSystemBox {
    AttachedBuildSystem_TO::from_value(Guarded(backend), TD_Opaque)
}

/// A constant table behind the ABI: `backend` wrapped in [`Guarded`] and
/// boxed with the host-side setter cache.
pub fn constant_table_box<B: ConstantTableBackend + 'static>(backend: B) -> ConstantTableBox {
    ConstantTableBox::new(ConstantTable_TO::from_value(Guarded(backend), TD_Opaque))
}

impl<B: DeviceSystemBackend> DeviceSystem for Guarded<B> {
    fn info(&self) -> XrResult<DeviceSystemInfo> {
        guard(|| self.0.info())
    }

    fn open(&self, options: &DeviceOptions) -> XrResult<DeviceBox> {
        guard(|| self.0.open(options))
    }
}

impl<B: DeviceBackend> Device for Guarded<B> {
    fn capabilities(&self) -> XrResult<DeviceCapabilities> {
        guard(|| self.0.capabilities())
    }

    fn native_handles(&self) -> XrResult<NativeHandles> {
        guard(|| self.0.native_handles())
    }

    fn create_render_target(&mut self, width: u32, height: u32) -> XrResult<RenderTargetId> {
        guard(|| self.0.create_render_target(width, height))
    }

    fn create_vertex_buffer(&mut self, vertices: RSlice<'_, f32>, layout: &VertexLayout) -> XrResult<VertexBufferId> {
        guard(|| self.0.create_vertex_buffer(vertices.as_slice(), layout))
    }

    fn clear(&mut self, target: RenderTargetId, rgba: &[f32; 4]) -> XrResult<()> {
        guard(|| self.0.clear(target, rgba))
    }

    fn draw(&mut self, draw: &DrawCall) -> XrResult<()> {
        guard(|| self.0.draw(draw))
    }

    fn read_pixels(&mut self, target: RenderTargetId) -> XrResult<Image> {
        guard(|| self.0.read_pixels(target))
    }

    fn resize_window(&mut self, width: u32, height: u32) -> XrResult<()> {
        guard(|| self.0.resize_window(width, height))
    }

    fn present(&mut self, target: RenderTargetId, capture: bool) -> XrResult<Presented> {
        guard(|| self.0.present(target, capture))
    }

    fn create_depth_render_target(&mut self, width: u32, height: u32) -> XrResult<RenderTargetId> {
        guard(|| self.0.create_depth_render_target(width, height))
    }

    fn create_texture(&mut self, desc: &TextureDesc, pixels: RSlice<'_, u8>, levels_given: u32) -> XrResult<TextureId> {
        guard(|| self.0.create_texture(desc, pixels.as_slice(), levels_given))
    }

    fn read_texture(&mut self, texture: TextureId, level: u32) -> XrResult<RVec<u8>> {
        guard(|| self.0.read_texture(texture, level).map(RVec::from))
    }

    fn create_sampler(&mut self, desc: &SamplerDesc) -> XrResult<SamplerId> {
        guard(|| self.0.create_sampler(desc))
    }

    fn create_buffer(&mut self, usage: BufferUsage, data: RSlice<'_, u8>) -> XrResult<BufferId> {
        guard(|| self.0.create_buffer(usage, data.as_slice()))
    }

    fn write_buffer(&mut self, buffer: BufferId, offset: u64, data: RSlice<'_, u8>) -> XrResult<()> {
        guard(|| self.0.write_buffer(buffer, offset, data.as_slice()))
    }

    fn read_buffer(&mut self, buffer: BufferId) -> XrResult<RVec<u8>> {
        guard(|| self.0.read_buffer(buffer).map(RVec::from))
    }

    fn texture_binding(&self, texture: TextureId, sampler: ROption<SamplerId>) -> XrResult<ResourceBinding> {
        guard(|| self.0.texture_binding(texture, sampler.into_option()))
    }

    fn buffer_binding(&self, buffer: BufferId) -> XrResult<ResourceBinding> {
        guard(|| self.0.buffer_binding(buffer))
    }

    fn dispatch(&mut self, call: &ComputeCall) -> XrResult<()> {
        guard(|| self.0.dispatch(call))
    }

    fn create_render_target_with(&mut self, desc: &RenderTargetDesc) -> XrResult<RenderTargetId> {
        guard(|| {
            desc.check()?;
            self.0.create_render_target_with(desc)
        })
    }

    fn render_target_texture(&mut self, target: RenderTargetId, attachment: u32) -> XrResult<TextureId> {
        guard(|| self.0.render_target_texture(target, attachment))
    }

    fn take_validation_messages(&mut self) -> XrResult<RVec<RString>> {
        guard(|| Ok(self.0.take_validation_messages()?.into_iter().map(RString::from).collect()))
    }

    fn draw_mesh_tasks(&mut self, call: &MeshDrawCall) -> XrResult<()> {
        guard(|| self.0.draw_mesh_tasks(call))
    }

    fn create_bottom_level(&mut self, desc: &BottomLevelDesc) -> XrResult<AccelerationStructureId> {
        guard(|| self.0.create_bottom_level(desc))
    }

    fn create_top_level(&mut self, instances: RSlice<'_, AccelerationInstance>) -> XrResult<AccelerationStructureId> {
        guard(|| self.0.create_top_level(instances.as_slice()))
    }

    fn acceleration_structure_binding(&self, id: AccelerationStructureId) -> XrResult<ResourceBinding> {
        guard(|| self.0.acceleration_structure_binding(id))
    }

    fn trace_rays(&mut self, call: &TraceRaysCall) -> XrResult<()> {
        guard(|| self.0.trace_rays(call))
    }

    fn counters(&self) -> XrResult<RVec<DeviceCounter>> {
        guard(|| Ok(self.0.counters()?.into()))
    }

    fn readiness(&self, program: ProgramRef, target: RenderTargetId) -> XrResult<Readiness> {
        guard(|| self.0.readiness(program, target))
    }
}

impl<B: SourceBuildSystemBackend> SourceBuildSystem for Guarded<B> {
    fn info(&self) -> XrResult<BuildSystemInfo> {
        guard(|| self.0.info())
    }

    fn attach(&self, handles: &NativeHandles, capabilities: &DeviceCapabilities) -> XrResult<AttachedBuildSystemBox> {
        guard(|| self.0.attach(handles, capabilities))
    }

    fn compile_offline(&self, request: &OfflineRequest) -> RResult<OfflineArtifact, BuildError> {
        guard_build(|| self.0.compile_offline(request))
    }

    fn entry_points(&self, source: &SourceDesc) -> RResult<RVec<EntryPoint>, BuildError> {
        guard_build(|| self.0.entry_points(source).map(RVec::from))
    }

    fn compile_for_store(&self, request: &OfflineRequest) -> RResult<OfflineArtifact, BuildError> {
        guard_build(|| self.0.compile_for_store(request))
    }
}

impl<B: AttachedBuildSystemBackend> AttachedBuildSystem for Guarded<B> {
    fn availability(&self) -> XrResult<Availability> {
        guard(|| self.0.availability())
    }

    fn build_program(&mut self, desc: &ProgramDesc, options: &BuildOptions) -> RResult<BuiltProgram, BuildError> {
        guard_build(|| self.0.build_program(desc, options))
    }

    fn content_key(&self, desc: &ProgramDesc, options: &BuildOptions) -> RResult<RVec<u8>, BuildError> {
        guard_build(|| self.0.content_key(desc, options).map(RVec::from))
    }

    fn program_binary(&self, program: ProgramRef) -> XrResult<ProgramBinary> {
        guard(|| self.0.program_binary(program))
    }

    fn load_program_binary(
        &mut self,
        desc: &ProgramDesc,
        options: &BuildOptions,
        binary: &ProgramBinary,
    ) -> RResult<BuiltProgram, BuildError> {
        guard_build(|| self.0.load_program_binary(desc, options, binary))
    }

    fn create_pipeline(&mut self, programs: RSlice<'_, ProgramRef>) -> XrResult<ProgramRef> {
        guard(|| self.0.create_pipeline(programs.as_slice()))
    }

    fn set_store(&mut self, root: RStr<'_>) -> XrResult<()> {
        guard(|| self.0.set_store(root.as_str()))
    }

    fn load_artifact(&mut self, request: &ArtifactLoad) -> RResult<LoadedArtifact, BuildError> {
        guard_build(|| self.0.load_artifact(request))
    }

    fn draw_states(&self, program: ProgramRef) -> XrResult<RVec<RString>> {
        guard(|| self.0.draw_states(program).map(|states| states.into_iter().map(RString::from).collect()))
    }

    fn warm_draw_states(&mut self, program: ProgramRef, states: RSlice<'_, RString>) -> XrResult<u32> {
        let states: Vec<String> = states.iter().map(|s| s.to_string()).collect();
        guard(|| self.0.warm_draw_states(program, &states))
    }

    fn counters(&self) -> XrResult<RVec<DeviceCounter>> {
        guard(|| self.0.counters().map(RVec::from))
    }
}

impl<B: ConstantTableBackend> ConstantTable for Guarded<B> {
    fn constants(&self) -> XrResult<RVec<ConstantInfo>> {
        guard(|| self.0.constants().map(RVec::from))
    }

    fn lookup(&self, name: RStr<'_>) -> XrResult<ConstantHandle> {
        guard(|| self.0.lookup(name.as_str()))
    }

    fn set(&mut self, handle: ConstantHandle, value: &ConstantValue<'_>) -> XrResult<()> {
        guard(|| self.0.set(handle, value))
    }

    fn set_many(&mut self, sets: RSlice<'_, ConstantSet<'_>>) -> XrResult<()> {
        guard(|| self.0.set_many(sets.as_slice()))
    }

    fn set_defaults(&mut self) -> XrResult<()> {
        guard(|| self.0.set_defaults())
    }

    fn set_through_pipeline(
        &mut self,
        pipeline: ProgramRef,
        handle: ConstantHandle,
        value: &ConstantValue<'_>,
    ) -> XrResult<()> {
        guard(|| self.0.set_through_pipeline(pipeline, handle, value))
    }

    fn resources(&self) -> XrResult<RVec<ResourceInfo>> {
        guard(|| self.0.resources().map(RVec::from))
    }

    fn set_resource(&mut self, handle: ConstantHandle, binding: &ResourceBinding) -> XrResult<()> {
        guard(|| self.0.set_resource(handle, binding))
    }

    fn resolve(&self, handle: ConstantHandle) -> XrResult<ResolvedSetter> {
        guard(|| self.0.resolve(handle))
    }

    fn write(&mut self, handle: ConstantHandle, value: &ConstantValue<'_>) -> u32 {
        guard_setter(|| self.0.write(handle, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xr_device::{DeviceKind, ErrorKind, XrError};

    struct BrokenDevice;

    impl DeviceSystemBackend for BrokenDevice {
        fn info(&self) -> Result<DeviceSystemInfo, XrError> {
            Ok(DeviceSystemInfo { name: "broken".into(), kind: DeviceKind::OPENGL, description: "".into() })
        }

        fn open(&self, _options: &DeviceOptions) -> Result<DeviceBox, XrError> {
            panic!("open is broken")
        }
    }

    #[test]
    fn the_adapter_passes_results_and_catches_panics() {
        let system = Guarded(BrokenDevice);
        assert_eq!(DeviceSystem::info(&system).into_result().map(|i| i.name), Ok("broken".into()));
        let error = DeviceSystem::open(&system, &DeviceOptions::default()).into_result().err().map(|e| e.kind);
        assert_eq!(error, Some(ErrorKind::Panic));
    }

    struct BrokenCompiler;

    impl SourceBuildSystemBackend for BrokenCompiler {
        fn info(&self) -> Result<BuildSystemInfo, XrError> {
            Err(XrError::unavailable("no info"))
        }

        fn attach(&self, _: &NativeHandles, _: &DeviceCapabilities) -> Result<AttachedBuildSystemBox, XrError> {
            Err(XrError::unavailable("attaches to nothing"))
        }

        fn compile_offline(&self, request: &OfflineRequest) -> Result<OfflineArtifact, BuildError> {
            panic!("cannot compile '{}'", request.program.name)
        }
    }

    #[test]
    fn the_adapter_passes_errors_and_turns_panics_into_build_errors() {
        let system = Guarded(BrokenCompiler);
        let error = SourceBuildSystem::info(&system).into_result().unwrap_err();
        assert_eq!((error.kind, error.message.as_str()), (ErrorKind::Unavailable, "no info"));
        let request = OfflineRequest::new(ProgramDesc::new("p", []), "t");
        let error = SourceBuildSystem::compile_offline(&system, &request).into_result().unwrap_err();
        assert_eq!(error.error.kind, ErrorKind::Panic);
        assert_eq!(error.error.message.as_str(), "plugin panicked: cannot compile 'p'");
    }
}
