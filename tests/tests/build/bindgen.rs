//! `xr bindgen` and the build-script API as their users meet them: typed
//! bindings of what a store holds, their reflection cache, and what each
//! refuses (an unbuilt store, a constant whose type variants disagree on, a
//! manifest with mistakes, no plugins, a shared cache it cannot open).

use xr_tests::{Xr, materials_built, materials_copy, plugin_dir, temp_dir};

fn bindgen(dir: &std::path::Path) -> xr_tests::XrRun {
    Xr::new(["bindgen", "-m", "xr.toml", "-o", "bindings.rs"]).dir(dir).run()
}

/// The count of objects `xr bindgen` says it reflected now.
fn reflected_now(run: &xr_tests::XrRun) -> usize {
    let line = run.stderr.lines().find(|l| l.starts_with("xr bindgen:")).unwrap_or_else(|| panic!("{}", run.stderr));
    let (_, after) = line.split_once("programs, ").unwrap();
    after.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn bindgen_types_the_materials_programs_and_reflects_each_object_once() {
    let dir = materials_built("bindgen-materials");
    let first = bindgen(&dir);
    assert!(first.ok, "{}", first.stderr);
    // 6 + 18 + 1 + 12 variants on 3 targets: every object once.
    assert_eq!(reflected_now(&first), (6 + 18 + 1 + 12) * 3, "{}", first.stderr);
    let code = std::fs::read_to_string(dir.join("bindings.rs")).unwrap();
    for expected in [
        "pub mod axes {",
        "pub enum Pattern {",
        "pub mod lit {",
        "pub const ALL: [Variant; 18] = [",
        "pub u_color: ::xr_library::xr_sourcebuild::typed::Constant<::xr_library::xr_sourcebuild::typed::Vec4>,",
        "pub albedo: ::xr_library::xr_sourcebuild::typed::Texture,",
        "pub gain: f32,",
        "assert!(::core::mem::size_of::<Constants>() == 32);",
    ] {
        assert!(code.contains(expected), "{expected} in\n{code}");
    }
    // Again: every reflection comes from the store's cache.
    let again = bindgen(&dir);
    assert_eq!(reflected_now(&again), 0, "{}", again.stderr);
    assert_eq!(std::fs::read_to_string(dir.join("bindings.rs")).unwrap(), code);
    // A rebuilt program: only its new objects are reflected.
    let lit = dir.join("shaders/lit.frag");
    let text = std::fs::read_to_string(&lit).unwrap();
    std::fs::write(&lit, text.replace("0.2 + 0.8 *", "0.25 + 0.75 *")).unwrap();
    xr_tests::xr_build(&dir);
    let rebuilt = bindgen(&dir);
    assert_eq!(reflected_now(&rebuilt), 18 * 3, "{}", rebuilt.stderr);
}

#[test]
fn bindgen_refuses_a_store_without_the_program() {
    let dir = materials_copy("bindgen-unbuilt");
    let run = bindgen(&dir);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("program 'unlit' is not in the store"), "{}", run.stderr);
    assert!(run.stderr.contains("build it first"), "{}", run.stderr);
    assert!(!dir.join("bindings.rs").exists());
}

/// A store built for one target: bindings of every target name the object
/// missing; bindings of that target are made.
#[test]
fn bindgen_of_a_target_never_built_names_the_missing_object_and_one_built_is_typed() {
    let dir = materials_copy("bindgen-one-target");
    Xr::new(["build", "-m", "xr.toml", "-q", "--target", "vk-spirv"]).dir(&dir).ok();
    let run = bindgen(&dir);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("has no object of gl-glsl (its build failed)"), "{}", run.stderr);
    let run = Xr::new(["bindgen", "-m", "xr.toml", "--target", "vk-spirv", "-o", "bindings.rs"]).dir(&dir).run();
    assert!(run.ok, "{}", run.stderr);
    assert_eq!(reflected_now(&run), 6 + 18 + 1 + 12, "{}", run.stderr);
}

#[test]
fn bindgen_refuses_a_constant_whose_type_two_variants_disagree_on() {
    let dir = temp_dir("bindgen-disagree");
    std::fs::write(
        dir.join("xr.toml"),
        "store = \"store\"\n\n[[axis]]\nname = \"WIDE\"\nkind = \"bool\"\n\n[[program]]\nname = \"tint\"\naxes = [\"WIDE\"]\n\
         targets = [\"vk-spirv\"]\nstages = [{ stage = \"vertex\", file = \"tint.vert\" }, { stage = \"fragment\", file = \"tint.frag\" }]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("tint.frag"),
        "#version 450 core\nlayout(location = 0) out vec4 color;\n#if WIDE\nlayout(push_constant) uniform P { vec4 tint; };\n\
         void main() { color = tint; }\n#else\nlayout(push_constant) uniform P { float tint; };\nvoid main() { color = vec4(tint); }\n#endif\n",
    )
    .unwrap();
    std::fs::write(dir.join("tint.vert"), "#version 450 core\nvoid main() { gl_Position = vec4(0.0); }\n").unwrap();
    xr_tests::xr_build(&dir);
    let run = bindgen(&dir);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "program 'tint': constant 'tint' is float in tint[WIDE=0] (vk-spirv) and vec4 in tint[WIDE=1] (vk-spirv)"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn the_build_script_api_reports_a_manifest_with_mistakes_no_plugins_and_a_cache_it_cannot_open() {
    let dir = materials_copy("cargo-api-errors");
    let manifest = dir.join("xr.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replacen("stages = [", "stagse = [", 1)).unwrap();
    let error =
        xr_cargo::Build::new(&manifest).store(dir.join("store")).plugin_dir(plugin_dir()).try_compile().unwrap_err();
    // The misspelt key, and the stages it leaves the program without.
    assert!(matches!(error, xr_cargo::Error::Manifest { count: 2, .. }), "{error}");
    assert!(error.to_string().ends_with("2 mistakes in the manifest"), "{error}");
    std::fs::write(&manifest, text).unwrap();

    let empty = temp_dir("cargo-api-no-plugins");
    let error =
        xr_cargo::Build::new(&manifest).store(dir.join("store")).plugin_dir(empty.path()).try_compile().unwrap_err();
    assert!(matches!(error, xr_cargo::Error::NoPlugins { .. }), "{error}");
    assert!(error.to_string().contains(&empty.path().display().to_string()), "{error}");
    assert!(!dir.join("store/objects").exists(), "nothing was built");

    let error = xr_cargo::Build::new(&manifest)
        .store(dir.join("store"))
        .plugin_dir(plugin_dir())
        .remote("gopher://cache.invalid/xr")
        .try_compile()
        .unwrap_err();
    assert!(matches!(error, xr_cargo::Error::Config(_)), "{error}");
    assert!(error.to_string().contains("gopher"), "{error}");
    assert!(!dir.join("store/objects").exists(), "nothing was built");
}
