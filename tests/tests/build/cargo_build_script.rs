//! XR inside a Rust engine's own build: an outside crate (a directory of
//! its own, its `Cargo.toml` naming the XR crates by path) whose `build.rs`
//! builds a copy of the materials shaders with `xr-cargo`, and whose code
//! uses the generated bindings — built with cargo as its team would.
//!
//! The crate shares the workspace's target directory, lock file and
//! profile, so that cargo reuses what the workspace compiled and the test
//! compiles the engine crate and its build script only.

use serde_json::Value;
use std::path::{Path, PathBuf};
use xr_tests::{Xr, plugin_dir, temp_dir, workspace_root, write_materials};

/// The engine's name, and its binary's.
const ENGINE: &str = "xr-outside-engine";

/// A hand-written std140 block with the members whose padding people get
/// wrong: a vec3 and a float sharing 16 bytes, a mat3 of padded columns, a
/// float array of 16-byte elements, a vec2, a vec4 array and a struct.
const STD140_FRAGMENT: &str = "#version 450 core
layout(location = 0) out vec4 out_color;
struct Light { vec3 position; float range; };
layout(std140, set = 0, binding = 1) uniform Case {
    vec3 direction;
    float intensity;
    mat3 basis;
    float weights[3];
    vec2 offset;
    vec4 tint[2];
    Light light;
};
void main() {
    out_color = vec4(direction * intensity + basis[0] + vec3(weights[1], offset) + tint[1].xyz + light.position * light.range, 1.0);
}
";

/// The offsets std140 gives `Case`'s members, worked out by its rules (a
/// vec3 aligns to 16 and a float fits after it; a mat3 is 3 columns of 16;
/// an array's elements round up to 16; a struct aligns to 16), and its size.
const STD140_OFFSETS: [(&str, usize); 7] = [
    ("direction", 0),
    ("intensity", 12),
    ("basis", 16),
    ("weights", 64),
    ("offset", 112),
    ("tint", 128),
    ("light", 160),
];
const STD140_SIZE: usize = 176;

/// The engine: draws nothing, but names every generated type a renderer
/// would, and prints the Rust layout of the blocks for the test to compare.
const MAIN: &str = r#"mod shaders {
    include!(concat!(env!("OUT_DIR"), "/shaders.rs"));
}
use shaders::{axes::Pattern, layout_case, lit, unlit_slang};
use std::mem::{offset_of, size_of};

/// A renderer's use of the bindings: a load request and typed sets.
#[allow(dead_code)]
fn draw(table: &mut xr_sourcebuild::ConstantTableBox) -> Result<(), xr_sourcebuild::typed::XrError> {
    let variant = lit::Variant { tint: lit::Tint::V1, pattern: Pattern::Stripes, bands: lit::Bands::V3 };
    let _request = lit::request(&variant, &lit::Overrides { gain: 2.0, ..Default::default() }, &[]);
    let constants = lit::Constants::resolve(table)?;
    constants.u_color.set(table, &[1.0, 0.5, 0.25, 1.0])?;
    Ok(())
}

fn main() {
    type Case = layout_case::blocks::Case;
    type Push = lit::blocks::Constants;
    println!("Case size {}", size_of::<Case>());
    println!("Case direction {}", offset_of!(Case, direction));
    println!("Case intensity {}", offset_of!(Case, intensity));
    println!("Case basis {}", offset_of!(Case, basis));
    println!("Case weights {}", offset_of!(Case, weights));
    println!("Case offset {}", offset_of!(Case, offset));
    println!("Case tint {}", offset_of!(Case, tint));
    println!("Case light {}", offset_of!(Case, light));
    println!("Constants size {}", size_of::<Push>());
    println!("Constants u_rect {}", offset_of!(Push, u_rect));
    println!("Constants u_color {}", offset_of!(Push, u_color));
    type Slang = unlit_slang::blocks::ConstantsStd430;
    println!("Constants_std430 size {}", size_of::<Slang>());
    println!("Constants_std430 u_rect {}", offset_of!(Slang, u_rect));
    println!("Constants_std430 u_color {}", offset_of!(Slang, u_color));
    println!("lit variants {}", lit::Variant::ALL.len());
}
"#;

/// The engine crate in `dir`: the materials shaders plus the std140 case
/// under `shaders/`, the build script, the code above.
fn write_engine(dir: &Path) {
    let shaders = dir.join("shaders");
    std::fs::create_dir_all(&shaders).unwrap();
    write_materials(&shaders, true);
    std::fs::write(shaders.join("shaders/layout_case.frag"), STD140_FRAGMENT).unwrap();
    let mut manifest = std::fs::read_to_string(shaders.join("xr.toml")).unwrap();
    manifest.push_str(
        "\n[[program]]\nname = \"layout-case\"\ntargets = [\"vk-spirv\"]\nstages = [\n    \
         { stage = \"vertex\", file = \"shaders/quad.vert\" },\n    \
         { stage = \"fragment\", file = \"shaders/layout_case.frag\" },\n]\ninclude = [\"shaders/include\"]\n",
    );
    std::fs::write(shaders.join("xr.toml"), manifest).unwrap();
    let root = workspace_root();
    let path = |krate: &str| root.join(krate).display().to_string();
    write_crate(
        dir,
        ENGINE,
        &format!(
            "bytemuck = {{ version = \"1\", features = [\"derive\", \"min_const_generics\"] }}\n\
             xr-library = {{ path = \"{}\" }}\nxr-sourcebuild = {{ path = \"{}\" }}\n",
            path("xr-library"),
            path("xr-sourcebuild"),
        ),
        "fn main() {\n    xr_cargo::Build::new(\"shaders/xr.toml\").bindings(\"shaders.rs\").compile();\n}\n",
        MAIN,
    );
}

/// A crate `name` in `dir` whose build script is `build_rs` (with
/// `xr-cargo` to build with) and whose binary is `main_rs`, depending on
/// `dependencies` (lines of a `[dependencies]` table). It compiles XR's
/// crates as the workspace does (its members' profile, its lock file), so
/// that cargo finds them compiled already in the workspace's target.
fn write_crate(dir: &Path, name: &str, dependencies: &str, build_rs: &str, main_rs: &str) {
    let root = workspace_root();
    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let members: Vec<&str> = workspace
        .lines()
        .map(str::trim)
        .filter_map(|l| l.strip_prefix("\"xr-").and_then(|l| l.strip_suffix("\",")))
        .collect();
    let mut profiles = String::from(
        "[profile.dev]\ndebug = \"line-tables-only\"\n\n[profile.dev.package.\"*\"]\nopt-level = 1\ndebug = false\n",
    );
    for member in members {
        profiles
            .push_str(&format!("\n[profile.dev.package.xr-{member}]\nopt-level = 0\ndebug = \"line-tables-only\"\n"));
    }
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             [dependencies]\n{dependencies}\n\
             [build-dependencies]\nxr-cargo = {{ path = \"{}\" }}\n\n{profiles}\n[workspace]\n",
            root.join("xr-cargo").display(),
        ),
    )
    .unwrap();
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::write(dir.join("build.rs"), build_rs).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/main.rs"), main_rs).unwrap();
}

/// A crate `name` in `engine` whose build script builds `shaders/xr.toml`
/// (the files of `shaders`, by name and text) into a store of its own
/// (`$OUT_DIR` outlives the test, in the shared target), and does nothing else.
fn write_shader_crate(engine: &Path, name: &str, shaders: &[(&str, &str)]) {
    std::fs::create_dir_all(engine.join("shaders")).unwrap();
    for (file, text) in shaders {
        std::fs::write(engine.join("shaders").join(file), text).unwrap();
    }
    write_crate(
        engine,
        name,
        "",
        "fn main() {\n    xr_cargo::Build::new(\"shaders/xr.toml\").store(\"xr-store\").compile();\n}\n",
        "fn main() {}\n",
    );
}

/// What one `cargo build -v` of the engine did.
struct CargoRun {
    ok: bool,
    stderr: String,
    /// The build script ran.
    script_ran: bool,
}

fn cargo_build(dir: &Path, target: &Path) -> CargoRun {
    cargo_build_with_plugins(dir, target, &plugin_dir())
}

/// [`cargo_build`] with `plugins` as `XR_PLUGIN_PATH`.
fn cargo_build_with_plugins(dir: &Path, target: &Path, plugins: &Path) -> CargoRun {
    cargo_build_with(dir, target, plugins, &[])
}

/// [`cargo_build_with_plugins`] with `environment` set (`None`: unset).
fn cargo_build_with(dir: &Path, target: &Path, plugins: &Path, environment: &[(&str, Option<&str>)]) -> CargoRun {
    let mut command = xr_tests::cargo_command();
    for (name, value) in environment {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    let output = command
        .args(["build", "-v", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target)
        // The plugins the workspace built: where an engine team's installed XR would be.
        .env("XR_PLUGIN_PATH", plugins)
        .env_remove("XR_IN_PROCESS")
        .output()
        .expect("cargo runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let script_ran = stderr.lines().any(|l| l.contains("Running `") && l.contains("build-script-build"));
    CargoRun { ok: output.status.success(), stderr, script_ran }
}

/// The build script's own account of its last run (`xr-cargo.json` in its OUT_DIR).
fn script_summary(target: &Path) -> Value {
    let build = target.join("debug/build");
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&build)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&format!("{ENGINE}-")))
        .map(|e| e.path().join("out/xr-cargo.json"))
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .collect();
    found.sort();
    let (_, path) = found.pop().expect("the build script wrote its summary");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn engine_output(target: &Path) -> String {
    let run = Xr::program(target.join("debug").join(ENGINE), Vec::<&str>::new()).ok();
    run.stdout
}

fn printed(output: &str, what: &str) -> usize {
    let line =
        output.lines().find(|l| l.starts_with(&format!("{what} "))).unwrap_or_else(|| panic!("{what} in\n{output}"));
    line[what.len() + 1..].parse().unwrap()
}

/// The reflection's offsets of block `block` in `xr reflect --json` of `files`.
fn reflected_block(dir: &Path, files: &[&str], block: &str) -> (usize, Vec<(String, usize)>) {
    let run = Xr::new(["reflect", "--target", "vk-spirv", "--json", "-I", "shaders/include", "-D", "BANDS=2"])
        .args(files)
        .dir(dir)
        .ok();
    let json: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout));
    let full = &json["details"];
    for stage in full["stages"].as_array().expect("stages") {
        for found in
            stage["uniform_blocks"].as_array().unwrap().iter().chain(stage["push_constants"].as_array().unwrap())
        {
            if found["name"] == block {
                let members = found["members"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| (m["name"].as_str().unwrap().to_owned(), m["offset"].as_u64().unwrap() as usize))
                    .collect();
                return (found["size"].as_u64().unwrap() as usize, members);
            }
        }
    }
    panic!("no block {block} in {full}");
}

#[test]
fn a_build_script_builds_the_shaders_reruns_only_on_change_and_types_what_it_built() {
    let dir = temp_dir("cargo-build-script");
    let engine = dir.join("engine");
    write_engine(&engine);
    let target = xr_tests::profile_dir().parent().expect("target dir").to_path_buf();

    // The first build builds every artifact and the bindings.
    let first = cargo_build(&engine, &target);
    assert!(first.ok, "the engine builds:\n{}", first.stderr);
    assert!(first.script_ran);
    let summary = script_summary(&target);
    // The materials programs (6 + 18 + 1 + 12 variants on 3 targets, the
    // Slang one's 6 on 2) and the layout case (1 variant, 1 target).
    let artifacts = (6 + 18 + 1 + 12) * 3 + 6 * 2 + 1;
    assert_eq!(summary["built"].as_u64().unwrap() + summary["reused"].as_u64().unwrap(), artifacts);

    // The Rust structs are laid out as the reflection says, and as std140 does.
    let output = engine_output(&target);
    let (size, members) =
        reflected_block(&engine.join("shaders"), &["shaders/quad.vert", "shaders/layout_case.frag"], "Case");
    assert_eq!(size, STD140_SIZE, "the reflection's size of Case");
    assert_eq!(printed(&output, "Case size"), STD140_SIZE);
    for (member, offset) in STD140_OFFSETS {
        assert!(members.contains(&(member.to_owned(), offset)), "{member} at {offset} in the reflection: {members:?}");
        assert_eq!(printed(&output, &format!("Case {member}")), offset, "{member}");
    }
    for program in ["unlit", "lit", "toon", "textured"] {
        let fragment = format!("shaders/{program}.frag");
        let (size, members) = reflected_block(&engine.join("shaders"), &["shaders/quad.vert", &fragment], "Constants");
        assert_eq!(printed(&output, "Constants size"), size, "{program}");
        for (member, offset) in members {
            assert_eq!(printed(&output, &format!("Constants {member}")), offset, "{program}: {member}");
        }
    }
    let (size, members) = reflected_block(&engine.join("shaders"), &["shaders/unlit.slang"], "Constants_std430");
    assert_eq!(printed(&output, "Constants_std430 size"), size, "unlit-slang");
    for (member, offset) in members {
        assert_eq!(printed(&output, &format!("Constants_std430 {member}")), offset, "unlit-slang: {member}");
    }
    assert_eq!(printed(&output, "lit variants"), 18);

    // Nothing changed: cargo does not run the build script, and nothing compiles.
    let second = cargo_build(&engine, &target);
    assert!(second.ok, "{}", second.stderr);
    assert!(!second.script_ran, "the build script ran again with nothing changed:\n{}", second.stderr);

    // An include written again unchanged: cargo reruns the script, whose
    // build finds nothing to do; it must still name every file it read, or
    // cargo would stop watching the includes.
    let lighting = engine.join("shaders/shaders/include/lighting.glsl");
    let text = std::fs::read_to_string(&lighting).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&lighting, &text).unwrap();
    let touched = cargo_build(&engine, &target);
    assert!(touched.ok && touched.script_ran, "{}", touched.stderr);
    assert_eq!(script_summary(&target)["up_to_date"], true);

    // An edited include: the script reruns and rebuilds what reads it, lit
    // and toon (18 + 12 variants, 3 targets each), and nothing else.
    std::fs::write(&lighting, format!("{text}\n// edited\n")).unwrap();
    let third = cargo_build(&engine, &target);
    assert!(third.ok, "{}", third.stderr);
    assert!(third.script_ran, "the build script did not rerun after an include changed");
    let summary = script_summary(&target);
    assert_eq!(summary["built"], (18 + 12) * 3, "{summary}");
    assert_eq!(summary["reused"], artifacts - (18 + 12) * 3, "{summary}");

    // A syntax error: one warning naming the file and line, and the build fails.
    let toon = engine.join("shaders/shaders/toon.frag");
    let text = std::fs::read_to_string(&toon).unwrap();
    let line = text.lines().position(|l| l.starts_with("void main()")).unwrap() + 2;
    let broken: Vec<&str> = text.lines().collect();
    let broken = [&broken[..line - 1], &["    vec4 broken = ;"], &broken[line - 1..]].concat().join("\n");
    std::fs::write(&toon, broken).unwrap();
    let fourth = cargo_build(&engine, &target);
    assert!(!fourth.ok, "a syntax error failed no build");
    // The build script's warnings (cargo's own, on the profile, aside).
    let warnings: Vec<&str> = fourth.stderr.lines().filter(|l| l.starts_with(&format!("warning: {ENGINE}@"))).collect();
    assert_eq!(warnings.len(), 1, "one warning for the error:\n{}", fourth.stderr);
    assert!(warnings[0].contains(&format!("shaders/toon.frag:{line}")), "file and line in: {}", warnings[0]);
    std::fs::write(&toon, text).unwrap();

    // A variant name the manifest lacks, and a constant set with the wrong
    // type, do not compile.
    for (wrong, error) in
        [("Pattern::Stripes", ("Pattern::Zigzag", "E0599")), ("&[1.0, 0.5, 0.25, 1.0]", ("&1.0f32", "E0308"))]
    {
        std::fs::write(engine.join("src/main.rs"), MAIN.replace(wrong, error.0)).unwrap();
        let run = cargo_build(&engine, &target);
        assert!(!run.ok, "{} compiled", error.0);
        assert!(run.stderr.contains(&format!("error[{}]", error.1)), "{} in:\n{}", error.1, run.stderr);
    }
    std::fs::write(engine.join("src/main.rs"), MAIN).unwrap();
    assert!(cargo_build(&engine, &target).ok);
}

/// A build script reruns when a compiler plugin it loaded is replaced by a
/// newer build, and the shaders are built again by the new compiler: the
/// script names every plugin file it loaded to cargo (`rerun-if-changed`),
/// and the build system's identity is part of every artifact's key. Without
/// either, the engine ships shaders of the old compiler.
#[test]
fn a_compiler_plugin_replaced_by_a_newer_build_reruns_the_script_and_rebuilds_with_it() {
    const NAME: &str = "xr-plugin-replaced-engine";
    let dir = temp_dir("cargo-build-script-plugin");
    let engine = dir.join("engine");
    write_shader_crate(
        &engine,
        NAME,
        &[
            ("quad.gld", "#version 450\nvoid main() { gl_Position = COLOUR(0.0, 0.0, 0.0, 1.0); }\n"),
            (
                "green.gld",
                "#version 450\nlayout(location = 0) out COLOUR o;\nvoid main() { o = COLOUR(0.0, 1.0, 0.0, 1.0); }\n",
            ),
            (
                "xr.toml",
                "store = \"store\"\n[[program]]\nname = \"green\"\ntargets = [\"gl-glsl\"]\n\
                 stages = [{ stage = \"vertex\", file = \"quad.gld\" }, { stage = \"fragment\", file = \"green.gld\" }]\n",
            ),
        ],
    );
    // The engine team's plugin directory, with the dialect's compiler as released.
    let plugins = xr_tests::plugin_dir_with("cargo-build-script-plugins", &["xr-fixture-dialect"]);
    let installed = plugins.join(xr_tests::library("xr-fixture-dialect").file_name().unwrap());
    let target = xr_tests::profile_dir().parent().expect("target dir").to_path_buf();
    let built = |what: &str| {
        let summary: Value = serde_json::from_slice(&std::fs::read(engine.join("xr-cargo.json")).unwrap()).unwrap();
        (summary["built"].as_u64().unwrap(), summary["reused"].as_u64().unwrap(), what.to_owned())
    };

    let first = cargo_build_with_plugins(&engine, &target, &plugins);
    assert!(first.ok && first.script_ran, "{}", first.stderr);
    assert_eq!(built("first"), (1, 0, "first".into()), "the one artifact, built");
    let second = cargo_build_with_plugins(&engine, &target, &plugins);
    assert!(second.ok && !second.script_ran, "nothing changed, the script ran:\n{}", second.stderr);

    // A newer build of the plugin, installed over it as a package manager
    // does (a new file renamed into place).
    let staged = plugins.join("staged.tmp");
    std::fs::copy(xr_tests::library("xr-fixture-dialect-next"), &staged).unwrap();
    std::fs::rename(&staged, &installed).unwrap();
    let third = cargo_build_with_plugins(&engine, &target, &plugins);
    assert!(third.ok, "{}", third.stderr);
    assert!(third.script_ran, "the build script did not rerun after its compiler plugin was replaced");
    assert_eq!(built("after the new compiler"), (1, 0, "after the new compiler".into()), "built again by it");
    let fourth = cargo_build_with_plugins(&engine, &target, &plugins);
    assert!(fourth.ok && !fourth.script_ran, "nothing changed since, the script ran:\n{}", fourth.stderr);
}

/// A variable a plugin reads (the Slang library's place, read by the SPIR-V
/// compilers when they load) is watched by the build script although no
/// line of XR lists it: every read goes through one recording reader, and
/// the script's `rerun-if-env-changed` lines are that record.
#[test]
fn changing_the_slang_library_a_plugin_reads_reruns_the_build_script() {
    const NAME: &str = "xr-slang-setting-engine";
    const SLANG: &str = "XR_SLANG_LIBRARY";
    let dir = temp_dir("cargo-build-script-slang-setting");
    let engine = dir.join("engine");
    write_shader_crate(
        &engine,
        NAME,
        &[
            ("fill.comp", "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {}\n"),
            (
                "xr.toml",
                "[[program]]\nname = \"fill\"\ntargets = [\"vk-spirv\"]\nstages = [{ stage = \"compute\", file = \"fill.comp\" }]\n",
            ),
        ],
    );
    let target = xr_tests::profile_dir().parent().expect("target dir").to_path_buf();
    let elsewhere = dir.join("no-slang-here");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let elsewhere = elsewhere.to_str().unwrap();
    let unset = [(SLANG, None)];
    let set = [(SLANG, Some(elsewhere))];

    let first = cargo_build_with(&engine, &target, &plugin_dir(), &unset);
    assert!(first.ok && first.script_ran, "{}", first.stderr);
    let second = cargo_build_with(&engine, &target, &plugin_dir(), &unset);
    assert!(second.ok && !second.script_ran, "nothing changed, the script ran:\n{}", second.stderr);
    let third = cargo_build_with(&engine, &target, &plugin_dir(), &set);
    assert!(third.ok, "{}", third.stderr);
    assert!(third.script_ran, "the build script did not rerun after {SLANG} changed:\n{}", third.stderr);
    let fourth = cargo_build_with(&engine, &target, &plugin_dir(), &set);
    assert!(fourth.ok && !fourth.script_ran, "nothing changed since, the script ran:\n{}", fourth.stderr);
}
