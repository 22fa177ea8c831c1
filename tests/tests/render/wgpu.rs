//! wgpu, two device kinds of a plugin of their own (`xr-rhi-wgpu`): listed
//! by `xr plugins` with the build system that attaches to them, and its
//! pipeline cache kept in the store from one launch to the next. The
//! materials scene on wgpu is compared with the native paths in
//! `library.rs`.

use xr_tests::{Xr, materials_built};

/// The materials sample's `--frames` on a `kind` device over `store`: what it printed.
fn frames(store: &std::path::Path, kind: &str) -> String {
    Xr::sample("materials", ["--store", store.to_str().unwrap(), "--frames", "5", "--device", kind]).ok().stdout
}

/// The count `name` in the sample's line that starts with `line`.
fn count(said: &str, line: &str, name: &str) -> u64 {
    let line = said.lines().find(|l| l.starts_with(line)).unwrap_or_else(|| panic!("no '{line}' in\n{said}"));
    let after = line.split(name).nth(1).unwrap_or_else(|| panic!("no '{name}' in '{line}'"));
    after
        .trim_start()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count after '{name}' in '{line}'"))
}

#[test]
fn a_second_launch_makes_its_pipelines_with_the_pipeline_cache_the_first_stored() {
    let dir = materials_built("wgpu-pipeline-cache");
    let store = dir.join("store");
    let first = frames(&store, "wgpu");
    assert_eq!(count(&first, "made at load and draw:", "pipeline cache bytes loaded"), 0, "{first}");
    // 9 programs drawn into 5 targets of other formats: 45 pipelines.
    assert_eq!(count(&first, "made by the draws:", "pipelines"), 45, "{first}");
    assert_eq!(count(&first, "made by the draws:", "made with a stored pipeline cache"), 0, "{first}");

    let second = frames(&store, "wgpu");
    assert!(count(&second, "made at load and draw:", "pipeline cache bytes loaded") > 0, "{second}");
    assert_eq!(count(&second, "made by the draws:", "made with a stored pipeline cache"), 45, "{second}");
    assert_eq!(count(&second, "made at load and draw:", "programs passed through"), 9, "{second}");
}

#[test]
fn a_device_kind_no_plugin_opens_is_refused_naming_the_kinds_there_are() {
    let dir = materials_built("wgpu-unknown-kind");
    let said = Xr::sample("materials", ["--store", dir.join("store").to_str().unwrap(), "--frames", "1"])
        .args(["--device", "metal"])
        .fails()
        .stderr;
    assert!(said.contains("no device system opens a 'metal' device"), "{said}");
    assert!(said.contains("wgpu, wgpu-gl"), "{said}");
}

#[test]
fn xr_plugins_lists_the_wgpu_kinds_their_devices_and_the_loader_that_attaches_to_them() {
    let said = Xr::new(["plugins"]).ok().stdout;
    for line in [
        "device system xr-rhi-wgpu [wgpu]",
        "device system xr-rhi-wgpu-gl [wgpu-gl]",
        "build system xr-compiler-wgpu",
        "compiles: glsl → wgsl",
        "attaches to: wgpu, wgpu-gl",
        "loads: vk-spirv (compatible-object), wgsl (source)",
        "on xr-rhi-wgpu: CompatibleObject",
        "on xr-rhi-wgpu-gl: CompatibleObject",
    ] {
        assert!(said.contains(line), "no '{line}' in\n{said}");
    }
}

#[test]
fn a_sampler2d_asked_for_as_wgsl_is_one_error_naming_the_file_and_the_rest_builds() {
    let dir = xr_tests::materials_copy("wgpu-wgsl-sampler2d");
    let manifest = dir.join("xr.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    // The textured program binds `albedo`, a sampler2D.
    let at = text.find("name = \"textured\"").expect("the textured program");
    let (head, tail) = text.split_at(at);
    let tail =
        tail.replacen(r#"targets = ["gl-glsl", "gl-spirv", "vk-spirv"]"#, r#"targets = ["vk-spirv", "wgsl"]"#, 1);
    std::fs::write(&manifest, format!("{head}{tail}")).unwrap();
    let run = Xr::new(["build", "-m", "xr.toml"]).dir(&dir).fails();
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(said.contains("shaders/textured.frag"), "{said}");
    assert!(said.contains("'albedo' is a texture combined with its sampler (sampler2D)"), "{said}");
    assert!(said.contains("1 failed"), "{said}");
    // Everything else built: the textured program's SPIR-V and every other program's WGSL.
    let summary = said.lines().find(|l| l.starts_with("xr build:")).unwrap_or_else(|| panic!("no summary in {said}"));
    let built: u32 = summary["xr build:".len()..].split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!(built > 20, "{summary}");
}

#[test]
fn the_scene_built_as_wgsl_draws_through_naga_on_both_back_ends_the_native_spirv_pixels() {
    let dir = xr_tests::materials_copy("wgpu-wgsl-scene");
    let manifest = dir.join("xr.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, materials::wgsl_manifest(&text)).unwrap();
    xr_tests::xr_build(&dir);
    let out = dir.join("out");
    let mut said = String::new();
    for run in ["vk-spirv", "gl-spirv", "wgpu-wgsl", "wgpu-gl-wgsl"] {
        let store = dir.join("store");
        said += &Xr::sample("materials", ["--store", store.to_str().unwrap(), "--out", out.to_str().unwrap()])
            .args(["--run", run])
            .ok()
            .stdout;
    }
    let rows: Vec<&str> = said.lines().filter(|l| l.starts_with("wgpu-") && !l.contains("->")).collect();
    assert_eq!(rows.len(), 2 * materials::SCENE.len(), "{said}");
    for row in rows {
        assert!(row.contains(" source ") && row.contains(" wgsl ") && row.contains("WGSL through naga"), "{row}");
    }
    // The override values reach WGSL as pipeline constants: the same pixels.
    let png = |run: &str| image::open(out.join(format!("materials-{run}.png"))).unwrap().to_rgba8().into_raw();
    assert_eq!(png("wgpu-wgsl"), png("vk-spirv"), "WGSL on wgpu's Vulkan differs from vk-spirv");
    assert_eq!(png("wgpu-gl-wgsl"), png("gl-spirv"), "WGSL on wgpu's OpenGL differs from gl-spirv");
}
