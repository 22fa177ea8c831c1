//! Textures, samplers and buffers on a device, and how a program's
//! constant table is handed one to bind ([`ResourceBinding`]).

use abi_stable::StableAbi;

/// A 2D texture created by [`crate::Device::create_texture`].
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TextureId(pub u32);

/// A sampler created by [`crate::Device::create_sampler`].
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SamplerId(pub u32);

/// A buffer created by [`crate::Device::create_buffer`].
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BufferId(pub u32);

/// The pixel format of a texture.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextureFormat {
    /// 8-bit unsigned normalised RGBA (`rgba8` in an image layout).
    Rgba8,
    /// 32-bit float RGBA (`rgba32f`).
    Rgba32Float,
    /// 16-bit float RGBA (`rgba16f`): a G-buffer's normals and positions.
    Rgba16Float,
}

impl TextureFormat {
    /// Every format.
    pub const ALL: [TextureFormat; 3] = [TextureFormat::Rgba8, TextureFormat::Rgba32Float, TextureFormat::Rgba16Float];

    /// Bytes per pixel.
    pub fn bytes_per_pixel(self) -> usize {
        match self {
            TextureFormat::Rgba8 => 4,
            TextureFormat::Rgba32Float => 16,
            TextureFormat::Rgba16Float => 8,
        }
    }

    /// Its name, as an image layout writes it: `rgba8`, `rgba32f`, `rgba16f`.
    pub fn name(self) -> &'static str {
        match self {
            TextureFormat::Rgba8 => "rgba8",
            TextureFormat::Rgba32Float => "rgba32f",
            TextureFormat::Rgba16Float => "rgba16f",
        }
    }

    /// The format named `name` ([`TextureFormat::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// The attachments of a render target, as a usage log names the state a
/// program was drawn in: `colors=rgba16f,rgba8 depth` (no `depth` without
/// a depth attachment). A build system that makes an object per set of
/// attachment formats (a Vulkan pipeline) names the states it made objects
/// for this way where the device's formats have names here, so that a warm
/// can make a target of them and draw; it may name others in its own words.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AttachmentState {
    /// Colour attachment formats, in order.
    pub colors: Vec<TextureFormat>,
    /// Whether there is a depth attachment.
    pub depth: bool,
}

impl std::fmt::Display for AttachmentState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let colors: Vec<&str> = self.colors.iter().map(|c| c.name()).collect();
        write!(f, "colors={}{}", colors.join(","), if self.depth { " depth" } else { "" })
    }
}

impl std::str::FromStr for AttachmentState {
    type Err = String;

    /// Reads what [`AttachmentState`]'s `Display` writes; anything else is
    /// an error naming the part it could not read.
    fn from_str(text: &str) -> Result<Self, String> {
        let mut parts = text.split(' ');
        let colors = parts
            .next()
            .and_then(|p| p.strip_prefix("colors="))
            .ok_or_else(|| format!("'{text}' does not start with colors="))?;
        let colors = colors
            .split(',')
            .map(|name| TextureFormat::from_name(name).ok_or_else(|| format!("'{text}': no texture format '{name}'")))
            .collect::<Result<Vec<_>, _>>()?;
        let depth = match parts.next() {
            None => false,
            Some("depth") => true,
            Some(other) => return Err(format!("'{text}': '{other}' is not depth")),
        };
        match parts.next() {
            None => Ok(Self { colors, depth }),
            Some(extra) => Err(format!("'{text}': '{extra}' after the attachments")),
        }
    }
}

/// What a texture is.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TextureDesc {
    /// Width of level 0.
    pub width: u32,
    /// Height of level 0.
    pub height: u32,
    /// Its format.
    pub format: TextureFormat,
    /// Mip levels; 0 for the full chain down to 1 × 1.
    pub mip_levels: u32,
    /// Also writable by compute shaders as a storage image (`image2D`).
    pub storage: bool,
}

impl TextureDesc {
    /// The number of levels this texture has.
    pub fn levels(&self) -> u32 {
        let full = 32 - self.width.max(self.height).max(1).leading_zeros();
        if self.mip_levels == 0 { full } else { self.mip_levels.min(full) }
    }

    /// The size of `level`.
    pub fn level_size(&self, level: u32) -> (u32, u32) {
        ((self.width >> level).max(1), (self.height >> level).max(1))
    }

    /// Checks the size, and that `pixels` bytes are exactly the first
    /// `levels_given` levels.
    pub fn check_pixels(&self, pixels: usize, levels_given: u32) -> Result<(), crate::XrError> {
        use crate::XrError;
        if self.width == 0 || self.height == 0 || self.width > 16384 || self.height > 16384 {
            return Err(XrError::invalid_input(format!("texture size {}x{} is out of range", self.width, self.height)));
        }
        if levels_given == 0 || levels_given > self.levels() {
            return Err(XrError::invalid_input(format!(
                "{levels_given} level(s) given for a texture of {} level(s)",
                self.levels()
            )));
        }
        let expected = self.bytes(levels_given);
        if pixels != expected {
            return Err(XrError::invalid_input(format!(
                "{pixels} bytes given for {levels_given} level(s) of a {}x{} {:?} texture, which take {expected}",
                self.width, self.height, self.format
            )));
        }
        Ok(())
    }

    /// Bytes of levels `0..levels`, tightly packed.
    pub fn bytes(&self, levels: u32) -> usize {
        self.packed_levels(levels).map(|level| level.bytes.len()).sum()
    }

    /// Levels `0..levels` as tightly packed pixels hold them, each after
    /// the one above: its size, and where its bytes are.
    pub fn packed_levels(&self, levels: u32) -> impl Iterator<Item = PackedLevel> + '_ {
        let mut at = 0;
        (0..levels).map(move |level| {
            let (width, height) = self.level_size(level);
            let len = width as usize * height as usize * self.format.bytes_per_pixel();
            at += len;
            PackedLevel { level, width, height, bytes: at - len..at }
        })
    }

    /// The first `levels_given` levels of this texture in `pixels`, once
    /// [`check_pixels`](Self::check_pixels) passes: what a device uploads
    /// to make it.
    pub fn given_levels<'a>(&'a self, pixels: &'a [u8], levels_given: u32) -> Result<GivenLevels<'a>, crate::XrError> {
        self.check_pixels(pixels.len(), levels_given)?;
        Ok(GivenLevels { desc: self, pixels, count: levels_given })
    }
}

/// One level of a texture in tightly packed pixels
/// ([`TextureDesc::packed_levels`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackedLevel {
    /// The level.
    pub level: u32,
    /// Its width.
    pub width: u32,
    /// Its height.
    pub height: u32,
    /// Where its bytes are among the pixels.
    pub bytes: std::ops::Range<usize>,
}

/// A texture's first levels, tightly packed, checked against its
/// description ([`TextureDesc::given_levels`]).
#[derive(Clone, Copy, Debug)]
pub struct GivenLevels<'a> {
    desc: &'a TextureDesc,
    pixels: &'a [u8],
    count: u32,
}

impl<'a> GivenLevels<'a> {
    /// The texture.
    pub fn desc(&self) -> &'a TextureDesc {
        self.desc
    }

    /// The levels' pixels, exactly as many bytes as they take (checked when
    /// made: [`TextureDesc::given_levels`] is the only way to one).
    pub fn pixels(&self) -> &'a [u8] {
        self.pixels
    }

    /// How many levels are given: at least one, at most the texture's.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Each level given, with its pixels.
    pub fn levels(&self) -> impl Iterator<Item = (PackedLevel, &'a [u8])> + 'a {
        let pixels = self.pixels;
        self.desc.packed_levels(self.count).map(move |level| {
            let bytes = &pixels[level.bytes.clone()];
            (level, bytes)
        })
    }
}

/// Texel filtering.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Filter {
    /// The nearest texel (level).
    Nearest,
    /// Linear between texels (levels).
    Linear,
}

/// What happens outside [0, 1].
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Wrap {
    /// Tile.
    Repeat,
    /// Tile, mirrored every other time.
    MirroredRepeat,
    /// The edge texel.
    ClampToEdge,
}

/// How a sampler reads a texture.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SamplerDesc {
    /// Magnification and minification filter.
    pub filter: Filter,
    /// Between mip levels.
    pub mipmap: Filter,
    /// In both directions.
    pub wrap: Wrap,
}

/// What a buffer is for; bits.
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BufferUsage(pub u32);

impl BufferUsage {
    /// Vertices ([`crate::DrawCall::vertex_buffer`] takes vertex buffers made by
    /// `create_vertex_buffer`; this flag is for engines that draw themselves).
    pub const VERTEX: Self = Self(1);
    /// 32-bit indices of an indexed draw.
    pub const INDEX: Self = Self(2);
    /// A uniform block's storage.
    pub const UNIFORM: Self = Self(4);
    /// A storage buffer (`buffer` blocks, read and written by shaders).
    pub const STORAGE: Self = Self(8);

    /// Both sets of bits.
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether every bit of `other` is set.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

/// The kind of a resource a program binds.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResourceKind {
    /// A texture read through a sampler (`sampler2D`, D3D `Texture2D` + `SamplerState` combined).
    CombinedImageSampler,
    /// A texture without a sampler (`texture2D`, HLSL `Texture2D`).
    SampledImage,
    /// A sampler on its own (`sampler`, HLSL `SamplerState`).
    Sampler,
    /// A texture written by a shader (`image2D`, HLSL `RWTexture2D`).
    StorageImage,
    /// A uniform block in a buffer the caller owns.
    UniformBuffer,
    /// A storage buffer (`buffer`, HLSL `RWStructuredBuffer`).
    StorageBuffer,
    /// A top-level ray tracing acceleration structure
    /// (`accelerationStructureEXT`, HLSL `RaytracingAccelerationStructure`),
    /// traced by ray tracing stages and read by ray queries in any stage;
    /// bound from [`crate::Device::acceleration_structure_binding`].
    AccelerationStructure,
}

impl ResourceKind {
    /// How a message names it.
    pub fn name(self) -> &'static str {
        match self {
            ResourceKind::CombinedImageSampler => "texture with sampler",
            ResourceKind::SampledImage => "texture",
            ResourceKind::Sampler => "sampler",
            ResourceKind::StorageImage => "storage image",
            ResourceKind::UniformBuffer => "uniform buffer",
            ResourceKind::StorageBuffer => "storage buffer",
            ResourceKind::AccelerationStructure => "acceleration structure",
        }
    }

    /// Whether a texture (and perhaps a sampler) is bound to it, rather than
    /// a buffer or an acceleration structure.
    pub fn takes_texture(self) -> bool {
        !matches!(self, ResourceKind::UniformBuffer | ResourceKind::StorageBuffer | ResourceKind::AccelerationStructure)
    }
}

/// What a constant table needs to bind one of a device's textures,
/// buffers or acceleration structures: its native handles and the device
/// it belongs to. Made by [`crate::Device::texture_binding`],
/// [`crate::Device::buffer_binding`] and
/// [`crate::Device::acceleration_structure_binding`].
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ResourceBinding {
    /// The device that made it (a table refuses another device's objects).
    pub device: u64,
    /// Texture or buffer.
    pub is_texture: bool,
    /// GL texture or buffer name; `VkImageView` or `VkBuffer`.
    pub handle: u64,
    /// The object under the view: `VkImage` of a Vulkan texture; otherwise `handle`.
    pub object: u64,
    /// GL sampler name or `VkSampler`; 0 for none.
    pub sampler: u64,
    /// A buffer's size in bytes; a texture's format as [`TextureFormat`] index.
    pub size: u64,
    /// A texture that compute shaders may write (`TextureDesc::storage`).
    pub storage: bool,
    /// A top-level acceleration structure (`handle` is the
    /// `VkAccelerationStructureKHR`; `is_texture` is false).
    pub acceleration_structure: bool,
}

impl ResourceBinding {
    /// How a message names what it binds.
    pub fn what(&self) -> &'static str {
        match (self.is_texture, self.acceleration_structure) {
            (true, _) => "texture",
            (false, true) => "acceleration structure",
            (false, false) => "buffer",
        }
    }
}

/// A dispatch of a compute program.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ComputeCall {
    /// A program built from one compute stage.
    pub program: crate::ProgramRef,
    /// Work groups in x, y and z.
    pub groups: [u32; 3],
}

/// Checks that `len` bytes written at `offset` fit buffer `id` of `size`
/// bytes, before a device writes them.
pub fn check_buffer_write(id: BufferId, offset: u64, len: usize, size: usize) -> Result<(), crate::XrError> {
    if offset.saturating_add(len as u64) > size as u64 {
        return Err(crate::XrError::invalid_input(format!(
            "{len} bytes at {offset} do not fit buffer {} ({size} bytes)",
            id.0
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mip_chains_end_at_one_pixel() {
        let desc = TextureDesc { width: 64, height: 16, format: TextureFormat::Rgba8, mip_levels: 0, storage: false };
        assert_eq!(desc.levels(), 7);
        assert_eq!(desc.level_size(5), (2, 1));
        assert_eq!(desc.level_size(6), (1, 1));
        assert_eq!(desc.bytes(2), 64 * 16 * 4 + 32 * 8 * 4);
        let packed: Vec<(u32, u32, u32, std::ops::Range<usize>)> =
            desc.packed_levels(3).map(|l| (l.level, l.width, l.height, l.bytes)).collect();
        assert_eq!(packed, [(0, 64, 16, 0..4096), (1, 32, 8, 4096..5120), (2, 16, 4, 5120..5376)]);
        let capped = TextureDesc { mip_levels: 20, ..desc };
        assert_eq!(capped.levels(), 7);
        let float = TextureDesc { format: TextureFormat::Rgba32Float, mip_levels: 1, ..desc };
        assert_eq!(float.bytes(1), 64 * 16 * 16);
    }
}

#[cfg(test)]
mod attachment_state_tests {
    use super::*;

    #[test]
    fn an_attachment_state_reads_back_what_it_writes_and_nothing_else() {
        let state = AttachmentState { colors: vec![TextureFormat::Rgba8, TextureFormat::Rgba16Float], depth: true };
        assert_eq!(state.to_string(), "colors=rgba8,rgba16f depth");
        assert_eq!("colors=rgba8,rgba16f depth".parse::<AttachmentState>(), Ok(state));
        let plain = AttachmentState { colors: vec![TextureFormat::Rgba32Float], depth: false };
        assert_eq!(plain.to_string().parse::<AttachmentState>(), Ok(plain));
        for bad in ["colors=R8G8B8A8_UNORM", "depth", "colors=rgba8 stencil", "colors=rgba8 depth depth", ""] {
            assert!(bad.parse::<AttachmentState>().is_err(), "{bad}");
        }
    }
}
