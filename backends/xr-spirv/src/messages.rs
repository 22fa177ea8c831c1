//! shaderc's messages as diagnostics.
//!
//! glslang writes `file:line: error: 'x' : undeclared identifier` with the
//! name the include callback resolved, so errors inside an include already
//! name that file; a closing `N errors generated.` line is dropped.

use xr_sourcebuild::{Diagnostic, Severity};

/// Parses shaderc's error or warning text.
pub fn parse(text: &str, fallback_file: &str) -> Vec<Diagnostic> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !is_summary(l))
        .map(|line| parse_line(line, fallback_file))
        .collect()
}

/// Parses glslang's own info log (`ERROR: file:line: 'x' : undeclared
/// identifier`), as the glslang of [`crate::newer_toolchain`] writes it;
/// "compilation terminated" and the closing count are dropped.
pub fn parse_glslang_log(text: &str, fallback_file: &str) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for line in text.lines().map(str::trim) {
        let (severity, rest) = if let Some(rest) = line.strip_prefix("ERROR: ") {
            (Severity::Error, rest)
        } else if let Some(rest) = line.strip_prefix("WARNING: ") {
            (Severity::Warning, rest)
        } else {
            continue;
        };
        if rest.contains("compilation terminated") || rest.contains("compilation errors") {
            continue;
        }
        // `file:line: message`; the file may itself contain ':'.
        let located = rest.split_once(": ").and_then(|(location, message)| {
            let (file, number) = location.rsplit_once(':')?;
            Some((file, number.parse::<u32>().ok()?, message))
        });
        diagnostics.push(match located {
            // glslang numbers an unnamed string `0`.
            Some((file, line_no, message)) => {
                let file = if file.is_empty() || file == "0" { fallback_file } else { file };
                Diagnostic::new(severity, file, line_no, 0, tidy(message))
            }
            None => Diagnostic::new(severity, fallback_file, 0, 0, tidy(rest)),
        });
    }
    diagnostics
}

/// glslang's message as a person reads it: the token it names dropped when
/// it is empty (`'' :  syntax error` is `syntax error`), runs of spaces one.
fn tidy(message: &str) -> String {
    let message = message.trim();
    let message = message.strip_prefix("'' :").unwrap_or(message);
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn is_summary(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    matches!(words.as_slice(), [n, kind, "generated."] if n.parse::<u32>().is_ok() && kind.starts_with(['e', 'w']))
}

fn parse_line(line: &str, fallback_file: &str) -> Diagnostic {
    // `file:line: severity: message`; the file may itself contain ':'.
    for (severity, marker) in [(Severity::Error, ": error: "), (Severity::Warning, ": warning: ")] {
        if let Some(at) = line.find(marker) {
            let (location, message) = (&line[..at], &line[at + marker.len()..]);
            let (file, line_no) = match location.rsplit_once(':') {
                Some((file, number)) if number.parse::<u32>().is_ok() => (file, number.parse().unwrap_or(0)),
                _ => (location, 0),
            };
            let file = if file.is_empty() { fallback_file } else { file };
            return Diagnostic::new(severity, file, line_no, 0, tidy(message));
        }
    }
    let severity = if line.contains("error") { Severity::Error } else { Severity::Warning };
    let message = line.strip_prefix("error: ").or_else(|| line.strip_prefix("warning: ")).unwrap_or(line);
    Diagnostic::new(severity, fallback_file, 0, 0, tidy(message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn located_errors_and_summaries() {
        let d = parse("shaders/lib.glsl:3: error: 'x' : undeclared identifier\n1 error generated.\n", "main.frag");
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].file.as_str(), d[0].line, d[0].severity), ("shaders/lib.glsl", 3, Severity::Error));
        assert_eq!(d[0].message.as_str(), "'x' : undeclared identifier");
        let d = parse("C:/x/a.hlsl:12: warning: unused\n", "a.hlsl");
        assert_eq!((d[0].file.as_str(), d[0].line, d[0].severity), ("C:/x/a.hlsl", 12, Severity::Warning));
        let d = parse("t.frag:9: error: '' :  syntax error, unexpected RIGHT_BRACE\n", "t.frag");
        assert_eq!(d[0].message.as_str(), "syntax error, unexpected RIGHT_BRACE", "no empty token, one space");
        let d = parse("a.vert: error: #version: bad\n", "a.vert");
        assert_eq!((d[0].file.as_str(), d[0].line), ("a.vert", 0));
    }

    #[test]
    fn glslang_s_own_log() {
        let log = "ERROR: lib/shade.glsl:3: 'x' : undeclared identifier \nERROR: hit.rchit:9: '' : compilation \
                   terminated \nWARNING: 0:2: 'y' : unused\nERROR: 2 compilation errors.  No code generated.\n\n";
        let d = parse_glslang_log(log, "hit.rchit");
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!((d[0].file.as_str(), d[0].line, d[0].severity), ("lib/shade.glsl", 3, Severity::Error));
        assert_eq!(d[0].message.as_str(), "'x' : undeclared identifier");
        assert_eq!((d[1].file.as_str(), d[1].line, d[1].severity), ("hit.rchit", 2, Severity::Warning));
    }
}
