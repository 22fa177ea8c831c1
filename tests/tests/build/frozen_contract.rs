//! The ABI rule, tested: a plugin built against the frozen copy of the ABI
//! crates (`tests/fixtures/frozen`, as of the last break) loads in this host
//! and works through it; a plugin that recorded another interface version
//! is refused in one line naming both versions.

use std::{path::PathBuf, sync::OnceLock};
use xr_host::Registry;
use xr_sourcebuild::{OfflineRequest, ProgramDesc, ShaderStage, SourceDesc, SourceReach};
use xr_tests::{Xr, library, out_of_tree_plugin, temp_dir, workspace_root};

/// The frozen workspace's plugin (its own lock file and copies of the ABI
/// crates), built once.
fn frozen_plugin() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| out_of_tree_plugin("tests/fixtures/frozen/Cargo.toml", "xr-fixture-frozen")).clone()
}

#[test]
fn the_frozen_copy_is_the_last_break_of_the_abi() {
    // A frozen copy at other versions than the live crates' means a break
    // was made without refreezing, or a refreeze without a bump.
    let frozen = std::fs::read_to_string(workspace_root().join("tests/fixtures/frozen/vendor/VERSIONS")).unwrap();
    let live = [
        ("xr-device", xr_device::INTERFACE_VERSION),
        ("xr-sourcebuild", xr_sourcebuild::INTERFACE_VERSION),
        ("xr-plugin", xr_plugin::INTERFACE_VERSION),
    ];
    for (crate_name, version) in live {
        let line = frozen.lines().find(|l| l.starts_with(&format!("{crate_name} "))).unwrap_or_else(|| {
            panic!("{crate_name} is not in the frozen copy's VERSIONS:\n{frozen}");
        });
        let frozen_version = line.split_whitespace().nth(1).unwrap_or("");
        let break_of = |v: &str| v.split('.').take(2).collect::<Vec<_>>().join(".");
        assert_eq!(
            break_of(frozen_version),
            break_of(version),
            "{crate_name}: frozen at {frozen_version}, live {version}: a break bumps the middle number and \
             refreezes with scripts/freeze-contract.sh in the same commit"
        );
    }
}

#[test]
fn a_plugin_built_against_the_frozen_abi_loads_and_compiles_in_this_host() {
    let dir = temp_dir("frozen-plugin");
    let plugin = frozen_plugin();
    std::fs::copy(&plugin, dir.join(plugin.file_name().unwrap())).unwrap();

    let registry = Registry::load_dirs([dir.to_path_buf()]);
    assert!(registry.skipped().is_empty(), "the frozen plugin was refused: {:?}", registry.skipped());
    let names: Vec<&str> = registry.plugins().iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["xr-fixture-frozen"]);

    // Its device system answers through the frozen vtable, and its refusal
    // to open comes back as the error it returned.
    let devices = registry.device_system_named("xr-fixture-frozen").expect("its device system is listed");
    assert_eq!(
        devices.info().into_result().map(|i| i.description.to_string()).as_deref(),
        Ok("a device system of the frozen ABI")
    );
    let refusal = devices.open(&Default::default()).into_result().err().map(|e| e.message.to_string());
    assert_eq!(refusal.as_deref(), Some("the frozen fixture has no device to open"));

    // Its build system compiles through this host's choice of compiler.
    let (info, compiler) = registry.offline_compiler("frozen-text", "frozen-blob").expect("the pair is offered");
    // What its pair declares, read through the frozen layout: its compile reads the stage alone.
    assert_eq!(info.compiles.iter().map(|p| p.reach).collect::<Vec<_>>(), [SourceReach::STAGE_ONLY]);
    let source = SourceDesc::new("frozen-text", ShaderStage::Compute, "a.ftxt", "hello");
    let request = OfflineRequest::new(ProgramDesc::new("p", [source]), "frozen-blob");
    let artifact = compiler.compile_offline(&request).into_result().expect("compiles");
    assert_eq!(artifact.bytes.as_slice(), b"frozen:hello");

    // `xr plugins` lists it as a user would see it.
    let (ok, stdout, stderr) = Xr::new(["plugins"]).plugins(&dir).run().parts();
    assert!(ok, "{stderr}");
    assert!(stdout.contains("xr-fixture-frozen"), "{stdout}");
    assert!(!stdout.contains("skipped"), "{stdout}");
}

#[test]
fn a_plugin_of_another_interface_version_is_refused_in_one_line_naming_both() {
    let dir = temp_dir("old-interface");
    let old = library("xr-fixture-old-interface");
    let file = dir.join(old.file_name().unwrap());
    std::fs::copy(&old, &file).unwrap();
    let registry = Registry::load_dirs([dir.to_path_buf()]);
    assert!(registry.plugins().is_empty());
    let reason = &registry.skipped().iter().find(|s| s.path == file).expect("refused").reason;
    assert_eq!(
        reason,
        &format!(
            "incompatible plugin interface: built against the device-system interface (xr-device) 0.4.0, this \
             host has {}; rebuild the plugin against this XR",
            xr_device::INTERFACE_VERSION
        )
    );
}

#[test]
fn a_shipped_plugin_records_this_hosts_interfaces_under_the_name_the_host_reads() {
    // `export_plugin!` writes the function and the host looks it up by
    // `INTERFACES_SYMBOL`: if the two names parted, every plugin would fall
    // through to abi_stable's check and the one-line refusal would be lost.
    let plugin = library("xr-compiler-glsl");
    let raw = abi_stable::library::RawLibrary::load_at(&plugin).expect("the plugin opens");
    // SAFETY: `export_plugin!` defines the symbol as `extern "C" fn() ->
    // &'static InterfaceVersions`; the versions are compared while `raw` is open.
    let recorded = unsafe {
        let interfaces = raw
            .get::<extern "C" fn() -> &'static xr_plugin::InterfaceVersions>(xr_plugin::INTERFACES_SYMBOL)
            .expect("the plugin records its interfaces");
        *interfaces()
    };
    assert_eq!(recorded, xr_plugin::INTERFACE_VERSIONS);
}
