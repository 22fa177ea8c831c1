//! A virtual X display for the window tests: Debian's `xvfb`, started by
//! the test on a display number of its own and stopped when dropped.

use std::{
    path::Path,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

/// A running Xvfb.
pub struct Xvfb {
    child: Child,
    /// The value for `DISPLAY`, e.g. `:117`.
    pub display: String,
}

impl Xvfb {
    /// Starts Xvfb on the first free display number from a per-process
    /// start, and waits until it accepts connections.
    pub fn start() -> Self {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        for _ in 0..50 {
            let number = 100 + (std::process::id() % 400) * 10 + NEXT.fetch_add(1, Ordering::Relaxed) % 10;
            if Path::new(&format!("/tmp/.X{number}-lock")).exists() {
                continue;
            }
            let display = format!(":{number}");
            let child = Command::new("Xvfb")
                .args([display.as_str(), "-screen", "0", "1024x768x24", "-nolisten", "tcp"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("Xvfb does not start ({e}): scripts/setup.sh installs Debian's xvfb"));
            let mut xvfb = Self { child, display };
            let socket = format!("/tmp/.X11-unix/X{number}");
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(20) {
                if Path::new(&socket).exists() {
                    return xvfb;
                }
                if let Ok(Some(_)) = xvfb.child.try_wait() {
                    break; // lost the display number to another process: try the next
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            xvfb.stop();
        }
        panic!("no Xvfb display could be started");
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        self.stop();
    }
}
