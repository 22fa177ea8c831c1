//! The Vulkan instance, the physical and logical device, and validation.

mod features;

use ash::{ext::debug_utils, vk};
use features::{Allowed, Enabled, Features, Offered};
use std::{
    ffi::{CStr, c_char, c_void},
    sync::{Arc, Mutex},
};
use xr_device::{NativeWindow, XrError};

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// Validation errors reported since they were last taken.
pub type Messages = Arc<Mutex<Vec<String>>>;

/// Everything a device needs from Vulkan's start-up.
pub struct Context {
    pub entry: ash::Entry,
    pub instance: ash::Instance,
    pub debug: Option<(debug_utils::Instance, vk::DebugUtilsMessengerEXT, *mut Messages)>,
    pub physical: vk::PhysicalDevice,
    pub properties: vk::PhysicalDeviceProperties,
    pub memory: vk::PhysicalDeviceMemoryProperties,
    pub device: ash::Device,
    pub queue: vk::Queue,
    pub queue_family: u32,
    pub messages: Messages,
    /// `dynamicRenderingLocalRead` is enabled: draws read input attachments.
    pub local_read: bool,
    /// The validation layer is of an older Vulkan header than the driver's
    /// version: its SPIR-V knowledge is older than the device's
    /// ([`predates_device_spirv`]).
    pub layer_predates_device: bool,
    /// `VK_EXT_shader_object` is enabled: build systems make shader
    /// objects, and draws set every piece of state.
    pub shader_objects: bool,
    /// The device extensions enabled, separated by spaces (what the
    /// loader hands build systems).
    pub enabled_extensions: std::ffi::CString,
    /// The window's surface, for a device opened with a window.
    pub surface: Option<(ash::khr::surface::Instance, vk::SurfaceKHR)>,
}

unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) && !data.is_null() && !user.is_null() {
        // SAFETY: the layer passes valid callback data; `user` is the boxed
        // message list, which lives until the messenger is destroyed.
        let (message, messages) = unsafe {
            let message = (*data).message_as_c_str().map(|m| m.to_string_lossy().into_owned()).unwrap_or_default();
            (message, &*(user as *const Messages))
        };
        if let Ok(mut list) = messages.lock() {
            list.push(message);
        }
    }
    vk::FALSE
}

/// Whether `message` comes from a validation layer older than
/// `VK_KHR_dynamic_rendering_local_read` (Vulkan header 276; Debian 12
/// ships layers of header 239) not knowing the extension, and so false:
/// - the extension's feature structure, which the device chains when the
///   driver offers it, is "unknown" (the layer says itself that it may be
///   from "a later version of the Vulkan header");
/// - a pipeline without a render pass whose fragment stage reads input
///   attachments (VUID 06061), which the enabled feature allows.
///
/// Dropped only where the device enabled the extension (on a device
/// without it, such a pipeline would be a real error: XR draws those
/// programs in a render pass there). Everything else the layer checks as
/// before.
fn predates_local_read(message: &str) -> bool {
    message.contains("unknown VkStructureType (1000232000)")
        || (message.contains("VUID-VkGraphicsPipelineCreateInfo-renderPass-06061")
            && message.contains("InputAttachment capability"))
}

/// Whether `message` is a validation layer older than the device judging
/// SPIR-V it cannot know, given the device extensions enabled
/// (space-separated):
/// - its own copy of the SPIR-V validator refusing a module
///   (`UNASSIGNED-CoreValidation-Shader-InconsistentSpirv`): every module
///   XR hands a device was validated by a validator at least as new as the
///   compiler that wrote it (Debian 12's layers carry SPIRV-Tools of
///   early 2023, which refuses what SPIR-V has had since: capability 5336,
///   `RayTracingPositionFetchKHR`; Slang's `PhysicalStorageBuffer` pointers);
/// - a capability missing from its table ("Unhandled OpCapability",
///   VUID 01090);
/// - a SPIR-V extension it says Vulkan does not support (VUID 04146)
///   whose Vulkan extension (`SPV_KHR_x` ↔ `VK_KHR_x`) the device enabled;
/// - a feature structure of such an extension the device chained
///   (`unknown VkStructureType`, `VK_KHR_ray_tracing_position_fetch`'s),
///   and that extension's flag on acceleration structure builds
///   (`ALLOW_DATA_ACCESS`, "not recognized members").
///
/// Dropped only where the layer's header is older than the driver's
/// version. What the device lacks is still refused by name before the
/// driver (the Vulkan build system's capability check).
fn predates_device_spirv(message: &str, enabled_extensions: &str) -> bool {
    if message.contains("UNASSIGNED-CoreValidation-Shader-InconsistentSpirv")
        || (message.contains("VUID-VkShaderModuleCreateInfo-pCode-01090") && message.contains("Unhandled OpCapability"))
        || message.contains("unknown VkStructureType (1000481000)")
    {
        return true;
    }
    if message.contains("VUID-VkAccelerationStructureBuildGeometryInfoKHR-flags-parameter")
        && message.contains("not recognized members")
    {
        return enabled_extensions.split(' ').any(|e| e == "VK_KHR_ray_tracing_position_fetch");
    }
    if !message.contains("VUID-VkShaderModuleCreateInfo-pCode-04146") {
        return false;
    }
    let Some(name) = message.split(['(', ')']).find(|part| part.starts_with("SPV_")) else { return false };
    let vulkan = format!("VK_{}", &name["SPV_".len()..]);
    enabled_extensions.split(' ').any(|e| e == vulkan)
}

/// The Vulkan header that brought `VK_EXT_shader_object` (1.3.246): a
/// validation layer of an older one does not know it.
const SHADER_OBJECT_HEADER: u32 = vk::make_api_version(0, 1, 3, 246);

/// Whether shader objects may be used where the driver has them:
/// `XR_VK_SHADER_OBJECTS=off` makes programs pipelines (for a driver whose
/// shader objects are broken, and to compare the two paths).
fn shader_objects_wanted() -> bool {
    xr_env::var("XR_VK_SHADER_OBJECTS").is_none_or(|v| v != "off")
}

/// Whether graphics pipeline libraries may be used where the driver has
/// them: `XR_VK_PIPELINE_LIBRARIES=off` leaves them off, so that a draw
/// into a target of new formats compiles a whole pipeline (on another
/// thread when the draw does not wait).
fn pipeline_libraries_wanted() -> bool {
    xr_env::var("XR_VK_PIPELINE_LIBRARIES").is_none_or(|v| v != "off")
}

/// Maps a failed Vulkan call named `what` to a driver error.
pub(crate) fn vk_error(what: &str) -> impl Fn(vk::Result) -> XrError + '_ {
    move |e| XrError::driver(format!("{what} failed: {e}"))
}

impl Context {
    /// Loads Vulkan, creates an instance and a device with a graphics queue
    /// (that can also present to `window`'s surface, if there is one).
    pub fn create(prefer_software: bool, validation: bool, window: Option<&NativeWindow>) -> Result<Self, XrError> {
        // SAFETY: loading the system's Vulkan loader library.
        let entry = unsafe { ash::Entry::load() }
            .map_err(|e| XrError::unavailable(format!("no Vulkan loader (libvulkan.so.1): {e}")))?;
        let app = vk::ApplicationInfo::default().application_name(c"xr").api_version(vk::API_VERSION_1_3);
        let mut layers = Vec::new();
        let mut extensions = Vec::new();
        let mut shader_objects_allowed = shader_objects_wanted();
        let mut layer_header = None;
        if validation {
            // SAFETY: plain enumeration.
            let available = unsafe { entry.enumerate_instance_layer_properties() }.unwrap_or_default();
            let Some(layer) = available.iter().find(|l| l.layer_name_as_c_str().ok() == Some(VALIDATION_LAYER)) else {
                return Err(XrError::unavailable(
                    "validation was asked for but VK_LAYER_KHRONOS_validation is not installed (Debian: vulkan-validationlayers)",
                ));
            };
            layer_header = Some(layer.spec_version);
            if layer.spec_version < SHADER_OBJECT_HEADER {
                // A layer that does not know shader objects would report
                // every draw with them as a draw without a pipeline: under
                // it, programs are pipelines, which it checks.
                tracing::info!(
                    "validation layer of Vulkan header {} predates VK_EXT_shader_object: drawing with pipelines",
                    vk::api_version_patch(layer.spec_version)
                );
                shader_objects_allowed = false;
            }
            layers.push(VALIDATION_LAYER.as_ptr());
            extensions.push(debug_utils::NAME.as_ptr());
        }
        if window.is_some() {
            extensions.push(ash::khr::surface::NAME.as_ptr());
            extensions.push(ash::khr::xlib_surface::NAME.as_ptr());
        }
        let create = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_layer_names(&layers)
            .enabled_extension_names(&extensions);
        // SAFETY: the create info and what it points to live across the call.
        let instance = unsafe { entry.create_instance(&create, None) }.map_err(|e| match e {
            vk::Result::ERROR_INCOMPATIBLE_DRIVER | vk::Result::ERROR_INITIALIZATION_FAILED => {
                XrError::unavailable(format!("no Vulkan driver: {e}"))
            }
            e => XrError::driver(format!("vkCreateInstance failed: {e}")),
        })?;
        let messages: Messages = Arc::new(Mutex::new(Vec::new()));
        let debug = if validation {
            let loader = debug_utils::Instance::new(&entry, &instance);
            let user = Box::into_raw(Box::new(messages.clone()));
            let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
                .message_severity(
                    vk::DebugUtilsMessageSeverityFlagsEXT::ERROR | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING,
                )
                .message_type(
                    vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                        | vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                        | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
                )
                .pfn_user_callback(Some(on_message))
                .user_data(user.cast());
            // SAFETY: the callback and user data outlive the messenger.
            let messenger = unsafe { loader.create_debug_utils_messenger(&info, None) }
                .map_err(vk_error("vkCreateDebugUtilsMessengerEXT"))?;
            Some((loader, messenger, user))
        } else {
            None
        };
        let surface = match window.map(|w| Self::create_surface(&entry, &instance, w)).transpose() {
            Ok(surface) => surface,
            Err(e) => {
                Self::destroy_instance(&instance, debug);
                return Err(e);
            }
        };
        match Self::pick_device(&instance, prefer_software, surface.as_ref()) {
            Ok((physical, queue_family)) => {
                // SAFETY: `physical` comes from this instance.
                let (properties, memory) = unsafe {
                    (
                        instance.get_physical_device_properties(physical),
                        instance.get_physical_device_memory_properties(physical),
                    )
                };
                let (device, local_read, enabled_extensions) = match Self::create_device(
                    &instance,
                    physical,
                    queue_family,
                    surface.is_some(),
                    Allowed { shader_objects: shader_objects_allowed, pipeline_libraries: pipeline_libraries_wanted() },
                ) {
                    Ok(device) => device,
                    Err(e) => {
                        Self::destroy_surface(surface);
                        Self::destroy_instance(&instance, debug);
                        return Err(e);
                    }
                };
                // SAFETY: queue 0 of the family was requested.
                let queue = unsafe { device.get_device_queue(queue_family, 0) };
                Ok(Self {
                    entry,
                    instance,
                    debug,
                    physical,
                    properties,
                    memory,
                    device,
                    queue,
                    queue_family,
                    messages,
                    local_read,
                    layer_predates_device: layer_header.is_some_and(|header| header < properties.api_version),
                    shader_objects: enabled_extensions
                        .to_string_lossy()
                        .split(' ')
                        .any(|e| e.as_bytes() == ash::ext::shader_object::NAME.to_bytes()),
                    enabled_extensions,
                    surface,
                })
            }
            Err(e) => {
                Self::destroy_surface(surface);
                Self::destroy_instance(&instance, debug);
                Err(e)
            }
        }
    }

    /// Destroys an instance no device was created on.
    fn destroy_instance(
        instance: &ash::Instance,
        debug: Option<(debug_utils::Instance, vk::DebugUtilsMessengerEXT, *mut Messages)>,
    ) {
        // SAFETY: nothing else uses the instance.
        unsafe {
            if let Some((loader, messenger, user)) = debug {
                loader.destroy_debug_utils_messenger(messenger, None);
                drop(Box::from_raw(user));
            }
            instance.destroy_instance(None);
        }
    }

    fn destroy_surface(surface: Option<(ash::khr::surface::Instance, vk::SurfaceKHR)>) {
        if let Some((loader, surface)) = surface {
            // SAFETY: no swapchain was made on the surface.
            unsafe { loader.destroy_surface(surface, None) };
        }
    }

    /// A `VkSurfaceKHR` on the host's window.
    fn create_surface(
        entry: &ash::Entry,
        instance: &ash::Instance,
        window: &NativeWindow,
    ) -> Result<(ash::khr::surface::Instance, vk::SurfaceKHR), XrError> {
        let xr_device::WindowSystem::Xlib = window.system;
        let info = vk::XlibSurfaceCreateInfoKHR::default()
            .dpy(window.display as *mut vk::Display)
            .window(window.window as vk::Window);
        let loader = ash::khr::xlib_surface::Instance::new(entry, instance);
        // SAFETY: the host keeps the display connection and window alive while the device lives.
        let surface = unsafe { loader.create_xlib_surface(&info, None) }.map_err(vk_error("vkCreateXlibSurfaceKHR"))?;
        Ok((ash::khr::surface::Instance::new(entry, instance), surface))
    }

    fn pick_device(
        instance: &ash::Instance,
        prefer_software: bool,
        surface: Option<&(ash::khr::surface::Instance, vk::SurfaceKHR)>,
    ) -> Result<(vk::PhysicalDevice, u32), XrError> {
        // SAFETY: plain enumeration on a live instance.
        let devices =
            unsafe { instance.enumerate_physical_devices() }.map_err(vk_error("vkEnumeratePhysicalDevices"))?;
        let mut candidates: Vec<(vk::PhysicalDevice, u32, (bool, u32, u32))> = Vec::new();
        for physical in devices {
            // SAFETY: `physical` was just enumerated from this live instance.
            let (properties, families) = unsafe {
                (
                    instance.get_physical_device_properties(physical),
                    instance.get_physical_device_queue_family_properties(physical),
                )
            };
            if properties.api_version < vk::API_VERSION_1_3 {
                continue;
            }
            let presents = |family: usize| {
                surface.is_none_or(|(loader, surface)| {
                    // SAFETY: the surface and physical device belong to this instance.
                    unsafe { loader.get_physical_device_surface_support(physical, family as u32, *surface) }
                        .unwrap_or(false)
                })
            };
            let Some(family) = families
                .iter()
                .enumerate()
                .position(|(i, f)| f.queue_flags.contains(vk::QueueFlags::GRAPHICS) && presents(i))
            else {
                continue;
            };
            let software = properties.device_type == vk::PhysicalDeviceType::CPU;
            candidates.push((physical, family as u32, (software, properties.api_version, properties.driver_version)));
        }
        // The kind asked for first; among devices of a kind, the newest
        // Vulkan and then the newest driver (two lavapipes: the setup's
        // beside the system's).
        candidates.sort_by_key(|(_, _, (software, api, driver))| {
            (*software != prefer_software, std::cmp::Reverse(*api), std::cmp::Reverse(*driver))
        });
        candidates.first().map(|(physical, family, _)| (*physical, *family)).ok_or_else(|| match surface {
            Some(_) => XrError::unavailable("no Vulkan 1.3 device with a graphics queue that presents to this window"),
            None => XrError::unavailable("no Vulkan 1.3 device with a graphics queue"),
        })
    }

    /// The device, and whether it reads input attachments within dynamic
    /// rendering (`VK_KHR_dynamic_rendering_local_read`). Every extension a
    /// shader may need that the driver offers is enabled with its features:
    /// that one, fragment shader barycentrics, fragment shading rate, ray
    /// queries and ray tracing pipelines (with acceleration structures),
    /// and mesh and task shaders; and, where `allowed` allows them and the
    /// driver has them, shader objects (`VK_EXT_shader_object`) and
    /// graphics pipeline libraries (`VK_EXT_graphics_pipeline_library`).
    fn create_device(
        instance: &ash::Instance,
        physical: vk::PhysicalDevice,
        family: u32,
        presents: bool,
        allowed: Allowed,
    ) -> Result<(ash::Device, bool, std::ffi::CString), XrError> {
        // Extensions shaders ask for, each enabled with its features where
        // the driver offers it (a module declaring the capability is refused
        // by name before the driver where it does not).
        let offered = Offered::query(instance, physical, allowed);
        let mut features = Features::query(instance, physical, &offered);
        let enabled = Enabled::of(&offered, &features);
        features.set_for_creation(&enabled);
        let mut extensions = vec![ash::ext::vertex_input_dynamic_state::NAME.as_ptr()];
        if presents {
            extensions.push(ash::khr::swapchain::NAME.as_ptr());
        }
        extensions.extend(enabled.extensions());
        let device = Self::create_logical_device(instance, physical, family, &extensions, &mut features, &enabled)?;
        // SAFETY: every name is one of ash's NUL-terminated constants.
        let names: Vec<String> =
            extensions.iter().map(|n| unsafe { CStr::from_ptr(*n) }.to_string_lossy().into_owned()).collect();
        let enabled_names = std::ffi::CString::new(names.join(" ")).unwrap_or_default();
        Ok((device, enabled.reads_attachments, enabled_names))
    }

    /// Creates the device with one queue of `family`, `extensions`, and
    /// `features`: the core ones, Vulkan 1.1's to 1.3's, dynamic vertex
    /// input, and those of each extension `enabled` names.
    fn create_logical_device(
        instance: &ash::Instance,
        physical: vk::PhysicalDevice,
        family: u32,
        extensions: &[*const c_char],
        features: &mut Features,
        enabled: &Enabled,
    ) -> Result<ash::Device, XrError> {
        let priorities = [1.0];
        let queues = [vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&priorities)];
        let mut vertex_input =
            vk::PhysicalDeviceVertexInputDynamicStateFeaturesEXT::default().vertex_input_dynamic_state(true);
        let mut create = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_features(&features.core)
            .enabled_extension_names(extensions)
            .push_next(&mut features.vulkan11)
            .push_next(&mut features.vulkan12)
            .push_next(&mut features.vulkan13)
            .push_next(&mut vertex_input);
        if enabled.reads_attachments {
            create = create.push_next(&mut features.local_read);
        }
        if enabled.barycentrics {
            create = create.push_next(&mut features.barycentric);
        }
        if enabled.shading_rates {
            create = create.push_next(&mut features.shading_rate);
        }
        if enabled.ray_queries || enabled.ray_pipelines {
            create = create.push_next(&mut features.acceleration);
        }
        if enabled.ray_queries {
            create = create.push_next(&mut features.ray_query);
        }
        if enabled.ray_pipelines {
            create = create.push_next(&mut features.ray_pipeline);
        }
        if enabled.mesh_shaders {
            create = create.push_next(&mut features.mesh_shader);
        }
        if enabled.shader_objects {
            create = create.push_next(&mut features.shader_object);
        }
        if enabled.positions_fetched {
            create = create.push_next(&mut features.position_fetch);
        }
        if enabled.pipeline_libraries {
            create = create.push_next(&mut features.pipeline_library);
        }
        // SAFETY: the create info and what it points to live across the call.
        unsafe { instance.create_device(physical, &create, None) }.map_err(vk_error("vkCreateDevice"))
    }

    /// Validation errors since the last call, taken (less those a layer
    /// older than the device's extensions gets wrong: [`predates_local_read`]).
    pub fn take_validation_messages(&self) -> Vec<String> {
        let Ok(mut list) = self.messages.lock() else { return Vec::new() };
        let mut taken = std::mem::take(&mut *list);
        if self.local_read {
            taken.retain(|message| !predates_local_read(message));
        }
        if self.layer_predates_device {
            let enabled = self.enabled_extensions.to_string_lossy();
            taken.retain(|message| !predates_device_spirv(message, &enabled));
        }
        taken
    }

    /// Validation errors since the last call, joined into one line.
    pub fn take_validation_errors(&self) -> Option<String> {
        let taken = self.take_validation_messages();
        (!taken.is_empty()).then(|| taken.join(" | "))
    }

    /// The device's name, as its properties give it.
    pub fn renderer(&self) -> String {
        self.properties.device_name_as_c_str().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }

    /// The most work groups a mesh draw launches in x, y and z: the
    /// smaller of `maxTaskWorkGroupCount` and `maxMeshWorkGroupCount` (a
    /// draw's groups are task groups where the program has a task stage,
    /// mesh groups where it does not). Only where the device has mesh shaders.
    pub fn mesh_group_limits(&self) -> [u32; 3] {
        let mut mesh = vk::PhysicalDeviceMeshShaderPropertiesEXT::default();
        let mut query = vk::PhysicalDeviceProperties2::default().push_next(&mut mesh);
        // SAFETY: `physical` belongs to this live instance; the chain lives across the call.
        unsafe { self.instance.get_physical_device_properties2(self.physical, &mut query) };
        let (task, mesh) = (mesh.max_task_work_group_count, mesh.max_mesh_work_group_count);
        [task[0].min(mesh[0]), task[1].min(mesh[1]), task[2].min(mesh[2])]
    }

    /// Whether the device enabled the device extension `name`.
    pub fn has_extension(&self, name: &CStr) -> bool {
        let name = name.to_string_lossy();
        self.enabled_extensions.to_string_lossy().split(' ').any(|e| e == name)
    }

    /// Index of a memory type with `flags` among those `bits` allows.
    pub fn memory_type(&self, bits: u32, flags: vk::MemoryPropertyFlags) -> Result<u32, XrError> {
        (0..self.memory.memory_type_count)
            .find(|i| bits & (1 << i) != 0 && self.memory.memory_types[*i as usize].property_flags.contains(flags))
            .ok_or_else(|| XrError::driver(format!("no Vulkan memory type with {flags:?}")))
    }
}

impl Drop for Context {
    /// Destroys the surface, the device, the debug messenger and the
    /// instance, in that order; the device that owns this context has
    /// destroyed the swapchain on the surface, and every object made on the
    /// device, before.
    fn drop(&mut self) {
        // SAFETY: the owner destroyed everything made on the device and the
        // swapchain (see `VkDevice`'s drop), so the device is idle, no
        // swapchain uses the surface, and nothing else holds these handles;
        // each object goes before the one it was made from.
        unsafe {
            let _ = self.device.device_wait_idle();
            if let Some((loader, surface)) = self.surface.take() {
                loader.destroy_surface(surface, None);
            }
            self.device.destroy_device(None);
            if let Some((loader, messenger, user)) = self.debug.take() {
                loader.destroy_debug_utils_messenger(messenger, None);
                drop(Box::from_raw(user));
            }
            self.instance.destroy_instance(None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::predates_device_spirv;

    #[test]
    fn only_what_a_layer_older_than_the_device_cannot_know_is_dropped() {
        let enabled = "VK_KHR_acceleration_structure VK_KHR_ray_tracing_position_fetch";
        let spirv = "Validation Error: [ UNASSIGNED-CoreValidation-Shader-InconsistentSpirv ] SPIR-V module not valid";
        assert!(predates_device_spirv(spirv, enabled));
        let unhandled = "[ VUID-VkShaderModuleCreateInfo-pCode-01090 ] A SPIR-V Capability (Unhandled OpCapability)";
        assert!(predates_device_spirv(unhandled, enabled));
        let known = "[ VUID-VkShaderModuleCreateInfo-pCode-01090 ] A SPIR-V Capability (SampleRateShading)";
        assert!(!predates_device_spirv(known, enabled), "a capability the layer knows is its to judge");
        let extension = "[ VUID-VkShaderModuleCreateInfo-pCode-04146 ] A SPIR-V Extension \
                         (SPV_KHR_ray_tracing_position_fetch) was declared that is not supported by Vulkan.";
        assert!(predates_device_spirv(extension, enabled));
        assert!(!predates_device_spirv(extension, "VK_KHR_acceleration_structure"), "not enabled: a real error");
        let flags = "[ VUID-VkAccelerationStructureBuildGeometryInfoKHR-flags-parameter ] value of pInfos[0].flags \
                     contains flag bits that are not recognized members of VkBuildAccelerationStructureFlagBitsKHR";
        assert!(predates_device_spirv(flags, enabled));
        assert!(!predates_device_spirv(flags, "VK_KHR_acceleration_structure"));
        assert!(!predates_device_spirv("[ VUID-vkCmdDraw-None-02699 ] descriptor not updated", enabled));
    }
}
