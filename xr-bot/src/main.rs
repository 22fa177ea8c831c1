//! `xr-bot`: a worker for any Remote Execution server that hands work out
//! through the Remote Workers API (`google.devtools.remoteworkers.v1test2`,
//! BuildGrid's Bots service).
//!
//! It knows nothing of XR: a lease carries a REAPI Action; the bot stages
//! the action's input root from the farm's CAS into a scratch directory,
//! runs its command there with the action's time limit and nothing of its
//! own environment, sends the outputs, standard output and standard error
//! to the CAS and gives back the ActionResult. The same actions run
//! unchanged on another engine's workers (buildbox-worker, Buildbarn's
//! bb_worker), and the same bot runs any REAPI client's actions.
//!
//! - [`session`]: the bot session (created, renewed, re-created when the
//!   server forgot it), leases taken and answered.
//! - [`run`]: one action, staged, run and collected.
//! - [`persistent`]: workers kept between actions that ask for them
//!   (Bazel's persistent-worker protocol), so a tool starts once.

mod persistent;
mod run;
mod session;

use clap::Parser;
use std::path::PathBuf;

/// Runs the actions a Remote Execution server leases to it.
#[derive(Parser, Debug)]
#[command(name = "xr-bot", version)]
struct Args {
    /// The server: grpc://HOST:PORT, or grpcs://HOST:PORT for TLS.
    #[arg(long, value_name = "URL")]
    farm: String,
    /// The REAPI instance name.
    #[arg(long, default_value = "")]
    instance: String,
    /// Scratch space: a blob cache and one directory per running action.
    #[arg(long, value_name = "DIR")]
    work: PathBuf,
    /// This bot's id (unique per bot; the host name and process id when not given).
    #[arg(long)]
    id: Option<String>,
    /// A platform property this worker offers, KEY=VALUE (repeatable; OSFamily and ISA are added from the host).
    #[arg(long = "property", value_name = "KEY=VALUE")]
    properties: Vec<String>,
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(tracing::Level::INFO).init();
    let args = Args::parse();
    let endpoint = xr_remote_exec::Endpoint::parse(&args.farm)?;
    let connection = xr_remote_exec::Connection::open(&endpoint, &args.instance, None, xr_env::var("XR_BOT_TOKEN"))?;
    let mut extra = Vec::new();
    for property in &args.properties {
        let (key, value) =
            property.split_once('=').ok_or_else(|| anyhow::anyhow!("--property {property}: write KEY=VALUE"))?;
        extra.push((key.to_owned(), value.to_owned()));
    }
    let properties = xr_remote_exec::platform::host_properties(extra);
    let id = args.id.unwrap_or_else(|| format!("{}-{}", host_name(), std::process::id()));
    std::fs::create_dir_all(&args.work)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(session::serve(connection, id, properties, args.work))
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_owned()).unwrap_or_else(|_| "bot".into())
}
