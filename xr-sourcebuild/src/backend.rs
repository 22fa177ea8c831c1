//! The SourceBuildSystem contract as plain Rust traits.
//!
//! As for devices (`xr_device::backend`): every method of an ABI trait must
//! catch panics, since an unwind that reaches the `extern "C"` boundary
//! aborts the host, and turn abi_stable types into Rust ones and back. A
//! plugin implements [`SourceBuildSystemBackend`],
//! [`AttachedBuildSystemBackend`] and [`ConstantTableBackend`] — the
//! operations of [`SourceBuildSystem`](crate::SourceBuildSystem),
//! [`AttachedBuildSystem`](crate::AttachedBuildSystem) and
//! [`ConstantTable`](crate::ConstantTable) under the same names, with `&str`,
//! `&[T]`, `Vec` and `Result` — and `xr_plugin::Guarded` implements the ABI
//! traits for them, with `guard` (calls that fail with an `XrError`) or
//! [`guard_build`](crate::guard_build) (calls that fail with a
//! [`BuildError`] and its diagnostics): one place for the guard, which no
//! plugin can then forget.
//!
//! ```ignore
//! struct MyCompiler;
//! impl SourceBuildSystemBackend for MyCompiler { /* info, attach, compile_offline */ }
//!
//! xr_plugin::export_plugin! {
//!     name: "my-compiler",
//!     device_systems: [],
//!     build_systems: [xr_plugin::Guarded(MyCompiler)],
//! }
//! ```

use crate::{
    availability::Availability,
    constants::{ConstantHandle, ConstantInfo, ConstantSet, ConstantValue, ResolvedSetter, ResourceInfo, SetStatus},
    diagnostics::BuildError,
    load::{ArtifactLoad, LoadedArtifact},
    offline::{OfflineArtifact, OfflineRequest},
    source::{EntryPoint, ProgramDesc, SourceDesc},
    system::{AttachedBuildSystemBox, BuildOptions, BuildSystemInfo, BuiltProgram, ProgramBinary},
};
use xr_device::{DeviceCapabilities, DeviceCounter, NativeHandles, ProgramRef, ResourceBinding, XrError};
/// A source build system, as a plugin writes it; `xr_plugin::Guarded` makes it a
/// [`SourceBuildSystem`](crate::SourceBuildSystem), whose operations these are.
pub trait SourceBuildSystemBackend: Send + Sync {
    /// Name, flags, attachable kinds, languages, stages, pairs and loads.
    fn info(&self) -> Result<BuildSystemInfo, XrError>;

    /// Attaches to a live device through its native handles (a backend
    /// boxes its attached build system with `xr_plugin::attached_box`). By default,
    /// for a build system that only compiles offline: unavailable.
    fn attach(
        &self,
        _handles: &NativeHandles,
        _capabilities: &DeviceCapabilities,
    ) -> Result<AttachedBuildSystemBox, XrError> {
        let name = self.info().map(|info| info.name.to_string()).unwrap_or_default();
        Err(XrError::unavailable(format!("{name} compiles offline only: it attaches to no device")))
    }

    /// Compiles a program into an artifact of `request.target` without a device.
    fn compile_offline(&self, request: &OfflineRequest) -> Result<OfflineArtifact, BuildError>;

    /// The entry points `source` declares itself (Slang's `[shader("…")]`).
    /// By default none: the stages of GLSL and HLSL are named from outside.
    fn entry_points(&self, _source: &SourceDesc) -> Result<Vec<EntryPoint>, BuildError> {
        Ok(Vec::new())
    }

    /// Compiles for the store: the reflection and stage outputs may be
    /// left empty ([`SourceBuildSystem::compile_for_store`]). By default,
    /// the full compile.
    fn compile_for_store(&self, request: &OfflineRequest) -> Result<OfflineArtifact, BuildError> {
        self.compile_offline(request)
    }
}

/// A build system attached to one device, as a plugin writes it;
/// `xr_plugin::Guarded` makes it an [`AttachedBuildSystem`](crate::AttachedBuildSystem), whose operations these are.
pub trait AttachedBuildSystemBackend {
    /// What this instance can do on this device.
    fn availability(&self) -> Result<Availability, XrError>;

    /// Builds a program from source on the device.
    fn build_program(&mut self, desc: &ProgramDesc, options: &BuildOptions) -> Result<BuiltProgram, BuildError>;

    /// A hash of every input that changes the program's bytes.
    fn content_key(&self, desc: &ProgramDesc, options: &BuildOptions) -> Result<Vec<u8>, BuildError>;

    /// Reads a program's binary back.
    fn program_binary(&self, program: ProgramRef) -> Result<ProgramBinary, XrError>;

    /// Loads a program from a binary, failing with `Driver` when the driver refuses it.
    fn load_program_binary(
        &mut self,
        desc: &ProgramDesc,
        options: &BuildOptions,
        binary: &ProgramBinary,
    ) -> Result<BuiltProgram, BuildError>;

    /// Combines separable stage programs into a validated program pipeline.
    fn create_pipeline(&mut self, programs: &[ProgramRef]) -> Result<ProgramRef, XrError>;

    /// Where to keep the build system's own device caches.
    fn set_store(&mut self, root: &str) -> Result<(), XrError>;

    /// Loads a stored artifact of a target this build system declared.
    fn load_artifact(&mut self, request: &ArtifactLoad) -> Result<LoadedArtifact, BuildError>;

    /// The draw states `program` had device objects made for at draw time.
    fn draw_states(&self, _program: ProgramRef) -> Result<Vec<String>, XrError> {
        Ok(Vec::new())
    }

    /// Makes `program`'s device objects for `states` now; how many.
    fn warm_draw_states(&mut self, _program: ProgramRef, _states: &[String]) -> Result<u32, XrError> {
        Ok(0)
    }

    /// What this instance has made since it attached, by how.
    fn counters(&self) -> Result<Vec<DeviceCounter>, XrError> {
        Ok(Vec::new())
    }
}

/// So that a backend can hand itself to code written against the ABI trait
/// (`xr-plugin-kit`'s `ProgramCache`) as `Guarded(&mut *self)`.
impl<B: AttachedBuildSystemBackend + ?Sized> AttachedBuildSystemBackend for &mut B {
    fn availability(&self) -> Result<Availability, XrError> {
        (**self).availability()
    }

    fn build_program(&mut self, desc: &ProgramDesc, options: &BuildOptions) -> Result<BuiltProgram, BuildError> {
        (**self).build_program(desc, options)
    }

    fn content_key(&self, desc: &ProgramDesc, options: &BuildOptions) -> Result<Vec<u8>, BuildError> {
        (**self).content_key(desc, options)
    }

    fn program_binary(&self, program: ProgramRef) -> Result<ProgramBinary, XrError> {
        (**self).program_binary(program)
    }

    fn load_program_binary(
        &mut self,
        desc: &ProgramDesc,
        options: &BuildOptions,
        binary: &ProgramBinary,
    ) -> Result<BuiltProgram, BuildError> {
        (**self).load_program_binary(desc, options, binary)
    }

    fn create_pipeline(&mut self, programs: &[ProgramRef]) -> Result<ProgramRef, XrError> {
        (**self).create_pipeline(programs)
    }

    fn set_store(&mut self, root: &str) -> Result<(), XrError> {
        (**self).set_store(root)
    }

    fn load_artifact(&mut self, request: &ArtifactLoad) -> Result<LoadedArtifact, BuildError> {
        (**self).load_artifact(request)
    }

    fn draw_states(&self, program: ProgramRef) -> Result<Vec<String>, XrError> {
        (**self).draw_states(program)
    }

    fn warm_draw_states(&mut self, program: ProgramRef, states: &[String]) -> Result<u32, XrError> {
        (**self).warm_draw_states(program, states)
    }

    fn counters(&self) -> Result<Vec<DeviceCounter>, XrError> {
        (**self).counters()
    }
}

/// The constant table of one built program, as a plugin writes it;
/// `xr_plugin::Guarded` makes it a [`ConstantTable`](crate::ConstantTable), whose operations these are.
pub trait ConstantTableBackend {
    /// Every active constant.
    fn constants(&self) -> Result<Vec<ConstantInfo>, XrError>;

    /// Looks a constant up by name: `color`, `light.position`, `weights[2]`.
    fn lookup(&self, name: &str) -> Result<ConstantHandle, XrError>;

    /// Sets a value; its type must match and it must fit the array.
    fn set(&mut self, handle: ConstantHandle, value: &ConstantValue<'_>) -> Result<(), XrError>;

    /// Sets several values, stopping at the first that fails; by default
    /// one [`set`](Self::set) each (the batch already saves the ABI
    /// crossings and panic guards of all but one).
    fn set_many(&mut self, sets: &[ConstantSet<'_>]) -> Result<(), XrError> {
        for set in sets {
            self.set(set.handle, &set.value)?;
        }
        Ok(())
    }

    /// Restores every constant to the initialiser written in the source.
    fn set_defaults(&mut self) -> Result<(), XrError>;

    /// Sets a value through `pipeline`'s active program
    /// (`glActiveShaderProgram`): OpenGL's alone, so refused by default,
    /// pointing at [`set`](Self::set).
    fn set_through_pipeline(
        &mut self,
        _pipeline: ProgramRef,
        _handle: ConstantHandle,
        _value: &ConstantValue<'_>,
    ) -> Result<(), XrError> {
        Err(XrError::invalid_input(
            "glActiveShaderProgram is OpenGL's: on this device set constants with `set`, \
             which writes the program's uniform blocks or push constants",
        ))
    }

    /// Every resource the program binds.
    fn resources(&self) -> Result<Vec<ResourceInfo>, XrError>;

    /// Binds a texture or buffer of the program's device to a resource.
    fn set_resource(&mut self, handle: ConstantHandle, binding: &ResourceBinding) -> Result<(), XrError>;

    /// A setter for `handle` resolved once ([`ConstantTable::resolve`]); by
    /// default none (`Unavailable`: the caller sets through the table).
    /// Its `write` must catch its own panics ([`guard_setter`] does).
    fn resolve(&self, handle: ConstantHandle) -> Result<ResolvedSetter, XrError> {
        let _ = handle;
        Err(XrError::unavailable("this constant table resolves no setters; set through the table"))
    }

    /// [`ConstantTable::write`]: a set answered with a [`SetStatus`] code;
    /// anything but `SET` makes the host call [`set`](Self::set) for the
    /// error. By default `set` itself, its error dropped.
    fn write(&mut self, handle: ConstantHandle, value: &ConstantValue<'_>) -> u32 {
        match self.set(handle, value) {
            Ok(()) => SetStatus::SET,
            Err(_) => SetStatus::REFUSED,
        }
    }
}

/// Runs a resolved setter's write for a plugin's `extern "C"` write
/// function: a panic becomes [`SetStatus::PANICKED`] instead of unwinding
/// into the host.
pub fn guard_setter(write: impl FnOnce() -> u32) -> u32 {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(write)).unwrap_or(crate::constants::SetStatus::PANICKED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use xr_device::ErrorKind;

    #[test]
    fn a_resolved_setter_that_panics_or_fails_is_an_error_naming_its_constant() {
        use crate::constants::SetStatus;
        assert_eq!(guard_setter(|| SetStatus::SET), SetStatus::SET);
        let panicked = guard_setter(|| panic!("setter bug"));
        assert_eq!(panicked, SetStatus::PANICKED);
        let error = SetStatus::error(panicked, "u_color");
        assert_eq!((error.kind, error.message.as_str()), (ErrorKind::Panic, "plugin panicked setting 'u_color'"));
        let closed = SetStatus::error(SetStatus::DEVICE_UNAVAILABLE, "u_color");
        assert_eq!(closed.kind, ErrorKind::Unavailable);
        let driver = SetStatus::error(SetStatus::DRIVER_ERROR | 0x0502, "u_color");
        assert_eq!(driver.message.as_str(), "setting 'u_color' failed with driver error 0x0502");
    }
}
