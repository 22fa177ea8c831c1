//! A shared remote cache for XR stores, on servers teams already run.
//!
//! A [`Remote`] keeps two kinds of entries, laid out as Bazel's HTTP
//! remote cache lays them out so that the same server can serve both:
//!
//! - `cas/<key>`: an object, addressed by its key, in the store's own file
//!   form (header with length and BLAKE3, then the payload), so that a
//!   fetched object is checked exactly as a local one is;
//! - `ac/<key>`: an action record (what a build of one recipe produced),
//!   in the same checked form; its contents belong to the caller.
//!
//! Objects are immutable and content-addressed: two machines uploading one
//! object key upload the same bytes, so concurrent uploads are harmless. An
//! action record is the last uploader's (two machines may have made
//! different objects for one action, e.g. with their own file names in debug
//! information); either is a correct build of that action.
//!
//! **A remote that fails costs time, never a build or a wrong object.**
//! Every failure — server down, a timeout, a 5xx, a refused login — logs
//! one warning and turns the remote off for the rest of the process, so
//! that the caller builds locally without waiting on a dead server again
//! and again. An entry that fails its checksum logs a warning naming it
//! and reads as absent (the caller rebuilds it and, uploading, repairs
//! the server's copy). Nothing here returns bytes that did not pass the
//! checksum.
//!
//! The storage layer is OpenDAL: `http(s)://` speaks WebDAV (GET and PUT,
//! as Bazel's HTTP cache does; the server must create parent paths on PUT),
//! `redis(s)://` speaks Redis, and with the `s3` / `gcs` features
//! `s3://bucket/prefix` and `gs://bucket/prefix` reach object stores.
//! Credentials come from the environment or a netrc file ([`credentials`]),
//! never from a manifest.

pub mod credentials;

use opendal::{ErrorKind, Operator, blocking, layers::TimeoutLayer};
use std::{
    path::Path,
    sync::atomic::{AtomicBool, AtomicU64, Ordering},
    time::Duration,
};
use xr_store::{ObjectKey, object as store};

/// The environment variable that names a remote when `--remote` does not.
pub const REMOTE_VAR: &str = "XR_REMOTE";
/// The environment variable of the per-operation timeout, in seconds.
pub const TIMEOUT_VAR: &str = "XR_REMOTE_TIMEOUT";
/// The timeout when [`TIMEOUT_VAR`] is unset: long enough for a large
/// object over a slow link, short enough that a hung server costs little.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// What a remote keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An object, by the key of its bytes.
    Object,
    /// An action record, by the key of the recipe and inputs it records.
    Action,
}

impl Kind {
    fn dir(self) -> &'static str {
        match self {
            Kind::Object => "cas/",
            Kind::Action => "ac/",
        }
    }
}

/// How to reach a remote.
#[derive(Clone, Debug)]
pub struct RemoteConfig {
    /// `http(s)://host[:port]/path`, `redis(s)://host[:port][/db]`, and with
    /// features `s3://bucket/prefix`, `gs://bucket/prefix`.
    pub url: String,
    /// User and password, if the server wants them.
    pub login: Option<credentials::Login>,
    /// The longest any one operation may take.
    pub timeout: Duration,
}

impl RemoteConfig {
    /// The remote at `url`, with credentials from the environment or a netrc
    /// file and the timeout of [`TIMEOUT_VAR`].
    pub fn from_url(url: &str) -> Result<Self, RemoteError> {
        let parsed = parse(url)?;
        let timeout = match xr_env::var(TIMEOUT_VAR) {
            Some(text) => text
                .parse::<f64>()
                .ok()
                .filter(|s| *s > 0.0)
                .and_then(|s| Duration::try_from_secs_f64(s).ok())
                .ok_or_else(|| RemoteError::BadSetting {
                    name: TIMEOUT_VAR,
                    reason: format!("'{text}' is not a positive number of seconds"),
                })?,
            None => DEFAULT_TIMEOUT,
        };
        Ok(Self { url: url.to_owned(), login: credentials::login_for(&parsed)?, timeout })
    }

    /// The remote named by [`REMOTE_VAR`], if it is set and not empty.
    pub fn from_env() -> Result<Option<Self>, RemoteError> {
        match xr_env::var(REMOTE_VAR) {
            Some(url) if !url.trim().is_empty() => Self::from_url(url.trim()).map(Some),
            _ => Ok(None),
        }
    }
}

/// Why a remote could not be set up (reaching it later never errors: see
/// the crate documentation).
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The URL does not name a remote this build can reach.
    #[error("remote '{url}': {reason}")]
    BadUrl {
        /// The URL, without credentials.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A setting in the environment is not usable.
    #[error("{name}: {reason}")]
    BadSetting {
        /// The variable or file.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The storage layer refused the configuration.
    #[error("remote {url}: {source}")]
    Setup {
        /// The URL, without credentials.
        url: String,
        /// The storage layer's error.
        source: opendal::Error,
    },
    /// The remote could not be reached or answered with an error, where a
    /// caller asked to know (`xr store verify`), not only to be warned.
    #[error("{url}: {doing}{source}")]
    Unreachable {
        /// The URL, without credentials.
        url: String,
        /// What was being done (`listing cas: `), or nothing.
        doing: String,
        /// The storage layer's error.
        source: Box<opendal::Error>,
    },
}

/// What a remote did in this process, in objects (action records are
/// bookkeeping and not counted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RemoteStats {
    /// Objects fetched whole.
    pub fetched: u64,
    /// Entries asked for that the remote does not have.
    pub missing: u64,
    /// Entries that failed their checksum.
    pub corrupt: u64,
    /// Objects uploaded.
    pub uploaded: u64,
    /// Object payload bytes fetched and uploaded.
    pub bytes: u64,
}

/// One entry as [`Remote::check`] found it.
#[derive(Debug, PartialEq, Eq)]
pub enum Checked {
    /// Present and whole: its payload (for the caller to check against
    /// what the key names).
    Whole(Vec<u8>),
    /// Not on the remote.
    Absent,
    /// Present, but its bytes do not match their checksum.
    Corrupt(String),
}

/// What reading one entry found.
enum Read {
    /// Whole: its payload.
    Payload(Vec<u8>),
    /// Not there.
    Absent,
    /// An entry whose bytes fail their checksum.
    Damaged(store::StoreError),
    /// Bytes that are no entry at all (no object header).
    NotAnEntry(store::StoreError),
}

/// A shared remote cache (see the crate documentation).
pub struct Remote {
    operator: blocking::Operator,
    /// The blocking operator runs its I/O here; dropped after it.
    _runtime: tokio::runtime::Runtime,
    url: String,
    failed: AtomicBool,
    fetched: AtomicU64,
    missing: AtomicU64,
    corrupt: AtomicU64,
    uploaded: AtomicU64,
    bytes: AtomicU64,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote").field("url", &self.url).finish_non_exhaustive()
    }
}

impl Remote {
    /// Sets up the remote of `config`; nothing is sent until it is used.
    pub fn open(config: &RemoteConfig) -> Result<Self, RemoteError> {
        let parsed = parse(&config.url)?;
        let url = display_url(&parsed);
        let setup = |source| RemoteError::Setup { url: url.clone(), source };
        opendal::install_default();
        let operator = operator_for(&parsed, config.login.as_ref(), &url)?
            .layer(TimeoutLayer::new().with_timeout(config.timeout).with_io_timeout(config.timeout));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("xr-remote")
            .enable_all()
            .build()
            .map_err(|e| RemoteError::BadSetting { name: "xr-remote runtime", reason: e.to_string() })?;
        let operator = {
            let _inside = runtime.enter();
            blocking::Operator::new(operator).map_err(setup)?
        };
        Ok(Self {
            operator,
            _runtime: runtime,
            url,
            failed: AtomicBool::new(false),
            fetched: AtomicU64::new(0),
            missing: AtomicU64::new(0),
            corrupt: AtomicU64::new(0),
            uploaded: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        })
    }

    /// The remote at `url`, else the one [`REMOTE_VAR`] names, else none:
    /// what a `--remote` flag means.
    pub fn from_flag_or_env(url: Option<&str>) -> Result<Option<Self>, RemoteError> {
        let config = match url {
            Some(url) => Some(RemoteConfig::from_url(url)?),
            None => RemoteConfig::from_env()?,
        };
        config.map(|c| Self::open(&c)).transpose()
    }

    /// The URL, without credentials.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether the remote is still in use (no failure in this process).
    pub fn is_usable(&self) -> bool {
        !self.failed.load(Ordering::Relaxed)
    }

    /// What the remote did so far.
    pub fn stats(&self) -> RemoteStats {
        RemoteStats {
            fetched: self.fetched.load(Ordering::Relaxed),
            missing: self.missing.load(Ordering::Relaxed),
            corrupt: self.corrupt.load(Ordering::Relaxed),
            uploaded: self.uploaded.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
        }
    }

    /// The payload of `key`, checked; `None` when the remote does not have
    /// it, has it corrupt (warned), or is unusable (warned once).
    pub fn get(&self, kind: Kind, key: &ObjectKey) -> Option<Vec<u8>> {
        if !self.is_usable() {
            return None;
        }
        match self.read(kind, key) {
            Ok(Read::Payload(payload)) => {
                if kind == Kind::Object {
                    self.fetched.fetch_add(1, Ordering::Relaxed);
                    self.bytes.fetch_add(payload.len() as u64, Ordering::Relaxed);
                }
                Some(payload)
            }
            Ok(Read::Damaged(e)) => {
                self.corrupt.fetch_add(1, Ordering::Relaxed);
                tracing::warn!("{e}; not used, built here instead");
                None
            }
            Ok(Read::NotAnEntry(_)) => {
                // Not a damaged entry but no entry at all: a wrong URL, or a
                // proxy's page. Every other answer would be the same.
                let address = self.address(&entry_path(kind, key));
                self.fail_with(&format!("reading from it failed: {address} is not an XR entry (is the URL right?)"));
                None
            }
            Ok(Read::Absent) => {
                self.missing.fetch_add(1, Ordering::Relaxed);
                None
            }
            Err(e) => {
                self.fail("reading from", &e);
                None
            }
        }
    }

    /// One entry, read and checked.
    fn read(&self, kind: Kind, key: &ObjectKey) -> Result<Read, opendal::Error> {
        let path = entry_path(kind, key);
        let bytes = match self.operator.read(&path) {
            Ok(buffer) => buffer.to_vec(),
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Read::Absent),
            Err(e) => return Err(e),
        };
        let is_object = store::is_object(&bytes);
        Ok(match store::decode(Path::new(&self.address(&path)), bytes) {
            Ok(payload) => Read::Payload(payload),
            Err(e) if is_object => Read::Damaged(e),
            Err(e) => Read::NotAnEntry(e),
        })
    }

    /// Uploads `payload` under `key`; whether it was uploaded (a failure is
    /// warned once and turns the remote off).
    pub fn put(&self, kind: Kind, key: &ObjectKey, payload: &[u8]) -> bool {
        if !self.is_usable() {
            return false;
        }
        match self.operator.write(&entry_path(kind, key), store::encode(payload)) {
            Ok(_) => {
                if kind == Kind::Object {
                    self.uploaded.fetch_add(1, Ordering::Relaxed);
                    self.bytes.fetch_add(payload.len() as u64, Ordering::Relaxed);
                }
                true
            }
            Err(e) => {
                self.fail("uploading to", &e);
                false
            }
        }
    }

    /// How `key` is on the remote, for `xr store verify`: unlike [`get`],
    /// a failure to reach the remote is an error here.
    ///
    /// [`get`]: Self::get
    pub fn check(&self, kind: Kind, key: &ObjectKey) -> Result<Checked, RemoteError> {
        match self.read(kind, key).map_err(|source| self.unreachable("", source))? {
            Read::Payload(payload) => Ok(Checked::Whole(payload)),
            Read::Damaged(e) | Read::NotAnEntry(e) => Ok(Checked::Corrupt(e.to_string())),
            Read::Absent => Ok(Checked::Absent),
        }
    }

    /// Every key of `kind` on the remote, or `None` if the remote cannot
    /// list (Redis); a failure to reach it is an error.
    pub fn keys(&self, kind: Kind) -> Result<Option<Vec<ObjectKey>>, RemoteError> {
        if !self.operator.info().capability().list {
            return Ok(None);
        }
        match self.operator.list(kind.dir()) {
            Ok(entries) => {
                let mut keys: Vec<ObjectKey> = entries.iter().filter_map(|e| ObjectKey::from_hex(e.name())).collect();
                keys.sort();
                Ok(Some(keys))
            }
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(Some(Vec::new())),
            Err(e) => Err(self.unreachable(&format!("listing {}: ", kind.dir()), e)),
        }
    }

    fn unreachable(&self, doing: &str, source: opendal::Error) -> RemoteError {
        RemoteError::Unreachable { url: self.url.clone(), doing: doing.to_owned(), source: Box::new(source) }
    }

    /// Removes `key` (for `xr store verify --delete-corrupt`).
    pub fn remove(&self, kind: Kind, key: &ObjectKey) -> Result<(), RemoteError> {
        self.operator.delete(&entry_path(kind, key)).map_err(|e| self.unreachable("", e))
    }

    /// Where an entry is, for messages.
    pub fn address(&self, path: &str) -> String {
        format!("{}/{path}", self.url.trim_end_matches('/'))
    }

    fn fail(&self, doing: &str, error: &opendal::Error) {
        self.fail_with(&format!("{doing} it failed ({})", describe(error)));
    }

    /// Turns the remote off for the rest of the process, warning once.
    fn fail_with(&self, what: &str) {
        if !self.failed.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "remote cache {}: {what}; building locally, without the remote for the rest of this run",
                self.url
            );
        }
    }
}

fn entry_path(kind: Kind, key: &ObjectKey) -> String {
    format!("{}{}", kind.dir(), key.hex())
}

/// An OpenDAL error in a line: the HTTP status where there is one, said
/// plainly, then the first line of its message (without the request, which
/// can carry an Authorization header).
fn describe(error: &opendal::Error) -> String {
    let message = error.to_string();
    let first: String = message.lines().next().unwrap_or_default().chars().take(240).collect();
    // OpenDAL keeps the response's status only in its message.
    let status =
        message.split_once("status: ").and_then(|(_, rest)| rest.get(..3)).and_then(|code| code.parse::<u16>().ok());
    let plainly = match (status, error.kind()) {
        (Some(code @ (401 | 403)), _) => format!("HTTP {code}: the server refused the credentials"),
        (Some(code), _) => format!("HTTP {code}"),
        (None, ErrorKind::PermissionDenied) => "the server refused the credentials".to_owned(),
        (None, kind) => kind.to_string(),
    };
    format!("{plainly}; {first}")
}

fn parse(url: &str) -> Result<url::Url, RemoteError> {
    url::Url::parse(url).map_err(|e| RemoteError::BadUrl { url: redact(url), reason: e.to_string() })
}

/// A URL that did not parse, with anything between `://` and `@` hidden:
/// it may be a user and password.
fn redact(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.rsplit_once('@') {
            Some((_, host)) => format!("{scheme}://…@{host}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// The URL without user or password, for messages.
fn display_url(url: &url::Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.to_string().trim_end_matches('/').to_owned()
}

fn operator_for(url: &url::Url, login: Option<&credentials::Login>, shown: &str) -> Result<Operator, RemoteError> {
    let bad = |reason: &str| RemoteError::BadUrl { url: shown.to_owned(), reason: reason.to_owned() };
    let setup = |source| RemoteError::Setup { url: shown.to_owned(), source };
    let host = url.host_str().filter(|h| !h.is_empty());
    match url.scheme() {
        "http" | "https" => {
            let host = host.ok_or_else(|| bad("no host"))?;
            let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
            let mut builder = opendal::services::Webdav::default()
                .endpoint(&format!("{}://{host}{port}", url.scheme()))
                .root(&format!("{}/", url.path().trim_end_matches('/')))
                // Bazel's HTTP cache protocol: PUT creates what it needs.
                .disable_create_dir(true);
            if let Some(login) = login {
                builder = builder.username(&login.user).password(&login.password);
            }
            Operator::new(builder).map_err(setup)
        }
        "redis" | "rediss" => {
            let host = host.ok_or_else(|| bad("no host"))?;
            let port = url.port().unwrap_or(6379);
            let mut builder =
                opendal::services::Redis::default().endpoint(&format!("{}://{host}:{port}", url.scheme())).root("/xr/");
            match url.path().trim_matches('/') {
                "" => {}
                db => builder = builder.db(db.parse().map_err(|_| bad("the path must be a database number"))?),
            }
            if let Some(login) = login {
                if !login.user.is_empty() {
                    builder = builder.username(&login.user);
                }
                builder = builder.password(&login.password);
            }
            Operator::new(builder).map_err(setup)
        }
        #[cfg(feature = "s3")]
        "s3" => {
            // Region, endpoint and keys come from the AWS_* environment.
            let builder = opendal::services::S3::default()
                .bucket(host.ok_or_else(|| bad("no bucket"))?)
                .root(&format!("{}/", url.path().trim_end_matches('/')));
            Operator::new(builder).map_err(setup)
        }
        #[cfg(feature = "gcs")]
        "gs" => {
            // Credentials from GOOGLE_APPLICATION_CREDENTIALS.
            let builder = opendal::services::Gcs::default()
                .bucket(host.ok_or_else(|| bad("no bucket"))?)
                .root(&format!("{}/", url.path().trim_end_matches('/')));
            Operator::new(builder).map_err(setup)
        }
        #[cfg(not(feature = "s3"))]
        "s3" => Err(bad("this xr was built without S3 support (build it with --features xr-remote/s3)")),
        #[cfg(not(feature = "gcs"))]
        "gs" => Err(bad("this xr was built without GCS support (build it with --features xr-remote/gcs)")),
        other => Err(bad(&format!("unknown scheme '{other}' (http, https, redis, rediss, s3, gs)"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_credentials() {
        let url = parse("https://alice:secret@cache.example:8080/xr/").unwrap();
        assert_eq!(display_url(&url), "https://cache.example:8080/xr");
        let url = parse("redis://:secret@127.0.0.1:6379/2").unwrap();
        assert_eq!(display_url(&url), "redis://127.0.0.1:6379/2");
    }

    #[test]
    fn a_url_that_does_not_parse_is_shown_without_its_password() {
        let config = RemoteConfig {
            url: "https://alice:hunter2@cache:99999/x".to_owned(),
            login: None,
            timeout: DEFAULT_TIMEOUT,
        };
        let error = Remote::open(&config).unwrap_err().to_string();
        assert!(error.contains("https://…@cache:99999/x") && !error.contains("hunter2"), "{error}");
    }

    #[test]
    fn unusable_urls_are_errors_naming_them() {
        for (url, expected) in [
            ("ftp://host/x", "unknown scheme 'ftp'"),
            ("not a url", "relative URL"),
            ("redis://host/notanumber", "database number"),
            ("http://:8080/x", "empty host"),
            ("s3://bucket/prefix", "without S3 support"),
        ] {
            let error = RemoteConfig { url: url.to_owned(), login: None, timeout: DEFAULT_TIMEOUT };
            let error = Remote::open(&error).unwrap_err().to_string();
            assert!(error.contains(expected), "{url}: {error}");
        }
    }

    #[test]
    fn entries_live_where_bazels_http_cache_keeps_them() {
        let key = ObjectKey::from_parts([b"x".as_slice()]);
        assert_eq!(entry_path(Kind::Object, &key), format!("cas/{}", key.hex()));
        assert_eq!(entry_path(Kind::Action, &key), format!("ac/{}", key.hex()));
    }

    #[test]
    fn a_remote_nobody_answers_is_warned_once_then_left_alone() {
        // A port nothing listens on: every call is refused at once.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let config = RemoteConfig {
            url: format!("http://127.0.0.1:{port}/cache"),
            login: None,
            timeout: Duration::from_secs(5),
        };
        let remote = Remote::open(&config).unwrap();
        let key = ObjectKey::from_parts([b"k".as_slice()]);
        assert!(remote.is_usable());
        assert_eq!(remote.get(Kind::Object, &key), None);
        assert!(!remote.is_usable(), "the first failure turns the remote off");
        assert!(!remote.put(Kind::Object, &key, b"payload"));
        assert_eq!(remote.stats(), RemoteStats::default());
        assert!(remote.check(Kind::Object, &key).is_err(), "verify reports what get only warns about");
    }
}
