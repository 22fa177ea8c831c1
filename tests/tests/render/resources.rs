//! Textures, samplers, buffers, depth, indexed draws and compute on both
//! device systems, bound by name through the constant table of every
//! build system; and every way binding them can go wrong.

use textured::{PALETTE, PATHS, RenderPath, SIZE, render, render_scene};
use xr_device::{
    BufferUsage, ComputeCall, DeviceBox, DeviceKind, DeviceOptions, DrawCall, Filter, Image, SamplerDesc, TextureDesc,
    TextureFormat, VertexAttribute, VertexLayout, Wrap,
};
use xr_host::Registry;
use xr_sourcebuild::{
    AttachedBuildSystemBox, BuildOptions, BuiltProgram, ConstantTableExt, ProgramDesc, ShaderStage, SourceDesc,
};
use xr_tests::registry;

/// Vulkan runs under the validation layers: any message fails the call.
fn options(kind: DeviceKind) -> DeviceOptions {
    DeviceOptions { validation: kind == DeviceKind::VULKAN, ..DeviceOptions::default() }
}

fn worst(a: &Image, b: &Image) -> u8 {
    a.rgba.iter().zip(b.rgba.iter()).map(|(x, y)| x.abs_diff(*y)).max().unwrap_or(0)
}

#[test]
fn the_textured_cube_renders_the_same_through_every_path() {
    let registry = registry();
    let images: Vec<(RenderPath, Image)> =
        PATHS.iter().map(|p| (*p, render(&registry, *p, &options(p.kind)).expect(p.name))).collect();
    let (_, first) = &images[0];
    for (path, image) in &images {
        assert_eq!((image.width, image.height), (SIZE, SIZE));
        // Same rasteriser (llvmpipe, lavapipe), same texels (nearest
        // sampling of what the compute pass wrote); the lighting is
        // computed by two compilers (GL's own, glslang's SPIR-V), which
        // may round one step apart.
        assert!(worst(first, image) <= 1, "{}: differs from gl-glsl by {}", path.name, worst(first, image));
        let background = image.pixel(1, 1).unwrap();
        let centre = image.pixel(SIZE / 2, SIZE / 2).unwrap();
        assert_ne!(centre, background, "{}: the cube is not drawn", path.name);
        // The texture the compute pass painted: both palette colours show,
        // each with its hue (orange: red over blue; blue: blue over red).
        let (mut orange, mut blue) = (0, 0);
        for y in 0..SIZE {
            for x in 0..SIZE {
                let [r, _, b, _] = image.pixel(x, y).unwrap();
                if r > b + 40 {
                    orange += 1;
                } else if b > r + 40 {
                    blue += 1;
                }
            }
        }
        assert!(orange > 1500 && blue > 1500, "{}: {orange} orange and {blue} blue pixels", path.name);
        assert!(PALETTE[0][0] > PALETTE[0][2] && PALETTE[1][2] > PALETTE[1][0]);
    }
}

#[test]
fn without_the_depth_test_the_far_faces_cover_the_near_ones() {
    let registry = registry();
    for path in PATHS {
        let tested = render_scene(&registry, path, &options(path.kind), true).expect(path.name);
        let untested = render_scene(&registry, path, &options(path.kind), false).expect(path.name);
        let differing = tested.rgba.chunks(4).zip(untested.rgba.chunks(4)).filter(|(a, b)| a != b).count();
        assert!(differing > 500, "{}: the depth test changed only {differing} pixels", path.name);
    }
}

/// A device of `path` with its build system attached: the build system drops first.
struct Bench {
    compiler: AttachedBuildSystemBox,
    device: DeviceBox,
}

impl Bench {
    fn open(registry: &Registry, path: RenderPath) -> Self {
        let device = registry.open_device(path.kind, &options(path.kind)).expect("a device");
        let capabilities = device.capabilities().into_result().unwrap();
        let handles = device.native_handles().into_result().unwrap();
        let compiler = registry.build_system_named(path.build_system).unwrap().attach(&handles, &capabilities);
        Self { compiler: compiler.into_result().expect("attaches"), device }
    }

    fn build(&mut self, name: &str, stages: &[(ShaderStage, &str)]) -> Result<BuiltProgram, String> {
        let desc = ProgramDesc::new(
            name,
            stages
                .iter()
                .map(|(stage, source)| SourceDesc::new("glsl", *stage, format!("{name}.{}", stage.name()), *source)),
        );
        self.compiler.build_program(&desc, &BuildOptions::default()).into_result().map_err(|e| e.to_string())
    }

    /// Builds `QUAD_VERT` and the GLSL fragment stage `fragment` as program `name`.
    fn build_on_quad(&mut self, name: &str, fragment: &str) -> Result<BuiltProgram, String> {
        self.build(name, &[(ShaderStage::Vertex, QUAD_VERT), (ShaderStage::Fragment, fragment)])
    }
}

const QUAD_VERT: &str = "#version 450 core
layout(location = 0) in vec2 in_position;
layout(location = 0) out vec2 v_uv;
void main() { v_uv = in_position * 0.5 + 0.5; gl_Position = vec4(in_position, 0.0, 1.0); }
";

const SAMPLING_FRAG: &str = "#version 450 core
layout(binding = 0) uniform sampler2D albedo;
layout(location = 0) in vec2 v_uv;
layout(location = 0) out vec4 out_color;
#ifdef VULKAN
layout(push_constant) uniform Constants { vec4 u_tint; };
#else
uniform vec4 u_tint;
#endif
void main() { out_color = texture(albedo, v_uv) * u_tint; }
";

const COMPUTE: &str = "#version 450 core
layout(local_size_x = 4) in;
layout(std430, binding = 0) buffer Numbers { uint values[4]; uint total; };
layout(binding = 1, rgba8) uniform writeonly image2D marks;
void main() {
    uint i = gl_GlobalInvocationID.x;
    values[i] = values[i] * 10u + i;
    atomicAdd(total, values[i]);
    imageStore(marks, ivec2(i, 0), vec4(float(i) / 4.0, 1.0, 0.0, 1.0));
}
";

fn quad(device: &mut DeviceBox) -> xr_device::VertexBufferId {
    let quad = [-1.0f32, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0, -1.0, 1.0, 1.0, -1.0, 1.0];
    let layout =
        VertexLayout { stride: 2, attributes: vec![VertexAttribute { location: 0, components: 2, offset: 0 }].into() };
    device.create_vertex_buffer(quad.as_slice().into(), &layout).into_result().unwrap()
}

fn rgba8(width: u32, height: u32, texels: &[[u8; 4]]) -> (TextureDesc, Vec<u8>) {
    let desc = TextureDesc { width, height, format: TextureFormat::Rgba8, mip_levels: 1, storage: false };
    (desc, texels.iter().flatten().copied().collect())
}

/// A sampler reading the nearest texel of the nearest level, wrapping by `wrap`.
fn nearest_sampler(device: &mut DeviceBox, wrap: Wrap) -> xr_device::SamplerId {
    device
        .create_sampler(&SamplerDesc { filter: Filter::Nearest, mipmap: Filter::Nearest, wrap })
        .into_result()
        .unwrap()
}

/// Binds `texture`, read through `sampler`, to `program`'s texture `name`.
fn bind_texture(
    program: &mut BuiltProgram,
    name: &str,
    device: &DeviceBox,
    texture: xr_device::TextureId,
    sampler: xr_device::SamplerId,
) {
    let h = program.constants.handle(name).unwrap();
    program
        .constants
        .set_texture(h, &device.texture_binding(texture, Some(sampler).into()).into_result().unwrap())
        .unwrap();
}

/// Clears a `size` × `size` target, draws the full-target quad into it with
/// `program` and reads it back.
fn draw_quad(device: &mut DeviceBox, size: u32, program: &BuiltProgram) -> Image {
    let quad = quad(device);
    let target = device.create_render_target(size, size).into_result().unwrap();
    device.clear(target, &[0.0; 4]).into_result().unwrap();
    device.draw(&DrawCall::triangles(target, program.program, quad, 6)).into_result().unwrap();
    device.read_pixels(target).into_result().unwrap()
}

/// A program of the HLSL vertex stage `vs` and pixel stage `ps`, from the
/// files `{stem}.vs.hlsl` and `{stem}.ps.hlsl` with entry point `main`.
fn hlsl_program(name: &str, stem: &str, vs: &str, ps: &str) -> ProgramDesc {
    ProgramDesc::new(
        name,
        [
            xr_tests::hlsl(ShaderStage::Vertex, &format!("{stem}.vs.hlsl"), "main", vs),
            xr_tests::hlsl(ShaderStage::Fragment, &format!("{stem}.ps.hlsl"), "main", ps),
        ],
    )
}

/// Asserts that `error` is a clash at `binding` naming both stages and
/// both resources.
#[track_caller]
fn assert_names_binding_clash(error: &str, binding: &str, [vertex, fragment]: [&str; 2], [first, second]: [&str; 2]) {
    assert!(
        error.contains(binding)
            && error.contains(&format!("vertex stage {vertex}"))
            && error.contains(&format!("fragment stage {fragment}"))
            && error.contains(&format!("'{first}'"))
            && error.contains(&format!("'{second}'")),
        "{error}"
    );
}

#[test]
fn a_compute_program_writes_a_storage_buffer_and_an_image_read_back_on_every_path() {
    let registry = registry();
    for path in PATHS {
        let mut bench = Bench::open(&registry, path);
        let mut program = bench.build("count", &[(ShaderStage::Compute, COMPUTE)]).expect(path.name);
        let resources = program.constants.resources().into_result().unwrap();
        let names: Vec<&str> = resources.iter().map(|r| r.name.as_str()).collect();
        assert!(names.contains(&"Numbers") && names.contains(&"marks"), "{}: {names:?}", path.name);
        let device = &mut bench.device;
        // 20 bytes of std430 data; OpenGL (Mesa) sizes the block in 16-byte steps.
        let start: Vec<u8> = [1u32, 2, 3, 4, 0, 0, 0, 0].iter().flat_map(|v| v.to_le_bytes()).collect();
        let numbers = device.create_buffer(BufferUsage::STORAGE, start.as_slice().into()).into_result().unwrap();
        let desc = TextureDesc { width: 4, height: 1, format: TextureFormat::Rgba8, mip_levels: 1, storage: true };
        let marks = device.create_texture(&desc, vec![0u8; 16].as_slice().into(), 1).into_result().unwrap();

        // Nothing bound yet: refused before the driver sees it.
        let call = ComputeCall { program: program.program, groups: [1, 1, 1] };
        let error = device.dispatch(&call).into_result().expect_err("dispatched with nothing bound").to_string();
        assert!(error.contains("not bound"), "{}: {error}", path.name);

        let h = program.constants.handle("Numbers").unwrap();
        program.constants.set_buffer(h, &device.buffer_binding(numbers).into_result().unwrap()).unwrap();
        let h = program.constants.handle("marks").unwrap();
        program.constants.set_texture(h, &device.texture_binding(marks, None.into()).into_result().unwrap()).unwrap();
        device.dispatch(&call).into_result().expect(path.name);
        let words = xr_tests::u32_words(&device.read_buffer(numbers).into_result().unwrap());
        assert_eq!(words[..5], [10, 21, 32, 43, 106], "{}", path.name);
        let texels = device.read_texture(marks, 0).into_result().unwrap();
        assert_eq!(&texels[4..8], &[64, 255, 0, 255], "{}: texel 1", path.name);
        drop(program);
    }
}

#[test]
fn textures_upload_their_levels_or_have_them_generated_and_read_back() {
    let registry = registry();
    for kind in [DeviceKind::OPENGL, DeviceKind::VULKAN, materials::WGPU, materials::WGPU_GL] {
        let mut device = registry.open_device(kind, &options(kind)).unwrap();
        // A 2 × 2 of black and white: the generated 1 × 1 level is their mean.
        let (desc, level0) = rgba8(2, 2, &[[0, 0, 0, 255], [255, 255, 255, 255], [255, 255, 255, 255], [0, 0, 0, 255]]);
        let full = TextureDesc { mip_levels: 0, ..desc };
        let texture = device.create_texture(&full, level0.as_slice().into(), 1).into_result().unwrap();
        assert_eq!(device.read_texture(texture, 0).into_result().unwrap().as_slice(), level0.as_slice());
        let mean = device.read_texture(texture, 1).into_result().unwrap();
        assert!((120..=135).contains(&mean[0]) && mean[3] == 255, "{kind:?}: generated level {mean:?}");
        // Both levels given: kept as given.
        let mut both = level0.clone();
        both.extend_from_slice(&[10, 20, 30, 40]);
        let texture = device.create_texture(&full, both.as_slice().into(), 2).into_result().unwrap();
        assert_eq!(device.read_texture(texture, 1).into_result().unwrap().as_slice(), &[10, 20, 30, 40]);
        // A float texture keeps its floats.
        let float = TextureDesc { format: TextureFormat::Rgba32Float, mip_levels: 1, ..desc };
        let values: Vec<u8> = (0..16).flat_map(|i| (i as f32 * 0.25).to_le_bytes()).collect();
        let texture = device.create_texture(&float, values.as_slice().into(), 1).into_result().unwrap();
        assert_eq!(device.read_texture(texture, 0).into_result().unwrap().as_slice(), values.as_slice());

        // Wrong sizes, levels and ranges: one clear error each.
        let error = device.create_texture(&desc, vec![0u8; 15].as_slice().into(), 1).into_result().unwrap_err();
        assert!(error.to_string().contains("15 bytes given") && error.to_string().contains("which take 16"), "{error}");
        let error = device.create_texture(&desc, level0.as_slice().into(), 2).into_result().unwrap_err();
        assert!(error.to_string().contains("2 level(s) given for a texture of 1"), "{error}");
        let error = device.read_texture(texture, 3).into_result().unwrap_err();
        assert!(error.to_string().contains("has 1 level(s)"), "{error}");
        let buffer = device.create_buffer(BufferUsage::UNIFORM, [0u8; 8].as_slice().into()).into_result().unwrap();
        device.write_buffer(buffer, 4, [1u8, 2, 3, 4].as_slice().into()).into_result().unwrap();
        assert_eq!(device.read_buffer(buffer).into_result().unwrap().as_slice(), &[0, 0, 0, 0, 1, 2, 3, 4]);
        // Bytes that are not whole words leave their neighbours as they were.
        device.write_buffer(buffer, 1, [9u8, 8].as_slice().into()).into_result().unwrap();
        assert_eq!(device.read_buffer(buffer).into_result().unwrap().as_slice(), &[0, 9, 8, 0, 1, 2, 3, 4]);
        let error = device.write_buffer(buffer, 6, [0u8; 4].as_slice().into()).into_result().unwrap_err();
        assert!(error.to_string().contains("do not fit buffer"), "{error}");
        let binding = device.buffer_binding(buffer).into_result().unwrap();
        assert!(!binding.is_texture && binding.size == 8 && binding.handle != 0);
    }
}

/// Builds the sampling program on `path`'s device with a 2 × 2 texture bound and a quad.
struct Sampling {
    bench: Bench,
    program: BuiltProgram,
    texture: xr_device::TextureId,
    sampler: xr_device::SamplerId,
}

fn sampling(registry: &Registry, path: RenderPath) -> Sampling {
    let mut bench = Bench::open(registry, path);
    let program = bench.build_on_quad("sampling", SAMPLING_FRAG).expect(path.name);
    let (desc, texels) = rgba8(2, 2, &[[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255], [255, 255, 255, 255]]);
    let texture = bench.device.create_texture(&desc, texels.as_slice().into(), 1).into_result().unwrap();
    let sampler = nearest_sampler(&mut bench.device, Wrap::ClampToEdge);
    Sampling { bench, program, texture, sampler }
}

#[test]
fn a_sampled_texture_draws_its_texels_and_an_unbound_one_is_refused_before_the_draw() {
    let registry = registry();
    for path in PATHS {
        let Sampling { mut bench, mut program, texture, sampler } = sampling(&registry, path);
        let device = &mut bench.device;
        let quad = quad(device);
        let target = device.create_render_target(4, 4).into_result().unwrap();
        let tint = program.constants.handle("u_tint").unwrap();
        program.constants.set_vector(tint, &[1.0, 1.0, 1.0, 1.0]).unwrap();
        let draw = DrawCall::triangles(target, program.program, quad, 6);
        let error = device.draw(&draw).into_result().expect_err("drew with the texture unbound").to_string();
        assert!(error.contains("not bound yet") && error.contains("set_texture"), "{}: {error}", path.name);

        bind_texture(&mut program, "albedo", device, texture, sampler);
        device.clear(target, &[0.0; 4]).into_result().unwrap();
        device.draw(&draw).into_result().expect(path.name);
        let image = device.read_pixels(target).into_result().unwrap();
        // Texel (0, 0) is the first row in memory: the bottom of the quad (v = 0).
        assert_eq!(image.pixel(0, 3), Some([255, 0, 0, 255]), "{}", path.name);
        assert_eq!(image.pixel(3, 3), Some([0, 255, 0, 255]), "{}", path.name);
        assert_eq!(image.pixel(0, 0), Some([0, 0, 255, 255]), "{}", path.name);
        assert_eq!(image.pixel(3, 0), Some([255, 255, 255, 255]), "{}", path.name);
        drop(program);
    }
}

#[test]
fn binding_the_wrong_thing_is_an_error_naming_the_resource() {
    let registry = registry();
    for path in PATHS {
        let Sampling { mut bench, mut program, texture, sampler } = sampling(&registry, path);
        let device = &mut bench.device;
        let albedo = program.constants.handle("albedo").unwrap();
        let tint = program.constants.handle("u_tint").unwrap();
        let texture_binding = device.texture_binding(texture, Some(sampler).into()).into_result().unwrap();
        let name = path.name;

        // A value on a texture, a texture on a value.
        let error = program.constants.set_vector(albedo, &[1.0; 4]).unwrap_err().to_string();
        assert!(error.contains("'albedo'") && error.contains("set_texture"), "{name}: {error}");
        let error = program.constants.set_texture(tint, &texture_binding).unwrap_err().to_string();
        assert!(error.contains("'u_tint'") && error.contains("takes a value"), "{name}: {error}");
        // A buffer on a texture; a texture with no sampler where one is read through it.
        let buffer = device.create_buffer(BufferUsage::STORAGE, [0u8; 16].as_slice().into()).into_result().unwrap();
        let buffer_binding = device.buffer_binding(buffer).into_result().unwrap();
        let error = program.constants.set_binding(albedo, &buffer_binding).unwrap_err().to_string();
        assert!(error.contains("'albedo'") && error.contains("not a buffer"), "{name}: {error}");
        let bare = device.texture_binding(texture, None.into()).into_result().unwrap();
        let error = program.constants.set_texture(albedo, &bare).unwrap_err().to_string();
        assert!(error.contains("'albedo'") && error.contains("sampler"), "{name}: {error}");

        // Another device's texture: an error, never a crash.
        let mut other = registry.open_device(path.kind, &options(path.kind)).unwrap();
        let (desc, texels) = rgba8(1, 1, &[[1, 2, 3, 4]]);
        let foreign = other.create_texture(&desc, texels.as_slice().into(), 1).into_result().unwrap();
        let foreign_sampler = other
            .create_sampler(&SamplerDesc { filter: Filter::Linear, mipmap: Filter::Linear, wrap: Wrap::Repeat })
            .into_result()
            .unwrap();
        let foreign = other.texture_binding(foreign, Some(foreign_sampler).into()).into_result().unwrap();
        let error = program.constants.set_texture(albedo, &foreign).unwrap_err().to_string();
        assert!(error.contains("'albedo'") && error.contains("another device"), "{name}: {error}");
        drop(program);
    }
}

#[test]
fn a_storage_buffer_smaller_than_its_block_and_a_texture_not_made_for_storage_are_refused() {
    let registry = registry();
    const FIXED: &str = "#version 450 core
layout(local_size_x = 1) in;
layout(binding = 0) buffer Params { vec4 a; vec4 b; };
layout(binding = 1, rgba8) uniform writeonly image2D written;
void main() { a = b; imageStore(written, ivec2(0), b); }
";
    for path in PATHS {
        let mut bench = Bench::open(&registry, path);
        let mut program = bench.build("fixed", &[(ShaderStage::Compute, FIXED)]).expect(path.name);
        let device = &mut bench.device;
        let small = device.create_buffer(BufferUsage::STORAGE, [0u8; 16].as_slice().into()).into_result().unwrap();
        let params = program.constants.handle("Params").unwrap();
        let error = program
            .constants
            .set_buffer(params, &device.buffer_binding(small).into_result().unwrap())
            .unwrap_err()
            .to_string();
        assert!(error.contains("'Params'") && error.contains("at least 32 bytes"), "{}: {error}", path.name);
        let (desc, texels) = rgba8(1, 1, &[[0, 0, 0, 0]]);
        let plain = device.create_texture(&desc, texels.as_slice().into(), 1).into_result().unwrap();
        let written = program.constants.handle("written").unwrap();
        let error = program
            .constants
            .set_texture(written, &device.texture_binding(plain, None.into()).into_result().unwrap())
            .unwrap_err()
            .to_string();
        assert!(error.contains("'written'") && error.contains("TextureDesc::storage"), "{}: {error}", path.name);
        drop(program);
    }
}

#[test]
fn two_stages_that_declare_one_binding_differently_are_an_error_naming_both() {
    let registry = registry();
    let vertex = "#version 450 core
layout(location = 0) in vec2 in_position;
layout(binding = 3) uniform sampler2D heights;
void main() { gl_Position = vec4(in_position, texture(heights, in_position).r, 1.0); }
";
    let fragment = "#version 450 core
layout(binding = 3) readonly buffer Colors { vec4 color; };
layout(location = 0) out vec4 out_color;
void main() { out_color = color; }
";
    let vk = PATHS.iter().find(|p| p.kind == DeviceKind::VULKAN).unwrap();
    let mut bench = Bench::open(&registry, *vk);
    let Err(error) = bench.build("clash", &[(ShaderStage::Vertex, vertex), (ShaderStage::Fragment, fragment)]) else {
        panic!("a clash built");
    };
    assert_names_binding_clash(&error, "set 0 binding 3", ["clash.vertex", "clash.fragment"], ["heights", "Colors"]);
}

#[test]
fn a_program_needing_more_texture_units_than_the_device_has_is_an_error_naming_it_and_the_limit() {
    let registry = registry();
    for path in PATHS.iter().filter(|p| p.kind == DeviceKind::OPENGL) {
        let mut bench = Bench::open(&registry, *path);
        // Programs keep their units while they live: take them all.
        let mut programs = Vec::new();
        let error = loop {
            match bench.build_on_quad(&format!("units{}", programs.len()), SAMPLING_FRAG) {
                Ok(program) => programs.push(program),
                Err(error) => break error,
            }
            assert!(programs.len() < 10_000, "{}: units never ran out", path.name);
        };
        assert!(programs.len() >= 16, "{}: only {} programs", path.name, programs.len());
        assert!(
            error.contains(&format!("program 'units{}'", programs.len()))
                && error.contains("texture units")
                && error.contains("for all programs"),
            "{}: {error}",
            path.name
        );
        // Dropping one gives its unit back.
        programs.pop();
        let again = bench.build_on_quad("again", SAMPLING_FRAG);
        assert!(again.is_ok(), "{}: a freed unit was not given out again", path.name);
    }
}

#[test]
fn drawing_with_depth_on_a_target_without_depth_and_an_index_past_the_buffer_are_refused() {
    let registry = registry();
    for path in PATHS {
        let Sampling { mut bench, mut program, texture, sampler } = sampling(&registry, path);
        let device = &mut bench.device;
        bind_texture(&mut program, "albedo", device, texture, sampler);
        let quad = quad(device);
        let target = device.create_render_target(4, 4).into_result().unwrap();
        let error = device
            .draw(&DrawCall::triangles(target, program.program, quad, 6).with_depth_test())
            .into_result()
            .unwrap_err()
            .to_string();
        assert!(error.contains("no depth attachment"), "{}: {error}", path.name);
        let indices: Vec<u8> = [0u32, 1, 2].iter().flat_map(|i| i.to_le_bytes()).collect();
        let indices = device.create_buffer(BufferUsage::INDEX, indices.as_slice().into()).into_result().unwrap();
        let error = device
            .draw(&DrawCall::triangles(target, program.program, quad, 0).indexed(indices, 6))
            .into_result()
            .unwrap_err()
            .to_string();
        assert!(error.contains("past the end of buffer"), "{}: {error}", path.name);
        drop(program);
    }
}

/// OpenGL's units are global: each program holds its own, so a texture
/// bound to one program stays what it draws after another program binds
/// a texture of its own.
#[test]
fn two_programs_keep_their_own_textures_bound() {
    let registry = registry();
    for path in PATHS {
        let mut bench = Bench::open(&registry, path);
        let mut first = bench.build_on_quad("first", SAMPLING_FRAG).expect(path.name);
        let mut second = bench.build_on_quad("second", SAMPLING_FRAG).expect(path.name);
        let device = &mut bench.device;
        let sampler = nearest_sampler(device, Wrap::Repeat);
        let quad = quad(device);
        let target = device.create_render_target(2, 2).into_result().unwrap();
        let mut colours = Vec::new();
        for (program, colour) in [(&mut first, [200u8, 10, 10, 255]), (&mut second, [10, 10, 200, 255])] {
            let (desc, texels) = rgba8(1, 1, &[colour]);
            let texture = device.create_texture(&desc, texels.as_slice().into(), 1).into_result().unwrap();
            bind_texture(program, "albedo", device, texture, sampler);
            let h = program.constants.handle("u_tint").unwrap();
            program.constants.set_vector(h, &[1.0; 4]).unwrap();
            colours.push(colour);
        }
        for (program, colour) in [(&first, colours[0]), (&second, colours[1]), (&first, colours[0])] {
            device.draw(&DrawCall::triangles(target, program.program, quad, 6)).into_result().unwrap();
            let image = device.read_pixels(target).into_result().unwrap();
            assert_eq!(image.pixel(1, 1), Some(colour), "{}: a program drew another's texture", path.name);
        }
        drop((first, second));
    }
}

/// HLSL globals outside any `cbuffer` are one `$Global` block per stage,
/// which glslang puts at binding 0: where the other stage's block, and
/// here a `register(t0)` texture, also are. Vulkan programs move each
/// stage's globals to a binding of its own, and every value still lands.
#[test]
fn hlsl_globals_in_two_stages_and_a_texture_at_t0_each_get_their_binding() {
    let registry = registry();
    let vk = *PATHS.iter().find(|p| p.kind == DeviceKind::VULKAN).unwrap();
    let mut bench = Bench::open(&registry, vk);
    let vs = "float2 Offset;
float4 main(float2 position : POSITION, out float2 uv : TEXCOORD0) : SV_Position {
    uv = position * 0.5 + 0.5;
    return float4(position + Offset, 0.0, 1.0);
}";
    let ps = "float4 Tint;
Texture2D Albedo : register(t0);
SamplerState Nearest : register(s0);
float4 main(float2 uv : TEXCOORD0) : SV_Target { return Albedo.Sample(Nearest, uv) * Tint; }";
    let desc = hlsl_program("globals", "globals", vs, ps);
    let mut program = bench.compiler.build_program(&desc, &BuildOptions::default()).into_result().expect("builds");
    let resources = program.constants.resources().into_result().unwrap();
    assert_eq!(resources.len(), 1, "{resources:?}");
    assert_eq!((resources[0].name.as_str(), resources[0].binding), ("Albedo", 0));
    let device = &mut bench.device;
    let (tex_desc, texels) = rgba8(1, 1, &[[200, 100, 50, 255]]);
    let texture = device.create_texture(&tex_desc, texels.as_slice().into(), 1).into_result().unwrap();
    let sampler = nearest_sampler(device, Wrap::Repeat);
    bind_texture(&mut program, "Albedo", device, texture, sampler);
    let h = program.constants.handle("Nearest").unwrap();
    assert_eq!(
        h.index,
        program.constants.handle("Albedo").unwrap().index,
        "the sampler's name finds the same descriptor"
    );
    let h = program.constants.handle("Tint").unwrap();
    program.constants.set_vector(h, &[1.0, 0.5, 1.0, 1.0]).unwrap();
    let h = program.constants.handle("Offset").unwrap();
    program.constants.set_vector(h, &[1.0, 0.0]).unwrap();
    let image = draw_quad(device, 4, &program);
    // Moved right by half the target: the left half stays clear.
    assert_eq!(image.pixel(0, 2), Some([0, 0, 0, 0]));
    assert_eq!(image.pixel(3, 2), Some([200, 50, 50, 255]));
    drop(program);
}

/// A global both stages declare (a shared header) is one constant: set
/// once, it reaches both stages. Two different `cbuffer`s at one register
/// in two stages are not one block: an error naming both stages.
#[test]
fn hlsl_globals_shared_by_two_stages_are_one_constant_and_two_blocks_at_one_register_clash() {
    let registry = registry();
    let vk = *PATHS.iter().find(|p| p.kind == DeviceKind::VULKAN).unwrap();
    let mut bench = Bench::open(&registry, vk);
    let shared = "float4 Tint;\n";
    let vs = format!(
        "{shared}float4 main(float2 position : POSITION) : SV_Position {{ return float4(position * Tint.w, 0.0, 1.0); }}"
    );
    let ps = format!("{shared}float4 main() : SV_Target {{ return float4(Tint.rgb, 1.0); }}");
    let desc = hlsl_program("shared", "shared", &vs, &ps);
    let mut program = bench.compiler.build_program(&desc, &BuildOptions::default()).into_result().expect("builds");
    let h = program.constants.handle("Tint").unwrap();
    // w scales the quad to half its size; rgb is the colour.
    program.constants.set_vector(h, &[0.0, 1.0, 0.0, 0.5]).unwrap();
    let device = &mut bench.device;
    let image = draw_quad(device, 8, &program);
    assert_eq!(image.pixel(4, 4), Some([0, 255, 0, 255]), "the fragment stage saw the value");
    assert_eq!(image.pixel(0, 0), Some([0, 0, 0, 0]), "the vertex stage saw the value (half size)");
    drop(program);

    let vs = "cbuffer Transform : register(b0) { float2 Offset; };
float4 main(float2 position : POSITION) : SV_Position { return float4(position + Offset, 0.0, 1.0); }";
    let ps = "cbuffer Material : register(b0) { float4 Colour; float Gloss; };
float4 main() : SV_Target { return Colour * Gloss; }";
    let desc = hlsl_program("two-blocks", "blocks", vs, ps);
    let Err(error) = bench.compiler.build_program(&desc, &BuildOptions::default()).into_result() else {
        panic!("two blocks at one binding built");
    };
    let error = error.to_string();
    assert_names_binding_clash(
        &error,
        "set 0 binding 0",
        ["blocks.vs.hlsl", "blocks.ps.hlsl"],
        ["Transform", "Material"],
    );
}

#[test]
fn a_cube_map_sampler_refuses_a_2d_texture_by_name_on_opengl() {
    let registry = registry();
    let gl = *PATHS.iter().find(|p| p.build_system == "xr-compiler-glsl").unwrap();
    let mut bench = Bench::open(&registry, gl);
    let frag = "#version 450 core
uniform samplerCube environment;
layout(location = 0) in vec2 v_uv;
layout(location = 0) out vec4 out_color;
void main() { out_color = texture(environment, vec3(v_uv, 1.0)); }
";
    let mut program = bench.build_on_quad("cube", frag).unwrap();
    let device = &mut bench.device;
    let (desc, texels) = rgba8(1, 1, &[[1, 2, 3, 4]]);
    let texture = device.create_texture(&desc, texels.as_slice().into(), 1).into_result().unwrap();
    let sampler = nearest_sampler(device, Wrap::Repeat);
    let h = program.constants.handle("environment").unwrap();
    let error = program
        .constants
        .set_texture(h, &device.texture_binding(texture, Some(sampler).into()).into_result().unwrap())
        .unwrap_err()
        .to_string();
    assert!(error.contains("'environment'") && error.contains("cube map"), "{error}");
    drop(program);
}

const BINDLESS_FRAG: &str = "#version 450 core
#extension GL_EXT_nonuniform_qualifier : require
layout(set = 0, binding = 0) uniform sampler2D textures[];
layout(push_constant) uniform Choice { int u_index; };
layout(location = 0) in vec2 v_uv;
layout(location = 0) out vec4 out_color;
void main() { out_color = texture(textures[nonuniformEXT(u_index)], v_uv); }
";

/// Bindless on Vulkan: `sampler2D textures[]` (descriptor indexing) is laid
/// out partially bound with 1024 elements; textures go into elements by
/// name and index, the draw reads the one a push constant picks while the
/// others stay unbound, all under the validation layers; an element past
/// the array is refused by name. A device without descriptor indexing
/// (Debian 12's own lavapipe) refuses the program naming the feature.
#[test]
fn a_bindless_texture_array_draws_the_texture_its_index_picks_and_an_element_past_it_is_refused() {
    let registry = registry();
    let path = *PATHS.iter().find(|p| p.kind == DeviceKind::VULKAN).expect("a Vulkan path");
    let mut bench = Bench::open(&registry, path);
    let built = bench.build_on_quad("bindless", BINDLESS_FRAG);
    let mut program = match built {
        Ok(program) => program,
        Err(error) => {
            assert!(error.contains("runtimeDescriptorArray") && error.contains("does not have it"), "{error}");
            // Only where no newer driver was offered (the test command offers the setup's lavapipe).
            assert!(std::env::var_os("VK_ADD_DRIVER_FILES").is_none_or(|v| v.is_empty()), "{error}");
            return;
        }
    };
    let resources = program.constants.resources().into_result().unwrap();
    let textures = resources.iter().find(|r| r.name.as_str() == "textures").expect("the array");
    assert_eq!(textures.array_size, 1024);

    let device = &mut bench.device;
    let quad = quad(device);
    let target = device.create_render_target(4, 4).into_result().unwrap();
    let sampler = nearest_sampler(device, Wrap::ClampToEdge);
    let colours = [(0, [255, 0, 0, 255]), (5, [0, 255, 0, 255]), (1023, [0, 0, 255, 255])];
    for (element, colour) in colours {
        let (desc, texel) = rgba8(1, 1, &[colour]);
        let texture = device.create_texture(&desc, texel.as_slice().into(), 1).into_result().unwrap();
        bind_texture(&mut program, &format!("textures[{element}]"), device, texture, sampler);
    }
    let index = program.constants.handle("u_index").unwrap();
    let draw = DrawCall::triangles(target, program.program, quad, 6);
    for (element, colour) in colours {
        program.constants.set_int(index, element).unwrap();
        device.clear(target, &[0.0; 4]).into_result().unwrap();
        device.draw(&draw).into_result().unwrap_or_else(|e| panic!("element {element}: {e}"));
        let image = device.read_pixels(target).into_result().unwrap();
        assert_eq!(image.pixel(1, 1), Some(colour), "element {element}");
    }
    let error = program.constants.handle("textures[1024]").unwrap_err().to_string();
    assert!(error.contains("index 1024 is out of range, 'textures' has 1024 element(s)"), "{error}");
    drop(program);
}

/// A G-buffer pass: writes attachments 1 and 2 and has no output for 0.
const GBUFFER_FRAG: &str = "#version 450 core
layout(location = 0) in vec2 v_uv;
layout(location = 1) out vec4 albedo;
layout(location = 2) out vec4 normal;
void main() { albedo = vec4(0.8, 0.4, 0.2, 1.0); normal = vec4(0.25, 0.5, 1.0, 1.0); }
";

/// A lighting pass: reads attachments 1 and 2 (input attachments on
/// Vulkan, textures on OpenGL, whose GLSL has no `subpassInput`) and writes
/// attachment 0.
const LIGHTING_FRAG: &str = "#version 450 core
#ifdef VULKAN
layout(input_attachment_index = 1, set = 0, binding = 0) uniform subpassInput g_albedo;
layout(input_attachment_index = 2, set = 0, binding = 1) uniform subpassInput g_normal;
vec4 albedo() { return subpassLoad(g_albedo); }
vec4 normal() { return subpassLoad(g_normal); }
#else
layout(binding = 0) uniform sampler2D g_albedo;
layout(binding = 1) uniform sampler2D g_normal;
vec4 albedo() { return texelFetch(g_albedo, ivec2(gl_FragCoord.xy), 0); }
vec4 normal() { return texelFetch(g_normal, ivec2(gl_FragCoord.xy), 0); }
#endif
layout(location = 0) out vec4 color;
void main() { color = vec4(albedo().rgb * normal().z * 0.5 + normal().x, 1.0); }
";

/// Set for the lighting test when it runs on a Vulkan driver without
/// dynamic rendering local read.
const IN_A_RENDER_PASS: &str = "XR_TEST_INPUT_ATTACHMENTS_IN_A_RENDER_PASS";

/// The lighting test again, in a process of its own offered only Debian
/// 12's lavapipe (Mesa 22.3: no dynamic rendering local read), where the
/// device draws the lighting pass in a render pass of its own, under the
/// validation layers: the same pixels.
#[test]
fn without_local_read_the_lighting_pass_draws_in_a_render_pass() {
    let system = xr_tests::SYSTEM_LAVAPIPE;
    assert!(std::path::Path::new(system).is_file(), "Debian's mesa-vulkan-drivers installs {system}");
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["resources::a_lighting_pass_reads_the_gbuffer_a_first_pass_wrote_on_every_path", "--exact"])
        .env("VK_DRIVER_FILES", system)
        .env("VK_ADD_DRIVER_FILES", "")
        .env(IN_A_RENDER_PASS, "1")
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success() && said.contains("1 passed"), "{said}");
}

/// The four 16-bit floats of an RGBA16F texel, as IEEE half bits.
fn half_texel(bytes: &[u8]) -> [u16; 4] {
    std::array::from_fn(|i| u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]))
}

/// One draw fills two attachments of a G-buffer of two formats and leaves
/// the one its fragment stage has no output for; a second draw reads them
/// (input attachments on Vulkan, under the validation layers; the
/// attachments as textures on OpenGL) into attachment 0, leaving the
/// G-buffer as it was. Same pixels on every path.
#[test]
fn a_lighting_pass_reads_the_gbuffer_a_first_pass_wrote_on_every_path() {
    let registry = registry();
    for path in PATHS {
        let mut bench = Bench::open(&registry, path);
        let gbuffer = bench.build_on_quad("gbuffer", GBUFFER_FRAG);
        let gbuffer = gbuffer.unwrap_or_else(|e| panic!("{}: {e}", path.name));
        let lighting = bench.build_on_quad("lighting", LIGHTING_FRAG);
        let mut lighting = lighting.unwrap_or_else(|e| panic!("{}: {e}", path.name));
        let device = &mut bench.device;
        if path.kind == DeviceKind::VULKAN && std::env::var_os(IN_A_RENDER_PASS).is_some() {
            // Run by the test below on a driver without local read.
            let capabilities = device.capabilities().into_result().unwrap();
            assert!(!capabilities.has_extension("VK_KHR_dynamic_rendering_local_read"), "{capabilities:?}");
        }
        let quad = quad(device);
        let desc = xr_device::RenderTargetDesc {
            width: 4,
            height: 4,
            colors: vec![TextureFormat::Rgba8, TextureFormat::Rgba8, TextureFormat::Rgba16Float].into(),
            depth: true,
        };
        let target = device.create_render_target_with(&desc).into_result().unwrap();
        let attachment =
            |device: &mut DeviceBox, index| device.render_target_texture(target, index).into_result().unwrap();
        let (albedo, normal) = (attachment(device, 1), attachment(device, 2));
        assert_eq!(attachment(device, 1), albedo, "{}: one texture per attachment", path.name);
        let resources = lighting.constants.resources().into_result().unwrap();
        if path.kind == DeviceKind::OPENGL {
            let sampler = nearest_sampler(device, Wrap::ClampToEdge);
            for (name, texture) in [("g_albedo", albedo), ("g_normal", normal)] {
                bind_texture(&mut lighting, name, device, texture, sampler);
            }
        } else {
            // The device binds input attachments: nothing for the engine to set.
            assert!(resources.is_empty(), "{}: {:?}", path.name, resources);
        }
        device.clear(target, &[0.0, 0.0, 1.0, 1.0]).into_result().unwrap();
        let image = device.read_pixels(target).into_result().unwrap();
        assert_eq!(image.pixel(2, 2), Some([0, 0, 255, 255]), "{}: cleared", path.name);
        device.draw(&DrawCall::triangles(target, gbuffer.program, quad, 6)).into_result().unwrap();
        let image = device.read_pixels(target).into_result().unwrap();
        assert_eq!(
            image.pixel(2, 2),
            Some([0, 0, 255, 255]),
            "{}: attachment 0 has no output in the G-buffer pass",
            path.name
        );
        device
            .draw(&DrawCall::triangles(target, lighting.program, quad, 6))
            .into_result()
            .unwrap_or_else(|e| panic!("{}: {e}", path.name));
        let image = device.read_pixels(target).into_result().unwrap();
        let lit = image.pixel(2, 2).unwrap();
        for (got, want) in lit.iter().zip([166u8, 115, 89, 255]) {
            assert!(got.abs_diff(want) <= 1, "{}: lit {lit:?}", path.name);
        }
        let albedo_texels = device.read_texture(albedo, 0).into_result().unwrap();
        assert_eq!(&albedo_texels[..4], &[204, 102, 51, 255], "{}: albedo kept", path.name);
        let normal_texels = device.read_texture(normal, 0).into_result().unwrap();
        // 0.25, 0.5, 1.0, 1.0 as half floats.
        assert_eq!(half_texel(&normal_texels[..8]), [0x3400, 0x3800, 0x3c00, 0x3c00], "{}: normal kept", path.name);
        drop(lighting);
        drop(gbuffer);
    }
}

/// What a render target of several attachments refuses, on every path: more
/// attachments than the contract allows, `read_pixels` of a float
/// attachment 0, an attachment past the last as a texture, the attachment
/// of a plain target as a texture; and on Vulkan a program that reads an
/// input attachment the target does not have, or reads input attachments
/// while drawing into a plain target. The device is usable after each.
#[test]
fn attachments_a_target_does_not_have_are_refused_by_number() {
    let registry = registry();
    for path in PATHS {
        let mut bench = Bench::open(&registry, path);
        let lighting = bench.build_on_quad("lighting", LIGHTING_FRAG);
        let device = &mut bench.device;
        let desc = |colors: Vec<TextureFormat>| xr_device::RenderTargetDesc {
            width: 4,
            height: 4,
            colors: colors.into(),
            depth: false,
        };
        let error = device.create_render_target_with(&desc(vec![TextureFormat::Rgba8; 9])).into_result().unwrap_err();
        assert!(error.to_string().contains("1 to 8 colour attachments, not 9"), "{}: {error}", path.name);
        let error = device.create_render_target_with(&desc(vec![])).into_result().unwrap_err();
        assert!(error.to_string().contains("not 0"), "{}: {error}", path.name);
        let float = device.create_render_target_with(&desc(vec![TextureFormat::Rgba16Float])).into_result().unwrap();
        let error = device.read_pixels(float).into_result().unwrap_err();
        assert!(error.to_string().contains("read_pixels reads an RGBA8 colour attachment 0"), "{}: {error}", path.name);
        let error = device.render_target_texture(float, 1).into_result().unwrap_err();
        assert!(error.to_string().contains("has 1 colour attachment(s), no attachment 1"), "{}: {error}", path.name);
        let plain = device.create_render_target(4, 4).into_result().unwrap();
        let error = device.render_target_texture(plain, 0).into_result().unwrap_err();
        assert!(error.to_string().contains("was not made with create_render_target_with"), "{}: {error}", path.name);
        if path.kind == DeviceKind::VULKAN {
            let lighting = lighting.expect("builds");
            let quad = quad(device);
            let two = device
                .create_render_target_with(&desc(vec![TextureFormat::Rgba8, TextureFormat::Rgba8]))
                .into_result()
                .unwrap();
            let error = device.draw(&DrawCall::triangles(two, lighting.program, quad, 6)).into_result().unwrap_err();
            assert!(
                error.to_string().contains("reads input attachment 2, but render target")
                    && error.to_string().contains("has 2 colour attachment(s)"),
                "{error}"
            );
            let error = device.draw(&DrawCall::triangles(plain, lighting.program, quad, 6)).into_result().unwrap_err();
            assert!(
                error.to_string().contains(
                    "reads input attachments: draw it into a render target made with create_render_target_with"
                ),
                "{error}"
            );
            let three = device.create_render_target_with(&desc(vec![TextureFormat::Rgba8; 3])).into_result().unwrap();
            device
                .draw(&DrawCall::triangles(three, lighting.program, quad, 6))
                .into_result()
                .expect("usable after the refusals");
        }
    }
}
