//! What `xr build`, `xr compile` and `xr reflect` say about the sources:
//! one report per distinct diagnostic, for a person (with the source line
//! and include chain) or as JSON lines for CI and editors
//! (`--message-format json`, the schema in docs/BUILD.md), and the exit
//! statuses every command shares. Everything for a person goes to standard
//! error; standard output carries what was asked for.
//!
//! Exit statuses: 0 when everything asked for was done; 1 when something
//! failed to build (or a store check failed); 2 when the command line or the
//! manifest is wrong, before anything was built.

use xr_build::{
    ManifestError, ManifestErrors,
    render::{RenderStyle, render},
    report::Report,
};
use xr_host::OptionError;
use xr_sourcebuild::Severity;

/// How diagnostics are written.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MessageFormat {
    /// For a person: each report with its source line, on standard error, on a terminal in colour.
    #[default]
    Human,
    /// One JSON object per line on standard output: each diagnostic, then a summary.
    Json,
}

/// `--message-format`, shared by the commands that compile (`-q` and `-v`
/// are global: [`crate::term::verbosity`]).
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct MessageArgs {
    /// How to write diagnostics: `human` (on standard error), or `json` (one
    /// object per line on standard output, then a summary object; see
    /// docs/BUILD.md).
    #[arg(long, value_enum, default_value_t = MessageFormat::Human, value_name = "FORMAT")]
    pub message_format: MessageFormat,
}

impl MessageArgs {
    /// Whether output is JSON lines.
    pub fn json(&self) -> bool {
        self.message_format == MessageFormat::Json
    }

    /// Writes `reports`: rendered on stderr (with `-q`, errors only), or as
    /// JSON lines on stdout.
    pub fn print_reports(&self, reports: &[Report]) {
        if self.json() {
            for report in reports {
                println!("{}", report.to_json());
            }
            return;
        }
        let verbosity = crate::term::verbosity();
        let style = RenderStyle { color: crate::term::color(), verbose: verbosity.verbose > 0 };
        for report in reports.iter().filter(|r| !verbosity.quiet || r.severity() == Severity::Error) {
            eprintln!("{}\n", render(report, style));
        }
    }

    /// What the command was asked to print (a listing, a table): on
    /// stdout, or on stderr when stdout carries JSON.
    pub fn say(&self, line: &str) {
        if self.json() {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    }

    /// A line for a person about what was done (a summary, a file
    /// written): on stderr, whatever `-q` says.
    pub fn tell(&self, line: &str) {
        eprintln!("{line}");
    }

    /// A detail for a person: on stderr, not with `-q`.
    pub fn note(&self, line: &str) {
        if !crate::term::verbosity().quiet {
            eprintln!("{line}");
        }
    }
}

/// Something was wrong with what the user asked (the command line), found
/// before anything was built: exit status 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// A usage error (exit status 2) saying `message`.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    UsageError(message.into()).into()
}

/// The failure was reported already (its diagnostics printed): exit with
/// `status` and nothing more said.
#[derive(Debug, thiserror::Error)]
#[error("reported (exit status {status})")]
pub struct Reported {
    /// The exit status.
    pub status: u8,
}

/// The exit status of a command that ended with `error`.
pub fn exit_status(error: &anyhow::Error) -> u8 {
    if let Some(reported) = error.downcast_ref::<Reported>() {
        return reported.status;
    }
    let usage = error
        .chain()
        .any(|e| e.is::<UsageError>() || e.is::<ManifestError>() || e.is::<ManifestErrors>() || e.is::<OptionError>());
    if usage { 2 } else { 1 }
}

/// Makes writing to a closed pipe end the process quietly, as `cat` and
/// `ls` do (`xr store verify | head -1`): Rust ignores SIGPIPE, so a write
/// fails instead and `println!` panics with a backtrace.
pub fn quiet_broken_pipes() {
    #[cfg(unix)]
    // SAFETY: called first in `main`, before any thread exists; restoring
    // the default disposition of SIGPIPE has no other effect.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
