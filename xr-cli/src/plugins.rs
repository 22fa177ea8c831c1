//! `xr plugins`: what was found, what it can do here, and what was skipped.

use serde::Serialize;
use std::path::PathBuf;
use xr_device::{DeviceCapabilities, DeviceOptions};
use xr_host::Registry;
use xr_sourcebuild::{BuildSystemInfo, SourceBuildSystemBox};

#[derive(Serialize)]
struct Report {
    directories: Vec<PathBuf>,
    plugins: Vec<PluginReport>,
    skipped: Vec<SkippedReport>,
}

#[derive(Serialize)]
struct PluginReport {
    name: String,
    version: String,
    path: PathBuf,
    device_systems: Vec<DeviceSystemReport>,
    build_systems: Vec<BuildSystemReport>,
}

#[derive(Serialize)]
struct DeviceSystemReport {
    name: String,
    kind: &'static str,
    description: String,
    device: Result<CapabilitiesReport, String>,
}

#[derive(Serialize)]
struct CapabilitiesReport {
    api: String,
    vendor: String,
    renderer: String,
    driver_version: String,
    shading_language_version: String,
    program_binary_formats: Vec<u32>,
    gl_spirv: bool,
    separate_shader_objects: bool,
    device_type: String,
    pipeline_cache_uuid: String,
    extensions: Vec<String>,
}

#[derive(Serialize)]
struct BuildSystemReport {
    name: String,
    description: String,
    availability: Vec<&'static str>,
    attachable: Vec<&'static str>,
    languages: Vec<String>,
    stages: Vec<&'static str>,
    priority: i32,
    /// What changes its offline output: part of every offline key.
    compiler_identity: String,
    /// The (language → target) pairs it compiles without a device.
    compiles: Vec<CompileReport>,
    /// The targets it loads on a device, each with its load path.
    loads: Vec<LoadReport>,
    /// What an instance attached to each device opened here offers.
    on_devices: Vec<LiveAvailability>,
}

#[derive(Serialize)]
struct CompileReport {
    language: String,
    target: String,
    options: Vec<OptionReport>,
    /// How its compiles reach files besides the stage's (what a farm's
    /// action carries): `includes`, `imports`, `stage-only` or `unknown`.
    reach: &'static str,
}

#[derive(Serialize, Clone, PartialEq)]
struct OptionReport {
    name: String,
    values: Vec<String>,
    default: String,
    help: String,
}

#[derive(Serialize)]
struct LoadReport {
    target: String,
    path: &'static str,
}

#[derive(Serialize)]
struct LiveAvailability {
    device_system: String,
    availability: Result<Vec<&'static str>, String>,
}

#[derive(Serialize)]
struct SkippedReport {
    path: PathBuf,
    reason: String,
}

pub fn run(json: bool, plugin_dirs: Vec<PathBuf>, all_extensions: bool) -> anyhow::Result<()> {
    let dirs = if plugin_dirs.is_empty() { Registry::default_dirs() } else { plugin_dirs };
    let registry = Registry::load_dirs(dirs);
    let report = build_report(&registry);
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_text(&report, all_extensions);
    }
    Ok(())
}

/// An opened device, kept open while build systems are attached to it.
struct OpenDevice {
    system_name: String,
    device: xr_device::DeviceBox,
    capabilities: DeviceCapabilities,
}

fn build_report(registry: &Registry) -> Report {
    let mut open_devices = Vec::new();
    let mut plugins: Vec<PluginReport> = registry
        .plugins()
        .iter()
        .map(|plugin| PluginReport {
            name: plugin.name.clone(),
            version: plugin.version.clone(),
            path: plugin.path.clone(),
            device_systems: plugin
                .device_systems
                .iter()
                .map(|(info, system)| {
                    let opened = system.open(&DeviceOptions::default()).into_result().and_then(|device| {
                        let capabilities = device.capabilities().into_result()?;
                        Ok((device, capabilities))
                    });
                    let device = match opened {
                        Ok((device, capabilities)) => {
                            let report = capabilities_report(&capabilities);
                            open_devices.push(OpenDevice { system_name: info.name.to_string(), device, capabilities });
                            Ok(report)
                        }
                        Err(e) => Err(e.to_string()),
                    };
                    DeviceSystemReport {
                        name: info.name.to_string(),
                        kind: info.kind.name(),
                        description: info.description.to_string(),
                        device,
                    }
                })
                .collect(),
            build_systems: Vec::new(),
        })
        .collect();
    for (report, plugin) in plugins.iter_mut().zip(registry.plugins()) {
        report.build_systems = plugin
            .build_systems
            .iter()
            .map(|(info, system)| build_system_report(info, system, &open_devices))
            .collect();
    }
    Report {
        directories: registry.searched().to_vec(),
        plugins,
        skipped: registry
            .skipped()
            .iter()
            .map(|s| SkippedReport { path: s.path.clone(), reason: s.reason.clone() })
            .collect(),
    }
}

fn capabilities_report(c: &DeviceCapabilities) -> CapabilitiesReport {
    CapabilitiesReport {
        api: format!("{} {}.{}", c.kind.api_name(), c.api_major, c.api_minor),
        vendor: c.vendor.to_string(),
        renderer: c.renderer.to_string(),
        driver_version: c.driver_version.to_string(),
        shading_language_version: c.shading_language_version.to_string(),
        program_binary_formats: c.program_binary_formats.to_vec(),
        gl_spirv: c.gl_spirv,
        separate_shader_objects: c.separate_shader_objects,
        device_type: c.device_type.to_string(),
        pipeline_cache_uuid: c.pipeline_cache_uuid.iter().map(|b| format!("{b:02x}")).collect(),
        extensions: c.extensions.iter().map(|e| e.to_string()).collect(),
    }
}

fn build_system_report(
    info: &BuildSystemInfo,
    system: &SourceBuildSystemBox,
    devices: &[OpenDevice],
) -> BuildSystemReport {
    let on_devices = devices
        .iter()
        .filter(|d| info.attachable.contains(&d.capabilities.kind))
        .map(|d| {
            let availability = d
                .device
                .native_handles()
                .into_result()
                .and_then(|handles| system.attach(&handles, &d.capabilities).into_result())
                .and_then(|attached| attached.availability().into_result())
                .map(|flags| flags.names())
                .map_err(|e| e.to_string());
            LiveAvailability { device_system: d.system_name.clone(), availability }
        })
        .collect();
    BuildSystemReport {
        name: info.name.to_string(),
        description: info.description.to_string(),
        availability: info.availability.names(),
        attachable: info.attachable.iter().map(|k| k.name()).collect(),
        languages: info.languages.iter().map(|l| l.name.to_string()).collect(),
        stages: info.stages.iter().map(|s| s.name()).collect(),
        priority: info.priority,
        compiler_identity: info.compiler_identity.to_string(),
        compiles: info
            .compiles
            .iter()
            .map(|p| CompileReport {
                language: p.language.to_string(),
                target: p.target.to_string(),
                options: p
                    .options
                    .iter()
                    .map(|o| OptionReport {
                        name: o.name.to_string(),
                        values: o.values.iter().map(|v| v.pattern.to_string()).collect(),
                        default: o.default.to_string(),
                        help: o.help.to_string(),
                    })
                    .collect(),
                reach: p.reach.name(),
            })
            .collect(),
        loads: info.loads.iter().map(|l| LoadReport { target: l.target.to_string(), path: l.path.name() }).collect(),
        on_devices,
    }
}

fn print_text(report: &Report, all_extensions: bool) {
    let dirs: Vec<String> = report.directories.iter().map(|d| d.display().to_string()).collect();
    println!("plugin directories: {}", dirs.join(", "));
    if report.plugins.is_empty() {
        println!("no plugins found");
    }
    for plugin in &report.plugins {
        println!("\nplugin {} {}  ({})", plugin.name, plugin.version, plugin.path.display());
        for system in &plugin.device_systems {
            println!("  device system {} [{}]: {}", system.name, system.kind, system.description);
            match &system.device {
                Ok(c) => {
                    println!("    device: {} — {} / {}", c.api, c.vendor, c.renderer);
                    println!("    driver: {}; shading language {}", c.driver_version, c.shading_language_version);
                    // What the device reports, whatever its kind: a pipeline cache
                    // identity, or program binaries and GL extensions for build systems.
                    if !c.device_type.is_empty() || c.pipeline_cache_uuid.chars().any(|d| d != '0') {
                        println!("    device type: {}; pipeline cache UUID: {}", c.device_type, c.pipeline_cache_uuid);
                    }
                    if !c.program_binary_formats.is_empty() || c.gl_spirv || c.separate_shader_objects {
                        let formats: Vec<String> =
                            c.program_binary_formats.iter().map(|f| format!("0x{f:x}")).collect();
                        println!(
                            "    program binary formats: {} [{}]; ARB_gl_spirv: {}; separate shader objects: {}",
                            formats.len(),
                            formats.join(", "),
                            yes_no(c.gl_spirv),
                            yes_no(c.separate_shader_objects)
                        );
                    }
                    if all_extensions {
                        println!("    extensions: {}", c.extensions.join(" "));
                    } else {
                        println!("    extensions: {} (--extensions lists them)", c.extensions.len());
                    }
                }
                Err(e) => println!("    unavailable here: {e}"),
            }
        }
        for system in &plugin.build_systems {
            println!("  build system {}: {}", system.name, system.description);
            println!("    flags: {}", flags(&system.availability));
            println!(
                "    attaches to: {}; languages: {}; stages: {}; priority {}",
                system.attachable.join(", "),
                system.languages.join(", "),
                system.stages.join(", "),
                system.priority
            );
            if !system.compiles.is_empty() {
                println!("    compiles: {}", compiles(&system.compiles));
                print_options(&system.compiles);
            }
            if !system.loads.is_empty() {
                let loads: Vec<String> = system.loads.iter().map(|l| format!("{} ({})", l.target, l.path)).collect();
                println!("    loads: {}", loads.join(", "));
            }
            for live in &system.on_devices {
                match &live.availability {
                    Ok(names) => println!("    on {}: {}", live.device_system, flags(names)),
                    Err(e) => println!("    on {}: unavailable: {e}", live.device_system),
                }
            }
        }
    }
    if !report.skipped.is_empty() {
        println!("\nskipped:");
        for skipped in &report.skipped {
            println!("  {}: {}", skipped.path.display(), skipped.reason);
        }
    }
}

/// `glsl → gl-spirv, vk-spirv; hlsl → vk-spirv`: the targets of each language.
fn compiles(pairs: &[CompileReport]) -> String {
    let mut by_language: Vec<(&str, Vec<&str>)> = Vec::new();
    for pair in pairs {
        match by_language.iter_mut().find(|(l, _)| *l == pair.language) {
            Some((_, targets)) => targets.push(&pair.target),
            None => by_language.push((&pair.language, vec![&pair.target])),
        }
    }
    by_language.iter().map(|(l, targets)| format!("{l} → {}", targets.join(", "))).collect::<Vec<_>>().join("; ")
}

/// Each option once, with the pairs that take it: `--option NAME=VALUE`
/// for `xr compile`, `options` in a manifest.
fn print_options(pairs: &[CompileReport]) {
    let mut options: Vec<(&OptionReport, Vec<String>)> = Vec::new();
    for pair in pairs {
        for option in &pair.options {
            let taker = format!("{} → {}", pair.language, pair.target);
            match options.iter_mut().find(|(o, _)| *o == option) {
                Some((_, takers)) => takers.push(taker),
                None => options.push((option, vec![taker])),
            }
        }
    }
    if options.is_empty() {
        return;
    }
    println!("    options (--option NAME=VALUE; `options` in xr.toml):");
    for (option, takers) in options {
        let values = if option.values.is_empty() { "TEXT".to_owned() } else { option.values.join(" | ") };
        let default = if option.default.is_empty() { String::new() } else { format!(", default {}", option.default) };
        println!("      {} = {values}{default} [{}]: {}", option.name, takers.join(", "), option.help);
    }
}

fn flags(names: &[&str]) -> String {
    if names.is_empty() { "(none)".to_owned() } else { names.join(" | ") }
}

fn yes_no(value: bool) -> &'static str {
    if value { "yes" } else { "no" }
}

/// `xr --version`: XR's version and the plugin interfaces'; with
/// `verbose`, the plugin directories in search order and every plugin found.
pub fn print_version(verbose: bool) {
    println!("xr {}", env!("CARGO_PKG_VERSION"));
    let interfaces = &xr_plugin::INTERFACE_VERSIONS;
    println!(
        "plugin interfaces: root module {}, device systems {}, build systems {}",
        interfaces.root, interfaces.device, interfaces.build
    );
    if !verbose {
        return;
    }
    let registry = Registry::discover();
    for dir in registry.searched() {
        println!("plugin directory {}", dir.display());
    }
    for plugin in registry.plugins() {
        println!("plugin {} {} ({})", plugin.name, plugin.version, plugin.path.display());
    }
    for skipped in registry.skipped() {
        println!("skipped {}: {}", skipped.path.display(), skipped.reason);
    }
}
