//! `xr plugins`, run as a user runs it.

use xr_tests::{Xr, plugin_dir_with};

fn xr(args: &[&str], plugin_path: Option<&std::path::Path>) -> (bool, String, String) {
    let xr = Xr::new(args).software_device();
    match plugin_path {
        Some(path) => xr.plugins(path),
        None => xr,
    }
    .run()
    .parts()
}

#[test]
fn plugins_json_shows_the_llvmpipe_device_and_the_glsl_flags() {
    let (ok, stdout, stderr) = xr(&["plugins", "--json"], None);
    assert!(ok, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("valid JSON");
    let plugins = report["plugins"].as_array().unwrap();
    let plugin = |name: &str| plugins.iter().find(|p| p["name"] == name).unwrap_or_else(|| panic!("{name} listed"));

    let gl = &plugin("xr-rhi-opengl")["device_systems"][0];
    assert_eq!(gl["kind"], "opengl");
    let device = &gl["device"]["Ok"];
    assert!(device["renderer"].as_str().unwrap().contains("llvmpipe"), "{device}");
    assert_eq!(device["api"], "OpenGL 4.5");
    assert!(device["extensions"].as_array().unwrap().iter().any(|e| e == "GL_ARB_get_program_binary"));
    assert_eq!(device["separate_shader_objects"], true);

    let glsl = &plugin("xr-compiler-glsl")["build_systems"][0];
    assert_eq!(glsl["availability"], serde_json::json!(["RuntimeCompile", "OfflineCompile"]));
    assert_eq!(glsl["attachable"], serde_json::json!(["opengl"]));
    assert_eq!(glsl["languages"], serde_json::json!(["glsl"]));
    assert_eq!(glsl["on_devices"][0]["availability"]["Ok"], serde_json::json!(["RuntimeCompile", "OfflineCompile"]));
    // What each compiles without a device, and what it loads on one, by path.
    assert_eq!(
        glsl["compiles"],
        serde_json::json!([
            {"language": "glsl", "target": "gl-glsl", "options": [], "reach": "includes"},
            {"language": "glsl", "target": "glsl-preprocessed", "options": [], "reach": "includes"},
        ])
    );
    assert_eq!(
        glsl["loads"],
        serde_json::json!([{"target": "gl-glsl", "path": "device-binary"}, {"target": "gl-glsl", "path": "source"}])
    );
    let vulkan = &plugin("xr-compiler-vk-spirv")["build_systems"][0];
    let pairs: Vec<(&str, &str)> = vulkan["compiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["language"].as_str().unwrap(), p["target"].as_str().unwrap()))
        .collect();
    assert_eq!(pairs, [("glsl", "vk-spirv"), ("hlsl", "vk-spirv")]);
    // How each pair's compiles reach files, as glslang's front ends do: what a farm's action carries.
    assert_eq!(vulkan["compiles"][0]["reach"], "includes");
    assert_eq!(vulkan["compiles"][1]["reach"], "includes");
    // Each pair with the options its compiler declares: name, values, default, help.
    let option = |pair: usize, name: &str| {
        vulkan["compiles"][pair]["options"].as_array().unwrap().iter().find(|o| o["name"] == name).cloned()
    };
    let version = option(0, "vulkan").expect("glsl → vk-spirv takes vulkan");
    assert_eq!(version["values"], serde_json::json!(["1.0", "1.1", "1.2", "1.3"]));
    assert_eq!(version["default"], "1.0");
    assert!(!version["help"].as_str().unwrap().is_empty());
    assert!(option(0, "profile").is_none(), "a profile is HLSL's");
    assert_eq!(option(1, "profile").unwrap()["values"][1], "ps_*");
    assert_eq!(
        vulkan["loads"],
        serde_json::json!([
            {"target": "vk-spirv", "path": "device-binary"},
            {"target": "vk-spirv", "path": "compatible-object"},
            {"target": "gl-glsl", "path": "source"},
        ])
    );
    // The device's shader objects give binaries back: offline compiles the driver keeps.
    assert_eq!(
        vulkan["on_devices"][0]["availability"]["Ok"],
        serde_json::json!(["RuntimeCompile", "OfflineCompile", "CompatibleObject"]),
        "{vulkan}"
    );
    assert!(vulkan["compiler_identity"].as_str().unwrap().contains("glslang"), "{vulkan}");
    assert_eq!(report["skipped"], serde_json::json!([]));
}

#[test]
fn plugins_text_lists_plugin_path_directories_first_and_skipped_files() {
    let dir = plugin_dir_with("cli-broken", &["xr-fixture-incompatible"]);
    let (ok, stdout, stderr) = xr(&["plugins"], Some(&dir));
    assert!(ok, "{stderr}");
    let first_line = stdout.lines().next().unwrap();
    assert!(first_line.starts_with(&format!("plugin directories: {}, ", dir.display())), "{first_line}");
    assert!(stdout.contains("plugin xr-rhi-opengl"), "{stdout}");
    assert!(stdout.contains("device: OpenGL 4.5 — "), "{stdout}");
    assert!(stdout.contains("llvmpipe"), "{stdout}");
    assert!(stdout.contains("build system xr-compiler-glsl"), "{stdout}");
    assert!(stdout.contains("flags: RuntimeCompile | OfflineCompile"), "{stdout}");
    assert!(stdout.contains("on xr-rhi-opengl: RuntimeCompile | OfflineCompile"), "{stdout}");
    assert!(stdout.contains("skipped:"), "{stdout}");
    assert!(stdout.contains("libxr_fixture_incompatible.so: incompatible plugin interface"), "{stdout}");
}

/// `xr plugins` opens every device to list it: the wgpu devices' Wayland
/// probe (Mesa's device-select layer) and a dead EGL context put back after
/// a wgpu-gl call each once printed `error:` and `warning:` lines here.
#[test]
fn a_successful_xr_plugins_says_no_error_or_warning() {
    let (ok, _, stderr) = xr(&["plugins"], None);
    assert!(ok, "{stderr}");
    xr_tests::assert_quiet("xr plugins", &stderr);
}
