//! The GL SPIR-V build system: SPIR-V from GLSL and HLSL loaded with
//! ARB_gl_spirv, specialization constants, the constant table by location,
//! its compatible object, and the same pixels as the driver's own GLSL path.

use triangle::{TriangleParams, default_shader_dir, translation};
use xr_device::{DrawCall, Image, VertexAttribute, VertexLayout};
use xr_sourcebuild::{
    BuildOptions, BuiltProgram, ConstantTableExt, ProgramBinary, ProgramDesc, ShaderStage, SourceDesc,
};
use xr_tests::{GlBench, Xr, registry, rgba8};

const GL_SPIRV: &str = "xr-compiler-gl-spirv";

/// Renders the triangle sample's shaders with the named build system.
fn triangle_through(compiler: &str, params: &TriangleParams) -> Image {
    let registry = registry();
    let mut bench = GlBench::open(&registry, compiler);
    let dir = default_shader_dir();
    let desc = ProgramDesc::new(
        "triangle",
        [
            SourceDesc::read("glsl", ShaderStage::Vertex, &dir.join("triangle.vert")).unwrap(),
            SourceDesc::read("glsl", ShaderStage::Fragment, &dir.join("triangle.frag")).unwrap(),
        ],
    );
    let mut built = bench.compiler.build_program(&desc, &BuildOptions::default()).into_result().expect("builds");
    let color = built.constants.handle("u_color").unwrap();
    built.constants.set_vector(color, &params.color).unwrap();
    let transform = built.constants.handle("u_transform").unwrap();
    built.constants.set_matrix4(transform, &params.transform).unwrap();
    draw_triangle(&mut bench, &built)
}

fn draw_triangle(bench: &mut GlBench, built: &BuiltProgram) -> Image {
    let device = &mut bench.device;
    let target = device.create_render_target(triangle::SIZE, triangle::SIZE).into_result().unwrap();
    let layout =
        VertexLayout { stride: 2, attributes: vec![VertexAttribute { location: 0, components: 2, offset: 0 }].into() };
    let vertices = device.create_vertex_buffer(triangle::VERTICES.as_slice().into(), &layout).into_result().unwrap();
    device.clear(target, &triangle::CLEAR).into_result().unwrap();
    let draw = DrawCall::triangles(target, built.program, vertices, 3);
    device.draw(&draw).into_result().unwrap();
    device.read_pixels(target).into_result().unwrap()
}

/// Same driver, same rasterizer: coverage must match exactly; colours may
/// differ by one step where the two compilers order float operations differently.
#[test]
fn one_scene_gives_the_same_pixels_through_gl_glsl_and_gl_spirv() {
    let params = TriangleParams { color: [0.3, 0.6, 0.9, 1.0], transform: translation(0.2, -0.1) };
    let glsl = triangle_through("xr-compiler-glsl", &params);
    let spirv = triangle_through(GL_SPIRV, &params);
    let covered = |image: &Image| image.rgba.chunks_exact(4).filter(|p| p[3] == 255 && p[..3] != [0, 0, 0]).count();
    assert!(covered(&glsl) > 1500, "the triangle is drawn");
    assert_eq!(covered(&glsl), covered(&spirv), "same coverage");
    let worst = glsl.rgba.iter().zip(spirv.rgba.iter()).map(|(a, b)| a.abs_diff(*b)).max().unwrap();
    assert!(worst <= 1, "largest channel difference {worst}");
    let centre = glsl.pixel(triangle::SIZE / 2 + 12, triangle::SIZE / 2 + 12).unwrap();
    xr_tests::assert_rgba_near(centre, rgba8(params.color), 1);
}

fn fullscreen_vertex() -> SourceDesc {
    SourceDesc::new(
        "glsl",
        ShaderStage::Vertex,
        "fullscreen.vert",
        xr_tests::FULLSCREEN_VERT
            .replace("#version 450 core", "#version 450")
            .replace("out vec2 v_uv;", "layout(location = 0) out vec2 v_uv;"),
    )
}

#[test]
fn specialization_constants_are_set_when_the_program_is_built() {
    let registry = registry();
    let mut bench = GlBench::open(&registry, GL_SPIRV);
    let fragment = "#version 450
layout(constant_id = 0) const float RED = 0.0;
layout(constant_id = 1) const bool BLUE = false;
layout(location = 0) out vec4 c;
void main() { c = vec4(RED, 0.0, BLUE ? 1.0 : 0.0, 1.0); }
";
    let build = |bench: &mut GlBench, frag: SourceDesc| {
        let desc = ProgramDesc::new("spec", [fullscreen_vertex(), frag]);
        bench.compiler.build_program(&desc, &BuildOptions::default()).into_result().expect("builds")
    };
    let defaults = build(&mut bench, SourceDesc::new("glsl", ShaderStage::Fragment, "spec.frag", fragment));
    assert_eq!(bench.centre_pixel(&defaults), [0, 0, 0, 255]);
    let special = build(
        &mut bench,
        SourceDesc::new("glsl", ShaderStage::Fragment, "spec.frag", fragment)
            .with_specialization(0, 1.0f32.to_bits())
            .with_specialization(1, 1),
    );
    assert_eq!(bench.centre_pixel(&special), [255, 0, 255, 255]);
}

#[test]
fn hlsl_renders_through_gl_spirv_with_its_semantics_and_entry_points() {
    let registry = registry();
    let mut bench = GlBench::open(&registry, GL_SPIRV);
    let hlsl = xr_tests::hlsl;
    let vs = hlsl(
        xr_spirv_stage("vs_5_0"),
        "pass.hlsl",
        "VertexMain",
        "struct VS_OUTPUT { float4 position : SV_Position; float4 diffuse : COLOR0; };
         VS_OUTPUT VertexMain(float2 position : POSITION) {
             VS_OUTPUT output;
             output.position = float4(position, 0.0, 1.0);
             output.diffuse = float4(0.0, 0.0, 1.0, 1.0);
             return output;
         }",
    );
    let ps = hlsl(
        xr_spirv_stage("ps_5_0"),
        "pass_ps.hlsl",
        "PixelMain",
        "[[vk::constant_id(0)]] const float Brightness = 1.0;
         float4 PixelMain(float4 diffuse : COLOR0) : SV_Target { return diffuse * Brightness; }",
    );
    let built = bench
        .compiler
        .build_program(&ProgramDesc::new("hlsl", [vs.clone(), ps.clone()]), &BuildOptions::default())
        .into_result()
        .expect("builds");
    assert_eq!(bench.centre_pixel(&built), [0, 0, 255, 255], "the blue diffuse colour");
    let dimmed = ps.with_specialization(0, 0.5f32.to_bits());
    let built = bench
        .compiler
        .build_program(&ProgramDesc::new("hlsl", [vs, dimmed]), &BuildOptions::default())
        .into_result()
        .expect("builds");
    let pixel = bench.centre_pixel(&built);
    assert!(pixel[2].abs_diff(128) <= 1 && pixel[..2] == [0, 0], "{pixel:?}");
}

fn xr_spirv_stage(profile: &str) -> ShaderStage {
    match profile {
        "vs_5_0" => ShaderStage::Vertex,
        _ => ShaderStage::Fragment,
    }
}

#[test]
fn the_compatible_object_reloads_and_invalid_spirv_is_refused_with_the_validators_message() {
    let registry = registry();
    let mut bench = GlBench::open(&registry, GL_SPIRV);
    let fragment =
        "#version 450\nuniform vec4 u_color;\nlayout(location = 0) out vec4 c;\nvoid main() { c = u_color; }\n";
    let desc = ProgramDesc::new(
        "object",
        [fullscreen_vertex(), SourceDesc::new("glsl", ShaderStage::Fragment, "object.frag", fragment)],
    );
    let built = bench.compiler.build_program(&desc, &BuildOptions::default()).into_result().unwrap();
    let object = bench.compiler.program_binary(built.program).into_result().unwrap();

    let mut reloaded =
        bench.compiler.load_program_binary(&desc, &BuildOptions::default(), &object).into_result().expect("reloads");
    let color = reloaded.constants.handle("u_color").unwrap();
    reloaded.constants.set_vector(color, &[0.0, 1.0, 0.0, 1.0]).unwrap();
    assert_eq!(bench.centre_pixel(&reloaded), [0, 255, 0, 255]);
    let error = reloaded.constants.set_float(color, 1.0).unwrap_err();
    assert!(error.message.contains("'u_color' is vec4"), "{error}");

    // Damage one instruction of the fragment module inside a well-formed object.
    let error = bench.load_damaged(&desc, &object);
    assert!(error.contains("invalid SPIR-V for opengl4.5"), "{error}");
    let error = bench
        .compiler
        .load_program_binary(
            &desc,
            &BuildOptions::default(),
            &ProgramBinary { format: 0x875f, bytes: object.bytes.clone() },
        )
        .into_result()
        .err()
        .expect("refused");
    assert!(error.to_string().contains("is not a SPIR-V object"), "{error}");
}

#[test]
fn a_device_without_arb_gl_spirv_makes_the_system_unavailable_and_glsl_still_works() {
    let output =
        Xr::new(["plugins", "--json"]).software_device().env("MESA_EXTENSION_OVERRIDE", "-GL_ARB_gl_spirv").ok();
    let report: serde_json::Value = serde_json::from_str(&output.stdout).unwrap();
    let plugins = report["plugins"].as_array().unwrap();
    let find = |name: &str| plugins.iter().find(|p| p["name"] == name).unwrap().clone();
    assert_eq!(find("xr-rhi-opengl")["device_systems"][0]["device"]["Ok"]["gl_spirv"], false);
    let spirv = find(GL_SPIRV)["build_systems"][0]["on_devices"][0]["availability"]["Err"].as_str().unwrap().to_owned();
    assert!(spirv.contains("needs GL_ARB_gl_spirv or OpenGL 4.6"), "{spirv}");
    let glsl = &find("xr-compiler-glsl")["build_systems"][0]["on_devices"][0]["availability"]["Ok"];
    assert_eq!(glsl[0], "RuntimeCompile");
}

/// A D3D9-style HLSL vertex shader, its globals a uniform block on OpenGL too:
/// set through the constant table, drawn through GL SPIR-V.
#[test]
fn d3d9_style_hlsl_with_its_globals_renders_through_gl_spirv() {
    let registry = registry();
    let mut bench = GlBench::open(&registry, GL_SPIRV);
    let desc = xr_tests::d3d9_style_program();
    let mut built = bench.compiler.build_program(&desc, &BuildOptions::default()).into_result().expect("builds");
    let identity = xr_tests::IDENTITY;
    let (matrix, blue) = (built.constants.handle("ViewProjMatrix").unwrap(), built.constants.handle("Blue").unwrap());
    built.constants.set_matrix4(matrix, &identity).unwrap();
    built.constants.set_vector(blue, &[0.0, 0.0, 1.0, 1.0]).unwrap();
    assert_eq!(bench.centre_pixel(&built), [0, 0, 255, 255]);

    // A second program with a block at the same SPIR-V binding keeps its own buffer.
    let mut other = bench.compiler.build_program(&desc, &BuildOptions::default()).into_result().expect("builds");
    let (other_matrix, other_blue) =
        (other.constants.handle("ViewProjMatrix").unwrap(), other.constants.handle("Blue").unwrap());
    other.constants.set_matrix4(other_matrix, &identity).unwrap();
    other.constants.set_vector(other_blue, &[1.0, 0.0, 0.0, 1.0]).unwrap();
    assert_eq!(bench.centre_pixel(&other), [255, 0, 0, 255]);
    assert_eq!(bench.centre_pixel(&built), [0, 0, 255, 255], "the first program's constants are untouched");

    let error = built.constants.set_float(blue, 1.0).unwrap_err();
    assert!(error.message.contains("'Blue' is vec4"), "{error}");
    built.constants.set_defaults().into_result().unwrap();
    assert_eq!(bench.centre_pixel(&built), [0, 0, 0, 0], "zeroed: the quad collapses");
}

/// Every program with uniform blocks holds binding points of the device
/// while it lives: when they run out, building another is a clear error,
/// and dropping a program gives its binding back.
#[test]
fn uniform_block_bindings_run_out_with_a_clear_error_and_come_back() {
    let registry = registry();
    let mut bench = GlBench::open(&registry, GL_SPIRV);
    let desc = xr_tests::d3d9_style_program();
    let mut alive = Vec::new();
    let error = loop {
        match bench.compiler.build_program(&desc, &BuildOptions::default()).into_result() {
            Ok(built) => alive.push(built),
            Err(error) => break error,
        }
        assert!(alive.len() < 10_000, "binding points never ran out");
    };
    assert!(alive.len() >= 36, "GL guarantees at least 36 binding points; got {}", alive.len());
    assert!(error.to_string().contains("every uniform buffer binding point of the device is taken"), "{error}");
    alive.pop();
    let again = bench.compiler.build_program(&desc, &BuildOptions::default()).into_result();
    assert!(again.is_ok(), "a dropped program's binding point is reused");
}

/// The constant table lists what the shader reads: a uniform it declares
/// and never reads is not there (as on the driver's own GLSL path, which
/// drops inactive uniforms), and the one it reads is set by name.
#[test]
fn a_uniform_the_shader_never_reads_is_not_in_the_constant_table() {
    let source = "#version 450
uniform vec4 u_color;
uniform float u_unused_gain;
layout(location = 0) out vec4 color;
void main() { color = u_color; }
";
    let registry = registry();
    for compiler in [GL_SPIRV, "xr-compiler-glsl"] {
        let mut bench = GlBench::open(&registry, compiler);
        let mut built =
            bench.build_fragment(SourceDesc::new("glsl", ShaderStage::Fragment, "unused.frag", source)).unwrap();
        assert!(built.constants.handle("u_unused_gain").is_err(), "{compiler}");
        let color = built.constants.handle("u_color").unwrap();
        built.constants.set_vector(color, &[0.0, 1.0, 0.0, 1.0]).unwrap();
        assert_eq!(bench.centre_pixel(&built), [0, 255, 0, 255], "{compiler}");
    }
}

/// Each GL call makes its device's context current only when it is not
/// already this thread's: two devices used in turn on one thread must
/// still each draw with their own context and program.
#[test]
fn two_opengl_devices_used_in_turn_on_one_thread_each_draw_their_own() {
    let source = "#version 450
uniform vec4 u_color;
layout(location = 0) out vec4 color;
void main() { color = u_color; }
";
    let registry = registry();
    let fragment = || SourceDesc::new("glsl", ShaderStage::Fragment, "turns.frag", source);
    let mut first = GlBench::open(&registry, GL_SPIRV);
    let mut a = first.build_fragment(fragment()).unwrap();
    // Opening a device makes its new context current: the first device's
    // next call must notice.
    let opened = registry.open_device(xr_device::DeviceKind::OPENGL, &Default::default()).unwrap();
    let handle = a.constants.handle("u_color").unwrap();
    a.constants.set_vector(handle, &[0.0, 1.0, 0.0, 1.0]).unwrap();
    assert_eq!(first.centre_pixel(&a), [0, 255, 0, 255], "the first device after another opened");
    drop(opened);
    let mut second = GlBench::open(&registry, "xr-compiler-glsl");
    let mut b = second.build_fragment(fragment()).unwrap();
    for round in 0..3u8 {
        let (red, blue) = ([1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0]);
        let handle = a.constants.handle("u_color").unwrap();
        a.constants.set_vector(handle, &red).unwrap();
        let handle = b.constants.handle("u_color").unwrap();
        b.constants.set_vector(handle, &blue).unwrap();
        assert_eq!(first.centre_pixel(&a), [255, 0, 0, 255], "round {round}: the first device");
        assert_eq!(second.centre_pixel(&b), [0, 0, 255, 255], "round {round}: the second device");
    }
}

/// An engine that makes its own context current on a thread the device
/// also uses (here: none, as `eglMakeCurrent(display, 0, 0, 0)` leaves it)
/// tells the device with the loader's `forget_current`, and the device's
/// next call makes its own context current again.
#[test]
fn after_an_engine_changes_the_current_context_forget_current_brings_the_device_back() {
    type GetCurrentDisplay = unsafe extern "C" fn() -> *mut std::ffi::c_void;
    type MakeCurrent = unsafe extern "C" fn(
        *mut std::ffi::c_void,
        *mut std::ffi::c_void,
        *mut std::ffi::c_void,
        *mut std::ffi::c_void,
    ) -> u32;
    let source = "#version 450
uniform vec4 u_color;
layout(location = 0) out vec4 color;
void main() { color = u_color; }
";
    let registry = registry();
    let mut bench = GlBench::open(&registry, GL_SPIRV);
    let mut built =
        bench.build_fragment(SourceDesc::new("glsl", ShaderStage::Fragment, "engine.frag", source)).unwrap();
    let handle = built.constants.handle("u_color").unwrap();
    built.constants.set_vector(handle, &[0.0, 1.0, 0.0, 1.0]).unwrap();
    assert_eq!(bench.centre_pixel(&built), [0, 255, 0, 255]);

    let loader = bench.device.native_handles().into_result().unwrap().gl.into_option().unwrap();
    // SAFETY: EGL entry points looked up by the device's own loader, called
    // with the display that is current on this thread.
    unsafe {
        let lookup = |name: &std::ffi::CStr| (loader.get_proc_address)(loader.context, name.as_ptr());
        let get_display: GetCurrentDisplay = std::mem::transmute(lookup(c"eglGetCurrentDisplay"));
        let make_current: MakeCurrent = std::mem::transmute(lookup(c"eglMakeCurrent"));
        let display = get_display();
        assert!(!display.is_null(), "the device's context is current");
        let null = std::ptr::null_mut();
        assert_eq!(make_current(display, null, null, null), 1, "the engine's eglMakeCurrent");
        (loader.forget_current)();
    }
    built.constants.set_vector(handle, &[1.0, 0.0, 1.0, 1.0]).unwrap();
    assert_eq!(bench.centre_pixel(&built), [255, 0, 255, 255], "the device made its context current again");
}
