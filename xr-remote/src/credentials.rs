//! Where a remote's user and password come from — never a manifest, which
//! is checked in and shared:
//!
//! 1. `XR_REMOTE_USER` and `XR_REMOTE_PASSWORD` (a CI secret, say);
//! 2. the URL's own `user:password@` (as Redis URLs are usually written;
//!    messages never show it);
//! 3. a netrc file: `XR_NETRC`, or `~/.netrc`, the entry of the URL's
//!    host (or its `default` entry), as curl and git read it.

use crate::RemoteError;
use std::{ffi::OsString, path::PathBuf};

/// The user environment variable.
pub const USER_VAR: &str = "XR_REMOTE_USER";
/// The password environment variable.
pub const PASSWORD_VAR: &str = "XR_REMOTE_PASSWORD";
/// The environment variable naming a netrc file other than `~/.netrc`.
pub const NETRC_VAR: &str = "XR_NETRC";

/// A user and password.
#[derive(Clone, PartialEq, Eq)]
pub struct Login {
    /// The user (may be empty: Redis with only `requirepass`).
    pub user: String,
    /// The password.
    pub password: String,
}

impl std::fmt::Debug for Login {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Login").field("user", &self.user).field("password", &"…").finish()
    }
}

/// The login for the URL written `text` (a farm's, say); none for text
/// that is not a URL.
pub fn login_for_text(text: &str) -> Result<Option<Login>, RemoteError> {
    match url::Url::parse(text) {
        Ok(url) => login_for(&url),
        Err(_) => Ok(None),
    }
}

/// The login for `url`, from the first source that has one.
pub fn login_for(url: &url::Url) -> Result<Option<Login>, RemoteError> {
    login_from(url, xr_env::var_os)
}

/// [`login_for`] with the environment read through `env`.
fn login_from(url: &url::Url, env: impl Fn(&str) -> Option<OsString>) -> Result<Option<Login>, RemoteError> {
    let text = |name| env(name).map(|v: OsString| v.to_string_lossy().into_owned());
    let (user, password) = (text(USER_VAR), text(PASSWORD_VAR));
    if user.is_some() || password.is_some() {
        return Ok(Some(Login { user: user.unwrap_or_default(), password: password.unwrap_or_default() }));
    }
    if let Some(password) = url.password() {
        let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
        return Ok(Some(Login { user: decode(url.username()), password: decode(password) }));
    }
    let (file, explicit) = match env(NETRC_VAR) {
        Some(file) => (PathBuf::from(file), true),
        None => match env("HOME") {
            Some(home) => (PathBuf::from(home).join(".netrc"), false),
            None => return Ok(None),
        },
    };
    if !explicit && !file.exists() {
        return Ok(None);
    }
    // The parser's own message can quote a token of the file: a password.
    let netrc = match netrc::Netrc::from_file(&file) {
        Ok(netrc) => netrc,
        Err(netrc::Error::Io(e)) if explicit => {
            return Err(RemoteError::BadSetting { name: NETRC_VAR, reason: format!("{}: {e}", file.display()) });
        }
        Err(_) if explicit => {
            return Err(RemoteError::BadSetting {
                name: NETRC_VAR,
                reason: format!("{}: does not parse as a netrc file", file.display()),
            });
        }
        Err(_) => {
            // Someone's ~/.netrc, written for other tools: not ours to fail on.
            tracing::warn!("{}: does not parse as a netrc file; no credentials from it", file.display());
            return Ok(None);
        }
    };
    let host = url.host_str().unwrap_or_default();
    Ok(netrc
        .hosts
        .get(host)
        .or_else(|| netrc.hosts.get("default"))
        .map(|entry| Login { user: entry.login.clone(), password: entry.password.clone() }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn login(url: &str, env: &[(&str, &str)]) -> Result<Option<Login>, RemoteError> {
        let env: Vec<(String, OsString)> = env.iter().map(|(k, v)| (k.to_string(), OsString::from(v))).collect();
        login_from(&url::Url::parse(url).unwrap(), |name| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    fn netrc(text: &str) -> (PathBuf, String) {
        let file = std::env::temp_dir().join(format!("xr-netrc-{}-{}", std::process::id(), text.len()));
        std::fs::write(&file, text).unwrap();
        let path = file.to_string_lossy().into_owned();
        (file, path)
    }

    #[test]
    fn the_environment_comes_first_then_the_url_then_netrc() {
        let (_file, path) = netrc("machine cache.example login carol password fromnetrc\n");
        let both = [(USER_VAR, "alice"), (PASSWORD_VAR, "fromenv"), (NETRC_VAR, path.as_str())];
        let found = login("https://bob:fromurl@cache.example/x", &both).unwrap().unwrap();
        assert_eq!((found.user.as_str(), found.password.as_str()), ("alice", "fromenv"));
        let found = login("https://bob:from%40url@cache.example/x", &[(NETRC_VAR, path.as_str())]).unwrap().unwrap();
        assert_eq!((found.user.as_str(), found.password.as_str()), ("bob", "from@url"));
        let found = login("https://cache.example/x", &[(NETRC_VAR, path.as_str())]).unwrap().unwrap();
        assert_eq!((found.user.as_str(), found.password.as_str()), ("carol", "fromnetrc"));
        assert_eq!(login("https://elsewhere.example/x", &[(NETRC_VAR, path.as_str())]).unwrap(), None);
        assert!(!format!("{found:?}").contains("fromnetrc"), "Debug never shows a password");
    }

    #[test]
    fn a_netrc_default_entry_serves_every_host_and_a_missing_named_file_is_an_error() {
        let (_file, path) = netrc("default login dave password any\n");
        let found = login("redis://10.0.0.1:6379", &[(NETRC_VAR, path.as_str())]).unwrap().unwrap();
        assert_eq!(found.user, "dave");
        let error = login("https://h/x", &[(NETRC_VAR, "/nonexistent/netrc")]).unwrap_err().to_string();
        assert!(error.contains("XR_NETRC") && error.contains("/nonexistent/netrc"), "{error}");
        // No named file and no ~/.netrc: no login, no error.
        assert_eq!(login("https://h/x", &[("HOME", "/nonexistent")]).unwrap(), None);
    }

    #[test]
    fn a_netrc_that_does_not_parse_never_shows_its_contents() {
        let home = std::env::temp_dir().join(format!("xr-netrc-home-{}", std::process::id()));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join(".netrc"), "machine h login bob password two words\nbogus hunter2\n").unwrap();
        let named = home.join(".netrc").to_string_lossy().into_owned();
        let error = login("https://h/x", &[(NETRC_VAR, named.as_str())]).unwrap_err().to_string();
        assert!(error.contains("does not parse as a netrc file") && !error.contains("hunter2"), "{error}");
        // Found by default in HOME: a warning, and no credentials, not a failed build.
        let home = home.to_string_lossy().into_owned();
        assert_eq!(login("https://h/x", &[("HOME", home.as_str())]).unwrap(), None);
    }
}
