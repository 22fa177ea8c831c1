//! How a build names files: relative to the manifest's directory.
//!
//! A key, a journal line, a catalog and an object's bytes (debug info,
//! `#line`, a bundled source's name) must not depend on where a checkout
//! is or how the manifest was spelt on the command line: otherwise
//! `-m xr.toml` and `-m ./xr.toml`, two checkouts of one repository, or a
//! CI machine and a developer's never share an object. So a build hands
//! compilers relative names and a source root to read them from
//! ([`SourceDesc::source_root`](xr_sourcebuild::SourceDesc)), and turns a
//! name back into a path only to read a file or to show it to a person.
//!
//! A file outside the manifest's directory keeps a relative name
//! (`../common/light.glsl`): a repository is laid out the same in every
//! checkout, so the name means the same file in each. A path the manifest
//! writes absolute (`/usr/share/shaders`) stays absolute: it names a place
//! on the machine, the same on every machine that has it.

use std::path::{Component, Path, PathBuf};
use xr_sourcebuild::Diagnostic;

/// The directory a build's names are relative to, and how to show them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceRoot {
    /// The directory, absolute: where names are read from.
    root: PathBuf,
    /// The same directory as the user spelt it: where names are shown from.
    shown: PathBuf,
}

impl SourceRoot {
    /// The root of names in the directory `dir` (as the user spelt it,
    /// relative to the current directory or absolute).
    pub fn new(dir: &Path) -> Self {
        let here = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        Self { root: absolute(here), shown: dir.to_path_buf() }
    }

    /// The root of the manifest at `manifest`: its directory.
    pub fn of_manifest(manifest: &Path) -> Self {
        Self::new(manifest.parent().unwrap_or(Path::new("")))
    }

    /// The directory, absolute.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The name of `path`, a path under the directory as spelt
    /// ([`SourceRoot::new`]) or one written absolute: relative to the root,
    /// `.` and `..` folded, or, for a path written absolute, as it is.
    pub fn name(&self, path: &Path) -> String {
        match path.strip_prefix(&self.shown) {
            Ok(rest) => lexical(rest).to_string_lossy().into_owned(),
            // Not under the directory as spelt: written absolute, or spelt some other way.
            Err(_) if path.is_absolute() => path.to_string_lossy().into_owned(),
            Err(_) => relative_to(&absolute(path), &self.root).to_string_lossy().into_owned(),
        }
    }

    /// Where the file named `name` is read from.
    pub fn on_disk(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// `name` as a person can open it from where they ran the build: under
    /// the directory as they spelt it.
    pub fn shown(&self, name: &str) -> String {
        if name.is_empty() || Path::new(name).is_absolute() {
            return name.to_owned();
        }
        lexical(&self.shown.join(name)).to_string_lossy().into_owned()
    }

    /// Names the files of `diagnostics` (and their include chains) as
    /// [`SourceRoot::shown`] does.
    pub fn show(&self, diagnostics: &mut [Diagnostic]) {
        for diagnostic in diagnostics {
            diagnostic.file = self.shown(&diagnostic.file).into();
            for site in diagnostic.included_from.iter_mut() {
                site.file = self.shown(&site.file).into();
            }
        }
    }
}

/// `path` made absolute against the current directory, without touching the
/// disk (a file being replaced may be absent for a moment), `.` and `..`
/// folded.
pub fn absolute(path: &Path) -> PathBuf {
    let joined = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    lexical(&joined)
}

/// `path` (absolute, folded) from the directory `base` (the same): under it,
/// or with as many `..` as it takes.
fn relative_to(path: &Path, base: &Path) -> PathBuf {
    let (path_parts, base_parts): (Vec<_>, Vec<_>) = (path.components().collect(), base.components().collect());
    let shared = path_parts.iter().zip(&base_parts).take_while(|(a, b)| a == b).count();
    let mut out: PathBuf = base_parts[shared..].iter().map(|_| Component::ParentDir).collect();
    out.extend(&path_parts[shared..]);
    out
}

/// `path` with `.` dropped and each `..` that follows a directory folded
/// into it, without touching the disk; a leading `..` stays (`../a`), and
/// nothing becomes `.`.
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir if matches!(out.components().next_back(), Some(Component::Normal(_))) => {
                out.pop();
            }
            // Above the root is the root.
            Component::ParentDir if out.has_root() => {}
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() { PathBuf::from(".") } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_manifest_names_its_files_alike() {
        let cwd = std::env::current_dir().unwrap();
        let spellings = [
            ("xr.toml", "shaders/a.vert"),
            ("./xr.toml", "./shaders/a.vert"),
            (&*format!("{}/xr.toml", cwd.display()), &*format!("{}/shaders/a.vert", cwd.display())),
        ];
        for (manifest, file) in spellings {
            let root = SourceRoot::of_manifest(Path::new(manifest));
            assert_eq!(root.root(), cwd, "{manifest}");
            // What the manifest's reader gives: the directory as spelt, joined.
            assert_eq!(root.name(Path::new(file)), "shaders/a.vert", "{manifest}");
            assert_eq!(root.name(&Path::new(manifest).with_file_name("../common/b.glsl")), "../common/b.glsl");
        }
        let nested = SourceRoot::of_manifest(Path::new("materials/xr.toml"));
        assert_eq!(nested.name(Path::new("materials/shaders/../shaders/a.vert")), "shaders/a.vert");
        assert_eq!(nested.on_disk("shaders/a.vert"), cwd.join("materials/shaders/a.vert"));
        assert_eq!(nested.shown("shaders/a.vert"), "materials/shaders/a.vert");
        assert_eq!(nested.shown("../common/b.glsl"), "common/b.glsl");
    }

    #[test]
    fn a_path_written_absolute_stays_absolute_and_is_shown_as_it_is() {
        let root = SourceRoot::of_manifest(Path::new("repo/xr.toml"));
        assert_eq!(root.name(Path::new("/usr/share/shaders")), "/usr/share/shaders");
        assert_eq!(root.shown("/usr/share/shaders/a.glsl"), "/usr/share/shaders/a.glsl");
        assert_eq!(root.shown(""), "", "a diagnostic of no file stays one");
        let mut diagnostics = [Diagnostic::error("shaders/a.frag", 3, "x")];
        diagnostics[0].included_from.push(xr_sourcebuild::IncludeSite { file: "shaders/b.frag".into(), line: 1 });
        root.show(&mut diagnostics);
        assert_eq!(diagnostics[0].file.as_str(), "repo/shaders/a.frag");
        assert_eq!(diagnostics[0].included_from[0].file.as_str(), "repo/shaders/b.frag");
    }

    #[test]
    fn a_path_spelt_from_elsewhere_is_named_from_the_root_with_dots() {
        let cwd = std::env::current_dir().unwrap();
        let root = SourceRoot::new(Path::new("shaders"));
        // `xr compile shaders/a.frag -I include`: the directory from the current one.
        assert_eq!(root.name(Path::new("include")), "../include");
        assert_eq!(root.name(Path::new("shaders/deep")), "deep");
        assert_eq!(relative_to(&cwd.join("a/b"), &cwd.join("a/c/d")), Path::new("../../b"));
        assert_eq!(relative_to(&cwd, &cwd), Path::new(""));
    }

    #[test]
    fn lexical_folds_what_it_can_and_keeps_what_it_cannot() {
        assert_eq!(lexical(Path::new("a/./b/../c")), Path::new("a/c"));
        assert_eq!(lexical(Path::new("../a/../../b")), Path::new("../../b"));
        assert_eq!(lexical(Path::new("/../a")), Path::new("/a"));
        assert_eq!(lexical(Path::new("./")), Path::new("."));
    }
}
