//! The viewer in a window, on a virtual X display (Xvfb) started by each
//! test: both back ends present what they render headless, survive resizes
//! (to another size, to 0 × 0 and back) with no Vulkan validation message,
//! swap an edited shader in live and keep the last good one through a
//! broken edit; with no display the window path fails clearly and the
//! headless path still renders.

use materials::tile_centre;
use std::{
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    process::Stdio,
    sync::mpsc,
    time::{Duration, Instant},
};
use xr_tests::{Xr, materials_built, xvfb::Xvfb};

/// The scene's size in the tests: the window's, the render target's and the
/// headless image's, so that presenting is a 1:1 copy.
const SIZE: &str = "192";

/// The viewer on the materials store in `dir`, on `display` (none: DISPLAY unset).
fn viewer(dir: &Path, display: Option<&Xvfb>, backend: &str) -> Xr {
    let viewer = Xr::sample("viewer", ["--store", "store", "--size", SIZE, "--backend", backend])
        .dir(dir)
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WAYLAND_SOCKET")
        .software_gl();
    match display {
        Some(xvfb) => viewer.env("DISPLAY", &xvfb.display),
        None => viewer.env_remove("DISPLAY"),
    }
}

/// The viewer in a window on `xvfb`, under the validation layers, not
/// watching its sources, drawing `frames` frames and writing the last to
/// `screenshot`.
fn in_window(dir: &Path, xvfb: &Xvfb, backend: &str, frames: &str, screenshot: &Path) -> Xr {
    viewer(dir, Some(xvfb), backend)
        .args(["--no-watch", "--validation", "--frames", frames, "--screenshot"])
        .arg(screenshot)
}

/// Runs the viewer; it must succeed. What it printed.
fn run(viewer: Xr) -> String {
    viewer.ok().stdout
}

fn pixels(path: &Path) -> image::RgbaImage {
    image::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).to_rgba8()
}

/// The headless render of the scene on `backend`.
fn headless(dir: &Path, backend: &str) -> image::RgbaImage {
    let file = dir.join(format!("headless-{backend}.png"));
    run(viewer(dir, None, backend).args(["--headless", "--no-watch", "--screenshot"]).arg(&file));
    pixels(&file)
}

#[test]
fn each_back_end_presents_in_a_window_what_it_renders_headless() {
    let dir = materials_built("viewer-present");
    let xvfb = Xvfb::start();
    // wgpu presents through its own surface on Vulkan (xr-rhi-wgpu).
    for backend in ["opengl", "vulkan", "wgpu"] {
        let file = dir.join(format!("window-{backend}.png"));
        let stdout = run(in_window(&dir, &xvfb, backend, "5", &file));
        assert!(stdout.contains("5 frames presented, 0 skipped"), "{stdout}");
        let (window, expected) = (pixels(&file), headless(&dir, backend));
        assert_eq!(window.dimensions(), (192, 192));
        // The window's image is read back from the window's own buffer (GL
        // back buffer, Vulkan swapchain image, wgpu surface texture): a 1:1 blit of the same
        // render target, so every byte is the headless one (tolerance 0).
        assert!(window == expected, "{backend}: the presented image differs from the headless render");
        let background = *window.get_pixel(2, 2);
        for tile in 0..9 {
            let (x, y) = tile_centre(tile);
            assert_ne!(*window.get_pixel(x, y), background, "{backend}: tile {tile} is not drawn");
        }
    }
    // The window drew Vulkan pipelines (the layers predate shader objects),
    // the headless run shader objects from SPIR-V, writing their binaries
    // back; a second headless run loads those binaries: the same bytes.
    let file = dir.join("headless-vulkan-binaries.png");
    let said = run(viewer(&dir, None, "vulkan").args(["--headless", "--no-watch", "--screenshot"]).arg(&file));
    let loads: Vec<&str> = said.lines().filter(|l| l.contains(" vk-spirv ")).collect();
    assert!(!loads.is_empty() && loads.iter().all(|l| l.contains(" device-binary ")), "{said}");
    assert!(pixels(&file) == pixels(&dir.join("headless-vulkan.png")), "the device binaries draw other pixels");
}

#[test]
fn resizing_to_another_size_to_nothing_and_back_keeps_presenting() {
    let dir = materials_built("viewer-resize");
    let xvfb = Xvfb::start();
    for backend in ["opengl", "vulkan", "wgpu"] {
        let end = dir.join(format!("resized-{backend}.png"));
        // 0x0 stands for a minimised window: X11 has none of zero size, so
        // the viewer gives the device what a Resized(0 × 0) event would.
        let resizes = ["--resize", "100x60@3", "--resize", "0x0@6", "--resize", "300x200@12", "--resize", "192x192@20"];
        let stdout = run(in_window(&dir, &xvfb, backend, "30", &end).args(resizes));
        // Drawn frames 7 to 12 had no window area (fewer if the X server's
        // answer to the first resize came after the 0x0).
        let skipped = stdout
            .lines()
            .find_map(|l| l.strip_prefix("30 frames presented, "))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse::<u32>().ok());
        assert!(skipped.is_some_and(|n| (1..=6).contains(&n)), "{stdout}");
        assert!(pixels(&end) == headless(&dir, backend), "{backend}: after the resizes the image is not the scene");

        // Mid-way, the window's image has the window's new size: the
        // surface (GL) or swapchain (Vulkan) followed the window.
        let middle = dir.join(format!("middle-{backend}.png"));
        run(viewer(&dir, Some(&xvfb), backend)
            .args(["--no-watch", "--validation", "--frames", "16", "--resize", "300x200@12", "--screenshot"])
            .arg(&middle));
        let image = pixels(&middle);
        assert_eq!(image.dimensions(), (300, 200), "{backend}");
        assert_ne!(*image.get_pixel(150, 100), *image.get_pixel(1, 1), "{backend}: the scaled scene is not drawn");
    }
}

/// Lines the viewer prints, as they come.
struct Lines {
    receiver: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Lines {
    /// The next line containing `text`, within a minute.
    fn wait_for(&mut self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.receiver.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(text) {
                        return line;
                    }
                }
                Err(_) => panic!("the viewer never printed '{text}'; it printed:\n{}", self.seen.join("\n")),
            }
        }
    }
}

/// Frames between the change being seen and the swap, from a reload line.
fn frames_waited(line: &str) -> u64 {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "frames").expect("a frame count");
    words[at - 1].trim_start_matches(", ").parse().expect("a number")
}

fn hot_reload(backend: &str) {
    let dir = materials_built(&format!("viewer-reload-{backend}"));
    let xvfb = Xvfb::start();
    let captures = dir.join("captures");
    let mut child = viewer(&dir, Some(&xvfb), backend)
        .args(["--manifest", "xr.toml", "--exit-after-reloads", "2", "--captures"])
        .arg(&captures)
        .command()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the viewer starts");
    let stdout = child.stdout.take().expect("stdout");
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    let mut lines = Lines { receiver, seen: Vec::new() };
    lines.wait_for("ready.png");
    let ready = pixels(&captures.join("ready.png"));

    // A syntax error: reported once, at its file and line; the last good
    // program keeps drawing, and the viewer keeps running.
    let fragment: PathBuf = dir.join("shaders/unlit.frag");
    let good = std::fs::read_to_string(&fragment).expect("the shader");
    let statement = "out_color = vec4(color * GAIN + BIAS, 1.0);";
    assert!(good.contains(statement), "the sample's unlit.frag changed; update this test");
    std::fs::write(&fragment, good.replace(statement, "out_color = vec4(color * GAIN + BIAS, 1.0)")).unwrap();
    let failed = lines.wait_for("reload 1: failed unlit");
    let errors: Vec<&String> = lines.seen.iter().filter(|l| l.starts_with("reload 1: error")).collect();
    assert_eq!(errors.len(), 1, "one error, once: {errors:?}");
    assert!(errors[0].contains("unlit.frag:16:") && errors[0].contains("syntax error"), "{}", errors[0]);
    assert!(!failed.contains("swapped unlit"), "{failed}");
    lines.wait_for("reload-1.png");
    assert!(pixels(&captures.join("reload-1.png")) == ready, "a broken edit changed the pixels");

    // Fixed, with another colour: swapped in; only the unlit row changes.
    std::fs::write(&fragment, good.replace(statement, "out_color = vec4(1.0 - color * GAIN + BIAS, 1.0);")).unwrap();
    let swapped = lines.wait_for("reload 2:");
    assert!(swapped.contains("swapped unlit") && !swapped.contains("failed"), "{swapped}");
    // The rebuild starts once the file has been quiet for 40 ms, and the
    // swap is drawn in the very next frame.
    assert!(frames_waited(&swapped) <= 2000, "{swapped}");
    lines.wait_for("reload-2.png");
    let after = pixels(&captures.join("reload-2.png"));
    for tile in 0..9 {
        let (x, y) = tile_centre(tile);
        let (before, now) = (ready.get_pixel(x, y), after.get_pixel(x, y));
        if tile < 3 {
            assert_ne!(before, now, "{backend}: unlit tile {tile} did not change");
        } else {
            assert_eq!(before, now, "{backend}: tile {tile} of another program changed");
        }
    }
    let status = child.wait().expect("the viewer exits");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr).ok();
    assert!(status.success(), "{}\n{stderr}", lines.seen.join("\n"));
}

#[test]
fn an_edited_shader_is_swapped_in_live_on_opengl_and_a_broken_one_keeps_the_last_good() {
    hot_reload("opengl");
}

#[test]
fn an_edited_shader_is_swapped_in_live_on_vulkan_and_a_broken_one_keeps_the_last_good() {
    hot_reload("vulkan");
}

#[test]
fn with_no_display_the_window_path_fails_clearly_and_headless_still_renders() {
    let dir = materials_built("viewer-no-display");
    for backend in ["opengl", "vulkan"] {
        let output = viewer(&dir, None, backend).args(["--no-watch", "--frames", "2"]).run();
        let stderr = output.stderr;
        assert!(!output.ok, "{backend}: a window opened with no display");
        assert!(stderr.contains("DISPLAY is not set") && stderr.contains("--headless"), "{stderr}");
        let image = headless(&dir, backend);
        let (x, y) = tile_centre(4);
        assert_ne!(*image.get_pixel(x, y), *image.get_pixel(1, 1), "{backend}: headless drew nothing");
    }
}

#[test]
fn presenting_or_resizing_a_headless_device_is_an_error_naming_why() {
    let registry = xr_tests::registry();
    for kind in [xr_device::DeviceKind::OPENGL, xr_device::DeviceKind::VULKAN, materials::WGPU, materials::WGPU_GL] {
        let mut device = registry.open_device(kind, &xr_device::DeviceOptions::default()).expect("a device");
        let target = device.create_render_target(8, 8).into_result().expect("a target");
        let error = device.present(target, true).into_result().expect_err("presented with no window");
        assert!(error.to_string().contains("headless"), "{kind:?}: {error}");
        let error = device.resize_window(4, 4).into_result().expect_err("resized with no window");
        assert!(error.to_string().contains("no window"), "{kind:?}: {error}");
    }
}

#[test]
fn auto_picks_a_back_end_at_start_up_and_says_why() {
    let dir = materials_built("viewer-auto");
    let xvfb = Xvfb::start();
    let stdout = run(viewer(&dir, Some(&xvfb), "auto").args(["--frames", "3", "--no-watch"]));
    // Here both devices are Mesa's software renderers: Vulkan goes first
    // among equals, and the line names what else was found.
    let line = stdout.lines().find(|l| l.starts_with("--backend auto: ")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.contains("vulkan on") && line.contains("also found: opengl on"), "{line}");
    assert!(stdout.contains("compatible-object vk-spirv"), "{stdout}");

    // A manifest that is not there turns hot reload off with a warning; the scene still draws.
    let output = viewer(&dir, Some(&xvfb), "opengl").args(["--frames", "3", "--manifest", "missing.toml"]).run();
    let stderr = output.stderr;
    assert!(output.ok, "{stderr}");
    assert!(stderr.contains("hot reload is off") && stderr.contains("missing.toml"), "{stderr}");
}
