//! Ray tracing on the device: the raytraced sample traces the textured
//! cube into its raster pixels (Vulkan, under the validation layers);
//! acceleration structures are refused where they name what the device has
//! not made; a ray tracing program is launched only by `trace_rays`; the
//! stages' shared interface is checked by name before the driver; OpenGL
//! refuses the stages by name.

use raytraced::{PATHS, SIZE, background, compare, ray_program, render, skipped};
use std::path::Path;
use xr_device::{
    AccelerationInstance, AccelerationStructureId, BottomLevelDesc, BufferUsage, ComputeCall, DeviceKind,
    DeviceOptions, DrawCall, Filter, SamplerDesc, TextureDesc, TextureFormat, TraceRaysCall, Wrap,
};
use xr_sourcebuild::{BuildOptions, ConstantTableExt, ProgramDesc, ShaderStage, SourceDesc};
use xr_tests::{registry, temp_dir};

fn validated() -> DeviceOptions {
    DeviceOptions { validation: true, ..DeviceOptions::default() }
}

fn vulkan() -> raytraced::RenderPath {
    *PATHS.iter().find(|p| p.kind == DeviceKind::VULKAN).expect("a Vulkan path")
}

#[test]
fn the_raytraced_sample_traces_the_raster_pixels_through_primary_and_shadow_rays() {
    let rendered = render(&registry(), vulkan(), &validated()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((rendered.traced.width, rendered.traced.height), (SIZE, SIZE));
    let comparison = compare(&rendered.traced, &rendered.raster, background());
    assert!(comparison.covered > 3000, "the cube covers {} pixels in both", comparison.covered);
    // The bounds and why: the sample's library documentation.
    assert!(comparison.within_bounds(), "{comparison:?}");
}

/// The sample's stages, with `file` replaced by `replace(text)`, in a new directory.
fn edited_program(label: &str, file: &str, replace: impl Fn(&str) -> String) -> (xr_tests::TestDir, ProgramDesc) {
    let dir = temp_dir(label);
    let shaders = raytraced::shader_dir();
    for name in ["trace.rgen", "background.rmiss", "shadow.rmiss", "shade.rchit"] {
        let text = std::fs::read_to_string(shaders.join(name)).unwrap();
        let text = if name == file { replace(&text) } else { text };
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let read = |stage, name: &str| SourceDesc::read("glsl", stage, &dir.path().join(name)).unwrap();
    let program = ProgramDesc::new(
        "edited",
        [
            read(ShaderStage::RayGeneration, "trace.rgen"),
            read(ShaderStage::Miss, "background.rmiss"),
            read(ShaderStage::Miss, "shadow.rmiss"),
            read(ShaderStage::ClosestHit, "shade.rchit"),
        ],
    );
    (dir, program)
}

fn build_error(program: &ProgramDesc) -> String {
    let registry = registry();
    let mut attached = registry.open_with(DeviceKind::VULKAN, "xr-compiler-vk-spirv", &validated()).unwrap();
    let built = attached.compiler.build_program(program, &BuildOptions::default()).into_result();
    let error = built.err().expect("refused").to_string();
    assert_eq!(attached.device.take_validation_messages().into_result().unwrap().len(), 0, "before the driver");
    error
}

#[test]
fn a_hit_stage_reading_a_payload_no_stage_traces_with_is_refused_by_name() {
    let (_dir, program) = edited_program("rt-payload", "shade.rchit", |text| {
        text.replace("rayPayloadInEXT vec3 color;", "rayPayloadInEXT vec4 color;")
            .replace("color = textureLod(albedo, uv, 0.0).rgb * lit;", "color = textureLod(albedo, uv, 0.0) * lit;")
    });
    let error = build_error(&program);
    assert!(
        error.contains("the closest-hit stage")
            && error.contains(
                "shade.rchit reads the incoming ray payload 'color' (vec4<f32>), which no stage that traces rays writes"
            )
            && error.contains("trace.rgen writes 'color' (vec3<f32>)"),
        "{error}"
    );
}

/// `program` built on a validated Vulkan device and traced at the sample's cube.
fn traced_on_the_device(program: &ProgramDesc) -> xr_device::Image {
    let registry = registry();
    let mut attached = registry.open_with(DeviceKind::VULKAN, "xr-compiler-vk-spirv", &validated()).unwrap();
    let (texture, paint) = textured::paint_texture(&mut attached.device, &mut attached.compiler).unwrap();
    let mut built = attached.compiler.build_program(program, &BuildOptions::default()).into_result();
    let built = built.as_mut().unwrap_or_else(|e| panic!("{e}"));
    let traced = raytraced::trace_cube(&mut attached.device, built, texture).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(attached.device.take_validation_messages().into_result().unwrap().len(), 0);
    drop(paint);
    traced
}

/// Public programs declare a triangle's hit attribute as a `vec3` and read
/// its first two floats: the barycentrics land there, as the API says, so
/// the pixels are those of the `vec2` the sample declares.
#[test]
fn a_triangle_hit_attribute_larger_than_the_barycentrics_traces_the_pixels_of_two_floats() {
    let (_sample_dir, sample) = edited_program("rt-attributes-vec2", "shade.rchit", str::to_owned);
    let (_dir, larger) = edited_program("rt-attributes-vec3", "shade.rchit", |text| {
        text.replace("hitAttributeEXT vec2 barycentrics;", "hitAttributeEXT vec3 barycentrics;")
    });
    let expected = traced_on_the_device(&sample);
    let traced = traced_on_the_device(&larger);
    let comparison = compare(&traced, &expected, background());
    assert!(comparison.covered > 3000, "the cube covers {} pixels in both", comparison.covered);
    assert!(traced.rgba == expected.rgba, "{comparison:?}");
}

/// A hit stage that reads its triangle's vertex positions
/// (`GL_EXT_ray_tracing_position_fetch`: Debian 12's glslang does not know
/// it, the glslang of 2026 that ships with Slang compiles it) and shades
/// with the face normal they give: the cube's faces are flat, so the
/// pixels are those of the sample's interpolated normals.
#[test]
fn a_hit_stage_reading_its_triangle_s_positions_traces_the_sample_s_pixels() {
    let (_sample_dir, sample) = edited_program("rt-normals", "shade.rchit", str::to_owned);
    let (_dir, fetched) = edited_program("rt-position-fetch", "shade.rchit", |text| {
        let interpolated = "vec3 normal = corner3(corners.x, 3) * weights.x + corner3(corners.y, 3) * weights.y + \
                            corner3(corners.z, 3) * weights.z;";
        assert!(text.contains(interpolated), "the sample's normal");
        text.replace(
            "#extension GL_EXT_ray_tracing : require\n",
            "#extension GL_EXT_ray_tracing : require\n#extension GL_EXT_ray_tracing_position_fetch : require\n",
        )
        .replace(
            interpolated,
            "vec3 normal = normalize(cross(gl_HitTriangleVertexPositionsEXT[1] - gl_HitTriangleVertexPositionsEXT[0], \
             gl_HitTriangleVertexPositionsEXT[2] - gl_HitTriangleVertexPositionsEXT[0]));\n    \
             if (dot(normal, gl_ObjectRayDirectionEXT) > 0.0) { normal = -normal; }",
        )
    });
    let expected = traced_on_the_device(&sample);
    let traced = traced_on_the_device(&fetched);
    let comparison = compare(&traced, &expected, background());
    assert!(comparison.covered > 3000, "the cube covers {} pixels in both", comparison.covered);
    // The same normal, computed another way: the rounding of a normalised
    // cross product against an interpolation of unit normals.
    assert!(comparison.silhouette == 0 && comparison.largest <= 1, "{comparison:?}");
}

#[test]
fn a_triangle_hit_attribute_that_cannot_hold_the_barycentrics_is_refused_by_name() {
    let (_dir, program) = edited_program("rt-attributes-float", "shade.rchit", |text| {
        text.replace("hitAttributeEXT vec2 barycentrics;", "hitAttributeEXT float barycentrics;").replace(
            "vec3(1.0 - barycentrics.x - barycentrics.y, barycentrics.x, barycentrics.y)",
            "vec3(1.0 - barycentrics, barycentrics, 0.0)",
        )
    });
    let error = build_error(&program);
    assert!(
        error.contains(
            "shade.rchit of hit group 0 reads the hit attribute 'barycentrics' (f32), not one that holds the \
             triangle's barycentrics: two floats first"
        ),
        "{error}"
    );
}

#[test]
fn acceleration_structures_name_only_what_the_device_made_and_rays_launch_only_ray_tracing_programs() {
    let registry = registry();
    let mut attached = registry.open_with(DeviceKind::VULKAN, "xr-compiler-vk-spirv", &validated()).unwrap();
    let device = &mut attached.device;
    let (vertices, indices) = textured::cube();
    let vertex_bytes: Vec<u8> = vertices.iter().flat_map(|v| v.to_le_bytes()).collect();
    let cube = device.create_buffer(BufferUsage::STORAGE, vertex_bytes.as_slice().into()).into_result().unwrap();
    let mut past: Vec<u8> = indices.iter().flat_map(|i| i.to_le_bytes()).collect();
    past.extend(24u32.to_le_bytes().repeat(3));
    let past = device.create_buffer(BufferUsage::INDEX, past.as_slice().into()).into_result().unwrap();
    let desc = BottomLevelDesc { vertices: cube, vertex_stride: 8, indices: Some(past).into(), opaque: true };
    let refused = device.create_bottom_level(&desc).into_result().unwrap_err();
    assert!(refused.message.contains("index 24 (at 36) is past the 24 vertices"), "{refused}");
    let four =
        device.create_buffer(BufferUsage::INDEX, [0u32, 1, 2, 3].map(u32::to_le_bytes).concat().as_slice().into());
    let desc = BottomLevelDesc {
        vertices: cube,
        vertex_stride: 8,
        indices: Some(four.into_result().unwrap()).into(),
        opaque: true,
    };
    let refused = device.create_bottom_level(&desc).into_result().unwrap_err();
    assert!(refused.message.contains("a bottom level is made of whole triangles"), "{refused}");
    assert!(refused.message.contains("gives 4 corners"), "{refused}");
    let desc = BottomLevelDesc { vertices: cube, vertex_stride: 2, indices: None.into(), opaque: true };
    let refused = device.create_bottom_level(&desc).into_result().unwrap_err();
    assert!(refused.message.contains("a stride of 2 floats is too short"), "{refused}");
    // 24 vertices without indices are 8 triangles.
    let desc = BottomLevelDesc { vertices: cube, vertex_stride: 8, indices: None.into(), opaque: true };
    let bottom = device.create_bottom_level(&desc).into_result().unwrap_or_else(|e| panic!("{e}"));

    let missing = AccelerationInstance::new(AccelerationStructureId(bottom.0 + 5), [0.0; 12]);
    let refused = device.create_top_level([missing].as_slice().into()).into_result().unwrap_err();
    assert!(refused.message.contains("instance 0 places bottom level 5, which this device has not made"), "{refused}");
    let identity = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0];
    let top = device.create_top_level([AccelerationInstance::new(bottom, identity)].as_slice().into());
    let top = top.into_result().unwrap_or_else(|e| panic!("{e}"));
    let nested = [AccelerationInstance::new(bottom, identity), AccelerationInstance::new(top, identity)];
    let refused = device.create_top_level(nested.as_slice().into()).into_result().unwrap_err();
    assert!(refused.message.contains("instance 1 places acceleration structure 1, a top level"), "{refused}");
    let refused = device.acceleration_structure_binding(bottom).into_result().unwrap_err();
    assert!(refused.message.contains("is a bottom level: programs trace a top level"), "{refused}");
    assert!(device.acceleration_structure_binding(top).into_result().unwrap().acceleration_structure);

    let traced = attached.compiler.build_program(&ray_program().unwrap(), &BuildOptions::default());
    let mut traced = traced.into_result().unwrap_or_else(|e| panic!("{e}"));
    let device = &mut attached.device;
    let storage = TextureDesc { width: 8, height: 8, format: TextureFormat::Rgba8, mip_levels: 1, storage: true };
    let image =
        device.create_texture(&storage, vec![0u8; storage.bytes(1)].as_slice().into(), 1).into_result().unwrap();
    let sampler =
        device.create_sampler(&SamplerDesc { filter: Filter::Nearest, mipmap: Filter::Nearest, wrap: Wrap::Repeat });
    let sampler = sampler.into_result().unwrap();
    let constants = &mut traced.constants;
    let scene = device.acceleration_structure_binding(top).into_result().unwrap();
    let buffer = device.buffer_binding(cube).into_result().unwrap();
    let refused = constants.set_buffer(constants.handle("scene").unwrap(), &buffer).unwrap_err();
    assert!(
        refused
            .message
            .contains("'scene' is an acceleration structure: it takes an acceleration structure, not a buffer"),
        "{refused}"
    );
    let refused = constants.set_buffer(constants.handle("CubeVertices").unwrap(), &scene).unwrap_err();
    assert!(refused.message.contains("use set_acceleration_structure"), "{refused}");
    constants.set_acceleration_structure(constants.handle("scene").unwrap(), &scene).unwrap();
    constants
        .set_texture(
            constants.handle("traced").unwrap(),
            &device.texture_binding(image, None.into()).into_result().unwrap(),
        )
        .unwrap();
    let sampled = device.texture_binding(image, Some(sampler).into()).into_result().unwrap();
    constants.set_texture(constants.handle("albedo").unwrap(), &sampled).unwrap();
    for name in ["CubeVertices", "CubeIndices"] {
        constants.set_buffer(constants.handle(name).unwrap(), &buffer).unwrap();
    }
    let target = device.create_render_target(SIZE, SIZE).into_result().unwrap();
    let (vertex_buffer, _, _) = textured::cube_buffers(device).unwrap();
    let draw = DrawCall::triangles(target, traced.program, vertex_buffer, 3);
    let refused = device.draw(&draw).into_result().unwrap_err();
    assert!(refused.message.contains("is a ray tracing program: launch it with trace_rays"), "{refused}");
    let refused =
        device.dispatch(&ComputeCall { program: traced.program, groups: [1, 1, 1] }).into_result().unwrap_err();
    assert!(refused.message.contains("is not a compute program: launch it with trace_rays"), "{refused}");
    let refused =
        device.trace_rays(&TraceRaysCall { program: traced.program, size: [8, 0, 1] }).into_result().unwrap_err();
    assert!(refused.message.contains("8 × 0 × 1 = 0 rays"), "{refused}");
    device
        .trace_rays(&TraceRaysCall { program: traced.program, size: [8, 8, 1] })
        .into_result()
        .unwrap_or_else(|e| panic!("{e}"));
    let (_, paint) = textured::paint_texture(device, &mut attached.compiler).unwrap();
    let refused = attached.device.trace_rays(&TraceRaysCall { program: paint.program, size: [8, 8, 1] }).into_result();
    assert!(refused.unwrap_err().message.contains("is not a ray tracing program: draw or dispatch it"));
    // Nothing refused reached the driver.
    assert_eq!(attached.device.take_validation_messages().into_result().unwrap().len(), 0);
}

#[test]
fn opengl_says_why_it_skips_the_sample_and_refuses_its_stages_by_name() {
    let registry = registry();
    for path in PATHS.iter().filter(|p| p.kind == DeviceKind::OPENGL) {
        assert!(skipped(*path).is_some_and(|why| why.contains("OpenGL has no ray tracing stages")), "{}", path.name);
        let mut attached = registry.open_with(path.kind, path.build_system, &DeviceOptions::default()).unwrap();
        let built = attached.compiler.build_program(&ray_program().unwrap(), &BuildOptions::default());
        let error = built.into_result().err().unwrap_or_else(|| panic!("{} built a ray tracing program", path.name));
        assert!(error.to_string().contains("OpenGL has no ray-generation stage ("), "{}: {error}", path.name);
    }
    assert_eq!(skipped(vulkan()), None);
    assert!(Path::new(&raytraced::shader_dir()).join("trace.rgen").is_file());
}

/// A ray tracing program built by `xr build` into a store (two miss stages
/// in the manifest) loads through the run-time library as a compatible
/// object, and traces the sample's pixels as the program built on the
/// device does.
/// Builds the program `stages` (TOML stage tables of the files in `dir`)
/// with `xr build`, loads it from the store and traces the sample's cube
/// with it: the traced image and the raster one.
fn traced_from_the_store(dir: &Path, stages: &str) -> (xr_device::Image, xr_device::Image) {
    std::fs::write(
        dir.join("xr.toml"),
        format!(
            "store = \"store\"\n\n[[program]]\nname = \"traced\"\ntargets = [\"vk-spirv\"]\nstages = [\n{stages}]\n"
        ),
    )
    .unwrap();
    let built = xr_tests::Xr::new(["build", "-m", "xr.toml"]).dir(dir).ok();
    assert!(built.stderr.contains("1 built"), "{}", built.stderr);

    let registry = registry();
    let library = xr_library::ShaderLibrary::open(&dir.join("store")).unwrap();
    let mut attached = registry.open_with(DeviceKind::VULKAN, "xr-compiler-vk-spirv", &validated()).unwrap();
    let (texture, paint) = textured::paint_texture(&mut attached.device, &mut attached.compiler).unwrap();
    let mut loader = xr_library::DeviceLoader::attach(&registry, &attached.device, &library).unwrap();
    let request = xr_library::LoadRequest { program: "traced", ..xr_library::LoadRequest::default() };
    let mut loaded = loader.load(&library, &request).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loaded.path, xr_library::LoadPath::CompatibleObject, "{}", loaded.reason);
    let traced =
        raytraced::trace_cube(&mut attached.device, &mut loaded.built, texture).unwrap_or_else(|e| panic!("{e}"));
    let raster = raytraced::raster_cube(&mut attached.device, &mut attached.compiler, texture).unwrap();
    assert_eq!(attached.device.take_validation_messages().into_result().unwrap().len(), 0);
    drop((loaded, loader, paint));
    (traced, raster)
}

/// A copy of the sample's shaders in a new directory.
fn sample_shaders(label: &str) -> xr_tests::TestDir {
    let dir = temp_dir(label);
    for name in ["trace.rgen", "background.rmiss", "shadow.rmiss", "shade.rchit"] {
        std::fs::copy(raytraced::shader_dir().join(name), dir.join(name)).unwrap();
    }
    dir
}

const SAMPLE_STAGES: &str = "{ stage = \"ray-generation\", file = \"trace.rgen\" },\n\
    { stage = \"miss\", file = \"background.rmiss\" },\n{ stage = \"miss\", file = \"shadow.rmiss\" },\n";

#[test]
fn a_ray_tracing_program_from_the_store_traces_the_sample_s_pixels() {
    let dir = sample_shaders("rt-store");
    let stages = format!("{SAMPLE_STAGES}{{ stage = \"closest-hit\", file = \"shade.rchit\" }},\n");
    let (traced, raster) = traced_from_the_store(&dir, &stages);
    let comparison = compare(&traced, &raster, background());
    assert!(comparison.covered > 3000 && comparison.within_bounds(), "{comparison:?}");
}

#[test]
fn named_hit_groups_put_each_closest_hit_stage_where_the_manifest_says() {
    let dir = sample_shaders("rt-hit-groups");
    std::fs::write(
        dir.join("red.rchit"),
        "#version 460\n#extension GL_EXT_ray_tracing : require\n\
         layout(location = 0) rayPayloadInEXT vec3 color;\nvoid main() { color = vec3(1.0, 0.0, 0.0); }\n",
    )
    .unwrap();
    // Every ray the sample traces at the cube meets hit group 0. Given
    // first, red.rchit is that group by the default rule; named group 1,
    // it is not.
    let red = [255u8, 0, 0, 255];
    for (red_group, shade_group, sample) in [("", "", false), (", hit_group = 1", ", hit_group = 0", true)] {
        std::fs::remove_dir_all(dir.join("store")).ok();
        let stages = format!(
            "{SAMPLE_STAGES}{{ stage = \"closest-hit\", file = \"red.rchit\"{red_group} }},\n\
             {{ stage = \"closest-hit\", file = \"shade.rchit\"{shade_group} }},\n"
        );
        let (traced, raster) = traced_from_the_store(&dir, &stages);
        let reds = traced.rgba.chunks(4).filter(|p| *p == red).count();
        let comparison = compare(&traced, &raster, background());
        if sample {
            assert!(comparison.covered > 3000 && comparison.within_bounds(), "{comparison:?}");
            assert_eq!(reds, 0);
        } else {
            assert!(reds > 3000, "the cube is red.rchit's: {reds} red pixels");
        }
    }
}
