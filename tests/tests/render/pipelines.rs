//! Separable programs and program pipelines: 2 vertex × 3 fragment stages,
//! 6 pipelines from 5 stored binaries, checked tile by tile.

use pipelines::{FRAGMENT_STAGES, SOLID, TILE, TINT, VERTEX_STAGES, default_shader_dir, render};
use xr_device::ErrorKind;
use xr_sourcebuild::{BuildOptions, BuiltProgram, LoadPath, ProgramDesc, ShaderStage, SourceDesc};
use xr_store::Store;
use xr_tests::{GlBench, assert_rgba_near, registry, rgba8, temp_dir};

#[test]
fn six_pipelines_from_five_stored_stage_binaries() {
    let registry = registry();
    let store_dir = temp_dir("pipelines");
    let first = render(&registry, &default_shader_dir(), &store_dir).expect("renders");
    assert_eq!(first.loads.len(), 5);
    assert!(first.loads.iter().all(|(_, r)| r.path == LoadPath::Source), "cold store");
    assert_eq!(Store::open(&store_dir).unwrap().keys().unwrap().len(), 5, "one binary per stage program");

    let image = &first.image;
    assert_eq!((image.width, image.height), (TILE * 3, TILE * 2));
    for (row, _) in VERTEX_STAGES.iter().enumerate() {
        // The up triangle's centroid is below the tile centre, the down one's above.
        let centroid_y = if row == 0 { TILE / 2 + TILE / 12 } else { TILE / 2 - TILE / 12 };
        for (column, fragment) in FRAGMENT_STAGES.iter().enumerate() {
            let x = column as u32 * TILE + TILE / 2;
            let y = row as u32 * TILE + centroid_y;
            let inside = image.pixel(x, y).unwrap();
            match *fragment {
                "solid.frag" => assert_eq!(inside, rgba8(SOLID), "tile {row},{column}"),
                "classic.frag" => assert_eq!(inside, rgba8(TINT), "tile {row},{column}"),
                _ => {
                    // v_uv.y = clip y * 0.5 + 0.5 at the pixel's centre (v_uv.x is 0.5 at x = 0).
                    let clip_y = 1.0 - 2.0 * ((y - row as u32 * TILE) as f32 + 0.5) / TILE as f32;
                    assert_rgba_near(inside, rgba8([0.5, clip_y * 0.5 + 0.5, 0.5, 1.0]), 2);
                }
            }
            let corner = image.pixel(column as u32 * TILE + 1, row as u32 * TILE + 1).unwrap();
            assert_eq!(corner, [0, 0, 0, 255], "outside the triangle of tile {row},{column}");
            // The apex side: above the up triangle, below the down one, is empty.
            let beyond = if row == 0 { row as u32 * TILE + TILE / 8 } else { row as u32 * TILE + TILE - TILE / 8 };
            assert_eq!(image.pixel(x, beyond).unwrap(), [0, 0, 0, 255], "beyond the apex of tile {row},{column}");
        }
    }

    let second = render(&registry, &default_shader_dir(), &store_dir).expect("renders again");
    let paths: Vec<LoadPath> = second.loads.iter().map(|(_, r)| r.path).collect();
    assert_eq!(paths, vec![LoadPath::DeviceBinary; 5], "{:?}", second.loads);
    assert_eq!(second.image, first.image, "binaries render the same pixels as source");
}

fn separable(stage: ShaderStage, file: &str, source: &str) -> ProgramDesc {
    ProgramDesc::new(file, [SourceDesc::new("glsl", stage, file, source)])
}

/// Builds the one-stage program `separable` makes of `file` with `options`; it must build.
fn build_stage(
    bench: &mut GlBench,
    stage: ShaderStage,
    file: &str,
    source: &str,
    options: &BuildOptions,
) -> BuiltProgram {
    bench.compiler.build_program(&separable(stage, file, source), options).into_result().unwrap()
}

#[test]
fn a_pipeline_whose_stage_interfaces_do_not_match_is_reported_before_drawing() {
    let registry = registry();
    let mut bench = GlBench::open(&registry, "xr-compiler-glsl");
    let options = BuildOptions { separable: true, retrievable: false };
    let vertex = "#version 450 core
layout(location = 0) in vec2 p;
layout(location = 0) out vec2 v_uv;
out gl_PerVertex { vec4 gl_Position; };
void main() { v_uv = p; gl_Position = vec4(p, 0.0, 1.0); }
";
    let fragment = "#version 450 core
layout(location = 0) in vec4 v_color;
out vec4 c;
void main() { c = v_color; }
";
    let v = build_stage(&mut bench, ShaderStage::Vertex, "uv.vert", vertex, &options);
    let f = build_stage(&mut bench, ShaderStage::Fragment, "color.frag", fragment, &options);
    let error = bench.compiler.create_pipeline([v.program, f.program].as_slice().into()).into_result().unwrap_err();
    assert_eq!(error.kind, ErrorKind::InvalidInput);
    assert!(error.message.contains("pipeline stages do not match"), "{error}");
    assert!(
        error.message.contains("'color.frag'") && error.message.contains("'uv.vert'"),
        "names both stages: {error}"
    );
    assert!(error.message.contains("'v_color' (vec4, location 0)"), "{error}");
    assert!(error.message.contains("'v_uv' (vec2, location 0)"), "{error}");

    // An input no output writes is reported the same way.
    let unfed = "#version 450 core\nlayout(location = 3) in vec2 v_extra;\nout vec4 c;\nvoid main() { c = vec4(v_extra, 0.0, 1.0); }\n";
    let g = build_stage(&mut bench, ShaderStage::Fragment, "extra.frag", unfed, &options);
    let error = bench.compiler.create_pipeline([v.program, g.program].as_slice().into()).into_result().unwrap_err();
    assert!(error.message.contains("reads 'v_extra' (vec2, location 3) which 'uv.vert'"), "{error}");

    // A program that was not built separable cannot join a pipeline.
    let whole = build_stage(&mut bench, ShaderStage::Vertex, "whole.vert", vertex, &BuildOptions::default());
    let error = bench.compiler.create_pipeline([whole.program, f.program].as_slice().into()).into_result().unwrap_err();
    assert!(error.message.contains("was not built separable"), "{error}");
    // Two programs for the same stage cannot either.
    let error = bench.compiler.create_pipeline([v.program, v.program].as_slice().into()).into_result().unwrap_err();
    assert!(error.message.contains("repeats a stage"), "{error}");
}
