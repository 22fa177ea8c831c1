//! Where `xr` finds plugins with no variable set: the user's directory, an
//! installation's `lib/xr/plugins` beside its `bin` (laid out by
//! `scripts/install.sh`), next to itself; a plugin found twice is taken from
//! the first directory in that order.

use std::path::Path;
use std::process::Command;
use xr_tests::{TestDir, materials_copy, plugins, temp_dir};

/// A prefix installed by `scripts/install.sh` from the debug build.
fn installed(label: &str) -> TestDir {
    let prefix = temp_dir(label);
    xr_tests::plugin_dir(); // built
    let script = xr_tests::workspace_root().join("scripts/install.sh");
    let target = xr_tests::profile_dir().parent().expect("target dir").to_path_buf();
    let output = Command::new("bash")
        .arg(&script)
        .args(["--profile", &xr_tests::profile_name(), "--no-build", "--prefix"])
        .arg(prefix.path())
        .env("CARGO_TARGET_DIR", target)
        .output()
        .expect("install.sh runs");
    assert!(output.status.success(), "install.sh failed:\n{}", String::from_utf8_lossy(&output.stderr));
    for generated in [
        "share/man/man1/xr.1",
        "share/bash-completion/completions/xr",
        "share/zsh/site-functions/_xr",
        "share/fish/vendor_completions.d/xr.fish",
        "share/doc/xr/docs/BUILD.md",
    ] {
        let text = std::fs::read_to_string(prefix.join(generated)).unwrap_or_else(|e| panic!("{generated}: {e}"));
        assert!(text.contains("xr"), "{generated} is empty");
    }
    let man = std::fs::read_to_string(prefix.join("share/man/man1/xr.1")).unwrap();
    assert!(man.contains(".TH xr 1") && man.contains("completions"), "a man page of xr's commands");
    prefix
}

/// `PREFIX/bin/xr ARGS…` in `dir` with a clean environment: no
/// `XR_PLUGIN_PATH`, `HOME` at `home`.
fn run_installed(prefix: &Path, dir: &Path, home: &Path, args: &[&str]) -> (bool, String, String) {
    let output = Command::new(prefix.join("bin/xr"))
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/bin:/bin")
        .env("XR_GL_DEVICE", "software")
        .output()
        .expect("the installed xr runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn an_installed_xr_finds_its_plugins_and_builds_from_any_directory() {
    let prefix = installed("search-installed");
    let home = temp_dir("search-installed-home");
    let elsewhere = temp_dir("search-installed-cwd");
    let (ok, stdout, stderr) = run_installed(&prefix, &elsewhere, &home, &["--version", "-v"]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.starts_with(&format!("xr {}\nplugin interfaces: root module ", env!("CARGO_PKG_VERSION"))),
        "{stdout}"
    );
    for name in plugins() {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("plugin {name} ")))
            .unwrap_or_else(|| panic!("{name} missing:\n{stdout}"));
        assert!(line.contains(&prefix.join("lib/xr/plugins").display().to_string()), "{line}");
    }
    let (ok, stdout, stderr) = run_installed(&prefix, &elsewhere, &home, &["plugins"]);
    assert!(ok, "{stderr}");
    assert_eq!(stdout.matches(&format!("({}/lib", prefix.display())).count(), plugins().len(), "{stdout}");
    assert!(!stdout.contains("skipped"), "no missing optional directory is reported: {stdout}");
    let materials = materials_copy("search-installed-materials");
    let manifest = materials.join("xr.toml");
    let (ok, stdout, stderr) =
        run_installed(&prefix, &elsewhere, &home, &["build", "-q", "-m", manifest.to_str().unwrap()]);
    assert!(ok, "{stdout}{stderr}");
    assert!(stderr.contains("111 built, 0 fetched, 0 reused, 0 failed"), "every artifact built:\n{stderr}");
}

#[test]
fn the_users_directory_comes_before_the_installation_and_a_duplicate_is_named() {
    let prefix = installed("search-duplicate");
    let home = temp_dir("search-duplicate-home");
    let user = home.join(".local/share/xr/plugins");
    std::fs::create_dir_all(&user).unwrap();
    let glsl = xr_tests::library("xr-compiler-glsl");
    std::fs::copy(&glsl, user.join(glsl.file_name().unwrap())).unwrap();
    let output = Command::new(prefix.join("bin/xr"))
        .args(["--version", "-v"])
        .env_clear()
        .env("HOME", home.path())
        .env("XR_LOG", "info")
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    let line = stdout.lines().find(|l| l.starts_with("plugin xr-compiler-glsl ")).unwrap();
    assert!(line.contains(&user.display().to_string()), "the user's copy wins: {line}\n{stdout}");
    assert!(
        stderr.contains("plugin 'xr-compiler-glsl' is in two plugin directories")
            && stderr.contains(&user.display().to_string())
            && stderr.contains(&prefix.join("lib/xr/plugins").display().to_string()),
        "an info line names both:\n{stderr}"
    );
    // XDG_DATA_HOME moves the user's directory.
    let data = temp_dir("search-duplicate-data");
    let output = Command::new(prefix.join("bin/xr"))
        .args(["--version", "-v"])
        .env_clear()
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", data.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().find(|l| l.starts_with("plugin xr-compiler-glsl ")).unwrap();
    assert!(line.contains("lib/xr/plugins"), "{line}");
    assert!(stdout.contains(&format!("plugin directory {}", data.join("xr/plugins").display())), "{stdout}");
}
