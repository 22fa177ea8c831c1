//! A whole build found up to date without loading a plugin.
//!
//! A no-op build must compare the journal with every input, which is cheap;
//! but loading the compiler plugins to learn their identities costs more
//! than all the comparing (three shared libraries of ~11 MB each, ~5 ms).
//! So a build in which every artifact succeeded leaves a *build stamp* in
//! the store, `last-build.json`, as ninja leaves its log: the key of what
//! was asked (manifest text, store, targets, programs, shard, and the stamp
//! of `xr` and of every plugin file it could load), every input file with
//! its hash, the stamp of every object and catalog the build stands on, and
//! every environment variable the build read (XR's code and the plugins',
//! through `xr_env`), with the hash of its value (never the value: a token
//! would lie in the store), set or not.
//!
//! The next build with the same key is a no-op, without plugins, when every
//! input still hashes the same and every object and catalog file still has
//! its stamp ([`xr_sourcebuild::store::ObjectStamp`]: size, times, inode —
//! any write or replacement changes one), and every variable still has its
//! value. Anything else — an edited source,
//! a rebuilt plugin, an object removed by `xr store gc`, a catalog written
//! by another build, a file that cannot be read — sends the build down the
//! ordinary path, which decides per artifact. The stamp is only ever a
//! shortcut to the answer the ordinary path would give: a build that does
//! not take it removes it before building and writes a new one only after
//! a whole success, so a stamp always describes one.
//! Like the journal, a new file that would shadow an include is not noticed.
//!
//! The stamp is JSON lines, read and written one line at a time so that a
//! no-op's memory does not grow with the artifacts: a [`Header`] (which
//! counts the lines after it, so that a stamp cut short never holds), then
//! one [`StampLine`] per variable, input, object and catalog.

use crate::{BuildRequest, Manifest, Summary};
use serde::{Deserialize, Serialize};
use std::{
    fs::File,
    io::{BufRead, BufReader, BufWriter, Write},
    path::{Path, PathBuf},
};
use xr_host::registry::plugin_files;
use xr_store::{ObjectKey, Store, object::ObjectStamp, object::file_stamp};

/// File name of the stamp, in the store's directory.
const FILE: &str = "last-build.json";

/// The stamp's first line.
#[derive(Serialize, Deserialize)]
struct Header {
    /// [`key`] of the build.
    key: String,
    /// The artifacts.
    artifacts: usize,
    /// Their payload bytes.
    bytes: u64,
    /// Lines after this one.
    lines: usize,
}

/// One thing a successful build stood on.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum StampLine {
    /// A file the build's artifacts read, with the BLAKE3 of its contents.
    Input(String, String),
    /// An object its artifacts are, with its file's stamp.
    Object(String, ObjectStamp),
    /// A catalog file, with its stamp.
    Catalog(String, ObjectStamp),
    /// An environment variable the build read (by XR or a plugin), with the
    /// BLAKE3 of its value then (`None`: unset).
    Variable(String, Option<String>),
}

/// What a build needs to know to be keyed: the manifest as loaded, the
/// request, and where plugins are loaded from.
pub struct NoopQuery<'a> {
    /// The manifest (its store resolved, or overridden).
    pub manifest: &'a Manifest,
    /// The request.
    pub request: &'a BuildRequest,
    /// The plugin directories the build would search.
    pub plugin_dirs: &'a [PathBuf],
}

/// The key of a build: everything besides file contents and store contents
/// that decides what it builds. `None` when something cannot be read. Take
/// it once, before building, and give the same to [`check`] and
/// [`record`]: a manifest edited while the build runs must not be stamped
/// as built.
/// The environment is not part of it but of the stamp's lines: each
/// variable the last build read, with its value then.
pub fn key(query: &NoopQuery<'_>) -> Option<String> {
    let mut parts: Vec<Vec<u8>> = vec![b"xr-build-stamp/3".to_vec(), xr_store::FORMAT.into()];
    // Absolute: every spelling of one manifest is one build.
    parts.push(crate::paths::absolute(&query.manifest.path).to_string_lossy().as_bytes().to_vec());
    parts.push(std::fs::read(&query.manifest.path).ok()?);
    parts.push(crate::paths::absolute(&query.manifest.store).to_string_lossy().as_bytes().to_vec());
    let request = query.request;
    parts.push(
        format!("targets {:?} programs {:?} shard {:?}", request.targets, request.programs, request.shard).into(),
    );
    // The usage logs' selections, not their files: a log that grew by a
    // variant already built changes nothing, one naming another does.
    parts.push(request.used.as_ref().map(|u| u.key_text()).unwrap_or_default().into());
    for program in &query.manifest.programs {
        if let Some(used) = &program.used {
            parts.push(format!("{} used {:?}", program.name, used.variants).into());
        }
    }
    let exe = std::env::current_exe().ok()?;
    parts.push(stamp_text(&exe)?.into());
    for dir in query.plugin_dirs {
        parts.push(dir.to_string_lossy().as_bytes().to_vec());
        for file in plugin_files(dir) {
            parts.push(stamp_text(&file)?.into());
        }
    }
    Some(ObjectKey::from_parts(parts.iter().map(Vec::as_slice)).hex())
}

fn stamp_text(path: &Path) -> Option<String> {
    Some(format!("{} {:?}", path.display(), file_stamp(path)?))
}

/// The summary of a no-op, if the last build's stamp (under `key`) shows
/// that nothing changed: every input hashes the same, every object and
/// catalog is as it was. `None` sends the build down the ordinary path, and
/// then the stamp is removed at once, so that no build that ends early or
/// is killed leaves one behind.
pub fn check(query: &NoopQuery<'_>, key: Option<&str>) -> Option<Summary> {
    let summary = holds(query, key?);
    if summary.is_none() {
        let _ = std::fs::remove_file(query.manifest.store.join(FILE));
    }
    summary
}

fn holds(query: &NoopQuery<'_>, key: &str) -> Option<Summary> {
    let started = std::time::Instant::now();
    if query.request.reads_shared_cache() {
        return None;
    }
    let store = Store::open(&query.manifest.store).ok()?;
    let mut reader = BufReader::new(File::open(store.root().join(FILE)).ok()?);
    let mut line = Vec::new();
    reader.read_until(b'\n', &mut line).ok()?;
    let header: Header = serde_json::from_slice(&line).ok()?;
    if header.key != key {
        return None;
    }
    let mut objects = 0;
    // The inputs, absolute: what a build script tells cargo to watch after a no-op too.
    let mut inputs = std::collections::BTreeMap::new();
    for _ in 0..header.lines {
        line.clear();
        reader.read_until(b'\n', &mut line).ok()?;
        let holds = match serde_json::from_slice(&line).ok()? {
            StampLine::Input(file, hash) => {
                let bytes = std::fs::read(&file).ok()?;
                let holds = blake3::hash(&bytes).to_hex().as_str() == hash;
                inputs.insert(file, hash);
                holds
            }
            StampLine::Object(hex, object_stamp) => {
                objects += 1;
                store.stamp(&ObjectKey::from_hex(&hex)?) == Some(object_stamp)
            }
            StampLine::Catalog(path, catalog_stamp) => file_stamp(Path::new(&path)) == Some(catalog_stamp),
            StampLine::Variable(name, value) => variable(&name) == value,
        };
        if !holds {
            return None;
        }
    }
    Some(Summary {
        reused: header.artifacts,
        unique_objects: objects,
        bytes: header.bytes,
        elapsed: started.elapsed(),
        inputs,
        ..Summary::default()
    })
}

/// A variable's value as the stamp keeps it: its BLAKE3, never the value
/// (a token or a password would lie in the store in the clear), read
/// through the tracked reader (a no-op has read what the build it stands
/// for read); `None` when unset.
fn variable(name: &str) -> Option<String> {
    xr_env::var_os(name).map(|value| blake3::hash(value.as_encoded_bytes()).to_hex().to_string())
}

/// After a build: leaves its stamp under `key` (taken before the build) if
/// everything succeeded, and removes any earlier one otherwise; `variables`
/// are the environment variables the build read (its registry's
/// [`environment_read`](xr_host::Registry::environment_read)), kept with
/// their values. Failing to write it only costs the next no-op its shortcut.
pub fn record(query: &NoopQuery<'_>, key: Option<String>, summary: &Summary, succeeded: bool, variables: &[String]) {
    let path = query.manifest.store.join(FILE);
    let _ = std::fs::remove_file(&path);
    if !succeeded || !summary.failed.is_empty() || query.request.reads_shared_cache() {
        return;
    }
    let Ok(store) = Store::open(&query.manifest.store) else { return };
    let Some(key) = key else { return };
    // Written whole or not at all: a reader should never see half a stamp.
    let temp = store.root().join("tmp").join(format!("last-build.{}.0.tmp", std::process::id()));
    match write_stamp(&temp, query, &store, key, summary, variables) {
        Some(()) => {
            if std::fs::rename(&temp, &path).is_err() {
                let _ = std::fs::remove_file(&temp);
            }
        }
        None => {
            let _ = std::fs::remove_file(&temp);
        }
    }
}

/// Writes the stamp of `summary` to `temp`; `None` if a file cannot be
/// stamped or written.
fn write_stamp(
    temp: &Path,
    query: &NoopQuery<'_>,
    store: &Store,
    key: String,
    summary: &Summary,
    variables: &[String],
) -> Option<()> {
    let header = Header {
        key,
        artifacts: summary.built + summary.fetched + summary.reused,
        bytes: summary.bytes,
        lines: summary.inputs.len() + summary.objects.len() + summary.catalogs.len() + variables.len(),
    };
    let mut out = BufWriter::new(File::create(temp).ok()?);
    write_line(&mut out, &header)?;
    // First: a changed variable is found before any input is hashed.
    for name in variables {
        write_line(&mut out, &StampLine::Variable(name.clone(), variable(name)))?;
    }
    // The build names its inputs relative to the manifest; the stamp is
    // this machine's and is checked from any directory: absolute.
    let root = crate::paths::SourceRoot::of_manifest(&query.manifest.path);
    for (file, hash) in &summary.inputs {
        write_line(&mut out, &StampLine::Input(root.on_disk(file).to_string_lossy().into_owned(), hash.clone()))?;
    }
    for object in &summary.objects {
        write_line(&mut out, &StampLine::Object(object.hex(), store.stamp(object)?))?;
    }
    for catalog in &summary.catalogs {
        write_line(
            &mut out,
            &StampLine::Catalog(crate::paths::absolute(catalog).to_string_lossy().into_owned(), file_stamp(catalog)?),
        )?;
    }
    out.into_inner().ok()?;
    Some(())
}

fn write_line(out: &mut impl Write, line: &impl Serialize) -> Option<()> {
    serde_json::to_writer(&mut *out, line).ok()?;
    out.write_all(b"\n").ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{request::Shard, used::UsedVariants};
    use std::{collections::BTreeSet, sync::Arc};

    const MANIFEST: &str = "store = \"store\"\n\n[[program]]\nname = \"p\"\ntargets = [\"vk-spirv\"]\n\
        stages = [{ stage = \"vertex\", file = \"a.vert\" }]\n";

    /// Each part of a build's key changed alone gives another key: the
    /// manifest's place and bytes, the store, the targets, programs and
    /// shard asked for, the usage logs' selections (the build's and a
    /// program's own), the plugin directories and the plugin files in them
    /// (the environment is checked line by line, in the stamp:
    /// `xr_build::a_variable_the_last_build_read_changed_takes_the_ordinary_path_and_others_do_not`
    /// in the integration tests).
    #[test]
    fn each_part_of_a_builds_key_changed_alone_gives_another_key() {
        let dir = tempfile::tempdir().unwrap();
        let other_checkout = tempfile::tempdir().unwrap();
        for root in [dir.path(), other_checkout.path()] {
            std::fs::write(root.join("xr.toml"), MANIFEST).unwrap();
            std::fs::write(root.join("a.vert"), "void main() {}\n").unwrap();
            std::fs::create_dir_all(root.join("plugins")).unwrap();
        }
        let manifest = |path: &Path| Manifest::load(path).unwrap();
        let base_manifest = manifest(&dir.path().join("xr.toml"));
        let plugins = vec![dir.path().join("plugins")];
        let key_of = |manifest: &Manifest, request: &BuildRequest, plugin_dirs: &[PathBuf]| {
            key(&NoopQuery { manifest, request, plugin_dirs }).unwrap()
        };
        let request = BuildRequest::default();
        let base = key_of(&base_manifest, &request, &plugins);
        assert_eq!(key_of(&base_manifest, &request, &plugins), base);

        // The same manifest in another checkout, building into the same store.
        let mut elsewhere = manifest(&other_checkout.path().join("xr.toml"));
        elsewhere.store = base_manifest.store.clone();
        let mut other_store = base_manifest.clone();
        other_store.store = dir.path().join("elsewhere");
        let mut own_log = base_manifest.clone();
        own_log.programs[0].used = Some(crate::used::ProgramUse {
            log: dir.path().join("p.jsonl"),
            variants: BTreeSet::from(["p".to_owned()]),
        });
        let used = UsedVariants {
            variants: [("p".to_owned(), BTreeSet::from(["p".to_owned()]))].into(),
            ..UsedVariants::default()
        };
        let with = |change: fn(&mut BuildRequest)| {
            let mut request = BuildRequest::default();
            change(&mut request);
            request
        };
        let others: Vec<(&str, String)> = vec![
            ("the manifest's place", key_of(&elsewhere, &request, &plugins)),
            ("the store", key_of(&other_store, &request, &plugins)),
            ("the targets", key_of(&base_manifest, &with(|r| r.targets = vec!["gl-spirv".into()]), &plugins)),
            ("the programs", key_of(&base_manifest, &with(|r| r.programs = vec!["p".into()]), &plugins)),
            ("the shard", key_of(&base_manifest, &with(|r| r.shard = Shard::parse("1/2").ok()), &plugins)),
            (
                "the build's usage logs",
                key_of(
                    &base_manifest,
                    &BuildRequest { used: Some(Arc::new(used)), ..BuildRequest::default() },
                    &plugins,
                ),
            ),
            ("a program's own usage log", key_of(&own_log, &request, &plugins)),
            ("the plugin directories", key_of(&base_manifest, &request, &[other_checkout.path().join("plugins")])),
        ];
        let mut seen = vec![("the base", base.clone())];
        for (part, key) in others {
            for (other, seen_key) in &seen {
                assert_ne!(&key, seen_key, "{part} changed alone gives the key of {other}");
            }
            seen.push((part, key));
        }
        // A plugin file added to a searched directory.
        std::fs::write(dir.path().join("plugins/libxr_new.so"), b"plugin").unwrap();
        let with_plugin = key_of(&base_manifest, &request, &plugins);
        assert_ne!(with_plugin, base, "a plugin file");
        // The manifest's bytes, at the same place.
        std::fs::write(dir.path().join("xr.toml"), format!("{MANIFEST}# edited\n")).unwrap();
        assert_ne!(key_of(&base_manifest, &request, &plugins), with_plugin, "the manifest's bytes");
    }
}
