//! wgpu, two device kinds of a plugin of their own (`xr-rhi-wgpu`): listed
//! by `xr plugins` with the build system that attaches to them, and its
//! pipeline cache kept in the store from one launch to the next. The
//! materials scene on wgpu is compared with the native paths in
//! `library.rs`.

use xr_tests::{Xr, materials_built};

/// The materials sample's `--frames` on a `kind` device over `store`: what it printed.
fn frames(store: &std::path::Path, kind: &str) -> String {
    Xr::sample("materials", ["--store", store.to_str().unwrap(), "--frames", "5", "--device", kind]).ok().stdout
}

/// The count `name` in the sample's line that starts with `line`.
fn count(said: &str, line: &str, name: &str) -> u64 {
    let line = said.lines().find(|l| l.starts_with(line)).unwrap_or_else(|| panic!("no '{line}' in\n{said}"));
    let after = line.split(name).nth(1).unwrap_or_else(|| panic!("no '{name}' in '{line}'"));
    after
        .trim_start()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count after '{name}' in '{line}'"))
}

#[test]
fn a_second_launch_makes_its_pipelines_with_the_pipeline_cache_the_first_stored() {
    let dir = materials_built("wgpu-pipeline-cache");
    let store = dir.join("store");
    let first = frames(&store, "wgpu");
    assert_eq!(count(&first, "made at load and draw:", "pipeline cache bytes loaded"), 0, "{first}");
    // 9 programs drawn into 5 targets of other formats: 45 pipelines.
    assert_eq!(count(&first, "made by the draws:", "pipelines"), 45, "{first}");
    assert_eq!(count(&first, "made by the draws:", "made with a stored pipeline cache"), 0, "{first}");

    let second = frames(&store, "wgpu");
    assert!(count(&second, "made at load and draw:", "pipeline cache bytes loaded") > 0, "{second}");
    assert_eq!(count(&second, "made by the draws:", "made with a stored pipeline cache"), 45, "{second}");
    assert_eq!(count(&second, "made at load and draw:", "programs passed through"), 9, "{second}");
}

#[test]
fn a_device_kind_no_plugin_opens_is_refused_naming_the_kinds_there_are() {
    let dir = materials_built("wgpu-unknown-kind");
    let said = Xr::sample("materials", ["--store", dir.join("store").to_str().unwrap(), "--frames", "1"])
        .args(["--device", "metal"])
        .fails()
        .stderr;
    assert!(said.contains("no device system opens a 'metal' device"), "{said}");
    assert!(said.contains("wgpu, wgpu-gl"), "{said}");
}

#[test]
fn xr_plugins_lists_the_wgpu_kinds_their_devices_and_the_loader_that_attaches_to_them() {
    let said = Xr::new(["plugins"]).ok().stdout;
    for line in [
        "device system xr-rhi-wgpu [wgpu]",
        "device system xr-rhi-wgpu-gl [wgpu-gl]",
        "build system xr-compiler-wgpu",
        "compiles: glsl → wgsl",
        "attaches to: wgpu, wgpu-gl",
        "loads: vk-spirv (compatible-object), wgsl (source)",
        "on xr-rhi-wgpu: CompatibleObject",
        "on xr-rhi-wgpu-gl: CompatibleObject",
    ] {
        assert!(said.contains(line), "no '{line}' in\n{said}");
    }
}

#[test]
fn a_sampler2d_asked_for_as_wgsl_is_one_error_naming_the_file_and_the_rest_builds() {
    let dir = xr_tests::materials_copy("wgpu-wgsl-sampler2d");
    let manifest = dir.join("xr.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    // The textured program binds `albedo`, a sampler2D.
    let at = text.find("name = \"textured\"").expect("the textured program");
    let (head, tail) = text.split_at(at);
    let tail =
        tail.replacen(r#"targets = ["gl-glsl", "gl-spirv", "vk-spirv"]"#, r#"targets = ["vk-spirv", "wgsl"]"#, 1);
    std::fs::write(&manifest, format!("{head}{tail}")).unwrap();
    let run = Xr::new(["build", "-m", "xr.toml"]).dir(&dir).fails();
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(said.contains("shaders/textured.frag"), "{said}");
    assert!(said.contains("'albedo' is a texture combined with its sampler (sampler2D)"), "{said}");
    assert!(said.contains("1 failed"), "{said}");
    // Everything else built: the textured program's SPIR-V and every other program's WGSL.
    let summary = said.lines().find(|l| l.starts_with("xr build:")).unwrap_or_else(|| panic!("no summary in {said}"));
    let built: u32 = summary["xr build:".len()..].split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!(built > 20, "{summary}");
}

#[test]
fn the_scene_built_as_wgsl_draws_through_naga_on_both_back_ends_the_native_spirv_pixels() {
    let dir = xr_tests::materials_copy("wgpu-wgsl-scene");
    let manifest = dir.join("xr.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, materials::wgsl_manifest(&text)).unwrap();
    xr_tests::xr_build(&dir);
    let out = dir.join("out");
    let mut said = String::new();
    for run in ["vk-spirv", "gl-spirv", "wgpu-wgsl", "wgpu-gl-wgsl"] {
        let store = dir.join("store");
        said += &Xr::sample("materials", ["--store", store.to_str().unwrap(), "--out", out.to_str().unwrap()])
            .args(["--run", run])
            .ok()
            .stdout;
    }
    let rows: Vec<&str> = said.lines().filter(|l| l.starts_with("wgpu-") && !l.contains("->")).collect();
    assert_eq!(rows.len(), 2 * materials::SCENE.len(), "{said}");
    for row in rows {
        assert!(row.contains(" source ") && row.contains(" wgsl ") && row.contains("WGSL through naga"), "{row}");
    }
    // The override values reach WGSL as pipeline constants: the same pixels.
    let png = |run: &str| image::open(out.join(format!("materials-{run}.png"))).unwrap().to_rgba8().into_raw();
    assert_eq!(png("wgpu-wgsl"), png("vk-spirv"), "WGSL on wgpu's Vulkan differs from vk-spirv");
    assert_eq!(png("wgpu-gl-wgsl"), png("gl-spirv"), "WGSL on wgpu's OpenGL differs from gl-spirv");
}

/// A program of a texture and a sampler apart, a uniform block in another
/// set and push constants: every kind of binding wgpu has.
const BOUND_VERT: &str = "#version 450
layout(location = 0) in vec2 position;
layout(location = 0) out vec2 uv;
layout(push_constant) uniform Push { vec4 rect; };
void main() { uv = position; gl_Position = vec4(rect.xy + position * rect.zw, 0.0, 1.0); }
";
const BOUND_FRAG: &str = "#version 450
layout(set = 0, binding = 0) uniform texture2D albedo;
layout(set = 0, binding = 1) uniform sampler albedo_sampler;
layout(set = 1, binding = 0) uniform Tint { vec4 tint; };
layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 color;
void main() { color = texture(sampler2D(albedo, albedo_sampler), uv) * tint; }
";

/// A directory of `shaders` (name, text) under `shaders/` and a manifest of
/// one program (`program`, the lines of its `[[program]]` table) storing
/// into `store/`, built by `xr build`.
fn built_program(label: &str, shaders: &[(&str, &str)], program: &str) -> xr_tests::TestDir {
    let dir = xr_tests::temp_dir(label);
    std::fs::create_dir_all(dir.join("shaders")).unwrap();
    for (name, text) in shaders {
        std::fs::write(dir.join("shaders").join(name), text).unwrap();
    }
    std::fs::write(dir.join("xr.toml"), format!("store = \"store\"\n[[program]]\n{program}")).unwrap();
    xr_tests::xr_build(&dir);
    dir
}

/// `layout` as wgpu's bind group layout entries of `set`: what an engine on
/// wgpu writes once (docs/WGPU.md).
fn wgpu_entries(layout: &[xr_library::layout::LayoutBinding], set: u32) -> Vec<wgpu::BindGroupLayoutEntry> {
    use xr_library::layout::{BindingKind, Stages};
    layout
        .iter()
        .filter(|b| b.set == set)
        .map(|b| {
            let mut visibility = wgpu::ShaderStages::NONE;
            for (stage, flag) in [
                (Stages::VERTEX, wgpu::ShaderStages::VERTEX),
                (Stages::FRAGMENT, wgpu::ShaderStages::FRAGMENT),
                (Stages::COMPUTE, wgpu::ShaderStages::COMPUTE),
            ] {
                if b.stages.contains(stage) {
                    visibility |= flag;
                }
            }
            let ty = match b.kind {
                BindingKind::UniformBuffer => wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                BindingKind::StorageBuffer => wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: false },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                BindingKind::SampledImage => wgpu::BindingType::Texture {
                    sample_type: wgpu::TextureSampleType::Float { filterable: true },
                    view_dimension: wgpu::TextureViewDimension::D2,
                    multisampled: false,
                },
                BindingKind::Sampler => wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                other => panic!("wgpu has no binding of kind {other:?}"),
            };
            wgpu::BindGroupLayoutEntry { binding: b.binding, visibility, ty, count: None }
        })
        .collect()
}

/// The SPIR-V words of a stored object's stages, without line information
/// (naga's SPIR-V front end takes none).
fn stages_of(object: &[u8]) -> Vec<Vec<u32>> {
    use xr_spirv_object::spirv::Op;
    let modules = xr_spirv_object::decode(object).expect("a SPIR-V object");
    modules
        .iter()
        .map(|m| {
            let mut words = m.words[..xr_spirv_object::walk::HEADER_WORDS].to_vec();
            for i in xr_spirv_object::walk::instruction_list(&m.words).unwrap() {
                if !matches!(i.op(), Some(Op::Line | Op::NoLine | Op::String | Op::Source | Op::SourceContinued)) {
                    words.extend_from_slice(&m.words[i.offset..i.end()]);
                }
            }
            words
        })
        .collect()
}

#[test]
fn typed_bindings_give_the_layout_wgpu_checks_a_programs_spirv_against() {
    let dir = built_program(
        "wgpu-layout",
        &[("bound.vert", BOUND_VERT), ("bound.frag", BOUND_FRAG)],
        r#"name = "bound"
targets = ["vk-spirv"]
stages = [{ stage = "vertex", file = "shaders/bound.vert" }, { stage = "fragment", file = "shaders/bound.frag" }]
"#,
    );

    // What `xr bindgen` writes: each binding with its kind and stages.
    let written = Xr::new(["bindgen", "-m", "xr.toml", "-o", "-"]).dir(&dir).ok().stdout;
    for line in [
        "target: \"vk-spirv\"",
        "LayoutBinding { set: 0, binding: 0, kind: ::xr_library::layout::BindingKind::SampledImage, stages: ::xr_library::layout::Stages(2), count: 1 }",
        "LayoutBinding { set: 0, binding: 1, kind: ::xr_library::layout::BindingKind::Sampler, stages: ::xr_library::layout::Stages(2), count: 1 }",
        "LayoutBinding { set: 1, binding: 0, kind: ::xr_library::layout::BindingKind::UniformBuffer, stages: ::xr_library::layout::Stages(2), count: 1 }",
        "push_constants: Some(::xr_library::layout::PushConstants { stages: ::xr_library::layout::Stages(1), size: 16 })",
    ] {
        assert!(written.contains(line), "no '{line}' in\n{written}");
    }
    // The same layout, as the bindings hold it.
    let registry = xr_tests::registry();
    let manifest = xr_build::invocation::load_manifest(&dir.join("xr.toml"), &xr_host::Registry::default_dirs())
        .unwrap_or_else(|e| panic!("{e}"));
    let plan = xr_build::BuildPlan::new(manifest, &registry);
    let bindings = xr_build::bindgen::bindings(&plan, &registry, &xr_build::Compiles::in_process(), &[], &[]).unwrap();
    let layout = &bindings.programs[0].layouts[0];
    let bound: Vec<xr_library::layout::LayoutBinding> = layout
        .bindings
        .iter()
        .map(|b| xr_library::layout::LayoutBinding {
            set: b.set,
            binding: b.binding,
            kind: xr_library::layout::BindingKind::from_name(&b.kind).unwrap(),
            stages: xr_library::layout::Stages(b.stages),
            count: b.count,
        })
        .collect();
    let (_, push_size) = layout.push_constants.unwrap();

    // wgpu, as an engine opens it, checks the program's own SPIR-V (through
    // naga) against the layout made from the bindings.
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::VULKAN,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default())).unwrap();
    let (device, _queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_features: wgpu::Features::IMMEDIATES,
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .unwrap();
    let library = xr_library::ShaderLibrary::open(&dir.join("store")).unwrap();
    let catalog = library.program("bound").unwrap();
    let object = catalog.variants.values().next().and_then(|v| v.objects.get("vk-spirv")).unwrap();
    let bytes = library.store().get(&xr_store::ObjectKey::from_hex(object).unwrap()).unwrap().unwrap();
    let stages = stages_of(&bytes);
    let modules: Vec<wgpu::ShaderModule> = stages
        .iter()
        .map(|words| {
            device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: None,
                source: wgpu::ShaderSource::SpirV(std::borrow::Cow::Borrowed(words)),
            })
        })
        .collect();
    let pipeline_error = |entries: &[Vec<wgpu::BindGroupLayoutEntry>], immediate_size: u32| {
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let groups: Vec<wgpu::BindGroupLayout> = entries
            .iter()
            .map(|e| device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: None, entries: e }))
            .collect();
        let refs: Vec<Option<&wgpu::BindGroupLayout>> = groups.iter().map(Some).collect();
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: None,
            bind_group_layouts: &refs,
            immediate_size,
        });
        let attributes =
            [wgpu::VertexAttribute { format: wgpu::VertexFormat::Float32x2, offset: 0, shader_location: 0 }];
        let buffers = [Some(wgpu::VertexBufferLayout {
            array_stride: 8,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &attributes,
        })];
        let targets = [Some(wgpu::ColorTargetState::from(wgpu::TextureFormat::Rgba8Unorm))];
        let _ = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: None,
            layout: Some(&layout),
            vertex: wgpu::VertexState {
                module: &modules[0],
                entry_point: Some("main"),
                compilation_options: Default::default(),
                buffers: &buffers,
            },
            primitive: Default::default(),
            depth_stencil: None,
            multisample: Default::default(),
            fragment: Some(wgpu::FragmentState {
                module: &modules[1],
                entry_point: Some("main"),
                compilation_options: Default::default(),
                targets: &targets,
            }),
            multiview_mask: None,
            cache: None,
        });
        pollster::block_on(scope.pop()).map(|e| e.to_string())
    };
    let sets = [wgpu_entries(&bound, 0), wgpu_entries(&bound, 1)];
    assert_eq!(pipeline_error(&sets, push_size), None, "wgpu refuses the layout the bindings give");
    // wgpu does check the bindings: without the sampler, or without the
    // uniform block's set, the same program is refused. (wgpu 30 does not
    // check the immediates' size against the shader; the bindings give it.)
    let without_sampler = [sets[0].iter().filter(|e| e.binding != 1).cloned().collect(), sets[1].clone()];
    let error = pipeline_error(&without_sampler, push_size).expect("a layout without the sampler passed");
    assert!(error.to_lowercase().contains("binding"), "{error}");
    assert!(pipeline_error(&sets[..1], push_size).is_some(), "a layout without set 1 passed");
}

/// A compute program over a storage buffer, with a push constant and an override.
const COUNT_COMP: &str = "#version 450
layout(local_size_x = 4) in;
layout(constant_id = 0) const uint SCALE = 1;
layout(push_constant) uniform Push { uint offset; };
layout(std430, set = 0, binding = 0) buffer Numbers { uint values[]; };
void main() { values[gl_GlobalInvocationID.x] = values[gl_GlobalInvocationID.x] * SCALE + offset; }
";

#[test]
fn a_compute_program_from_the_store_writes_a_buffer_on_wgpu_and_an_unbound_one_is_refused() {
    use xr_device::{BufferUsage, ComputeCall};
    use xr_sourcebuild::ConstantTableExt;
    let dir = built_program(
        "wgpu-compute",
        &[("count.comp", COUNT_COMP)],
        r#"name = "count"
targets = ["vk-spirv", "wgsl"]
stages = [{ stage = "compute", file = "shaders/count.comp" }]
overrides = [{ name = "SCALE", id = 0, type = "uint", default = 1 }]
"#,
    );
    let registry = xr_tests::registry();
    let library = xr_library::ShaderLibrary::open(&dir.join("store")).unwrap();
    for (kind, path) in [
        (materials::WGPU, xr_library::LoadPath::CompatibleObject),
        (materials::WGPU, xr_library::LoadPath::Source),
        (materials::WGPU_GL, xr_library::LoadPath::CompatibleObject),
    ] {
        let mut device = registry.open_device(kind, &Default::default()).unwrap();
        let mut loader = xr_library::DeviceLoader::attach(&registry, &device, &library).unwrap();
        let request = xr_library::LoadRequest {
            program: "count",
            variant: vec![],
            overrides: vec![("SCALE", 10.0)],
            paths: vec![path],
        };
        let mut loaded = loader.load(&library, &request).unwrap_or_else(|e| panic!("{kind} {path}: {e}"));
        let start: Vec<u8> = [1u32, 2, 3, 4].iter().flat_map(|v| v.to_le_bytes()).collect();
        let numbers = device.create_buffer(BufferUsage::STORAGE, start.as_slice().into()).into_result().unwrap();
        let call = ComputeCall { program: loaded.built.program, groups: [1, 1, 1] };
        let error = device.dispatch(&call).into_result().expect_err("dispatched with nothing bound").to_string();
        assert!(error.contains("'Numbers' is not bound"), "{kind} {path}: {error}");
        let table = &mut loaded.built.constants;
        let handle = table.handle("Numbers").unwrap();
        table.set_buffer(handle, &device.buffer_binding(numbers).into_result().unwrap()).unwrap();
        let offset = table.handle("offset").unwrap();
        table.set_uint(offset, 7).unwrap();
        device.dispatch(&call).into_result().unwrap_or_else(|e| panic!("{kind} {path}: {e}"));
        let words = xr_tests::u32_words(&device.read_buffer(numbers).into_result().unwrap());
        assert_eq!(words, [17, 27, 37, 47], "{kind} {path}: SCALE 10 at load, offset 7 set");
        drop(loaded);
        drop(loader);
    }
}
