//! Compiles on a farm: PostgreSQL, BuildGrid (a Remote Execution API
//! server) and `xr-bot` workers on 127.0.0.1, started by
//! `scripts/remote-exec.sh` as a team would start them. Builds through the
//! farm make the objects and catalogs a local build makes; a second store
//! is built from the farm's action cache; a bot killed and the server
//! stopped in the middle of a build cost time, never an artifact.
//!
//! The slowest tests of the suite (11–35 s each, docs/TESTING.md "How long
//! the suite takes"), and on purpose: each starts a farm of its own (6 s up,
//! 2 s down): one farm's action cache would answer a test with another's
//! results where it asserts compiles executed, one test kills a bot and
//! stops the server, and others count their bots' leases and worker starts.
//! The builds through it are whole samples, each action a round trip
//! through BuildGrid (about 70 ms of its CPU).

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};
use xr_tests::{TestDir, Xr, executable, materials_full_copy, spawn_captured, temp_dir, workspace_root, xr_build};

/// A farm for one test, taken down when the test ends (passed or not).
struct Farm {
    dir: TestDir,
    url: String,
}

impl Farm {
    fn up(bots: usize) -> Self {
        let dir = temp_dir("farm");
        // As `mktemp -d` makes it: run as root, the farm's PostgreSQL (user
        // `postgres`) cannot enter it, and the script must place it elsewhere.
        std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .expect("the farm's directory made private");
        let output = Command::new(workspace_root().join("scripts/remote-exec.sh"))
            .args(["up", dir.to_str().expect("utf-8 temp dir"), "--bots", &bots.to_string()])
            .env("XR_BOT", executable("xr-bot"))
            .output()
            .expect("scripts/remote-exec.sh runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let farm = Self { url: stdout.lines().last().unwrap_or_default().trim().to_owned(), dir };
        assert!(
            output.status.success() && farm.url.starts_with("grpc://127.0.0.1:"),
            "the farm did not start:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        farm
    }

    fn pid(&self, name: &str) -> i32 {
        let file = self.dir.join(format!("{name}.pid"));
        std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
            .trim()
            .parse()
            .expect("a pid")
    }

    fn kill(&self, name: &str) {
        // SAFETY: kill(2) on a process this test started; nothing else is touched.
        assert_eq!(unsafe { libc::kill(self.pid(name), libc::SIGKILL) }, 0, "kill {name}");
    }

    /// Leases the bots have finished, by their logs.
    fn leases_done(&self) -> usize {
        let logs = std::fs::read_dir(self.dir.join("logs")).expect("the farm's logs");
        logs.filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("bot-"))
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default().matches(": exit ").count())
            .sum()
    }

    /// Lines of the bots' logs that contain `text`.
    fn bot_log_lines(&self, text: &str) -> usize {
        let logs = std::fs::read_dir(self.dir.join("logs")).expect("the farm's logs");
        logs.filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("bot-"))
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default().lines().filter(|l| l.contains(text)).count())
            .sum()
    }

    /// Waits until the bots have finished `n` more leases than `before`.
    fn wait_for_leases(&self, before: usize, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(300);
        while self.leases_done() < before + n {
            assert!(
                Instant::now() < deadline,
                "the bots finished no {n} leases in 300 s; logs in {}",
                self.dir.display()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Farm {
    fn drop(&mut self) {
        let _ = Command::new(workspace_root().join("scripts/remote-exec.sh")).arg("down").arg(self.dir.path()).status();
    }
}

/// `xr build` through the farm at `url` in `dir`: its JSON summary.
fn farm_build(dir: &Path, url: &str) -> serde_json::Value {
    let run = Xr::new(["build", "-m", "xr.toml", "--remote-exec", url, "--message-format", "json"]).dir(dir).ok();
    summary_of(&run.stdout)
}

fn summary_of(stdout: &str) -> serde_json::Value {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["type"] == "summary")
        .unwrap_or_else(|| panic!("no summary in:\n{stdout}"))
}

fn count(summary: &serde_json::Value, field: &str) -> u64 {
    summary[field].as_u64().unwrap_or_else(|| panic!("no {field} in {summary}"))
}

/// Every object and catalog of the store in `dir`, by path.
fn store_contents(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let store = dir.join("store");
    let mut files = BTreeMap::new();
    let mut pending = vec![store.join("objects"), store.join("catalog")];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap_or_else(|e| panic!("{}: {e}", next.display())) {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let bytes = std::fs::read(&path).expect("read");
                files.insert(path.strip_prefix(&store).expect("under the store").to_path_buf(), bytes);
            }
        }
    }
    assert!(files.len() > 100, "a materials store holds its objects and catalogs");
    files
}

fn verify(dir: &Path) {
    let run = Xr::new(["store", "verify", "--store", "store"]).dir(dir).ok();
    assert!(
        run.stderr.contains(" 0 corrupt, 0 unfinished writes") && run.stderr.contains(" 0 problems"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_farm_builds_what_a_local_build_makes_and_a_second_store_comes_from_its_action_cache() {
    let farm = Farm::up(2);
    let local = materials_full_copy("farm-local");
    xr_build(&local);
    let remote = materials_full_copy("farm-remote");
    let summary = farm_build(&remote, &farm.url);
    let built = count(&summary, "built");
    assert!(built > 100, "{summary}");
    assert_eq!(count(&summary, "failed"), 0, "{summary}");
    assert_eq!(count(&summary, "remote_executed"), built, "every compile ran on the farm: {summary}");
    assert_eq!(count(&summary, "remote_fallback"), 0, "{summary}");
    assert!(store_contents(&remote) == store_contents(&local), "the farm's objects and catalogs are a local build's");

    let second = materials_full_copy("farm-second");
    let summary = farm_build(&second, &farm.url);
    assert_eq!(count(&summary, "built"), built, "{summary}");
    assert_eq!(count(&summary, "remote_cached"), built, "all from the action cache: {summary}");
    assert_eq!(count(&summary, "remote_executed"), 0, "nothing ran again: {summary}");
    assert!(store_contents(&second) == store_contents(&local));
    verify(&second);
    // And a later local build reuses what the farm made.
    let run = Xr::new(["build", "-m", "xr.toml"]).dir(&second).env("XR_REMOTE_EXEC", "").ok();
    assert!(run.stderr.contains(&format!("0 built, 0 fetched, {built} reused")), "{}", run.stderr);
}

/// A copy of the materials sample whose every compile is a new action.
fn changed_copy(label: &str, mark: &str) -> TestDir {
    let dir = materials_full_copy(label);
    for entry in std::fs::read_dir(dir.join("shaders")).expect("shaders") {
        let path = entry.expect("entry").path();
        if path.is_file() {
            let text = std::fs::read_to_string(&path).expect("a shader");
            std::fs::write(&path, format!("{text}\n// {mark}\n")).expect("write");
        }
    }
    dir
}

#[test]
fn a_bot_killed_and_the_server_stopped_mid_build_cost_time_and_no_artifact() {
    let farm = Farm::up(2);
    let url = farm.url.clone();
    let start = |dir: &Path| {
        spawn_captured(
            // One program (54 artifacts): enough to be mid-build when the farm breaks.
            &mut Xr::new([
                "build",
                "-m",
                "xr.toml",
                "--program",
                "lit",
                "--remote-exec",
                &url,
                "--message-format",
                "json",
            ])
            .dir(dir)
            .command(),
        )
    };

    // A bot dies holding a lease: the server gives it to the other bot
    // once the dead one's session lapses, or the client runs it here.
    let lost_bot = changed_copy("farm-lost-bot", "lost bot");
    let before = farm.leases_done();
    let build = start(&lost_bot);
    farm.wait_for_leases(before, 4);
    farm.kill("bot-0");
    let output = build.wait_with_output().expect("the build ends");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let summary = summary_of(&stdout);
    assert_eq!(count(&summary, "failed"), 0, "{summary}");
    assert!(count(&summary, "remote_executed") >= 4, "{summary}");
    verify(&lost_bot);

    // The server goes away: the actions in flight are retried, then the
    // build gives up on the farm with one warning and compiles the rest here.
    let lost_server = changed_copy("farm-lost-server", "lost server");
    let before = farm.leases_done();
    let build = start(&lost_server);
    farm.wait_for_leases(before, 4);
    farm.kill("server");
    let output = build.wait_with_output().expect("the build ends");
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let summary = summary_of(&stdout);
    assert_eq!(count(&summary, "failed"), 0, "{summary}");
    assert!(count(&summary, "remote_fallback") > 0, "the rest compiled here: {summary}");
    assert_eq!(stderr.matches("compiling the rest here").count(), 1, "one warning: {stderr}");
    verify(&lost_server);
    // What the farm made before it went and what was made here are one
    // store's worth: a local build finds it all up to date.
    let built = count(&summary, "built");
    let run = Xr::new(["build", "-m", "xr.toml", "--program", "lit"]).dir(&lost_server).ok();
    assert!(run.stderr.contains(&format!("0 built, 0 fetched, {built} reused")), "{}", run.stderr);
}

#[test]
fn a_farm_that_does_not_answer_is_one_warning_and_a_local_build() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = listener.local_addr().expect("its address").port();
    drop(listener);
    let dir = xr_tests::materials_copy("farm-nowhere");
    let url = format!("grpc://127.0.0.1:{port}");
    let run = Xr::new(["build", "-m", "xr.toml", "--remote-exec", &url, "--program", "unlit"]).dir(&dir).ok();
    assert_eq!(run.stderr.matches("warning").count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains(&url) && run.stderr.contains("compiling here"), "{}", run.stderr);
    assert!(run.stderr.contains("18 built") && run.stderr.contains("0 failed"), "{}", run.stderr);
    let bad = Xr::new(["build", "-m", "xr.toml", "--remote-exec", "http://farm:1"]).dir(&dir).fails();
    assert!(bad.stderr.contains("grpc://"), "a usage error that says what to write: {}", bad.stderr);
}

#[test]
fn a_compiler_that_dies_on_the_farm_fails_its_own_artifact_with_the_workers_stderr() {
    let farm = Farm::up(2);
    let dir = materials_full_copy("farm-crash");
    crate::workers::add_crash_program(&dir, &["none", "segv", "abort", "loop"]);
    let plugins = xr_tests::plugin_dir_with("farm-crash-plugins", &["xr-fixture-crash"]);
    // Once per action, then in persistent workers: a worker that dies or
    // loops fails the request it holds, and the next action gets a fresh one.
    for persistent in [false, true] {
        let mut xr = Xr::new(["build", "-m", "xr.toml", "--program", "crashy", "--remote-exec", &farm.url]);
        if persistent {
            xr = xr.args(["--remote-persistent-workers"]);
        }
        let run = xr.args(["--message-format", "json"]).dir(&dir).plugins(&plugins).run();
        assert_eq!(run.code, Some(1), "{}\n{}", run.stdout, run.stderr);
        let summary = summary_of(&run.stdout);
        assert_eq!((count(&summary, "built"), count(&summary, "failed")), (1, 3), "persistent {persistent}: {summary}");
        assert_eq!(count(&summary, "remote_executed"), 4, "the failures ran on the farm too: {summary}");
        assert_eq!(count(&summary, "remote_fallback"), 0, "{summary}");
        let diagnostics: Vec<serde_json::Value> = run
            .stdout
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .filter(|v: &serde_json::Value| v["type"] != "summary")
            .collect();
        for (variant, expected) in [
            ("crashy[CRASH=segv]", "signal 11"),
            ("crashy[CRASH=abort]", "signal 6"),
            ("crashy[CRASH=loop]", "time limit"),
        ] {
            let message = diagnostics
                .iter()
                .filter(|d| d["artifacts"].as_array().is_some_and(|a| a.iter().any(|a| a["variant"] == variant)))
                .map(|d| d["message"].as_str().unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n");
            assert!(message.contains("on the farm") && message.contains(expected), "{variant}: {message}");
            if persistent && expected != "time limit" {
                assert!(message.contains("the persistent worker failed the request"), "{variant}: {message}");
            }
        }
        // The store is what the failures left: the one good artifact.
        std::fs::remove_dir_all(dir.join("store")).expect("the store removed for the next round");
    }
}

/// Persistent workers need xr-compile-action: an `xr` without it beside
/// says so before it builds anything.
#[test]
fn persistent_workers_without_xr_compile_action_beside_xr_are_refused_by_name() {
    let alone = temp_dir("farm-xr-alone");
    let xr = alone.join("xr");
    std::fs::hard_link(executable("xr"), &xr).or_else(|_| std::fs::copy(executable("xr"), &xr).map(|_| ())).unwrap();
    let dir = xr_tests::materials_copy("farm-no-compile-action");
    let run = Command::new(&xr)
        .args(["build", "-m", "xr.toml", "--remote-exec", "grpc://127.0.0.1:1", "--remote-persistent-workers"])
        .current_dir(&dir)
        .output()
        .expect("xr runs");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("xr-compile-action beside") && stderr.contains(&*xr.to_string_lossy()), "{stderr}");
    assert!(!dir.join("store").exists(), "nothing was built: {stderr}");
}

#[test]
fn a_result_whose_bytes_do_not_match_their_digest_is_refused_and_run_elsewhere() {
    use xr_remote_exec::{
        Action, Connection, Endpoint, ExecutorConfig, RemoteExecutor, digest, execute::action_digest, proto,
    };
    // No bots: an action the client does not take from the cache cannot run.
    let farm = Farm::up(0);
    let connection =
        Connection::open(&Endpoint::parse(&farm.url).expect("the farm's URL"), "", None, None).expect("a channel");
    let config = ExecutorConfig { retries: 0, grace: Duration::from_secs(1), ..ExecutorConfig::default() };
    let executor = RemoteExecutor::connect(&connection, config).expect("the farm answers");
    let action = Action {
        arguments: vec!["/bin/true".into()],
        outputs: vec!["out".into()],
        timeout: Some(Duration::from_secs(1)),
        ..Action::default()
    };
    let action_digest = action_digest(&action).expect("a digest");
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    let plant = |contents: &[u8]| {
        let _entered = runtime.enter();
        let mut cache = proto::action_cache_client::ActionCacheClient::new(connection.channel());
        let result = proto::ActionResult {
            output_files: vec![proto::OutputFile {
                path: "out".into(),
                digest: Some(digest::of(b"what the action made")),
                contents: contents.to_vec(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let request = proto::UpdateActionResultRequest {
            action_digest: Some(action_digest.clone()),
            action_result: Some(result),
            ..Default::default()
        };
        runtime.block_on(cache.update_action_result(request)).expect("the action cache takes it");
    };
    // The blob the digest names is in the CAS: only the bytes sent inline lie.
    let made = b"what the action made".to_vec();
    let cas = {
        let _entered = runtime.enter();
        xr_remote_exec::cas::Cas::new(&connection)
    };
    runtime.block_on(cas.upload(vec![(digest::of(&made), made)])).expect("the CAS takes the blob");
    plant(b"something else");
    let refused = executor.execute(&action).expect_err("bytes that are not their digest are refused");
    assert!(refused.runs_locally(), "{refused}");
    plant(b"");
    let taken = executor.execute(&action).expect("a result that is what it says is taken");
    assert!(taken.cached);
    assert_eq!(taken.outputs["out"], b"what the action made");
}

/// Appends a comment line to `shaders/toon.frag` in `dir`.
fn edit_toon(dir: &Path) {
    let toon = dir.join("shaders/toon.frag");
    let text = std::fs::read_to_string(&toon).expect("toon.frag");
    std::fs::write(&toon, format!("{text}\n// an edit\n")).expect("write");
}

/// An action carries the files its compile can read (the stage files and
/// what their includes and imports reach), not their directories: after
/// an edit to one shader, a fresh store is built with the farm executing
/// only the compiles that read it, as a local store rebuilds only those,
/// and the rest comes from the action cache.
///
/// Both builds run in persistent workers: one per plugin and bot starts,
/// and each serves many actions.
#[test]
fn after_an_edit_to_one_shader_only_the_compiles_that_read_it_execute_on_the_farm() {
    let farm = Farm::up(2);
    let first = materials_full_copy("farm-before-edit");
    let run = Xr::new(["build", "-m", "xr.toml", "--remote-exec", &farm.url, "--remote-persistent-workers"])
        .args(["--message-format", "json"])
        .dir(&first)
        .ok();
    let summary = summary_of(&run.stdout);
    let built = count(&summary, "built");
    assert_eq!(count(&summary, "remote_executed"), built, "{summary}");

    // What a local store rebuilds for the edit: the compiles that read toon.frag.
    let local = materials_full_copy("farm-edit-local");
    xr_build(&local);
    edit_toon(&local);
    let run = Xr::new(["build", "-m", "xr.toml", "--message-format", "json"]).dir(&local).ok();
    let rebuilt = count(&summary_of(&run.stdout), "built");
    assert!(rebuilt > 0 && rebuilt < built / 2, "the toon programs: {rebuilt} of {built}");

    let edited = materials_full_copy("farm-after-edit");
    edit_toon(&edited);
    let run = Xr::new(["build", "-m", "xr.toml", "--remote-exec", &farm.url, "--remote-persistent-workers"])
        .args(["--message-format", "json"])
        .dir(&edited)
        .ok();
    let summary = summary_of(&run.stdout);
    // The bots say where each executed action's time went.
    assert!(
        run.stderr.contains(&format!("({rebuilt} actions timed by their workers)"))
            && run.stderr.contains("ms on the worker: inputs "),
        "{}",
        run.stderr
    );
    assert_eq!(count(&summary, "built"), built, "{summary}");
    assert_eq!(count(&summary, "remote_executed"), rebuilt, "only the edited file's compiles ran: {summary}");
    assert_eq!(count(&summary, "remote_cached"), built - rebuilt, "the rest from the action cache: {summary}");
    assert_eq!(count(&summary, "remote_fallback"), 0, "{summary}");
    let fresh = materials_full_copy("farm-edit-fresh-local");
    edit_toon(&fresh);
    xr_build(&fresh);
    assert!(store_contents(&edited) == store_contents(&fresh), "the farm's objects are a local build's");
    // Four compiler plugins, two bots: at most 8 workers for 159 actions.
    let started = farm.bot_log_lines("persistent worker started");
    assert!((1..=8).contains(&started), "{started} workers started for {} actions", built + rebuilt);
}

/// A compile that reads a file the scan of its includes did not find (an
/// `#include` after a comment on its line, which glslang takes and the
/// scan, reading directives at the start of a line, does not) fails on the
/// farm, where the file is absent, and is built here, said once; never
/// built from what the farm did not have.
#[test]
fn a_compile_whose_include_was_not_sent_fails_on_the_farm_and_is_built_here_said_once() {
    let farm = Farm::up(2);
    let dir = materials_full_copy("farm-unsent-include");
    std::fs::write(dir.join("shaders/include/tint.glsl"), "vec4 tint() { return vec4(1.0, 0.5, 0.25, 1.0); }\n")
        .unwrap();
    std::fs::write(
        dir.join("shaders/hidden.frag"),
        "#version 450\n/* the helper */ #include \"tint.glsl\"\nlayout(location = 0) out vec4 color;\n\
         void main() { color = tint(); }\n",
    )
    .unwrap();
    let mut manifest = std::fs::read_to_string(dir.join("xr.toml")).unwrap();
    manifest.push_str(
        "\n[[program]]\nname = \"hidden\"\ntargets = [\"vk-spirv\"]\ninclude = [\"shaders/include\"]\n\
         stages = [\n    { stage = \"vertex\", file = \"shaders/quad.vert\" },\n    \
         { stage = \"fragment\", file = \"shaders/hidden.frag\" },\n]\n",
    );
    std::fs::write(dir.join("xr.toml"), manifest).unwrap();
    let run = Xr::new(["build", "-m", "xr.toml", "--program", "hidden", "--remote-exec", &farm.url])
        .args(["--message-format", "json"])
        .dir(&dir)
        .ok();
    let summary = summary_of(&run.stdout);
    assert_eq!((count(&summary, "built"), count(&summary, "failed")), (1, 0), "{summary}");
    assert_eq!(count(&summary, "remote_fallback"), 1, "built here: {summary}");
    let said: Vec<&str> = run.stderr.lines().filter(|l| l.contains("failed on the farm")).collect();
    assert_eq!(said.len(), 1, "said once: {}", run.stderr);
    assert!(said[0].contains("tint.glsl"), "with the reason: {}", said[0]);
}

/// A language XR has never heard of gets the actions a built-in one gets:
/// the dialect fixture's `glsl-dialect`, whose pair declares `#include`s
/// (`SourceReach::INCLUDES`), sends its stages and the file they include,
/// not their directories. An edit to a file beside them that no stage reads
/// runs nothing again (a fresh store comes from the action cache); an edit
/// to the included file runs the compile again.
#[test]
fn a_language_whose_plugin_declares_includes_sends_what_they_reach_and_no_more() {
    let farm = Farm::up(1);
    let dir = temp_dir("farm-dialect");
    for (name, text) in [
        (
            "shaders/quad.gld",
            "#version 450 core\nlayout(location = 0) in vec2 p;\nvoid main() { gl_Position = COLOUR(p, 0.0, 1.0); }\n",
        ),
        (
            "shaders/green.gld",
            "#version 450 core\n#include \"palette.gld\"\nlayout(location = 0) out COLOUR color;\nvoid main() { color = green(); }\n",
        ),
        ("include/palette.gld", "COLOUR green() { return COLOUR(0.0, 1.0, 0.0, 1.0); }\n"),
        ("shaders/unread.gld", "// read by no stage\n"),
    ] {
        std::fs::create_dir_all(dir.join(name).parent().unwrap()).unwrap();
        std::fs::write(dir.join(name), text).unwrap();
    }
    std::fs::write(
        dir.join("xr.toml"),
        "store = \"store\"\n[[program]]\nname = \"green\"\ntargets = [\"gl-glsl\"]\ninclude = [\"include\"]\n\
         stages = [\n    { stage = \"vertex\", file = \"shaders/quad.gld\" },\n    \
         { stage = \"fragment\", file = \"shaders/green.gld\" },\n]\n",
    )
    .unwrap();
    let plugins = xr_tests::plugin_dir_with("farm-dialect-plugins", &["xr-fixture-dialect"]);
    // A fresh store each time: the farm, not the journal, decides.
    let build = || {
        let _ = std::fs::remove_dir_all(dir.join("store"));
        let run = Xr::new(["build", "-m", "xr.toml", "--remote-exec", &farm.url, "--message-format", "json"])
            .dir(&dir)
            .plugins(&plugins)
            .ok();
        let summary = summary_of(&run.stdout);
        assert_eq!((count(&summary, "built"), count(&summary, "remote_fallback")), (1, 0), "{summary}");
        (count(&summary, "remote_executed"), count(&summary, "remote_cached"))
    };
    assert_eq!(build(), (1, 0), "the first build runs its compile");
    std::fs::write(dir.join("shaders/unread.gld"), "// read by no stage, edited\n").unwrap();
    assert_eq!(build(), (0, 1), "a file beside the stages that none reads is not in the action");
    std::fs::write(
        dir.join("include/palette.gld"),
        "COLOUR green() { return COLOUR(0.0, 1.0, 0.0, 1.0); } // edited\n",
    )
    .unwrap();
    assert_eq!(build(), (1, 0), "the included file is");
}
