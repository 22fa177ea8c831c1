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
