//! The Vulkan device and the Vulkan SPIR-V build system, under the
//! validation layers: every validation error fails the call that caused it.

use xr_sourcebuild::{BuildOptions, ConstantTableExt, ProgramDesc, ShaderStage, SourceDesc};
use xr_store::Store;
use xr_tests::{FULLSCREEN_VERT, GlBench, Xr, assert_rgba_near, registry, temp_dir};

const VK_SPIRV: &str = "xr-compiler-vk-spirv";

fn vertex() -> SourceDesc {
    SourceDesc::new("glsl", ShaderStage::Vertex, "fullscreen.vert", FULLSCREEN_VERT)
}

fn program(fragment: &str) -> ProgramDesc {
    ProgramDesc::new("vk", [vertex(), SourceDesc::new("glsl", ShaderStage::Fragment, "vk.frag", fragment)])
}

const MATERIAL: &str = "#version 450
layout(constant_id = 0) const float GAIN = 1.0;
layout(std140, binding = 0) uniform Material { vec4 tint; float weights[3]; mat2 swizzle; };
layout(push_constant) uniform Push { vec4 offset; };
layout(location = 0) in vec2 v_uv;
layout(location = 0) out vec4 c;
void main() {
    vec2 s = swizzle * vec2(1.0, 0.0);
    c = vec4(tint.rgb * weights[2] * GAIN + offset.rgb + vec3(0.0, s), 1.0);
}
";

#[test]
fn uniform_buffers_push_constants_and_specialization_constants_set_the_pixels() {
    let registry = registry();
    let mut bench = GlBench::vulkan(&registry, VK_SPIRV);
    let mut built =
        bench.compiler.build_program(&program(MATERIAL), &BuildOptions::default()).into_result().expect("builds");
    let t = &mut built.constants;
    let (tint, weights, swizzle, offset) = (
        t.handle("tint").unwrap(),
        t.handle("weights").unwrap(),
        t.handle("swizzle").unwrap(),
        t.handle("offset").unwrap(),
    );
    t.set_vector(tint, &[1.0, 0.5, 0.0, 1.0]).unwrap();
    t.set_float_array(weights, &[0.0, 0.0, 0.5]).unwrap();
    // Column-major mat2: column 0 = (0, 0.25), so swizzle * (1, 0) = (0, 0.25).
    t.set_matrix(swizzle, 2, 2, &[0.0, 0.25, 0.0, 0.0], false).unwrap();
    t.set_vector(offset, &[0.25, 0.0, 0.0, 0.0]).unwrap();
    // r = 1*0.5 + 0.25, g = 0.5*0.5 + 0, b = 0 + 0.25
    assert_rgba_near(bench.centre_pixel(&built), [191, 64, 64, 255], 1);

    let third = built.constants.handle("weights[2]").unwrap();
    built.constants.set_float(third, 1.0).unwrap();
    assert_rgba_near(bench.centre_pixel(&built), [255, 128, 64, 255], 1);
    let error = built.constants.set_float(tint, 1.0).unwrap_err();
    assert!(error.message.contains("'tint' is vec4"), "{error}");
    let error = built.constants.handle("nothing").unwrap_err();
    assert!(error.message.contains("active: offset, swizzle, tint, weights"), "{error}");
    built.constants.set_defaults().into_result().unwrap();
    assert_eq!(bench.centre_pixel(&built), [0, 0, 0, 255], "defaults are zeros on Vulkan");

    let special = ProgramDesc::new(
        "vk",
        [
            vertex(),
            SourceDesc::new("glsl", ShaderStage::Fragment, "vk.frag", MATERIAL)
                .with_specialization(0, 0.5f32.to_bits()),
        ],
    );
    let mut built = bench.compiler.build_program(&special, &BuildOptions::default()).into_result().expect("builds");
    let (tint, weights) = (built.constants.handle("tint").unwrap(), built.constants.handle("weights").unwrap());
    built.constants.set_vector(tint, &[1.0, 1.0, 1.0, 1.0]).unwrap();
    built.constants.set_float_array(weights, &[0.0, 0.0, 1.0]).unwrap();
    assert_rgba_near(bench.centre_pixel(&built), [128, 128, 128, 255], 1);
}

/// A D3D9-style HLSL vertex shader: a row-major float4x4 set through the table, `mul`, a blue diffuse colour.
#[test]
fn d3d9_style_hlsl_renders_on_vulkan() {
    let registry = registry();
    let mut bench = GlBench::vulkan(&registry, VK_SPIRV);
    let mut built = bench
        .compiler
        .build_program(&xr_tests::d3d9_style_program(), &BuildOptions::default())
        .into_result()
        .expect("builds");
    let matrix = built.constants.handle("ViewProjMatrix").unwrap();
    built.constants.set_matrix4(matrix, &xr_tests::IDENTITY).unwrap();
    let blue = built.constants.handle("Blue").unwrap();
    built.constants.set_vector(blue, &[0.0, 0.0, 1.0, 1.0]).unwrap();
    assert_eq!(bench.centre_pixel(&built), [0, 0, 255, 255]);
    // Scale by zero: the quad collapses and nothing is drawn.
    built.constants.set_matrix4(matrix, &[0.0; 16]).unwrap();
    assert_eq!(bench.centre_pixel(&built), [0, 0, 0, 0]);
}

#[test]
fn a_missing_or_mistyped_stage_partner_is_an_error_naming_both_stages() {
    let registry = registry();
    let mut bench = GlBench::vulkan(&registry, VK_SPIRV);
    let mistyped = "#version 450\nlayout(location = 0) in vec4 v_uv;\nlayout(location = 0) out vec4 c;\nvoid main() { c = v_uv; }\n";
    let error = bench
        .compiler
        .build_program(&program(mistyped), &BuildOptions::default())
        .into_result()
        .err()
        .expect("refused");
    let message = error.to_string();
    assert!(message.contains("fragment stage vk.frag reads 'v_uv' (vec4<f32>, location 0)"), "{message}");
    assert!(message.contains("vertex stage fullscreen.vert writes 'v_uv' (vec2<f32>, location 0)"), "{message}");
    let missing = "#version 450\nlayout(location = 3) in vec2 v_extra;\nlayout(location = 0) out vec4 c;\nvoid main() { c = vec4(v_extra, 0.0, 1.0); }\n";
    let error =
        bench.compiler.build_program(&program(missing), &BuildOptions::default()).into_result().err().expect("refused");
    assert!(
        error
            .to_string()
            .contains("reads 'v_extra' (vec2<f32>, location 3) which vertex stage fullscreen.vert does not write"),
        "{error}"
    );
}

#[test]
fn invalid_spirv_handed_to_the_loader_is_rejected_with_the_validators_message() {
    let registry = registry();
    let mut bench = GlBench::vulkan(&registry, VK_SPIRV);
    let fragment = "#version 450\nlayout(location = 0) in vec2 v_uv;\nlayout(location = 0) out vec4 c;\nvoid main() { c = vec4(v_uv, 0.0, 1.0); }\n";
    let desc = program(fragment);
    let built = bench.compiler.build_program(&desc, &BuildOptions::default()).into_result().unwrap();
    let object = bench.compiler.program_binary(built.program).into_result().unwrap();
    let reloaded =
        bench.compiler.load_program_binary(&desc, &BuildOptions::default(), &object).into_result().expect("reloads");
    // v_uv at the centre pixel (8, 8) of 16: (8.5 / 16, 1 - 8.5 / 16).
    assert_rgba_near(bench.centre_pixel(&reloaded), [135, 120, 0, 255], 1);

    // Validated for the device's own Vulkan version (lavapipe: 1.3).
    let error = bench.load_damaged(&desc, &object);
    assert!(error.contains("invalid SPIR-V for vulkan1.3"), "{error}");
    let error = bench.compiler.create_pipeline([built.program].as_slice().into()).into_result().unwrap_err();
    assert!(error.message.contains("program pipelines are an OpenGL object"), "{error}");
}

#[test]
fn the_pipeline_cache_is_kept_in_the_store_and_a_corrupt_one_is_discarded() {
    let registry = registry();
    let store_dir = temp_dir("vk-cache");
    let store = Store::open(&store_dir).unwrap();
    let build = |label: &str| {
        let mut bench = GlBench::vulkan(&registry, VK_SPIRV);
        bench.compiler.set_store(store_dir.to_str().unwrap().into()).into_result().expect("store accepted");
        let fragment = format!(
            "#version 450\nlayout(location = 0) out vec4 c;\nvoid main() {{ c = vec4(1.0, 0.0, 0.0, 1.0); }} // {label}\n"
        );
        let built =
            bench.compiler.build_program(&program(&fragment), &BuildOptions::default()).into_result().expect("builds");
        assert_eq!(bench.centre_pixel(&built), [255, 0, 0, 255]);
        bench.capabilities.clone()
    };
    let capabilities = build("first");
    // The pipeline cache is the build system's own object, opaque to the
    // host: the only object a Vulkan build writes to this store.
    let keys = store.keys().unwrap();
    assert_eq!(keys.len(), 1, "one object: the pipeline cache");
    let key = keys[0];
    let saved = store.get(&key).unwrap().expect("the pipeline cache is saved");
    // lavapipe keeps no pipelines in its cache: the data is the 32-byte header.
    assert!(saved.len() >= 32);
    assert_eq!(&saved[16..32], &capabilities.pipeline_cache_uuid, "the header names this device");

    // A torn object: the store's checksum catches it; discarded, rebuilt, saved whole.
    std::fs::write(store.path_of(&key), b"XROBJ01\0garbage").unwrap();
    build("second");
    assert!(store.get(&key).unwrap().expect("saved again").len() >= 32);

    // A whole object whose header names another device: never handed to the driver.
    let mut foreign = saved.clone();
    foreign[16] ^= 0xff;
    store.put(&key, &foreign).unwrap();
    build("third");
    let rebuilt = store.get(&key).unwrap().unwrap();
    assert_eq!(&rebuilt[16..32], &capabilities.pipeline_cache_uuid);
}

#[test]
fn without_a_vulkan_driver_the_device_system_is_unavailable_and_opengl_still_works() {
    let output = Xr::new(["plugins", "--json"])
        .software_device()
        .env("VK_ICD_FILENAMES", "/nonexistent/icd.json")
        .env("VK_DRIVER_FILES", "/nonexistent/icd.json")
        .ok();
    let report: serde_json::Value = serde_json::from_str(&output.stdout).unwrap();
    let plugins = report["plugins"].as_array().unwrap();
    let find = |name: &str| plugins.iter().find(|p| p["name"] == name).unwrap().clone();
    let vulkan = find("xr-rhi-vulkan")["device_systems"][0]["device"]["Err"].as_str().unwrap().to_owned();
    // The loader either finds no driver or a driver with no device, by version.
    assert!(
        vulkan.contains("no Vulkan driver:") || vulkan.contains("no Vulkan 1.3 device with a graphics queue"),
        "{vulkan}"
    );
    assert!(
        find("xr-rhi-opengl")["device_systems"][0]["device"]["Ok"]["renderer"].as_str().unwrap().contains("llvmpipe")
    );
    assert_eq!(find(VK_SPIRV)["build_systems"][0]["on_devices"], serde_json::json!([]), "nothing to attach to");
}

/// Varyings without locations, declared in another order in each stage:
/// matched by name on both SPIR-V paths, as the driver's GLSL linker does.
#[test]
fn stage_interfaces_are_linked_by_name_on_every_spirv_path() {
    let vertex = "#version 450
layout(location = 0) in vec2 p;
out vec4 v_red;
out vec4 v_green;
void main() { v_red = vec4(1.0, 0.0, 0.0, 1.0); v_green = vec4(0.0, 1.0, 0.0, 1.0); gl_Position = vec4(p, 0.0, 1.0); }
";
    let fragment = "#version 450
in vec4 v_green;
in vec4 v_red;
layout(location = 0) out vec4 c;
void main() { c = v_red; }
";
    let desc = ProgramDesc::new(
        "late-bound",
        [
            SourceDesc::new("glsl", ShaderStage::Vertex, "late.vert", vertex),
            SourceDesc::new("glsl", ShaderStage::Fragment, "late.frag", fragment),
        ],
    );
    let registry = registry();
    for (mut bench, label) in [
        (GlBench::vulkan(&registry, VK_SPIRV), "vk-spirv"),
        (GlBench::open(&registry, "xr-compiler-gl-spirv"), "gl-spirv"),
        (GlBench::open(&registry, "xr-compiler-glsl"), "gl-glsl"),
    ] {
        let built = bench.compiler.build_program(&desc, &BuildOptions::default()).into_result().expect("builds");
        assert_eq!(bench.centre_pixel(&built), [255, 0, 0, 255], "{label}");
    }
}

#[test]
fn validation_asked_for_without_the_layer_is_a_clear_error() {
    let out = temp_dir("no-layer");
    let run = Xr::sample("triangle", ["--path", "vk-spirv", "--validation", "--out"])
        .arg(out.path())
        .env("VK_LAYER_PATH", "/nonexistent")
        .env("VK_ADD_LAYER_PATH", "/nonexistent")
        .fails();
    assert!(
        run.stdout.contains("validation was asked for but VK_LAYER_KHRONOS_validation is not installed"),
        "{}{}",
        run.stdout,
        run.stderr
    );
}

/// A program and its build system that outlive their Vulkan device (dropped
/// in the wrong order by an engine): their calls are errors, dropping them
/// is harmless — the device's loader reaches nothing once it is closed.
#[test]
fn programs_that_outlive_their_device_fail_cleanly() {
    let registry = registry();
    let GlBench { mut compiler, mut device, .. } = GlBench::vulkan(&registry, VK_SPIRV);
    let mut built = compiler.build_program(&program(MATERIAL), &BuildOptions::default()).into_result().expect("builds");
    let tint = built.constants.handle("tint").unwrap();
    // A texture bound after the device closed: its descriptor set is gone.
    let sampled = "#version 450\nlayout(binding = 1) uniform sampler2D albedo;\nlayout(location = 0) in vec2 v_uv;\nlayout(location = 0) out vec4 c;\nvoid main() { c = texture(albedo, v_uv); }\n";
    let mut textured =
        compiler.build_program(&program(sampled), &BuildOptions::default()).into_result().expect("builds");
    let desc = xr_device::TextureDesc {
        width: 1,
        height: 1,
        format: xr_device::TextureFormat::Rgba8,
        mip_levels: 1,
        storage: false,
    };
    let texture = device.create_texture(&desc, [255u8; 4].as_slice().into(), 1).into_result().unwrap();
    let nearest = xr_device::SamplerDesc {
        filter: xr_device::Filter::Nearest,
        mipmap: xr_device::Filter::Nearest,
        wrap: xr_device::Wrap::ClampToEdge,
    };
    let sampler = device.create_sampler(&nearest).into_result().unwrap();
    let binding = device.texture_binding(texture, Some(sampler).into()).into_result().unwrap();
    let albedo = textured.constants.handle("albedo").unwrap();
    drop(device);
    let error = textured.constants.set_texture(albedo, &binding).expect_err("the device is gone");
    assert!(error.message.contains("its device is closed"), "{error}");
    drop(textured);
    let error = built.constants.set_vector(tint, &[1.0, 0.0, 0.0, 1.0]).expect_err("the device is gone");
    assert!(error.message.contains("its device is closed"), "{error}");
    let error = built.constants.set_defaults().into_result().expect_err("the device is gone");
    assert!(error.message.contains("its device is closed"), "{error}");
    let error = compiler.build_program(&program(MATERIAL), &BuildOptions::default()).into_result().err();
    let error = error.expect("no program is built without a device").to_string();
    assert!(error.contains("the Vulkan device this build system attached to is closed"), "{error}");
    drop(built);
    drop(compiler);
}

/// A build system attached to a device of another kind is refused by name,
/// and attaching the right one to the same registry still works.
#[test]
fn a_build_system_refuses_a_device_of_another_kind() {
    use xr_device::DeviceKind;
    let registry = registry();
    let options = xr_device::DeviceOptions::default();
    for (kind, system, only) in [
        (DeviceKind::VULKAN, "xr-compiler-glsl", "xr-compiler-glsl attaches to OpenGL devices only"),
        (DeviceKind::VULKAN, "xr-compiler-gl-spirv", "xr-compiler-gl-spirv attaches to OpenGL devices only"),
        (DeviceKind::OPENGL, VK_SPIRV, "xr-compiler-vk-spirv attaches to Vulkan devices only"),
    ] {
        let error = registry.open_with(kind, system, &options).err().expect("refused").to_string();
        assert!(error.contains(only), "{system} on {}: {error}", kind.name());
    }
    assert!(registry.open_with(DeviceKind::VULKAN, VK_SPIRV, &options).is_ok());
}
