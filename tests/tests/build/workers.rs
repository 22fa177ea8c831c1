//! Compilers that crash: `xr build` compiles in worker processes, so a
//! segmentation fault, an abort, a stack overflow, an endless loop or an
//! allocation without bound fails its own artifacts and nothing else; a
//! worker killed from outside costs its job a retry; `xr compile` and
//! `xr reflect` report a crash of their child instead of dying with it.
//!
//! The compiler is `xr-fixture-crash` (language `crashlang`, target
//! `fixture-crash`), which dies the way the enum axis `CRASH` says.

use std::time::Duration;
use xr_tests::{Xr, materials_copy, plugin_dir_with};

/// The materials sample plus a program of the crashing compiler, one
/// variant per way to die.
fn materials_with_crashes(label: &str) -> xr_tests::TestDir {
    let dir = materials_copy(label);
    add_crash_program(&dir, &["none", "segv", "abort", "stack", "loop", "oom"]);
    dir
}

/// Adds to the manifest in `dir` the program `crashy` of the crashing
/// compiler, one variant per way to die in `ways` (its axis `CRASH`).
pub(crate) fn add_crash_program(dir: &std::path::Path, ways: &[&str]) {
    std::fs::write(dir.join("a.crash"), "the crash fixture copies this text\n").unwrap();
    let mut manifest = std::fs::read_to_string(dir.join("xr.toml")).unwrap();
    let values: Vec<String> = ways.iter().map(|w| format!("{w:?}")).collect();
    manifest.push_str(&format!(
        r#"
[[axis]]
name = "CRASH"
kind = "enum"
values = [{}]

[[program]]
name = "crashy"
axes = ["CRASH"]
targets = ["fixture-crash"]
compile_timeout = 2
stages = [{{ stage = "vertex", file = "a.crash" }}]
"#,
        values.join(", ")
    ));
    std::fs::write(dir.join("xr.toml"), manifest).unwrap();
}

/// Every JSON line `xr … --message-format json` printed: (diagnostics, summary).
fn json_lines(stdout: &str) -> (Vec<serde_json::Value>, serde_json::Value) {
    let lines: Vec<serde_json::Value> =
        stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    let (summary, diagnostics) = lines.split_last().expect("a summary line");
    assert_eq!(summary["type"], "summary", "{stdout}");
    (diagnostics.to_vec(), summary.clone())
}

/// The one diagnostic naming `variant`, and its message.
fn message_of<'a>(diagnostics: &'a [serde_json::Value], variant: &str) -> &'a str {
    let struck: Vec<&serde_json::Value> = diagnostics
        .iter()
        .filter(|d| d["artifacts"].as_array().unwrap().iter().any(|a| a["variant"] == variant))
        .collect();
    assert_eq!(struck.len(), 1, "one report for {variant}: {diagnostics:#?}");
    struck[0]["message"].as_str().unwrap()
}

#[test]
fn each_way_a_compiler_dies_fails_only_its_own_artifacts_and_the_next_build_retries_only_those() {
    let dir = materials_with_crashes("workers-crash");
    let plugins = plugin_dir_with("workers-crash-plugins", &["xr-fixture-crash"]);
    let build = || {
        Xr::new(["build", "-m", "xr.toml", "--worker-memory", "256", "--message-format", "json"])
            .dir(&dir)
            .plugins(&plugins)
            .run()
    };
    let first = build();
    assert_eq!(first.code, Some(1), "one failure is exit status 1, not a signal:\n{}\n{}", first.stdout, first.stderr);
    let (diagnostics, summary) = json_lines(&first.stdout);
    for (variant, expected) in [
        ("crashy[CRASH=segv]", "compiler crashed: SIGSEGV while compiling for fixture-crash"),
        ("crashy[CRASH=abort]", "compiler crashed: SIGABRT while compiling for fixture-crash"),
        ("crashy[CRASH=stack]", "has overflowed its stack"),
        ("crashy[CRASH=loop]", "compiler ran past its time limit of 2 s while compiling for fixture-crash"),
        ("crashy[CRASH=oom]", "out of memory (the worker memory limit is 256 MiB)"),
    ] {
        let message = message_of(&diagnostics, variant);
        assert!(message.contains(expected), "{variant}: {message}");
    }
    let total = summary["built"].as_u64().unwrap() + summary["failed"].as_u64().unwrap();
    assert_eq!(summary["failed"], 5, "{summary}");
    assert!(summary["built"].as_u64().unwrap() > 100, "every other artifact landed: {summary}");
    assert!(summary["workers"].as_u64().unwrap() >= 2 + 4, "crashed workers were replaced: {summary}");
    Xr::new(["store", "verify", "--store", "store"]).dir(&dir).ok();

    let second = build();
    assert_eq!(second.code, Some(1));
    let (_, again) = json_lines(&second.stdout);
    assert_eq!(again["built"], 0, "the journal kept every artifact that landed: {again}");
    assert_eq!(again["failed"], 5, "and the failed ones were tried again: {again}");
    assert_eq!(again["reused"].as_u64().unwrap() + 5, total);
}

#[test]
fn compiling_in_process_is_what_the_workers_protect_the_build_from() {
    let dir = materials_with_crashes("workers-in-process");
    let plugins = plugin_dir_with("workers-in-process-plugins", &["xr-fixture-crash"]);
    let run = Xr::new(["build", "-m", "xr.toml", "-q", "--in-process", "--program", "crashy"])
        .dir(&dir)
        .plugins(&plugins)
        .run();
    assert_eq!(run.code, None, "a native crash in process ends xr by a signal:\n{}\n{}", run.stdout, run.stderr);
}

#[test]
fn no_worker_starts_when_nothing_is_to_be_built() {
    let dir = materials_copy("workers-noop");
    let build = || Xr::new(["build", "-m", "xr.toml", "--message-format", "json"]).dir(&dir).ok();
    let (_, cold) = json_lines(&build().stdout);
    assert!(cold["workers"].as_u64().unwrap() >= 1, "{cold}");
    // Without the build stamp (which answers a no-op without loading a
    // plugin) the build takes the ordinary path, and the journal answers.
    std::fs::remove_file(dir.join("store/last-build.json")).unwrap();
    let (_, warm) = json_lines(&build().stdout);
    assert_eq!((warm["built"].as_u64(), warm["reused"].as_u64()), (Some(0), cold["built"].as_u64()), "{warm}");
    assert_eq!(warm["workers"], 0, "nothing to compile, no worker: {warm}");
}

/// The pids of `parent`'s children whose command line has `word`.
fn children_with(parent: u32, word: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // `pid (comm) state ppid …`: the command may hold spaces, so after the last ')'.
        let ppid = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1));
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let has_word = cmdline.split(|&b| b == 0).any(|arg| arg == word.as_bytes());
        if ppid == Some(&parent.to_string()) && has_word {
            pids.push(pid);
        }
    }
    pids
}

fn signal(pid: u32, signal: i32) {
    // SAFETY: kill has no memory effects; `pid` is a worker this test started (through xr).
    assert_eq!(unsafe { libc::kill(pid as i32, signal) }, 0, "signal {signal} to {pid}");
}

/// Waits for a worker of `build` other than `not`, and returns it.
fn a_worker_of(build: u32, not: &[u32]) -> u32 {
    for _ in 0..1000 {
        if let Some(pid) = children_with(build, "worker").into_iter().find(|p| !not.contains(p)) {
            return pid;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no worker of {build} appeared");
}

#[test]
fn a_worker_killed_from_outside_costs_its_job_a_retry_and_the_build_finishes() {
    let dir = xr_tests::temp_dir("workers-killed");
    std::fs::write(dir.join("a.crash"), "slow\n").unwrap();
    std::fs::write(
        dir.join("xr.toml"),
        r#"
[[axis]]
name = "SLEEP_MS"
kind = "int"
range = [300, 311]

[[program]]
name = "slow"
axes = ["SLEEP_MS"]
targets = ["fixture-crash"]
stages = [{ stage = "vertex", file = "a.crash" }]
"#,
    )
    .unwrap();
    let plugins = plugin_dir_with("workers-killed-plugins", &["xr-fixture-crash"]);
    let mut command = Xr::new(["build", "-m", "xr.toml", "-j", "2", "--message-format", "json"])
        .dir(&dir)
        .plugins(&plugins)
        .command();
    let child = command.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let first = a_worker_of(child.id(), &[]);
    std::thread::sleep(Duration::from_millis(150));
    signal(first, libc::SIGKILL);
    let second = a_worker_of(child.id(), &[first]);
    std::thread::sleep(Duration::from_millis(150));
    signal(second, libc::SIGSEGV);
    let output = child.wait_with_output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let (diagnostics, summary) = json_lines(&stdout);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert_eq!(summary["built"], 12, "{summary}");
    assert!(summary["workers"].as_u64().unwrap() >= 3, "a killed worker was replaced: {summary}");
    Xr::new(["store", "verify", "--store", "target/xr-store"]).dir(&dir).ok();
}

#[test]
fn xr_compile_and_xr_reflect_report_a_crash_in_their_child_with_status_1() {
    let dir = xr_tests::temp_dir("workers-compile");
    std::fs::write(dir.join("a.crash"), "text\n").unwrap();
    let plugins = plugin_dir_with("workers-compile-plugins", &["xr-fixture-crash"]);
    let compile = |extra: &[&str]| {
        let mut args = vec!["compile", "a.crash", "--stage", "vertex", "--target", "fixture-crash", "-o", "a.out"];
        args.extend_from_slice(extra);
        Xr::new(args).dir(&dir).plugins(&plugins).run()
    };
    let fine = compile(&[]);
    assert!(fine.ok, "{}", fine.stderr);
    assert_eq!(std::fs::read_to_string(dir.join("a.out")).unwrap(), "text\n");

    let crashed = compile(&["-D", "CRASH_SEGV=1"]);
    assert_eq!(crashed.code, Some(1), "{}\n{}", crashed.stdout, crashed.stderr);
    assert!(
        crashed.stderr.contains("xr compile crashed: SIGSEGV in a compiler or a driver while building a.crash"),
        "{}",
        crashed.stderr
    );
    let in_process = compile(&["-D", "CRASH_SEGV=1", "--in-process"]);
    assert_eq!(in_process.code, None, "--in-process dies with the compiler: {}", in_process.stderr);

    let reflected = Xr::new([
        "reflect",
        "a.crash",
        "--stage",
        "vertex",
        "--target",
        "fixture-crash",
        "-D",
        "CRASH_ABORT=1",
        "--message-format",
        "json",
    ])
    .dir(&dir)
    .plugins(&plugins)
    .run();
    assert_eq!(reflected.code, Some(1), "{}", reflected.stderr);
    let (diagnostics, summary) = json_lines(&reflected.stdout);
    assert_eq!(summary["success"], false);
    assert!(diagnostics[0]["message"].as_str().unwrap().starts_with("xr reflect crashed: SIGABRT"), "{diagnostics:?}");
}

/// A compiler that dies preprocessing a guarded source dies in a worker,
/// as a build's compiles do: that program's guarded sources fail, named,
/// the others are written, and `xr build` ends with an error, never a
/// signal (the crashing variant builds for the store; only the whole
/// compile that preprocesses it aborts).
#[test]
fn a_compiler_that_dies_preprocessing_a_guarded_source_fails_that_program_alone() {
    let dir = materials_copy("workers-guarded-crash");
    add_crash_program(&dir, &["none", "whole"]);
    let plugins = plugin_dir_with("workers-guarded-crash-plugins", &["xr-fixture-crash"]);
    let run = Xr::new(["build", "-m", "xr.toml", "--target", "gl-glsl", "--target", "fixture-crash"])
        .args(["--emit", "guarded", "--emit-dir", "guarded"])
        .dir(&dir)
        .plugins(&plugins)
        .run();
    assert_eq!(run.code, Some(1), "an error, not a signal:\n{}\n{}", run.stdout, run.stderr);
    let failed = run.stderr.lines().find(|l| l.contains("guarded sources of 'crashy'")).unwrap_or_else(|| {
        panic!("the crashing program's guarded sources are one error:\n{}", run.stderr);
    });
    assert!(failed.contains("crashy[CRASH=whole]") && failed.contains("SIGABRT"), "{failed}");
    for stage in ["vertex", "fragment"] {
        assert!(dir.join(format!("guarded/lit.{stage}.glsl")).is_file(), "lit's {stage} stage: {}", run.stderr);
    }
    assert!(!dir.join("guarded/crashy.vertex.crashlang").exists());
}

/// The same for bindings: a compiler that dies reflecting an object for
/// `xr bindgen` fails that reflection, named, in its worker; in process
/// (`--in-process`, a debugger's way) it takes `xr` down with it.
#[test]
fn a_compiler_that_dies_reflecting_for_bindings_fails_the_bindings_with_an_error() {
    let dir = materials_copy("workers-bindgen-crash");
    add_crash_program(&dir, &["none", "whole"]);
    let plugins = plugin_dir_with("workers-bindgen-crash-plugins", &["xr-fixture-crash"]);
    Xr::new(["build", "-m", "xr.toml", "-q", "--program", "crashy"]).dir(&dir).plugins(&plugins).ok();
    let bindgen = |extra: &[&str]| {
        Xr::new(["bindgen", "-m", "xr.toml", "--program", "crashy", "-o", "bindings.rs"])
            .args(extra)
            .dir(&dir)
            .plugins(&plugins)
            .run()
    };
    let run = bindgen(&[]);
    assert_eq!(run.code, Some(1), "an error, not a signal:\n{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("crashy[CRASH=whole]") && run.stderr.contains("SIGABRT"), "{}", run.stderr);
    assert!(!dir.join("bindings.rs").exists(), "no bindings of a program whose reflection failed");
    let in_process = bindgen(&["--in-process"]);
    assert_eq!(in_process.code, None, "in process, the crash ends xr:\n{}", in_process.stderr);
}
