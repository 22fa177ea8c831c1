//! XR's plugin host: finds plugins on disk, loads them behind the
//! contracts' ABI checks, and chooses among what they declare — a device
//! system by kind, a compiler by (language → target) pair and priority,
//! compiler options by the names the chosen compiler declares. It names no
//! language, target, option or back end: everything it matches comes from
//! the plugins.

pub mod choice;
pub mod log;
pub mod options;
pub mod registry;

pub use choice::{Candidate, choose};
pub use log::{LOG_VAR, log_level};
pub use options::{OptionError, check_option, check_options, stage_selected};
pub use registry::{
    AttachedDevice, INSTALLED_PLUGIN_DIR, LoadedPlugin, PLUGIN_PATH_VAR, Registry, RegistryError, SkippedFile,
    search_order, user_plugin_dir,
};
pub use xr_plugin::LinkedPlugin;
