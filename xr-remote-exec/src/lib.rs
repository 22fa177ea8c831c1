//! Compiles on a farm, through the Bazel Remote Execution API v2 (REAPI):
//! the protocol Bazel, Buck2, Reclient and recc speak to Buildbarn,
//! BuildBuddy, NativeLink, EngFlow and BuildGrid.
//!
//! This crate knows nothing of shaders: an [`Action`] is a command line,
//! its environment, the files it reads (under relative paths) and the
//! files it writes. [`RemoteExecutor::execute`] asks the action cache
//! first, sends only the blobs the server lacks, runs the action on the
//! farm and brings back its outputs with their digests checked. The
//! build (`xr_build::remote_exec`) turns a compile into such an action;
//! the bot (`xr-bot`) runs them.
//!
//! - [`digest`]: SHA-256 digests, the function every REAPI server accepts.
//! - [`tree`]: an input root as REAPI `Directory` messages, and staging one
//!   into a directory (the bot's side).
//! - [`connection`]: `grpc://` and `grpcs://` endpoints, credentials.
//! - [`cas`]: the content-addressable store: what is missing, uploads in
//!   batches or streams, downloads.
//! - [`execute`]: the executor, its retries and its counts.
//! - [`persistent_worker`]: Bazel's persistent-worker protocol, for tools
//!   that serve many actions in one process on farms that keep them.

pub mod cas;
pub mod connection;
pub mod digest;
pub mod execute;
pub mod persistent_worker;
pub mod platform;
pub mod tree;

pub use bazel_remote_apis::build::bazel::remote::execution::v2 as proto;
/// The protobuf time stamp of `ExecutedActionMetadata`.
pub use bazel_remote_apis::google::protobuf::Timestamp;

/// Now, as a protobuf time stamp.
pub fn timestamp_now() -> Timestamp {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    Timestamp { seconds: since.as_secs() as i64, nanos: since.subsec_nanos() as i32 }
}

/// Microseconds from `start` to `end`, where both are given and in order.
pub fn micros_between(start: Option<&Timestamp>, end: Option<&Timestamp>) -> Option<u64> {
    let (start, end) = (start?, end?);
    let micros = |t: &Timestamp| t.seconds.checked_mul(1_000_000)?.checked_add(i64::from(t.nanos) / 1000);
    u64::try_from(micros(end)?.checked_sub(micros(start)?)?).ok()
}
pub use connection::{Connection, Endpoint, EndpointError};
pub use execute::{Action, ExecError, Executed, ExecutorConfig, Input, RemoteExecutor, Stats};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_between_two_stamps_is_counted_only_when_both_are_given_and_in_order() {
        let at = |seconds, nanos| Timestamp { seconds, nanos };
        assert_eq!(micros_between(Some(&at(10, 500_000_000)), Some(&at(11, 250_000_000))), Some(750_000));
        assert_eq!(micros_between(Some(&at(11, 0)), Some(&at(10, 0))), None);
        assert_eq!(micros_between(None, Some(&at(10, 0))), None);
        let now = timestamp_now();
        assert!(now.seconds > 1_700_000_000 && (0..1_000_000_000).contains(&now.nanos));
    }
}
