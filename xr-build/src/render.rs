//! Reports for a person to read, as rustc and clang show theirs: the
//! message, the file and line, the source line with a caret at the column
//! (the line underlined when the compiler gave no column), the include
//! chain, and where it struck. Rendered by `annotate-snippets`, the
//! renderer rustc uses; colours only when the caller asks (a terminal).
//!
//! The source line is read from the file the compiler named, when the
//! report is rendered. A file that cannot be read (an in-memory file, one
//! deleted since) or a line past its end gives the report without a
//! snippet, never an error of its own.

use crate::report::Report;
use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};
use xr_sourcebuild::Severity;

/// How to render.
#[derive(Clone, Copy, Debug, Default)]
pub struct RenderStyle {
    /// ANSI colours (for a terminal).
    pub color: bool,
    /// List every artifact struck and the compilers that said it.
    pub verbose: bool,
}

/// `report` as lines of text (no trailing newline).
pub fn render(report: &Report, style: RenderStyle) -> String {
    let diagnostic = &report.diagnostic;
    let (file, line, column, message) =
        (diagnostic.file.as_str(), diagnostic.line, diagnostic.column, diagnostic.message.as_str());
    let level = match diagnostic.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Info => Level::INFO,
    };
    let title = match &report.subject {
        Some(subject) => format!("{subject}: {message}"),
        None => message.to_owned(),
    };
    let source_line = read_line(file, line);
    let mut group = Group::with_title(level.primary_title(title));
    match &source_line {
        Some(text) => {
            group = group.element(
                Snippet::source(text.as_str())
                    .line_start(line as usize)
                    .path(file)
                    .annotation(AnnotationKind::Primary.span(mark(text, column, message))),
            );
        }
        None if !file.is_empty() => {
            let mut origin = Origin::path(file);
            if line > 0 {
                origin = origin.line(line as usize);
                if column > 0 {
                    origin = origin.char_column(column as usize);
                }
            }
            group = group.element(origin);
        }
        None => {}
    }
    let mut notes: Vec<String> =
        diagnostic.included_from.iter().map(|s| format!("included from {}:{}", s.file, s.line)).collect();
    let struck = report.struck();
    if !struck.is_empty() {
        notes.push(struck);
    }
    if style.verbose {
        if !report.compilers.is_empty() {
            notes.push(format!("reported by {}", report.compilers.iter().cloned().collect::<Vec<_>>().join(", ")));
        }
        if report.artifacts.len() > 1 {
            let list: Vec<String> =
                report.artifacts.iter().map(|a| format!("  {} ({})", a.variant, a.target)).collect();
            notes.push(format!("artifacts:\n{}", list.join("\n")));
        }
    }
    for note in &notes {
        group = group.element(Level::NOTE.message(note.as_str()));
    }
    let renderer = if style.color { Renderer::styled() } else { Renderer::plain() };
    renderer.render(&[group])
}

/// Line `line` (1-based) of `file`, without its line ending.
fn read_line(file: &str, line: u32) -> Option<String> {
    if file.is_empty() || line == 0 {
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    let found = text.lines().nth(line as usize - 1)?;
    Some(found.strip_suffix('\r').unwrap_or(found).to_owned())
}

/// What to mark on `text`: the word at `column`; without a column, the
/// name the message quotes first (glslang's `'name' : undeclared
/// identifier`) where the line has it once, else the whole line.
fn mark(text: &str, column: u32, message: &str) -> std::ops::Range<usize> {
    if column == 0
        && let Some(quoted) = message.split('\'').nth(1).filter(|q| !q.trim().is_empty())
        && text.matches(quoted).count() == 1
        && let Some(at) = text.find(quoted)
    {
        return at..at + quoted.len();
    }
    span(text, column)
}

/// What to mark on `text`: from `column` (1-based) to the end of the word
/// there, or the whole line without its indentation when there is no column.
fn span(text: &str, column: u32) -> std::ops::Range<usize> {
    let indent = text.len() - text.trim_start().len();
    let end = text.trim_end().len().max(indent);
    if column == 0 {
        return indent..end;
    }
    let mut start = (column as usize - 1).min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let rest = &text[start..];
    let word = match rest.strip_prefix('"').and_then(|quoted| quoted.find('"')) {
        // A quoted value (a manifest's string), quotes included.
        Some(close) => close + 2,
        None => rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len()),
    };
    let mut stop = start + word.max(1);
    while stop < text.len() && !text.is_char_boundary(stop) {
        stop += 1;
    }
    start..stop.min(text.len()).max(start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{ArtifactId, Reports};
    use xr_sourcebuild::{Diagnostic, IncludeSite};

    #[test]
    fn a_snippet_with_the_line_a_caret_and_the_chain() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("b.glsl");
        std::fs::write(&file, "float f() {\n    return missing_name;\n}\n").expect("write");
        let file = file.to_string_lossy().into_owned();
        let mut diagnostic = Diagnostic::error(&file, 2, "'missing_name' : undeclared identifier");
        diagnostic.column = 12;
        diagnostic.included_from = vec![IncludeSite { file: "main.frag".into(), line: 3 }].into();
        let mut reports = Reports::default();
        let artifact = ArtifactId { program: "p".into(), variant: "p".into(), target: "vk-spirv".into() };
        reports.add(Some(&artifact), "c", &[diagnostic]);
        let text = render(&reports.into_sorted()[0], RenderStyle::default());
        assert!(text.starts_with("error: 'missing_name' : undeclared identifier"), "{text}");
        assert!(text.contains(&format!("{file}:2:12")), "{text}");
        assert!(text.contains("    return missing_name;"), "{text}");
        let caret = text.lines().find(|l| l.contains('^')).expect("a caret line");
        assert_eq!(caret.matches('^').count(), "missing_name".len(), "{text}");
        assert!(text.contains("note: included from main.frag:3"), "{text}");
        assert!(text.contains("note: in p (vk-spirv)"), "{text}");
        assert!(!text.contains('\u{1b}'), "no colours unless asked: {text}");
    }

    #[test]
    fn no_column_underlines_the_line_and_a_missing_file_still_reports() {
        assert_eq!(span("    x = 1;  ", 0), 4..10);
        assert_eq!(span("abc", 9), 3..3);
        assert_eq!(span("language = \"wgsl\" }", 12), 11..17);
        assert_eq!(mark("  x = typo_name;", 0, "'typo_name' : undeclared identifier"), 6..15);
        assert_eq!(mark("  a = a;", 0, "'a' : twice on the line"), 2..8);
        let mut reports = Reports::default();
        reports.add(None, "", &[Diagnostic::error("/no/such/file.frag", 4, "bad")]);
        let text = render(&reports.into_sorted()[0], RenderStyle { color: true, verbose: false });
        assert!(text.contains("/no/such/file.frag:4"), "{text}");
        assert!(text.contains('\u{1b}'), "colours when asked: {text}");
    }
}
