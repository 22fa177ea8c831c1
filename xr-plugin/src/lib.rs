//! What every XR plugin exports, for either kind of plugin: the root module
//! ([`export_plugin!`]), the interface versions it was built against, and
//! [`Guarded`], which puts a plugin's plain traits behind the ABI traits of
//! both contracts with every call's panics caught.
//!
//! The two contracts stay apart: `xr-device` (device systems) and
//! `xr-sourcebuild` (build systems, which attach to devices through
//! `xr-device`'s native handles). A device plugin's code names nothing of
//! the build-system contract; this crate, which lists both kinds in one root
//! module, is the one place that links both.
//!
//! # The ABI rule
//!
//! Everything that crosses the plugin boundary is declared in `xr-device`,
//! `xr-sourcebuild` and this crate with `#[derive(StableAbi)]`, and
//! abi_stable compares the layouts — and each type's crate name and version —
//! when a plugin loads. Each of the three crates has its own interface
//! version, its package version `0.B.A` (not the workspace's): `B` counts
//! breaks, `A` additions. abi_stable lets `0.B.x` meet `0.B.y`, and refuses
//! another `B`; the host checks the same rule first ([`check_interfaces`]),
//! so that such a plugin is refused with one line naming both versions.
//!
//! - **A break** — a method added to a `#[sabi_trait]` (before or after
//!   its `#[sabi(last_prefix_field)]`), a field added to an ABI struct,
//!   anything removed, reordered or retyped, a variant added to an ABI
//!   enum — bumps `B` of the crate that declares it, and refreezes the
//!   fixture (`scripts/freeze-contract.sh`) in the same commit. A method
//!   after `last_prefix_field` is a break too: abi_stable 0.11's layout
//!   check refuses a host whose vtable has more methods than the plugin's
//!   (`too many fields`), so a host that has the method cannot load a
//!   plugin built before it; it would only let a newer plugin into an
//!   older host. (Seen when `xr-sourcebuild` gained `draw_states`,
//!   `warm_draw_states` and `counters`: the frozen plugin was refused.)
//!   New methods still go after `last_prefix_field`, which never moves,
//!   with a default body, so that a plugin need not write them.
//! - **An addition** — what changes no layout the check compares: a new
//!   helper, a new type nothing in the root module reaches, a documented
//!   meaning for a value that was unused — bumps `A`.
//!
//! The rule is tested, not hoped for: `tests/fixtures/frozen/` holds a copy
//! of the three crates as of the last break and a plugin built against that
//! copy, which every later host must load and use.

#![deny(missing_docs)]

pub mod guarded;
pub mod root;
pub mod version;

pub use guarded::{Guarded, attached_box, constant_table_box, device_box};
pub use root::{
    INTERFACE_VERSION, INTERFACE_VERSIONS, INTERFACES_SYMBOL, InterfaceVersions, LinkedPlugin, XrPlugin, XrPluginRef,
};
pub use version::check_interfaces;
pub use xr_device;
pub use xr_env;
pub use xr_sourcebuild;
