//! What the benchmarks that run each scenario in a process of its own (so
//! that no in-memory cache carries over) share: the hidden arguments that
//! make a process a child, the child's command line and environment, what
//! it measured read back, and the work directory.

use anyhow::{Context, bail};
use serde::{Serialize, de::DeserializeOwned};
use std::{
    path::{Path, PathBuf},
    process::Command,
};

/// The arguments of a benchmark whose children run on copies of a
/// store: the work directory that holds them, and the children's.
#[derive(clap::Args)]
pub struct StoreCopyArgs<S: clap::ValueEnum + Clone + Send + Sync + 'static> {
    /// Work directory (store copies and Mesa caches); a temporary one by default.
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
    #[command(flatten)]
    pub child: ChildArgs<S>,
}

/// The arguments a benchmark gives a child of its own (hidden): the
/// scenario it runs, and on which store.
#[derive(clap::Args)]
pub struct ChildArgs<S: clap::ValueEnum + Clone + Send + Sync + 'static> {
    /// Internal: run one scenario in this process.
    #[arg(long, hide = true)]
    child: Option<S>,
    /// Internal: the store of a child.
    #[arg(long, hide = true)]
    store: Option<PathBuf>,
}

impl<S: clap::ValueEnum + Clone + Send + Sync + std::fmt::Debug + 'static> ChildArgs<S> {
    /// In a child: runs its scenario on its store with `measure` and
    /// prints what it measured, as JSON; whether this process is a child.
    pub fn run_if_child<T: Serialize>(
        &self,
        measure: impl FnOnce(S, &Path) -> anyhow::Result<T>,
    ) -> anyhow::Result<bool> {
        let Some(scenario) = self.child.clone() else { return Ok(false) };
        let store = self.store.as_deref().context("--store is required with --child")?;
        println!("{}", serde_json::to_string(&measure(scenario, store)?)?);
        Ok(true)
    }

    /// The command that runs `scenario` on `store` in a child: this
    /// program with `leading` (the benchmark's name and its own options).
    pub fn command(leading: &[&str], scenario: &S, store: &Path) -> anyhow::Result<Command> {
        let name = clap::ValueEnum::to_possible_value(scenario)
            .map(|v| v.get_name().to_owned())
            .unwrap_or_else(|| format!("{scenario:?}"));
        let mut command = Command::new(std::env::current_exe()?);
        command.args(leading).arg("--child").arg(name).arg("--store").arg(store);
        Ok(command)
    }
}

/// Mesa's shader cache for `command` in `mesa`: a new directory (cold) or
/// the one an earlier run left (warm).
pub fn mesa_cache<'c>(command: &'c mut Command, mesa: &Path) -> &'c mut Command {
    command.env("MESA_SHADER_CACHE_DIR", mesa).env_remove("MESA_SHADER_CACHE_DISABLE")
}

/// The environment of a Vulkan run: the Mesa cache in `mesa`, pipelines
/// (`XR_VK_SHADER_OBJECTS=off`) or shader objects.
pub fn vulkan_environment<'c>(command: &'c mut Command, mesa: &Path, pipelines: bool) -> &'c mut Command {
    mesa_cache(command, mesa);
    if pipelines {
        command.env("XR_VK_SHADER_OBJECTS", "off");
    } else {
        command.env_remove("XR_VK_SHADER_OBJECTS");
    }
    command
}

/// Runs a child and reads what it measured from its output; `what` names
/// it when it fails.
pub fn measured<T: DeserializeOwned>(command: &mut Command, what: &str) -> anyhow::Result<T> {
    let output = command.output()?;
    if !output.status.success() {
        bail!("{what} failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(serde_json::from_slice(&output.stdout)?)
}

/// The work directory, emptied: `asked`, or `<name>-<process id>` in the
/// temporary directory.
pub fn fresh_work_dir(asked: Option<PathBuf>, name: &str) -> anyhow::Result<PathBuf> {
    let work = asked.unwrap_or_else(|| std::env::temp_dir().join(format!("{name}-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    Ok(work)
}
