//! An action's input root: files under relative paths, as the tree of
//! REAPI `Directory` messages the server stores (each directory's files
//! and subdirectories sorted by name, so the same files always make the
//! same root digest), and the way back: a root staged into a directory.

use crate::{digest, proto};
use std::{
    collections::{BTreeMap, HashMap},
    path::Path,
};

/// One file of an input root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeFile {
    /// Where it goes, relative, `/`-separated.
    pub path: String,
    /// Its contents' digest.
    pub digest: proto::Digest,
    /// Whether it is run.
    pub executable: bool,
}

/// An input root: its digest and every directory message under it.
#[derive(Clone, Debug)]
pub struct InputRoot {
    /// The root directory's digest: what an `Action` names.
    pub root: proto::Digest,
    /// (digest, encoded message) of every directory, the root among them.
    pub directories: Vec<(proto::Digest, Vec<u8>)>,
}

/// Why files do not make an input root, or a root cannot be staged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TreeError {
    /// A path that is absolute, empty, or steps out with `..`.
    #[error("'{0}' is not a relative path inside the input root")]
    BadPath(String),
    /// Two files at one path with other contents, or a file where a directory is.
    #[error("'{0}' is given twice, differently")]
    Conflict(String),
    /// A directory the tree names that the server did not give.
    #[error("the input root names directory {0}, which the server does not have")]
    MissingDirectory(String),
    /// A directory message that does not decode.
    #[error("directory {0} is not a REAPI Directory")]
    BadDirectory(String),
    /// Writing the staged tree failed.
    #[error("staging {path}: {message}")]
    Io {
        /// What was being written.
        path: String,
        /// Why it failed.
        message: String,
    },
}

#[derive(Default)]
struct Node {
    files: BTreeMap<String, (proto::Digest, bool)>,
    directories: BTreeMap<String, Node>,
}

/// A name one directory entry may have: no separator, not `.` or `..`.
fn is_entry_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains('/') && !name.contains('\0')
}

/// The input root holding `files`.
pub fn build(files: &[TreeFile]) -> Result<InputRoot, TreeError> {
    let mut root = Node::default();
    for file in files {
        let parts: Vec<&str> = file.path.split('/').collect();
        if file.path.starts_with('/') || !parts.iter().all(|p| is_entry_name(p)) {
            return Err(TreeError::BadPath(file.path.clone()));
        }
        let (name, dirs) = parts.split_last().ok_or_else(|| TreeError::BadPath(file.path.clone()))?;
        let mut node = &mut root;
        for dir in dirs {
            if node.files.contains_key(*dir) {
                return Err(TreeError::Conflict(file.path.clone()));
            }
            node = node.directories.entry((*dir).to_owned()).or_default();
        }
        if node.directories.contains_key(*name) {
            return Err(TreeError::Conflict(file.path.clone()));
        }
        let entry = (file.digest.clone(), file.executable);
        match node.files.get(*name) {
            Some(existing) if *existing != entry => return Err(TreeError::Conflict(file.path.clone())),
            _ => {
                node.files.insert((*name).to_owned(), entry);
            }
        }
    }
    let mut directories = Vec::new();
    let root = encode(&root, &mut directories);
    Ok(InputRoot { root, directories })
}

fn encode(node: &Node, out: &mut Vec<(proto::Digest, Vec<u8>)>) -> proto::Digest {
    let directory = proto::Directory {
        files: node
            .files
            .iter()
            .map(|(name, (digest, executable))| proto::FileNode {
                name: name.clone(),
                digest: Some(digest.clone()),
                is_executable: *executable,
                ..Default::default()
            })
            .collect(),
        directories: node
            .directories
            .iter()
            .map(|(name, child)| proto::DirectoryNode { name: name.clone(), digest: Some(encode(child, out)) })
            .collect(),
        ..Default::default()
    };
    let (digest, bytes) = digest::of_message(&directory);
    out.push((digest.clone(), bytes));
    digest
}

/// Every file under the root `root`, with its path, given the directory
/// messages by hash (`directories`, as a bot fetched them).
pub fn files_of(
    root: &proto::Digest,
    directories: &HashMap<String, proto::Directory>,
) -> Result<Vec<TreeFile>, TreeError> {
    let mut files = Vec::new();
    walk(root, "", directories, &mut files, 0)?;
    Ok(files)
}

/// The hashes of the directories under `directory` (its children only).
pub fn child_directories(directory: &proto::Directory) -> Vec<proto::Digest> {
    directory.directories.iter().filter_map(|d| d.digest.clone()).collect()
}

fn walk(
    digest: &proto::Digest,
    prefix: &str,
    directories: &HashMap<String, proto::Directory>,
    files: &mut Vec<TreeFile>,
    depth: usize,
) -> Result<(), TreeError> {
    // A tree deeper than any checkout is a loop or an attack, not an input.
    if depth > 128 {
        return Err(TreeError::BadPath(prefix.to_owned()));
    }
    let directory = directories.get(&digest.hash).ok_or_else(|| TreeError::MissingDirectory(digest::text(digest)))?;
    for file in &directory.files {
        if !is_entry_name(&file.name) {
            return Err(TreeError::BadPath(format!("{prefix}{}", file.name)));
        }
        let digest = file.digest.clone().ok_or_else(|| TreeError::BadPath(format!("{prefix}{}", file.name)))?;
        files.push(TreeFile { path: format!("{prefix}{}", file.name), digest, executable: file.is_executable });
    }
    for child in &directory.directories {
        if !is_entry_name(&child.name) {
            return Err(TreeError::BadPath(format!("{prefix}{}", child.name)));
        }
        let digest = child.digest.as_ref().ok_or_else(|| TreeError::BadPath(format!("{prefix}{}", child.name)))?;
        walk(digest, &format!("{prefix}{}/", child.name), directories, files, depth + 1)?;
    }
    Ok(())
}

/// Writes `files` under `dir`, each file's bytes given by `contents`
/// (a bot's blob cache), read-only: executable files with mode 0555, the
/// others 0444 (a command must not change what another action may share).
pub fn stage(
    files: &[TreeFile],
    dir: &Path,
    mut contents: impl FnMut(&TreeFile, &Path) -> std::io::Result<()>,
) -> Result<(), TreeError> {
    use std::os::unix::fs::PermissionsExt;
    let io =
        |path: &Path, e: std::io::Error| TreeError::Io { path: path.display().to_string(), message: e.to_string() };
    for file in files {
        let path = dir.join(&file.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        contents(file, &path).map_err(|e| io(&path, e))?;
        let mode = if file.executable { 0o555 } else { 0o444 };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).map_err(|e| io(&path, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use prost::Message;

    fn file(path: &str, contents: &[u8], executable: bool) -> TreeFile {
        TreeFile { path: path.into(), digest: digest::of(contents), executable }
    }

    fn decoded(root: &InputRoot) -> HashMap<String, proto::Directory> {
        root.directories
            .iter()
            .map(|(d, bytes)| (d.hash.clone(), proto::Directory::decode(bytes.as_slice()).unwrap()))
            .collect()
    }

    #[test]
    fn paths_that_leave_the_root_or_collide_are_refused() {
        for bad in ["/etc/passwd", "a/../../b", "", "a//b", "./a"] {
            assert_eq!(build(&[file(bad, b"x", false)]).unwrap_err(), TreeError::BadPath(bad.into()), "{bad}");
        }
        let twice = [file("a/b", b"1", false), file("a/b", b"2", false)];
        assert_eq!(build(&twice).unwrap_err(), TreeError::Conflict("a/b".into()));
        let file_and_dir = [file("a", b"1", false), file("a/b", b"2", false)];
        assert_eq!(build(&file_and_dir).unwrap_err(), TreeError::Conflict("a/b".into()));
        let same_twice = [file("a/b", b"1", false), file("a/b", b"1", false)];
        assert!(build(&same_twice).is_ok(), "the same file twice is one file");
    }

    proptest! {
        #[test]
        fn a_root_lists_back_its_files_and_does_not_depend_on_their_order(
            names in proptest::collection::btree_set("[a-c]{1,2}(/[a-c]{1,2}){0,2}", 1..12),
        ) {
            // Keep only names no other name is a directory of.
            let names: Vec<String> = names.iter().filter(|n| !names.iter().any(|m| m.starts_with(&format!("{n}/")))).cloned().collect();
            let files: Vec<TreeFile> = names.iter().enumerate().map(|(i, n)| file(n, n.as_bytes(), i % 2 == 0)).collect();
            let root = build(&files).unwrap();
            let mut reversed = files.clone();
            reversed.reverse();
            prop_assert_eq!(&build(&reversed).unwrap().root, &root.root);
            let mut back = files_of(&root.root, &decoded(&root)).unwrap();
            back.sort_by(|a, b| a.path.cmp(&b.path));
            let mut files = files;
            files.sort_by(|a, b| a.path.cmp(&b.path));
            prop_assert_eq!(back, files);
        }
    }

    #[test]
    fn a_directory_the_server_lacks_or_a_hostile_name_stops_the_walk() {
        let root = build(&[file("a/b", b"1", false)]).unwrap();
        let mut directories = decoded(&root);
        let top = directories.get(&root.root.hash).unwrap().clone();
        let child = top.directories[0].digest.clone().unwrap();
        directories.remove(&child.hash);
        assert!(matches!(files_of(&root.root, &directories), Err(TreeError::MissingDirectory(_))));
        let mut hostile = top;
        hostile.directories[0].name = "..".into();
        let (digest, _) = digest::of_message(&hostile);
        let directories = HashMap::from([(digest.hash.clone(), hostile)]);
        assert!(matches!(files_of(&digest, &directories), Err(TreeError::BadPath(_))));
    }

    #[test]
    fn staging_writes_every_file_with_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let files = [file("bin/tool", b"#!/bin/sh\n", true), file("src/a.glsl", b"void main(){}", false)];
        let blobs: HashMap<String, &[u8]> = [
            (files[0].digest.hash.clone(), &b"#!/bin/sh\n"[..]),
            (files[1].digest.hash.clone(), &b"void main(){}"[..]),
        ]
        .into();
        stage(&files, dir.path(), |f, path| std::fs::write(path, blobs[&f.digest.hash])).unwrap();
        assert_eq!(std::fs::read(dir.path().join("src/a.glsl")).unwrap(), b"void main(){}");
        let mode = std::fs::metadata(dir.path().join("bin/tool")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o555);
        let mode = std::fs::metadata(dir.path().join("src/a.glsl")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o444);
    }
}
