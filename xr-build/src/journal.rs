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
//!
//! Rebuilds append and never edit, so a journal grows with every rebuild.
//! [`Journal::rewrite`] compacts it: one line per recipe (its latest entry)
//! whose object is in the store, and a short `{"retired": object}` line for
//! each other object a line names that is still in the store (so that
//! `xr store gc` still knows it for a build object and collects it). The
//! new journal is written whole to a temporary file, synced, and renamed
//! over the old one: a process killed at any point leaves the old journal
//! or the new one, never a mix. It runs with the store's lock held alone
//! (gc holds it; a build compacts only when no other build runs, see
//! [`Journal::needs_compaction`]), so no concurrent append is lost.

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

/// A compacted journal's line for an object a later entry of its recipe
/// superseded, kept while the object is in the store.
#[derive(Serialize, Deserialize)]
struct Retired {
    retired: String,
}

/// Entry lines a journal holds before a build compacts it: below this, a
/// journal is small enough to read whole every build as it is.
pub const COMPACT_MIN_LINES: usize = 4096;

/// What a rewrite did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rewritten {
    /// Latest entries dropped (their objects are gone).
    pub entries_dropped: usize,
    /// Lines before.
    pub lines_before: usize,
    /// Lines after: one per kept entry, one per retired object kept.
    pub lines_after: usize,
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
    /// Whole entry lines read, superseded ones included.
    entry_lines: usize,
    /// Whole lines read, retired ones included.
    lines: usize,
}

impl Journal {
    /// Reads the journal of the store at `root` (none yet is an empty one).
    pub fn open(root: &Path) -> Self {
        let path = root.join("journal.jsonl");
        let mut entries = HashMap::new();
        let mut objects = std::collections::BTreeSet::new();
        let mut torn_tail = false;
        let (mut entry_lines, mut lines) = (0, 0);
        if let Ok(bytes) = std::fs::read(&path) {
            torn_tail = !bytes.is_empty() && !bytes.ends_with(b"\n");
            let text = String::from_utf8_lossy(&bytes);
            // Only whole lines: a line a killed build left torn has no newline.
            let whole = text.rsplit_once('\n').map_or("", |(whole, _)| whole);
            for line in whole.lines() {
                if let Ok(entry) = serde_json::from_str::<Entry>(line) {
                    objects.insert(entry.object.clone());
                    entries.insert(entry.recipe.clone(), entry);
                    entry_lines += 1;
                    lines += 1;
                } else if let Ok(retired) = serde_json::from_str::<Retired>(line) {
                    objects.insert(retired.retired);
                    lines += 1;
                }
            }
        }
        Self { path, entries, objects, torn_tail: torn_tail.into(), file: Mutex::new(None), entry_lines, lines }
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

    /// Whether a build should compact the journal ([`Journal::rewrite`]):
    /// it holds at least [`COMPACT_MIN_LINES`] entry lines and more than
    /// half of them are superseded, so that the rewrite at least halves it
    /// and a compacted journal is not compacted again until as many
    /// rebuilds have appended to it.
    pub fn needs_compaction(&self) -> bool {
        self.entry_lines >= COMPACT_MIN_LINES && self.entry_lines > 2 * self.entries.len()
    }

    /// Compacts the journal of the store at `root` (see the module doc),
    /// keeping the latest entry of each recipe and the retired objects for
    /// which `in_store` holds. Call it with the store's lock held alone.
    pub fn rewrite(root: &Path, in_store: impl Fn(&str) -> bool) -> std::io::Result<Rewritten> {
        let journal = Self::open(root);
        let mut kept: Vec<&Entry> = journal.entries.values().filter(|e| in_store(&e.object)).collect();
        kept.sort_by(|a, b| a.recipe.cmp(&b.recipe));
        let live: std::collections::BTreeSet<&str> = kept.iter().map(|e| e.object.as_str()).collect();
        let retired: Vec<&String> =
            journal.objects.iter().filter(|o| !live.contains(o.as_str()) && in_store(o)).collect();
        let mut text = Vec::new();
        for entry in &kept {
            text.extend(serde_json::to_vec(entry).map_err(std::io::Error::other)?);
            text.push(b'\n');
        }
        for object in &retired {
            text.extend(serde_json::to_vec(&Retired { retired: (*object).clone() }).map_err(std::io::Error::other)?);
            text.push(b'\n');
        }
        let temp = root.join("tmp").join(format!("journal.{}.0.tmp", std::process::id()));
        std::fs::write(&temp, &text)?;
        File::open(&temp)?.sync_all()?;
        std::fs::rename(&temp, &journal.path)?;
        Ok(Rewritten {
            entries_dropped: journal.entries.len() - kept.len(),
            lines_before: journal.lines,
            lines_after: kept.len() + retired.len(),
        })
    }
}
