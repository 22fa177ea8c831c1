//! An engine that adopts XR, whole: it picks a device at start-up from its
//! arguments (`opengl` or `vulkan`), loads the shaders its build script
//! built by name and variant, sets a constant through the typed bindings,
//! draws, reads the pixels back and checks them.
//!
//! ```text
//! xr-engine-template vulkan                 # the linked plugins only
//! xr-engine-template opengl --plugin-dir D  # and the plugin files in D
//! xr-engine-template --list                 # what is there to pick from
//! ```

use std::{path::PathBuf, process::ExitCode};
use xr_library::{
    DeviceLoader, Registry, ShaderLibrary,
    xr_device::{DeviceBox, DeviceOptions, DrawCall, VertexAttribute, VertexLayout},
};

/// The typed bindings of `shaders/xr.toml`, written by the build script.
mod shaders {
    include!(concat!(env!("OUT_DIR"), "/shaders.rs"));
}

/// The store the build script built.
const STORE: &str = concat!(env!("OUT_DIR"), "/xr-store");
/// The constant every draw sets.
const TINT: [f32; 4] = [0.25, 0.5, 0.75, 1.0];
/// The render target's side in pixels.
const SIZE: u32 = 16;
/// Two triangles covering the target, in 0..1 (the vertex stage maps them to clip space).
const QUAD: [f32; 12] = [0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0];

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("xr-engine-template: {error}");
            ExitCode::FAILURE
        }
    }
}

/// What the command line asks.
struct Args {
    device: Option<String>,
    plugin_dirs: Vec<PathBuf>,
    list: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args { device: None, plugin_dirs: Vec::new(), list: false };
    let mut given = std::env::args().skip(1);
    while let Some(arg) = given.next() {
        match arg.as_str() {
            "--list" => args.list = true,
            "--plugin-dir" => args.plugin_dirs.push(given.next().ok_or("--plugin-dir needs a directory")?.into()),
            device if !device.starts_with('-') && args.device.is_none() => args.device = Some(device.to_owned()),
            other => {
                return Err(format!(
                    "unexpected argument '{other}' (usage: [opengl|vulkan] [--plugin-dir DIR] [--list])"
                ));
            }
        }
    }
    Ok(args)
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    // The plugins linked into the engine, then any found in the directories given.
    let mut registry = Registry::linked([
        xr_rhi_opengl::PLUGIN,
        xr_rhi_vulkan::PLUGIN,
        xr_compiler_glsl::PLUGIN,
        xr_compiler_gl_spirv::PLUGIN,
        xr_compiler_vk_spirv::PLUGIN,
    ])
    .map_err(|e| e.to_string())?;
    for dir in &args.plugin_dirs {
        registry.load_dir(dir);
    }
    if args.list {
        list(&registry);
        return Ok(());
    }
    let name = args.device.as_deref().unwrap_or("vulkan");
    let Some(kind) = registry.device_kind_named(name) else {
        let kinds: Vec<&str> = registry.device_kinds().iter().map(|k| k.name()).collect();
        return Err(format!("no device system opens '{name}' (the kinds here: {})", kinds.join(", ")));
    };
    let mut device = registry.open_device(kind, &DeviceOptions::default()).map_err(|e| e.to_string())?;
    let library = ShaderLibrary::open(STORE.as_ref()).map_err(|e| e.to_string())?;
    let mut loader = DeviceLoader::attach(&registry, &device, &library).map_err(|e| e.to_string())?;
    let result = draw_every_variant(&mut device, &mut loader, &library);
    // The loaded programs and the loader's build systems go before the device.
    drop(loader);
    let renderer = result?;
    println!("xr-engine-template: every variant of paint drew the expected pixels on {renderer}");
    Ok(())
}

/// Draws each variant of `paint` with the tint set and checks its pixels.
fn draw_every_variant(
    device: &mut DeviceBox,
    loader: &mut DeviceLoader,
    library: &ShaderLibrary,
) -> Result<String, String> {
    let fail = |e: &dyn std::fmt::Display| e.to_string();
    let target = device.create_render_target(SIZE, SIZE).into_result().map_err(|e| fail(&e))?;
    let layout =
        VertexLayout { stride: 2, attributes: vec![VertexAttribute { location: 0, components: 2, offset: 0 }].into() };
    let quad = device.create_vertex_buffer(QUAD.as_slice().into(), &layout).into_result().map_err(|e| fail(&e))?;
    for variant in shaders::paint::Variant::ALL {
        let request = shaders::paint::request(&variant, &Default::default(), &[]);
        let mut loaded = loader.load(library, &request).map_err(|e| fail(&e))?;
        let constants = shaders::paint::Constants::resolve(&loaded.built.constants).map_err(|e| fail(&e))?;
        constants.tint.set(&mut loaded.built.constants, &TINT).map_err(|e| fail(&e))?;
        device.clear(target, &[0.0, 0.0, 0.0, 1.0]).into_result().map_err(|e| fail(&e))?;
        let call = DrawCall::triangles(target, loaded.built.program, quad, 6);
        device.draw(&call).into_result().map_err(|e| fail(&e))?;
        let image = device.read_pixels(target).into_result().map_err(|e| fail(&e))?;
        let inverted =
            variant.values().iter().any(|(axis, value)| *axis == "INVERT" && (*value == "1" || *value == "true"));
        let rgb = TINT.map(|c| if inverted { 1.0 - c } else { c });
        let expected = [rgb[0], rgb[1], rgb[2], 1.0].map(|c| (c * 255.0).round() as i32);
        let got = image.pixel(SIZE / 2, SIZE / 2).ok_or("the target has no centre pixel")?;
        if got.iter().zip(expected).any(|(g, e)| (i32::from(*g) - e).abs() > 2) {
            return Err(format!(
                "paint {} ({} through {}) drew {got:?} where {expected:?} was expected",
                loaded.variant, loaded.target, loaded.loader
            ));
        }
        println!(
            "paint {}: {} through {} ({:?}), pixel {got:?}",
            loaded.variant, loaded.target, loaded.loader, loaded.path
        );
    }
    Ok(device.capabilities().map(|c| c.renderer.to_string()).into_result().unwrap_or_default())
}

/// Every plugin, where it comes from, and what it offers.
fn list(registry: &Registry) {
    for plugin in registry.plugins() {
        let from = if plugin.linked { "linked".to_owned() } else { plugin.path.display().to_string() };
        let devices: Vec<&str> = plugin.device_systems.iter().map(|(info, _)| info.kind.name()).collect();
        let builds: Vec<&str> = plugin.build_systems.iter().map(|(info, _)| info.name.as_str()).collect();
        println!(
            "{} {} ({from}): devices [{}], build systems [{}]",
            plugin.name,
            plugin.version,
            devices.join(", "),
            builds.join(", ")
        );
    }
    for skipped in registry.skipped() {
        println!("skipped {}: {}", skipped.path.display(), skipped.reason);
    }
}
