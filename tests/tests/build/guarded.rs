//! `xr build --emit guarded`: every branch of every ladder compiles on the
//! OpenGL driver, renders what the variant's own source renders, and axis
//! values outside the matrix stop at the ladder's `#error`.

use xr_build::{AxisKind, Manifest, variants};
use xr_sourcebuild::{BuildOptions, ConstantTableExt, ProgramDesc, ShaderStage, SourceDesc};
use xr_tests::{GlBench, Xr, materials_copy, registry};

/// The defines a host sets to pick a variant's branch: every axis, an enum
/// axis as its value's index.
fn host_defines(program: &xr_build::Program, values: &[(String, String)]) -> Vec<(String, String)> {
    program
        .axes
        .iter()
        .zip(values)
        .map(|(axis, (_, value))| match &axis.kind {
            AxisKind::Enum(names) => (axis.name.clone(), names.iter().position(|n| n == value).unwrap().to_string()),
            _ => (axis.name.clone(), value.clone()),
        })
        .collect()
}

fn with_defines(mut desc: SourceDesc, defines: &[(String, String)]) -> SourceDesc {
    for (name, value) in defines {
        desc = desc.with_define(name.clone(), value.clone());
    }
    desc
}

/// The whole image a program draws over the bench's target.
fn image(bench: &mut GlBench, mut built: xr_sourcebuild::BuiltProgram) -> Vec<u8> {
    // The full-screen quad's positions run from -1 to 1: an identity rect.
    let rect = built.constants.handle("u_rect").unwrap();
    built.constants.set_vector(rect, &[0.0, 0.0, 1.0, 1.0]).unwrap();
    let color = built.constants.handle("u_color").unwrap();
    built.constants.set_vector(color, &[0.8, 0.6, 0.4, 1.0]).unwrap();
    bench.render_full(&built).rgba.to_vec()
}

#[test]
fn every_branch_of_the_guarded_ladder_compiles_and_renders_like_its_variant() {
    let dir = materials_copy("guarded");
    let output =
        Xr::new(["build", "-m", "xr.toml", "-q", "--target", "gl-glsl", "--emit", "guarded", "--emit-dir", "guarded"])
            .dir(&dir)
            .command()
            .output()
            .expect("xr runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{}{stderr}", String::from_utf8_lossy(&output.stdout));
    assert!(stderr.contains("lit.fragment.glsl (18 branches"), "{stderr}");

    let manifest = Manifest::load(&dir.join("xr.toml")).unwrap();
    let registry = registry();
    let mut bench = GlBench::open(&registry, "xr-compiler-glsl");
    let mut compared = 0;
    let mut images: Vec<(String, Vec<u8>)> = Vec::new();
    for program in &manifest.programs {
        let read =
            |stage: &str| std::fs::read_to_string(dir.join(format!("guarded/{}.{stage}.glsl", program.name))).unwrap();
        let (vertex, fragment) = (read("vertex"), read("fragment"));
        assert!(!vertex.contains("#include") && !fragment.contains("#include"), "self-contained");
        for variant in variants(program).unwrap().iter() {
            let defines = host_defines(program, &variant.values(program));
            let guarded = ProgramDesc::new(
                format!("guarded {}", variant.name),
                [
                    with_defines(
                        SourceDesc::new("glsl", ShaderStage::Vertex, "guarded.vert", vertex.clone()),
                        &defines,
                    ),
                    with_defines(
                        SourceDesc::new("glsl", ShaderStage::Fragment, "guarded.frag", fragment.clone()),
                        &defines,
                    ),
                ],
            );
            let built = bench
                .compiler
                .build_program(&guarded, &BuildOptions::default())
                .into_result()
                .unwrap_or_else(|e| panic!("branch of {} does not build: {e}", variant.name));
            // A program with a texture draws only with one bound: the
            // library test draws it (one variant: its ladder is one branch).
            if !built.constants.resources().into_result().unwrap().is_empty() {
                continue;
            }
            // Every branch is drawn and compared, as a whole image, with the
            // variant built from its own sources: a branch guarded by another
            // variant's condition draws another pattern, band count or tint.
            let mut own_defines: Vec<(String, String)> =
                variant.defines(program).iter().map(|d| (d.name.to_string(), d.value.to_string())).collect();
            own_defines.extend([("GAIN".to_owned(), "1.0".to_owned()), ("BIAS".to_owned(), "0.0".to_owned())]);
            let stage = |stage: &xr_build::Stage| {
                let desc = SourceDesc::read("glsl", stage.stage, &stage.file).unwrap();
                with_defines(desc, &own_defines).with_include_dir(program.include_dirs[0].to_string_lossy())
            };
            let own = ProgramDesc::new(variant.name.clone(), program.stages.iter().map(stage));
            let own = bench.compiler.build_program(&own, &BuildOptions::default()).into_result().unwrap();
            let (from_ladder, from_source) = (image(&mut bench, built), image(&mut bench, own));
            assert!(from_ladder == from_source, "{}: the branch draws another image than its variant", variant.name);
            images.push((variant.name.clone(), from_source));
            compared += 1;
        }
    }
    assert_eq!(compared, 6 + 18 + 12, "every branch of every program");
    // The comparison can tell variants apart: the variants of a program draw
    // distinct images (a branch swapped with another would show).
    let distinct: std::collections::BTreeSet<&Vec<u8>> = images.iter().map(|(_, image)| image).collect();
    assert_eq!(distinct.len(), images.len(), "every variant draws its own image");

    // lit[PATTERN=flat,BANDS=2] is filtered out of the matrix: no branch.
    let lit = |stage: &str| std::fs::read_to_string(dir.join(format!("guarded/lit.{stage}.glsl"))).unwrap();
    let defines = [("TINT", "0"), ("PATTERN", "0"), ("BANDS", "2")].map(|(n, v)| (n.to_owned(), v.to_owned()));
    let outside = ProgramDesc::new(
        "outside",
        [
            with_defines(SourceDesc::new("glsl", ShaderStage::Vertex, "lit.vert", lit("vertex")), &defines),
            with_defines(SourceDesc::new("glsl", ShaderStage::Fragment, "lit.frag", lit("fragment")), &defines),
        ],
    );
    let error = match bench.compiler.build_program(&outside, &BuildOptions::default()).into_result() {
        Ok(_) => panic!("a point outside the matrix built"),
        Err(e) => e.to_string(),
    };
    assert!(error.contains("lit: no variant for these axis values"), "{error}");
}
