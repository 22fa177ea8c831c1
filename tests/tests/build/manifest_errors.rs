//! `xr build` on manifests with mistakes: every mistake in one run, each at
//! its line and column with a "did you mean" where a known name is close;
//! an empty manifest warns; a store that cannot be written names the path
//! and what was being written.

use std::path::Path;
use xr_tests::{Xr, XrRun, materials_copy};

fn build(dir: &Path, extra: &[&str]) -> XrRun {
    let mut args = vec!["build", "-m", "xr.toml"];
    args.extend(extra);
    Xr::new(args).dir(dir).run()
}

/// `text` with `from` replaced by `to` in the first line, at or after line
/// `after`, that has it; the 1-based line and column where `to` now starts.
#[track_caller]
fn edit(text: &mut String, after: usize, from: &str, to: &str) -> (usize, usize) {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let index = (after - 1..lines.len()).find(|&i| lines[i].contains(from)).expect("the line to edit");
    let column = lines[index].find(from).expect("on it") + 1;
    lines[index] = lines[index].replacen(from, to, 1);
    *text = lines.join("\n") + "\n";
    (index + 1, column)
}

/// The line of the first line at or after `after` that has `what`.
fn line_of(text: &str, after: usize, what: &str) -> usize {
    text.lines().enumerate().skip(after - 1).find(|(_, l)| l.contains(what)).expect("the line").0 + 1
}

#[test]
fn five_mistakes_in_one_manifest_are_five_errors_in_one_run_each_at_its_place() {
    let dir = materials_copy("manifest-five-mistakes");
    let mut text = std::fs::read_to_string(dir.join("xr.toml")).unwrap();
    // 1. A misspelt key of the first axis.
    let (key_line, key_column) = edit(&mut text, 1, "kind = \"bool\"", "kidn = \"bool\"");
    // 2. A misspelt axis in the first program.
    let unlit = line_of(&text, 1, "name = \"unlit\"");
    let (axis_line, axis_column) = edit(&mut text, unlit, "\"PATTERN\"", "\"PATERN\"");
    // 3. An include directory that is not there, in `lit`.
    let lit = line_of(&text, 1, "name = \"lit\"");
    let (include_line, include_column) = edit(&mut text, lit, "\"shaders/include\"", "\"shaders/includes\"");
    // 4. A misspelt stage in `textured`.
    let textured = line_of(&text, 1, "name = \"textured\"");
    let (stage_line, stage_column) = edit(&mut text, textured, "\"fragment\"", "\"fragmnet\"");
    // 5. `toon` without its vertex stage: refused now, not when first loaded.
    let toon = line_of(&text, 1, "name = \"toon\"");
    edit(&mut text, toon, "{ stage = \"vertex\", file = \"shaders/quad.vert\" },", "");
    std::fs::write(dir.join("xr.toml"), &text).unwrap();

    let run = build(&dir, &[]);
    assert_eq!(run.code, Some(2), "a manifest with mistakes is exit status 2:\n{}{}", run.stdout, run.stderr);
    let out = &run.stderr;
    let at = |line: usize, column: usize| format!("xr.toml:{line}:{column}");
    for (place, message) in [
        (at(key_line, key_column), "unknown field `kidn`; did you mean `kind`?"),
        (at(axis_line, axis_column), "unknown axis 'PATERN'; did you mean `PATTERN`?"),
        (at(include_line, include_column), "shaders/includes' does not exist"),
        (at(stage_line, stage_column), "unknown stage 'fragmnet'; did you mean `fragment`?"),
        (at(toon, 8), "program 'toon' has no vertex stage"),
    ] {
        assert!(out.contains(&place), "want {place} ({message}) in:\n{out}");
        assert!(out.contains(message), "want {message} in:\n{out}");
    }
    assert_eq!(out.lines().filter(|l| l.contains("error")).count(), 5, "five errors, no more:\n{out}");
    assert!(!out.contains("xr build:"), "nothing built: {out}");
    assert!(!dir.join("store/catalog").exists() && !dir.join("store/objects").exists(), "no store made");

    // The same as JSON lines: five diagnostics, then the summary.
    let run = build(&dir, &["--message-format", "json"]);
    let lines: Vec<serde_json::Value> = run.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 6, "{}", run.stdout);
    assert_eq!(lines[5]["errors"], 5, "{}", run.stdout);
}

#[test]
fn names_no_plugin_or_manifest_has_suggest_the_closest_one() {
    let dir = materials_copy("manifest-suggestions");
    for (args, message) in [
        (vec!["--target", "vk-spriv"], "unknown target 'vk-spriv'"),
        (vec!["--program", "unlt"], "no program named 'unlt'; did you mean `unlit`?"),
    ] {
        let run = build(&dir, &args);
        assert_eq!(run.code, Some(2), "{args:?}: {}{}", run.stdout, run.stderr);
        assert!(run.stderr.contains(message), "{args:?}: {}", run.stderr);
    }
    let run = build(&dir, &["--target", "vk-spriv"]);
    assert!(run.stderr.contains("did you mean `vk-spirv`?"), "{}", run.stderr);

    // A target only the plugins know, misspelt in the manifest: its program
    // fails at the name, with the closest target.
    std::fs::write(dir.join("xr.toml"), textured("targets = [\"gl-glsl\", \"vk-spriv\"]", "")).unwrap();
    let run = build(&dir, &[]);
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("xr.toml:4:23"), "{}", run.stderr);
    assert!(run.stderr.contains("no plugin builds target 'vk-spriv'"), "{}", run.stderr);
    assert!(run.stderr.contains("did you mean `vk-spirv`?"), "{}", run.stderr);
    assert!(run.stderr.contains("1 failed"), "one program refused: {}", run.stderr);

    // With a mistake the manifest's reader finds too: both in one run, in
    // the order of their lines, and nothing built.
    std::fs::write(dir.join("xr.toml"), textured("targets = [\"gl-glsl\", \"vk-spriv\"]", "exclud = []")).unwrap();
    let run = build(&dir, &[]);
    assert_eq!(run.code, Some(2), "{}{}", run.stdout, run.stderr);
    let errors: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 2, "{}", run.stderr);
    assert!(errors[0].contains("no plugin builds target 'vk-spriv'"), "{}", run.stderr);
    assert!(errors[1].contains("unknown field `exclud`; did you mean `exclude`?"), "{}", run.stderr);
    assert!(!dir.join("store/catalog").exists(), "nothing built: {}", run.stderr);
}

/// A manifest of the sample's `textured` program alone, with `targets` and
/// `more` lines.
fn textured(targets: &str, more: &str) -> String {
    format!(
        "store = \"store\"\n[[program]]\nname = \"textured\"\n{targets}\ninclude = [\"shaders/include\"]\n\
         stages = [\n    {{ stage = \"vertex\", file = \"shaders/quad.vert\" }},\n    \
         {{ stage = \"fragment\", file = \"shaders/textured.frag\" }},\n]\n{more}\n"
    )
}

#[test]
fn an_option_no_compiler_of_the_program_takes_names_every_compiler_asked() {
    let dir = materials_copy("manifest-option");
    let targets = "targets = [\"gl-glsl\", \"gl-spirv\", \"vk-spirv\"]";
    std::fs::write(dir.join("xr.toml"), textured(targets, "options = { optimise = \"size\" }")).unwrap();
    let run = build(&dir, &[]);
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    let out = &run.stderr;
    assert!(out.contains("xr.toml:10:24"), "at the option: {out}");
    assert!(out.contains("no compiler of program 'textured' takes option 'optimise'"), "{out}");
    assert!(out.contains("did you mean `optimize`?"), "{out}");
    for target in ["gl-glsl", "gl-spirv", "vk-spirv"] {
        assert!(out.contains(&format!("for glsl → {target} takes")), "each compiler asked, {target}: {out}");
    }
}

#[test]
fn a_manifest_without_programs_warns_and_builds_nothing() {
    let dir = materials_copy("manifest-empty");
    std::fs::write(dir.join("xr.toml"), "store = \"store\"\n").unwrap();
    let run = build(&dir, &[]);
    assert!(run.ok, "an empty manifest is no error: {}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("warning: the manifest declares no programs"), "{}", run.stderr);
    assert!(run.stderr.contains("0 built"), "{}", run.stderr);
}

#[test]
fn a_store_that_cannot_be_written_names_its_path_and_what_was_written() {
    let dir = materials_copy("manifest-store-unwritable");
    // The store's directory is a file.
    std::fs::write(dir.join("store"), "not a directory").unwrap();
    let run = build(&dir, &["--program", "unlit", "--target", "vk-spirv"]);
    assert!(!run.ok);
    assert!(run.stderr.contains("cannot write the store store (making its objects/"), "{}", run.stderr);
    assert!(run.stderr.contains("store/objects: Not a directory"), "the path that failed: {}", run.stderr);
    let store = dir.join("store");

    // Its catalog directory is a file: the objects are written, the catalog is not.
    std::fs::remove_file(&store).unwrap();
    std::fs::create_dir(&store).unwrap();
    std::fs::write(store.join("catalog"), "not a directory").unwrap();
    let run = build(&dir, &["--program", "unlit", "--target", "vk-spirv"]);
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("cannot write the catalog of program 'unlit': store/catalog: "),
        "the path and what was written: {}",
        run.stderr
    );
}

/// A stage its target does not have (a mesh stage for OpenGL) is refused
/// where the manifest declares it, naming the stage, its file and the
/// target; the manifest's other programs still build, and the same program
/// for Vulkan alone builds offline.
#[test]
fn a_mesh_stage_for_an_opengl_target_is_refused_at_its_declaration() {
    let dir = materials_copy("manifest-mesh-stage");
    let shaders = xr_tests::workspace_root().join("samples/meshlets/shaders");
    for file in ["cube.glsl", "cube.task", "cube.mesh"] {
        std::fs::copy(shaders.join(file), dir.join("shaders").join(file)).unwrap();
    }
    let meshlets = |targets: &str| {
        format!(
            "[[program]]\nname = \"meshlets\"\n{targets}\ninclude = [\"shaders/include\"]\nstages = [\n    \
             {{ stage = \"task\", file = \"shaders/cube.task\" }},\n    \
             {{ stage = \"mesh\", file = \"shaders/cube.mesh\" }},\n    \
             {{ stage = \"fragment\", file = \"shaders/textured.frag\" }},\n]\n"
        )
    };
    let text =
        format!("{}{}", textured("targets = [\"vk-spirv\"]", ""), meshlets("targets = [\"vk-spirv\", \"gl-spirv\"]"));
    std::fs::write(dir.join("xr.toml"), &text).unwrap();
    let run = build(&dir, &[]);
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    let task_line = text.lines().position(|l| l.contains("\"task\"")).unwrap() + 1;
    assert!(run.stderr.contains(&format!("xr.toml:{task_line}:")), "at the stage: {}", run.stderr);
    assert!(
        run.stderr.contains("the task stage") && run.stderr.contains("cube.task cannot be built for gl-spirv"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("1 failed"), "the other program built: {}{}", run.stdout, run.stderr);
    let text = format!("{}{}", textured("targets = [\"vk-spirv\"]", ""), meshlets("targets = [\"vk-spirv\"]"));
    std::fs::write(dir.join("xr.toml"), &text).unwrap();
    let run = build(&dir, &[]);
    assert_eq!(run.code, Some(0), "for Vulkan alone it builds: {}{}", run.stdout, run.stderr);
}
