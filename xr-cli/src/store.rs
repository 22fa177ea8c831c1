//! `xr store verify`: every object of a store checked against its checksum,
//! every catalog and journal line checked for what it names (the stale
//! objects a failed build kept listed), and with a remote, the remote's
//! copies too.
//! It reports on standard error, as diagnostics are; its exit status says
//! whether the store is whole.

use anyhow::Context;
use std::{
    collections::{BTreeSet, HashMap},
    path::Path,
    sync::Arc,
};
use xr_build::{ActionRecord, journal::Entry};
use xr_remote::{Checked, Kind, Remote};
use xr_store::catalog;
use xr_store::object_key;
use xr_store::{ObjectKey, Store};

/// Checks the store at `root` (and `remote`, if given); with
/// `delete_corrupt`, removes what is corrupt — objects (rebuilt on next
/// use), catalogs (rewritten by the next build), journal lines, leftovers of
/// interrupted writes, and corrupt copies on the remote. Returns whether
/// everything is whole (after removal, with `delete_corrupt`).
pub fn verify(root: &Path, delete_corrupt: bool, remote: Option<Arc<Remote>>) -> anyhow::Result<bool> {
    if !root.join("objects").is_dir() {
        return Err(crate::messages::usage(format!("{} is not an XR store (no objects/ directory)", root.display())));
    }
    let store = Store::open(root).with_context(|| format!("opening the store at {}", root.display()))?;
    // Not in the middle of a gc (objects gone, catalogs not yet); alone when it deletes.
    let kind = if delete_corrupt { xr_store::LockKind::Exclusive } else { xr_store::LockKind::Shared };
    let _lock = store.lock(kind, || {
        eprintln!("xr store verify: waiting for the other xr processes on {} to finish", root.display())
    })?;
    let keys = store.keys()?;
    let mut corrupt = 0;
    let mut bytes = 0u64;
    // Read once here; the catalog check asks this set, not the disk.
    let mut whole = BTreeSet::new();
    for key in &keys {
        match store.get(key) {
            Ok(Some(payload)) => {
                bytes += payload.len() as u64;
                whole.insert(*key);
            }
            Ok(None) => {}
            Err(e) => {
                corrupt += 1;
                eprintln!("corrupt: {e}");
                if delete_corrupt {
                    store.remove(key)?;
                    eprintln!("  removed {key}");
                }
            }
        }
    }
    let leftovers: Vec<_> = std::fs::read_dir(root.join("tmp"))
        .map(|entries| entries.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    for leftover in &leftovers {
        eprintln!("unfinished write: {}", leftover.display());
        if delete_corrupt {
            std::fs::remove_file(leftover).with_context(|| format!("removing {}", leftover.display()))?;
        }
    }
    eprintln!(
        "xr store verify: {} objects, {} whole ({bytes} payload bytes), {corrupt} corrupt, {} unfinished writes{}",
        keys.len(),
        keys.len() - corrupt,
        leftovers.len(),
        if delete_corrupt && (corrupt > 0 || !leftovers.is_empty()) { " (removed)" } else { "" }
    );
    // The objects catalogs and the journal name, for checking on the remote.
    let mut named = BTreeSet::new();
    let catalogs_whole = verify_catalogs(root, &whole, delete_corrupt, remote.as_deref(), &mut named)?;
    let journal_whole = verify_journal(root, delete_corrupt, &mut named)?;
    let remote_whole = match &remote {
        Some(remote) => verify_remote(remote, delete_corrupt, &named)?,
        None => true,
    };
    // After removing what was broken, the store is whole again.
    let local_whole = delete_corrupt || (corrupt == 0 && leftovers.is_empty());
    Ok(local_whole && catalogs_whole && journal_whole && remote_whole)
}

/// Every catalog parses and every object it names is here and whole (or,
/// with a remote, there: the run-time library reads through to it).
fn verify_catalogs(
    root: &Path,
    whole: &BTreeSet<ObjectKey>,
    delete_corrupt: bool,
    remote: Option<&Remote>,
    named: &mut BTreeSet<ObjectKey>,
) -> anyhow::Result<bool> {
    let (programs, errors) = catalog::read_all(root);
    let mut problems = 0;
    for error in &errors {
        problems += 1;
        eprintln!("corrupt catalog: {error}");
        if delete_corrupt {
            std::fs::remove_file(&error.path).with_context(|| format!("removing {}", error.path.display()))?;
            eprintln!("  removed {} (the next xr build writes it again)", error.path.display());
        }
    }
    let (mut objects, mut stale) = (0, 0);
    for program in programs.values() {
        for (variant, entry) in &program.variants {
            // The last good object a failed build kept: listed, not a problem.
            for (target, reason) in &entry.stale {
                stale += 1;
                eprintln!("stale: '{}' {variant} ({target}): the last good object is kept; {reason}", program.name);
            }
            for (target, hex) in &entry.objects {
                objects += 1;
                let Some(key) = ObjectKey::from_hex(hex) else {
                    problems += 1;
                    eprintln!(
                        "corrupt catalog: '{}': {variant} ({target}) names '{hex}', not an object key",
                        program.name
                    );
                    continue;
                };
                named.insert(key);
                let here = whole.contains(&key);
                let there = !here
                    && remote.is_some_and(
                        |r| matches!(r.check(Kind::Object, &key), Ok(Checked::Whole(payload)) if object_key(&payload) == key),
                    );
                if !here && !there {
                    problems += 1;
                    eprintln!(
                        "missing: catalog '{}' names {key} for {variant} ({target}), which is not {} (the next xr build makes it)",
                        program.name,
                        if remote.is_some() { "here or on the remote" } else { "in the store" }
                    );
                }
            }
        }
    }
    eprintln!(
        "xr store verify: {} catalogs, {} corrupt, {objects} objects named, {} problems{}{}",
        programs.len() + errors.len(),
        errors.len(),
        problems,
        if delete_corrupt && !errors.is_empty() { " (corrupt catalogs removed)" } else { "" },
        if stale > 0 {
            format!("; {stale} stale (the last good object, kept when its build failed)")
        } else {
            String::new()
        }
    );
    Ok(problems == 0 || (delete_corrupt && problems == errors.len()))
}

/// Every line of the journal is an entry with object keys, or a torn line a
/// killed build left (see [`JournalLine`]), which every reader skips:
/// reported, not a failure. Anything else is corruption.
fn verify_journal(root: &Path, delete_corrupt: bool, named: &mut BTreeSet<ObjectKey>) -> anyhow::Result<bool> {
    let path = root.join("journal.jsonl");
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(true),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let text = String::from_utf8_lossy(&bytes);
    let (mut entries, mut retired, mut corrupt, mut torn) = (0, 0, 0, 0);
    for (number, line) in text.lines().enumerate() {
        match journal_line(line) {
            JournalLine::Entry(object) => {
                entries += 1;
                named.insert(object);
            }
            JournalLine::Retired(object) => {
                retired += 1;
                named.insert(object);
            }
            JournalLine::Torn => torn += 1,
            JournalLine::TornThenEntry(object) => {
                // Another build appended right after a killed one's torn line.
                torn += 1;
                named.insert(object);
            }
            JournalLine::Corrupt => {
                corrupt += 1;
                let excerpt: String = line.chars().take(60).collect();
                eprintln!("corrupt journal line: {}:{}: {excerpt}…", path.display(), number + 1);
            }
        }
    }
    if delete_corrupt && (corrupt > 0 || torn > 0) {
        xr_build::journal::Journal::rewrite(root, |object| ObjectKey::from_hex(object).is_some())
            .with_context(|| format!("rewriting {} without its bad lines", path.display()))?;
    }
    eprintln!(
        "xr store verify: journal: {entries} entries, {retired} retired objects, {corrupt} corrupt lines, {torn} torn lines of killed builds (skipped when read){}",
        if delete_corrupt && (corrupt > 0 || torn > 0) { " (removed)" } else { "" }
    );
    Ok(corrupt == 0 || delete_corrupt)
}

/// What one journal line is.
#[derive(Debug, PartialEq)]
enum JournalLine {
    /// An entry naming this object.
    Entry(ObjectKey),
    /// A compacted journal's line for a superseded object still in the store.
    Retired(ObjectKey),
    /// The start of an entry whose write a kill cut short (JSON that ends
    /// too early). Later builds append after it, so it can be anywhere.
    Torn,
    /// A torn start with another build's whole entry appended to it (the
    /// other build opened the journal before the tear): the entry is lost
    /// to readers, which rebuild it.
    TornThenEntry(ObjectKey),
    /// Anything else: bytes changed after they were written.
    Corrupt,
}

/// `{"retired": "<object>"}` (see `xr_build::journal`).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RetiredLine {
    retired: String,
}

fn entry_keys(entry: &Entry) -> Option<ObjectKey> {
    ObjectKey::from_hex(&entry.recipe)?;
    ObjectKey::from_hex(&entry.object)
}

fn journal_line(line: &str) -> JournalLine {
    let whole = |text: &str| serde_json::from_str::<Entry>(text).ok().as_ref().and_then(entry_keys);
    if let Ok(retired) = serde_json::from_str::<RetiredLine>(line) {
        return ObjectKey::from_hex(&retired.retired).map_or(JournalLine::Corrupt, JournalLine::Retired);
    }
    match serde_json::from_str::<Entry>(line) {
        Ok(entry) => entry_keys(&entry).map_or(JournalLine::Corrupt, JournalLine::Entry),
        Err(e) if e.is_eof() => JournalLine::Torn,
        Err(_) => {
            let glued = line.rfind("{\"recipe\":").filter(|&at| at > 0).and_then(|at| {
                let torn = matches!(serde_json::from_str::<Entry>(&line[..at]), Err(e) if e.is_eof());
                whole(&line[at..]).filter(|_| torn)
            });
            glued.map_or(JournalLine::Corrupt, JournalLine::TornThenEntry)
        }
    }
}

/// The remote's copies: every object the catalogs and journal name that it
/// has, and, where it can list (WebDAV, not Redis), everything it keeps.
fn verify_remote(remote: &Remote, delete_corrupt: bool, named: &BTreeSet<ObjectKey>) -> anyhow::Result<bool> {
    let listed = |kind| remote.keys(kind).map_err(|e| anyhow::anyhow!("remote: {e}"));
    let objects = listed(Kind::Object)?;
    let actions = listed(Kind::Action)?.unwrap_or_default();
    let can_list = objects.is_some();
    let mut to_check: Vec<(Kind, ObjectKey)> = named.iter().map(|k| (Kind::Object, *k)).collect();
    to_check.extend(objects.unwrap_or_default().into_iter().filter(|k| !named.contains(k)).map(|k| (Kind::Object, k)));
    to_check.extend(actions.into_iter().map(|k| (Kind::Action, k)));
    let (mut whole, mut absent, mut corrupt, mut dangling) = (0, 0, 0, 0);
    // Objects come first in `to_check`: whether each is on the remote, for
    // the actions that name them.
    let mut objects_present: HashMap<ObjectKey, bool> = HashMap::new();
    for (kind, key) in &to_check {
        let checked = match remote.check(*kind, key).map_err(|e| anyhow::anyhow!("remote: {e}"))? {
            // The build and the library refuse these too.
            Checked::Whole(payload) if *kind == Kind::Object && object_key(&payload) != *key => Checked::Corrupt(
                format!("{}: its bytes are not the object it is named after", remote.address(&format!("cas/{key}"))),
            ),
            Checked::Whole(payload) if *kind == Kind::Action => {
                match serde_json::from_slice::<ActionRecord>(&payload).ok().and_then(|r| ObjectKey::from_hex(&r.object))
                {
                    None => Checked::Corrupt(format!("{}: not an action record", remote.address(&format!("ac/{key}")))),
                    Some(object) => {
                        let present = *objects_present
                            .entry(object)
                            .or_insert_with(|| !matches!(remote.check(Kind::Object, &object), Ok(Checked::Absent)));
                        // An evicted object makes its action a miss, not an error.
                        if !present {
                            dangling += 1;
                        }
                        Checked::Whole(payload)
                    }
                }
            }
            checked => checked,
        };
        if *kind == Kind::Object {
            objects_present.insert(*key, !matches!(checked, Checked::Absent));
        }
        match checked {
            Checked::Whole(_) => whole += 1,
            Checked::Absent => absent += 1,
            Checked::Corrupt(why) => {
                corrupt += 1;
                eprintln!("corrupt on the remote: {why}");
                if delete_corrupt {
                    remote.remove(*kind, key).map_err(|e| anyhow::anyhow!("remote: {e}"))?;
                    eprintln!("  removed it from the remote");
                }
            }
        }
    }
    eprintln!(
        "xr store verify: remote {}: {} entries checked{}, {whole} whole, {corrupt} corrupt, {absent} named here but not uploaded, {dangling} action records whose object is gone (a miss){}",
        remote.url(),
        to_check.len(),
        if can_list { "" } else { " (it cannot list: only what this store names)" },
        if delete_corrupt && corrupt > 0 { " (removed)" } else { "" }
    );
    Ok(corrupt == 0 || delete_corrupt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_lines_tell_torn_writes_from_corruption() {
        let key = ObjectKey::from_parts([b"k".as_slice()]);
        let entry =
            serde_json::to_string(&Entry { recipe: key.hex(), object: key.hex(), files: vec![], stamp: None }).unwrap();
        assert_eq!(journal_line(&entry), JournalLine::Entry(key));
        for cut in [1, 12, entry.len() / 2, entry.len() - 1] {
            assert_eq!(journal_line(&entry[..cut]), JournalLine::Torn, "{}", &entry[..cut]);
        }
        let glued = format!("{}{entry}", &entry[..20]);
        assert_eq!(journal_line(&glued), JournalLine::TornThenEntry(key));
        assert_eq!(journal_line(&entry.replacen('"', "'", 1)), JournalLine::Corrupt);
        assert_eq!(journal_line(&entry.replace(&key.hex(), "not-hex")), JournalLine::Corrupt);
        assert_eq!(journal_line(&format!("junk{entry}")), JournalLine::Corrupt, "not a torn start");
        assert_eq!(journal_line(&entry[..20].replace("recipe", "rec\u{1}ipe")), JournalLine::Corrupt);
    }
}
