//! The catalog's lookups and the journal's bookkeeping, on their own
//! (the integration tests reach them through `xr build` and the library).

use std::{collections::BTreeMap, path::PathBuf};
use xr_build::{journal::Entry, journal::Journal};
use xr_store::ObjectKey;
use xr_store::{catalog::CatalogAxis, catalog::CatalogProgram, catalog::CatalogVariant};

fn program() -> CatalogProgram {
    let objects = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs.iter().map(|(t, o)| (t.to_string(), o.to_string())).collect()
    };
    let mut variants = BTreeMap::new();
    variants.insert(
        "p[A=0,B=x]".to_owned(),
        CatalogVariant { values: Vec::new(), objects: objects(&[("vk-spirv", "aa"), ("gl-glsl", "bb")]) },
    );
    variants
        .insert("p[A=1,B=y]".to_owned(), CatalogVariant { values: Vec::new(), objects: objects(&[("gl-glsl", "cc")]) });
    CatalogProgram {
        name: "p".into(),
        manifest: PathBuf::from("xr.toml"),
        axes: vec![
            CatalogAxis { name: "A".into(), values: vec!["0".into(), "1".into()] },
            CatalogAxis { name: "B".into(), values: vec!["x".into(), "y".into(), "z".into()] },
        ],
        overrides: Vec::new(),
        targets: vec!["vk-spirv".into(), "gl-glsl".into()],
        variants,
    }
}

#[test]
fn objects_are_found_by_variant_and_target() {
    let p = program();
    assert_eq!(p.object("p[A=0,B=x]", "vk-spirv"), Some("aa"));
    assert_eq!(p.object("p[A=0,B=x]", "gl-glsl"), Some("bb"));
    assert_eq!(p.object("p[A=1,B=y]", "vk-spirv"), None, "a target that failed there");
    assert_eq!(p.object("p[A=1,B=z]", "gl-glsl"), None, "no such variant");
}

#[test]
fn a_variant_is_named_by_every_axis_once_in_the_programs_order() {
    let p = program();
    assert_eq!(p.variant_name(&[("B", "x"), ("A", "0")]).unwrap(), "p[A=0,B=x]");
    let error = |values: &[(&str, &str)]| p.variant_name(values).unwrap_err().to_string();
    assert_eq!(error(&[("A", "0")]), "program 'p' needs a value for axis 'B'");
    assert_eq!(error(&[("A", "0"), ("B", "w")]), "'w' is not a value of axis 'B' of program 'p' (x, y, z)");
    assert_eq!(error(&[("A", "0"), ("B", "x"), ("B", "y")]), "axis 'B' is given more than once");
    assert_eq!(error(&[("A", "0"), ("B", "x"), ("C", "1")]), "program 'p' has no axis 'C'");
    let no_axes = CatalogProgram { axes: Vec::new(), ..program() };
    assert_eq!(no_axes.variant_name(&[]).unwrap(), "p");
}

#[test]
fn a_build_of_some_targets_keeps_the_others_objects() {
    let previous = program();
    let mut built = program();
    for variant in built.variants.values_mut() {
        variant.objects.clear();
    }
    built.variants.get_mut("p[A=0,B=x]").unwrap().objects.insert("vk-spirv".into(), "new".into());
    built.keep_other_targets(&previous, &["vk-spirv".to_owned()]);
    assert_eq!(built.object("p[A=0,B=x]", "vk-spirv"), Some("new"), "what was built wins");
    assert_eq!(built.object("p[A=0,B=x]", "gl-glsl"), Some("bb"), "the other target is kept");
    assert_eq!(built.object("p[A=1,B=y]", "gl-glsl"), Some("cc"));
    // A target that was built but failed is not brought back from before.
    let mut failed = program();
    failed.variants.get_mut("p[A=0,B=x]").unwrap().objects.clear();
    failed.keep_other_targets(&previous, &["vk-spirv".to_owned()]);
    assert_eq!(failed.object("p[A=0,B=x]", "vk-spirv"), None);
}

fn store_root(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xr-build-journal-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    dir
}

fn entry(n: u8) -> Entry {
    let key = ObjectKey::from_parts([[n].as_slice()]);
    Entry { recipe: key.hex(), object: key.hex(), files: vec![("a.frag".into(), "00".into())], stamp: None }
}

#[test]
fn appends_to_a_whole_journal_add_whole_lines_only() {
    let root = store_root("whole");
    Journal::open(&root).append(&entry(1)).unwrap();
    Journal::open(&root).append(&entry(2)).unwrap();
    let text = std::fs::read_to_string(root.join("journal.jsonl")).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.lines().all(|l| !l.is_empty()) && text.ends_with('\n'), "{text:?}");
    let journal = Journal::open(&root);
    assert_eq!(journal.objects().len(), 2);
}

#[test]
fn a_rewrite_keeps_what_is_asked_and_counts_what_it_dropped() {
    let root = store_root("rewrite");
    let journal = Journal::open(&root);
    for n in 1..=3 {
        journal.append(&entry(n)).unwrap();
    }
    let keep = entry(2).recipe;
    assert_eq!(Journal::rewrite(&root, |e| e.recipe == keep).unwrap(), 2);
    let reread = Journal::open(&root);
    assert!(reread.get(&ObjectKey::from_hex(&keep).unwrap()).is_some());
    assert_eq!(reread.objects().len(), 1);
    assert_eq!(Journal::rewrite(&root, |_| true).unwrap(), 0);
}

#[test]
fn a_catalog_is_rewritten_only_when_it_changes() {
    use std::os::unix::fs::MetadataExt;
    let root = store_root("catalog-write");
    std::fs::create_dir_all(root.join("tmp")).unwrap();
    let inode = |path: &std::path::Path| std::fs::metadata(path).unwrap().ino();
    let path = xr_store::catalog::write(&root, &program()).unwrap();
    let first = inode(&path);
    // The same catalog: the file is left as it is (a no-op build writes nothing).
    assert_eq!(xr_store::catalog::write(&root, &program()).unwrap(), path);
    assert_eq!(inode(&path), first);
    // Another: replaced whole, by a rename.
    let mut changed = program();
    changed.variants.get_mut("p[A=0,B=x]").unwrap().objects.insert("vk-spirv".into(), "new".into());
    xr_store::catalog::write(&root, &changed).unwrap();
    assert_ne!(inode(&path), first);
    let (read, unread) = xr_store::catalog::read_all(&root);
    assert!(unread.is_empty(), "{unread:?}");
    assert_eq!(read["p"].object("p[A=0,B=x]", "vk-spirv"), Some("new"));
}
