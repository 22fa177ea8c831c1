//! The root module every XR plugin exports.
//!
//! A plugin is a `cdylib` with one `#[export_root_module]` function returning
//! an [`XrPluginRef`]. abi_stable checks its layout against the host's when
//! the library loads: a plugin built against another interface is refused.
//!
//! [`export_plugin!`](crate::export_plugin) writes that function and the
//! guarded functions listing the plugin's systems:
//!
//! ```ignore
//! xr_sourcebuild::export_plugin! {
//!     name: "my-compiler",
//!     device_systems: [],
//!     build_systems: [xr_sourcebuild::Guarded(MyCompiler)],
//! }
//! ```
//!
//! where `MyCompiler` implements
//! [`SourceBuildSystemBackend`](crate::SourceBuildSystemBackend) (a device
//! system, [`DeviceSystemBackend`](xr_device::DeviceSystemBackend)), and
//! [`Guarded`](crate::Guarded) makes it the ABI trait with every call
//! guarded. A value that implements the ABI trait itself is taken as it is.

use crate::system::SourceBuildSystemBox;
use abi_stable::{
    StableAbi, declare_root_module_statics,
    library::RootModule,
    package_version_strings,
    sabi_types::VersionStrings,
    std_types::{RStr, RVec},
};
use xr_device::{DeviceSystemBox, LogSink, XrResult};

/// The plugin's root module: its name and what it provides.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = XrPluginRef)))]
#[sabi(missing_field(panic))]
pub struct XrPlugin {
    /// Plugin name, e.g. `xr-rhi-opengl`.
    pub name: RStr<'static>,
    /// Plugin version.
    pub version: RStr<'static>,
    /// The device systems it provides (may be none).
    pub device_systems: extern "C" fn() -> XrResult<RVec<DeviceSystemBox>>,
    /// The build systems it provides (may be none).
    pub build_systems: extern "C" fn() -> XrResult<RVec<SourceBuildSystemBox>>,
    /// Sends the plugin's log events to the host's log (called once, when
    /// the host loads the plugin).
    #[sabi(last_prefix_field)]
    pub set_log_sink: extern "C" fn(LogSink),
}

/// The plugin interface's version: the root module's version string,
/// which abi_stable checks (with the layout) when a plugin loads.
pub const INTERFACE_VERSION: &str = env!("CARGO_PKG_VERSION");

impl RootModule for XrPluginRef {
    declare_root_module_statics! {XrPluginRef}
    const BASE_NAME: &'static str = "xr_plugin";
    const NAME: &'static str = "xr_plugin";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}

/// Exports a plugin's root module: its name, the crate's version, and
/// guarded functions that list the given device systems and build systems
/// (values implementing `DeviceSystem` / `SourceBuildSystem`: a backend
/// wrapped in [`Guarded`](crate::Guarded), or a value that implements the
/// ABI trait itself). The plugin crate depends on `abi_stable`, whose
/// attribute this expands to.
#[macro_export]
macro_rules! export_plugin {
    (
        name: $name:literal,
        device_systems: [$($device:expr),* $(,)?],
        build_systems: [$($build:expr),* $(,)?] $(,)?
    ) => {
        /// The plugin's root module.
        #[::abi_stable::export_root_module]
        pub fn root_module() -> $crate::XrPluginRef {
            <$crate::XrPlugin as ::abi_stable::prefix_type::PrefixTypeTrait>::leak_into_prefix($crate::XrPlugin {
                name: ::abi_stable::rstr!($name),
                version: ::abi_stable::rstr!(env!("CARGO_PKG_VERSION")),
                device_systems: __xr_device_systems,
                build_systems: __xr_build_systems,
                set_log_sink: __xr_set_log_sink,
            })
        }

        extern "C" fn __xr_set_log_sink(sink: $crate::xr_device::LogSink) {
            let _ = $crate::xr_device::catch_panic(|| $crate::xr_device::install_plugin_logger(sink));
        }

        extern "C" fn __xr_device_systems()
        -> $crate::xr_device::XrResult<::abi_stable::std_types::RVec<$crate::xr_device::DeviceSystemBox>> {
            $crate::xr_device::guard(|| {
                Ok(::std::vec![$($crate::xr_device::DeviceSystem_TO::from_value($device, ::abi_stable::sabi_trait::TD_Opaque)),*]
                    .into())
            })
        }

        extern "C" fn __xr_build_systems()
        -> $crate::xr_device::XrResult<::abi_stable::std_types::RVec<$crate::SourceBuildSystemBox>> {
            $crate::xr_device::guard(|| {
                Ok(::std::vec![$($crate::SourceBuildSystem_TO::from_value($build, ::abi_stable::sabi_trait::TD_Opaque)),*].into())
            })
        }
    };
}
