//! Builds of what an engine used: `xr build --used LOG` builds only the
//! variants a usage log names, a program's own `used = "LOG"` narrows that
//! program alone, and `--report-unused LOG` lists what no log names, with
//! the bytes only those variants take.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use xr_store::usage::{Usage, UsageLog};
use xr_tests::{Xr, XrRun, materials_copy};

fn used(program: &str, variant: &str) -> Usage {
    Usage {
        program: program.into(),
        variant: variant.into(),
        target: "vk-spirv".into(),
        overrides: BTreeMap::new(),
        draw_states: Default::default(),
    }
}

/// The variants of each program in the store's catalog.
fn catalog_variants(dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let (programs, unread) = xr_store::catalog::read_all(&dir.join("store"));
    assert!(unread.is_empty(), "{unread:?}");
    programs.into_iter().map(|(name, program)| (name, program.variants.into_keys().collect())).collect()
}

fn build(dir: &Path, args: &[&str]) -> XrRun {
    Xr::new(["build", "-m", "xr.toml"]).args(args).dir(dir).ok()
}

#[test]
fn a_build_of_the_used_variants_builds_only_those_a_log_names_and_says_what_it_cannot_find() {
    let dir = materials_copy("used-build");
    let log = UsageLog::open(&dir.join("usage.jsonl")).unwrap();
    log.record(&used("unlit", "unlit[TINT=0,PATTERN=flat]")).unwrap();
    log.record(&used("lit", "lit[TINT=1,PATTERN=stripes,BANDS=2]")).unwrap();
    // An axis renamed since the log was recorded: the engine will not find it.
    log.record(&used("toon", "toon[SHADES=3]")).unwrap();
    drop(log);
    // A writer that died mid-line.
    let mut text = std::fs::read_to_string(dir.join("usage.jsonl")).unwrap();
    text.push_str("{\"program\":\"textured\",\"vari");
    std::fs::write(dir.join("usage.jsonl"), text).unwrap();

    let run = build(&dir, &["--used", "usage.jsonl"]);
    // Two variants, each for the three targets of its program.
    assert!(run.stderr.contains("xr build: 6 built, 0 fetched, 0 reused, 0 failed"), "{}", run.stderr);
    assert!(
        run.stderr.contains("the usage log names toon[SHADES=3] of 'toon', which xr.toml does not build"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("usage.jsonl:4: not a usage entry (a line cut short?), skipped"), "{}", run.stderr);
    let expected = BTreeMap::from([
        ("lit".to_owned(), BTreeSet::from(["lit[TINT=1,PATTERN=stripes,BANDS=2]".to_owned()])),
        ("unlit".to_owned(), BTreeSet::from(["unlit[TINT=0,PATTERN=flat]".to_owned()])),
    ]);
    assert_eq!(catalog_variants(&dir), expected, "the catalog names what was built, nothing else");

    // Nothing changed: up to date. A log that names one more variant is
    // another build, of that variant alone.
    let again = build(&dir, &["--used", "usage.jsonl", "-q"]);
    assert!(again.stderr.contains("0 built"), "{}", again.stderr);
    UsageLog::open(&dir.join("usage.jsonl")).unwrap().record(&used("textured", "textured")).unwrap();
    let grown = build(&dir, &["--used", "usage.jsonl"]);
    assert!(grown.stderr.contains("xr build: 3 built, 0 fetched, 6 reused"), "{}", grown.stderr);
    assert!(catalog_variants(&dir)["textured"].contains("textured"));

    // A log that is not there is refused, naming it: a build of nothing is not what was meant.
    let missing = Xr::new(["build", "-m", "xr.toml", "--used", "none.jsonl"]).dir(&dir).fails();
    assert!(missing.stderr.contains("usage log none.jsonl does not exist"), "{}", missing.stderr);
}

#[test]
fn a_program_s_own_usage_log_narrows_that_program_alone() {
    let dir = materials_copy("used-manifest");
    let log = UsageLog::open(&dir.join("lit.jsonl")).unwrap();
    log.record(&used("lit", "lit[TINT=0,PATTERN=checker,BANDS=4]")).unwrap();
    log.record(&used("unlit", "unlit[TINT=1,PATTERN=flat]")).unwrap();
    drop(log);
    let manifest = std::fs::read_to_string(dir.join("xr.toml")).unwrap();
    let narrowed = manifest.replacen("name = \"lit\"\n", "name = \"lit\"\nused = \"lit.jsonl\"\n", 1);
    assert_ne!(narrowed, manifest);
    std::fs::write(dir.join("xr.toml"), &narrowed).unwrap();
    build(&dir, &["-q"]);
    let variants = catalog_variants(&dir);
    assert_eq!(variants["lit"], BTreeSet::from(["lit[TINT=0,PATTERN=checker,BANDS=4]".to_owned()]));
    assert_eq!(variants["unlit"].len(), 6, "the log narrows lit alone: {variants:?}");

    let line = narrowed.lines().position(|l| l == "used = \"lit.jsonl\"").unwrap() + 1;
    std::fs::write(dir.join("xr.toml"), narrowed.replace("lit.jsonl", "gone.jsonl")).unwrap();
    let refused = Xr::new(["build", "-m", "xr.toml"]).dir(&dir).fails();
    assert!(refused.stderr.contains(&format!("xr.toml:{line}:")), "{}", refused.stderr);
    assert!(refused.stderr.contains("gone.jsonl does not exist"), "{}", refused.stderr);
}

#[test]
fn the_unused_report_counts_the_variants_no_log_names_and_the_bytes_only_they_take() {
    let dir = materials_copy("used-report");
    let log = UsageLog::open(&dir.join("usage.jsonl")).unwrap();
    log.record(&used("unlit", "unlit[TINT=0,PATTERN=flat]")).unwrap();
    log.record(&used("unlit", "unlit[TINT=1,PATTERN=checker]")).unwrap();
    drop(log);
    let run = build(&dir, &["--program", "unlit", "--report-unused", "usage.jsonl"]);
    assert!(run.stderr.contains("xr build: 18 built"), "{}", run.stderr);

    // The bytes of the objects only the 4 unused variants refer to, from the store itself.
    let (programs, _) = xr_store::catalog::read_all(&dir.join("store"));
    let objects = |keep: bool| -> BTreeSet<String> {
        let names = ["unlit[TINT=0,PATTERN=flat]", "unlit[TINT=1,PATTERN=checker]"];
        programs["unlit"]
            .variants
            .iter()
            .filter(|(name, _)| names.contains(&name.as_str()) == keep)
            .flat_map(|(_, v)| v.objects.values().cloned())
            .collect()
    };
    let store = xr_store::Store::open(dir.join("store")).unwrap();
    let bytes: u64 = objects(false)
        .difference(&objects(true))
        .map(|hex| std::fs::metadata(store.path_of(&xr_store::ObjectKey::from_hex(hex).unwrap())).unwrap().len())
        .sum();
    assert!(bytes > 0);
    assert!(
        run.stderr.contains(&format!(
            "unused: 'unlit': 4 of 6 variants, {bytes} bytes: unlit[TINT=0,PATTERN=stripes] \
             unlit[TINT=0,PATTERN=checker] unlit[TINT=1,PATTERN=flat] unlit[TINT=1,PATTERN=stripes]"
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!("unused: 4 of 6 variants no usage log names ({bytes} bytes only they take)")),
        "{}",
        run.stderr
    );
    let json = Xr::new(["build", "-m", "xr.toml", "--program", "unlit", "--report-unused", "usage.jsonl"])
        .args(["--message-format", "json"])
        .dir(&dir)
        .ok();
    let line = json.stdout.lines().find(|l| l.contains("\"type\":\"unused\"")).expect("an unused line");
    let value: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!((value["variants"].as_u64(), value["bytes"].as_u64()), (Some(6), Some(bytes)), "{line}");
    assert_eq!(value["unused"].as_array().map(Vec::len), Some(4));
}
