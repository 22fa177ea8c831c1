//! A shared remote store on real servers (nginx with WebDAV, redis-server)
//! on 127.0.0.1: machines simulated as separate checkouts with their own
//! local stores, CI shards, and a remote that dies, lies, refuses or hangs.
//! In every case the build ends with the objects a local build makes.

use std::{collections::BTreeMap, path::Path, process::Command};
use xr_store::catalog::CatalogVariant;
use xr_tests::{
    TestDir, Xr, materials_copy,
    servers::{self, PASSWORD, Server, USER},
    summary_count, temp_dir, write_materials,
};

/// The servers' credentials and nothing from the environment that would
/// change the remote, for `xr` and the sample alike.
fn with_servers(program: Xr) -> Xr {
    program
        .env_remove("XR_REMOTE")
        .env_remove("XR_REMOTE_UPLOAD")
        .env_remove("XR_REMOTE_TIMEOUT")
        .env("XR_REMOTE_USER", USER)
        .env("XR_REMOTE_PASSWORD", PASSWORD)
}

/// `xr` in `dir`, [`with_servers`].
fn xr(dir: &Path, args: &[&str]) -> Command {
    with_servers(Xr::new(args).dir(dir)).command()
}

struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

impl Run {
    fn of(command: &mut Command) -> Self {
        Self::from(command.output().expect("xr runs"))
    }

    /// (built, fetched, reused, failed) of the summary line.
    fn counts(&self) -> (usize, usize, usize, usize) {
        let line = self
            .stderr
            .lines()
            .find(|l| l.starts_with("xr build"))
            .unwrap_or_else(|| panic!("no summary in {}{}", self.stdout, self.stderr));
        let count = |label| summary_count(line, label);
        (count("built"), count("fetched"), count("reused"), count("failed"))
    }

    fn warnings(&self) -> Vec<&str> {
        self.stderr.lines().filter(|l| l.starts_with("warning: ")).collect()
    }
}

impl From<std::process::Output> for Run {
    fn from(output: std::process::Output) -> Self {
        Self {
            ok: output.status.success(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "stdout:\n{}\nstderr:\n{}", self.stdout, self.stderr)
    }
}

fn build(dir: &Path, remote: &str, extra: &[&str]) -> Run {
    Run::of(xr(dir, &["build", "-m", "xr.toml", "-q", "--remote", remote]).args(extra))
}

/// Program → variant → its objects, from a store's catalogs (the
/// manifest's path, which differs between machines, left out).
type Catalog = BTreeMap<String, BTreeMap<String, CatalogVariant>>;

fn catalog(dir: &Path) -> Catalog {
    let (programs, unread) = xr_store::catalog::read_all(&dir.join("store"));
    assert!(unread.is_empty() && !programs.is_empty(), "{unread:?}");
    programs.into_iter().map(|(name, program)| (name, program.variants)).collect()
}

/// Every (variant, target)'s object, one per artifact.
fn objects(catalog: &Catalog) -> impl Iterator<Item = &String> {
    catalog.values().flat_map(|variants| variants.values()).flat_map(|variant| variant.objects.values())
}

fn artifacts(catalog: &Catalog) -> usize {
    objects(catalog).count()
}

/// A machine that built alone, without any remote: what every degraded
/// build must end with.
fn local_reference(label: &str) -> (TestDir, Catalog) {
    let dir = materials_copy(label);
    let run = Run::of(&mut xr(&dir, &["build", "-m", "xr.toml", "-q"]));
    assert!(run.ok, "{run}");
    let catalog = catalog(&dir);
    (dir, catalog)
}

/// The materials sample's Vulkan SPIR-V run over a machine's store, as PNG bytes.
fn render(dir: &Path, remote: Option<&str>) -> Result<Vec<u8>, String> {
    let out = dir.join("render");
    let mut sample = with_servers(Xr::sample(
        "materials",
        ["--store", &dir.join("store").to_string_lossy(), "--out", &out.to_string_lossy(), "--run", "vk-spirv"],
    ));
    if let Some(remote) = remote {
        sample = sample.args(["--remote", remote]);
    }
    let run = Run::of(&mut sample.command());
    if !run.ok {
        return Err(run.to_string());
    }
    let png = out.join("materials-vk-spirv.png");
    let image = image::open(&png).map_err(|e| format!("{}: {e}", png.display()))?;
    Ok(image.to_rgba8().into_raw())
}

#[test]
fn two_machines_share_a_webdav_remote_and_the_second_builds_nothing() {
    let server = servers::nginx("remote-webdav");
    let first = materials_copy("remote-webdav-a");
    let run = build(&first, &server.url, &["--remote-upload"]);
    assert!(run.ok, "{run}");
    let (built, fetched, reused, failed) = run.counts();
    assert!(built > 0 && (fetched, reused, failed) == (0, 0, 0), "{run}");
    assert!(run.stderr.contains(&format!("0 fetched, {built} uploaded")), "{run}");
    let unique = summary_count(run.stderr.lines().find(|l| l.starts_with("xr build")).unwrap(), "unique");
    assert_eq!(server.files("cas").len(), unique, "each object once on the server");
    assert_eq!(server.files("ac").len(), built, "one action record per artifact");

    // Another checkout, in another directory two levels deeper, its
    // manifest named by an absolute path from elsewhere: the keys do not
    // depend on where it is.
    let second_parent = temp_dir("remote-webdav-b");
    let second = second_parent.join("two/levels");
    write_materials(&second, false);
    let manifest = second.join("xr.toml");
    let build_second = || {
        Run::of(&mut xr(
            &std::env::temp_dir(),
            &["build", "-m", manifest.to_str().unwrap(), "-q", "--remote", &server.url],
        ))
    };
    let run = build_second();
    assert!(run.ok, "{run}");
    assert_eq!(run.counts(), (0, built, 0, 0), "{run}");
    assert!(run.warnings().is_empty(), "{run}");
    assert_eq!(catalog(&second), catalog(&first));
    // Fetched objects are local now, and journalled: the next build reuses them.
    let run = build_second();
    assert_eq!(run.counts(), (0, 0, built, 0), "{run}");

    let verify = Run::of(&mut xr(&second, &["store", "verify", "--store", "store", "--remote", &server.url]));
    assert!(verify.ok, "{verify}");
    assert!(verify.stderr.contains(" 0 corrupt, 0 named here but not uploaded"), "{verify}");

    // A third machine whose include differs: what read it is a miss (the
    // action record lists every file read, with its hash), the rest a hit.
    let third = materials_copy("remote-webdav-c");
    let include = third.join("shaders/include/lighting.glsl");
    let text = std::fs::read_to_string(&include).unwrap();
    std::fs::write(&include, format!("// edited on the third machine\n{text}")).unwrap();
    let run = build(&third, &server.url, &[]);
    assert!(run.ok, "{run}");
    let unlit =
        artifacts(&catalog(&first).into_iter().filter(|(name, _)| name == "unlit" || name == "textured").collect());
    assert_eq!(run.counts(), (built - unlit, unlit, 0, 0), "only unlit and textured read no lighting.glsl: {run}");
}

/// Shards 1/3, 2/3 and 3/3 on three machines uploading to `server`, then a
/// fourth machine building the whole manifest.
fn shards_then_a_full_build(server: &Server, label: &str, user: Option<&str>) {
    let xr = |dir: &Path, args: &[&str]| {
        let mut command = xr(dir, args);
        match user {
            Some(user) => command.env("XR_REMOTE_USER", user),
            // Redis here has a password only (its default user).
            None => command.env_remove("XR_REMOTE_USER"),
        };
        command
    };
    let mut total = 0;
    for index in 1..=3 {
        let machine = materials_copy(&format!("{label}-{index}"));
        let shard = format!("{index}/3");
        let run = Run::of(&mut xr(
            &machine,
            &["build", "-m", "xr.toml", "-q", "--remote", &server.url, "--remote-upload", "--shard", &shard],
        ));
        assert!(run.ok, "{run}");
        let (built, fetched, reused, failed) = run.counts();
        assert!(run.stderr.contains(&format!("xr build (shard {index}/3)")), "{run}");
        assert!(built > 0 && (fetched, reused, failed) == (0, 0, 0), "shard {index}: {run}");
        total += built;
    }
    let (_, reference) = local_reference(&format!("{label}-reference"));
    assert_eq!(total, artifacts(&reference), "the shards cover the matrix once");

    let fourth = materials_copy(&format!("{label}-4"));
    let run = Run::of(xr(&fourth, &["build", "-m", "xr.toml", "-q"]).env("XR_REMOTE", &server.url));
    assert!(run.ok, "{run}");
    assert_eq!(run.counts(), (0, total, 0, 0), "{run}");
    assert_eq!(catalog(&fourth), reference);
    // A shard built into a store with the whole catalog keeps the other shards' variants.
    let run = Run::of(&mut xr(&fourth, &["build", "-m", "xr.toml", "-q", "--shard", "2/3"]));
    assert!(run.ok, "{run}");
    assert_eq!(catalog(&fourth), reference, "the catalog still lists every variant");
    let verify = Run::of(&mut xr(&fourth, &["store", "verify", "--store", "store", "--remote", &server.url]));
    assert!(verify.ok, "{verify}");
    assert_eq!(verify.stderr.contains("it cannot list"), user.is_none(), "Redis has no listing: {verify}");
}

#[test]
fn shards_build_disjoint_parts_into_redis_and_a_fourth_machine_fetches_everything() {
    shards_then_a_full_build(&servers::redis("remote-redis"), "remote-shard-redis", None);
}

#[test]
fn shards_build_disjoint_parts_into_webdav_and_a_fourth_machine_fetches_everything() {
    shards_then_a_full_build(&servers::nginx("remote-shard-webdav"), "remote-shard-webdav", Some(USER));
}

#[test]
fn a_corrupt_object_on_the_server_is_one_warning_and_built_here() {
    let server = servers::nginx("remote-corrupt");
    let (reference_dir, reference) = local_reference("remote-corrupt-reference");
    let first = materials_copy("remote-corrupt-a");
    assert!(build(&first, &server.url, &["--remote-upload"]).ok);

    // An object exactly one artifact uses, so exactly one artifact must rebuild.
    let mut uses: BTreeMap<String, usize> = BTreeMap::new();
    for object in objects(&reference) {
        *uses.entry(object.clone()).or_default() += 1;
    }
    let hex = uses.iter().find(|(_, n)| **n == 1).map(|(hex, _)| hex.clone()).expect("an object used once");
    let file = server.file_of("cas", &hex);
    let mut bytes = std::fs::read(&file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x20;
    std::fs::write(&file, bytes).unwrap();

    let second = materials_copy("remote-corrupt-b");
    let run = build(&second, &server.url, &[]);
    assert!(run.ok, "{run}");
    assert_eq!(run.counts(), (1, artifacts(&reference) - 1, 0, 0), "{run}");
    let warnings = run.warnings();
    assert_eq!(warnings.len(), 1, "{run}");
    assert!(warnings[0].contains(&format!("cas/{hex}")) && warnings[0].contains("checksum mismatch"), "{run}");
    assert_eq!(catalog(&second), reference, "the right object, built here");
    assert_eq!(render(&second, None).unwrap(), render(&reference_dir, None).unwrap(), "the right pixels");

    // A whole object, but not the one its key names (a server that mixed
    // up two files): refused as well.
    let other = uses.keys().find(|h| **h != hex).unwrap();
    std::fs::copy(server.file_of("cas", other), &file).unwrap();
    let third = materials_copy("remote-corrupt-c");
    let run = build(&third, &server.url, &[]);
    assert_eq!(run.counts(), (1, artifacts(&reference) - 1, 0, 0), "{run}");
    let warnings = run.warnings();
    assert!(warnings.len() == 1 && warnings[0].contains("not the object it is named after"), "{run}");
    assert_eq!(catalog(&third), reference);
    let mut bytes = std::fs::read(&file).unwrap();
    let half = bytes.len() / 2;
    bytes[half] ^= 0x20;
    std::fs::write(&file, bytes).unwrap();

    // verify finds the server's bad copy and can remove it.
    let verify = |extra: &[&str]| {
        Run::of(xr(&second, &["store", "verify", "--store", "store", "--remote", &server.url]).args(extra))
    };
    let run = verify(&[]);
    assert!(!run.ok, "{run}");
    assert!(run.stderr.contains(&format!("corrupt on the remote: {}/cas/{hex}", server.url)), "{run}");
    assert!(verify(&["--delete-corrupt"]).ok);
    assert!(!file.exists(), "the corrupt copy is gone from the server");
    assert!(verify(&[]).ok);

    // An action record in a whole envelope that is not a record.
    let action = server.files("ac").into_iter().next().unwrap();
    std::fs::write(&action, xr_store::object::encode(b"not a record")).unwrap();
    let fourth = materials_copy("remote-corrupt-d");
    let run = build(&fourth, &server.url, &[]);
    let warnings = run.warnings();
    assert!(warnings.len() == 1 && warnings[0].contains("not an action record"), "{run}");
    let (built, _, _, failed) = run.counts();
    assert!(built >= 2 && failed == 0, "that record's artifact and the one whose object is gone: {run}");
    assert_eq!(catalog(&fourth), reference);
}

#[test]
fn wrong_credentials_are_one_warning_and_a_local_build() {
    let server = servers::nginx("remote-login");
    let (reference_dir, reference) = local_reference("remote-login-reference");
    let machine = materials_copy("remote-login-a");
    let run = Run::of(
        xr(&machine, &["build", "-m", "xr.toml", "-q", "--remote", &server.url, "--remote-upload"])
            .env("XR_REMOTE_PASSWORD", "wrong"),
    );
    assert!(run.ok, "{run}");
    assert_eq!(run.counts(), (artifacts(&reference), 0, 0, 0), "{run}");
    let warnings = run.warnings();
    assert_eq!(warnings.len(), 1, "{run}");
    assert!(warnings[0].contains("HTTP 401: the server refused the credentials"), "{run}");
    assert!(!run.stderr.contains("wrong"), "the password is never printed: {run}");
    assert!(run.stderr.contains("unusable, built locally"), "{run}");
    assert!(server.files("cas").is_empty(), "nothing was uploaded");
    assert_eq!(catalog(&machine), reference);
    assert_eq!(render(&machine, None).unwrap(), render(&reference_dir, None).unwrap(), "the right pixels");
}

#[test]
fn a_server_error_is_one_warning_and_a_local_build() {
    let server = servers::nginx("remote-503");
    let (reference_dir, reference) = local_reference("remote-503-reference");
    let machine = materials_copy("remote-503");
    let run = build(&machine, &server.url.replace("/cache", "/unavailable"), &["--remote-upload"]);
    assert!(run.ok, "{run}");
    assert_eq!(run.counts(), (artifacts(&reference), 0, 0, 0), "{run}");
    let warnings = run.warnings();
    assert!(warnings.len() == 1 && warnings[0].contains("HTTP 503"), "{run}");
    assert_eq!(catalog(&machine), reference);
    assert_eq!(render(&machine, None).unwrap(), render(&reference_dir, None).unwrap(), "the right pixels");

    // A URL that reaches a page, not a cache: every answer would be as wrong.
    let machine = materials_copy("remote-login-page");
    let run = build(&machine, &server.url.replace("/cache", "/login"), &[]);
    assert!(run.ok, "{run}");
    assert_eq!(run.counts(), (artifacts(&reference), 0, 0, 0), "{run}");
    let warnings = run.warnings();
    assert!(warnings.len() == 1 && warnings[0].contains("is not an XR entry (is the URL right?)"), "{run}");
    assert_eq!(catalog(&machine), reference);
}

#[test]
fn a_server_that_never_answers_costs_one_timeout_and_a_warning() {
    let url = servers::silent();
    let (reference_dir, reference) = local_reference("remote-silent-reference");
    let machine = materials_copy("remote-silent");
    let run = Run::of(
        xr(&machine, &["build", "-m", "xr.toml", "-q", "--remote", &url, "--remote-upload"])
            .env("XR_REMOTE_TIMEOUT", "1"),
    );
    assert!(run.ok, "{run}");
    assert_eq!(run.counts(), (artifacts(&reference), 0, 0, 0), "{run}");
    let warnings = run.warnings();
    assert_eq!(warnings.len(), 1, "{run}");
    assert!(warnings[0].to_lowercase().contains("timeout") || warnings[0].contains("timed out"), "{run}");
    assert_eq!(catalog(&machine), reference);
    assert_eq!(render(&machine, None).unwrap(), render(&reference_dir, None).unwrap(), "the right pixels");
}

#[test]
fn a_server_killed_mid_build_is_one_warning_and_the_build_finishes_locally() {
    let mut server = servers::nginx("remote-killed");
    let (reference_dir, reference) = local_reference("remote-killed-reference");
    let machine = materials_copy("remote-killed");
    let mut child =
        xr(&machine, &["build", "-m", "xr.toml", "-q", "-j", "1", "--remote", &server.url, "--remote-upload"])
            // Slow each object write a little, so that the kill lands mid-build.
            .env(xr_store::test_hooks::WRITE_PAUSE_VAR, "20")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("xr runs");
    let started = std::time::Instant::now();
    while server.files("cas").len() < 5 {
        assert!(child.try_wait().unwrap().is_none(), "the build ended before the server could be killed");
        assert!(started.elapsed() < std::time::Duration::from_secs(120), "no uploads");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    server.kill();
    let run = Run::from(child.wait_with_output().unwrap());
    assert!(run.ok, "{run}");
    assert_eq!(run.counts(), (artifacts(&reference), 0, 0, 0), "{run}");
    assert_eq!(run.warnings().len(), 1, "{run}");
    assert!(run.stderr.contains("unusable, built locally"), "{run}");
    assert_eq!(catalog(&machine), reference);
    assert_eq!(render(&machine, None).unwrap(), render(&reference_dir, None).unwrap(), "the right pixels");
}

#[test]
fn the_run_time_library_reads_missing_objects_through_the_remote() {
    let server = servers::nginx("remote-library");
    let first = materials_copy("remote-library-a");
    assert!(build(&first, &server.url, &["--remote-upload"]).ok);

    // A machine with the catalog only (a game build that ships no objects).
    let second = xr_tests::temp_dir("remote-library-b");
    std::fs::create_dir_all(second.join("store/objects")).unwrap();
    std::fs::create_dir_all(second.join("store/catalog")).unwrap();
    for entry in std::fs::read_dir(first.join("store/catalog")).unwrap().flatten() {
        std::fs::copy(entry.path(), second.join("store/catalog").join(entry.file_name())).unwrap();
    }
    let error = render(&second, None).unwrap_err();
    assert!(error.contains("missing from the store"), "{error}");
    // A server that serves another whole object under a key: refused, not
    // drawn. The key is one the render needs (the first tile's object).
    let objects = server.files("cas");
    let catalog_of_first = catalog(&first);
    let needed = catalog_of_first["unlit"]["unlit[TINT=0,PATTERN=flat]"].objects.get("vk-spirv").expect("built");
    let swapped =
        objects.iter().find(|p| p.to_string_lossy().contains(needed.as_str())).expect("on the server").clone();
    let other = objects.iter().find(|p| **p != swapped).expect("another object");
    let original = std::fs::read(&swapped).unwrap();
    std::fs::copy(other, &swapped).unwrap();
    let error = render(&second, Some(&server.url)).unwrap_err();
    assert!(error.contains("its bytes are not the object it is named after; not used"), "{error}");
    std::fs::write(&swapped, original).unwrap();
    let pixels = render(&second, Some(&server.url)).expect("loads through the remote");
    assert_eq!(pixels, render(&first, None).unwrap(), "the same pixels as the machine that built");
    let fetched = std::fs::read_dir(second.join("store/objects")).unwrap().count();
    assert!(fetched > 0, "fetched objects are kept locally");
    // Kept: the remote is not needed any more for what was loaded.
    drop(server);
    assert!(render(&second, None).is_ok());
}

#[test]
fn remote_settings_that_cannot_work_are_one_clear_error() {
    let machine = materials_copy("remote-bad-settings");
    for (args, expected) in [
        (vec!["--remote", "ftp://cache.example/x"], "unknown scheme 'ftp'"),
        (vec!["--remote-upload"], "--remote-upload needs a remote"),
        (vec!["--remote", "redis://127.0.0.1/notadb"], "the path must be a database number"),
        (vec!["--shard", "4/3"], "'4/3' is not a shard"),
        (vec!["--shard", "one"], "'one' is not a shard"),
        (vec!["--remote", "http://127.0.0.1:1/cache", "--timeout-in-env"], "XR_REMOTE_TIMEOUT: 'soon' is not"),
    ] {
        let timeout = args.contains(&"--timeout-in-env");
        let args: Vec<&str> = args.into_iter().filter(|a| *a != "--timeout-in-env").collect();
        let mut command = xr(&machine, &["build", "-m", "xr.toml", "-q"]);
        if timeout {
            command.env("XR_REMOTE_TIMEOUT", "soon");
        }
        let run = Run::of(command.args(&args));
        assert!(!run.ok, "{args:?}: {run}");
        assert!(run.stderr.contains(expected), "{args:?}: {run}");
        assert!(!machine.join("store/catalog").exists(), "{args:?}: nothing was built");
    }
}

#[test]
fn verify_with_a_remote_it_cannot_reach_fails_naming_it() {
    let machine = xr_tests::materials_built("remote-verify-down");
    let url = format!("http://127.0.0.1:{}/cache", servers::free_port());
    let run = Run::of(&mut xr(&machine, &["store", "verify", "--store", "store", "--remote", &url]));
    assert!(!run.ok, "{run}");
    assert!(run.stderr.contains(&format!("error: remote: {url}")), "{run}");
}

#[test]
fn two_machines_uploading_the_same_objects_at_once_leave_a_whole_remote() {
    let server = servers::nginx("remote-concurrent");
    let machines: Vec<TestDir> = (0..2).map(|i| materials_copy(&format!("remote-concurrent-{i}"))).collect();
    let children: Vec<_> = machines
        .iter()
        .map(|dir| {
            xr_tests::spawn_captured(&mut xr(
                dir,
                &["build", "-m", "xr.toml", "-q", "--remote", &server.url, "--remote-upload"],
            ))
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    }
    let third = materials_copy("remote-concurrent-2");
    let run = build(&third, &server.url, &[]);
    assert!(run.ok, "{run}");
    let (built, fetched, _, _) = run.counts();
    assert_eq!((built, fetched), (0, artifacts(&catalog(&machines[0]))), "{run}");
    let verify = Run::of(&mut xr(&third, &["store", "verify", "--store", "store", "--remote", &server.url]));
    assert!(verify.ok && verify.stderr.contains(" 0 corrupt, 0 named here but not uploaded"), "{verify}");
}
