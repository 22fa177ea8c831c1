//! The catalog's lookups and the journal's bookkeeping, on their own
//! (the integration tests reach them through `xr build` and the library).

use std::{collections::BTreeMap, path::PathBuf};
use xr_build::{journal::Entry, journal::Journal};
use xr_store::ObjectKey;
use xr_store::{catalog::CatalogAxis, catalog::CatalogProgram, catalog::CatalogVariant};

fn program() -> CatalogProgram {
    let objects = |pairs: &[(&str, &str)]| -> xr_store::catalog::TargetObjects {
        pairs.iter().map(|(t, o)| (t.to_string(), o.to_string())).collect()
    };
    let mut variants = BTreeMap::new();
    variants.insert(
        "p[A=0,B=x]".to_owned(),
        CatalogVariant {
            values: Vec::new(),
            objects: objects(&[("vk-spirv", "aa"), ("gl-glsl", "bb")]),
            ..CatalogVariant::default()
        },
    );
    variants.insert(
        "p[A=1,B=y]".to_owned(),
        CatalogVariant { values: Vec::new(), objects: objects(&[("gl-glsl", "cc")]), ..CatalogVariant::default() },
    );
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
    assert_eq!(Journal::rewrite(&root, |object| object == entry(2).object).unwrap().entries_dropped, 2);
    let reread = Journal::open(&root);
    assert!(reread.get(&ObjectKey::from_hex(&keep).unwrap()).is_some());
    assert_eq!(reread.objects().len(), 1);
    assert_eq!(Journal::rewrite(&root, |_| true).unwrap().entries_dropped, 0);
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

/// `n` entry lines over the recipes `0..recipes`, each line's object its own
/// (recipe, line) pair, so that every superseded line names an object of
/// its own.
fn journal_of(root: &std::path::Path, lines: usize, recipes: usize) -> Vec<Entry> {
    let journal = Journal::open(root);
    let mut written = Vec::new();
    for n in 0..lines {
        let recipe = ObjectKey::from_parts([b"recipe".as_slice(), &(n % recipes).to_le_bytes()]);
        let object = ObjectKey::from_parts([b"object".as_slice(), &n.to_le_bytes()]);
        let entry = Entry { recipe: recipe.hex(), object: object.hex(), files: vec![], stamp: None };
        journal.append(&entry).unwrap();
        written.push(entry);
    }
    written
}

#[test]
fn a_journal_needs_compaction_once_it_is_long_and_mostly_superseded() {
    use xr_build::journal::COMPACT_MIN_LINES;
    let long_mostly_superseded = store_root("compaction-needed");
    journal_of(&long_mostly_superseded, COMPACT_MIN_LINES, 100);
    assert!(Journal::open(&long_mostly_superseded).needs_compaction());

    let one_line_short = store_root("compaction-short");
    journal_of(&one_line_short, COMPACT_MIN_LINES - 1, 100);
    assert!(!Journal::open(&one_line_short).needs_compaction(), "too short to bother");

    // Exactly half superseded is not more than half; one line more is.
    let half = store_root("compaction-half");
    journal_of(&half, COMPACT_MIN_LINES, COMPACT_MIN_LINES / 2);
    assert!(!Journal::open(&half).needs_compaction());
    journal_of(&half, 1, 1);
    assert!(Journal::open(&half).needs_compaction());

    let all_live = store_root("compaction-live");
    journal_of(&all_live, COMPACT_MIN_LINES + 10, COMPACT_MIN_LINES + 10);
    assert!(!Journal::open(&all_live).needs_compaction(), "nothing superseded");
}

#[test]
fn a_rewrite_keeps_the_latest_entries_and_retires_the_superseded_objects_still_in_the_store() {
    let root = store_root("compact");
    // 10 lines over 3 recipes: the latest entries are lines 7, 8 and 9.
    let written = journal_of(&root, 10, 3);
    let latest: Vec<&Entry> = written[7..].iter().collect();
    // Objects of lines 0 and 1 are gone from the store; so is line 9's.
    let gone = [&written[0].object, &written[1].object, &written[9].object];
    let in_store = |object: &str| !gone.iter().any(|g| g.as_str() == object);
    let done = Journal::rewrite(&root, in_store).unwrap();
    assert_eq!(
        done,
        xr_build::journal::Rewritten { entries_dropped: 1, lines_before: 10, lines_after: 2 + 5 },
        "2 live entries (line 9's object is gone), 5 retired (lines 2 to 6)"
    );
    let text = std::fs::read_to_string(root.join("journal.jsonl")).unwrap();
    assert_eq!(text.lines().count(), 7, "{text}");
    assert!(text.ends_with('\n'));
    let reread = Journal::open(&root);
    for entry in &latest[..2] {
        let found = reread.get(&ObjectKey::from_hex(&entry.recipe).unwrap()).expect("latest entry kept");
        assert_eq!(found.object.hex(), entry.object);
    }
    assert!(reread.get(&ObjectKey::from_hex(&latest[2].recipe).unwrap()).is_none(), "its object is gone");
    let expected: std::collections::BTreeSet<String> = written[2..9].iter().map(|e| e.object.clone()).collect();
    assert_eq!(reread.objects(), expected, "gc still knows every build object in the store");
    // Retired lines count as lines, not as entries.
    let again = Journal::rewrite(&root, in_store).unwrap();
    assert_eq!(again, xr_build::journal::Rewritten { entries_dropped: 0, lines_before: 7, lines_after: 7 });
    assert!(!Journal::open(&root).needs_compaction());
}

#[test]
fn released_entries_are_gone_and_what_was_counted_stays() {
    use xr_build::journal::COMPACT_MIN_LINES;
    let root = store_root("release");
    journal_of(&root, COMPACT_MIN_LINES, 100);
    let mut journal = Journal::open(&root);
    let recipe = ObjectKey::from_parts([b"recipe".as_slice(), &0usize.to_le_bytes()]);
    assert!(journal.get(&recipe).is_some());
    assert!(!journal.objects().is_empty());
    journal.release_entries();
    assert!(journal.get(&recipe).is_none());
    assert!(journal.objects().is_empty());
    assert!(journal.needs_compaction(), "counted when it was read");
    journal.append(&entry(1)).unwrap();
    let appended = ObjectKey::from_hex(&entry(1).recipe).unwrap();
    assert!(Journal::open(&root).get(&appended).is_some(), "appends go on");
}
