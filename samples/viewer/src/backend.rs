//! Choosing the back end at start-up, as an engine does: by name, or the
//! best device the registry's device systems open.

use clap::ValueEnum;
use xr_device::{DeviceCapabilities, DeviceKind, DeviceOptions};
use xr_host::Registry;

/// The back end asked for on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// OpenGL.
    Opengl,
    /// Vulkan.
    Vulkan,
    /// wgpu on Vulkan: a device kind its plugin declares, found by name.
    Wgpu,
    /// The best device found: a GPU before a software renderer; between
    /// equals, Vulkan (explicit, with a pipeline cache) before OpenGL.
    Auto,
}

/// The device kind to open, and why it was chosen.
pub fn choose(registry: &Registry, backend: Backend) -> anyhow::Result<(DeviceKind, String)> {
    match backend {
        Backend::Opengl => Ok((DeviceKind::OPENGL, "asked for with --backend opengl".to_owned())),
        Backend::Vulkan => Ok((DeviceKind::VULKAN, "asked for with --backend vulkan".to_owned())),
        Backend::Wgpu => {
            let kind = registry.device_kind_named("wgpu").ok_or_else(|| {
                anyhow::anyhow!("--backend wgpu: no loaded plugin opens a wgpu device (is xr-rhi-wgpu installed?)")
            })?;
            Ok((kind, "asked for with --backend wgpu".to_owned()))
        }
        Backend::Auto => best(registry),
    }
}

/// Opens a headless device of each kind, and ranks what opened.
fn best(registry: &Registry) -> anyhow::Result<(DeviceKind, String)> {
    let mut found: Vec<(DeviceKind, DeviceCapabilities)> = Vec::new();
    let mut missing = Vec::new();
    for kind in [DeviceKind::VULKAN, DeviceKind::OPENGL] {
        match registry.open_device(kind, &DeviceOptions::default()) {
            Ok(device) => match device.capabilities().into_result() {
                Ok(capabilities) => found.push((kind, capabilities)),
                Err(e) => missing.push(format!("{}: {e}", kind.name())),
            },
            Err(e) => missing.push(format!("{}: {e}", kind.name())),
        }
    }
    // Stable: Vulkan stays before OpenGL among devices of the same class.
    found.sort_by_key(|(_, capabilities)| is_software(capabilities));
    let Some((kind, capabilities)) = found.first() else {
        anyhow::bail!("no device system opened a device ({})", missing.join("; "));
    };
    let class = if is_software(capabilities) { "a software renderer" } else { "a GPU" };
    let mut why = format!("--backend auto: {} on {} ({class})", kind.name(), capabilities.renderer);
    let others: Vec<String> =
        found.iter().skip(1).map(|(k, c)| format!("{} on {}", k.name(), c.renderer)).chain(missing).collect();
    if !others.is_empty() {
        why.push_str(&format!("; also found: {}", others.join(", ")));
    }
    Ok((*kind, why))
}

/// Whether a device renders on the CPU (Mesa's llvmpipe and lavapipe).
fn is_software(capabilities: &DeviceCapabilities) -> bool {
    let renderer = capabilities.renderer.as_str().to_ascii_lowercase();
    capabilities.device_type.as_str() == "cpu"
        || ["llvmpipe", "softpipe", "lavapipe", "swiftshader"].iter().any(|name| renderer.contains(name))
}
