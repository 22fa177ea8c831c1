//! XR's texture formats as Vulkan formats: the device makes its targets of
//! them, and the compiler names the attachment states of its pipelines by
//! them, so that a warm can make a target of a state a log recorded.

use ash::vk;
use xr_device::TextureFormat;

/// The Vulkan format of a texture format.
pub fn vk_format(format: TextureFormat) -> vk::Format {
    match format {
        TextureFormat::Rgba8 => vk::Format::R8G8B8A8_UNORM,
        TextureFormat::Rgba32Float => vk::Format::R32G32B32A32_SFLOAT,
        TextureFormat::Rgba16Float => vk::Format::R16G16B16A16_SFLOAT,
    }
}

/// The texture format whose Vulkan format ([`vk_format`]) is `format`.
pub fn texture_format(format: vk::Format) -> Option<TextureFormat> {
    TextureFormat::ALL.into_iter().find(|f| vk_format(*f) == format)
}

/// The depth attachment's format.
pub const DEPTH_FORMAT: vk::Format = vk::Format::D32_SFLOAT;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_texture_format_comes_back_from_its_vulkan_format() {
        for format in TextureFormat::ALL {
            assert_eq!(texture_format(vk_format(format)), Some(format));
        }
        assert_eq!(texture_format(vk::Format::B8G8R8A8_SRGB), None);
    }
}
