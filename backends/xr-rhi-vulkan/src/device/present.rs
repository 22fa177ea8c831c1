//! Presenting a render target to the window's swapchain, and reading back
//! what was presented.

use super::{COLOR_FORMAT, VkDevice, resources::color_layers};
use crate::swapchain::{Frame, Swapchain};
use abi_stable::std_types::ROption;
use ash::vk;
use xr_device::{Image, PresentStatus, Presented, XrError};

impl VkDevice {
    pub(super) fn present_with(
        &mut self,
        swapchain: &mut Swapchain,
        index: usize,
        capture: bool,
    ) -> Result<Presented, XrError> {
        // Messages of earlier work (a pipeline made by a build system) are
        // that work's: reported before an image is taken.
        self.check_validation("the work before presenting")?;
        let Some(frame) = swapchain.acquire(&self.context)? else {
            return Ok(Presented { status: PresentStatus::Skipped, image: ROption::RNone });
        };
        let unreadable = capture && !swapchain.readable;
        let capture = capture && !unreadable;
        let extent = swapchain.extent;
        let size = u64::from(extent.width) * u64::from(extent.height) * 4;
        // One submission waits for the image, blits, reads back (when asked)
        // and signals the present: an acquired image always goes back, and
        // a failure before it is submitted gives the image back empty.
        let readback = if capture {
            match self.host_buffer(size, vk::BufferUsageFlags::TRANSFER_DST) {
                Ok(buffer) => Some(buffer),
                Err(e) => {
                    self.give_back(swapchain, &frame);
                    return Err(e);
                }
            }
        } else {
            None
        };
        let target = &self.targets[index];
        // Linear filtering where the format surely has it (RGBA8).
        let filter = if (target.width, target.height) == (extent.width, extent.height)
            || target.colors[0].format != COLOR_FORMAT
        {
            vk::Filter::NEAREST
        } else {
            vk::Filter::LINEAR
        };
        let corner = |width: u32, height: u32| vk::Offset3D { x: width as i32, y: height as i32, z: 1 };
        let blit = vk::ImageBlit::default()
            .src_subresource(color_layers())
            .src_offsets([vk::Offset3D::default(), corner(target.width, target.height)])
            .dst_subresource(color_layers())
            .dst_offsets([vk::Offset3D::default(), corner(extent.width, extent.height)]);
        let image = frame.image;
        let submitted =
            self.record_and_submit(&[(frame.acquired, vk::PipelineStageFlags::TRANSFER)], &[frame.rendered], |cb| {
                self.transition(cb, target, vk::ImageLayout::TRANSFER_SRC_OPTIMAL);
                // The image is written whole: its old contents are not needed.
                self.transition_image(cb, image, vk::ImageLayout::UNDEFINED, vk::ImageLayout::TRANSFER_DST_OPTIMAL);
                // SAFETY: recording; both images are in the layouts named, the
                // buffer holds the whole image.
                unsafe {
                    self.context.device.cmd_blit_image(
                        cb,
                        target.colors[0].image,
                        vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                        image,
                        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                        &[blit],
                        filter,
                    );
                    let mut layout = vk::ImageLayout::TRANSFER_DST_OPTIMAL;
                    if let Some((buffer, _)) = readback {
                        self.transition_image(cb, image, layout, vk::ImageLayout::TRANSFER_SRC_OPTIMAL);
                        layout = vk::ImageLayout::TRANSFER_SRC_OPTIMAL;
                        let region = vk::BufferImageCopy::default()
                            .image_subresource(color_layers())
                            .image_extent(vk::Extent3D { width: extent.width, height: extent.height, depth: 1 });
                        self.context.device.cmd_copy_image_to_buffer(cb, image, layout, buffer, &[region]);
                    }
                    self.transition_image(cb, image, layout, vk::ImageLayout::PRESENT_SRC_KHR);
                }
                if target.textures {
                    let color = target.colors[0].image;
                    let from = vk::ImageLayout::TRANSFER_SRC_OPTIMAL;
                    self.transition_image(cb, color, from, vk::ImageLayout::GENERAL);
                }
            });
        let free = |readback: Option<(vk::Buffer, vk::DeviceMemory)>| {
            if let Some((buffer, memory)) = readback {
                // SAFETY: the submission is over (waited for, or never made).
                unsafe {
                    self.context.device.destroy_buffer(buffer, None);
                    self.context.device.free_memory(memory, None);
                }
            }
        };
        if let Err(e) = submitted {
            self.give_back(swapchain, &frame);
            free(readback);
            return Err(e);
        }
        let target = &mut self.targets[index];
        target.colors[0].layout =
            if target.textures { vk::ImageLayout::GENERAL } else { vk::ImageLayout::TRANSFER_SRC_OPTIMAL };
        let presented = swapchain.present(&self.context, &frame);
        let captured = match readback {
            Some((_, memory)) => {
                // SAFETY: the copy finished; the memory is host visible, coherent and `size` long.
                let pixels = unsafe { self.read_host(memory, size as usize) };
                free(readback);
                let mut rgba = pixels?;
                if swapchain.format == vk::Format::B8G8R8A8_UNORM {
                    rgba.chunks_exact_mut(4).for_each(|pixel| pixel.swap(0, 2));
                }
                ROption::RSome(Image { width: extent.width, height: extent.height, rgba: rgba.into() })
            }
            None => ROption::RNone,
        };
        presented?;
        self.check_validation("presenting")?;
        if unreadable {
            return Err(XrError::unavailable("this window's swapchain images cannot be read back"));
        }
        Ok(Presented { status: PresentStatus::Presented, image: captured })
    }

    /// Hands an acquired image back unwritten, after a failure: a submission
    /// that waits for it and signals the present, then the present.
    fn give_back(&self, swapchain: &mut Swapchain, frame: &Frame) {
        let image = frame.image;
        let _ =
            self.record_and_submit(&[(frame.acquired, vk::PipelineStageFlags::TRANSFER)], &[frame.rendered], |cb| {
                self.transition_image(cb, image, vk::ImageLayout::UNDEFINED, vk::ImageLayout::PRESENT_SRC_KHR);
            });
        let _ = swapchain.present(&self.context, frame);
    }
}
