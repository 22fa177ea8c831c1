//! Keeps panics inside the plugin.
//!
//! abi_stable aborts the whole process when a panic unwinds through an
//! `extern "C"` boundary, so every plugin entry point runs its body inside
//! [`guard`], which turns a panic into an [`XrError`] of kind
//! [`ErrorKind::Panic`]. A broken plugin then costs one call, not the host.

use crate::error::{ErrorKind, XrError, XrResult};
use abi_stable::std_types::RResult;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs `body`, converting both its error and any panic into an [`XrResult`].
pub fn guard<T>(body: impl FnOnce() -> Result<T, XrError>) -> XrResult<T> {
    match catch_panic(body) {
        Ok(result) => result.into(),
        Err(panic) => RResult::RErr(panic),
    }
}

/// Runs `body`; a panic comes back as an [`ErrorKind::Panic`] error.
pub fn catch_panic<T>(body: impl FnOnce() -> T) -> Result<T, XrError> {
    catch_unwind(AssertUnwindSafe(body)).map_err(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "non-string panic payload".to_owned());
        XrError::new(ErrorKind::Panic, format!("plugin panicked: {what}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panic_becomes_error() {
        let result: XrResult<()> = guard(|| panic!("boom {}", 7));
        let error = result.into_result().unwrap_err();
        assert_eq!(error.kind, ErrorKind::Panic);
        assert_eq!(error.message.as_str(), "plugin panicked: boom 7");
    }

    #[test]
    fn ok_and_err_pass_through() {
        assert_eq!(guard(|| Ok(3)).into_result(), Ok(3));
        let err = guard::<()>(|| Err(XrError::invalid_input("bad"))).into_result().unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidInput);
    }
}
