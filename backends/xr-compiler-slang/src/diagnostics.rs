//! Slang's messages as XR diagnostics.
//!
//! Slang 2026 writes each message as a header, a location and the source
//! line with a caret and a label:
//!
//! ```text
//! error[E30015]: undefined identifier
//!  --> shaders/pattern.slang:3:23
//!   |
//! 3 | return float3(uv, undefined_thing);
//!   |                   ^^^^^^^^^^^^^^^ undefined identifier 'undefined_thing'.
//! ```
//!
//! The label, where there is one, is the more specific text and becomes the
//! message. An error in an imported module is followed by "import failed"
//! at each `import` line that led to it; those become the diagnostic's
//! import chain (`included_from`), as an `#include` chain does for GLSL,
//! rather than errors of their own. "compilation ceased" says nothing more
//! and is dropped.

use xr_sourcebuild::{Diagnostic, IncludeSite, Severity};

/// Slang's code for "import failed due to compilation error".
const IMPORT_FAILED: &str = "E39999";
/// Slang's code for "cannot open file".
const CANNOT_OPEN: &str = "E00001";
/// Slang's code for "compilation ceased".
const CEASED: &str = "E40003";

/// The diagnostics in Slang's `output`; `fallback_file` names those
/// without a location.
pub fn parse(output: &str, fallback_file: &str) -> Vec<Diagnostic> {
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    // Where each diagnostic came from: the code, and whether a label was read.
    let mut current: Option<(Diagnostic, String, bool, String)> = None;
    // The headers of the diagnostics kept with a place.
    let mut headers: Vec<String> = Vec::new();
    // For each diagnostic kept: whether it says a file cannot be opened.
    let mut cant_open: Vec<bool> = Vec::new();
    let mut finish = |current: Option<(Diagnostic, String, bool, String)>, diagnostics: &mut Vec<Diagnostic>| {
        let Some((diagnostic, code, _, header_text)) = current else { return };
        if code == CEASED {
            return;
        }
        if code == IMPORT_FAILED && diagnostic.line > 0 {
            let site = IncludeSite { file: diagnostic.file.clone(), line: diagnostic.line };
            let mut attached = false;
            for earlier in diagnostics.iter_mut().rev() {
                let in_module =
                    earlier.file != site.file && earlier.included_from.last().is_none_or(|last| last.file != site.file);
                if earlier.severity == Severity::Error && in_module {
                    earlier.included_from.push(site.clone());
                    attached = true;
                }
            }
            if attached {
                return;
            }
        }
        // Slang repeats some errors without their place after the placed one.
        let repeated = diagnostic.line == 0 && headers.iter().any(|h: &String| h == &header_text);
        if !repeated && !diagnostics.contains(&diagnostic) {
            if diagnostic.line > 0 {
                headers.push(header_text);
            }
            cant_open.push(code == CANNOT_OPEN);
            diagnostics.push(diagnostic);
        }
    };
    for line in output.lines() {
        if let Some((severity, code, message)) = header(line) {
            finish(current.take(), &mut diagnostics);
            current = Some((
                Diagnostic::new(severity, fallback_file, 0, 0, message),
                code.to_owned(),
                false,
                line.to_owned(),
            ));
        } else if let Some((diagnostic, _, labelled, _)) = current.as_mut() {
            if let Some(place) = line.trim_start().strip_prefix("--> ") {
                let (file, line, column) = location(place);
                diagnostic.file = file.into();
                diagnostic.line = line;
                diagnostic.column = column;
            } else if let Some(label) = caret_label(line)
                && !*labelled
            {
                diagnostic.message = label.into();
                *labelled = true;
            }
        }
    }
    finish(current, &mut diagnostics);
    // A module that cannot be found leaves every name it would have
    // declared undefined: those errors follow from the first and are dropped.
    if cant_open.iter().any(|c| *c) {
        let mut kept = Vec::new();
        for (diagnostic, cant) in diagnostics.into_iter().zip(cant_open.iter()) {
            if *cant || diagnostic.severity != Severity::Error {
                kept.push(diagnostic);
            }
        }
        return kept;
    }
    if diagnostics.is_empty() && !output.trim().is_empty() && output.contains("error") {
        // A message in a form this parser does not know: keep it whole.
        diagnostics.push(Diagnostic::error(fallback_file, 0, output.trim()));
    }
    diagnostics
}

/// `error[E30015]: message` → (severity, code, message).
fn header(line: &str) -> Option<(Severity, &str, &str)> {
    let (head, message) = line.split_once("]: ")?;
    let (kind, code) = head.split_once('[')?;
    let severity = match kind {
        "error" | "fatal error" | "internal error" => Severity::Error,
        "warning" => Severity::Warning,
        "note" => Severity::Info,
        _ => return None,
    };
    Some((severity, code, message))
}

/// `path:line:column` (a path may hold colons) → (path, line, column).
fn location(place: &str) -> (&str, u32, u32) {
    let mut parts = place.rsplitn(3, ':');
    let column = parts.next().and_then(|c| c.trim().parse().ok());
    let line = parts.next().and_then(|l| l.trim().parse().ok());
    match (parts.next(), line, column) {
        (Some(path), Some(line), Some(column)) => (path, line, column),
        _ => (place, 0, 0),
    }
}

/// The text after the carets of `  |      ^^^^ label`.
fn caret_label(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('|')?.trim_start();
    let label = rest.strip_prefix('^')?.trim_start_matches('^').trim();
    (!label.is_empty()).then_some(label)
}

#[cfg(test)]
mod tests {
    use super::*;

    const IMPORTED: &str = "error[E30015]: undefined identifier\n --> shaders/pat.slang:3:23\n  |\n3 | return float3(uv, undefined_thing);\n  |                   ^^^^^^^^^^^^^^^ undefined identifier 'undefined_thing'.\n--'\nerror[E39999]: import failed due to compilation error\n --> shaders/a.slang:1:8\n  |\n1 | import pat;\n  |        ^^^ import of module 'pat' failed because of a compilation error\n--'\nfatal error[E40003]: compilation ceased\n";

    #[test]
    fn an_error_in_an_imported_module_is_one_diagnostic_at_the_module_with_its_import_chain() {
        let d = parse(IMPORTED, "shaders/a.slang");
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!((d[0].file.as_str(), d[0].line, d[0].column), ("shaders/pat.slang", 3, 23));
        assert_eq!(d[0].message.as_str(), "undefined identifier 'undefined_thing'.");
        assert_eq!(d[0].included_from.as_slice(), &[IncludeSite { file: "shaders/a.slang".into(), line: 1 }]);
    }

    #[test]
    fn a_message_without_a_location_names_the_stage_file_and_warnings_stay_warnings() {
        let d = parse("warning[E50011]: SPIR-V version too old\nerror[E38000]: no function found\n", "a.slang");
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].severity, d[0].file.as_str(), d[0].line), (Severity::Warning, "a.slang", 0));
        assert_eq!((d[1].severity, d[1].message.as_str()), (Severity::Error, "no function found"));
    }

    #[test]
    fn an_error_repeated_without_its_place_is_reported_once() {
        let output = "error[E30015]: undefined identifier\n --> t.slang:9:50\n  |\n  |   ^^^^^ undefined identifier 'BANDS'.\n--'\nerror[E30015]: undefined identifier\n";
        let d = parse(output, "t.slang");
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].line, 9);
    }

    #[test]
    fn a_missing_module_is_the_one_error_not_the_names_it_would_have_declared() {
        let output = "error[E00001]: cannot open file 'shading.slang'\n --> tile.slang:1:8\n  |\n  |        ^^^^^^^ cannot open file 'shading.slang'\n--'\nerror[E30015]: undefined identifier\n --> tile.slang:9:3\n  |\n  |   ^^^^ undefined identifier 'Warm'.\n--'\nwarning[E1]: kept\n";
        let d = parse(output, "tile.slang");
        let messages: Vec<&str> = d.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(messages, ["cannot open file 'shading.slang'", "kept"]);
    }

    #[test]
    fn paths_with_colons_and_unknown_forms_survive() {
        assert_eq!(location("C:/x/a.slang:4:2"), ("C:/x/a.slang", 4, 2));
        let d = parse("something failed with an error\n", "a.slang");
        assert_eq!(d[0].message.as_str(), "something failed with an error");
    }
}
