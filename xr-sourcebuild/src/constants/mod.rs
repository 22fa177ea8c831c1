//! The constant table: XR's take on D3DX's `ID3DXConstantTable`.
//!
//! Look a constant up by name once (`"color"`, `"light.position"`,
//! `"weights[2]"`) into a [`ConstantHandle`], then set it with a typed
//! setter from [`ConstantTableExt`]. The build system checks the value's type
//! and count against the declaration: a wrong type or an unknown name is an
//! error returned to the caller, never a silent driver error.
//!
//! By job:
//! - `abi`: what crosses the plugin boundary — the constant, resource,
//!   handle and value types, the [`ConstantTable`] trait, the
//!   [`ResolvedSetter`] a table hands out and its [`SetStatus`] codes —
//!   and the checks plugins run on them.
//! - `layout`: where a block member keeps its components ([`MemberLayout`]),
//!   for the plugins that write blocks.
//! - `cache`: [`ConstantTableBox`], the table behind the ABI with the
//!   setters it keeps, so that a set through it costs a resolved set.
//! - `setters`: the host's typed setters, [`ConstantTableExt`] and the
//!   setters resolved once ([`Setter`], [`FloatSetter`]).
//! - [`typed`]: constants and resources with their type in Rust's, the
//!   handles generated bindings resolve at load ([`typed::Constant`]).

mod abi;
mod cache;
mod layout;
mod setters;
pub mod typed;

pub use abi::{
    ConstantData, ConstantHandle, ConstantInfo, ConstantSet, ConstantTable, ConstantTable_TO, ConstantType,
    ConstantValue, RESOURCE_HANDLE, ResolvedSetter, ResourceInfo, ScalarKind, SetStatus, check_binding,
};
// What `#[sabi_trait]` generates beside `ConstantTable_TO`, at its old path.
pub use abi::{ConstantTable_CTO, ConstantTable_trait};
pub use cache::ConstantTableBox;
pub use layout::MemberLayout;
pub use setters::{ConstantTableExt, FloatSetter, Setter, ThroughPipeline};
