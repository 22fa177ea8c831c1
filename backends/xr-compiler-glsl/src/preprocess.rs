//! `#include` resolution and define injection, with a map from every line
//! of the flattened source back to the file and line the user wrote.
//!
//! The driver never sees a file name (Mesa rejects names in `#line`), so the
//! build system flattens includes itself and maps the driver's line numbers
//! back through [`Preprocessed::origin`].
//!
//! Limitation: `#include` is resolved on every line, also inside `#if 0`
//! blocks and block comments.

use xr_plugin_kit::includes::{
    IncludeEdge, ResolvedInclude, include_chain, resolve_include, root_dir, searched_places,
};
use xr_sourcebuild::{Diagnostic, SourceDesc};

/// Deepest include nesting accepted, against runaway recursion.
const MAX_INCLUDE_DEPTH: usize = 32;

/// Name shown for lines XR injected (the defines).
pub const DEFINES_FILE: &str = "<defines>";

/// A flattened source and where each of its lines came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preprocessed {
    /// The text handed to the driver.
    pub text: String,
    /// Every file that contributed, by the name diagnostics use.
    pub files: Vec<String>,
    /// For flattened line `n` (1-based), `origins[n - 1]` = (index into `files`, line).
    pub origins: Vec<(usize, u32)>,
    /// Every `#include` followed: the include chains of diagnostics.
    pub includes: Vec<IncludeEdge>,
}

impl xr_gl_common::info_log::LineMap for Preprocessed {
    fn origin(&self, line: u32) -> Option<(&str, u32)> {
        Preprocessed::origin(self, line)
    }
}

impl Preprocessed {
    /// The file and line the user wrote for flattened line `line` (1-based).
    pub fn origin(&self, line: u32) -> Option<(&str, u32)> {
        let index = usize::try_from(line).ok()?.checked_sub(1)?;
        let (file, line) = *self.origins.get(index)?;
        Some((self.files[file].as_str(), line))
    }
}

struct Flattener<'a> {
    desc: &'a SourceDesc,
    out: Preprocessed,
    /// Identities of files being expanded (cycle detection) and of `#pragma once` files.
    stack: Vec<String>,
    once: Vec<String>,
}

type Resolved = ResolvedInclude;

/// Flattens `desc`'s includes and injects its defines after `#version`.
pub fn preprocess(desc: &SourceDesc) -> Result<Preprocessed, Vec<Diagnostic>> {
    let root = desc.file_name.to_string();
    let mut errors = Vec::new();
    for define in desc.defines.iter() {
        if !is_identifier(&define.name) || define.value.contains('\n') {
            errors.push(Diagnostic::error(&root, 0, format!("invalid define '{}={}'", define.name, define.value)));
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut flattener = Flattener {
        desc,
        out: Preprocessed { text: String::new(), files: Vec::new(), origins: Vec::new(), includes: Vec::new() },
        stack: Vec::new(),
        once: Vec::new(),
    };
    let root_dir = root_dir(desc);
    let has_version = desc.source.lines().any(|l| directive(l).is_some_and(|(name, _)| name == "version"));
    if !has_version {
        flattener.push_defines();
    }
    let resolved = Resolved { id: root.clone(), display: root, dir: root_dir, text: desc.source.to_string() };
    if let Err(mut error) = flattener.expand(&resolved, 0) {
        error.included_from = include_chain(&flattener.out.includes, &error.file).into();
        return Err(vec![error]);
    }
    Ok(flattener.out)
}

impl Flattener<'_> {
    fn file_index(&mut self, name: &str) -> usize {
        match self.out.files.iter().position(|f| f == name) {
            Some(index) => index,
            None => {
                self.out.files.push(name.to_owned());
                self.out.files.len() - 1
            }
        }
    }

    fn push_line(&mut self, file: usize, line: u32, text: &str) {
        self.out.text.push_str(text);
        self.out.text.push('\n');
        self.out.origins.push((file, line));
    }

    fn push_defines(&mut self) {
        let file = self.file_index(DEFINES_FILE);
        for (i, define) in self.desc.defines.iter().enumerate() {
            let text = format!("#define {} {}", define.name, define.value);
            self.push_line(file, i as u32 + 1, &text);
        }
    }

    fn expand(&mut self, source: &Resolved, depth: usize) -> Result<(), Diagnostic> {
        self.stack.push(source.id.clone());
        let file = self.file_index(&source.display);
        for (index, raw) in source.text.lines().enumerate() {
            let line_no = index as u32 + 1;
            let line = raw.strip_suffix('\r').unwrap_or(raw);
            match directive(line) {
                Some(("include", argument)) => {
                    let name = include_name(argument).ok_or_else(|| {
                        Diagnostic::error(
                            &source.display,
                            line_no,
                            format!("malformed #include: expected \"file\" or <file>, found '{argument}'"),
                        )
                    })?;
                    let included = self.resolve(name, source).ok_or_else(|| {
                        Diagnostic::error(
                            &source.display,
                            line_no,
                            format!("cannot find include file '{name}' ({})", self.searched(source)),
                        )
                    })?;
                    if self.stack.contains(&included.id) {
                        return Err(Diagnostic::error(
                            &source.display,
                            line_no,
                            format!("include cycle: '{name}' includes itself"),
                        ));
                    }
                    if depth + 1 > MAX_INCLUDE_DEPTH {
                        return Err(Diagnostic::error(
                            &source.display,
                            line_no,
                            format!("includes nested deeper than {MAX_INCLUDE_DEPTH}"),
                        ));
                    }
                    if !self.once.contains(&included.id) {
                        self.out.includes.push(IncludeEdge {
                            file: included.display.clone(),
                            includer: source.display.clone(),
                            line: line_no,
                        });
                        self.expand(&included, depth + 1)?;
                    }
                }
                Some(("pragma", argument)) if argument.trim() == "once" => {
                    self.once.push(source.id.clone());
                    self.push_line(file, line_no, "");
                }
                Some(("extension", argument)) if argument.trim_start().starts_with("GL_GOOGLE_include_directive") => {
                    self.push_line(file, line_no, "");
                }
                Some(("version", _)) if depth == 0 => {
                    self.push_line(file, line_no, line);
                    self.push_defines();
                }
                _ => self.push_line(file, line_no, line),
            }
        }
        self.stack.pop();
        Ok(())
    }

    fn resolve(&self, name: &str, includer: &Resolved) -> Option<Resolved> {
        resolve_include(self.desc, name, includer.dir.as_deref())
    }

    fn searched(&self, includer: &Resolved) -> String {
        searched_places(self.desc, includer.dir.as_deref())
    }
}

/// `#  name  rest` → (`name`, `rest`).
fn directive(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let end = rest.find(|c: char| !c.is_ascii_alphanumeric() && c != '_').unwrap_or(rest.len());
    Some((&rest[..end], &rest[end..]))
}

fn include_name(argument: &str) -> Option<&str> {
    let argument = argument.trim();
    let inner = argument
        .strip_prefix('"')
        .and_then(|a| a.strip_suffix('"'))
        .or_else(|| argument.strip_prefix('<').and_then(|a| a.strip_suffix('>')))?;
    (!inner.is_empty()).then_some(inner)
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use xr_sourcebuild::ShaderStage;

    fn desc(source: &str) -> SourceDesc {
        SourceDesc::new("glsl", ShaderStage::Fragment, "main.frag", source)
    }

    /// Lines of GLSL-ish text with `#include`s of three in-memory files,
    /// which include each other (cycles too), and odd directives.
    fn include_heavy_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let line = prop_oneof![
            prop_oneof![Just("a"), Just("b"), Just("c"), Just("missing")]
                .prop_map(|f| format!("#include \"{f}.glsl\"")),
            prop_oneof![Just("a"), Just("b")].prop_map(|f| format!("#include <{f}.glsl>")),
            Just("#pragma once".to_owned()),
            Just("#version 450".to_owned()),
            Just("#include".to_owned()),
            Just("#include \"unterminated".to_owned()),
            "[ -~]{0,30}",
        ];
        proptest::collection::vec(line, 0..12).prop_map(|lines| lines.join("\n"))
    }

    proptest::proptest! {
        #[test]
        fn any_includes_flatten_or_fail_with_diagnostics_and_every_line_maps_back(
            main in include_heavy_text(),
            a in include_heavy_text(),
            b in include_heavy_text(),
            c in include_heavy_text(),
        ) {
            let desc = desc(&main)
                .with_virtual_file("a.glsl", a)
                .with_virtual_file("b.glsl", b)
                .with_virtual_file("c.glsl", c);
            match preprocess(&desc) {
                Ok(out) => {
                    let lines = out.text.lines().count();
                    proptest::prop_assert_eq!(out.origins.len(), lines);
                    for n in 1..=lines as u32 {
                        proptest::prop_assert!(out.origin(n).is_some(), "line {} maps nowhere", n);
                    }
                }
                Err(diagnostics) => proptest::prop_assert!(!diagnostics.is_empty()),
            }
        }
    }

    #[test]
    fn defines_go_after_version_and_map_to_defines_file() {
        let out =
            preprocess(&desc("#version 450\nvoid main() {}\n").with_define("A", "1").with_define("B", "")).unwrap();
        assert_eq!(out.text, "#version 450\n#define A 1\n#define B \nvoid main() {}\n");
        assert_eq!(out.origin(1), Some(("main.frag", 1)));
        assert_eq!(out.origin(2), Some((DEFINES_FILE, 1)));
        assert_eq!(out.origin(4), Some(("main.frag", 2)));
        assert_eq!(out.origin(5), None);
    }

    #[test]
    fn nested_includes_map_back_to_their_files() {
        let source = "#version 450\n#include \"a.glsl\"\nvoid main() {}\n";
        let d = desc(source)
            .with_virtual_file("a.glsl", "// a1\n#include <b.glsl>\n// a3\n")
            .with_virtual_file("b.glsl", "// b1\n// b2\n");
        let out = preprocess(&d).unwrap();
        assert_eq!(out.text, "#version 450\n// a1\n// b1\n// b2\n// a3\nvoid main() {}\n");
        assert_eq!(out.origin(3), Some(("b.glsl", 1)));
        assert_eq!(out.origin(5), Some(("a.glsl", 3)));
        assert_eq!(out.origin(6), Some(("main.frag", 3)));
    }

    #[test]
    fn errors_in_nested_includes_carry_the_include_chain() {
        let source = "#version 450\n#include \"a.glsl\"\nvoid main() {}\n";
        let d = desc(source)
            .with_virtual_file("a.glsl", "// a1\n#include <b.glsl>\n")
            .with_virtual_file("b.glsl", "// b1\n#include \"gone.glsl\"\n");
        let errors = preprocess(&d).unwrap_err();
        assert_eq!((errors[0].file.as_str(), errors[0].line), ("b.glsl", 2));
        let chain: Vec<(&str, u32)> = errors[0].included_from.iter().map(|s| (s.file.as_str(), s.line)).collect();
        assert_eq!(chain, [("a.glsl", 2), ("main.frag", 2)]);
        // The driver's messages get the same chain through the recorded includes.
        let good = desc(source)
            .with_virtual_file("a.glsl", "// a1\n#include <b.glsl>\n")
            .with_virtual_file("b.glsl", "// b1\n");
        let out = preprocess(&good).unwrap();
        let mut driver = vec![xr_sourcebuild::Diagnostic::error("b.glsl", 1, "driver says no")];
        xr_plugin_kit::includes::attach_include_chains(&mut driver, &out.includes);
        assert_eq!(driver[0].included_from.len(), 2);
    }

    #[test]
    fn pragma_once_includes_a_file_once() {
        let d = desc("#include \"a\"\n#include \"a\"\n").with_virtual_file("a", "#pragma once\nint x;\n");
        let out = preprocess(&d).unwrap();
        assert_eq!(out.text.matches("int x;").count(), 1);
    }

    #[test]
    fn missing_include_names_the_including_line() {
        let errors = preprocess(&desc("#version 450\n\n#include \"nope.glsl\"\n")).unwrap_err();
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].file.as_str(), "main.frag");
        assert_eq!(errors[0].line, 3);
        assert!(errors[0].message.contains("cannot find include file 'nope.glsl'"), "{}", errors[0].message);
    }

    #[test]
    fn include_cycle_is_an_error() {
        let d = desc("#include \"a\"\n")
            .with_virtual_file("a", "#include \"b\"\n")
            .with_virtual_file("b", "#include \"a\"\n");
        let errors = preprocess(&d).unwrap_err();
        assert_eq!((errors[0].file.as_str(), errors[0].line), ("b", 1));
        assert!(errors[0].message.contains("include cycle"));
    }

    #[test]
    fn malformed_include_and_bad_define_are_errors() {
        let errors = preprocess(&desc("#include nope\n")).unwrap_err();
        assert!(errors[0].message.contains("malformed #include"));
        let errors = preprocess(&desc("void main(){}\n").with_define("1BAD", "x")).unwrap_err();
        assert!(errors[0].message.contains("invalid define '1BAD=x'"));
    }

    #[test]
    fn includes_are_found_on_disk_relative_then_in_include_dirs() {
        let root = std::env::temp_dir().join(format!("xr-preprocess-{}", std::process::id()));
        std::fs::create_dir_all(root.join("shaders")).unwrap();
        std::fs::create_dir_all(root.join("lib")).unwrap();
        std::fs::write(root.join("shaders/local.glsl"), "// local\n#include \"shared.glsl\"\n").unwrap();
        std::fs::write(root.join("lib/shared.glsl"), "// shared\n").unwrap();
        let main = root.join("shaders/main.frag");
        let d = SourceDesc::new("glsl", ShaderStage::Fragment, main.to_string_lossy(), "#include \"local.glsl\"\n")
            .with_include_dir(root.join("lib").to_string_lossy());
        let out = preprocess(&d).unwrap();
        assert_eq!(out.text, "// local\n// shared\n");
        assert!(out.origin(2).unwrap().0.ends_with("lib/shared.glsl"));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
