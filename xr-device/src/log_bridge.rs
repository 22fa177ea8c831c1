//! Plugin logs in the host's log.
//!
//! Every plugin is a `cdylib` with its own copy of `tracing`, and so its own
//! global subscriber: without a bridge, whatever a plugin logs (a stored
//! pipeline cache discarded, a program binary the driver refused) is lost.
//! The host hands each plugin a [`LogSink`] when it loads it; the plugin
//! installs a subscriber ([`install_plugin_logger`]) that formats each event
//! and passes it through the sink, and the host re-emits it in its own log
//! (target `xr_plugin`, with the plugin's own target as a field). Spans are
//! not carried across: events are.

use abi_stable::{StableAbi, std_types::RStr};
use std::fmt::Write as _;
use tracing::{
    Event, Level, Metadata, Subscriber,
    field::{Field, Visit},
    level_filters::LevelFilter,
    span,
};

/// Where a plugin's log events go: a function of the host's, and the most
/// verbose level the host listens to (events above it are not formatted).
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug)]
pub struct LogSink {
    /// 0 = off, 1 = error, 2 = warn, 3 = info, 4 = debug, 5 = trace.
    pub max_level: u8,
    /// Receives one event: its level (1–5 as above), the plugin's target
    /// (module path) and the formatted message with its fields.
    pub log: extern "C" fn(level: u8, target: RStr<'_>, message: RStr<'_>),
}

fn level_number(level: &Level) -> u8 {
    match *level {
        Level::ERROR => 1,
        Level::WARN => 2,
        Level::INFO => 3,
        Level::DEBUG => 4,
        Level::TRACE => 5,
    }
}

/// The host's sink: events re-emitted in the host's own `tracing` log.
pub fn host_log_sink() -> LogSink {
    let max_level = match LevelFilter::current().into_level() {
        None => 0,
        Some(level) => level_number(&level),
    };
    LogSink { max_level, log: host_log }
}

extern "C" fn host_log(level: u8, target: RStr<'_>, message: RStr<'_>) {
    // Called from a plugin: nothing may unwind back through it.
    let _ = std::panic::catch_unwind(|| {
        let (target, message) = (target.as_str(), message.as_str());
        match level {
            1 => tracing::error!(target: "xr_plugin", plugin = target, "{message}"),
            2 => tracing::warn!(target: "xr_plugin", plugin = target, "{message}"),
            3 => tracing::info!(target: "xr_plugin", plugin = target, "{message}"),
            4 => tracing::debug!(target: "xr_plugin", plugin = target, "{message}"),
            _ => tracing::trace!(target: "xr_plugin", plugin = target, "{message}"),
        }
    });
}

/// Installs, in the calling plugin, a global subscriber that sends every
/// event up to `sink.max_level` to `sink`. Called once per plugin, by the
/// root module's `set_log_sink` that `export_plugin!` writes; a second call
/// keeps the first sink.
pub fn install_plugin_logger(sink: LogSink) {
    let _ = tracing::subscriber::set_global_default(SinkSubscriber { sink });
}

struct SinkSubscriber {
    sink: LogSink,
}

/// The message and fields of an event as one line: `message field=value …`.
#[derive(Default)]
struct Line(String);

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }
}

impl Subscriber for SinkSubscriber {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        level_number(metadata.level()) <= self.sink.max_level
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(match self.sink.max_level {
            0 => LevelFilter::OFF,
            1 => LevelFilter::ERROR,
            2 => LevelFilter::WARN,
            3 => LevelFilter::INFO,
            4 => LevelFilter::DEBUG,
            _ => LevelFilter::TRACE,
        })
    }

    fn new_span(&self, _span: &span::Attributes<'_>) -> span::Id {
        span::Id::from_u64(1)
    }

    fn record(&self, _span: &span::Id, _values: &span::Record<'_>) {}

    fn record_follows_from(&self, _span: &span::Id, _follows: &span::Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut line = Line::default();
        event.record(&mut line);
        let metadata = event.metadata();
        (self.sink.log)(level_number(metadata.level()), metadata.target().into(), line.0.as_str().into());
    }

    fn enter(&self, _span: &span::Id) {}

    fn exit(&self, _span: &span::Id) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    static SEEN: Mutex<Vec<(u8, String, String)>> = Mutex::new(Vec::new());

    extern "C" fn remember(level: u8, target: RStr<'_>, message: RStr<'_>) {
        SEEN.lock().unwrap().push((level, target.to_string(), message.to_string()));
    }

    #[test]
    fn events_up_to_the_sinks_level_reach_it_with_their_fields() {
        let subscriber = SinkSubscriber { sink: LogSink { max_level: 3, log: remember } };
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(bytes = 32, "discarding the stored cache");
            tracing::info!("loaded");
            tracing::debug!("not wanted");
        });
        let seen = SEEN.lock().unwrap().clone();
        let target = module_path!().to_owned();
        assert_eq!(
            seen,
            [(2, target.clone(), "discarding the stored cache bytes=32".to_owned()), (3, target, "loaded".to_owned())]
        );
    }
}
