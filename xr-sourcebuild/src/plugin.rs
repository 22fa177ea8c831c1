//! The root module every XR plugin exports.
//!
//! A plugin is a `cdylib` with one `#[export_root_module]` function returning
//! an [`XrPluginRef`]. abi_stable checks its layout against the host's when
//! the library loads: a plugin built against another interface is refused.
//!
//! ```ignore
//! #[abi_stable::export_root_module]
//! fn root() -> XrPluginRef {
//!     XrPlugin { name: rstr!("my-plugin"), version: rstr!("0.1.0"), device_systems, build_systems }
//!         .leak_into_prefix()
//! }
//! ```

use crate::system::SourceBuildSystemBox;
use abi_stable::{
    StableAbi, declare_root_module_statics,
    library::RootModule,
    package_version_strings,
    sabi_types::VersionStrings,
    std_types::{RStr, RVec},
};
use xr_device::{DeviceSystemBox, XrResult};

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
    #[sabi(last_prefix_field)]
    pub build_systems: extern "C" fn() -> XrResult<RVec<SourceBuildSystemBox>>,
}

impl RootModule for XrPluginRef {
    declare_root_module_statics! {XrPluginRef}
    const BASE_NAME: &'static str = "xr_plugin";
    const NAME: &'static str = "xr_plugin";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}
