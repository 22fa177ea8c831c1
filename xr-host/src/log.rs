//! The one reading of `XR_LOG`, the level a user asks of every XR binary
//! (the CLI and the samples alike), so they all parse it the same way.

use tracing::Level;

/// The environment variable naming the tracing level (`error` … `trace`).
pub const LOG_VAR: &str = "XR_LOG";

/// The level `XR_LOG` asks for: `None` when it is unset, warnings where its
/// value is not a level (a typo still shows what went wrong).
pub fn log_level() -> Option<Level> {
    let value = xr_env::presentation_var_os(LOG_VAR)?;
    Some(value.to_str().and_then(|v| v.parse().ok()).unwrap_or(Level::WARN))
}
