//! Plugin discovery and loading, with real and broken plugins on disk.

use xr_device::{DeviceKind, DeviceOptions, ErrorKind};
use xr_host::Registry;
use xr_sourcebuild::{Availability, ProgramDesc};
use xr_tests::{GlBench, glsl_fragment, library, plugin_dir, plugin_dir_with, registry, temp_dir};

/// The centre pixel `registry`'s GLSL build system draws on OpenGL with
/// the fragment source `file` of text `source`.
fn glsl_centre_pixel(registry: &Registry, file: &str, source: &str) -> [u8; 4] {
    let mut bench = GlBench::open(registry, "xr-compiler-glsl");
    let program = bench.build_fragment(glsl_fragment(file, source)).expect("builds");
    bench.centre_pixel(&program)
}

fn names(registry: &Registry) -> Vec<&str> {
    let mut names: Vec<&str> = registry.plugins().iter().map(|p| p.name.as_str()).collect();
    names.sort();
    names
}

#[test]
fn loads_the_opengl_device_and_glsl_build_system_from_disk() {
    let registry = registry();
    assert_eq!(
        names(&registry),
        [
            "xr-compiler-gl-spirv",
            "xr-compiler-glsl",
            "xr-compiler-slang",
            "xr-compiler-vk-spirv",
            "xr-rhi-opengl",
            "xr-rhi-vulkan",
            "xr-rhi-wgpu"
        ]
    );
    assert!(
        registry.skipped().is_empty(),
        "nothing in {} should be skipped: {:?}",
        plugin_dir().display(),
        registry.skipped()
    );
    let plugin = registry.plugins().iter().find(|p| p.name == "xr-rhi-opengl").unwrap();
    assert_eq!(plugin.version, env!("CARGO_PKG_VERSION"));
    assert!(plugin.path.starts_with(plugin_dir()));
    assert!(registry.device_system(DeviceKind::OPENGL).is_ok());
    assert!(registry.device_system(DeviceKind::VULKAN).is_ok());
    let (info, _) = registry.build_systems(DeviceKind::OPENGL, Availability::RUNTIME_COMPILE, "glsl")[0];
    assert_eq!(info.name.as_str(), "xr-compiler-glsl");
    assert!(info.availability.contains(Availability::RUNTIME_COMPILE));
    // HLSL reaches OpenGL only through SPIR-V.
    let hlsl = registry.build_systems(DeviceKind::OPENGL, Availability::RUNTIME_COMPILE, "hlsl");
    assert_eq!(hlsl.len(), 1);
    assert_eq!(hlsl[0].0.name.as_str(), "xr-compiler-gl-spirv");
    assert!(hlsl[0].0.availability.contains(Availability::COMPATIBLE_OBJECT));
    let vulkan = registry.best_build_system(DeviceKind::VULKAN, Availability::COMPATIBLE_OBJECT, "hlsl");
    assert!(vulkan.is_ok());
}

#[test]
fn broken_files_and_a_missing_directory_are_skipped_and_the_rest_still_works() {
    let dir = plugin_dir_with(
        "broken",
        &[
            "xr-rhi-opengl",
            "xr-compiler-glsl",
            "xr-fixture-not-a-plugin",
            "xr-fixture-incompatible",
            "xr-fixture-panic-on-load",
        ],
    );
    std::fs::write(dir.join("garbage.so"), b"this is not an ELF file").unwrap();
    std::fs::write(dir.join("notes.txt"), b"not a library, not even looked at").unwrap();
    let parent = temp_dir("missing");
    let missing = parent.join("does-not-exist");

    let registry = Registry::load_dirs([missing.clone(), dir.to_path_buf()]);
    assert_eq!(names(&registry), ["xr-compiler-glsl", "xr-rhi-opengl"]);

    let reason = |file: &std::path::Path| -> String {
        let skipped = registry.skipped().iter().find(|s| s.path == file);
        skipped.unwrap_or_else(|| panic!("{} not skipped: {:?}", file.display(), registry.skipped())).reason.clone()
    };
    assert_eq!(reason(&missing), "plugin directory does not exist");
    assert!(reason(&dir.join("garbage.so")).starts_with("not a loadable shared library"));
    let not_plugin = dir.join(library("xr-fixture-not-a-plugin").file_name().unwrap());
    assert_eq!(reason(&not_plugin), "not an XR plugin: it exports no abi_stable root module");
    let incompatible = dir.join(library("xr-fixture-incompatible").file_name().unwrap());
    assert!(reason(&incompatible).starts_with("incompatible plugin interface"), "{}", reason(&incompatible));
    let panics = dir.join(library("xr-fixture-panic-on-load").file_name().unwrap());
    assert_eq!(reason(&panics), "plugin panicked while creating its root module");
    assert_eq!(registry.skipped().len(), 5, "{:?}", registry.skipped());
    for skipped in registry.skipped() {
        assert!(!skipped.reason.contains('\n'), "reason must be one line: {}", skipped.reason);
        assert!(skipped.reason.len() < 300, "reason must be short: {}", skipped.reason);
    }

    // The plugins that loaded next to the broken ones still build and draw.
    let white = "#version 450 core\nout vec4 c;\nvoid main() { c = vec4(1.0); }\n";
    assert_eq!(glsl_centre_pixel(&registry, "white.frag", white), [255, 255, 255, 255]);
}

#[test]
fn a_plugin_found_twice_loads_once() {
    let first = plugin_dir_with("first", &["xr-rhi-opengl"]);
    let second = plugin_dir_with("second", &["xr-rhi-opengl"]);
    let registry = Registry::load_dirs([first.to_path_buf(), second.to_path_buf()]);
    assert_eq!(names(&registry), ["xr-rhi-opengl"]);
    assert_eq!(registry.plugins()[0].path.parent(), Some(first.path()));
    assert_eq!(registry.skipped().len(), 1);
    assert!(registry.skipped()[0].reason.starts_with("plugin 'xr-rhi-opengl' already loaded from"));
    assert!(registry.skipped()[0].path.starts_with(&second));
}

#[test]
fn a_plugin_that_panics_inside_calls_costs_only_those_calls() {
    let dir = plugin_dir_with("panics", &["xr-rhi-opengl", "xr-compiler-glsl", "xr-fixture-panic"]);
    let registry = Registry::load_dirs([dir.to_path_buf()]);
    assert_eq!(names(&registry), ["xr-compiler-glsl", "xr-fixture-panic", "xr-rhi-opengl"]);

    // Its device system panics in `open`: an error, and the host goes on.
    let broken_device = registry.device_system_named("xr-fixture-panic-device").expect("fixture device system");
    let error = broken_device.open(&DeviceOptions::default()).into_result().err().expect("open fails");
    assert_eq!(error.kind, ErrorKind::Panic);
    assert!(error.message.contains("open is broken"), "{}", error.message);

    // Its build system panics in `build_program`, again and again.
    let mut broken = GlBench::open(&registry, "xr-fixture-panic-build");
    let program = ProgramDesc::new("any", [glsl_fragment("x.frag", "")]);
    for _ in 0..3 {
        let error =
            broken.compiler.build_program(&program, &Default::default()).into_result().err().expect("build fails");
        assert_eq!(error.error.kind, ErrorKind::Panic);
        assert!(error.error.message.contains("index 8 out of range"), "{}", error.error.message);
    }
    // Six more calls into the attached build system panic too (the fixture
    // answers `availability`, which attaching it needs, and keeps the
    // trait's own draw states and counters): each is an error of kind
    // Panic with the plugin's message, never an abort of the host (which
    // has no way to catch a panic unwinding out of a plugin).
    let options = xr_sourcebuild::BuildOptions::default();
    let handle = xr_device::ProgramRef { kind: xr_device::ProgramKind::Program, name: 1 };
    let binary = xr_sourcebuild::ProgramBinary { format: 1, bytes: vec![0; 4].into() };
    let load = xr_sourcebuild::ArtifactLoad {
        name: "any".into(),
        target: "fixture-panic".into(),
        path: xr_sourcebuild::LoadPath::Source,
        artifact: Vec::new().into(),
        overrides: Vec::new().into(),
    };
    let compiler = &mut broken.compiler;
    let calls: [(&str, Option<xr_device::XrError>); 6] = [
        ("no key", compiler.content_key(&program, &options).into_result().err().map(|e| e.error)),
        ("no binary", compiler.program_binary(handle).into_result().err()),
        ("cannot load", compiler.load_program_binary(&program, &options, &binary).into_result().err().map(|e| e.error)),
        ("no pipelines", compiler.create_pipeline([handle].as_slice().into()).into_result().err()),
        ("no store", compiler.set_store("store".into()).into_result().err()),
        ("cannot load 'any'", compiler.load_artifact(&load).into_result().err().map(|e| e.error)),
    ];
    for (said, error) in calls {
        let error = error.unwrap_or_else(|| panic!("the call that panics with '{said}' returned"));
        assert_eq!(error.kind, ErrorKind::Panic, "{said}: {error:?}");
        assert!(error.message.contains(said), "{said}: {}", error.message);
    }

    // The real build system, on a device the registry opens past the broken
    // device system, still works.
    let red = "#version 450 core\nout vec4 c;\nvoid main() { c = vec4(1.0, 0.0, 0.0, 1.0); }\n";
    assert_eq!(glsl_centre_pixel(&registry, "red.frag", red), [255, 0, 0, 255]);
}

/// A device kind is its plugin's: a kind that no line of the host names is
/// listed, found by its name and asked for a device like OpenGL and Vulkan
/// are (this one has none, and its reason reaches the user).
#[test]
fn a_device_kind_the_host_never_heard_of_is_listed_found_by_name_and_opened_like_any_other() {
    let plugins = plugin_dir_with("other-kind", &["xr-fixture-other-kind"]);
    let registry = Registry::load_dirs([plugins.to_path_buf()]);
    let kind = registry.device_kind_named("fixture-api").expect("the plugin's kind, by its name");
    assert_eq!((kind.name(), kind.api_name()), ("fixture-api", "Fixture API"));
    assert_eq!(registry.device_kinds(), [kind]);
    assert!(registry.device_kind_named("vulkan").is_none(), "only the kinds the loaded plugins open");
    let error = registry.open_device(kind, &DeviceOptions::default()).err().expect("no device to open").to_string();
    assert!(
        error.contains("no fixture-api device could be opened")
            && error.contains("xr-fixture-other-kind: the fixture API has no device on this machine"),
        "{error}"
    );

    let listed = xr_tests::Xr::new(["plugins"]).plugins(&plugins).ok();
    assert!(
        listed.stdout.contains("device system xr-fixture-other-kind [fixture-api]: a device system of its own kind"),
        "{}",
        listed.stdout
    );
    // `xr warm --device` takes the kinds the plugins open, this one among them.
    let refused = xr_tests::Xr::new(["warm", "--store", "absent", "--device", "directx"]).plugins(&plugins).fails();
    assert!(
        refused.stderr.contains("unknown --device 'directx'")
            && refused.stderr.contains("vulkan")
            && refused.stderr.contains("fixture-api"),
        "{}",
        refused.stderr
    );
}

/// A plugin linked into the program is registered through the same checks
/// and draws through the ABI like a file's; its file in a directory searched
/// after is skipped, said once; a second registration of it is refused.
#[test]
fn a_linked_plugin_comes_first_its_file_is_skipped_and_it_draws_like_a_loaded_one() {
    let mut registry = Registry::linked([xr_compiler_glsl::PLUGIN]).expect("the linked compiler passes the checks");
    registry.load_dir(&plugin_dir());
    let glsl: Vec<_> = registry.plugins().iter().filter(|p| p.name == "xr-compiler-glsl").collect();
    assert_eq!(glsl.len(), 1, "one xr-compiler-glsl, never both");
    assert!(glsl[0].linked, "the linked one is used");
    let file = library("xr-compiler-glsl");
    let skipped: Vec<_> = registry.skipped().iter().filter(|s| s.path == file).collect();
    assert_eq!(skipped.len(), 1, "{:?}", registry.skipped());
    assert_eq!(skipped[0].reason, "plugin 'xr-compiler-glsl' is linked into this program");
    assert_eq!(registry.skipped().len(), 1, "only the linked plugin's file is passed over: {:?}", registry.skipped());
    // The device from its file, the compiler linked: a real draw through both.
    let pixel = glsl_centre_pixel(
        &registry,
        "green.frag",
        "#version 450 core\nlayout(location = 0) out vec4 o;\nvoid main() { o = vec4(0.0, 1.0, 0.0, 1.0); }\n",
    );
    assert_eq!(pixel, [0, 255, 0, 255]);

    let again = registry.link(xr_compiler_glsl::PLUGIN).expect_err("linked twice").to_string();
    assert!(again.contains("crate xr-compiler-glsl was refused: it is linked twice"), "{again}");
    let mut from_file = registry_of(&[&file]);
    let late = from_file.link(xr_compiler_glsl::PLUGIN).expect_err("its file came first").to_string();
    assert!(late.contains(&format!("was loaded from {} before it", file.display())), "{late}");
}

/// A registry of exactly these plugin files.
fn registry_of(files: &[&std::path::Path]) -> Registry {
    let mut registry = Registry::default();
    for file in files {
        registry.load_file(file);
    }
    registry
}

#[test]
fn a_program_that_finds_no_device_system_says_what_is_linked_where_it_looked_and_what_to_do() {
    let empty = temp_dir("no-device-plugins");
    let mut registry = Registry::linked([xr_compiler_glsl::PLUGIN]).unwrap();
    registry.load_dir(&empty);
    let error = match registry.open_device(DeviceKind::VULKAN, &DeviceOptions::default()) {
        Ok(_) => panic!("no device plugin is linked or in {}", empty.display()),
        Err(e) => e.to_string(),
    };
    for part in [
        "no device system for vulkan was found",
        "linked into this program: xr-compiler-glsl",
        &format!("searched: {}", empty.display()),
        "Registry::link",
        "XR_PLUGIN_PATH",
    ] {
        assert!(error.contains(part), "'{part}' missing from: {error}");
    }
}
