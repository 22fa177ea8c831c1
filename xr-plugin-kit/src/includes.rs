//! `#include` resolution shared by every build system: in-memory files
//! first, then the including file's directory, then the include directories.

use std::path::{Path, PathBuf};
use xr_sourcebuild::{Diagnostic, IncludeSite, SourceDesc};

/// Deepest include chain reported, against cycles in what a compiler reports.
const MAX_CHAIN: usize = 64;

/// A file found for an `#include`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedInclude {
    /// Identity for cycle detection and `#pragma once`: a canonical path or `virtual:<name>`.
    pub id: String,
    /// The name diagnostics use: the path as found, or the in-memory name.
    pub display: String,
    /// Directory its own relative includes start from (none for in-memory files).
    pub dir: Option<PathBuf>,
    /// The file's text.
    pub text: String,
}

/// Finds `name` for a file in `includer_dir` (none for in-memory files).
pub fn resolve_include(desc: &SourceDesc, name: &str, includer_dir: Option<&Path>) -> Option<ResolvedInclude> {
    let found = find_include(desc, name, includer_dir)?;
    let id = match &found.path {
        Some(path) => path.canonicalize().unwrap_or_else(|_| path.clone()).to_string_lossy().into_owned(),
        None => format!("virtual:{name}"),
    };
    // From its name, not where it was read: its own includes are named
    // relative to the source root too.
    let dir = found.path.is_some().then(|| Path::new(&found.display).parent().map(Path::to_path_buf)).flatten();
    Some(ResolvedInclude { id, display: found.display, dir, text: found.text })
}

/// A file found for an `#include`, without the identity [`resolve_include`]
/// adds (a canonical path costs a system call per path component).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundInclude {
    /// Where it was read from (under the source root); none for an in-memory file.
    pub path: Option<PathBuf>,
    /// The name diagnostics, debug info and `#line` use: the directory it
    /// was found in (relative to the source root, as the desc names it)
    /// joined with the name, or the in-memory name.
    pub display: String,
    /// The file's text.
    pub text: String,
}

/// Finds `name` as [`resolve_include`] does, for a compiler that keeps no
/// identity of its own (glslang tracks its includes itself): what each
/// compile of a large matrix pays per include is a read, no more.
pub fn find_include(desc: &SourceDesc, name: &str, includer_dir: Option<&Path>) -> Option<FoundInclude> {
    if let Some(file) = desc.virtual_files.iter().find(|f| f.name.as_str() == name) {
        return Some(FoundInclude { path: None, display: name.to_owned(), text: file.contents.to_string() });
    }
    let dirs = includer_dir
        .map(Path::to_path_buf)
        .into_iter()
        .chain(desc.include_dirs.iter().map(|d| PathBuf::from(d.as_str())));
    for dir in dirs {
        let named = dir.join(name);
        let path = desc.on_disk(&named);
        if let Ok(text) = std::fs::read_to_string(&path) {
            return Some(FoundInclude { display: named.to_string_lossy().into_owned(), path: Some(path), text });
        }
    }
    None
}

/// Where [`resolve_include`] looked, for the "cannot find" message.
pub fn searched_places(desc: &SourceDesc, includer_dir: Option<&Path>) -> String {
    let shown = |d: &Path| if d.as_os_str().is_empty() { ".".to_owned() } else { d.display().to_string() };
    let mut places: Vec<String> = includer_dir.iter().map(|d| shown(d)).collect();
    places.extend(desc.include_dirs.iter().map(|d| d.to_string()));
    if !desc.virtual_files.is_empty() {
        places.push(format!("{} in-memory files", desc.virtual_files.len()));
    }
    if places.is_empty() {
        "no include directories given".to_owned()
    } else {
        format!("searched: {}", places.join(", "))
    }
}

/// The directory relative includes of the root file start from, if it is a
/// real file (`shader.frag`, with no directory, is in the current one).
pub fn root_dir(desc: &SourceDesc) -> Option<PathBuf> {
    let parent = Path::new(desc.file_name.as_str()).parent()?;
    // A bare name's includes are bare names too (`inc.glsl`, not `./inc.glsl`).
    let on_disk = desc.on_disk(if parent.as_os_str().is_empty() { Path::new(".") } else { parent });
    on_disk.is_dir().then(|| parent.to_path_buf())
}

/// The directory a file named `name` (as [`FoundInclude::display`] names
/// it) includes from, if it is a real directory under the source root.
pub fn includer_dir(desc: &SourceDesc, name: &str) -> Option<PathBuf> {
    Path::new(name).parent().filter(|p| desc.on_disk(p).is_dir()).map(Path::to_path_buf)
}

/// One `#include` a compile followed: which file it read, from which file and line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IncludeEdge {
    /// The included file, named as diagnostics name it ([`ResolvedInclude::display`]).
    pub file: String,
    /// The including file, named the same way (the stage's file name for the root).
    pub includer: String,
    /// 1-based line of the directive in `includer` (0: not found).
    pub line: u32,
}

/// The 1-based line of `includer_text` whose `#include` names `requested`
/// (`"name"` or `<name>`); 0 when no line does (a directive a macro built).
pub fn include_line(includer_text: &str, requested: &str) -> u32 {
    let quoted = format!("\"{requested}\"");
    let angled = format!("<{requested}>");
    includer_text
        .lines()
        .position(|line| {
            let line = line.trim_start();
            line.strip_prefix('#').is_some_and(|rest| rest.trim_start().starts_with("include"))
                && (line.contains(&quoted) || line.contains(&angled))
        })
        .and_then(|index| u32::try_from(index + 1).ok())
        .unwrap_or(0)
}

/// Where `file` was included, innermost first, following `edges` back to a
/// file nobody included (the stage's own). The first edge that read a file
/// stands for it: a file included twice is reported through its first
/// inclusion.
pub fn include_chain(edges: &[IncludeEdge], file: &str) -> Vec<IncludeSite> {
    let mut chain: Vec<IncludeSite> = Vec::new();
    let mut current = file;
    while chain.len() < MAX_CHAIN
        && let Some(edge) = edges.iter().find(|e| e.file == current)
    {
        if chain.iter().any(|site| site.file.as_str() == edge.includer) {
            break;
        }
        chain.push(IncludeSite { file: edge.includer.as_str().into(), line: edge.line });
        current = &edge.includer;
    }
    chain
}

/// Fills in each diagnostic's include chain from the includes its compile followed.
pub fn attach_include_chains(diagnostics: &mut [Diagnostic], edges: &[IncludeEdge]) {
    for diagnostic in diagnostics.iter_mut().filter(|d| d.included_from.is_empty()) {
        diagnostic.included_from = include_chain(edges, &diagnostic.file).into();
    }
}

/// Every file the `#include` directives of `desc` reach, transitively, as
/// [`find_include`] finds them (the compile's own resolution): what a
/// compile of `desc` may read besides its stage file. It is a superset of
/// what the compile reads (a directive under an `#if` is followed too); an
/// include that is not found is left out, and the compile fails on it
/// wherever it runs. Each file once, in the order first reached.
pub fn reached_by_includes(desc: &SourceDesc) -> Vec<FoundInclude> {
    let directives = |text: &str| include_directives(text).into_iter().map(|name| vec![name]).collect();
    reach(desc, directives, Missing::Skip).unwrap_or_default()
}

/// Every file Slang's `import`, `__include` and `implementing`
/// declarations and `#include` directives of `desc` reach, transitively,
/// as Slang looks for a module (`import a.b_c;` is `a/b_c.slang` or
/// `a/b-c.slang`, a string names the file) in the importing file's
/// directory and the include directories. `None` when one is not found
/// there: Slang may find it by other means, so its reads are not known.
pub fn reached_by_imports(desc: &SourceDesc) -> Option<Vec<FoundInclude>> {
    let declarations = |text: &str| {
        let mut wanted: Vec<Vec<String>> = include_directives(text).into_iter().map(|name| vec![name]).collect();
        wanted.extend(module_declarations(text));
        wanted
    };
    reach(desc, declarations, Missing::Unknown)
}

/// What a reference that is found nowhere means to [`reach`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Missing {
    /// Left out: the compile fails on it wherever it runs.
    Skip,
    /// The reads cannot be known: `None`.
    Unknown,
}

/// The files `references` (each reference's candidate names, in the order
/// they are tried) reach from `desc`'s text, transitively, each once.
fn reach(
    desc: &SourceDesc,
    references: impl Fn(&str) -> Vec<Vec<String>>,
    missing: Missing,
) -> Option<Vec<FoundInclude>> {
    let mut reached: Vec<FoundInclude> = Vec::new();
    // (text, the directory its relative references start from)
    let mut pending: Vec<(String, Option<PathBuf>)> = vec![(desc.source.to_string(), root_dir(desc))];
    while let Some((text, dir)) = pending.pop() {
        for candidates in references(&text) {
            let Some(mut found) = candidates.iter().find_map(|name| find_include(desc, name, dir.as_deref())) else {
                match missing {
                    Missing::Skip => continue,
                    Missing::Unknown => return None,
                }
            };
            // One name per file (`inc/deep/../a.glsl` is `inc/a.glsl`), so
            // that a cycle through `..` ends.
            found.display = normalized(&found.display);
            if reached.iter().any(|r| r.display == found.display) {
                continue;
            }
            pending.push((found.text.clone(), includer_dir(desc, &found.display)));
            reached.push(found);
        }
    }
    Some(reached)
}

/// The files each `import`, `__include` or `implementing` declaration of
/// Slang `text` may name, in the order Slang tries them.
fn module_declarations(text: &str) -> Vec<Vec<String>> {
    let mut modules = Vec::new();
    for statement in text.split(';') {
        let words = statement.trim_start();
        let Some(rest) = ["import", "__include", "implementing"].iter().find_map(|keyword| {
            let last_line = words.lines().last().unwrap_or("").trim_start();
            last_line.strip_prefix(keyword).filter(|r| r.starts_with(char::is_whitespace) || r.starts_with('"'))
        }) else {
            continue;
        };
        let rest = rest.trim();
        if let Some(quoted) = rest.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
            modules.push(vec![quoted.to_owned()]);
        } else if !rest.is_empty() && rest.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.') {
            let path = rest.replace('.', "/");
            modules.push(vec![format!("{path}.slang"), format!("{}.slang", path.replace('_', "-"))]);
        }
    }
    modules
}

/// `name` with `.` and `dir/..` steps taken out, as the file system
/// resolves them; a `..` above the first directory stays.
fn normalized(name: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in name.split('/') {
        match part {
            "" | "." if !parts.is_empty() || part == "." => {}
            ".." if parts.last().is_some_and(|p| *p != ".." && !p.is_empty()) => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    parts.join("/")
}

/// The names of `text`'s `#include "name"` and `#include <name>` lines.
pub fn include_directives(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix('#')?.trim_start().strip_prefix("include")?.trim_start();
            let (open, close) = match rest.chars().next()? {
                '"' => ('"', '"'),
                '<' => ('<', '>'),
                _ => return None,
            };
            let inner = rest.strip_prefix(open)?;
            inner.find(close).map(|end| inner[..end].to_owned())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(file: &str, includer: &str, line: u32) -> IncludeEdge {
        IncludeEdge { file: file.into(), includer: includer.into(), line }
    }

    #[test]
    fn the_include_line_is_the_directive_naming_the_file() {
        let text = "#version 450\n// #include \"a.glsl\" in a comment\n#include \"b.glsl\"\n  #  include <a.glsl>\n";
        assert_eq!(include_line(text, "b.glsl"), 3);
        assert_eq!(include_line(text, "a.glsl"), 4);
        assert_eq!(include_line(text, "c.glsl"), 0);
    }

    #[test]
    fn includes_are_reached_through_nested_files_once_each_and_directives_are_read_as_written() {
        let dir = std::env::temp_dir().join(format!("xr-kit-reach-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("inc/deep")).unwrap();
        std::fs::write(dir.join("inc/a.glsl"), "#include \"deep/b.glsl\"\n").unwrap();
        // b's includes start from its own directory; a cycle back to a ends.
        std::fs::write(dir.join("inc/deep/b.glsl"), "#if 0\n#include \"c.glsl\"\n#endif\n#include \"../a.glsl\"\n")
            .unwrap();
        std::fs::write(dir.join("inc/deep/c.glsl"), "// under #if 0: still reached\n").unwrap();
        std::fs::write(dir.join("unused.glsl"), "").unwrap();
        let mut desc = SourceDesc::new(
            "glsl",
            xr_sourcebuild::ShaderStage::Fragment,
            "main.frag",
            "#version 450\n#include \"a.glsl\"\n#include \"missing.glsl\"\n",
        )
        .with_include_dir("inc");
        desc.source_root = dir.to_string_lossy().into_owned().into();
        let reached: Vec<String> = reached_by_includes(&desc).into_iter().map(|f| f.display).collect();
        assert_eq!(reached.len(), 3, "{reached:?}");
        for name in ["a.glsl", "b.glsl", "c.glsl"] {
            assert!(reached.iter().any(|r| r.ends_with(name)), "{name} in {reached:?}");
        }
        assert_eq!(normalized("inc/deep/../a.glsl"), "inc/a.glsl");
        assert_eq!(normalized("./inc//a.glsl"), "inc/a.glsl");
        assert_eq!(normalized("../x.glsl"), "../x.glsl");
        assert_eq!(normalized("/abs/./x.glsl"), "/abs/x.glsl");
        assert_eq!(
            include_directives("#  include <x.h>\n// #include \"no\"\n#include MACRO\n #include \"y.glsl\" // z\n"),
            ["x.h", "y.glsl"]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn slang_modules_are_reached_by_import_and_an_unknown_one_leaves_the_reads_unknown() {
        let dir = std::env::temp_dir().join(format!("xr-kit-imports-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("include/lib")).unwrap();
        std::fs::write(dir.join("include/patterns.slang"), "module patterns;\nimport lib.soft_noise;\n").unwrap();
        std::fs::write(dir.join("include/lib/soft-noise.slang"), "implementing \"../patterns.slang\";\n").unwrap();
        let desc = |source: &str| {
            let mut desc = SourceDesc::new("slang", xr_sourcebuild::ShaderStage::Fragment, "unlit.slang", source)
                .with_include_dir("include");
            desc.source_root = dir.to_string_lossy().into_owned().into();
            desc
        };
        let reached: Vec<String> = reached_by_imports(&desc("// a comment\nimport patterns;\nfloat4 f() {}\n"))
            .expect("every module found")
            .into_iter()
            .map(|f| f.display)
            .collect();
        assert_eq!(reached, ["include/patterns.slang", "include/lib/soft-noise.slang"]);
        assert!(reached_by_imports(&desc("import nowhere;\n")).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_chain_runs_from_the_file_to_the_stage() {
        let edges = [edge("inc/a.glsl", "main.frag", 3), edge("inc/b.glsl", "inc/a.glsl", 7)];
        let chain = include_chain(&edges, "inc/b.glsl");
        let sites: Vec<(&str, u32)> = chain.iter().map(|s| (s.file.as_str(), s.line)).collect();
        assert_eq!(sites, [("inc/a.glsl", 7), ("main.frag", 3)]);
        assert!(include_chain(&edges, "main.frag").is_empty());
        let mut diagnostics = [Diagnostic::error("inc/a.glsl", 2, "x")];
        attach_include_chains(&mut diagnostics, &edges);
        assert_eq!(diagnostics[0].included_from.len(), 1);
        assert_eq!(diagnostics[0].included_from[0].line, 3);
    }

    #[test]
    fn a_cycle_ends_the_chain() {
        let edges = [edge("a", "b", 1), edge("b", "a", 1)];
        assert_eq!(include_chain(&edges, "a").len(), 2);
    }

    #[test]
    fn a_root_file_without_a_directory_includes_from_the_current_one() {
        let bare = SourceDesc::new("glsl", xr_sourcebuild::ShaderStage::Fragment, "shader.frag", "");
        assert_eq!(root_dir(&bare), Some(PathBuf::new()));
        let dir = std::env::temp_dir();
        let nested =
            SourceDesc::new("glsl", xr_sourcebuild::ShaderStage::Fragment, dir.join("s.frag").to_string_lossy(), "");
        assert_eq!(root_dir(&nested), Some(dir));
        let virtual_file = SourceDesc::new("glsl", xr_sourcebuild::ShaderStage::Fragment, "/no/such/dir/s.frag", "");
        assert_eq!(root_dir(&virtual_file), None);
    }

    #[test]
    fn files_under_a_source_root_are_read_there_and_named_relative_to_it() {
        let root = std::env::temp_dir().join(format!("xr-includes-root-{}", std::process::id()));
        std::fs::create_dir_all(root.join("shaders/include/deep")).unwrap();
        std::fs::write(root.join("shaders/include/a.glsl"), "#include \"deep/b.glsl\"\n").unwrap();
        std::fs::write(root.join("shaders/include/deep/b.glsl"), "// b\n").unwrap();
        let desc = SourceDesc::new("glsl", xr_sourcebuild::ShaderStage::Fragment, "shaders/main.frag", "")
            .with_include_dir("shaders/include")
            .with_source_root(root.to_string_lossy());
        assert_eq!(root_dir(&desc), Some(PathBuf::from("shaders")));
        let a = resolve_include(&desc, "a.glsl", root_dir(&desc).as_deref()).expect("found under the root");
        assert_eq!(a.display, "shaders/include/a.glsl");
        assert_eq!(a.dir, Some(PathBuf::from("shaders/include")));
        let b = resolve_include(&desc, "deep/b.glsl", a.dir.as_deref()).expect("found from a's directory");
        assert_eq!((b.display.as_str(), b.text.as_str()), ("shaders/include/deep/b.glsl", "// b\n"));
        assert_eq!(includer_dir(&desc, &b.display), Some(PathBuf::from("shaders/include/deep")));
        // Not read from the current directory: the names are the root's.
        let unrooted = SourceDesc { source_root: "".into(), ..desc.clone() };
        assert!(resolve_include(&unrooted, "a.glsl", Some(Path::new("shaders/include"))).is_none());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
