//! The plan's resolution against an offer made by hand.

use super::*;
use xr_sourcebuild::{CompilePair, ShaderStage::*};

/// A directory with `a.vert`, `a.frag`, `a.rgen`, `a.rchit`, removed when dropped.
fn sources() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for file in ["a.vert", "a.frag", "a.rgen", "a.rchit", "a.hlsl"] {
        std::fs::write(dir.path().join(file), "void main() {}\n").unwrap();
    }
    dir
}

fn program(name: &str, body: &str) -> String {
    format!("[[program]]\nname = \"{name}\"\ntargets = [\"vk-spirv\"]\n{body}\n")
}

fn candidate(name: &str, priority: i32, pair: CompilePair) -> Candidate {
    Candidate { name: name.into(), priority, identity: format!("{name} 1.0"), pair, plugin: PathBuf::new() }
}

/// GLSL by extension; HLSL by two compilers: a raster one of higher
/// priority, and one that also has the ray tracing stages. The first two
/// follow `#include`s, the third imports too.
fn offer() -> PluginOffer {
    let optimize = xr_sourcebuild::OptionDecl::choice("optimize", &["none", "size"], "none", "level");
    PluginOffer {
        languages: vec![
            ("glsl".into(), vec!["vert".into(), "frag".into(), "rgen".into(), "rchit".into()]),
            ("hlsl".into(), vec!["hlsl".into()]),
        ],
        compilers: vec![
            candidate(
                "glslc",
                0,
                CompilePair::new("glsl", "vk-spirv").with_options([optimize]).reaching(SourceReach::INCLUDES),
            ),
            candidate(
                "glslang-hlsl",
                10,
                CompilePair::new("hlsl", "vk-spirv").with_stages([Vertex, Fragment]).reaching(SourceReach::INCLUDES),
            ),
            candidate(
                "slang",
                5,
                CompilePair::new("hlsl", "vk-spirv")
                    .with_stages(ShaderStage::ALL.iter().copied())
                    .reaching(SourceReach::IMPORTS),
            ),
        ],
    }
}

fn plan(dir: &Path, text: &str) -> BuildPlan {
    BuildPlan::resolve(Manifest::parse(&dir.join("xr.toml"), text).unwrap(), &offer())
}

#[test]
fn targets_languages_and_option_values_the_plugins_do_not_offer_suggest_the_closest() {
    let dir = sources();
    let text = program(
        "p",
        "stages = [{ stage = \"vertex\", file = \"a.vert\", language = \"glls\" }]\n\
         options = { optimize = \"sise\" }",
    )
    .replace("\"vk-spirv\"", "\"vk-spriv\"");
    let planned = plan(dir.path(), &text);
    assert!(planned.programs.is_empty(), "the program is refused");
    let messages: Vec<&str> = planned.refused.iter().map(|(_, e)| e.message.as_str()).collect();
    assert_eq!(messages.len(), 2, "both of the program's mistakes: {messages:?}");
    assert!(messages[0].ends_with("did you mean `vk-spirv`?"), "{messages:?}");
    assert!(messages[1].ends_with("did you mean `glsl`?"), "{messages:?}");
    // Once the names are right, the option's value.
    let fixed = text.replace("vk-spriv", "vk-spirv").replace("glls", "glsl");
    let refused = plan(dir.path(), &fixed).refused;
    assert_eq!(refused.len(), 1);
    assert!(refused[0].1.message.ends_with("not optimize = 'sise'; did you mean `size`?"), "{refused:?}");
}

#[test]
fn a_program_s_stages_go_to_the_compiler_that_takes_them_all_and_the_plan_says_so_once() {
    let dir = sources();
    let stages = |a: &str, b: &str| {
        format!(
            "stages = [{{ stage = \"{a}\", file = \"a.hlsl\", language = \"hlsl\" }}, \
             {{ stage = \"{b}\", file = \"a.hlsl\", language = \"hlsl\" }}]"
        )
    };
    let text =
        program("raster", &stages("vertex", "fragment")) + &program("traced", &stages("ray-generation", "closest-hit"));
    let planned = plan(dir.path(), &text);
    assert!(planned.refused.is_empty(), "{:?}", planned.refused);
    assert_eq!(planned.compiler("raster", "vk-spirv").unwrap().name, "glslang-hlsl", "both take it: the priority");
    assert_eq!(planned.compiler("traced", "vk-spirv").unwrap().name, "slang", "the one that has the stages");
    let traced = planned.program("traced").unwrap();
    assert_eq!(traced.language(), Some("hlsl"));
    assert!(traced.stages().all(|s| s.language == "hlsl"));
    assert!(matches!(planned.compiler("traced", "gl-spirv"), Err(PlanError::NotATarget { .. })));
}

/// How a compile reaches files is what the chosen compiler's pair
/// declares, not what its language is called: the same HLSL follows
/// `#include`s through one compiler and imports through another, and a
/// language no one has heard of reaches what its compiler says.
#[test]
fn the_plan_carries_how_the_chosen_pair_reaches_files_by_language() {
    let dir = sources();
    std::fs::write(dir.path().join("a.gld"), "void main() {}\n").unwrap();
    let mut offer = offer();
    offer.languages.push(("glsl-dialect".into(), vec!["gld".into()]));
    offer.compilers.push(candidate(
        "dialect",
        0,
        CompilePair::new("glsl-dialect", "vk-spirv").reaching(SourceReach::INCLUDES),
    ));
    offer.compilers.push(candidate("unsaid", 0, CompilePair::new("glsl", "gl-spirv")));
    let stages = |a: &str, b: &str| {
        format!(
            "stages = [{{ stage = \"{a}\", file = \"a.hlsl\", language = \"hlsl\" }}, \
             {{ stage = \"{b}\", file = \"a.hlsl\", language = \"hlsl\" }}]"
        )
    };
    let text = program("raster", &stages("vertex", "fragment"))
        + &program("traced", &stages("ray-generation", "closest-hit"))
        + &program("dialect", "stages = [{ stage = \"compute\", file = \"a.gld\" }]")
        + &program("unsaid", "stages = [{ stage = \"compute\", file = \"a.frag\" }]").replace("vk-spirv", "gl-spirv");
    let planned = BuildPlan::resolve(Manifest::parse(&dir.path().join("xr.toml"), &text).unwrap(), &offer);
    assert!(planned.refused.is_empty(), "{:?}", planned.refused);
    let reach = |program: &str, target: &str| planned.compiler(program, target).unwrap().reach.clone();
    assert_eq!(reach("raster", "vk-spirv"), [("hlsl".to_owned(), SourceReach::INCLUDES)]);
    assert_eq!(reach("traced", "vk-spirv"), [("hlsl".to_owned(), SourceReach::IMPORTS)]);
    assert_eq!(reach("dialect", "vk-spirv"), [("glsl-dialect".to_owned(), SourceReach::INCLUDES)]);
    assert_eq!(reach("unsaid", "gl-spirv"), [("glsl".to_owned(), SourceReach::UNKNOWN)]);
    let raster = planned.compiler("raster", "vk-spirv").unwrap();
    assert_eq!(raster.reach_of("hlsl"), SourceReach::INCLUDES);
    assert_eq!(raster.reach_of("glsl"), SourceReach::UNKNOWN, "a language the program has not");
}

#[test]
fn languages_left_to_the_extension_are_decided_by_the_plan() {
    let dir = sources();
    let text = program(
        "p",
        "stages = [{ stage = \"vertex\", file = \"a.vert\" }, { stage = \"fragment\", file = \"a.hlsl\", language = \"hlsl\" }]",
    );
    let planned = plan(dir.path(), &text);
    let program = planned.program("p").unwrap();
    let languages: Vec<&str> = program.stages().map(|s| s.language).collect();
    assert_eq!(languages, ["glsl", "hlsl"], "from the .vert extension, and as named");
    assert_eq!(program.language(), None, "two languages");
    // glsl and hlsl go to different compilers: no one builds the program.
    let error = planned.compiler("p", "vk-spirv").unwrap_err();
    assert!(matches!(error, PlanError::MixedLanguages { .. }), "{error}");
    assert!(error.to_string().contains("glslc and glslang-hlsl are needed"), "{error}");
}

#[test]
fn a_stage_its_target_s_compiler_lacks_is_refused_at_the_stage() {
    let dir = sources();
    let mut offer = offer();
    offer.compilers.retain(|c| c.name != "slang");
    let text = program("p", "stages = [{ stage = \"ray-generation\", file = \"a.hlsl\", language = \"hlsl\" }]");
    let planned = BuildPlan::resolve(Manifest::parse(&dir.path().join("xr.toml"), &text).unwrap(), &offer);
    let messages: Vec<&str> = planned.refused.iter().map(|(_, e)| e.message.as_str()).collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(messages[0].contains("cannot be built for vk-spirv: glslang-hlsl builds vertex, fragment stages of hlsl"));
}

#[test]
fn options_equal_to_the_default_are_left_out_and_others_are_planned_per_target() {
    let dir = sources();
    let with = |value: &str| {
        program(
            "p",
            &format!("stages = [{{ stage = \"vertex\", file = \"a.vert\" }}]\noptions = {{ optimize = \"{value}\" }}"),
        )
    };
    let size = plan(dir.path(), &with("size"));
    assert_eq!(size.program("p").unwrap().options_for("vk-spirv"), [("optimize".to_owned(), "size".to_owned())]);
    let default = plan(dir.path(), &with("none"));
    assert!(default.program("p").unwrap().options_for("vk-spirv").is_empty(), "the default keeps the keys");
}
