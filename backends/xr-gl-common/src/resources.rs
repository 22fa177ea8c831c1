//! The textures, storage images and storage buffers of a GL program, each
//! at binding points the device handed to this program alone, so that a
//! texture bound once stays bound through every later draw.
//!
//! GL keeps one global table of texture units, image units and buffer
//! binding points. A program's samplers name units; if two programs used
//! the same unit, binding one's texture would change the other's. So every
//! resource element gets a point of its own from the device
//! (`GlLoader::allocate_binding`), given back when the program goes: GLSL
//! programs are pointed at theirs after linking (`glProgramUniform1i` on a
//! sampler, `glShaderStorageBlockBinding`), SPIR-V modules get theirs
//! written into their `Binding` decorations before the driver sees them.
//! A program needing more than the device has is an error naming both.

use crate::gl_ext::PipelineFns;
use glow::HasContext;
use std::num::NonZeroU32;
use xr_device::{GlBindingSpace, GlLoader, ResourceBinding, ResourceKind, TextureFormat, XrError};
use xr_sourcebuild::{ResourceInfo, check_binding};

/// One resource: its description and the point of each array element.
pub struct GlResource {
    /// What the table lists.
    pub info: ResourceInfo,
    /// Each element's point.
    pub points: Vec<u32>,
    /// Which elements have been bound.
    pub bound: Vec<bool>,
    /// What the shader samples or writes is a 2D texture (the devices make
    /// 2D textures; a cube map or array sampler cannot take one).
    pub two_d: bool,
}

/// A program's resources with the binding points it holds.
#[derive(Default)]
pub struct ProgramResources {
    /// The resources, as the table lists them.
    pub resources: Vec<GlResource>,
    /// Every point taken from the device for them.
    pub points: Vec<(GlBindingSpace, u32)>,
}

/// Binding points taken from the device for one program.
pub struct Points<'a> {
    loader: &'a GlLoader,
    program: &'a str,
    taken: Vec<(GlBindingSpace, u32)>,
}

impl<'a> Points<'a> {
    /// Takes points for the program named `program`.
    pub fn new(loader: &'a GlLoader, program: &'a str) -> Self {
        Self { loader, program, taken: Vec::new() }
    }

    /// `count` points of `space` for the resource `name`.
    pub fn take(&mut self, space: GlBindingSpace, count: u32, name: &str) -> Result<Vec<u32>, XrError> {
        let mut points = Vec::new();
        for _ in 0..count {
            // SAFETY: the loader takes any context: the device looks it up among its open devices and never dereferences it, so a closed device ignores the call.
            let point = unsafe { (self.loader.allocate_binding)(self.loader.context, space as u32) };
            if point < 0 {
                // SAFETY: as above.
                let limit = unsafe { (self.loader.binding_limit)(self.loader.context, space as u32) };
                return Err(XrError::unavailable(format!(
                    "program '{}': '{name}' needs more {} than the device has ({limit} for all programs, {} taken by this one)",
                    self.program,
                    space.name(),
                    self.taken.iter().filter(|(s, _)| *s == space).count() + points.len()
                )));
            }
            points.push(point as u32);
            self.taken.push((space, point as u32));
        }
        Ok(points)
    }

    /// Keeps the points: the program owns them now.
    pub fn keep(mut self) -> Vec<(GlBindingSpace, u32)> {
        std::mem::take(&mut self.taken)
    }
}

impl Drop for Points<'_> {
    /// A program that did not get built gives its points back.
    fn drop(&mut self) {
        release(self.loader, &self.taken);
    }
}

/// Gives points back to the device.
pub fn release(loader: &GlLoader, points: &[(GlBindingSpace, u32)]) {
    for (space, point) in points {
        // SAFETY: the loader takes any context: the device looks it up among its open devices and never dereferences it, so a closed device ignores the call.
        unsafe { (loader.release_binding)(loader.context, *space as u32, *point) };
    }
}

/// Whether a GL sampler or image type reads a 2D texture.
pub fn is_two_d(gl_type: u32) -> bool {
    [
        glow::SAMPLER_2D,
        glow::INT_SAMPLER_2D,
        glow::UNSIGNED_INT_SAMPLER_2D,
        glow::IMAGE_2D,
        glow::INT_IMAGE_2D,
        glow::UNSIGNED_INT_IMAGE_2D,
    ]
    .contains(&gl_type)
}

/// The resource kind and binding space of a GL sampler or image uniform type.
pub fn uniform_resource(gl_type: u32) -> Option<(ResourceKind, GlBindingSpace)> {
    const IMAGES: [u32; 3] = [glow::IMAGE_2D, glow::INT_IMAGE_2D, glow::UNSIGNED_INT_IMAGE_2D];
    const SAMPLERS: [u32; 6] = [
        glow::SAMPLER_2D,
        glow::INT_SAMPLER_2D,
        glow::UNSIGNED_INT_SAMPLER_2D,
        glow::SAMPLER_2D_SHADOW,
        glow::SAMPLER_2D_ARRAY,
        glow::SAMPLER_CUBE,
    ];
    if IMAGES.contains(&gl_type) {
        Some((ResourceKind::StorageImage, GlBindingSpace::ImageUnit))
    } else if SAMPLERS.contains(&gl_type) {
        Some((ResourceKind::CombinedImageSampler, GlBindingSpace::TextureUnit))
    } else {
        None
    }
}

/// The storage blocks of a linked program: (name, index, binding, fixed size).
///
/// # Safety
/// The device's context must be current and `program` linked on it.
pub unsafe fn storage_blocks(fns: &PipelineFns, program: u32) -> Vec<(String, u32, u32, u64)> {
    // SAFETY: upheld by the caller.
    unsafe { fns.resources(program, glow::SHADER_STORAGE_BLOCK, &[glow::BUFFER_BINDING, glow::BUFFER_DATA_SIZE]) }
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(index, (name, values))| (name, index as u32, values[0].max(0) as u32, values[1].max(0) as u64))
        .collect()
}

/// Binds `binding` to element `element` of `resource`, on the current context.
pub fn bind(
    gl: &glow::Context,
    resource: &mut GlResource,
    element: u32,
    binding: &ResourceBinding,
    device: u64,
) -> Result<(), XrError> {
    check_binding(&resource.info, binding, device)?;
    if binding.is_texture && !resource.two_d {
        return Err(XrError::invalid_input(format!(
            "'{}' samples a cube map, array or shadow texture; the device's textures are 2D",
            resource.info.name
        )));
    }
    let point = *resource.points.get(element as usize).ok_or_else(|| {
        XrError::invalid_input(format!(
            "'{}': index {element} is out of range, it has {} element(s)",
            resource.info.name, resource.info.array_size
        ))
    })?;
    let name = |handle: u64| {
        u32::try_from(handle).ok().and_then(NonZeroU32::new).ok_or_else(|| {
            XrError::invalid_input(format!("'{}': {handle} is not an OpenGL object name", resource.info.name))
        })
    };
    // SAFETY: the names belong to this device's context (checked above), which is current.
    unsafe {
        match resource.info.kind {
            ResourceKind::CombinedImageSampler => {
                gl.active_texture(glow::TEXTURE0 + point);
                gl.bind_texture(glow::TEXTURE_2D, Some(glow::NativeTexture(name(binding.handle)?)));
                gl.bind_sampler(point, Some(glow::NativeSampler(name(binding.sampler)?)));
                gl.active_texture(glow::TEXTURE0);
            }
            ResourceKind::StorageImage => {
                let format =
                    if binding.size == TextureFormat::Rgba32Float as u64 { glow::RGBA32F } else { glow::RGBA8 };
                gl.bind_image_texture(
                    point,
                    Some(glow::NativeTexture(name(binding.handle)?)),
                    0,
                    false,
                    0,
                    glow::READ_WRITE,
                    format,
                );
            }
            ResourceKind::StorageBuffer | ResourceKind::UniformBuffer => {
                let target = if resource.info.kind == ResourceKind::StorageBuffer {
                    glow::SHADER_STORAGE_BUFFER
                } else {
                    glow::UNIFORM_BUFFER
                };
                gl.bind_buffer_base(target, point, Some(glow::NativeBuffer(name(binding.handle)?)));
            }
            ResourceKind::SampledImage | ResourceKind::Sampler => {
                return Err(XrError::invalid_input(format!(
                    "'{}': OpenGL has no separate textures and samplers",
                    resource.info.name
                )));
            }
            ResourceKind::AccelerationStructure => {
                return Err(XrError::invalid_input(format!(
                    "'{}': OpenGL has no acceleration structures",
                    resource.info.name
                )));
            }
        }
        match gl.get_error() {
            glow::NO_ERROR => {}
            error => {
                return Err(XrError::driver(format!(
                    "binding '{}' failed with GL error 0x{error:04x}",
                    resource.info.name
                )));
            }
        }
    }
    resource.bound[element as usize] = true;
    Ok(())
}
