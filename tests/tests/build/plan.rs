//! One build plan for every front end: the compiler of each (program,
//! target) is chosen once, and `xr build`, `xr compile` and `xr bindgen`
//! agree with it, on an HLSL ray tracing program that only one of the
//! plugins compiling HLSL into vk-spirv can build (its raster HLSL compiler
//! has the higher priority and no ray tracing stages).

use std::collections::BTreeMap;
use std::path::Path;
use xr_build::{BuildPlan, Manifest};
use xr_tests::{Xr, materials_full_copy, temp_dir, workspace_root};

/// A copy of the public HLSL ray tracing fixture (tests/fixtures/hlsl-raytracingbasic).
fn raytracing_copy(label: &str) -> xr_tests::TestDir {
    let dir = temp_dir(label);
    let fixture = workspace_root().join("tests/fixtures/hlsl-raytracingbasic");
    for file in ["xr.toml", "raygen.rgen", "miss.rmiss", "closesthit.rchit"] {
        std::fs::copy(fixture.join(file), dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    }
    dir
}

/// The plan's compiler of every (program, target) of the manifest in `dir`.
fn planned(dir: &Path) -> BTreeMap<(String, String), String> {
    let manifest = Manifest::load(&dir.join("xr.toml")).expect("the manifest reads");
    let plan = BuildPlan::new(manifest, &xr_tests::registry());
    assert!(plan.refused.is_empty(), "{:?}", plan.refused);
    let mut chosen = BTreeMap::new();
    for program in &plan.programs {
        for target in program.targets() {
            let compiler = target.compiler.as_ref().unwrap_or_else(|e| panic!("{}: {e}", program.name));
            chosen.insert((program.name.clone(), target.name.clone()), compiler.name.clone());
        }
    }
    chosen
}

/// What `xr build -v` says builds each (program, target).
fn built_by(run: &xr_tests::XrRun) -> BTreeMap<(String, String), String> {
    let mut by = BTreeMap::new();
    for line in run.stderr.lines() {
        let Some(rest) = line.strip_prefix("xr build: program '") else { continue };
        let (program, rest) = rest.split_once("' for ").unwrap();
        let (target, compiler) = rest.split_once(": compiled by ").unwrap_or_else(|| panic!("{line}"));
        by.insert((program.to_owned(), target.to_owned()), compiler.to_owned());
    }
    by
}

/// What `xr compile -v` says compiles `files` into `target`.
fn compiled_by(dir: &Path, files: &[String], includes: &[String], target: &str, language: Option<&str>) -> String {
    let mut args: Vec<String> = vec!["compile".into(), "-v".into(), "--target".into(), target.into()];
    if let Some(language) = language {
        // Files named by their stage (`.rgen`) say nothing of their language.
        args.extend(["--lang".into(), language.into()]);
    }
    args.extend(files.iter().cloned());
    for include in includes {
        args.extend(["-I".into(), include.clone()]);
    }
    args.extend(["-o".into(), "compiled.out".into()]);
    let run = Xr::new(&args).dir(dir).run();
    let line = run.stderr.lines().find(|l| l.contains(", compiled by ")).unwrap_or_else(|| panic!("{}", run.stderr));
    line.rsplit(", compiled by ").next().unwrap().to_owned()
}

#[test]
fn an_hlsl_ray_tracing_program_builds_and_its_bindings_are_reflected_through_the_compiler_that_built_it() {
    let dir = raytracing_copy("plan-hlsl-raytracing");
    let plan = planned(&dir);
    let compiler = &plan[&("basic".to_owned(), "vk-spirv".to_owned())];
    let build = Xr::new(["build", "-m", "xr.toml", "-v"]).dir(&dir).ok();
    assert_eq!(built_by(&build), plan, "{}", build.stderr);
    let bindgen = Xr::new(["bindgen", "-m", "xr.toml", "-o", "b.rs"]).dir(&dir).ok();
    assert!(bindgen.stderr.contains("1 programs, 1 objects reflected now"), "{}", bindgen.stderr);
    let code = std::fs::read_to_string(dir.join("b.rs")).unwrap();
    assert!(code.contains("pub mod basic {"), "{code}");
    // The compiler that reflected it is the one the plan chose: a raster-only
    // HLSL compiler fails on the ray generation stage at its first line.
    assert!(!bindgen.stderr.contains("error"), "{}", bindgen.stderr);
    let files: Vec<String> = ["raygen.rgen", "miss.rmiss", "closesthit.rchit"].map(String::from).to_vec();
    assert_eq!(&compiled_by(&dir, &files, &[], "vk-spirv", Some("hlsl")), compiler);
}

#[test]
fn xr_build_and_xr_compile_choose_the_plan_s_compiler_for_every_program_and_target() {
    let dir = materials_full_copy("plan-front-ends");
    let plan = planned(&dir);
    let build =
        Xr::new(["build", "-m", "xr.toml", "-v", "--program", "unlit", "--program", "unlit-slang"]).dir(&dir).ok();
    let by_build = built_by(&build);
    // The plan of every program is said, the ones not built too.
    assert_eq!(by_build, plan, "{}", build.stderr);
    let manifest = Manifest::load(&dir.join("xr.toml")).unwrap();
    for program in &manifest.programs {
        let mut files: Vec<String> =
            program.stages.iter().map(|s| s.file.strip_prefix(&*dir).unwrap().display().to_string()).collect();
        files.dedup();
        let includes: Vec<String> =
            program.include_dirs.iter().map(|d| d.strip_prefix(&*dir).unwrap().display().to_string()).collect();
        for target in &program.targets {
            let key = (program.name.clone(), target.name.clone());
            assert_eq!(compiled_by(&dir, &files, &includes, &target.name, None), plan[&key], "{key:?}");
        }
    }
}
