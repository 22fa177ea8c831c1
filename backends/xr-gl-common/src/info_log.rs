//! Driver info logs turned into diagnostics at the user's file and line.
//!
//! Understands the location prefixes of the common drivers:
//! Mesa `0:12(5): error: …`, NVIDIA `0(12) : error C0000: …`, and
//! AMD / Intel on Windows `ERROR: 0:12: …`. Lines without a location are
//! kept whole, attached to `fallback_file`.

use xr_sourcebuild::{Diagnostic, Severity};

/// Maps a line of the source the driver saw back to the file and line the user wrote.
pub trait LineMap {
    /// The user's file and line of driver line `line` (1-based).
    fn origin(&self, line: u32) -> Option<(&str, u32)>;
}

/// A location prefix: line, column (0 if none), severity if the prefix gave it, the rest.
type Located<'a> = (u32, u32, Option<Severity>, &'a str);

/// Parses a compile or link log; `map` maps line numbers back (none for link logs).
pub fn parse(log: &str, map: Option<&dyn LineMap>, fallback_file: &str) -> Vec<Diagnostic> {
    log.lines().map(str::trim).filter(|l| !l.is_empty()).map(|line| parse_line(line, map, fallback_file)).collect()
}

fn parse_line(line: &str, map: Option<&dyn LineMap>, fallback_file: &str) -> Diagnostic {
    let (line_no, column, given, rest) =
        mesa(line).or_else(|| nvidia(line)).or_else(|| amd(line)).unwrap_or((0, 0, None, line));
    let (severity, message) = match given {
        Some(severity) => (severity, rest.trim()),
        None => severity(rest),
    };
    let (file, line_no) = match map.and_then(|m| m.origin(line_no)) {
        Some((file, original)) => (file.to_owned(), original),
        None => (fallback_file.to_owned(), line_no),
    };
    Diagnostic::new(severity, &file, line_no, column, message.trim())
}

/// `0:12(5): rest`
fn mesa(line: &str) -> Option<Located<'_>> {
    let (_, after) = split_number(line)?;
    let (row, after) = split_number(after.strip_prefix(':')?)?;
    let (column, after) = split_number(after.strip_prefix('(')?)?;
    Some((row, column, None, after.strip_prefix("):")?))
}

/// `0(12) : rest`
fn nvidia(line: &str) -> Option<Located<'_>> {
    let (_, after) = split_number(line)?;
    let (row, after) = split_number(after.strip_prefix('(')?)?;
    let rest = after.strip_prefix(')')?.trim_start().strip_prefix(':')?;
    Some((row, 0, None, rest))
}

/// `ERROR: 0:12: rest`
fn amd(line: &str) -> Option<Located<'_>> {
    let (word, after) = line.split_once(':')?;
    let severity = match word {
        "ERROR" => Severity::Error,
        "WARNING" => Severity::Warning,
        _ => return None,
    };
    let (_, after) = split_number(after.trim_start())?;
    let (row, after) = split_number(after.strip_prefix(':')?)?;
    Some((row, 0, Some(severity), after.strip_prefix(':')?))
}

fn split_number(text: &str) -> Option<(u32, &str)> {
    let end = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let number = text[..end].parse().ok()?;
    Some((number, &text[end..]))
}

/// Reads a leading `error:` / `warning:` (NVIDIA adds a code: `error C1008:`).
fn severity(text: &str) -> (Severity, &str) {
    let trimmed = text.trim_start();
    let lower = trimmed.to_ascii_lowercase();
    for (word, severity) in
        [("preprocessor error", Severity::Error), ("error", Severity::Error), ("warning", Severity::Warning)]
    {
        if let Some(rest) = lower.starts_with(word).then(|| trimmed[word.len()..].trim_start()) {
            let rest = match rest.strip_prefix(':') {
                Some(r) => r,
                None => rest.split_once(':').filter(|(code, _)| !code.contains(' ')).map_or(rest, |(_, r)| r),
            };
            return (severity, rest.trim_start());
        }
    }
    let severity = if lower.contains("error") { Severity::Error } else { Severity::Info };
    (severity, trimmed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// main.frag line 1, then inc.glsl lines 1-2, then main.frag line 3.
    struct Map;

    impl LineMap for Map {
        fn origin(&self, line: u32) -> Option<(&str, u32)> {
            match line {
                1 => Some(("main.frag", 1)),
                2 | 3 => Some(("inc.glsl", line - 1)),
                4 => Some(("main.frag", 3)),
                _ => None,
            }
        }
    }

    #[test]
    fn mesa_lines_map_into_includes() {
        let d = parse("0:3(1): error: syntax error, unexpected VOID", Some(&Map), "main.frag");
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].file.as_str(), d[0].line, d[0].column), ("inc.glsl", 2, 1));
        assert_eq!(d[0].severity, Severity::Error);
        assert_eq!(d[0].message.as_str(), "syntax error, unexpected VOID");
        assert_eq!(d[0].to_string(), "inc.glsl:2:1: error: syntax error, unexpected VOID");
    }

    #[test]
    fn nvidia_and_amd_prefixes() {
        let d = parse("0(4) : error C1008: undefined variable \"x\"", Some(&Map), "main.frag");
        assert_eq!((d[0].file.as_str(), d[0].line, d[0].severity), ("main.frag", 3, Severity::Error));
        assert_eq!(d[0].message.as_str(), "undefined variable \"x\"");
        let d = parse("WARNING: 0:2: 'a' : unused", Some(&Map), "main.frag");
        assert_eq!((d[0].file.as_str(), d[0].line, d[0].severity), ("inc.glsl", 1, Severity::Warning));
    }

    #[test]
    fn unlocated_lines_keep_their_text() {
        let d = parse("error: fragment shader input `v' has no matching output\n\n", None, "prog");
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].file.as_str(), d[0].line, d[0].severity), ("prog", 0, Severity::Error));
        assert_eq!(d[0].message.as_str(), "fragment shader input `v' has no matching output");
    }
}
