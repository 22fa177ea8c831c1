//! The swapchain of a windowed device: made for the window's size, made
//! again when the window changes size or the driver says it is out of date,
//! and absent while the window has no area.
//!
//! Every frame is a blit of a render target into the acquired image (the
//! image is written whole, so its old contents are discarded), then a
//! present. The device waits for its queue after every submission, so one
//! acquire semaphore serves every frame; the semaphore the present waits
//! on is one per swapchain image, because the presentation engine holds it
//! until that image comes back.

use crate::instance::{Context, vk_error};
use ash::vk;
use xr_device::XrError;

/// Colour formats a swapchain is made in, best first: UNORM, like the
/// render targets, so that a blit copies values unchanged.
const FORMATS: [vk::Format; 2] = [vk::Format::B8G8R8A8_UNORM, vk::Format::R8G8B8A8_UNORM];

/// A swapchain image acquired for one frame.
pub struct Frame {
    /// Its index in the swapchain.
    pub index: u32,
    /// The image.
    pub image: vk::Image,
    /// Signalled when the image may be written.
    pub acquired: vk::Semaphore,
    /// For the submission to signal; the present waits on it.
    pub rendered: vk::Semaphore,
}

/// The swapchain on the device's window surface.
pub struct Swapchain {
    loader: ash::khr::swapchain::Device,
    swapchain: vk::SwapchainKHR,
    images: Vec<vk::Image>,
    rendered: Vec<vk::Semaphore>,
    acquired: vk::Semaphore,
    /// The format of its images.
    pub format: vk::Format,
    /// The size of its images.
    pub extent: vk::Extent2D,
    /// Whether its images can be read back (`TRANSFER_SRC`).
    pub readable: bool,
    /// The window's size as the host last gave it.
    window: vk::Extent2D,
    /// Made again before the next frame.
    stale: bool,
}

impl Swapchain {
    /// A swapchain for a window `width` × `height` large (made at the first frame).
    pub fn new(context: &Context, width: u32, height: u32) -> Result<Self, XrError> {
        let loader = ash::khr::swapchain::Device::new(&context.instance, &context.device);
        // SAFETY: a valid device.
        let acquired = unsafe { context.device.create_semaphore(&vk::SemaphoreCreateInfo::default(), None) }
            .map_err(vk_error("vkCreateSemaphore"))?;
        Ok(Self {
            loader,
            swapchain: vk::SwapchainKHR::null(),
            images: Vec::new(),
            rendered: Vec::new(),
            acquired,
            format: FORMATS[0],
            extent: vk::Extent2D::default(),
            readable: false,
            window: vk::Extent2D { width, height },
            stale: true,
        })
    }

    /// The window is now `width` × `height` (0 × 0: minimised).
    pub fn resize(&mut self, width: u32, height: u32) {
        self.window = vk::Extent2D { width, height };
        self.stale = true;
    }

    /// The image to draw the next frame into, or `None` while the window
    /// has no area. Makes the swapchain again first where it is stale.
    pub fn acquire(&mut self, context: &Context) -> Result<Option<Frame>, XrError> {
        for _ in 0..2 {
            if self.window.width == 0 || self.window.height == 0 {
                return Ok(None);
            }
            if self.stale && !self.rebuild(context)? {
                return Ok(None);
            }
            // SAFETY: the swapchain and semaphore belong to this device; the
            // semaphore is unsignalled (the last frame's submission waited on it).
            match unsafe { self.loader.acquire_next_image(self.swapchain, u64::MAX, self.acquired, vk::Fence::null()) }
            {
                Ok((index, suboptimal)) => {
                    self.stale |= suboptimal;
                    return Ok(Some(Frame {
                        index,
                        image: self.images[index as usize],
                        acquired: self.acquired,
                        rendered: self.rendered[index as usize],
                    }));
                }
                Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => self.stale = true,
                Err(e) => return Err(XrError::driver(format!("vkAcquireNextImageKHR failed: {e}"))),
            }
        }
        Err(XrError::driver("the swapchain went out of date twice in a row"))
    }

    /// Presents `frame` once its submission signalled `frame.rendered`.
    pub fn present(&mut self, context: &Context, frame: &Frame) -> Result<(), XrError> {
        let swapchains = [self.swapchain];
        let indices = [frame.index];
        let waits = [frame.rendered];
        let info =
            vk::PresentInfoKHR::default().wait_semaphores(&waits).swapchains(&swapchains).image_indices(&indices);
        // SAFETY: the image was acquired from this swapchain and rendered to.
        match unsafe { self.loader.queue_present(context.queue, &info) } {
            Ok(suboptimal) => self.stale |= suboptimal,
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => self.stale = true,
            Err(e) => return Err(XrError::driver(format!("vkQueuePresentKHR failed: {e}"))),
        }
        // SAFETY: a valid queue.
        unsafe { context.device.queue_wait_idle(context.queue) }.map_err(vk_error("vkQueueWaitIdle"))
    }

    /// Makes the swapchain for the surface's size now; false when that
    /// size has no area.
    fn rebuild(&mut self, context: &Context) -> Result<bool, XrError> {
        let (surfaces, surface) =
            context.surface.as_ref().ok_or_else(|| XrError::driver("a swapchain on a device with no surface"))?;
        let physical = context.physical;
        // SAFETY: the surface and physical device belong to this instance.
        let (capabilities, formats) = unsafe {
            (
                surfaces
                    .get_physical_device_surface_capabilities(physical, *surface)
                    .map_err(vk_error("vkGetPhysicalDeviceSurfaceCapabilitiesKHR"))?,
                surfaces
                    .get_physical_device_surface_formats(physical, *surface)
                    .map_err(vk_error("vkGetPhysicalDeviceSurfaceFormatsKHR"))?,
            )
        };
        // The surface's own size where it has one; the window's otherwise.
        let extent = if capabilities.current_extent.width == u32::MAX {
            vk::Extent2D {
                width: self
                    .window
                    .width
                    .clamp(capabilities.min_image_extent.width, capabilities.max_image_extent.width),
                height: self
                    .window
                    .height
                    .clamp(capabilities.min_image_extent.height, capabilities.max_image_extent.height),
            }
        } else {
            capabilities.current_extent
        };
        if extent.width == 0 || extent.height == 0 {
            return Ok(false);
        }
        // Only these: a blit copies values into them and a capture reads 4 bytes a pixel.
        let format =
            FORMATS.iter().find_map(|wanted| formats.iter().find(|f| f.format == *wanted)).copied().ok_or_else(
                || XrError::unavailable("the window's surface offers no 8-bit UNORM RGBA or BGRA format"),
            )?;
        if !capabilities.supported_usage_flags.contains(vk::ImageUsageFlags::TRANSFER_DST) {
            return Err(XrError::unavailable("the window's swapchain images cannot be written by a blit"));
        }
        let readable = capabilities.supported_usage_flags.contains(vk::ImageUsageFlags::TRANSFER_SRC);
        let mut usage = vk::ImageUsageFlags::TRANSFER_DST;
        if readable {
            usage |= vk::ImageUsageFlags::TRANSFER_SRC;
        }
        let mut count = capabilities.min_image_count + 1;
        if capabilities.max_image_count > 0 {
            count = count.min(capabilities.max_image_count);
        }
        let alpha = [
            vk::CompositeAlphaFlagsKHR::OPAQUE,
            vk::CompositeAlphaFlagsKHR::INHERIT,
            vk::CompositeAlphaFlagsKHR::PRE_MULTIPLIED,
            vk::CompositeAlphaFlagsKHR::POST_MULTIPLIED,
        ]
        .into_iter()
        .find(|a| capabilities.supported_composite_alpha.contains(*a))
        .unwrap_or(vk::CompositeAlphaFlagsKHR::OPAQUE);
        let info = vk::SwapchainCreateInfoKHR::default()
            .surface(*surface)
            .min_image_count(count)
            .image_format(format.format)
            .image_color_space(format.color_space)
            .image_extent(extent)
            .image_array_layers(1)
            .image_usage(usage)
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
            .pre_transform(capabilities.current_transform)
            .composite_alpha(alpha)
            // FIFO: the one mode every driver has; it waits for the display.
            .present_mode(vk::PresentModeKHR::FIFO)
            .clipped(true)
            .old_swapchain(self.swapchain);
        let device = &context.device;
        // SAFETY: the device is idle (every submission is waited for), so the
        // old swapchain and its semaphores are no longer in use.
        unsafe {
            device.device_wait_idle().map_err(vk_error("vkDeviceWaitIdle"))?;
            let created = self.loader.create_swapchain(&info, None);
            // The old swapchain is retired either way: it goes now.
            self.destroy_swapchain(device);
            let swapchain = created.map_err(vk_error("vkCreateSwapchainKHR"))?;
            self.swapchain = swapchain;
            self.images = self.loader.get_swapchain_images(swapchain).map_err(vk_error("vkGetSwapchainImagesKHR"))?;
            for _ in &self.images {
                let semaphore = device
                    .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
                    .map_err(vk_error("vkCreateSemaphore"))?;
                self.rendered.push(semaphore);
            }
        }
        self.format = format.format;
        self.extent = extent;
        self.readable = readable;
        self.stale = false;
        tracing::debug!(
            "swapchain {}x{} {:?}, {} images",
            extent.width,
            extent.height,
            format.format,
            self.images.len()
        );
        Ok(true)
    }

    /// Destroys the swapchain and its per-image semaphores.
    ///
    /// # Safety
    /// The device must be idle.
    unsafe fn destroy_swapchain(&mut self, device: &ash::Device) {
        // SAFETY: per the contract, nothing uses them; the swapchain goes
        // first, and with it the presents that waited on the semaphores.
        unsafe {
            if self.swapchain != vk::SwapchainKHR::null() {
                self.loader.destroy_swapchain(self.swapchain, None);
            }
            for semaphore in self.rendered.drain(..) {
                device.destroy_semaphore(semaphore, None);
            }
        }
        self.swapchain = vk::SwapchainKHR::null();
        self.images.clear();
    }

    /// Destroys every object; before the device is.
    ///
    /// # Safety
    /// The device must be idle.
    pub unsafe fn destroy(&mut self, device: &ash::Device) {
        // SAFETY: per the contract.
        unsafe {
            self.destroy_swapchain(device);
            device.destroy_semaphore(self.acquired, None);
        }
    }
}
