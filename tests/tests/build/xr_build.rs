//! `xr build` on the materials sample's library: incremental rebuilds, a
//! failing variant, a killed build, concurrent builds, a corrupt object,
//! bad manifests, and `xr store gc`.

use std::{
    path::Path,
    process::{Command, Output},
    time::{Duration, Instant},
};
use xr_tests::{Xr, materials_copy};

fn xr(dir: &Path, args: &[&str]) -> Command {
    Xr::new(args).dir(dir).command()
}

fn output(command: &mut Command) -> (bool, String, String) {
    let Output { status, stdout, stderr } = command.output().expect("xr runs");
    (status.success(), String::from_utf8_lossy(&stdout).into_owned(), String::from_utf8_lossy(&stderr).into_owned())
}

/// (built, reused, failed, unique objects) from `xr build`'s summary line.
fn summary(said: &str) -> (usize, usize, usize, usize) {
    let line = said.lines().find(|l| l.starts_with("xr build:")).unwrap_or_else(|| panic!("no summary in {said}"));
    let count = |label: &str| xr_tests::summary_count(line, label);
    (count("built"), count("reused"), count("failed"), count("unique"))
}

fn build(dir: &Path, extra: &[&str]) -> (bool, String, String) {
    let mut args = vec!["build", "-m", "xr.toml"];
    args.extend(extra);
    output(&mut xr(dir, &args))
}

fn verify(dir: &Path) -> (bool, String) {
    let (ok, stdout, stderr) = output(&mut xr(dir, &["store", "verify", "--store", "store"]));
    (ok, format!("{stdout}{stderr}"))
}

/// `xr build` in `dir` succeeds and reuses every artifact.
#[track_caller]
fn assert_a_rebuild_reuses_everything(dir: &Path) {
    let (ok, _, stderr) = build(dir, &[]);
    assert!(ok);
    assert_eq!(summary(&stderr), (0, ARTIFACTS, 0, ARTIFACTS), "{stderr}");
}

/// 4 programs: unlit 2×3, lit 2×(1+2×4), toon 3×4 variants, textured 1; 3 targets each.
const ARTIFACTS: usize = (6 + 18 + 12 + 1) * 3;

#[test]
fn a_no_op_rebuild_reuses_everything_and_an_include_edit_rebuilds_only_its_users() {
    let dir = materials_copy("build-incremental");
    let (ok, stdout, stderr) = build(&dir, &[]);
    assert!(ok, "{stdout}{stderr}");
    assert_eq!(summary(&stderr), (ARTIFACTS, 0, 0, ARTIFACTS), "{stderr}");
    // Plain progress lines when not on a terminal.
    assert!(stderr.contains(&format!("[{ARTIFACTS}/{ARTIFACTS}]")), "{stderr}");

    assert_a_rebuild_reuses_everything(&dir);

    // lighting.glsl is included by lit and toon, not by unlit or textured.
    let lighting = dir.join("shaders/include/lighting.glsl");
    let text = std::fs::read_to_string(&lighting).unwrap();
    std::fs::write(&lighting, text.replace("0.5, 0.5, 1.0", "0.4, 0.6, 1.0")).unwrap();
    let (ok, _, stderr) = build(&dir, &[]);
    assert!(ok);
    assert_eq!(summary(&stderr).0, (18 + 12) * 3, "{stderr}");
    assert_eq!(summary(&stderr).1, (6 + 1) * 3, "{stderr}");

    // Touching without changing the contents rebuilds nothing.
    std::fs::write(&lighting, std::fs::read(&lighting).unwrap()).unwrap();
    assert_a_rebuild_reuses_everything(&dir);

    // Building one target keeps the others in the catalog.
    let (ok, _, stderr) = build(&dir, &["--target", "vk-spirv"]);
    assert!(ok);
    assert_eq!(summary(&stderr), (0, ARTIFACTS / 3, 0, ARTIFACTS / 3), "{stderr}");
    let catalog: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("store/catalog/unlit.json")).unwrap()).unwrap();
    assert_eq!(catalog["variants"]["unlit[TINT=0,PATTERN=flat]"]["objects"].as_object().unwrap().len(), 3);

    // Changing a define of one variant's path: a filter narrows the matrix, no rebuild.
    let manifest = std::fs::read_to_string(dir.join("xr.toml")).unwrap();
    std::fs::write(
        dir.join("xr.toml"),
        manifest.replace("PATTERN == flat && BANDS > 1", "PATTERN == flat && BANDS > 0"),
    )
    .unwrap();
    let (ok, _, stderr) = build(&dir, &[]);
    assert!(ok);
    assert_eq!(summary(&stderr), (0, ARTIFACTS - 6, 0, ARTIFACTS - 6), "{stderr}");
    assert!(verify(&dir).0);
}

#[test]
fn a_failing_variant_is_reported_with_its_diagnostics_and_the_others_build() {
    let dir = materials_copy("build-failing");
    let toon = dir.join("shaders/toon.frag");
    let text = std::fs::read_to_string(&toon).unwrap();
    // Line 9 of toon.frag breaks for BANDS == 3 only.
    let broken = text.replacen("\nvoid main() {", "\n#if BANDS == 3\nthis is not glsl;\n#endif\nvoid main() {", 1);
    std::fs::write(&toon, broken).unwrap();
    let line = std::fs::read_to_string(&toon).unwrap().lines().position(|l| l == "this is not glsl;").unwrap() + 1;

    let (ok, _, stderr) = build(&dir, &[]);
    assert!(!ok, "exit status says something failed");
    let failed = 3 * 3; // toon's 3 patterns with BANDS=3, on 3 targets
    assert_eq!(summary(&stderr), (ARTIFACTS - failed, 0, failed, ARTIFACTS - failed), "{stderr}");
    // One mistake, one report: naming the 9 artifacts it struck.
    assert_eq!(stderr.lines().filter(|l| l.starts_with("error")).count(), 1, "{stderr}");
    assert!(
        stderr.contains("in 9 artifacts: toon × 3 variants × gl-glsl, gl-spirv, vk-spirv"),
        "the report names what it struck:\n{stderr}"
    );
    assert!(stderr.contains(&format!("toon.frag:{line}")), "diagnostics name the file and line:\n{stderr}");
    assert!(stderr.contains(&format!("{line} | this is not glsl;")), "with the line of source:\n{stderr}");
    assert!(stderr.contains("9 failed"), "progress counts failures: {stderr}");

    // The catalog has the rest; the failed ones are missing, not stale.
    let catalog: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("store/catalog/toon.json")).unwrap()).unwrap();
    assert!(catalog["variants"]["toon[PATTERN=flat,BANDS=3]"]["objects"].as_object().unwrap().is_empty());
    assert_eq!(catalog["variants"]["toon[PATTERN=flat,BANDS=2]"]["objects"].as_object().unwrap().len(), 3);

    // Fixed: toon.frag changed, so toon's variants build; unlit and lit are reused.
    std::fs::write(&toon, text).unwrap();
    let (ok, _, stderr) = build(&dir, &[]);
    assert!(ok, "{stderr}");
    assert_eq!(summary(&stderr), (36, ARTIFACTS - 36, 0, ARTIFACTS), "{stderr}");
}

/// A failed build keeps each failed artifact's last good object from the
/// catalog the last build wrote; where that catalog cannot be read, it
/// keeps none for that program, says so once, and the rest goes on.
#[test]
fn a_catalog_that_cannot_be_read_keeps_no_last_good_objects_and_says_so() {
    let dir = materials_copy("build-unreadable-catalog");
    let (ok, _, stderr) = build(&dir, &[]);
    assert!(ok, "{stderr}");
    std::fs::write(dir.join("store/catalog/toon.json"), "{ not a catalog").unwrap();
    let toon = dir.join("shaders/toon.frag");
    let text = std::fs::read_to_string(&toon).unwrap();
    std::fs::write(&toon, text.replacen("\nvoid main() {", "\nthis is not glsl;\nvoid main() {", 1)).unwrap();

    let (ok, _, stderr) = build(&dir, &[]);
    assert!(!ok, "{stderr}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("no last good objects kept for 'toon'")).collect();
    assert_eq!(warnings.len(), 1, "one warning naming the program:\n{stderr}");
    assert!(warnings[0].contains("toon.json"), "naming the catalog: {}", warnings[0]);
    // toon's 12 variants on 3 targets failed, none kept; the rest reused.
    assert!(stderr.contains("36 failed"), "{stderr}");
    assert!(!stderr.contains("last good kept"), "{stderr}");
    let catalog: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("store/catalog/toon.json")).unwrap()).unwrap();
    let variant = &catalog["variants"]["toon[PATTERN=flat,BANDS=2]"];
    assert!(variant["objects"].as_object().unwrap().is_empty(), "{variant}");
}

#[test]
fn a_build_killed_midway_leaves_a_consistent_store_and_the_next_finishes_the_rest() {
    let dir = materials_copy("build-killed");
    let mut child = xr(&dir, &["build", "-m", "xr.toml", "-j", "1", "-q"]).spawn().expect("xr starts");
    let journal = dir.join("store/journal.jsonl");
    let started = Instant::now();
    loop {
        let lines = std::fs::read_to_string(&journal).map_or(0, |t| t.lines().count());
        if lines >= 10 {
            break;
        }
        assert!(child.try_wait().unwrap().is_none(), "the build ended before it could be killed");
        assert!(started.elapsed() < Duration::from_secs(120), "no progress");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().expect("SIGKILL");
    child.wait().unwrap();

    let (ok, stdout, stderr) = build(&dir, &[]);
    assert!(ok, "{stdout}{stderr}");
    let (built, reused, failed, unique) = summary(&stderr);
    assert!(reused >= 10, "the killed build's finished work is kept: {stderr}");
    assert_eq!((built + reused, failed, unique), (ARTIFACTS, 0, ARTIFACTS), "{stderr}");
    let (ok, report) = verify(&dir);
    assert!(ok, "store consistent after the rebuild: {report}");
    assert!(report.contains("0 corrupt, 0 unfinished writes"), "{report}");
}

#[test]
fn two_builds_on_one_store_at_once_both_succeed_without_torn_objects() {
    let dir = materials_copy("build-concurrent");
    let spawned: Vec<_> =
        (0..2).map(|_| xr_tests::spawn_captured(&mut xr(&dir, &["build", "-m", "xr.toml", "-j", "1", "-q"]))).collect();
    for child in spawned {
        let Output { status, stdout, stderr } = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&stderr);
        assert!(status.success(), "{}{stderr}", String::from_utf8_lossy(&stdout));
        let (built, reused, failed, unique) = summary(&stderr);
        assert_eq!((built + reused, failed, unique), (ARTIFACTS, 0, ARTIFACTS), "{stderr}");
    }
    let (ok, report) = verify(&dir);
    assert!(ok, "{report}");
    assert!(report.contains(&format!("{ARTIFACTS} objects, {ARTIFACTS} whole")), "{report}");
    assert_a_rebuild_reuses_everything(&dir);
}

#[test]
fn a_corrupt_object_is_detected_and_rebuilt() {
    let dir = materials_copy("build-corrupt");
    assert!(build(&dir, &[]).0);
    let catalog: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("store/catalog/unlit.json")).unwrap()).unwrap();
    let hex = catalog["variants"]["unlit[TINT=1,PATTERN=stripes]"]["objects"]["vk-spirv"].as_str().unwrap().to_owned();
    let object = dir.join("store/objects").join(&hex[..2]).join(&hex[2..]);
    let mut bytes = std::fs::read(&object).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&object, bytes).unwrap();
    assert!(!verify(&dir).0, "verify sees the flipped byte");

    let (ok, stdout, stderr) = build(&dir, &[]);
    assert!(ok, "{stdout}{stderr}");
    assert_eq!(summary(&stderr), (1, ARTIFACTS - 1, 0, ARTIFACTS), "{stderr}");
    assert!(stderr.contains("corrupt object"), "the corruption is logged: {stderr}");
    assert!(verify(&dir).0);
}

#[test]
fn a_bad_manifest_is_one_error_at_its_file_line_and_column() {
    let dir = materials_copy("build-bad-manifest");
    let manifest = std::fs::read_to_string(dir.join("xr.toml")).unwrap();
    for (broken, at, message) in [
        (manifest.replace("kind = \"bool\"", "knd = \"bool\""), "xr.toml:7:1", "unknown field `knd`"),
        (manifest.replace("range = [1, 4]", "range = \"1-4\""), "xr.toml:17:9", "invalid type"),
        (
            manifest.replace("values = [\"flat\", \"stripes\", \"checker\"]", "values = []"),
            "xr.toml:12:10",
            "no values",
        ),
        (manifest.replace("shaders/toon.frag", "shaders/tooon.frag"), "xr.toml:", "does not exist"),
    ] {
        std::fs::write(dir.join("xr.toml"), &broken).unwrap();
        let run = xr(&dir, &["build", "-m", "xr.toml"]).output().expect("xr runs");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(run.stdout.is_empty(), "diagnostics go to stderr");
        assert_eq!(run.status.code(), Some(2), "a bad manifest is exit status 2:\n{stderr}");
        assert!(stderr.contains(at) && stderr.contains(message), "want {at} {message}, got:\n{stderr}");
        assert_eq!(stderr.lines().filter(|l| l.contains("error")).count(), 1, "one error:\n{stderr}");
        assert!(!stderr.contains("xr build:"), "nothing built from a bad manifest");
    }
}

#[test]
fn gc_drops_what_no_manifest_references() {
    let dir = materials_copy("build-gc");
    assert!(build(&dir, &[]).0);
    // A second manifest without `toon`.
    let manifest = std::fs::read_to_string(dir.join("xr.toml")).unwrap();
    let without_toon = &manifest[..manifest.rfind("[[program]]").unwrap()];
    std::fs::write(dir.join("small.toml"), without_toon).unwrap();

    let (ok, stdout, stderr) = output(&mut xr(&dir, &["store", "gc", "-m", "small.toml", "--dry-run"]));
    assert!(ok, "{stdout}{stderr}");
    assert!(stderr.contains(&format!("{ARTIFACTS} objects, {} kept, 36 would be removed", ARTIFACTS - 36)), "{stderr}");
    assert!(dir.join("store/catalog/toon.json").exists(), "a dry run removes nothing");

    let (ok, stdout, stderr) = output(&mut xr(&dir, &["store", "gc", "-m", "small.toml"]));
    assert!(ok, "{stdout}{stderr}");
    assert!(stderr.contains("dropped program 'toon'"), "{stderr}");
    assert!(stderr.contains("36 removed"), "{stderr}");
    assert!(!dir.join("store/catalog/toon.json").exists());
    assert!(verify(&dir).0);
    // What is left is whole: building the small manifest reuses all of it.
    let (ok, _, stderr) = output(&mut xr(&dir, &["build", "-m", "small.toml"]));
    assert!(ok);
    assert_eq!(summary(&stderr), (0, ARTIFACTS - 36, 0, ARTIFACTS - 36), "{stderr}");
    // And the full manifest rebuilds only toon.
    let (ok, _, stderr) = build(&dir, &[]);
    assert!(ok);
    assert_eq!(summary(&stderr), (36, ARTIFACTS - 36, 0, ARTIFACTS), "{stderr}");
}

/// A program renamed in the manifest: its objects are the same bytes under
/// the new name, so the store holds each once, named by both catalogs.
/// `xr store gc` drops the old name's catalog and must keep every object
/// the kept program's catalog still names.
#[test]
fn gc_keeps_the_objects_a_dropped_program_shared_with_a_kept_one() {
    let dir = materials_copy("build-gc-shared");
    let manifest = std::fs::read_to_string(dir.join("xr.toml")).unwrap();
    let toon = &manifest[manifest.rfind("[[program]]").unwrap()..];
    let copy = toon.replacen("name = \"toon\"", "name = \"toon_renamed\"", 1);
    assert_ne!(copy, toon, "the sample's last program is toon");
    std::fs::write(dir.join("xr.toml"), format!("{manifest}\n{copy}")).unwrap();
    let (ok, _, stderr) = build(&dir, &[]);
    assert!(ok, "{stderr}");
    let (built, _, failed, unique) = summary(&stderr);
    assert_eq!((built, failed, unique), (ARTIFACTS + 36, 0, ARTIFACTS), "the copy's objects are shared: {stderr}");

    // The old name goes from the manifest: only the renamed program is left.
    let renamed = format!("{}\n{copy}", &manifest[..manifest.rfind("[[program]]").unwrap()]);
    std::fs::write(dir.join("xr.toml"), renamed).unwrap();
    let (ok, stdout, stderr) = output(&mut xr(&dir, &["store", "gc", "-m", "xr.toml"]));
    assert!(ok, "{stdout}{stderr}");
    assert!(stderr.contains("dropped program 'toon'"), "{stderr}");
    assert!(stderr.contains(", 0 removed"), "every object is still named by toon_renamed: {stderr}");
    let (whole, report) = verify(&dir);
    assert!(whole, "{report}");
    assert!(!report.contains("missing:"), "{report}");
    // Nothing to rebuild.
    assert_a_rebuild_reuses_everything(&dir);
}

/// `optimize = "size"` reaches the compiler: the SPIR-V objects of a
/// program built for size are smaller than those built without
/// optimisation, and differ from those built for performance.
#[test]
fn the_optimize_option_of_a_manifest_reaches_the_compiler() {
    let dir = materials_copy("build-optimize");
    let manifest = std::fs::read_to_string(dir.join("xr.toml")).unwrap();
    let sizes = |level: Option<&str>| -> usize {
        let text = match level {
            Some(level) => manifest.replace(
                "targets = [",
                &format!(
                    "target_options = {{ gl-spirv = {{ optimize = \"{level}\" }}, vk-spirv = {{ optimize = \"{level}\" }} }}\ntargets = ["
                ),
            ),
            None => manifest.clone(),
        };
        std::fs::write(dir.join("xr.toml"), text).unwrap();
        let (ok, stdout, stderr) = build(&dir, &[]);
        assert!(ok, "{stdout}{stderr}");
        let catalog: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("store/catalog/lit.json")).unwrap()).unwrap();
        let store = xr_store::Store::open(dir.join("store")).unwrap();
        catalog["variants"]
            .as_object()
            .unwrap()
            .values()
            .map(|variant| {
                let key = xr_store::ObjectKey::from_hex(variant["objects"]["vk-spirv"].as_str().unwrap()).unwrap();
                store.get(&key).unwrap().unwrap().len()
            })
            .sum()
    };
    let none = sizes(None);
    let size = sizes(Some("size"));
    let performance = sizes(Some("performance"));
    assert!(size < none, "optimize = size: {size} bytes against {none} without");
    assert_ne!(size, performance, "size and performance are two levels");
    assert_eq!(sizes(Some("none")), none, "none is what no option gives");
}

#[test]
fn hlsl_programs_build_for_spirv_and_are_refused_for_gl_glsl() {
    let dir = xr_tests::temp_dir("build-hlsl");
    std::fs::create_dir_all(dir.join("shaders")).unwrap();
    std::fs::write(
        dir.join("shaders/tint.hlsl"),
        "struct VSOut { float4 pos : SV_Position; float4 color : COLOR0; };\n\
         VSOut vs_main(float2 pos : POSITION) { VSOut o; o.pos = float4(pos, 0, 1); o.color = float4(TINT, 0, 0, 1); return o; }\n\
         float4 ps_main(VSOut i) : SV_Target { return i.color; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("xr.toml"),
        "store = \"store\"\n\n[[axis]]\nname = \"TINT\"\nkind = \"bool\"\n\n[[program]]\nname = \"tint\"\naxes = [\"TINT\"]\n\
         targets = [\"gl-glsl\", \"gl-spirv\", \"vk-spirv\"]\nstages = [\n\
         { stage = \"vertex\", file = \"shaders/tint.hlsl\", entry = \"vs_main\", language = \"hlsl\" },\n\
         { stage = \"fragment\", file = \"shaders/tint.hlsl\", entry = \"ps_main\", language = \"hlsl\" },\n]\n",
    )
    .unwrap();
    let (ok, _, stderr) = build(&dir, &[]);
    assert!(!ok);
    assert_eq!(summary(&stderr), (4, 0, 2, 4), "{stderr}");
    assert!(
        stderr.contains("no plugin compiles hlsl into gl-glsl")
            && stderr.contains("in 2 artifacts: tint × 2 variants × gl-glsl"),
        "{stderr}"
    );
    let (ok, _, stderr) = build(&dir, &["--target", "gl-spirv", "--target", "vk-spirv"]);
    assert!(ok, "{stderr}");
    assert_eq!(summary(&stderr), (0, 4, 0, 4), "{stderr}");
    // Guarded sources need a plugin that preprocesses the language: the
    // build is fine; a program named for them fails naming what is
    // missing, one not named is passed over with a line that says why.
    let (ok, _, stderr) = build(&dir, &["--target", "vk-spirv", "--program", "tint", "--emit", "guarded"]);
    assert!(!ok);
    assert_eq!(summary(&stderr), (0, 2, 0, 2), "{stderr}");
    assert!(
        stderr.contains("error: guarded sources of 'tint': no plugin preprocesses hlsl (a build system compiling hlsl into hlsl-preprocessed)"),
        "{stderr}"
    );
    let (ok, _, stderr) = build(&dir, &["--target", "vk-spirv", "--emit", "guarded"]);
    assert!(ok, "{stderr}");
    assert!(stderr.contains("guarded: none for 'tint': no plugin preprocesses hlsl"), "{stderr}");
}

#[test]
fn flags_that_name_nothing_are_one_clear_error() {
    let dir = materials_copy("build-flags");
    for (args, message) in [
        (vec!["build", "-m", "xr.toml", "--program", "shiny"], "no program named 'shiny'"),
        (vec!["build", "-m", "xr.toml", "--target", "dx12"], "unknown target 'dx12'"),
        (vec!["build", "-m", "xr.toml", "--emit", "flat"], "unknown --emit kind 'flat'"),
        (vec!["build", "-m", "missing.toml"], "cannot read the manifest"),
        (vec!["build", "-m", "xr.toml", "--jobs", "many"], "invalid value 'many'"),
        (vec!["store", "gc", "-m", "xr.toml", "--store", "shaders"], "is not an XR store"),
    ] {
        let run = xr(&dir, &args).output().expect("xr runs");
        let (stdout, stderr) = (String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
        assert_eq!(run.status.code(), Some(2), "{args:?}: bad usage is exit status 2\n{stdout}{stderr}");
        assert!(stderr.contains(message), "{args:?}: {stdout}{stderr}");
        assert!(!stderr.contains("xr build:"), "{args:?}: refused before building: {stderr}");
    }
}

#[test]
fn temporary_files_of_dead_processes_are_removed_and_those_of_live_ones_kept() {
    let dir = materials_copy("build-temp-files");
    std::fs::create_dir_all(dir.join("store/tmp")).unwrap();
    // No process has pid 4000000000 (above Linux's pid_max); this test's process is alive.
    let dead = dir.join("store/tmp/abc.4000000000.0.tmp");
    let live = dir.join(format!("store/tmp/abc.{}.0.tmp", std::process::id()));
    std::fs::write(&dead, b"torn").unwrap();
    std::fs::write(&live, b"in flight").unwrap();
    let (ok, _, stderr) = build(&dir, &["--program", "unlit"]);
    assert!(ok, "{stderr}");
    assert!(!dead.exists(), "a killed build's leftover is removed");
    assert!(live.exists(), "a running build's write is left alone");
}

#[test]
fn a_plugin_whose_offline_compile_panics_fails_its_artifacts_and_the_rest_lands() {
    let dir = materials_copy("build-panic");
    let manifest = std::fs::read_to_string(dir.join("xr.toml")).unwrap();
    let manifest = manifest
        .replace("targets = [\"gl-glsl\", \"gl-spirv\", \"vk-spirv\"]", "targets = [\"vk-spirv\", \"fixture-panic\"]");
    std::fs::write(dir.join("xr.toml"), manifest).unwrap();
    // The fixture beside the built-in plugins (which load from next to `xr`).
    let plugins = xr_tests::plugin_dir_with("build-panic-plugins", &["xr-fixture-panic"]);
    let (ok, _, stderr) =
        output(xr(&dir, &["build", "-m", "xr.toml"]).env("XR_PLUGIN_PATH", plugins.path()).env("XR_LOG", "info"));
    assert!(!ok, "{stderr}");
    let variants = ARTIFACTS / 3;
    assert_eq!(summary(&stderr), (variants, 0, variants, variants), "{stderr}");
    let panics = stderr.matches("plugin panicked: fixture build system: cannot compile").count();
    assert_eq!(panics, variants, "each fixture-panic artifact fails with the panic\n{stderr}");
    // Two build systems offer glsl → vk-spirv: the higher priority one builds it, and the log names both.
    assert!(
        stderr.contains(
            "glsl → vk-spirv: xr-compiler-vk-spirv (priority 0) is used, not xr-fixture-panic-build (priority -100)"
        ),
        "{stderr}"
    );
    // What did build landed whole in the store and the catalog.
    let (ok, report) = verify(&dir);
    assert!(ok, "{report}");
    let catalog: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("store/catalog/unlit.json")).unwrap()).unwrap();
    let objects = &catalog["variants"]["unlit[TINT=0,PATTERN=flat]"]["objects"];
    assert!(objects["vk-spirv"].is_string() && objects["fixture-panic"].is_null(), "{catalog}");
}

#[test]
fn two_build_systems_of_one_priority_for_one_pair_are_an_error_naming_both() {
    let dir = materials_copy("build-rival");
    let plugins = xr_tests::plugin_dir_with("build-rival-plugins", &["xr-fixture-rival"]);
    let (ok, _, stderr) = output(xr(&dir, &["build", "-m", "xr.toml"]).env("XR_PLUGIN_PATH", plugins.path()));
    assert!(!ok, "{stderr}");
    // Every vk-spirv artifact fails with the choice it would not make; the GL targets build.
    let variants = ARTIFACTS / 3;
    assert_eq!(summary(&stderr), (2 * variants, 0, variants, summary(&stderr).3), "{stderr}");
    let refusal = "two build systems compile glsl into vk-spirv with the same priority 0: \
                   xr-fixture-rival and xr-compiler-vk-spirv";
    assert_eq!(stderr.matches(refusal).count(), 1, "one report for the whole matrix\n{stderr}");
    assert!(stderr.contains(&format!("in {variants} artifacts")), "{stderr}");
    assert!(!stderr.contains("must never be chosen"), "the rival is never called\n{stderr}");
}

#[test]
fn variants_whose_stages_read_no_axis_share_their_objects() {
    let dir = materials_copy("build-dedup");
    // An axis no shader reads: its two values make the same SPIR-V, while
    // the gl-glsl bundles differ (they carry the defines).
    std::fs::write(
        dir.join("xr.toml"),
        "store = \"store\"\n\n[[axis]]\nname = \"UNUSED\"\nkind = \"bool\"\n\n\
         [[program]]\nname = \"unlit\"\naxes = [\"UNUSED\"]\ntargets = [\"gl-glsl\", \"gl-spirv\", \"vk-spirv\"]\n\
         include = [\"shaders/include\"]\n\
         stages = [\n    { stage = \"vertex\", file = \"shaders/quad.vert\" },\n    { stage = \"fragment\", file = \"shaders/unlit.frag\" },\n]\n",
    )
    .unwrap();
    let (ok, _, stderr) = build(&dir, &[]);
    assert!(ok, "{stderr}");
    // 2 variants × 3 targets; objects: 1 gl-spirv + 1 vk-spirv + 2 gl-glsl.
    assert_eq!(summary(&stderr), (6, 0, 0, 4), "{stderr}");
    let catalog: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("store/catalog/unlit.json")).unwrap()).unwrap();
    let object = |variant: &str, target: &str| catalog["variants"][variant]["objects"][target].clone();
    for target in ["gl-spirv", "vk-spirv"] {
        assert_eq!(object("unlit[UNUSED=0]", target), object("unlit[UNUSED=1]", target), "{target}: one object");
    }
    assert_ne!(object("unlit[UNUSED=0]", "gl-glsl"), object("unlit[UNUSED=1]", "gl-glsl"));
    let store = xr_store::Store::open(dir.join("store")).unwrap();
    assert_eq!(store.keys().unwrap().len(), 4, "stored once each");
}

/// Whether a build took the no-op shortcut (it logs so at `XR_LOG=info`).
fn shortcut(stderr: &str) -> bool {
    stderr.contains("no plugin loaded")
}

/// The stamp keeps each environment variable the build read, by XR or by
/// a plugin (the SPIR-V compilers read the Slang library's place when they
/// load), with its value: a change to one takes the ordinary path; a
/// variable nothing read, or one that only changes the log, does not.
#[test]
fn a_variable_the_last_build_read_changed_takes_the_ordinary_path_and_others_do_not() {
    let dir = materials_copy("build-stamp-environment");
    let elsewhere = dir.join("no-slang-here");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let run = |slang: Option<&Path>, extra: &[(&str, &str)]| {
        let mut command = xr(&dir, &["build", "-m", "xr.toml"]);
        command.env("XR_LOG", "info").env_remove("XR_SLANG_LIBRARY");
        if let Some(slang) = slang {
            command.env("XR_SLANG_LIBRARY", slang);
        }
        for (name, value) in extra {
            command.env(name, value);
        }
        output(&mut command)
    };
    let (ok, stdout, stderr) = run(None, &[]);
    assert!(ok && !shortcut(&stderr), "{stdout}{stderr}");
    let stamp = std::fs::read_to_string(dir.join("store/last-build.json")).unwrap();
    assert!(stamp.contains(r#"{"variable":["XR_SLANG_LIBRARY",null]}"#), "the plugin's read, unset: {stamp}");
    assert!(!stamp.contains("XR_LOG"), "the log's level is not what is built: {stamp}");
    assert!(shortcut(&run(None, &[]).2), "nothing changed");
    assert!(shortcut(&run(None, &[("XR_NOTHING_READS_THIS", "1"), ("XR_LOG", "debug")]).2), "nothing read changed");
    let (ok, stdout, stderr) = run(Some(&elsewhere), &[]);
    assert!(ok && !shortcut(&stderr), "XR_SLANG_LIBRARY set: {stdout}{stderr}");
    // A value is kept as its hash: a farm's token must not lie in the store.
    let stamp = std::fs::read_to_string(dir.join("store/last-build.json")).unwrap();
    let hash = blake3::hash(elsewhere.as_os_str().as_encoded_bytes()).to_hex().to_string();
    assert!(stamp.contains(&format!(r#"{{"variable":["XR_SLANG_LIBRARY","{hash}"]}}"#)), "{stamp}");
    assert!(!stamp.contains(elsewhere.to_str().unwrap()), "the value in the clear: {stamp}");
    assert!(shortcut(&run(Some(&elsewhere), &[]).2), "nothing changed since");
    assert!(!shortcut(&run(None, &[]).2), "XR_SLANG_LIBRARY unset again");
}

#[test]
fn a_no_op_loads_no_plugin_and_anything_changed_takes_the_ordinary_path() {
    let dir = materials_copy("build-stamp");
    let plugins = dir.join("extra-plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["build", "-m", "xr.toml"];
        args.extend(extra);
        output(xr(&dir, &args).env("XR_LOG", "info").env("XR_PLUGIN_PATH", &plugins))
    };
    let (ok, stdout, stderr) = run(&[]);
    assert!(ok && !shortcut(&stderr), "{stdout}{stderr}");
    let (ok, stdout, stderr) = run(&[]);
    assert!(ok && shortcut(&stderr), "a no-op: {stdout}{stderr}");
    assert_eq!(summary(&stderr), (0, ARTIFACTS, 0, ARTIFACTS), "the ordinary no-op's numbers: {stderr}");

    // Another request: its own key.
    let (_, stdout, stderr) = run(&["--target", "vk-spirv"]);
    assert!(!shortcut(&stderr), "{stdout}{stderr}");
    assert_eq!(summary(&stderr), (0, ARTIFACTS / 3, 0, ARTIFACTS / 3), "{stderr}");
    let (_, _, stderr) = run(&[]);
    assert!(!shortcut(&stderr), "the last build was another request: {stderr}");

    // An edited include: the ordinary path, which rebuilds lit and toon.
    let lighting = dir.join("shaders/include/lighting.glsl");
    let text = std::fs::read_to_string(&lighting).unwrap();
    std::fs::write(&lighting, text.replace("0.5, 0.5, 1.0", "0.4, 0.6, 1.0")).unwrap();
    let (_, _, stderr) = run(&[]);
    assert!(!shortcut(&stderr), "{stderr}");
    assert_eq!(summary(&stderr).0, (18 + 12) * 3, "{stderr}");

    // A new plugin file where plugins are searched (even one that fails to load).
    assert!(shortcut(&run(&[]).2));
    std::fs::write(plugins.join("libnew.so"), b"not a plugin").unwrap();
    let (_, stdout, stderr) = run(&[]);
    assert!(!shortcut(&stderr), "{stdout}{stderr}");
    assert_eq!(summary(&stderr), (0, ARTIFACTS, 0, ARTIFACTS), "{stderr}");

    // A removed object: the ordinary path finds it gone and builds it again.
    assert!(shortcut(&run(&[]).2));
    let catalog: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("store/catalog/toon.json")).unwrap()).unwrap();
    let hex = catalog["variants"]["toon[PATTERN=flat,BANDS=2]"]["objects"]["gl-spirv"].as_str().unwrap().to_owned();
    std::fs::remove_file(dir.join("store/objects").join(&hex[..2]).join(&hex[2..])).unwrap();
    let (_, _, stderr) = run(&[]);
    assert!(!shortcut(&stderr), "{stderr}");
    assert_eq!(summary(&stderr), (1, ARTIFACTS - 1, 0, ARTIFACTS), "{stderr}");

    // A removed catalog: written again.
    assert!(shortcut(&run(&[]).2));
    std::fs::remove_file(dir.join("store/catalog/unlit.json")).unwrap();
    let (_, _, stderr) = run(&[]);
    assert!(!shortcut(&stderr), "{stderr}");
    assert!(dir.join("store/catalog/unlit.json").is_file());

    // A stamp cut short (its last line lost) never holds: its first line
    // counts the lines after it.
    assert!(shortcut(&run(&[]).2));
    let stamp = dir.join("store/last-build.json");
    let text = std::fs::read_to_string(&stamp).unwrap();
    let last_line = text.trim_end().rfind('\n').expect("a stamp of several lines");
    std::fs::write(&stamp, &text[..=last_line]).unwrap();
    let (ok, stdout, stderr) = run(&[]);
    assert!(ok && !shortcut(&stderr), "{stdout}{stderr}");
    assert_eq!(summary(&stderr), (0, ARTIFACTS, 0, ARTIFACTS), "{stderr}");

    // A failed build leaves no stamp: the next build takes the ordinary path.
    assert!(shortcut(&run(&[]).2));
    let toon = dir.join("shaders/toon.frag");
    let good = std::fs::read_to_string(&toon).unwrap();
    std::fs::write(&toon, good.replace("void main()", "void main() { broken")).unwrap();
    assert!(!run(&[]).0);
    std::fs::write(&toon, &good).unwrap();
    let (ok, stdout, stderr) = run(&[]);
    assert!(ok && !shortcut(&stderr), "{stdout}{stderr}");
    assert!(shortcut(&run(&[]).2));

    // A program no plugin can build fails alone; run again, it fails again.
    let manifest = std::fs::read_to_string(dir.join("xr.toml")).unwrap();
    let refused = manifest.replacen(
        r#"targets = ["gl-glsl", "gl-spirv", "vk-spirv"]"#,
        r#"targets = ["gl-glsl", "gl-spirv", "vk-spirv", "no-such-target"]"#,
        1,
    );
    std::fs::write(dir.join("xr.toml"), refused).unwrap();
    for attempt in 0..2 {
        let (ok, stdout, stderr) = run(&[]);
        assert!(!ok && !shortcut(&stderr), "attempt {attempt}: {stdout}{stderr}");
    }
}

/// A store that cannot be synced (a disk error; here the store's test hook)
/// fails the build: nothing is journalled or catalogued that a power loss
/// could tear, and the next build redoes it all.
#[test]
fn a_store_that_cannot_be_synced_fails_the_build_and_names_no_object() {
    let dir = materials_copy("build-sync-failure");
    let (ok, stdout, stderr) =
        output(xr(&dir, &["build", "-m", "xr.toml", "-q"]).env(xr_store::test_hooks::SYNC_FAILURE_VAR, "1"));
    assert!(!ok, "{stdout}{stderr}");
    assert!(stderr.contains("cannot make the written objects durable"), "{stderr}");
    let journal = std::fs::read_to_string(dir.join("store/journal.jsonl")).unwrap_or_default();
    assert_eq!(journal.lines().count(), 0, "{journal}");
    assert!(!dir.join("store/catalog/lit.json").exists(), "no catalog names an unsynced object");
    let (ok, stdout, stderr) = build(&dir, &[]);
    assert!(ok, "{stdout}{stderr}");
    assert_eq!(summary(&stderr), (ARTIFACTS, 0, 0, ARTIFACTS), "{stderr}");
}

/// Rebuilds append to the journal; once it is long and mostly superseded, a
/// build compacts it to one line per artifact and a short line per
/// superseded object still in the store, which `xr store gc` then collects.
#[test]
fn a_long_superseded_journal_is_compacted_and_gc_still_collects_what_it_superseded() {
    let dir = materials_copy("build-compact");
    assert!(build(&dir, &[]).0);
    // An edit to an include of lit and toon: their old objects are superseded.
    let lighting = dir.join("shaders/include/lighting.glsl");
    let text = std::fs::read_to_string(&lighting).unwrap();
    std::fs::write(&lighting, text.replace("0.5, 0.5, 1.0", "0.4, 0.6, 1.0")).unwrap();
    let (ok, _, stderr) = build(&dir, &[]);
    assert!(ok, "{stderr}");
    // Many rebuilds' worth of superseded lines: the journal's own lines again and again.
    let journal = dir.join("store/journal.jsonl");
    let lines = std::fs::read_to_string(&journal).unwrap();
    let copies = xr_build::journal::COMPACT_MIN_LINES / lines.lines().count() + 1;
    std::fs::write(&journal, lines.repeat(copies)).unwrap();
    // Without the build stamp the build takes the ordinary path (the stamp
    // would answer "nothing changed" without opening the journal).
    std::fs::remove_file(dir.join("store/last-build.json")).unwrap();
    let (ok, stdout, stderr) = build(&dir, &[]);
    assert!(ok, "{stdout}{stderr}");
    assert_eq!(summary(&stderr).0, 0, "nothing rebuilt: {stderr}");
    let compacted = std::fs::read_to_string(&journal).unwrap();
    let retired = compacted.lines().filter(|l| l.starts_with("{\"retired\"")).count();
    assert_eq!(compacted.lines().count(), ARTIFACTS + retired, "one line per artifact, one per retired object");
    assert!(retired > 0, "the edit superseded objects that are still in the store");
    let (ok, report) = verify(&dir);
    assert!(ok && report.contains(&format!("{ARTIFACTS} entries, {retired} retired objects")), "{report}");

    let (ok, stdout, stderr) = output(&mut xr(&dir, &["store", "gc", "-m", "xr.toml"]));
    assert!(ok, "{stdout}{stderr}");
    assert!(stderr.contains(&format!("{retired} removed")), "gc collects every retired object: {stderr}");
    assert!(verify(&dir).0);
    let (ok, _, stderr) = build(&dir, &["--in-process"]);
    assert!(ok);
    assert_eq!(summary(&stderr).1, ARTIFACTS, "all reused after compaction and gc: {stderr}");
}

/// An object the store cannot take (here every `objects/<xx>` directory
/// is a file) fails its artifact with an error that names the store and
/// no source file; the build goes on to report every artifact, and once
/// the store is whole again the next build builds them all.
#[test]
fn an_object_the_store_cannot_take_fails_its_artifact_with_no_file_and_loses_nothing_else() {
    let dir = materials_copy("build-object-not-stored");
    let objects = dir.join("store/objects");
    std::fs::create_dir_all(&objects).unwrap();
    for prefix in 0..=255u8 {
        std::fs::write(objects.join(format!("{prefix:02x}")), b"not a directory").unwrap();
    }
    let (ok, stdout, stderr) = build(&dir, &["--message-format", "json"]);
    assert!(!ok, "{stderr}");
    let lines: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).expect("JSON")).collect();
    let (closing, diagnostics) = lines.split_last().expect("a summary");
    assert_eq!(closing["failed"].as_u64(), Some(ARTIFACTS as u64), "{closing}");
    let mut struck = 0;
    for diagnostic in diagnostics {
        assert_eq!(diagnostic["file"], "", "{diagnostic}");
        let message = diagnostic["message"].as_str().unwrap_or_default();
        assert!(message.starts_with("cannot write its object into the store "), "{message}");
        struck += diagnostic["artifacts"].as_array().map_or(0, Vec::len);
    }
    assert_eq!(struck, ARTIFACTS, "every artifact is reported: {stdout}");
    std::fs::remove_dir_all(&objects).unwrap();
    let (ok, stdout, stderr) = build(&dir, &[]);
    assert!(ok, "{stdout}{stderr}");
    assert_eq!(summary(&stderr).0, ARTIFACTS, "{stderr}");
}

/// Touching a file (its bytes written again, unchanged) rebuilds nothing
/// where the journal decides each artifact, not only where the build stamp
/// answers first: the journal compares contents, never times.
#[test]
fn a_touched_include_rebuilds_nothing_where_the_journal_decides_each_artifact() {
    let dir = materials_copy("build-touch-journal");
    let (ok, _, stderr) = build(&dir, &[]);
    assert!(ok, "{stderr}");
    let lighting = dir.join("shaders/include/lighting.glsl");
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&lighting, std::fs::read(&lighting).unwrap()).unwrap();
    // Without the stamp, every artifact goes down the ordinary path.
    std::fs::remove_file(dir.join("store/last-build.json")).expect("a whole success leaves a stamp");
    let (ok, _, stderr) = build(&dir, &[]);
    assert!(ok, "{stderr}");
    let (built, reused, failed, _) = summary(&stderr);
    assert_eq!((built, reused, failed), (0, ARTIFACTS, 0), "{stderr}");
    assert!(dir.join("store/last-build.json").is_file(), "the ordinary path leaves a stamp again");
}
