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
//!
//! Every build reads the whole journal (tens of MB for a matrix of tens of
//! thousands of artifacts), so it is read line by line and kept compactly:
//! keys as bytes, and each distinct list of (file, hash) kept once and
//! shared by the entries that read it (the variants of a program read the
//! same files). A line whose recipe or object is not a key is skipped as
//! corrupt, like one that is not JSON.

use serde::{Deserialize, Serialize};
use std::{
    collections::{BTreeSet, HashMap, HashSet},
    fs::{File, OpenOptions},
    io::{BufRead, BufReader, BufWriter, Write},
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
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

/// Files and their hashes as an entry lists them, shared by every entry that
/// lists the same.
type FileList = Arc<[(String, String)]>;

/// An entry as the journal keeps it in memory.
struct Kept {
    object: ObjectKey,
    stamp: Option<ObjectStamp>,
    files: FileList,
}

/// The latest entry of a recipe, as [`Journal::get`] finds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recorded<'a> {
    /// The object it produced.
    pub object: ObjectKey,
    /// The object file's stamp when journalled ([`Entry::stamp`]).
    pub stamp: Option<ObjectStamp>,
    /// (file, BLAKE3 of its contents, hex) for every file it read.
    pub files: &'a [(String, String)],
}

impl Recorded<'_> {
    /// The journal line this came from (`recipe` is the key it was found by).
    pub fn to_entry(&self, recipe: &ObjectKey) -> Entry {
        Entry { recipe: recipe.hex(), object: self.object.hex(), files: self.files.to_vec(), stamp: self.stamp }
    }
}

/// The journal of a store.
pub struct Journal {
    path: PathBuf,
    entries: HashMap<ObjectKey, Kept>,
    /// The objects of the lines [`Journal::entries`] does not keep: the
    /// entries later ones superseded and the retired lines. With the kept
    /// entries' objects, every object any line names; a journal of latest
    /// entries only (every no-op's) holds no second set of its objects.
    others: HashSet<ObjectKey>,
    /// The file ended in a torn line (a killed build's) when it was read:
    /// the first append starts a new line, so that its entry is not glued
    /// to the torn one and lost.
    torn_tail: std::sync::atomic::AtomicBool,
    file: Mutex<Option<File>>,
    /// Whole entry lines read, superseded ones included.
    entry_lines: usize,
    /// Distinct recipes read (the latest entries).
    recipes: usize,
    /// Whole lines read, retired ones included.
    lines: usize,
}

impl Journal {
    /// The journal's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the journal of the store at `root` (none yet, or one that
    /// cannot be read, is an empty one).
    pub fn open(root: &Path) -> Self {
        let path = root.join("journal.jsonl");
        let mut journal = Self {
            path,
            entries: HashMap::new(),
            others: HashSet::new(),
            torn_tail: false.into(),
            file: Mutex::new(None),
            entry_lines: 0,
            recipes: 0,
            lines: 0,
        };
        if let Ok(file) = File::open(&journal.path) {
            journal.read(BufReader::new(file));
        }
        journal
    }

    fn read(&mut self, mut reader: impl BufRead) {
        let mut file_lists: HashSet<FileList> = HashSet::new();
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            // Only whole lines: a line a killed build left torn has no newline.
            if line.pop() != Some(b'\n') {
                self.torn_tail = true.into();
                break;
            }
            if let Ok(entry) = serde_json::from_slice::<Entry>(&line) {
                let (Some(recipe), Some(object)) =
                    (ObjectKey::from_hex(&entry.recipe), ObjectKey::from_hex(&entry.object))
                else {
                    continue;
                };
                let files = match file_lists.get(entry.files.as_slice()) {
                    Some(shared) => shared.clone(),
                    None => {
                        let list: FileList = entry.files.into();
                        file_lists.insert(list.clone());
                        list
                    }
                };
                if let Some(superseded) = self.entries.insert(recipe, Kept { object, stamp: entry.stamp, files }) {
                    self.others.insert(superseded.object);
                }
                self.entry_lines += 1;
                self.lines += 1;
            } else if let Ok(retired) = serde_json::from_slice::<Retired>(&line)
                && let Some(object) = ObjectKey::from_hex(&retired.retired)
            {
                self.others.insert(object);
                self.lines += 1;
            }
        }
        self.recipes = self.entries.len();
    }

    /// Frees what the journal holds of its entries, once a build has looked
    /// up every recipe it builds: at tens of thousands of artifacts they are
    /// the largest thing a build holds, and the catalogs are made after.
    /// [`Journal::get`] finds nothing and [`Journal::objects`] is empty
    /// after; appends and [`Journal::needs_compaction`] work as before.
    pub fn release_entries(&mut self) {
        self.entries = HashMap::new();
        self.others = HashSet::new();
    }

    /// Every object the journal names (the build objects of the store),
    /// including those of entries a later build superseded.
    pub fn objects(&self) -> BTreeSet<String> {
        self.entries.values().map(|kept| &kept.object).chain(&self.others).map(ObjectKey::hex).collect()
    }

    /// The latest entry for a recipe.
    pub fn get(&self, recipe: &ObjectKey) -> Option<Recorded<'_>> {
        self.entries.get(recipe).map(|kept| Recorded { object: kept.object, stamp: kept.stamp, files: &kept.files })
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
        self.entry_lines >= COMPACT_MIN_LINES && self.entry_lines > 2 * self.recipes
    }

    /// Compacts the journal of the store at `root` (see the module doc),
    /// keeping the latest entry of each recipe and the retired objects for
    /// which `in_store` holds. Call it with the store's lock held alone.
    pub fn rewrite(root: &Path, in_store: impl Fn(&str) -> bool) -> std::io::Result<Rewritten> {
        let journal = Self::open(root);
        let mut kept: Vec<(String, &Kept)> = journal
            .entries
            .iter()
            .map(|(recipe, kept)| (recipe.hex(), kept))
            .filter(|(_, kept)| in_store(&kept.object.hex()))
            .collect();
        kept.sort_by(|a, b| a.0.cmp(&b.0));
        let live: HashSet<ObjectKey> = kept.iter().map(|(_, kept)| kept.object).collect();
        let mut retired: Vec<String> =
            journal.others.iter().filter(|o| !live.contains(o)).map(ObjectKey::hex).filter(|o| in_store(o)).collect();
        retired.sort();
        let temp = root.join("tmp").join(format!("journal.{}.0.tmp", std::process::id()));
        let mut out = BufWriter::new(File::create(&temp)?);
        for (recipe, entry) in &kept {
            let line = Entry {
                recipe: recipe.clone(),
                object: entry.object.hex(),
                files: entry.files.to_vec(),
                stamp: entry.stamp,
            };
            serde_json::to_writer(&mut out, &line).map_err(std::io::Error::other)?;
            out.write_all(b"\n")?;
        }
        for object in &retired {
            serde_json::to_writer(&mut out, &Retired { retired: object.clone() }).map_err(std::io::Error::other)?;
            out.write_all(b"\n")?;
        }
        out.into_inner().map_err(std::io::IntoInnerError::into_error)?.sync_all()?;
        std::fs::rename(&temp, &journal.path)?;
        Ok(Rewritten {
            entries_dropped: journal.entries.len() - kept.len(),
            lines_before: journal.lines,
            lines_after: kept.len() + retired.len(),
        })
    }
}
