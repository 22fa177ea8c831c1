//! The formats a pipeline made at a draw was made for, as a usage log
//! keeps them and a warm reads them back.

use ash::vk;
use std::fmt;
use xr_device::AttachmentState;
use xr_vulkan_common::formats::{DEPTH_FORMAT, texture_format, vk_format};

/// The attachment formats a pipeline made at a draw was made for: what a
/// usage log keeps. Formats of XR's targets are named as the device
/// contract names them ([`AttachmentState`]: `colors=rgba16f,rgba8
/// depth`), so that a warm can make a target of them and draw; others (a
/// swapchain's) by their Vulkan names (`colors=B8G8R8A8_SRGB`). A render
/// pass of the device's own (input attachments read where dynamic
/// rendering cannot) is no draw state: it is not warmed.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DrawState {
    /// Colour attachment formats, in order.
    pub colors: Vec<vk::Format>,
    /// The depth attachment's, where there is one.
    pub depth: Option<vk::Format>,
}

impl DrawState {
    /// The state in the device contract's words, where it has them.
    fn attachments(&self) -> Option<AttachmentState> {
        let colors = self.colors.iter().map(|c| texture_format(*c)).collect::<Option<Vec<_>>>()?;
        match self.depth {
            None => Some(AttachmentState { colors, depth: false }),
            Some(DEPTH_FORMAT) => Some(AttachmentState { colors, depth: true }),
            Some(_) => None,
        }
    }
}

impl fmt::Display for DrawState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(attachments) = self.attachments() {
            return attachments.fmt(f);
        }
        let colors: Vec<String> = self.colors.iter().map(|c| format_name(*c)).collect();
        write!(f, "colors={}", colors.join(","))?;
        if let Some(depth) = self.depth {
            write!(f, " depth={}", format_name(depth))?;
        }
        Ok(())
    }
}

impl std::str::FromStr for DrawState {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        if let Ok(attachments) = text.parse::<AttachmentState>() {
            return Ok(DrawState {
                colors: attachments.colors.iter().map(|c| vk_format(*c)).collect(),
                depth: attachments.depth.then_some(DEPTH_FORMAT),
            });
        }
        let bad = |why: &str| format!("draw state '{text}': {why}");
        let mut state = DrawState { colors: Vec::new(), depth: None };
        for part in text.split_whitespace() {
            match part.split_once('=') {
                Some(("colors", list)) => {
                    state.colors = list
                        .split(',')
                        .map(|n| format_named(n).ok_or_else(|| bad(&format!("no format {n}"))))
                        .collect::<Result<_, _>>()?;
                }
                Some(("depth", name)) => {
                    state.depth = Some(format_named(name).ok_or_else(|| bad(&format!("no format {name}")))?);
                }
                _ => return Err(bad(&format!("'{part}' is neither colors= nor depth="))),
            }
        }
        if state.colors.is_empty() {
            return Err(bad("no colour attachment"));
        }
        Ok(state)
    }
}

/// A format's Vulkan name without its prefix (`R8G8B8A8_UNORM`).
fn format_name(format: vk::Format) -> String {
    format!("{format:?}")
}

/// The format named `name` as [`format_name`] writes it; the core formats
/// (0 to 184) are all there are in a draw state a plain target makes.
fn format_named(name: &str) -> Option<vk::Format> {
    (1..=184).map(vk::Format::from_raw).find(|f| format_name(*f) == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draw_state_reads_back_what_it_writes_in_the_contracts_words_where_it_can_and_refuses_the_rest_by_name() {
        let state = DrawState {
            colors: vec![vk::Format::R8G8B8A8_UNORM, vk::Format::R16G16B16A16_SFLOAT],
            depth: Some(vk::Format::D32_SFLOAT),
        };
        let text = state.to_string();
        assert_eq!(text, "colors=rgba8,rgba16f depth");
        assert_eq!(text.parse::<DrawState>(), Ok(state));
        let plain = DrawState { colors: vec![vk::Format::R32G32B32A32_SFLOAT], depth: None };
        assert_eq!(plain.to_string(), "colors=rgba32f");
        assert_eq!(plain.to_string().parse::<DrawState>(), Ok(plain));
        // A swapchain's format has no name in the contract: its Vulkan name.
        let swapchain = DrawState { colors: vec![vk::Format::B8G8R8A8_SRGB], depth: Some(vk::Format::D16_UNORM) };
        assert_eq!(swapchain.to_string(), "colors=B8G8R8A8_SRGB depth=D16_UNORM");
        assert_eq!(swapchain.to_string().parse::<DrawState>(), Ok(swapchain));
        assert_eq!(
            "colors=R9_UNORM".parse::<DrawState>(),
            Err("draw state 'colors=R9_UNORM': no format R9_UNORM".to_owned())
        );
        assert!("depth=D32_SFLOAT".parse::<DrawState>().unwrap_err().contains("no colour attachment"));
        assert!("stencil=S8_UINT colors=R8_UNORM".parse::<DrawState>().unwrap_err().contains("'stencil=S8_UINT'"));
    }
}
