//! `#include` resolution shared by every build system: in-memory files
//! first, then the including file's directory, then the include directories.

use std::path::{Path, PathBuf};
use xr_sourcebuild::SourceDesc;

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
    if let Some(file) = desc.virtual_files.iter().find(|f| f.name.as_str() == name) {
        return Some(ResolvedInclude {
            id: format!("virtual:{name}"),
            display: name.to_owned(),
            dir: None,
            text: file.contents.to_string(),
        });
    }
    let dirs = includer_dir
        .map(Path::to_path_buf)
        .into_iter()
        .chain(desc.include_dirs.iter().map(|d| PathBuf::from(d.as_str())));
    for dir in dirs {
        let path = dir.join(name);
        if let Ok(text) = std::fs::read_to_string(&path) {
            let id = path.canonicalize().unwrap_or_else(|_| path.clone()).to_string_lossy().into_owned();
            let dir = path.parent().map(Path::to_path_buf);
            return Some(ResolvedInclude { id, display: path.to_string_lossy().into_owned(), dir, text });
        }
    }
    None
}

/// Where [`resolve_include`] looked, for the "cannot find" message.
pub fn searched_places(desc: &SourceDesc, includer_dir: Option<&Path>) -> String {
    let mut places: Vec<String> = includer_dir.iter().map(|d| d.display().to_string()).collect();
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
    let parent = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
    parent.is_dir().then(|| parent.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_root_file_without_a_directory_includes_from_the_current_one() {
        let bare = SourceDesc::new("glsl", xr_sourcebuild::ShaderStage::Fragment, "shader.frag", "");
        assert_eq!(root_dir(&bare), Some(PathBuf::from(".")));
        let dir = std::env::temp_dir();
        let nested =
            SourceDesc::new("glsl", xr_sourcebuild::ShaderStage::Fragment, dir.join("s.frag").to_string_lossy(), "");
        assert_eq!(root_dir(&nested), Some(dir));
        let virtual_file = SourceDesc::new("glsl", xr_sourcebuild::ShaderStage::Fragment, "/no/such/dir/s.frag", "");
        assert_eq!(root_dir(&virtual_file), None);
    }
}
