//! Real cache servers for the remote-store tests, each on a free port of
//! 127.0.0.1 in its own directory, stopped when dropped: nginx serving
//! WebDAV behind basic auth (the protocol of Bazel's HTTP remote cache)
//! and redis-server with a password. Both are Debian packages that
//! `scripts/setup.sh` installs.

use std::{
    net::{TcpListener, TcpStream},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

/// The user of the nginx server.
pub const USER: &str = "ci";
/// The password of both servers.
pub const PASSWORD: &str = "s3cret";

/// A running server.
pub struct Server {
    child: Child,
    /// Its directory (configuration, logs, and nginx's files).
    pub dir: crate::TestDir,
    /// The URL to give `--remote`.
    pub url: String,
}

impl Server {
    /// Stops it now (SIGKILL), as a crash would.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Where nginx keeps the entry `kind/hex` (`cas` or `ac`).
    pub fn file_of(&self, kind: &str, hex: &str) -> PathBuf {
        self.dir.join("data/cache").join(kind).join(hex)
    }

    /// The files nginx keeps under `kind` (`cas` or `ac`).
    pub fn files(&self, kind: &str) -> Vec<PathBuf> {
        std::fs::read_dir(self.dir.join("data/cache").join(kind))
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A port nothing listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port()
}

fn wait_for(port: u16, child: &mut Child, log: &Path) {
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the server exited ({status}): {}", std::fs::read_to_string(log).unwrap_or_default());
        }
        assert!(started.elapsed() < Duration::from_secs(20), "the server did not listen on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// nginx with WebDAV (PUT, DELETE; PROPFIND for listing) under `/cache/`,
/// behind basic auth ([`USER`], [`PASSWORD`]); `/unavailable/` answers 503,
/// `/login/` a page that is not a cache entry.
pub fn nginx(label: &str) -> Server {
    let dir = crate::temp_dir(label);
    for sub in ["data", "temp"] {
        std::fs::create_dir_all(dir.join(sub)).expect("nginx dirs");
    }
    std::fs::write(dir.join("htpasswd"), format!("{USER}:{{PLAIN}}{PASSWORD}\n")).expect("htpasswd");
    let port = free_port();
    let module = "/usr/lib/nginx/modules/ngx_http_dav_ext_module.so";
    assert!(Path::new(module).exists(), "{module} is missing: run scripts/setup.sh");
    let config = include_str!("../servers/nginx-webdav.conf")
        .replace("@DIR@", &dir.to_string_lossy())
        .replace("@PORT@", &port.to_string());
    std::fs::write(dir.join("nginx.conf"), config).expect("nginx.conf");
    let mut command = Command::new("nginx");
    command.args(["-p", &dir.to_string_lossy(), "-c", &dir.join("nginx.conf").to_string_lossy()]);
    start(command, dir, port, "error.log", format!("http://127.0.0.1:{port}/cache"))
}

/// redis-server with a password ([`PASSWORD`]), nothing saved to disk.
pub fn redis(label: &str) -> Server {
    let dir = crate::temp_dir(label);
    let port = free_port();
    let mut command = Command::new("redis-server");
    command
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .args(["--requirepass", PASSWORD, "--dir", &dir.to_string_lossy(), "--daemonize", "no"])
        .args(["--logfile", &dir.join("redis.log").to_string_lossy()]);
    start(command, dir, port, "redis.log", format!("redis://127.0.0.1:{port}"))
}

/// Starts a server in `dir`, quiet, and waits until it listens on `port`
/// (naming its `log` if it dies first).
fn start(mut command: Command, dir: crate::TestDir, port: u16, log: &str, url: String) -> Server {
    let program = command.get_program().to_string_lossy().into_owned();
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{program} runs (scripts/setup.sh installs it): {e}"));
    wait_for(port, &mut child, &dir.join(log));
    Server { child, dir, url }
}

/// A server that accepts connections and never answers, for as long as
/// the returned listener's thread runs (the test process).
pub fn silent() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    format!("http://127.0.0.1:{port}/cache")
}
