//! The manifest and its variant matrix, good and bad.

use std::path::{Path, PathBuf};
use xr_build::{AxisKind, BuildPlan, Manifest, PluginOffer, variants};
use xr_host::Candidate;
use xr_sourcebuild::{CompilePair, OptionDecl};

fn fixture(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xr-build-manifest-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("shaders")).unwrap();
    std::fs::write(dir.join("shaders/lit.vert"), "#version 450\nvoid main() {}\n").unwrap();
    std::fs::write(dir.join("shaders/lit.frag"), "#version 450\nvoid main() {}\n").unwrap();
    dir
}

const GOOD: &str = r#"store = "store"

[[axis]]
name = "NORMAL_MAP"
kind = "bool"

[[axis]]
name = "SHADOWS"
kind = "enum"
values = ["off", "hard", "soft"]

[[axis]]
name = "LIGHTS"
kind = "int"
range = [1, 4]

[[program]]
name = "lit"
axes = ["NORMAL_MAP", "SHADOWS", "LIGHTS"]
targets = ["gl-glsl", "gl-spirv", "vk-spirv"]
include = ["shaders"]
exclude = ["SHADOWS == soft && LIGHTS > 2"]
stages = [
    { stage = "vertex", file = "shaders/lit.vert" },
    { stage = "fragment", file = "shaders/lit.frag", entry = "main", language = "glsl" },
]
overrides = [{ name = "GAIN", id = 0, default = 1.5 }]
"#;

fn parse(dir: &Path, text: &str) -> Result<Manifest, xr_build::ManifestErrors> {
    Manifest::parse(&dir.join("xr.toml"), text)
}

/// The one error of a manifest with one mistake.
fn parse_error(dir: &Path, text: &str) -> xr_build::ManifestError {
    let errors = parse(dir, text).expect_err("a mistake");
    assert_eq!(errors.len(), 1, "one mistake, one error: {errors}");
    errors[0].clone()
}

#[test]
fn a_good_manifest_expands_into_named_variants_with_defines() {
    let dir = fixture("good");
    let manifest = parse(&dir, GOOD).unwrap();
    assert_eq!(manifest.store, dir.join("store"));
    let lit = &manifest.programs[0];
    let targets: Vec<&str> = lit.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(targets, ["gl-glsl", "gl-spirv", "vk-spirv"]);
    assert_eq!(lit.axes[1].kind, AxisKind::Enum(vec!["off".into(), "hard".into(), "soft".into()]));
    assert_eq!(lit.stages[1].file, dir.join("shaders/lit.frag"));
    assert_eq!(lit.overrides[0].default, 1.5);
    let all = variants(lit).unwrap();
    // 2 × 3 × 4 = 24 points, minus soft shadows with 3 or 4 lights (2 × 2 = 4).
    assert_eq!(all.len(), 20);
    assert_eq!(all[0].name, "lit[NORMAL_MAP=0,SHADOWS=off,LIGHTS=1]");
    assert!(all.iter().all(|v| !(v.name.contains("SHADOWS=soft") && (v.name.contains("LIGHTS=3") || v.name.contains("LIGHTS=4")))));
    let soft = all.iter().find(|v| v.name == "lit[NORMAL_MAP=1,SHADOWS=soft,LIGHTS=2]").unwrap();
    let defines: Vec<(String, String)> =
        soft.defines(lit).iter().map(|d| (d.name.to_string(), d.value.to_string())).collect();
    assert_eq!(
        defines,
        [
            ("NORMAL_MAP".into(), "1".into()),
            ("SHADOWS".into(), "2".into()),
            ("SHADOWS_SOFT".into(), "1".into()),
            ("LIGHTS".into(), "2".into())
        ]
    );
    let names: std::collections::BTreeSet<&str> = all.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names.len(), 20, "every name is unique");
    // A variant keeps the indices of its values; they come back as text.
    let values = [("NORMAL_MAP", "1"), ("SHADOWS", "soft"), ("LIGHTS", "2")];
    assert_eq!(soft.values(lit), values.map(|(a, v)| (a.to_owned(), v.to_owned())));
    // Each axis's value at an index is the index-th of its values, and none past them.
    for axis in &lit.axes {
        let each: Vec<String> = (0..axis.values().len()).filter_map(|i| axis.value(i)).collect();
        assert_eq!(each, axis.values(), "{}", axis.name);
        assert_eq!(axis.value(axis.values().len()), None, "{}", axis.name);
    }
}

/// Each bad manifest gives one error at the file, line and column of the mistake.
#[test]
fn bad_manifests_are_errors_at_file_line_and_column() {
    let dir = fixture("bad");
    let file = dir.join("xr.toml");
    const PROGRAM: &str = "[[program]]\nname = \"p\"\ntargets = [\"vk-spirv\"]\nstages = [{ stage = \"vertex\", file = \"shaders/lit.vert\" }]\n";
    let override_type = format!("{PROGRAM}overrides = [{{ name = \"G\", id = 0, type = \"half\", default = 1.0 }}]\n");
    let override_clash = format!(
        "{PROGRAM}overrides = [\n  {{ name = \"G\", id = 0, default = 1.0 }},\n  {{ name = \"H\", id = 0, default = 1.0 }},\n]\n"
    );
    let override_name_clash = format!(
        "{PROGRAM}overrides = [\n  {{ name = \"G\", id = 0, default = 1.0 }},\n  {{ name = \"G\", id = 1, default = 1.0 }},\n]\n"
    );
    let override_axis = format!(
        "[[axis]]\nname = \"A\"\nkind = \"bool\"\n{}axes = [\"A\"]\noverrides = [{{ name = \"A\", id = 0, default = 1.0 }}]\n",
        PROGRAM
    );
    let program_twice = format!("{PROGRAM}{PROGRAM}");
    let filter_op =
        format!("[[axis]]\nname = \"A\"\nkind = \"bool\"\n{PROGRAM}axes = [\"A\"]\nexclude = [\"A = 1\"]\n");
    let filter_int = format!(
        "[[axis]]\nname = \"A\"\nkind = \"int\"\nrange = [1, 2]\n{PROGRAM}axes = [\"A\"]\nexclude = [\"A > two\"]\n"
    );
    let stage = |stage: &str, extra: &str| {
        format!(
            "[[program]]\nname = \"p\"\ntargets = [\"vk-spirv\"]\nstages = [{{ stage = \"{stage}\", file = \"shaders/lit.vert\"{extra} }}]\n"
        )
    };
    let unknown_stage = stage("pixel", "");
    let other_target = format!("{PROGRAM}target_options = {{ gl-glsl = {{ optimize = \"size\" }} }}\n");
    let cases: Vec<(&str, &str, usize, usize, &str)> = vec![
        (
            "options for a target the program lacks",
            &other_target,
            5,
            43,
            "target_options names 'gl-glsl', which is not a target of this program",
        ),
        (
            "axis twice",
            "[[axis]]\nname = \"A\"\nkind = \"bool\"\n[[axis]]\nname = \"A\"\nkind = \"bool\"\n",
            5,
            8,
            "axis 'A' is declared twice",
        ),
        ("enum without values", "[[axis]]\nname = \"A\"\nkind = \"enum\"\n", 3, 8, "needs `values = [...]`"),
        ("int without range", "[[axis]]\nname = \"A\"\nkind = \"int\"\n", 3, 8, "needs `range = [first, last]`"),
        ("unknown axis kind", "[[axis]]\nname = \"A\"\nkind = \"float\"\n", 3, 8, "unknown axis kind 'float'"),
        (
            "axis name not a define",
            "[[axis]]\nname = \"2A\"\nkind = \"bool\"\n",
            2,
            8,
            "'2A' is not a valid define name",
        ),
        (
            "enum value twice",
            "[[axis]]\nname = \"A\"\nkind = \"enum\"\nvalues = [\"x\", \"x\"]\n",
            4,
            10,
            "value 'x' of axis 'A' is listed twice",
        ),
        ("program twice", &program_twice, 6, 8, "program 'p' is declared twice"),
        (
            "no targets",
            "[[program]]\nname = \"p\"\ntargets = []\nstages = [{ stage = \"vertex\", file = \"shaders/lit.vert\" }]\n",
            3,
            11,
            "program 'p' has no targets",
        ),
        (
            "no stages",
            "[[program]]\nname = \"p\"\ntargets = [\"vk-spirv\"]\nstages = []\n",
            4,
            10,
            "program 'p' has no stages",
        ),
        ("unknown stage", &unknown_stage, 4, 21, "unknown stage 'pixel'"),
        ("filter without an operator", &filter_op, 9, 12, "filter clause 'A = 1' is not `AXIS op VALUE`"),
        ("filter value not an integer", &filter_int, 10, 12, "'two' is not an integer (axis 'A')"),
        ("unknown override type", &override_type, 5, 43, "unknown override type 'half'"),
        ("override ids clash", &override_clash, 7, 12, "override 'H' (id 0) clashes with override 'G' (id 0)"),
        ("override names clash", &override_name_clash, 7, 12, "override 'G' (id 1) clashes with override 'G' (id 0)"),
        (
            "enum value not an identifier",
            "[[axis]]\nname = \"A\"\nkind = \"enum\"\nvalues = [\"ok_1\", \"a-b\"]\n",
            4,
            10,
            "value 'a-b' of axis 'A' is not an identifier",
        ),
        ("override that is an axis", &override_axis, 9, 23, "'A' is both an axis and an override"),
        ("typo'd key", "[[axis]]\nname = \"A\"\nkidn = \"bool\"\n", 3, 1, "unknown field `kidn`"),
        ("wrong type", "[[axis]]\nname = \"A\"\nkind = \"int\"\nrange = \"1..4\"\n", 4, 9, "invalid type"),
        (
            "axis with no values",
            "[[axis]]\nname = \"A\"\nkind = \"enum\"\nvalues = []\n",
            4,
            10,
            "axis 'A' has no values",
        ),
        ("empty range", "[[axis]]\nname = \"B\"\nkind = \"int\"\nrange = [4, 1]\n", 4, 9, "axis 'B' has no values"),
        (
            "missing file",
            "[[program]]\nname = \"p\"\ntargets = [\"vk-spirv\"]\nstages = [{ stage = \"vertex\", file = \"shaders/gone.vert\" }]\n",
            4,
            38,
            "does not exist",
        ),
        (
            "unknown axis",
            "[[program]]\nname = \"p\"\naxes = [\"NOPE\"]\ntargets = [\"vk-spirv\"]\nstages = [{ stage = \"vertex\", file = \"shaders/lit.vert\" }]\n",
            3,
            9,
            "unknown axis 'NOPE'",
        ),
        (
            "target twice",
            "[[program]]\nname = \"p\"\ntargets = [\"vk-spirv\", \"vk-spirv\"]\nstages = [{ stage = \"vertex\", file = \"shaders/lit.vert\" }]\n",
            3,
            24,
            "target 'vk-spirv' is listed twice",
        ),
        ("syntax", "[[axis]\nname = \"A\"\n", 1, 8, "expected `]`"),
    ];
    for (what, text, line, column, message) in cases {
        let errors = parse(&dir, text).expect_err(what);
        assert_eq!(errors.len(), 1, "{what}: one mistake, one error: {errors}");
        let error = &errors[0];
        assert_eq!(error.file, file, "{what}");
        assert_eq!((error.line, error.column), (line, column), "{what}: {error}");
        assert!(error.message.contains(message), "{what}: {error}");
        let shown = error.to_string();
        assert!(shown.starts_with(&format!("{}:{line}:{column}: error: ", file.display())), "{what}: {shown}");
        assert!(!shown.contains('\n'), "{what}: one line: {shown}");
    }
}

#[test]
fn two_variants_with_one_name_are_an_error_naming_both() {
    let dir = fixture("duplicate");
    let mut program = parse(&dir, GOOD).unwrap().programs.remove(0);
    // A name that leaves out a value (here: two spellings the names cannot tell apart).
    program.axes[1].kind = AxisKind::Enum(vec!["soft".into(), "soft".into()]);
    program.exclude.clear();
    let error = variants(&program).unwrap_err().to_string();
    assert!(error.contains("are both named 'lit[NORMAL_MAP=0,SHADOWS=soft,LIGHTS=1]'"), "{error}");
    assert!(error.contains("(\"SHADOWS\", \"soft\")"), "names both points: {error}");
}

#[test]
fn filters_must_name_axes_and_values_of_the_program() {
    let dir = fixture("filters");
    let bad = GOOD.replace("SHADOWS == soft && LIGHTS > 2", "SHADOWS == blurry");
    let error = parse_error(&dir, &bad);
    assert!(error.message.contains("'blurry' is not a value of axis 'SHADOWS'"), "{error}");
    assert_eq!(error.line, 22);
    let bad = GOOD.replace("SHADOWS == soft && LIGHTS > 2", "COLOUR == red");
    assert!(parse_error(&dir, &bad).message.contains("'COLOUR', which is not an axis"));
}

/// What the SPIR-V plugins offer: GLSL and HLSL into vk-spirv.
fn spirv_offer() -> PluginOffer {
    PluginOffer {
        languages: vec![
            ("glsl".into(), vec!["vert".into(), "frag".into(), "glsl".into()]),
            ("hlsl".into(), vec!["hlsl".into()]),
        ],
        compilers: ["glsl", "hlsl"]
            .into_iter()
            .map(|language| {
                let optimize = OptionDecl::choice("optimize", &["none", "size", "performance"], "none", "level");
                let vulkan = OptionDecl::choice("vulkan", &["1.0", "1.3"], "1.0", "version");
                candidate(
                    "xr-compiler-vk-spirv",
                    CompilePair::new(language, "vk-spirv").with_options([optimize, vulkan]),
                )
            })
            .collect(),
    }
}

fn candidate(name: &str, pair: CompilePair) -> Candidate {
    Candidate { name: name.into(), priority: 0, identity: format!("{name} 1"), pair, plugin: PathBuf::new() }
}

/// Manifest text of one program of one vertex stage for `targets` for each
/// (name, `options` lines) of `programs`, in order.
fn vertex_programs(targets: &str, programs: &[(&str, &str)]) -> String {
    programs
        .iter()
        .map(|(name, options)| {
            format!(
                "[[program]]\nname = \"{name}\"\ntargets = [{targets}]\nstages = [{{ stage = \"vertex\", file = \"shaders/lit.vert\" }}]\n{options}\n"
            )
        })
        .collect()
}

#[test]
fn options_the_compiler_does_not_take_fail_their_program_alone_at_line_and_column() {
    let dir = fixture("options");
    let text = vertex_programs(
        "\"vk-spirv\"",
        &[
            ("good", "options = { optimize = \"size\" }\ntarget_options = { vk-spirv = { vulkan = \"1.3\" } }"),
            ("unknown", "options = { vulkn = \"1.3\" }"),
            ("bad_value", "target_options = { vk-spirv = { optimize = \"fast\" } }"),
        ],
    );
    let plan = BuildPlan::resolve(parse(&dir, &text).unwrap(), &spirv_offer());
    let refused = &plan.refused;
    let kept: Vec<&str> = plan.programs.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(kept, ["good"]);
    assert_eq!(
        plan.programs[0].options_for("vk-spirv"),
        [("optimize".to_owned(), "size".to_owned()), ("vulkan".to_owned(), "1.3".to_owned())]
    );
    let errors: Vec<(&str, usize, usize, String)> =
        refused.iter().map(|(name, e)| (name.as_str(), e.line, e.column, e.message.clone())).collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!((errors[0].0, errors[0].1, errors[0].2), ("unknown", 11, 21), "{errors:?}");
    assert_eq!(
        errors[0].3,
        "xr-compiler-vk-spirv takes no option 'vulkn' for glsl → vk-spirv (it takes: optimize = none | size | performance; vulkan = 1.0 | 1.3); did you mean `vulkan`?"
    );
    assert_eq!((errors[1].0, errors[1].1, errors[1].2), ("bad_value", 16, 44), "{errors:?}");
    assert_eq!(
        errors[1].3,
        "xr-compiler-vk-spirv takes optimize = none | size | performance for glsl → vk-spirv, not optimize = 'fast'"
    );
}

#[test]
fn targets_and_languages_no_plugin_offers_fail_their_program_alone_at_line_and_column() {
    let dir = fixture("offer");
    std::fs::write(dir.join("shaders/lit.wgsl"), "// wgsl").unwrap();
    std::fs::write(dir.join("shaders/lit.shader"), "// ?").unwrap();
    let program = |name: &str, targets: &str, stage: &str| {
        format!("[[program]]\nname = \"{name}\"\ntargets = [{targets}]\nstages = [{stage}]\n")
    };
    let text = [
        program("good", "\"vk-spirv\"", "{ stage = \"vertex\", file = \"shaders/lit.vert\" }"),
        program("dx", "\"vk-spirv\", \"dx12\"", "{ stage = \"vertex\", file = \"shaders/lit.vert\" }"),
        program("wgsl", "\"vk-spirv\"", "{ stage = \"vertex\", file = \"shaders/lit.wgsl\", language = \"wgsl\" }"),
        program("unknown_extension", "\"vk-spirv\"", "{ stage = \"vertex\", file = \"shaders/lit.shader\" }"),
    ]
    .concat();
    let plan = BuildPlan::resolve(parse(&dir, &text).unwrap(), &spirv_offer());
    let refused = &plan.refused;
    let kept: Vec<&str> = plan.programs.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(kept, ["good"], "only the programs with unknown names are taken out");
    assert_eq!(plan.programs[0].language(), Some("glsl"), "from the .vert extension");
    let errors: Vec<(&str, usize, usize, String)> =
        refused.iter().map(|(name, e)| (name.as_str(), e.line, e.column, e.message.clone())).collect();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert_eq!((errors[0].0, errors[0].1, errors[0].2), ("dx", 7, 24), "{errors:?}");
    assert_eq!(errors[0].3, "no plugin builds target 'dx12' (the plugins found build: vk-spirv)");
    assert_eq!((errors[1].0, errors[1].1, errors[1].2), ("wgsl", 12, 69), "{errors:?}");
    assert_eq!(errors[1].3, "no plugin compiles language 'wgsl' (the plugins found compile: glsl, hlsl)");
    assert_eq!((errors[2].0, errors[2].1), ("unknown_extension", 16), "{errors:?}");
    assert!(errors[2].3.starts_with("cannot tell the language of"), "{errors:?}");
    assert!(
        refused[0].1.to_string().contains("xr.toml:7:24: error: no plugin builds target 'dx12'"),
        "{}",
        refused[0].1
    );
}

#[test]
fn overrides_turn_into_the_bits_and_literals_of_their_type() {
    use xr_build::{Override, OverrideType};
    let of = |kind| Override { name: "O".into(), id: 0, kind, default: 0.0 };
    assert_eq!(of(OverrideType::Float).bits(1.5), 1.5f32.to_bits());
    assert_eq!(of(OverrideType::Float).glsl_literal(1.5), "1.5");
    assert_eq!(of(OverrideType::Int).bits(-2.0), (-2i32) as u32);
    assert_eq!(of(OverrideType::Int).glsl_literal(-2.0), "-2");
    assert_eq!(of(OverrideType::Uint).bits(3.0), 3);
    assert_eq!(of(OverrideType::Uint).glsl_literal(3.0), "3u");
    assert_eq!((of(OverrideType::Bool).bits(1.0), of(OverrideType::Bool).bits(0.0)), (1, 0));
    assert_eq!(of(OverrideType::Bool).glsl_literal(1.0), "true");
    assert_eq!(of(OverrideType::Bool).glsl_literal(0.0), "false");
}

#[test]
fn store_paths_are_normalised_without_touching_the_disk() {
    let in_place = Manifest::parse(Path::new("xr.toml"), "store = \"sub/../store\"\n").unwrap();
    assert_eq!(in_place.store, Path::new("store"));
    let above = Manifest::parse(Path::new("xr.toml"), "store = \"../shared/store\"\n").unwrap();
    assert_eq!(above.store, Path::new("../shared/store"), "a leading .. stays");
}

#[test]
fn a_stage_names_its_language_or_leaves_it_to_the_extension() {
    let dir = fixture("languages");
    let text = "[[program]]\nname = \"p\"\ntargets = [\"vk-spirv\"]\nstages = [\n\
                { stage = \"vertex\", file = \"shaders/lit.vert\", language = \"hlsl\" },\n\
                { stage = \"fragment\", file = \"shaders/lit.frag\" },\n]\n";
    let manifest = parse(&dir, text).unwrap();
    let stages = &manifest.programs[0].stages;
    assert_eq!((stages[0].language.as_deref(), stages[1].language.as_deref()), (Some("hlsl"), None), "as written");
    let plan = BuildPlan::resolve(manifest, &spirv_offer());
    assert!(plan.refused.is_empty(), "hlsl and glsl are offered");
    let languages: Vec<&str> = plan.programs[0].stages().map(|s| s.language).collect();
    assert_eq!(languages, ["hlsl", "glsl"], "decided by the plan");
}

/// A program-wide option goes to the targets whose compilers declare it
/// (an optimisation level means nothing to a compiler on the device); one
/// that no target's compiler declares is an error; a declared default is
/// left out, so that spelling it out keeps the keys of leaving it out.
#[test]
fn program_wide_options_go_where_they_are_declared_and_defaults_are_left_out() {
    let dir = fixture("options-wide");
    let mut offer = spirv_offer();
    offer.compilers.push(candidate("xr-compiler-glsl", CompilePair::new("glsl", "gl-glsl")));
    let text = vertex_programs(
        "\"gl-glsl\", \"vk-spirv\"",
        &[
            ("sized", "options = { optimize = \"size\", vulkan = \"1.0\" }"),
            ("nobody", "options = { fast = \"yes\" }"),
            ("glsl_only", "target_options = { gl-glsl = { optimize = \"size\" } }"),
        ],
    );
    let plan = BuildPlan::resolve(parse(&dir, &text).unwrap(), &offer);
    let refused = &plan.refused;
    let sized = &plan.programs[0];
    assert_eq!(sized.name, "sized");
    assert_eq!(
        sized.options_for("vk-spirv"),
        [("optimize".to_owned(), "size".to_owned())],
        "vulkan = 1.0 is the default"
    );
    assert!(sized.options_for("gl-glsl").is_empty(), "the GLSL compiler takes no options");
    let errors: Vec<(&str, String)> = refused.iter().map(|(name, e)| (name.as_str(), e.message.clone())).collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(errors[0].0, "nobody");
    // Every compiler asked is named, with what it takes.
    assert_eq!(
        errors[0].1,
        "no compiler of program 'nobody' takes option 'fast' (xr-compiler-glsl for glsl → gl-glsl takes none; \
         xr-compiler-vk-spirv for glsl → vk-spirv takes optimize = none | size | performance, vulkan = 1.0 | 1.3)"
    );
    assert_eq!(errors[1].0, "glsl_only");
    assert!(
        errors[1].1.contains("xr-compiler-glsl takes no option 'optimize' for glsl → gl-glsl (it takes none)"),
        "{errors:?}"
    );
}

#[test]
fn a_compile_timeout_is_a_positive_number_of_seconds() {
    let dir = fixture("timeout");
    let program = |timeout: &str| {
        format!(
            "[[program]]\nname = \"p\"\ntargets = [\"vk-spirv\"]\ncompile_timeout = {timeout}\n\
             stages = [{{ stage = \"vertex\", file = \"shaders/lit.vert\" }}]\n"
        )
    };
    let whole = parse(&dir, &program("600")).unwrap();
    assert_eq!(whole.programs[0].compile_timeout, Some(std::time::Duration::from_secs(600)));
    let part = parse(&dir, &program("2.5")).unwrap();
    assert_eq!(part.programs[0].compile_timeout, Some(std::time::Duration::from_millis(2500)));
    let unset = parse(&dir, &GOOD.replace("store = \"store\"", "")).unwrap();
    assert_eq!(unset.programs[0].compile_timeout, None, "the build's default then");
    for bad in ["0", "-3", "\"ten\""] {
        let error = parse_error(&dir, &program(bad));
        assert_eq!((error.line, error.column > 0), (4, true), "{bad}: {error}");
    }
}
