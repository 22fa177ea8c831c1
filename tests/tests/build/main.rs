//! The `xr` command and what it does to a store, run as a user runs it: builds, compiles,
//! gc and verify, crashes and concurrent processes, the remote cache, plugins from disk.

mod bindgen;
mod cargo_build_script;
mod cli;
mod cli_compile;
mod cli_conventions;
mod cli_store;
mod crash_consistency;
mod diagnostics;
mod frozen_contract;
mod gc_concurrency;
mod guarded;
mod hermetic;
mod manifest_errors;
mod plan;
mod plugin_search;
mod plugin_wgsl;
mod registry;
mod remote;
mod remote_exec;
mod slang;
mod store_processes;
mod used;
mod workers;
mod xr_build;
