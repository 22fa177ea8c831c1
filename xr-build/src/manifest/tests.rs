//! The manifest's reading: every mistake at its place.
use super::*;

/// A directory with `a.vert`, `a.frag`, `a.comp` and `include/`, removed when dropped.
fn sources() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for file in ["a.vert", "a.frag", "a.comp"] {
        std::fs::write(dir.path().join(file), "#version 450\nvoid main() {}\n").unwrap();
    }
    std::fs::create_dir(dir.path().join("include")).unwrap();
    dir
}

/// (line, column, message) of each error of `text`.
fn errors(dir: &Path, text: &str) -> Vec<(usize, usize, String)> {
    let errors = Manifest::parse(&dir.join("xr.toml"), text).expect_err("mistakes");
    errors.iter().map(|e| (e.line, e.column, e.message.clone())).collect()
}

fn program(name: &str, body: &str) -> String {
    format!("[[program]]\nname = \"{name}\"\ntargets = [\"vk-spirv\"]\n{body}\n")
}

const VERTEX: &str = "stages = [{ stage = \"vertex\", file = \"a.vert\" }]";

#[test]
fn every_mistake_is_reported_in_one_reading_each_at_its_place_with_a_suggestion() {
    let dir = sources();
    let text = [
        "[[axis]]\nname = \"A\"\nkidn = \"bool\"\n",  // 1-3
        "[[axis]]\nname = \"B\"\nkind = \"boool\"\n", // 4-6
        &program("p", "includ = []\nstages = [{ stage = \"vertx\", file = \"a.vert\" }]"), // 7-11
        &program("q", &format!("axes = [\"A\", \"C\"]\n{VERTEX}")), // 12-16
    ]
    .concat();
    let found = errors(dir.path(), &text);
    assert_eq!(
        found,
        [
            (3, 1, "unknown field `kidn`; did you mean `kind`?".to_owned()),
            (6, 8, "unknown axis kind 'boool' (bool, enum or int); did you mean `bool`?".to_owned()),
            (10, 1, "unknown field `includ`; did you mean `include`?".to_owned()),
            (11, 21, "unknown stage 'vertx'; did you mean `vertex`?".to_owned()),
            (15, 14, "unknown axis 'C'".to_owned()),
        ],
        "axis 'A' is wrong but declared: no second error where q names it"
    );
    let shown = Manifest::parse(&dir.path().join("xr.toml"), &text).unwrap_err().to_string();
    assert_eq!(shown.lines().count(), 5, "one error a line: {shown}");
    assert!(shown.lines().all(|l| l.contains("xr.toml:") && l.contains(": error: ")), "{shown}");
}

#[test]
fn a_misspelt_key_is_not_also_a_missing_one_and_a_wrong_type_is_one_error() {
    let dir = sources();
    assert_eq!(errors(dir.path(), "[[axis]]\nnaem = \"A\"\nkind = \"bool\"\n").len(), 1);
    let wrong = errors(dir.path(), "[[axis]]\nname = \"A\"\nkind = \"enum\"\nvalues = \"a b\"\n");
    assert_eq!(wrong.len(), 1, "{wrong:?}");
    assert!(wrong[0].2.starts_with("invalid type"), "{wrong:?}");
    let missing = errors(dir.path(), "[[program]]\nname = \"p\"\nstages = []\n");
    assert!(missing.iter().any(|(l, _, m)| *l == 1 && m == "missing field `targets`"), "{missing:?}");
}

#[test]
fn an_include_directory_that_does_not_exist_is_an_error_at_its_line() {
    let dir = sources();
    std::fs::write(dir.path().join("file.txt"), "").unwrap();
    let text = program("p", &format!("include = [\"include\", \"gone\", \"file.txt\"]\n{VERTEX}"));
    let found = errors(dir.path(), &text);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!((found[0].0, found[0].1), (4, 23));
    assert!(found[0].2.ends_with("gone' does not exist"), "{found:?}");
    assert!(found[1].2.ends_with("file.txt' is not a directory"), "{found:?}");
    let good = program("p", &format!("include = [\"include\"]\n{VERTEX}"));
    assert!(Manifest::parse(&dir.path().join("xr.toml"), &good).is_ok());
}

#[test]
fn a_graphics_program_without_a_vertex_stage_is_an_error_at_the_program() {
    let dir = sources();
    let text = program("p", "stages = [{ stage = \"fragment\", file = \"a.frag\" }]");
    let found = errors(dir.path(), &text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].0, found[0].1), (2, 8), "at the program's name");
    assert!(found[0].2.starts_with("program 'p' has no vertex stage"), "{found:?}");
    assert!(found[0].2.contains("(its stages: fragment)"), "{found:?}");
    let parse = |stages: &str| Manifest::parse(&dir.path().join("xr.toml"), &program("p", stages));
    assert!(parse("stages = [{ stage = \"compute\", file = \"a.comp\" }]").is_ok(), "compute alone");
    let graphics = "stages = [{ stage = \"vertex\", file = \"a.vert\" }, { stage = \"fragment\", file = \"a.frag\" }]";
    assert!(parse(graphics).is_ok());
    assert!(parse(VERTEX).is_ok(), "a vertex stage alone (transform feedback, depth only)");
}

#[test]
fn hit_groups_are_read_from_the_hit_stages_and_a_broken_rule_is_an_error_at_its_line() {
    let dir = sources();
    for file in ["a.rgen", "a.rchit", "b.rchit", "b.rahit"] {
        std::fs::write(dir.path().join(file), "#version 460\nvoid main() {}\n").unwrap();
    }
    let stages = |groups: [&str; 4]| {
        let files = ["ray-generation\", file = \"a.rgen", "closest-hit\", file = \"a.rchit"];
        let more = ["closest-hit\", file = \"b.rchit", "any-hit\", file = \"b.rahit"];
        let tables: Vec<String> = files
            .iter()
            .chain(&more)
            .zip(groups)
            .map(|(stage, group)| format!("    {{ stage = \"{stage}\"{group} }},\n"))
            .collect();
        program("p", &format!("stages = [\n{}]", tables.concat()))
    };
    let named = Manifest::parse(
        &dir.path().join("xr.toml"),
        &stages(["", ", hit_group = 1", ", hit_group = 0", ", hit_group = 0"]),
    );
    let named = named.unwrap_or_else(|e| panic!("{e}"));
    let groups: Vec<Option<u32>> = named.programs[0].stages.iter().map(|s| s.hit_group).collect();
    assert_eq!(groups, [None, Some(1), Some(0), Some(0)]);
    assert!(Manifest::parse(&dir.path().join("xr.toml"), &stages(["", "", "", ""])).is_ok(), "the default rule");

    let found = errors(dir.path(), &stages(["", ", hit_group = 0", ", hit_group = 1", ""]));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, 8, "the any-hit stage's table: {found:?}");
    assert!(
        found[0]
            .2
            .starts_with("program 'p': b.rahit: the any-hit stage names no hit group, while a.rchit names hit group 0"),
        "{found:?}"
    );
    let found = errors(dir.path(), &stages([", hit_group = 0", "", "", ""]));
    assert_eq!((found[0].0, found[0].1), (5, 62), "at the key: {found:?}");
    assert!(found[0].2.contains("a.rgen: a ray-generation stage is in no hit group"), "{found:?}");
    let found = errors(dir.path(), &stages(["", ", hit_group = -1", "", ""]));
    assert_eq!(found.len(), 1, "{found:?}");
}

#[test]
fn a_manifest_without_programs_warns() {
    let dir = sources();
    let manifest = Manifest::parse(&dir.path().join("xr.toml"), "store = \"store\"\n").unwrap();
    assert_eq!(manifest.warnings.len(), 1);
    assert!(manifest.warnings[0].to_string().contains("warning: the manifest declares no programs"));
    let with = Manifest::parse(&dir.path().join("xr.toml"), &program("p", VERTEX)).unwrap();
    assert!(with.warnings.is_empty());
}
