//! The incremental build's memory: an append-only journal in the store.
//!
//! Each finished artifact appends one line: its recipe key (everything that
//! is not a file's contents: target, compiler, options, stage files, entry
//! points, defines), the object it produced, and the hash of every file it
//! read (its sources and every include), and the object file's stamp. A
//! later build whose recipe has an entry whose files all still hash the
//! same, and whose object is whole in the store (its stamp unchanged, or
//! else read and checked), reuses that object. Lines are appended whole with one write
//! each, so a build killed at any point leaves a journal whose complete
//! lines are all true; a torn last line is ignored, and the next append
//! starts a new line after it. Several processes may append to one journal
//! at once.

use serde::{Deserialize, Serialize};
use std::{
    collections::HashMap,
    fs::{File, OpenOptions},
    io::Write,
    path::{Path, PathBuf},
    sync::Mutex,
};
use xr_store::{ObjectKey, object::ObjectStamp};

/// One finished artifact.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Recipe key, hex.
    pub recipe: String,
    /// The object it produced, hex.
    pub object: String,
    /// (file, BLAKE3 of its contents, hex) for every file it read.
    pub files: Vec<(String, String)>,
    /// The object file as it was when journalled: while it is unchanged a
    /// no-op build trusts the object without reading it back. Absent in
    /// entries of older builds (those objects are read and checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamp: Option<ObjectStamp>,
}

/// The journal of a store.
pub struct Journal {
    path: PathBuf,
    entries: HashMap<String, Entry>,
    /// Every object any line names, superseded ones included.
    objects: std::collections::BTreeSet<String>,
    /// The file ended in a torn line (a killed build's) when it was read:
    /// the first append starts a new line, so that its entry is not glued
    /// to the torn one and lost.
    torn_tail: std::sync::atomic::AtomicBool,
    file: Mutex<Option<File>>,
}

impl Journal {
    /// Reads the journal of the store at `root` (none yet is an empty one).
    pub fn open(root: &Path) -> Self {
        let path = root.join("journal.jsonl");
        let mut entries = HashMap::new();
        let mut objects = std::collections::BTreeSet::new();
        let mut torn_tail = false;
        if let Ok(bytes) = std::fs::read(&path) {
            torn_tail = !bytes.is_empty() && !bytes.ends_with(b"\n");
            let text = String::from_utf8_lossy(&bytes);
            // Only whole lines: a line a killed build left torn has no newline.
            let whole = text.rsplit_once('\n').map_or("", |(whole, _)| whole);
            for line in whole.lines() {
                if let Ok(entry) = serde_json::from_str::<Entry>(line) {
                    objects.insert(entry.object.clone());
                    entries.insert(entry.recipe.clone(), entry);
                }
            }
        }
        Self { path, entries, objects, torn_tail: torn_tail.into(), file: Mutex::new(None) }
    }

    /// Every object the journal names (the build objects of the store),
    /// including those of entries a later build superseded.
    pub fn objects(&self) -> std::collections::BTreeSet<String> {
        self.objects.clone()
    }

    /// The latest entry for a recipe.
    pub fn get(&self, recipe: &ObjectKey) -> Option<&Entry> {
        self.entries.get(&recipe.hex())
    }

    /// Appends an entry with one write.
    pub fn append(&self, entry: &Entry) -> std::io::Result<()> {
        let mut line = Vec::new();
        if self.torn_tail.swap(false, std::sync::atomic::Ordering::Relaxed) {
            line.push(b'\n');
        }
        line.extend(serde_json::to_vec(entry).map_err(std::io::Error::other)?);
        line.push(b'\n');
        let mut file = self.file.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if file.is_none() {
            *file = Some(OpenOptions::new().create(true).append(true).open(&self.path)?);
        }
        file.as_mut().map_or(Ok(()), |f| f.write_all(&line))
    }

    /// Rewrites the journal with only `keep`'s entries (atomically: a
    /// temporary file renamed over it), for `xr store gc`.
    pub fn rewrite(root: &Path, keep: impl Fn(&Entry) -> bool) -> std::io::Result<usize> {
        let journal = Self::open(root);
        let mut kept: Vec<&Entry> = journal.entries.values().filter(|e| keep(e)).collect();
        kept.sort_by(|a, b| a.recipe.cmp(&b.recipe));
        let mut text = Vec::new();
        for entry in &kept {
            text.extend(serde_json::to_vec(entry).map_err(std::io::Error::other)?);
            text.push(b'\n');
        }
        let temp = root.join("tmp").join(format!("journal.{}.0.tmp", std::process::id()));
        std::fs::write(&temp, &text)?;
        File::open(&temp)?.sync_all()?;
        std::fs::rename(&temp, &journal.path)?;
        Ok(journal.entries.len() - kept.len())
    }
}
