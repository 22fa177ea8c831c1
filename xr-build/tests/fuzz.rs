//! Property tests over arbitrary input (`scripts/fuzz.sh` runs them long):
//! the manifest parser, the journal and the catalog readers never panic,
//! report errors at a place inside the text, and read back what was written.

use proptest::prelude::*;
use std::path::Path;
use xr_build::{Manifest, journal::Entry, journal::Journal};
use xr_store::ObjectKey;
use xr_store::catalog::{self, CatalogProgram};

/// A fresh directory, removed when dropped (so that a long fuzz run does
/// not fill the disk, however a case ends).
fn temp(label: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix(&format!("xr-fuzz-{label}-")).tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
    dir
}

/// Manifest-shaped text: keys, tables and values the parser knows, in any order.
fn manifest_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("[[axis]]\n".to_owned()),
        Just("[[program]]\n".to_owned()),
        "[A-Za-z_]{1,6}".prop_map(|n| format!("name = \"{n}\"\n")),
        prop_oneof![Just("bool"), Just("enum"), Just("int"), Just("float")].prop_map(|k| format!("kind = \"{k}\"\n")),
        "[a-z]{1,4}".prop_map(|v| format!("values = [\"{v}\", \"x\"]\n")),
        (any::<i8>(), any::<i8>()).prop_map(|(a, b)| format!("range = [{a}, {b}]\n")),
        Just("targets = [\"vk-spirv\"]\n".to_owned()),
        Just("stages = [{ stage = \"vertex\", file = \"a.vert\" }]\n".to_owned()),
        "[A-Z]{1,3} ?[=<>!]{1,2} ?[a-z0-9]{0,3}".prop_map(|f| format!("exclude = [\"{f}\"]\n")),
        ("[A-Z]{1,3}", 0u32..4)
            .prop_map(|(n, id)| format!("overrides = [{{ name = \"{n}\", id = {id}, default = 1.0 }}]\n")),
        "[ -~]{0,12}".prop_map(|junk| format!("{junk}\n")),
    ];
    proptest::collection::vec(piece, 0..14).prop_map(|pieces| pieces.concat())
}

fn check_places(text: &str, errors: &xr_build::ManifestErrors) -> Result<(), TestCaseError> {
    prop_assert!(!errors.is_empty(), "an error names at least one mistake");
    for error in errors.iter() {
        check_place(text, error)?;
    }
    Ok(())
}

fn check_place(text: &str, error: &xr_build::ManifestError) -> Result<(), TestCaseError> {
    let lines = text.lines().count().max(1);
    prop_assert!(error.line <= lines + 1, "line {} of {}: {}", error.line, lines, error);
    if error.line > 0 {
        prop_assert!(error.column >= 1, "{}", error);
    }
    prop_assert!(!error.to_string().contains('\n'), "one line: {}", error);
    Ok(())
}

proptest! {
    #[test]
    fn any_text_parses_or_is_an_error_at_a_place_in_it(text in ".{0,300}") {
        let dir_guard = temp("manifest-any");
        let dir = dir_guard.path();
        if let Err(error) = Manifest::parse(&dir.join("xr.toml"), &text) {
            check_places(&text, &error)?;
        }
    }

    #[test]
    fn manifest_shaped_text_parses_or_is_an_error_at_a_place_in_it(text in manifest_text()) {
        let dir_guard = temp("manifest");
        let dir = dir_guard.path();
        std::fs::write(dir.join("a.vert"), "#version 450\nvoid main() {}\n").unwrap();
        match Manifest::parse(&dir.join("xr.toml"), &text) {
            Ok(manifest) => {
                for program in &manifest.programs {
                    let _ = xr_build::variants(program);
                }
            }
            Err(error) => check_places(&text, &error)?,
        }
    }

    #[test]
    fn the_journal_reads_whole_lines_of_anything(bytes in proptest::collection::vec(any::<u8>(), 0..400), files in proptest::collection::vec((".{0,10}", "[0-9a-f]{0,8}"), 0..3)) {
        let root_guard = temp("journal");
        let root = root_guard.path();
        std::fs::write(root.join("journal.jsonl"), &bytes).unwrap();
        let journal = Journal::open(root);
        // What is appended after anything is read back (a torn tail is cut off first).
        let recipe = ObjectKey::from_parts([bytes.as_slice()]);
        let entry = Entry { recipe: recipe.hex(), object: recipe.hex(), files, stamp: None };
        journal.append(&entry).unwrap();
        let reread = Journal::open(root);
        prop_assert_eq!(reread.get(&recipe).map(|r| r.to_entry(&recipe)), Some(entry));
        let _ = Journal::rewrite(root, |_| true);
    }

    #[test]
    fn a_catalog_file_of_anything_is_an_error_beside_the_others(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let root_guard = temp("catalog");
        let root = root_guard.path();
        let good = CatalogProgram {
            name: "good".into(),
            manifest: Path::new("xr.toml").to_path_buf(),
            axes: Vec::new(),
            overrides: Vec::new(),
            targets: vec!["vk-spirv".into()],
            variants: Default::default(),
        };
        catalog::write(root, &good).unwrap();
        std::fs::write(catalog::dir(root).join("bad.json"), &bytes).unwrap();
        let (programs, errors) = catalog::read_all(root);
        prop_assert_eq!(programs.get("good"), Some(&good));
        prop_assert!(programs.len() + errors.len() == 2, "{:?} {:?}", programs.keys(), errors);
    }
}

/// Found by the property above: after a build killed mid-line, the next
/// build's first entry was glued to the torn line and lost.
#[test]
fn an_entry_appended_after_a_torn_line_is_read_back() {
    let root_guard = temp("journal-torn");
    let root = root_guard.path();
    std::fs::write(root.join("journal.jsonl"), b"{\"recipe\": \"ab").unwrap();
    let entry = Entry { recipe: "cd".repeat(32), object: "ef".repeat(32), files: Vec::new(), stamp: None };
    Journal::open(root).append(&entry).unwrap();
    let recipe = ObjectKey::from_hex(&entry.recipe).unwrap();
    assert_eq!(Journal::open(root).get(&recipe).map(|r| r.to_entry(&recipe)), Some(entry));
}
