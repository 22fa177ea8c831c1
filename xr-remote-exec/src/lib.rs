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

pub mod cas;
pub mod connection;
pub mod digest;
pub mod execute;
pub mod platform;
pub mod tree;

pub use bazel_remote_apis::build::bazel::remote::execution::v2 as proto;
pub use connection::{Connection, Endpoint, EndpointError};
pub use execute::{Action, ExecError, Executed, ExecutorConfig, Input, RemoteExecutor, Stats};
