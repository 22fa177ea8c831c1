//! The program binary path across processes: availability that follows the
//! live driver, a read-only store, and two processes warming one store.

use std::path::{Path, PathBuf};
use xr_store::Store;
use xr_tests::{Xr, executable, library, temp_dir};

/// Runs `program`; it must succeed. Its (stdout, stderr).
fn run(program: Xr) -> (String, String) {
    let run = program.ok();
    (run.stdout, run.stderr)
}

/// The pipelines sample with a private Mesa shader cache.
fn pipelines(store: &Path, out: &Path, mesa_cache: &Path) -> Xr {
    Xr::sample("pipelines", ["--store", store.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .software_device_cache(mesa_cache)
}

/// The stage programs' rows of the sample's table: (program, path).
fn loads(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .filter(|l| l.contains(".vert") || l.contains(".frag"))
        .map(|l| (l[..14].trim().to_owned(), l[15..30].trim().to_owned()))
        .collect()
}

fn glsl_live_availability(binaries_off: bool) -> (serde_json::Value, serde_json::Value) {
    let xr = Xr::new(["plugins", "--json"]).software_device();
    let stdout = if binaries_off { xr.env("XR_GL_PROGRAM_BINARIES", "off") } else { xr }.ok().stdout;
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let plugins = report["plugins"].as_array().unwrap();
    let find = |name: &str| plugins.iter().find(|p| p["name"] == name).unwrap().clone();
    let formats = find("xr-rhi-opengl")["device_systems"][0]["device"]["Ok"]["program_binary_formats"].clone();
    let live = find("xr-compiler-glsl")["build_systems"][0]["on_devices"][0]["availability"]["Ok"].clone();
    (formats, live)
}

#[test]
fn offline_compile_follows_the_live_driver() {
    let (formats, live) = glsl_live_availability(false);
    assert!(!formats.as_array().unwrap().is_empty());
    assert_eq!(live, serde_json::json!(["RuntimeCompile", "OfflineCompile"]));

    let (formats, live) = glsl_live_availability(true);
    assert_eq!(formats, serde_json::json!([]));
    assert_eq!(live, serde_json::json!(["RuntimeCompile"]));

    // Such a device still renders, from source, and says why.
    let dir = temp_dir("no-binaries");
    let sample = pipelines(&dir.join("store"), &dir.join("out.png"), &dir.join("mesa"));
    let (stdout, _) = run(sample.env("XR_GL_PROGRAM_BINARIES", "off"));
    assert_eq!(loads(&stdout).len(), 5);
    assert!(loads(&stdout).iter().all(|(_, path)| path == "source"), "{stdout}");
    assert!(stdout.contains("no program binary formats"), "{stdout}");
    assert!(Store::open(dir.join("store")).unwrap().keys().unwrap().is_empty());
}

/// A world-readable copy of the sample, its plugins and shaders, so that it
/// can run as an unprivileged user.
fn portable_sample(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for from in [executable("pipelines"), library("xr-rhi-opengl"), library("xr-compiler-glsl")] {
        std::fs::copy(&from, bin.join(from.file_name().unwrap())).unwrap();
    }
    let shaders = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/pipelines/shaders");
    std::fs::create_dir_all(dir.join("shaders")).unwrap();
    for entry in std::fs::read_dir(shaders).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join("shaders").join(entry.file_name())).unwrap();
    }
    bin.join("pipelines")
}

fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_read_only_store_still_renders_from_source_and_warns_once() {
    let dir = temp_dir("read-only");
    chmod(&dir, 0o755);
    let sample = portable_sample(&dir);
    let store = dir.join("store");
    Store::open(&store).unwrap();
    for sub in ["objects", "tmp", ""] {
        chmod(&store.join(sub), 0o555);
    }
    let writable = dir.join("writable");
    std::fs::create_dir_all(&writable).unwrap();
    chmod(&writable, 0o777);

    let out = writable.join("out.png");
    let shaders = dir.join("shaders");
    let args =
        ["--store", store.to_str().unwrap(), "--out", out.to_str().unwrap(), "--shaders", shaders.to_str().unwrap()];
    let is_root =
        std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0).unwrap_or(false);
    let program = if is_root {
        // Permission bits do not bind root: run the sample as nobody.
        Xr::program("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups"]).arg(&sample).args(args)
    } else {
        Xr::program(&sample, args)
    };
    let (stdout, stderr) = run(program.software_device_cache(writable.join("mesa")).env("HOME", &writable));
    let rows = loads(&stdout);
    assert_eq!(rows.len(), 5, "{stdout}");
    assert!(rows.iter().all(|(_, path)| path == "source"), "{stdout}");
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("cannot write to the store")).collect();
    assert_eq!(warnings.len(), 1, "warns exactly once:\n{stderr}");
    assert!(warnings[0].contains("WARN"), "{}", warnings[0]);
    assert!(writable.join("out.png").is_file());
    assert!(Store::open(&store).unwrap().keys().unwrap().is_empty());
}

#[test]
fn two_processes_warming_one_store_leave_only_whole_objects() {
    let dir = temp_dir("two-processes");
    let store = dir.join("store");
    let children: Vec<_> = (0..2)
        .map(|i| {
            let run = pipelines(&store, &dir.join(format!("out{i}.png")), &dir.join(format!("mesa{i}")));
            xr_tests::spawn_captured(&mut run.command())
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        assert_eq!(loads(&String::from_utf8_lossy(&output.stdout)).len(), 5);
    }
    let opened = Store::open(&store).unwrap();
    assert_eq!(opened.keys().unwrap().len(), 5);
    assert!(opened.verify().unwrap().is_empty(), "no torn object");
    assert_eq!(std::fs::read_dir(store.join("tmp")).unwrap().count(), 0, "no temp file left behind");
    assert_eq!(std::fs::read(dir.join("out0.png")).unwrap(), std::fs::read(dir.join("out1.png")).unwrap());

    // Both left binaries a third process loads.
    let (stdout, _) = run(pipelines(&store, &dir.join("out2.png"), &dir.join("mesa2")));
    let rows = loads(&stdout);
    assert_eq!(rows.len(), 5, "{stdout}");
    assert!(rows.iter().all(|(_, path)| path == "device-binary"), "{stdout}");
}
