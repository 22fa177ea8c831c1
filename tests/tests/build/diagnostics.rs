//! What `xr build` and `xr compile` say about broken sources: one report
//! per distinct mistake however many artifacts it strikes, with the line of
//! source and the include chain, as JSON lines on request; exit statuses;
//! and a reader that stops reading ends `xr` quietly.

use std::path::Path;
use xr_tests::{TestDir, Xr, materials_copy, temp_dir};

/// `xr build -m xr.toml EXTRA…` in `dir`.
fn build(dir: &Path, extra: &[&str]) -> xr_tests::XrRun {
    let mut args = vec!["build", "-m", "xr.toml"];
    args.extend(extra);
    Xr::new(args).dir(dir).run()
}

/// Lines that open a report (`error: …`, `warning: …`).
fn report_headers(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with("error") || l.starts_with("warning")).collect()
}

/// Every line of `stdout` as JSON; the test fails on any other line.
fn json_lines(stdout: &str) -> Vec<serde_json::Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}\n{stdout}")))
        .collect()
}

/// Replaces the first `from` in the materials copy's `unlit.frag` with
/// `to`; the 1-based line on which the first line of `to` now is.
fn edit_unlit(dir: &Path, from: &str, to: &str) -> usize {
    let unlit = dir.join("shaders/unlit.frag");
    let text = std::fs::read_to_string(&unlit).unwrap();
    let at = text.find(from).expect("the text to replace");
    std::fs::write(&unlit, text.replacen(from, to, 1)).unwrap();
    text[..at].lines().count() + 1
}

/// The materials copy with a typo on line 10 of unlit.frag, which all 18
/// artifacts of unlit read (6 variants × 3 targets).
fn typo_in_unlit(label: &str) -> TestDir {
    let dir = materials_copy(label);
    edit_unlit(&dir, "void main() {", "void main() {\n    typo_here;");
    dir
}

#[test]
fn one_typo_read_by_18_artifacts_is_one_report_and_one_json_object() {
    let dir = typo_in_unlit("diagnostics-typo");
    let line = std::fs::read_to_string(dir.join("shaders/unlit.frag"))
        .unwrap()
        .lines()
        .position(|l| l.contains("typo_here"))
        .unwrap()
        + 1;
    let run = build(&dir, &[]);
    assert_eq!(run.code, Some(1), "some artifacts failed: exit status 1\n{}", run.stderr);
    let headers = report_headers(&run.stderr);
    assert_eq!(headers, ["error: 'typo_here' : undeclared identifier"], "{}", run.stderr);
    assert!(run.stderr.contains(&format!("--> shaders/unlit.frag:{line}:5")), "{}", run.stderr);
    assert!(run.stderr.contains(&format!("{line} |     typo_here;")), "the line of source:\n{}", run.stderr);
    assert!(run.stderr.contains("|     ^^^^^^^^^"), "a caret under the name:\n{}", run.stderr);
    assert!(run.stderr.contains("in 18 artifacts: unlit × 6 variants × gl-glsl, gl-spirv, vk-spirv"), "{}", run.stderr);
    assert!(run.stderr.contains("18 failed (1 distinct error)"), "{}", run.stderr);
    assert!(!run.stderr.contains('\u{1b}'), "no colours off a terminal");

    // -v lists the artifacts and the compilers.
    let run = build(&dir, &["-v"]);
    assert!(run.stderr.contains("unlit[TINT=1,PATTERN=checker] (vk-spirv)"), "{}", run.stderr);
    assert!(
        run.stderr.contains("reported by xr-compiler-gl-spirv, xr-compiler-glsl, xr-compiler-vk-spirv"),
        "{}",
        run.stderr
    );

    let run = build(&dir, &["--message-format", "json"]);
    assert_eq!(run.code, Some(1));
    let objects = json_lines(&run.stdout);
    let diagnostics: Vec<&serde_json::Value> = objects.iter().filter(|o| o["type"] == "diagnostic").collect();
    assert_eq!(diagnostics.len(), 1, "{}", run.stdout);
    let diagnostic = diagnostics[0];
    assert_eq!(diagnostic["severity"], "error");
    assert_eq!(diagnostic["file"], "shaders/unlit.frag");
    assert_eq!(diagnostic["line"], line as u64);
    assert_eq!(diagnostic["message"], "'typo_here' : undeclared identifier");
    assert_eq!(diagnostic["artifacts"].as_array().map(Vec::len), Some(18));
    assert_eq!(diagnostic["compilers"].as_array().map(Vec::len), Some(3));
    let summary = objects.last().unwrap();
    assert_eq!(summary["type"], "summary", "the summary comes last");
    assert_eq!((summary["failed"].as_u64(), summary["errors"].as_u64()), (Some(18), Some(1)), "{summary}");
    assert_eq!(summary["success"], false);
}

#[test]
fn an_error_in_a_nested_include_shows_its_line_and_the_include_chain_on_the_driver_and_spirv_paths() {
    let dir = materials_copy("diagnostics-include");
    let include = dir.join("shaders/include");
    std::fs::write(include.join("middle.glsl"), "// reads the broken one\n#include \"broken.glsl\"\n").unwrap();
    std::fs::write(include.join("broken.glsl"), "float broken() {\n    return missing_thing;\n}\n").unwrap();
    let at = edit_unlit(&dir, "#include \"pattern.glsl\"", "#include \"middle.glsl\"\n#include \"pattern.glsl\"");
    for target in ["gl-glsl", "vk-spirv"] {
        let run = build(&dir, &["--target", target, "--program", "unlit"]);
        assert_eq!(run.code, Some(1), "{}", run.stderr);
        assert_eq!(report_headers(&run.stderr).len(), 1, "{target}: one report\n{}", run.stderr);
        assert!(run.stderr.contains("shaders/include/broken.glsl:2:12"), "{target}: {}", run.stderr);
        assert!(run.stderr.contains("2 |     return missing_thing;"), "{target}: {}", run.stderr);
        let chain = format!(
            "= note: included from shaders/include/middle.glsl:2\n  = note: included from shaders/unlit.frag:{at}\n"
        );
        assert!(run.stderr.contains(&chain), "{target}: the chain, innermost first\n{}", run.stderr);
        assert!(run.stderr.contains(&format!("in 6 artifacts: unlit × 6 variants × {target}")), "{}", run.stderr);

        let run = build(&dir, &["--target", target, "--program", "unlit", "--message-format", "json"]);
        let objects = json_lines(&run.stdout);
        let chain: Vec<(String, u64)> = objects[0]["included_from"]
            .as_array()
            .unwrap()
            .iter()
            .map(|site| (site["file"].as_str().unwrap().to_owned(), site["line"].as_u64().unwrap()))
            .collect();
        assert_eq!(
            chain,
            [("shaders/include/middle.glsl".to_owned(), 2), ("shaders/unlit.frag".to_owned(), at as u64)],
            "{target}"
        );
    }
}

#[test]
fn a_thousand_artifacts_with_one_broken_include_print_under_15_lines_of_errors() {
    let dir = temp_dir("diagnostics-thousand");
    std::fs::create_dir_all(dir.join("shaders")).unwrap();
    std::fs::write(dir.join("shaders/shared.glsl"), "vec4 shade() { return vec4(broken_value); }\n").unwrap();
    std::fs::write(dir.join("shaders/quad.vert"), "#version 450\nvoid main() { gl_Position = vec4(0.0); }\n").unwrap();
    std::fs::write(
        dir.join("shaders/shade.frag"),
        "#version 450\n#include \"shared.glsl\"\nlayout(location = 0) out vec4 o;\nvoid main() { o = shade() * float(A + B + C); }\n",
    )
    .unwrap();
    let mut manifest = String::from("store = \"store\"\n");
    for axis in ["A", "B", "C"] {
        manifest.push_str(&format!("\n[[axis]]\nname = \"{axis}\"\nkind = \"int\"\nrange = [0, 9]\n"));
    }
    manifest.push_str(
        "\n[[program]]\nname = \"shade\"\naxes = [\"A\", \"B\", \"C\"]\ntargets = [\"vk-spirv\"]\nstages = [\n\
         { stage = \"vertex\", file = \"shaders/quad.vert\" },\n{ stage = \"fragment\", file = \"shaders/shade.frag\" },\n]\n",
    );
    std::fs::write(dir.join("xr.toml"), manifest).unwrap();
    let run = build(&dir, &["-q"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("0 built, 0 fetched, 0 reused, 1000 failed (1 distinct error)"), "{}", run.stderr);
    let lines = run.stdout.lines().count() + run.stderr.lines().count();
    assert!(lines < 15, "{lines} lines for one mistake:\n{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("in 1000 artifacts: shade × 1000 variants × vk-spirv"), "{}", run.stderr);
}

#[test]
fn warnings_are_reported_once_and_counted() {
    let dir = materials_copy("diagnostics-warning");
    edit_unlit(&dir, "#version 450 core", "#version 450 core\n#extension GL_EXT_no_such_thing : warn");
    let run = build(&dir, &["--program", "unlit"]);
    assert_eq!(run.code, Some(0), "warnings do not fail a build\n{}", run.stderr);
    assert_eq!(
        report_headers(&run.stderr),
        ["warning: '#extension' : extension not supported: GL_EXT_no_such_thing"],
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("18 with warnings (1 distinct)"), "{}", run.stderr);
}

#[test]
fn xr_compile_says_its_one_error_once_and_as_json() {
    let dir = temp_dir("diagnostics-compile");
    let broken = dir.join("broken.frag");
    std::fs::write(&broken, "#version 450\nlayout(location = 0) out vec4 o;\nvoid main() { o = vec4(nope); }\n")
        .unwrap();
    let file = broken.to_str().unwrap();
    let out = dir.join("x.spv");
    let run = Xr::new(["compile", file, "--target", "vk-spirv", "-o", out.to_str().unwrap()]).run();
    assert_eq!(run.code, Some(1));
    assert_eq!(run.stderr.matches("'nope' : undeclared identifier").count(), 1, "once:\n{}", run.stderr);
    assert!(run.stderr.contains(&format!("--> {file}:3:24")), "{}", run.stderr);

    let run =
        Xr::new(["compile", file, "--target", "vk-spirv", "-o", out.to_str().unwrap(), "--message-format", "json"])
            .run();
    assert_eq!(run.code, Some(1));
    let objects = json_lines(&run.stdout);
    assert_eq!(objects.len(), 2, "one diagnostic and the summary: {}", run.stdout);
    assert_eq!((objects[0]["file"].as_str(), objects[0]["line"].as_u64()), (Some(file), Some(3)));
    assert_eq!(objects[0]["compilers"][0], "xr-compiler-vk-spirv");
    assert_eq!((objects[1]["type"].as_str(), objects[1]["success"].as_bool()), (Some("summary"), Some(false)));
    assert!(!out.exists(), "nothing written on failure");

    std::fs::write(&broken, "#version 450\nlayout(location = 0) out vec4 o;\nvoid main() { o = vec4(1.0); }\n")
        .unwrap();
    let run =
        Xr::new(["compile", file, "--target", "vk-spirv", "-o", out.to_str().unwrap(), "--message-format", "json"])
            .run();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let objects = json_lines(&run.stdout);
    assert_eq!((objects.len(), objects[0]["success"].as_bool()), (1, Some(true)), "{}", run.stdout);

    // `xr reflect --json` keeps to one object per line: the reflection, then the summary.
    let run = Xr::new(["reflect", file, "--target", "vk-spirv", "--json", "--message-format", "json"]).run();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let objects = json_lines(&run.stdout);
    assert_eq!(objects.len(), 2, "{}", run.stdout);
    assert_eq!((objects[0]["type"].as_str(), objects[1]["type"].as_str()), (Some("reflection"), Some("summary")));
    assert_eq!(objects[0]["target"], "vk-spirv");
}

#[test]
fn exit_statuses_say_done_failed_or_misused() {
    let dir = materials_copy("diagnostics-exit");
    assert_eq!(build(&dir, &["-q", "--program", "unlit"]).code, Some(0));
    assert_eq!(Xr::new(["build", "--no-such-flag"]).dir(&dir).run().code, Some(2), "clap's own usage errors");
    assert_eq!(build(&dir, &["--target", "dx12"]).code, Some(2));
    let run = Xr::new(["compile", "a.frag", "--option", "novalue", "-o", "x.spv"]).dir(&dir).run();
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    let unlit = dir.join("shaders/unlit.frag");
    std::fs::write(&unlit, "not glsl\n").unwrap();
    assert_eq!(build(&dir, &["-q", "--program", "unlit"]).code, Some(1));
}

#[cfg(unix)]
#[test]
fn a_reader_that_stops_reading_ends_xr_quietly() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    // `xr plugins | head -0`: the pipe is closed before xr writes to it.
    let mut child = Xr::new(["plugins"]).command().stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "{stderr}");
    assert_eq!(output.status.signal(), Some(libc_sigpipe()), "ended by SIGPIPE, as `cat` is: {:?}", output.status);
}

/// SIGPIPE's number on Linux and the BSDs.
#[cfg(unix)]
fn libc_sigpipe() -> i32 {
    13
}
