//! The root module every XR plugin exports, and the interface versions it
//! records.
//!
//! A plugin is a `cdylib` with one `#[export_root_module]` function returning
//! an [`XrPluginRef`]. abi_stable checks its layout against the host's when
//! the library loads. Before that, the host reads the [`InterfaceVersions`]
//! the plugin was built against from a plain C function
//! ([`INTERFACES_SYMBOL`]), so that a plugin of another interface is refused
//! with one line naming both versions instead of a page of layout errors.
//!
//! [`export_plugin!`](crate::export_plugin) writes both functions and the
//! guarded functions listing the plugin's systems:
//!
//! ```ignore
//! xr_plugin::export_plugin! {
//!     name: "my-compiler",
//!     device_systems: [],
//!     build_systems: [xr_plugin::Guarded(MyCompiler)],
//! }
//! ```
//!
//! where `MyCompiler` implements `xr_sourcebuild::SourceBuildSystemBackend`
//! (a device system, `xr_device::DeviceSystemBackend`), and
//! [`Guarded`](crate::Guarded) makes it the ABI trait with every call
//! guarded. A value that implements the ABI trait itself is taken as it is.

use abi_stable::{
    StableAbi, declare_root_module_statics,
    library::RootModule,
    package_version_strings,
    sabi_types::VersionStrings,
    std_types::{RStr, RVec},
};
use xr_device::{DeviceSystemBox, LogSink, XrResult};
use xr_sourcebuild::SourceBuildSystemBox;

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

/// The root module's interface version: this crate's package version, which
/// abi_stable checks when a plugin loads. It is the crate's own (not the
/// workspace's): see the crate's documentation for when it moves.
pub const INTERFACE_VERSION: &str = env!("CARGO_PKG_VERSION");

impl RootModule for XrPluginRef {
    declare_root_module_statics! {XrPluginRef}
    const BASE_NAME: &'static str = "xr_plugin";
    const NAME: &'static str = "xr_plugin";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}

/// A plugin linked into the program, as its crate offers it (the `PLUGIN`
/// constant [`declare_plugin!`](crate::declare_plugin) writes): the host
/// registers it in process (`xr_host::Registry::link`), through the same
/// version and layout checks as a plugin loaded from a file, with no file
/// search. Two plugin crates can be linked into one program only without
/// their exported root modules: each is a symbol of one fixed name, and
/// the linker refuses two (so a plugin crate declares its plugin,
/// [`declare_plugin!`](crate::declare_plugin), and a cdylib crate around it
/// exports it, [`export_linked_plugin!`](crate::export_linked_plugin)).
#[derive(Clone, Copy)]
pub struct LinkedPlugin {
    /// The crate it comes from (`CARGO_PKG_NAME`), as messages name it.
    pub crate_name: &'static str,
    /// Its root module.
    pub root_module: fn() -> XrPluginRef,
    /// The interface versions it was built against.
    pub interfaces: &'static InterfaceVersions,
}

impl std::fmt::Debug for LinkedPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinkedPlugin").field("crate_name", &self.crate_name).finish_non_exhaustive()
    }
}

/// The name of the plain C function `export_plugin!` writes, returning the
/// plugin's [`InterfaceVersions`] (`extern "C" fn() -> &'static InterfaceVersions`).
pub const INTERFACES_SYMBOL: &[u8] = b"xr_plugin_interfaces\0";

/// The interface versions of the three ABI crates a plugin was built
/// against. Read before any layout is checked, so its own layout never
/// changes: three `RStr`s (pointer and length), in this order.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InterfaceVersions {
    /// `xr-plugin`'s: the root module.
    pub root: RStr<'static>,
    /// `xr-device`'s: the device-system contract.
    pub device: RStr<'static>,
    /// `xr-sourcebuild`'s: the build-system contract.
    pub build: RStr<'static>,
}

/// The versions this build of the ABI crates speaks: what a plugin built
/// now records, and what a host built now accepts.
pub static INTERFACE_VERSIONS: InterfaceVersions = InterfaceVersions {
    root: RStr::from_str(INTERFACE_VERSION),
    device: RStr::from_str(xr_device::INTERFACE_VERSION),
    build: RStr::from_str(xr_sourcebuild::INTERFACE_VERSION),
};

/// Declares a plugin: its root module (`root_module()`, with the plugin's
/// name, the crate's version and guarded functions that list the given
/// device systems and build systems: values implementing `DeviceSystem` /
/// `SourceBuildSystem`, a backend wrapped in [`Guarded`](crate::Guarded),
/// or a value that implements the ABI trait itself), and `PLUGIN`, the
/// [`LinkedPlugin`](crate::LinkedPlugin) a program that links the crate
/// registers (`xr_host::Registry::link`). It exports no symbol, so any
/// number of plugin crates declared so link into one program; the cdylib a
/// host loads from a file is a crate of its own around it
/// ([`export_linked_plugin!`](crate::export_linked_plugin)).
///
/// A plugin of one or a few backends, named as its crate is, says only what
/// it provides; each is wrapped in [`Guarded`](crate::Guarded):
///
/// ```ignore
/// xr_plugin::declare_plugin!(build_systems: [MyCompiler]);
/// xr_plugin::declare_plugin!(device_systems: [MySystem]);
/// ```
#[macro_export]
macro_rules! declare_plugin {
    (build_systems: [$($build:expr),+ $(,)?] $(,)?) => {
        $crate::declare_plugin! {
            name: env!("CARGO_PKG_NAME"),
            device_systems: [],
            build_systems: [$($crate::Guarded($build)),+],
        }
    };
    (device_systems: [$($device:expr),+ $(,)?] $(,)?) => {
        $crate::declare_plugin! {
            name: env!("CARGO_PKG_NAME"),
            device_systems: [$($crate::Guarded($device)),+],
            build_systems: [],
        }
    };
    (
        name: $name:expr,
        device_systems: [$($device:expr),* $(,)?],
        build_systems: [$($build:expr),* $(,)?] $(,)?
    ) => {
        /// This plugin, for a program that links its crate and registers it
        /// in process (`xr_host::Registry::link`).
        pub const PLUGIN: $crate::LinkedPlugin = $crate::LinkedPlugin {
            crate_name: env!("CARGO_PKG_NAME"),
            root_module,
            interfaces: &$crate::INTERFACE_VERSIONS,
        };

        /// The plugin's root module.
        pub fn root_module() -> $crate::XrPluginRef {
            <$crate::XrPlugin as ::abi_stable::prefix_type::PrefixTypeTrait>::leak_into_prefix($crate::XrPlugin {
                name: ::abi_stable::std_types::RStr::from_str($name),
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
        -> $crate::xr_device::XrResult<::abi_stable::std_types::RVec<$crate::xr_sourcebuild::SourceBuildSystemBox>> {
            $crate::xr_device::guard(|| {
                Ok(::std::vec![$($crate::xr_sourcebuild::SourceBuildSystem_TO::from_value($build, ::abi_stable::sabi_trait::TD_Opaque)),*].into())
            })
        }
    };
}

/// Exports a declared plugin (its crate's `PLUGIN`) from the cdylib being
/// built: abi_stable's root module and the interface versions the host
/// reads before it checks any layout. One per library: each is a symbol of
/// a fixed name. The crate depends on `abi_stable`, whose attribute this
/// expands to.
///
/// ```ignore
/// // backends/my-compiler/cdylib/lib.rs, `[lib] name = "my_compiler"`, `crate-type = ["cdylib"]`
/// xr_plugin::export_linked_plugin!(plugin::PLUGIN);
/// ```
#[macro_export]
macro_rules! export_linked_plugin {
    ($plugin:path) => {
        /// The plugin's root module, exported for a host that loads this library.
        #[::abi_stable::export_root_module]
        pub fn exported_root_module() -> $crate::XrPluginRef {
            const EXPORTED: $crate::LinkedPlugin = $plugin;
            (EXPORTED.root_module)()
        }

        /// The interface versions this plugin was built against, read by the
        /// host before it checks any layout.
        #[unsafe(no_mangle)]
        pub extern "C" fn xr_plugin_interfaces() -> &'static $crate::InterfaceVersions {
            const EXPORTED: $crate::LinkedPlugin = $plugin;
            EXPORTED.interfaces
        }

        /// The environment variables this library's code has read, for the
        /// host's record of what a build read (`xr_env`): a plugin file has
        /// its own copy of the reader.
        ///
        /// # Safety
        ///
        /// As `xr_env::for_each_name_read`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn xr_env_for_each_name_read_v1(
            each: $crate::xr_env::NameSink,
            context: *mut ::core::ffi::c_void,
        ) {
            // SAFETY: the caller's contract, passed on.
            unsafe { $crate::xr_env::for_each_name_read(each, context) }
        }
    };
}

/// A plugin in one cdylib crate: [`declare_plugin!`](crate::declare_plugin)
/// and [`export_linked_plugin!`](crate::export_linked_plugin) of its
/// `PLUGIN` together, for a plugin that is only ever loaded from a file.
/// A plugin crate a program may also link declares its plugin and leaves
/// the export to a cdylib crate of its own (XR's plugins in `backends/`).
///
/// ```ignore
/// xr_plugin::export_plugin!(build_systems: [MyCompiler]);
/// ```
#[macro_export]
macro_rules! export_plugin {
    ($($declaration:tt)*) => {
        $crate::declare_plugin!($($declaration)*);
        $crate::export_linked_plugin!(PLUGIN);
    };
}
