//! What usage logs mean for a manifest: the variants they name that it
//! does not build (an axis renamed, a program removed: an engine that used
//! them will not find them), and the report of the variants no log names
//! (`xr build --report-unused`).

use crate::{Manifest, manifest::Program, matrix::variants, used::UsedVariants};
use std::{collections::BTreeSet, path::Path};
use xr_store::{ObjectKey, catalog};

/// The (program, variant) pairs `used` names that `manifest` does not
/// build, sorted.
pub fn unknown(used: &UsedVariants, manifest: &Manifest) -> Vec<(String, String)> {
    let mut unknown = Vec::new();
    for (program, names) in &used.variants {
        let built: BTreeSet<String> = manifest
            .programs
            .iter()
            .find(|p| &p.name == program)
            .and_then(|p| variants(p).ok())
            .map(|v| v.into_iter().map(|v| v.name).collect())
            .unwrap_or_default();
        unknown.extend(names.iter().filter(|n| !built.contains(*n)).map(|n| (program.clone(), n.clone())));
    }
    unknown
}

/// The variants of a program that no usage log names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnusedProgram {
    /// The program.
    pub program: String,
    /// Its variants, in the matrix.
    pub total: usize,
    /// The variants no log names, in matrix order.
    pub unused: Vec<String>,
    /// Bytes of the stored objects only unused variants refer to: what
    /// leaving them out would save (0 for variants not built yet).
    pub bytes: u64,
}

/// What `xr build --report-unused` says: per program, what no log used.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UnusedReport {
    /// The programs with unused variants, by name.
    pub programs: Vec<UnusedProgram>,
    /// Variants in the matrices of the programs looked at.
    pub total: usize,
    /// Variants no log names.
    pub unused: usize,
    /// Bytes of the objects only unused variants refer to, each counted once.
    pub bytes: u64,
}

/// The variants of `programs` that `selects` keeps (what a build selects)
/// and `used` does not name, with the bytes of their objects in the
/// catalog of the store at `store_root`.
pub fn unused<'p>(
    programs: impl IntoIterator<Item = &'p Program>,
    selects: impl Fn(&Program, &str) -> bool,
    used: &UsedVariants,
    store_root: &Path,
) -> UnusedReport {
    let catalogs = catalog::read_all(store_root).0;
    let store = xr_store::Store::open(store_root.to_path_buf()).ok();
    let mut report = UnusedReport::default();
    let mut kept_objects: BTreeSet<String> = BTreeSet::new();
    let mut unused_objects: BTreeSet<String> = BTreeSet::new();
    let mut per_program: Vec<(UnusedProgram, BTreeSet<String>)> = Vec::new();
    for program in programs {
        let Ok(list) = variants(program) else { continue };
        let list: Vec<_> = list.into_iter().filter(|v| selects(program, &v.name)).collect();
        let stored = catalogs.get(&program.name);
        let objects_of = |variant: &str| -> Vec<String> {
            stored
                .and_then(|c| c.variants.get(variant))
                .map(|v| v.objects.values().cloned().collect())
                .unwrap_or_default()
        };
        let mut entry =
            UnusedProgram { program: program.name.clone(), total: list.len(), unused: Vec::new(), bytes: 0 };
        let mut objects = BTreeSet::new();
        for variant in list {
            if used.contains(&program.name, &variant.name) {
                kept_objects.extend(objects_of(&variant.name));
            } else {
                objects.extend(objects_of(&variant.name));
                entry.unused.push(variant.name);
            }
        }
        report.total += entry.total;
        report.unused += entry.unused.len();
        unused_objects.extend(objects.iter().cloned());
        per_program.push((entry, objects));
    }
    // An object a used variant shares (two variants that compile to the
    // same bytes) is kept: it is no saving.
    let size = |hex: &String| -> u64 {
        let Some(store) = &store else { return 0 };
        ObjectKey::from_hex(hex).and_then(|key| std::fs::metadata(store.path_of(&key)).ok()).map_or(0, |m| m.len())
    };
    report.bytes = unused_objects.difference(&kept_objects).map(size).sum();
    for (mut entry, objects) in per_program {
        entry.bytes = objects.difference(&kept_objects).map(size).sum();
        if !entry.unused.is_empty() {
            report.programs.push(entry);
        }
    }
    report
}
