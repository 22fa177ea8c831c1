//! `xr` follows cargo's and rustc's conventions: what is for a person
//! (diagnostics, progress, the summary) on stderr and only what was asked
//! for on stdout; `--color`, `CLICOLOR_FORCE`, `NO_COLOR` and `TERM=dumb`
//! decide colour; `-q`, `-v` and `-vv` on every command; tracing's
//! warnings read like the other diagnostics; and a reader that stops
//! reading is no crash.

use std::{
    io::Read,
    os::fd::{FromRawFd, OwnedFd},
    path::Path,
    process::Stdio,
};
use xr_tests::{Xr, XrRun, materials_copy, temp_dir};

/// `xr ARGS…` in `dir` with none of the colour variables of the test's own
/// environment.
fn xr(dir: &Path, args: &[&str]) -> Xr {
    Xr::new(args).dir(dir).env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE").env_remove("XR_LOG").env("TERM", "xterm")
}

const ESCAPE: char = '\u{1b}';

/// Runs `xr` with stderr on a pseudo-terminal: what it wrote there.
fn on_a_terminal(xr: Xr) -> String {
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty writes the two descriptors; no name, termios or size.
    let opened =
        unsafe { libc::openpty(&mut master, &mut slave, std::ptr::null_mut(), std::ptr::null(), std::ptr::null()) };
    assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors are fresh and owned here alone.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut command = xr.command();
    command.stdout(Stdio::null()).stderr(Stdio::from(slave));
    let mut child = command.spawn().expect("xr starts");
    drop(command); // the terminal's last copy here: reads end once xr has
    child.wait().unwrap();
    let mut said = Vec::new();
    // Linux answers EIO once the other end is closed and read empty.
    let _ = std::fs::File::from(master).read_to_end(&mut said);
    String::from_utf8_lossy(&said).into_owned()
}

#[test]
fn build_says_everything_on_stderr_and_json_alone_on_stdout() {
    let dir = materials_copy("conventions-streams");
    let unlit = dir.join("shaders/unlit.frag");
    let text = std::fs::read_to_string(&unlit).unwrap();
    std::fs::write(&unlit, text.replacen("void main() {", "void main() {\n    typo_here;", 1)).unwrap();

    let run = xr(&dir, &["build", "-m", "xr.toml", "--program", "unlit"]).run();
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    assert_eq!(run.stdout, "", "nothing was asked to be printed");
    assert!(run.stderr.contains("error: 'typo_here' : undeclared identifier"), "{}", run.stderr);
    assert!(run.stderr.lines().any(|l| l.starts_with("xr build: 0 built")), "the summary: {}", run.stderr);

    let run = xr(&dir, &["build", "-m", "xr.toml", "--program", "unlit", "--message-format", "json"]).run();
    assert_eq!(run.code, Some(1));
    let objects: Vec<serde_json::Value> =
        run.stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    assert_eq!(objects.last().unwrap()["type"], "summary", "{}", run.stdout);
    assert!(!run.stderr.contains('{') && !run.stderr.contains("xr build:"), "no JSON, no summary: {}", run.stderr);

    let run = xr(&dir, &["store", "gc", "-m", "xr.toml", "--dry-run"]).ok();
    assert_eq!(run.stdout, "", "{}", run.stderr);
    assert!(run.stderr.contains("xr store gc: "), "{}", run.stderr);
    let run = xr(&dir, &["store", "verify", "--store", "store"]).ok();
    assert_eq!(run.stdout, "", "{}", run.stderr);
    assert!(run.stderr.contains("xr store verify: "), "{}", run.stderr);
    // Bindings asked into a file: nothing on stdout, which would otherwise hold them.
    xr(&dir, &["build", "-q", "-m", "xr.toml", "--program", "lit"]).ok();
    let run = xr(&dir, &["bindgen", "-m", "xr.toml", "--program", "lit", "-o", "lit.rs"]).ok();
    assert_eq!(run.stdout, "", "{}", run.stderr);
    let code = std::fs::read_to_string(dir.join("lit.rs")).expect("the bindings' file");
    assert!(code.contains("pub mod lit"), "{code}");
}

#[test]
fn colour_comes_from_the_flag_then_clicolor_force_then_no_color_then_the_terminal() {
    let dir = temp_dir("conventions-colour");
    // A manifest that is not there: one error report, rendered, and nothing built.
    let said = |args: &[&str], env: &[(&str, &str)]| {
        let mut run = xr(&dir, &[&["build", "-m", "missing.toml"], args].concat());
        for (name, value) in env {
            run = run.env(name, value);
        }
        let run: XrRun = run.run();
        assert_eq!(run.code, Some(2), "{}", run.stderr);
        assert!(run.stderr.contains("cannot read the manifest"), "{}", run.stderr);
        run.stderr
    };
    let coloured = |text: String| text.contains(ESCAPE);
    assert!(!coloured(said(&[], &[])), "no colour into a pipe");
    assert!(coloured(said(&[], &[("CLICOLOR_FORCE", "1")])), "CLICOLOR_FORCE colours a pipe");
    assert!(!coloured(said(&[], &[("CLICOLOR_FORCE", "0")])), "CLICOLOR_FORCE=0 forces nothing");
    assert!(coloured(said(&[], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")])), "CLICOLOR_FORCE before NO_COLOR");
    assert!(coloured(said(&["--color", "auto"], &[("CLICOLOR_FORCE", "1")])));
    assert!(!coloured(said(&["--color", "never"], &[("CLICOLOR_FORCE", "1")])), "--color never wins");
    assert!(coloured(said(&["--color", "always"], &[("NO_COLOR", "1")])), "--color always wins");
    // An error said by main, not by the diagnostics' renderer.
    let run = xr(&dir, &["store", "verify", "--store", "nowhere", "--color", "always"]).run();
    assert!(run.stderr.starts_with(&format!("{ESCAPE}[1m{ESCAPE}[91merror")), "{:?}", run.stderr);

    let terminal = |env: &[(&str, &str)], args: &[&str]| {
        let mut run = xr(&dir, &[&["build", "-m", "missing.toml"], args].concat());
        for (name, value) in env {
            run = run.env(name, value);
        }
        let text = on_a_terminal(run);
        assert!(text.contains("cannot read the manifest"), "{text}");
        text
    };
    assert!(coloured(terminal(&[], &[])), "colour on a terminal");
    assert!(!coloured(terminal(&[("NO_COLOR", "1")], &[])), "NO_COLOR");
    assert!(coloured(terminal(&[("NO_COLOR", "")], &[])), "an empty NO_COLOR is not set");
    assert!(!coloured(terminal(&[("TERM", "dumb")], &[])), "TERM=dumb");
    assert!(!coloured(terminal(&[], &["--color", "never"])), "--color never");
}

#[cfg(unix)]
#[test]
fn a_reader_that_stops_reading_reflect_is_no_crash() {
    let shaders = xr_tests::workspace_root().join("samples/materials/shaders");
    let (vert, frag, include) = (shaders.join("quad.vert"), shaders.join("unlit.frag"), shaders.join("include"));
    let args = ["reflect", "-I", include.to_str().unwrap(), vert.to_str().unwrap(), frag.to_str().unwrap()];
    let dir = temp_dir("conventions-pipe");
    let whole = xr(&dir, &args).env_remove("XR_IN_PROCESS").ok();
    assert!(whole.stdout.lines().count() > 1, "{}", whole.stdout);
    // `xr reflect a.vert a.frag | head -1`, where head is gone before xr
    // writes: closed before the compile ends, so that the child's first
    // write meets the closed pipe (read first, it could write it all
    // into the pipe's buffer before the close).
    let mut command = xr(&dir, &args).env_remove("XR_IN_PROCESS").command();
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "a reader that stopped: {:?}\n{stderr}", output.status);
    assert_eq!(stderr, "", "nothing said");
}

#[test]
fn quiet_and_verbose_are_flags_of_every_command() {
    let dir = temp_dir("conventions-verbosity");
    xr_store::Store::open(dir.join("store")).unwrap();
    let source = dir.join("a.frag");
    std::fs::write(&source, "#version 450\nlayout(location = 0) out vec4 o;\nvoid main() { o = vec4(1.0); }\n")
        .unwrap();
    let source = source.to_str().unwrap();
    let spv = dir.join("a.spv");
    let commands: [&[&str]; 7] = [
        &["plugins"],
        &["store", "verify", "--store", "store"],
        &["compile", source, "--target", "vk-spirv", "-o", spv.to_str().unwrap()],
        &["reflect", source, "--target", "vk-spirv"],
        &["completions", "bash"],
        &["manpage"],
        &["--version"],
    ];
    for command in commands {
        for flag in ["-q", "-v", "-vv"] {
            let run = xr(&dir, &[command, &[flag]].concat()).software_device().run();
            assert!(run.ok, "{command:?} {flag}: {}", run.stderr);
        }
    }
    let run = xr(&dir, &["plugins", "-q", "-v"]).run();
    assert_eq!(run.code, Some(2), "-q and -v contradict each other: {}", run.stderr);
}

#[test]
fn quiet_leaves_errors_and_the_summary_and_very_verbose_adds_tracing_info() {
    let dir = materials_copy("conventions-quiet");
    let unlit = dir.join("shaders/unlit.frag");
    let text = std::fs::read_to_string(&unlit).unwrap();
    let warned = text.replacen("#version 450 core", "#version 450 core\n#extension GL_EXT_no_such_thing : warn", 1);
    std::fs::write(&unlit, warned).unwrap();
    let build = |flag: &str| xr(&dir, &["build", "-m", "xr.toml", "--program", "unlit", flag]).ok();

    let quiet = build("-q");
    assert_eq!(quiet.stdout, "");
    assert!(!quiet.stderr.contains("warning: '#extension'"), "-q: no warnings: {}", quiet.stderr);
    assert!(!quiet.stderr.contains("[18/18]"), "-q: no progress: {}", quiet.stderr);
    let summary: Vec<&str> = quiet.stderr.lines().collect();
    assert_eq!(summary.len(), 1, "only the summary: {}", quiet.stderr);
    assert!(summary[0].starts_with("xr build: 18 built"), "{}", quiet.stderr);

    std::fs::write(&unlit, text.replacen("#version 450 core", "#version 450 core\n#extension GL_EXT_other : warn", 1))
        .unwrap();
    let verbose = build("-v");
    assert!(
        verbose.stderr.contains("warning: '#extension' : extension not supported: GL_EXT_other"),
        "{}",
        verbose.stderr
    );
    assert!(verbose.stderr.contains("reported by"), "-v names the compilers: {}", verbose.stderr);
    let very = build("-vv");
    assert!(very.stderr.contains("info: nothing changed since the last build"), "-vv: {}", very.stderr);
    assert!(!very.stderr.contains(" INFO "), "in the diagnostics' form: {}", very.stderr);
}

#[test]
fn a_tracing_warning_reads_warning_colon_and_xr_log_keeps_tracing_s_own_form() {
    // A remote on a port nothing listens on: one warning, then a local build.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let remote = format!("http://127.0.0.1:{port}/");
    let dir = materials_copy("conventions-tracing");
    let build = |env: &[(&str, &str)]| {
        std::fs::remove_dir_all(dir.join("store")).ok();
        let mut run = xr(&dir, &["build", "-m", "xr.toml", "--program", "unlit", "-q", "--remote", &remote]);
        for (name, value) in env {
            run = run.env(name, value);
        }
        run.ok().stderr
    };
    let stderr = build(&[]);
    let warnings: Vec<&str> =
        stderr.lines().filter(|l| l.contains(&format!("remote cache http://127.0.0.1:{port}"))).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(warnings[0].starts_with("warning: remote cache "), "no time, level or target: {stderr}");
    assert!(!stderr.contains(" WARN ") && !stderr.contains("xr_remote"), "{stderr}");

    let coloured = build(&[("CLICOLOR_FORCE", "1")]);
    assert!(coloured.contains(&format!("{ESCAPE}[1m{ESCAPE}[33mwarning{ESCAPE}[0m")), "{coloured:?}");

    let raw = build(&[("XR_LOG", "warn")]);
    assert!(raw.lines().any(|l| l.contains(" WARN ") && l.contains("remote cache")), "tracing's own form: {raw}");
}
