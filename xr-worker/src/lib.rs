//! Compiles in worker processes, so that a compiler that crashes, aborts,
//! overflows its stack, loops or eats the machine's memory fails its own
//! job and not the build.
//!
//! - [`protocol`]: the frames between a build and its workers (one job: the
//!   sources, options and target; one reply: the artifact and diagnostics),
//!   the unit of work a remote executor would run.
//! - [`serve`]: the worker's loop (`xr worker`), and the compile both the
//!   worker and an in-process build run.
//! - [`wire`]: the contract's types as the protocol writes them.
//! - [`pool`]: the build's side: workers started on demand, a job retried
//!   once in a fresh worker when its worker dies, a time limit, a memory cap.

pub mod pool;
pub mod protocol;
pub mod serve;
pub mod wire;

pub use pool::{Lease, Pool, PoolConfig, WorkerCommand, WorkerFailure, signal_name};
pub use protocol::{CompileFailure, Compiled, Job, Reply};
pub use serve::{compile_in_process, compile_whole_in_process};
