//! `xr store gc` while builds of another manifest write into the same
//! store: gc waits for the builds (the store's lock), nothing a build
//! names is lost, and a build never reports success for a catalog whose
//! objects are not all there.

use std::{
    path::{Path, PathBuf},
    process::{Child, Stdio},
    time::{Duration, Instant},
};
use xr_tests::{TestDir, Xr, materials_copy};

/// The materials copy (manifest `xr.toml`, store `store/`) and a second
/// manifest, `other.toml`, with one program of its own in the same store.
fn two_manifests(label: &str) -> TestDir {
    let dir = materials_copy(label);
    std::fs::write(
        dir.join("other.toml"),
        "store = \"store\"\n\n[[program]]\nname = \"solo\"\ntargets = [\"vk-spirv\"]\ninclude = [\"shaders/include\"]\n\
         stages = [\n{ stage = \"vertex\", file = \"shaders/quad.vert\" },\n\
         { stage = \"fragment\", file = \"shaders/textured.frag\" },\n]\n",
    )
    .unwrap();
    dir
}

fn spawn(dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Child {
    let mut command = Xr::new(args).dir(dir).command();
    for (name, value) in env {
        command.env(name, value);
    }
    command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("xr starts")
}

fn finish(child: Child) -> (Option<i32>, String) {
    let output = child.wait_with_output().expect("xr ends");
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.code(), text)
}

fn wait_for(path: &Path) {
    let started = Instant::now();
    while !path.exists() {
        assert!(started.elapsed() < Duration::from_secs(120), "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `xr store verify`: clean, and every object each catalog names present.
fn assert_store_whole(dir: &Path) {
    let run = Xr::new(["store", "verify", "--store", "store"]).dir(dir).run();
    assert!(run.ok, "verify found problems:\n{}{}", run.stdout, run.stderr);
    for entry in std::fs::read_dir(dir.join("store/catalog")).into_iter().flatten().flatten() {
        let catalog: serde_json::Value = serde_json::from_slice(&std::fs::read(entry.path()).unwrap()).unwrap();
        for variant in catalog["variants"].as_object().unwrap().values() {
            for object in variant["objects"].as_object().unwrap().values() {
                let hex = object.as_str().unwrap();
                let path = dir.join("store/objects").join(&hex[..2]).join(&hex[2..]);
                assert!(path.is_file(), "{} names {hex}, which is gone", entry.path().display());
            }
        }
    }
}

/// A build of `xr.toml` stopped just before it writes its catalogs: the
/// files that release it and say it got there.
fn paused_build(dir: &Path) -> (Child, PathBuf, PathBuf) {
    let release = dir.join("release-build");
    let ready = dir.join("release-build.ready");
    let build =
        spawn(dir, &["build", "-m", "xr.toml", "-q"], &[(xr_store::test_hooks::CATALOG_PAUSE_VAR, release.as_path())]);
    wait_for(&ready);
    (build, release, ready)
}

#[test]
fn gc_waits_for_a_running_build_of_another_manifest_and_loses_nothing() {
    let dir = two_manifests("gc-waits");
    let (build, release, _) = paused_build(&dir);
    // The build has written its objects; no catalog names them yet.
    let gc = spawn(&dir, &["store", "gc", "-m", "other.toml"], &[]);
    std::thread::sleep(Duration::from_millis(1500));
    let mut gc = gc;
    assert!(gc.try_wait().unwrap().is_none(), "gc must wait for the build, not delete under it");
    std::fs::write(&release, b"").unwrap();
    let (code, text) = finish(build);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("111 built") && text.contains("0 failed"), "{text}");
    let (code, text) = finish(gc);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("waiting for the builds writing to"), "gc said why it waited:\n{text}");
    // gc ran after the build: it dropped that manifest's programs whole.
    assert!(text.contains("dropped program 'unlit'"), "{text}");
    assert_store_whole(&dir);
}

#[test]
fn an_object_removed_during_a_build_fails_its_artifacts_instead_of_being_named() {
    let dir = two_manifests("gc-vanished");
    let (build, release, _) = paused_build(&dir);
    // Removed behind the lock's back: by a person, another tool.
    let victim = std::fs::read_dir(dir.join("store/objects"))
        .unwrap()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
        .map(|e| e.path())
        .next()
        .expect("an object");
    std::fs::remove_file(&victim).unwrap();
    std::fs::write(&release, b"").unwrap();
    let (code, text) = finish(build);
    assert_eq!(code, Some(1), "the build must not report success:\n{text}");
    assert!(text.contains("was removed from the store while the build ran"), "{text}");
    assert_store_whole(&dir);
    // The next build makes it again.
    let run = Xr::new(["build", "-m", "xr.toml", "-q"]).dir(&dir).run();
    assert!(run.ok && run.stderr.contains("0 failed"), "{}", run.stderr);
    assert_store_whole(&dir);
}

#[test]
fn gc_in_a_loop_against_builds_of_another_manifest_leaves_the_store_whole() {
    let dir = two_manifests("gc-loop");
    // The other manifest's program is in the store: the store exists before
    // the first gc, and gc has something to keep.
    let run = Xr::new(["build", "-m", "other.toml", "-q"]).dir(&dir).run();
    assert!(run.ok, "{}{}", run.stdout, run.stderr);
    for round in 0..4 {
        let build = spawn(&dir, &["build", "-m", "xr.toml", "-q"], &[]);
        let mut build = build;
        let mut collections = 0;
        while build.try_wait().unwrap().is_none() {
            let run = Xr::new(["store", "gc", "-m", "other.toml"]).dir(&dir).run();
            assert!(run.ok, "round {round}: {}{}", run.stdout, run.stderr);
            collections += 1;
        }
        let (code, text) = finish(build);
        assert_eq!(code, Some(0), "round {round}: {text}");
        assert!(collections > 0);
        assert_store_whole(&dir);
    }
}
