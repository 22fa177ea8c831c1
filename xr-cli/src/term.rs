//! How `xr` talks to a person, decided once for the whole run: whether
//! standard error gets colour and a progress bar (`--color`, `NO_COLOR`,
//! `CLICOLOR_FORCE`, `TERM=dumb`, whether it is a terminal), how much it
//! says (`-q`, `-v`, `-vv`), and tracing's log lines, which are rendered
//! like the other diagnostics (`warning: …`) unless `XR_LOG` asks for
//! tracing's own format.
//!
//! Everything for a person goes to standard error; standard output carries
//! only what a command was asked to print (listings, JSON).

use std::{ffi::OsStr, fmt, io::IsTerminal, sync::OnceLock};
use tracing::{
    Event, Level, Subscriber,
    field::{Field, Visit},
};
use tracing_subscriber::{
    fmt::{FmtContext, FormatEvent, FormatFields, format::Writer},
    registry::LookupSpan,
};

/// `--color`: when to colour what `xr` writes on standard error.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorChoice {
    /// Colour on a terminal (not with `TERM=dumb`), unless `NO_COLOR` is set;
    /// `CLICOLOR_FORCE` colours off a terminal too.
    #[default]
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// How much `xr` says, from `-q` and the count of `-v`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Verbosity {
    /// `-q`: only errors and the summary.
    pub quiet: bool,
    /// `-v` (1): more detail; `-vv` (2): tracing's info lines as well.
    pub verbose: u8,
}

/// What the environment says about colour: `CLICOLOR_FORCE`, `NO_COLOR`,
/// `TERM`, and whether standard error is a terminal.
#[derive(Clone, Debug, Default)]
pub struct Environment<'a> {
    /// `CLICOLOR_FORCE`.
    pub clicolor_force: Option<&'a OsStr>,
    /// `NO_COLOR`.
    pub no_color: Option<&'a OsStr>,
    /// `TERM`.
    pub term: Option<&'a OsStr>,
    /// Whether standard error is a terminal.
    pub terminal: bool,
}

impl Environment<'_> {
    /// A terminal that can show colour and redraw a line: not `TERM=dumb`.
    fn capable_terminal(&self) -> bool {
        self.terminal && self.term.is_none_or(|t| t != "dumb")
    }
}

/// Whether to colour: the `--color` flag, then `CLICOLOR_FORCE` (set, not
/// empty and not `0`: colour), then `NO_COLOR` (set and not empty: none),
/// then whether standard error is a terminal that is not `TERM=dumb`.
pub fn decide_color(choice: ColorChoice, env: &Environment<'_>) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            if env.clicolor_force.is_some_and(|v| !v.is_empty() && v != "0") {
                true
            } else if env.no_color.is_some_and(|v| !v.is_empty()) {
                false
            } else {
                env.capable_terminal()
            }
        }
    }
}

/// The decisions of this run.
#[derive(Clone, Copy, Debug, Default)]
struct Settings {
    color: bool,
    progress: bool,
    verbosity: Verbosity,
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

fn settings() -> Settings {
    SETTINGS.get().copied().unwrap_or_default()
}

/// Decides colour, progress and verbosity for this run from the command
/// line and the environment, and installs tracing's subscriber. Called
/// once, in `main`, after the command line is read.
pub fn init(choice: ColorChoice, verbosity: Verbosity) {
    let (force, no_color, term) =
        (std::env::var_os("CLICOLOR_FORCE"), std::env::var_os("NO_COLOR"), std::env::var_os("TERM"));
    let env = Environment {
        clicolor_force: force.as_deref(),
        no_color: no_color.as_deref(),
        term: term.as_deref(),
        terminal: std::io::stderr().is_terminal(),
    };
    let color = decide_color(choice, &env);
    // A bar redraws its line: only on a terminal that can, and not with -q.
    let progress = env.capable_terminal() && !verbosity.quiet;
    let _ = SETTINGS.set(Settings { color, progress, verbosity });
    install_tracing(color, verbosity);
}

/// Whether what goes to standard error is coloured.
pub fn color() -> bool {
    settings().color
}

/// Whether `xr build` draws a progress bar (else it prints a progress line now and then).
pub fn progress_bar() -> bool {
    settings().progress
}

/// How much to say.
pub fn verbosity() -> Verbosity {
    settings().verbosity
}

/// What a line is, for its label and colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Label {
    /// `error:`, bold bright red.
    Error,
    /// `warning:`, bold yellow.
    Warning,
    /// `info:`, bold bright blue.
    Info,
    /// `debug:` and `trace:`, plain.
    Debug,
}

impl Label {
    fn of(level: &Level) -> Self {
        match *level {
            Level::ERROR => Label::Error,
            Level::WARN => Label::Warning,
            Level::INFO => Label::Info,
            _ => Label::Debug,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Label::Error => "error",
            Label::Warning => "warning",
            Label::Info => "info",
            Label::Debug => "debug",
        }
    }

    /// The escape that starts the label; the same styles the diagnostics'
    /// renderer (annotate-snippets) gives errors, warnings and notes.
    fn style(self) -> &'static str {
        match self {
            Label::Error => "\x1b[1m\x1b[91m",
            Label::Warning => "\x1b[1m\x1b[33m",
            Label::Info => "\x1b[1m\x1b[94m",
            Label::Debug => "",
        }
    }
}

const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

/// `label: message`, coloured like a diagnostic's headline when `color`.
pub fn labelled(label: Label, message: &str, color: bool) -> String {
    if color && label != Label::Debug {
        format!("{}{}{RESET}{BOLD}: {message}{RESET}", label.style(), label.name())
    } else {
        format!("{}: {message}", label.name())
    }
}

/// Installs tracing's subscriber on standard error: with `XR_LOG` set,
/// tracing's own format at that level (warn where it does not parse);
/// otherwise warnings and errors (`-vv`: info too) as `warning: …` lines.
fn install_tracing(color: bool, verbosity: Verbosity) {
    let builder = tracing_subscriber::fmt().with_writer(std::io::stderr).with_ansi(color);
    if let Some(level) = xr_host::log_level() {
        builder.with_max_level(level).init();
        return;
    }
    let level = match verbosity.verbose {
        0 | 1 => Level::WARN,
        2 => Level::INFO,
        _ => Level::DEBUG,
    };
    builder.with_max_level(level).event_format(Plain { color }).init();
}

/// Tracing's events as `warning: message field=value`, with no time, level
/// or target: the form of the other diagnostics.
struct Plain {
    color: bool,
}

impl<S, N> FormatEvent<S, N> for Plain
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(&self, _: &FmtContext<'_, S, N>, mut writer: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        let mut fields = Fields::default();
        event.record(&mut fields);
        writeln!(writer, "{}", labelled(Label::of(event.metadata().level()), &fields.line(), self.color))
    }
}

/// An event's message and its other fields.
#[derive(Default)]
struct Fields {
    message: String,
    rest: String,
}

impl Fields {
    fn line(&self) -> String {
        format!("{}{}", self.message, self.rest)
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "message" => self.message = value.to_owned(),
            // A plugin's module path (the log bridge's field): noise to a person.
            "plugin" => {}
            name => self.rest.push_str(&format!(" {name}={value}")),
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        match field.name() {
            "message" => self.message = format!("{value:?}"),
            "plugin" => {}
            name => self.rest.push_str(&format!(" {name}={value:?}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(
        force: Option<&'a str>,
        no_color: Option<&'a str>,
        term: Option<&'a str>,
        terminal: bool,
    ) -> Environment<'a> {
        Environment {
            clicolor_force: force.map(OsStr::new),
            no_color: no_color.map(OsStr::new),
            term: term.map(OsStr::new),
            terminal,
        }
    }

    #[test]
    fn the_flag_wins_over_the_environment() {
        let forced = env(Some("1"), None, None, false);
        assert!(!decide_color(ColorChoice::Never, &forced));
        let refused = env(None, Some("1"), Some("xterm"), true);
        assert!(decide_color(ColorChoice::Always, &refused));
    }

    #[test]
    fn clicolor_force_then_no_color_then_the_terminal() {
        let auto = ColorChoice::Auto;
        assert!(decide_color(auto, &env(Some("1"), None, None, false)), "forced off a terminal");
        assert!(decide_color(auto, &env(Some("1"), Some("1"), None, false)), "CLICOLOR_FORCE before NO_COLOR");
        assert!(!decide_color(auto, &env(Some("0"), None, None, false)), "CLICOLOR_FORCE=0 forces nothing");
        assert!(!decide_color(auto, &env(Some(""), None, None, false)), "nor does an empty one");
        assert!(!decide_color(auto, &env(None, Some("1"), Some("xterm"), true)), "NO_COLOR on a terminal");
        assert!(decide_color(auto, &env(None, Some(""), Some("xterm"), true)), "an empty NO_COLOR is not set");
        assert!(decide_color(auto, &env(None, None, Some("xterm"), true)));
        assert!(!decide_color(auto, &env(None, None, Some("dumb"), true)), "TERM=dumb");
        assert!(!decide_color(auto, &env(None, None, Some("xterm"), false)), "not a terminal");
    }

    #[test]
    fn labels_read_like_diagnostics() {
        assert_eq!(labelled(Label::Warning, "the journal is slow", false), "warning: the journal is slow");
        let coloured = labelled(Label::Warning, "the journal is slow", true);
        assert!(coloured.starts_with("\x1b[1m\x1b[33mwarning\x1b[0m"), "{coloured:?}");
        assert_eq!(labelled(Label::Error, "x", false), "error: x");
    }
}
