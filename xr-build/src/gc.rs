//! `xr store gc`: drops the build objects no manifest references.
//!
//! The host never decodes an artifact, so it tells build objects from the
//! rest by where they come from: an object the build journal or a catalog
//! names is a build object. Kept: every object in the catalog of a program
//! of the given manifests (a stale one too: the last good object a failed
//! build kept is what the run-time library loads), the program binaries (kept by build systems with
//! the store's binary records) of those programs, and every other object
//! (a Vulkan pipeline cache, say). Dropped: build objects no kept catalog
//! points at, program binaries of other programs, and the catalogs of
//! programs no manifest has. The journal loses the entries of dropped objects.
//!
//! It holds the store's lock alone ([`xr_store::lock`]): it waits for the
//! builds writing to the store, and builds started meanwhile wait for it.

use crate::{journal::Journal, manifest::Manifest};
use std::collections::BTreeSet;
use xr_store::{LockKind, ObjectKey, Store, StoreError, binary_record::program_of, catalog};

/// What `gc` did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Objects looked at.
    pub objects: usize,
    /// Objects kept.
    pub kept: usize,
    /// Objects removed.
    pub removed: usize,
    /// Payload bytes removed.
    pub removed_bytes: u64,
    /// Cached reflections removed (of objects gone, or left half-written).
    pub reflections_dropped: usize,
    /// Catalog files removed (programs no manifest has).
    pub catalogs_removed: Vec<String>,
    /// Journal entries dropped.
    pub journal_entries_dropped: usize,
}

/// Collects the store at `store` against `manifests`; `dry_run` only counts.
pub fn gc(store: &Store, manifests: &[Manifest], dry_run: bool) -> Result<GcReport, StoreError> {
    // Alone: a running build may hold objects no catalog names yet (see xr_store::lock).
    let _lock = store.lock(LockKind::Exclusive, || {
        tracing::warn!("waiting for the builds writing to {} to finish", store.root().display())
    })?;
    let programs: BTreeSet<&str> = manifests.iter().flat_map(|m| m.programs.iter().map(|p| p.name.as_str())).collect();
    let (catalogs, _) = catalog::read_all(store.root());
    let mut referenced: BTreeSet<String> = BTreeSet::new();
    let mut built: BTreeSet<String> = Journal::open(store.root()).objects();
    let mut report = GcReport::default();
    for (name, program) in &catalogs {
        let objects = program.variants.values().flat_map(|v| v.objects.values().cloned());
        if programs.contains(name.as_str()) {
            referenced.extend(objects);
        } else {
            built.extend(objects);
            report.catalogs_removed.push(name.clone());
        }
    }
    for key in store.keys()? {
        report.objects += 1;
        let payload = match store.get(&key) {
            Ok(Some(payload)) => Some(payload),
            Ok(None) => continue,
            // Corrupt: nothing can use it; a build or a load rebuilds it.
            Err(_) => None,
        };
        let drop = match &payload {
            Some(payload) => dropped(&key, payload, &referenced, &built, &programs),
            None => true,
        };
        let payload = payload.unwrap_or_default();
        if !drop {
            report.kept += 1;
            continue;
        }
        report.removed += 1;
        report.removed_bytes += payload.len() as u64;
        if !dry_run {
            store.remove(&key)?;
        }
    }
    if !dry_run {
        for name in &report.catalogs_removed {
            let path = catalog::dir(store.root()).join(format!("{name}.json"));
            std::fs::remove_file(&path).map_err(|source| StoreError::Io { path, source })?;
        }
        report.journal_entries_dropped = crate::journal::Journal::rewrite(store.root(), |object| {
            ObjectKey::from_hex(object).is_some_and(|k| store.path_of(&k).exists())
        })
        .map_err(|source| StoreError::Io { path: store.root().join("journal.jsonl"), source })?
        .entries_dropped;
        report.reflections_dropped = crate::bindgen::reflection::drop_unreferenced(store);
    }
    Ok(report)
}

fn dropped(
    key: &ObjectKey,
    payload: &[u8],
    referenced: &BTreeSet<String>,
    built: &BTreeSet<String>,
    programs: &BTreeSet<&str>,
) -> bool {
    if referenced.contains(&key.hex()) {
        return false;
    }
    if let Some(variant) = program_of(payload) {
        // Stored by the run-time library under the variant's name.
        let program = variant.split('[').next().unwrap_or_default();
        return !programs.contains(program);
    }
    built.contains(&key.hex())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::Entry;
    use std::collections::BTreeMap;
    use xr_store::catalog::{CatalogProgram, CatalogVariant};

    #[test]
    fn gc_keeps_what_a_catalog_names_stale_or_not_and_drops_the_rest() {
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path()).unwrap();
        let put = |payload: &[u8]| {
            let key = xr_store::object_key(payload);
            store.put(&key, payload).unwrap();
            key
        };
        let (fresh, stale, superseded) = (put(b"fresh"), put(b"stale"), put(b"superseded"));
        // All three are build objects: the journal names them.
        let journal = Journal::open(store.root());
        for object in [fresh, stale, superseded] {
            let entry = Entry { recipe: object.hex(), object: object.hex(), files: vec![], stamp: None };
            journal.append(&entry).unwrap();
        }
        let mut variant = CatalogVariant::default();
        variant.objects.insert("gl-glsl".into(), fresh.hex());
        variant.objects.insert("vk-spirv".into(), stale.hex());
        variant.stale.insert("vk-spirv".into(), "include/pattern.glsl:3: error: bad".into());
        let program = CatalogProgram {
            name: "p".into(),
            manifest: "xr.toml".into(),
            axes: Vec::new(),
            overrides: Vec::new(),
            targets: vec!["gl-glsl".into(), "vk-spirv".into()],
            variants: BTreeMap::from([("p".to_owned(), variant)]),
        };
        catalog::write(store.root(), &program).unwrap();
        std::fs::write(root.path().join("p.vert"), "void main() {}\n").unwrap();
        std::fs::write(root.path().join("p.frag"), "void main() {}\n").unwrap();
        let manifest = Manifest::parse(
            &root.path().join("xr.toml"),
            "store = \".\"\n[[program]]\nname = \"p\"\ntargets = [\"vk-spirv\"]\nstages = [\n    \
             { stage = \"vertex\", file = \"p.vert\" },\n    { stage = \"fragment\", file = \"p.frag\" },\n]\n",
        )
        .unwrap();

        let report = gc(&store, std::slice::from_ref(&manifest), true).unwrap();
        assert_eq!((report.objects, report.kept, report.removed), (3, 2, 1), "dry run: {report:?}");
        // The bindings' reflection cache follows the objects.
        let reflection =
            |key: &ObjectKey| root.path().join("reflection").join(format!("{}.0123456789abcdef.json", key.hex()));
        std::fs::create_dir_all(root.path().join("reflection")).unwrap();
        for key in [&fresh, &superseded] {
            std::fs::write(reflection(key), "{}").unwrap();
        }
        std::fs::write(root.path().join("reflection/half.123.0.tmp"), "{").unwrap();
        let report = gc(&store, &[manifest], false).unwrap();
        assert_eq!((report.kept, report.removed), (2, 1), "{report:?}");
        assert_eq!(report.reflections_dropped, 2, "{report:?}");
        assert!(reflection(&fresh).exists() && !reflection(&superseded).exists());
        assert!(store.get(&stale).unwrap().is_some(), "the stale object is kept");
        assert!(store.get(&fresh).unwrap().is_some());
        assert!(store.get(&superseded).unwrap().is_none(), "what no catalog names goes");
    }
}
