//! The usage log: what an engine loaded, by name, so that a later step can
//! make the driver's objects before the first frame, or build only what is
//! used.
//!
//! Each line is one JSON object, a [`Usage`]: the program, the variant, the
//! target whose object was loaded, the override values and, where the
//! device made pipelines for it at draw time, the draw states those were
//! made for (attachment formats, named by the build system that made
//! them). It names no bytecode, so a log written before a shader edit
//! still names what to warm after it.
//!
//! The invariant, kept by [`UsageLog::record`] and [`read`]: a line is
//! written whole by one `write` to a file opened for appending, so lines
//! of processes that record at once never interleave, and nothing already
//! in the log is ever rewritten. A writer that dies mid-line leaves at most
//! its last line torn; the next writer to open the log ends that line
//! first, and [`read`] skips it and says so. A process records an entry
//! once, and [`read`] folds the entries that several processes recorded.

use serde::{Deserialize, Serialize};
use std::{
    collections::{BTreeMap, BTreeSet},
    fs::{File, OpenOptions},
    io::Write,
    path::{Path, PathBuf},
    sync::Mutex,
};

/// The log's file name when it lives in the store.
pub const STORE_FILE: &str = "usage.jsonl";

/// One thing an engine loaded.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Usage {
    /// The program.
    pub program: String,
    /// The variant's name (`unlit[TINT=0,PATTERN=flat]`).
    pub variant: String,
    /// The target whose object was loaded.
    pub target: String,
    /// The override values the load asked for, by name; the others kept
    /// their defaults. Written as text, so entries compare exactly.
    #[serde(default)]
    pub overrides: BTreeMap<String, String>,
    /// The draw states the device made a pipeline of this program for,
    /// beyond what a load makes: each as its build system names it
    /// (`colors=R16G16B16A16_SFLOAT depth=D32_SFLOAT`), opaque to the
    /// host and handed back to that build system to warm. Empty where
    /// the program's draws make nothing (shader objects, OpenGL).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub draw_states: BTreeSet<String>,
}

impl Usage {
    /// What names the load, whatever it was drawn with: program, variant,
    /// target and override values.
    pub fn load_key(&self) -> (&str, &str, &str, &BTreeMap<String, String>) {
        (&self.program, &self.variant, &self.target, &self.overrides)
    }
}

/// Why a usage log could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    /// The file could not be opened, read or written.
    #[error("{}: {cause}", path.display())]
    Io {
        /// The log.
        path: PathBuf,
        /// The file system's error.
        cause: std::io::Error,
    },
}

/// A usage log opened for appending.
#[derive(Debug)]
pub struct UsageLog {
    path: PathBuf,
    file: File,
    /// Entries this process recorded or found in the log when it opened it.
    recorded: Mutex<BTreeSet<Usage>>,
    /// The entries the log held when this process opened it.
    at_open: BTreeSet<Usage>,
}

impl UsageLog {
    /// Opens (or makes) the log at `path` for appending; what it holds
    /// already is not recorded again by this process.
    pub fn open(path: &Path) -> Result<Self, UsageError> {
        let io = |cause| UsageError::Io { path: path.to_path_buf(), cause };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut file = OpenOptions::new().create(true).append(true).open(path).map_err(io)?;
        let read = read(path)?;
        // A torn last line is ended, so that this process's first entry
        // starts a line of its own.
        if read.torn {
            file.write_all(b"\n").map_err(io)?;
        }
        let at_open = read.entries;
        Ok(Self { path: path.to_path_buf(), file, recorded: Mutex::new(at_open.clone()), at_open })
    }

    /// The log's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the log named `usage`'s program, variant and override
    /// values, on any target, with every one of its draw states, when this
    /// process opened it: what a warm from that log covered.
    pub fn covered_at_open(&self, usage: &Usage) -> bool {
        self.at_open.iter().any(|u| {
            u.program == usage.program
                && u.variant == usage.variant
                && u.overrides == usage.overrides
                && usage.draw_states.is_subset(&u.draw_states)
        })
    }

    /// The draw states the log named, when this process opened it, for
    /// `usage`'s load (program, variant, target and override values): what
    /// a load can make at once so that its draws make nothing.
    pub fn draw_states_at_open(&self, usage: &Usage) -> Vec<String> {
        self.at_open
            .iter()
            .filter(|u| u.load_key() == usage.load_key())
            .flat_map(|u| u.draw_states.iter().cloned())
            .collect()
    }

    /// Appends `usage` unless this process recorded it (or found it)
    /// before; whether it was new.
    pub fn record(&self, usage: &Usage) -> Result<bool, UsageError> {
        let mut recorded = self.recorded.lock().unwrap_or_else(|p| p.into_inner());
        if recorded.contains(usage) {
            return Ok(false);
        }
        let mut line = serde_json::to_string(usage).expect("a usage entry is plain data");
        line.push('\n');
        // One write of the whole line (see the module documentation).
        (&self.file).write_all(line.as_bytes()).map_err(|cause| UsageError::Io { path: self.path.clone(), cause })?;
        recorded.insert(usage.clone());
        Ok(true)
    }
}

/// A usage log as read: its distinct entries, and the lines skipped.
///
/// Entries that name the same load (program, variant, target, override
/// values) are one entry with the draw states of all of them: a process
/// records a load when it happens and its draw states when it knows them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Read {
    /// Every distinct load, sorted, with all the draw states recorded for it.
    pub entries: BTreeSet<Usage>,
    /// The 1-based numbers of the lines that are no entry: cut short by a
    /// writer that died mid-line (or edited by hand), each said in a
    /// warning naming the file and line.
    pub skipped_lines: Vec<usize>,
    /// Whether the file ends in the middle of a line.
    pub torn: bool,
}

/// Reads the log at `path`: every distinct entry. A line that is no entry
/// (a torn line) is skipped and noted, in [`Read::skipped_lines`] and a
/// warning naming the file and line. A log that does not exist yet holds
/// nothing.
pub fn read(path: &Path) -> Result<Read, UsageError> {
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Read::default()),
        Err(cause) => return Err(UsageError::Io { path: path.to_path_buf(), cause }),
    };
    let mut read = Read { torn: !text.is_empty() && !text.ends_with('\n'), ..Read::default() };
    // Each load, its draw states set apart, with the states of every line naming it.
    let mut loads: BTreeMap<Usage, BTreeSet<String>> = BTreeMap::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Usage>(line) {
            Ok(usage) => {
                let mut load = usage;
                let states = std::mem::take(&mut load.draw_states);
                loads.entry(load).or_default().extend(states);
            }
            Err(e) => {
                tracing::warn!("usage log {}:{}: not an entry (a torn line?), skipped: {e}", path.display(), index + 1);
                read.skipped_lines.push(index + 1);
            }
        }
    }
    read.entries = loads.into_iter().map(|(load, draw_states)| Usage { draw_states, ..load }).collect();
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(program: &str, variant: &str) -> Usage {
        Usage {
            program: program.into(),
            variant: variant.into(),
            target: "vk-spirv".into(),
            overrides: BTreeMap::from([("tint.r".to_owned(), "0.5".to_owned())]),
            draw_states: BTreeSet::new(),
        }
    }

    #[test]
    fn draw_states_recorded_apart_fold_into_their_load_and_count_for_what_a_warm_covered() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("usage.jsonl");
        let log = UsageLog::open(&path).unwrap();
        let load = usage("lit", "lit");
        let drawn = |states: &[&str]| Usage {
            draw_states: states.iter().map(|s| (*s).to_owned()).collect(),
            ..usage("lit", "lit")
        };
        log.record(&load).unwrap();
        log.record(&drawn(&["colors=A"])).unwrap();
        log.record(&drawn(&["colors=B depth=D"])).unwrap();
        log.record(&usage("unlit", "unlit")).unwrap();
        drop(log);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.lines().next().unwrap().contains("draw_states"), "a load with none writes none: {text}");
        let entries = read(&path).unwrap().entries;
        assert_eq!(entries, BTreeSet::from([drawn(&["colors=A", "colors=B depth=D"]), usage("unlit", "unlit")]));
        let reopened = UsageLog::open(&path).unwrap();
        assert_eq!(reopened.draw_states_at_open(&load), ["colors=A", "colors=B depth=D"]);
        assert_eq!(reopened.draw_states_at_open(&usage("unlit", "unlit")), Vec::<String>::new());
        assert!(reopened.covered_at_open(&drawn(&["colors=B depth=D"])));
        assert!(reopened.covered_at_open(&load));
        assert!(!reopened.covered_at_open(&drawn(&["colors=C"])), "a state the log never named");
    }

    #[test]
    fn entries_are_recorded_once_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs/usage.jsonl");
        let log = UsageLog::open(&path).unwrap();
        for _ in 0..3 {
            log.record(&usage("unlit", "unlit[A=0]")).unwrap();
        }
        log.record(&usage("lit", "lit")).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);
        // Another process (a second open) does not record what is there.
        UsageLog::open(&path).unwrap().record(&usage("lit", "lit")).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);
        let read = read(&path).unwrap();
        assert_eq!(read.entries, BTreeSet::from([usage("lit", "lit"), usage("unlit", "unlit[A=0]")]));
        assert!(read.skipped_lines.is_empty() && !read.torn);
    }

    #[test]
    fn writers_at_once_leave_whole_lines_and_duplicates_fold() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("usage.jsonl");
        std::thread::scope(|scope| {
            for writer in 0..4 {
                let path = &path;
                scope.spawn(move || {
                    // Each writer its own file handle, as separate processes have.
                    let log = UsageLog::open(path).unwrap();
                    for n in 0..200 {
                        log.record(&usage("p", &format!("p[N={n}]"))).unwrap();
                        log.record(&usage(&format!("w{writer}"), &format!("w[N={n}]"))).unwrap();
                    }
                });
            }
        });
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.lines().count() >= 200 + 4 * 200, "every writer's lines are there");
        let read = read(&path).unwrap();
        assert_eq!(read.entries.len(), 200 + 4 * 200, "shared entries fold into one each");
        assert!(read.skipped_lines.is_empty() && !read.torn, "{read:?}");
    }

    #[test]
    fn a_torn_last_line_is_skipped_and_noted_and_the_next_writer_starts_a_line_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("usage.jsonl");
        let log = UsageLog::open(&path).unwrap();
        log.record(&usage("unlit", "unlit[A=0]")).unwrap();
        log.record(&usage("lit", "lit")).unwrap();
        drop(log);
        let whole = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, &whole[..whole.len() - 7]).unwrap();
        let cut = read(&path).unwrap();
        assert_eq!(cut.entries, BTreeSet::from([usage("unlit", "unlit[A=0]")]));
        assert_eq!((cut.skipped_lines.as_slice(), cut.torn), ([2].as_slice(), true));
        // The next writer records what the torn line lost, on a line of its own.
        UsageLog::open(&path).unwrap().record(&usage("lit", "lit")).unwrap();
        let mended = read(&path).unwrap();
        assert_eq!(mended.entries, BTreeSet::from([usage("lit", "lit"), usage("unlit", "unlit[A=0]")]));
        assert_eq!((mended.skipped_lines.as_slice(), mended.torn), ([2].as_slice(), false));
        assert_eq!(read(&dir.path().join("none.jsonl")).unwrap(), Read::default());
    }
}
