//! `xr`: the XR command line.

mod bindgen;
mod build;
mod compile;
mod isolation;
mod messages;
mod plugins;
mod store;
mod term;
mod warm;

use clap::{ArgAction, CommandFactory, Parser, Subcommand};
use std::path::PathBuf;

/// XR: shader build systems and rendering back ends as plugins.
#[derive(Parser)]
#[command(name = "xr", version, disable_version_flag = true, arg_required_else_help = true)]
struct Cli {
    /// Print XR's version and the plugin interface's; with -v, every plugin found, with its version and path.
    #[arg(short = 'V', long)]
    version: bool,
    /// Say more: -v more detail (with --version: every plugin; with a
    /// diagnostic: every artifact it struck and the compilers that said it),
    /// -vv tracing's info lines too.
    #[arg(short = 'v', long, action = ArgAction::Count, global = true)]
    verbose: u8,
    /// Say only errors and the summary: no progress, no warning reports (the log's warnings stay).
    #[arg(short = 'q', long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Colour what goes to standard error: auto (on a terminal, unless
    /// NO_COLOR is set or TERM=dumb; CLICOLOR_FORCE forces it), always, never.
    #[arg(long, value_enum, global = true, default_value_t = term::ColorChoice::Auto, value_name = "WHEN")]
    color: term::ColorChoice,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// List every plugin found, what each provides, and the live devices' capabilities.
    Plugins {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Search these directories instead of XR_PLUGIN_PATH and the directory of `xr`.
        #[arg(long = "plugin-dir", value_name = "DIR")]
        plugin_dirs: Vec<PathBuf>,
        /// List every extension of each device.
        #[arg(long)]
        extensions: bool,
    },
    /// Compile a shader file, or one file per stage of a program, for a target through the plugin
    /// that compiles its language into it; with --device, build it on a live device too.
    Compile {
        #[command(flatten)]
        source: compile::SourceArgs,
        #[command(flatten)]
        output: compile::CompileArgs,
        #[command(flatten)]
        messages: messages::MessageArgs,
    },
    /// Build every program and variant of a manifest (xr.toml) into its store.
    Build(build::BuildArgs),
    /// Load every program a usage log names on a live device, before an
    /// engine's first frame: program binaries and shader binaries made and
    /// stored, what is valid for this driver already skipped.
    Warm(warm::WarmArgs),
    /// Write typed Rust bindings of a built manifest's programs: variants as
    /// types, overrides, constant and resource handles, block structs.
    Bindgen(bindgen::BindgenArgs),
    /// Work on a store of built objects.
    Store {
        #[command(subcommand)]
        command: StoreCommand,
    },
    /// Print a completion script for a shell (`xr completions bash >
    /// ~/.local/share/bash-completion/completions/xr`).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print xr's man page (roff), made from this command line's definition.
    Manpage,
    /// Serve compiles on stdin and stdout in the worker protocol; `xr build`
    /// starts these itself.
    #[command(hide = true)]
    Worker {
        /// Load the plugins of these directories.
        #[arg(long = "plugin-dir", value_name = "DIR")]
        plugin_dirs: Vec<std::path::PathBuf>,
        /// Cap this process's address space at this many bytes.
        #[arg(long, value_name = "BYTES")]
        memory_limit: Option<u64>,
        /// Run the one job in this file (a frame of the worker protocol)
        /// instead of serving stdin: a remote executor's action.
        #[arg(long, value_name = "FILE", requires = "reply")]
        job: Option<std::path::PathBuf>,
        /// Where `--job` writes its reply.
        #[arg(long, value_name = "FILE", requires = "job")]
        reply: Option<std::path::PathBuf>,
    },
    /// Compile one shader file and print what it exposes: constants, resources, overrides.
    Reflect {
        #[command(flatten)]
        source: compile::SourceArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        messages: messages::MessageArgs,
    },
}

#[derive(Subcommand)]
enum StoreCommand {
    /// Check every object against its checksum, and the catalogs and journal; exit non-zero if any is corrupt.
    Verify {
        /// The store directory.
        #[arg(long, default_value = "target/xr-store")]
        store: PathBuf,
        /// Remove corrupt objects (rebuilt on next use), catalogs and journal lines, and leftovers of interrupted writes.
        #[arg(long)]
        delete_corrupt: bool,
        /// Also check the copies on this shared cache (default: XR_REMOTE).
        #[arg(long, value_name = "URL")]
        remote: Option<String>,
    },
    /// Remove the build objects no given manifest references (and their catalogs).
    Gc {
        /// The store directory (default: the first manifest's store).
        #[arg(long)]
        store: Option<PathBuf>,
        /// A manifest whose programs to keep (repeatable).
        #[arg(long = "manifest", short = 'm', value_name = "FILE", default_value = "xr.toml")]
        manifests: Vec<PathBuf>,
        /// Only say what would be removed.
        #[arg(long)]
        dry_run: bool,
    },
}

/// Keeps `RUST_BACKTRACE=1` (panic backtraces) from making every error
/// value a library creates capture a backtrace. The SPIR-V reflection
/// library builds an error value for each string it reads, even those it
/// reads well, so with backtraces on a cold build spent a third of its time
/// walking stacks. `RUST_LIB_BACKTRACE` set by the user still wins.
fn quiet_library_backtraces() {
    if std::env::var_os("RUST_LIB_BACKTRACE").is_none() {
        // SAFETY: called first in `main`, before any thread exists that
        // could read the environment.
        unsafe { std::env::set_var("RUST_LIB_BACKTRACE", "0") };
    }
}

/// Exit statuses: 0 all done, 1 something failed to build (or a check
/// failed), 2 the command line or the manifest is wrong (see `messages`).
fn main() -> std::process::ExitCode {
    quiet_library_backtraces();
    messages::quiet_broken_pipes();
    let cli = Cli::parse();
    term::init(cli.color, term::Verbosity { quiet: cli.quiet, verbose: cli.verbose });
    let command = match cli.command {
        Some(command) if !cli.version => command,
        _ if cli.version => {
            plugins::print_version(cli.verbose > 0);
            return std::process::ExitCode::SUCCESS;
        }
        // Only global flags (`xr -v`): a usage error, exit status 2.
        _ => Cli::command()
            .error(clap::error::ErrorKind::MissingSubcommand, "name a command (xr --help lists them)")
            .exit(),
    };
    let result = match command {
        Command::Plugins { json, plugin_dirs, extensions } => plugins::run(json, plugin_dirs, extensions),
        Command::Worker { plugin_dirs, memory_limit, job: Some(job), reply: Some(reply) } => {
            isolation::run_one_job(plugin_dirs, memory_limit, &job, &reply)
        }
        Command::Worker { plugin_dirs, memory_limit, .. } => isolation::serve_as_worker(plugin_dirs, memory_limit),
        Command::Compile { ref source, messages, .. }
            if !source.in_process && !isolation::in_process_by_environment() =>
        {
            isolation::run_in_child("xr compile", source.files(), &messages)
        }
        Command::Reflect { ref source, messages, .. }
            if !source.in_process && !isolation::in_process_by_environment() =>
        {
            isolation::run_in_child("xr reflect", source.files(), &messages)
        }
        Command::Compile { source, output, messages } => compile::compile(source, output, messages),
        Command::Reflect { source, json, messages } => compile::reflect(source, json, messages),
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "xr", &mut std::io::stdout());
            Ok(())
        }
        Command::Manpage => clap_mangen::Man::new(Cli::command())
            .render(&mut std::io::stdout())
            .map_err(|e| anyhow::anyhow!("writing the man page: {e}")),
        Command::Build(args) => match build::run(args) {
            Ok(true) => Ok(()),
            Ok(false) => return std::process::ExitCode::FAILURE,
            Err(e) => Err(e),
        },
        Command::Warm(args) => match warm::run(args) {
            Ok(true) => Ok(()),
            Ok(false) => return std::process::ExitCode::FAILURE,
            Err(e) => Err(e),
        },
        Command::Bindgen(args) => bindgen::run(args),
        Command::Store { command: StoreCommand::Gc { store, manifests, dry_run } } => {
            build::gc(store, &manifests, dry_run)
        }
        Command::Store { command: StoreCommand::Verify { store, delete_corrupt, remote } } => {
            match build::open_remote(remote.as_deref()).and_then(|r| store::verify(&store, delete_corrupt, r)) {
                Ok(true) => Ok(()),
                Ok(false) => return std::process::ExitCode::FAILURE,
                Err(e) => Err(e),
            }
        }
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            if !error.is::<messages::Reported>() {
                eprintln!("{}", term::labelled(term::Label::Error, &format!("{error:#}"), term::color()));
            }
            std::process::ExitCode::from(messages::exit_status(&error))
        }
    }
}
