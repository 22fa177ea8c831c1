//! `xr bindgen`: typed Rust bindings of a built manifest, for an engine to
//! `include!` (docs/BUILD.md, "In a Rust engine").

use crate::messages::usage;
use anyhow::Context;
use std::path::PathBuf;
use xr_build::{BuildPlan, bindgen, invocation};
use xr_host::Registry;

/// What `xr bindgen` was asked.
#[derive(clap::Args)]
pub struct BindgenArgs {
    /// The manifest, built (`xr build`) into its store.
    #[arg(long, short = 'm', default_value = "xr.toml")]
    manifest: PathBuf,
    /// Use this store instead of the manifest's.
    #[arg(long, value_name = "DIR")]
    store: Option<PathBuf>,
    /// Only this program (repeatable).
    #[arg(long = "program", value_name = "NAME")]
    programs: Vec<String>,
    /// Reflect only this target (repeatable; default: every target of each program).
    #[arg(long = "target", value_name = "TARGET")]
    targets: Vec<String>,
    /// Write the Rust source here (`-` or none: standard output).
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    workers: crate::isolation::WorkerArgs,
}

/// Runs `xr bindgen`.
pub fn run(args: BindgenArgs) -> anyhow::Result<()> {
    let plugin_dirs = Registry::default_dirs();
    let mut manifest = match invocation::load_manifest(&args.manifest, &plugin_dirs) {
        Ok(manifest) => manifest,
        Err(invocation::InvocationError::Manifest { reports, .. }) => {
            crate::messages::MessageArgs::default().print_reports(&reports);
            return Err(crate::messages::Reported { status: 2 }.into());
        }
        Err(e) => return Err(usage(e.to_string())),
    };
    if let Some(store) = args.store {
        manifest.store = store;
    }
    let registry = Registry::load_dirs(plugin_dirs);
    // The plan of the build: each program reflected through the compiler that built it.
    let plan = BuildPlan::new(manifest, &registry);
    if let Some((_, error)) = plan.refused.first() {
        return Err(usage(error.to_string()));
    }
    // Reflections compile in workers, as a build's compiles do (--in-process: here).
    let compile_in = args.workers.asked()?.compile_in(&xr_build::config::BuildEnv::read(), registry.searched());
    let compiles = xr_build::Compiles::new(&compile_in);
    let bindings = bindgen::bindings(&plan, &registry, &compiles, &args.programs, &args.targets)?;
    let code = bindgen::write_rust(&bindings, &plan.path.display().to_string());
    match args.output.filter(|o| o.as_os_str() != "-") {
        Some(path) => {
            std::fs::write(&path, &code).with_context(|| format!("writing {}", path.display()))?;
            eprintln!(
                "xr bindgen: {} programs, {} objects reflected now -> {}",
                bindings.programs.len(),
                bindings.reflected,
                path.display()
            );
        }
        None => print!("{code}"),
    }
    Ok(())
}
