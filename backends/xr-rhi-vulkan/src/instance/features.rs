//! What a device is created with beyond what XR always enables: each
//! extension a shader may need that the driver offers ([`Offered`]), its
//! features as the driver has them ([`Features`]), and which of them are
//! enabled ([`Enabled`]).

use ash::vk;
use std::ffi::{CStr, c_char};

/// The extensions shaders may ask for that the driver offers.
pub(super) struct Offered {
    local_read: bool,
    barycentric: bool,
    shading_rate: bool,
    /// Acceleration structures, with the deferred host operations they need.
    acceleration: bool,
    ray_query: bool,
    ray_pipeline: bool,
    mesh_shader: bool,
    /// Shader objects, where also allowed.
    shader_object: bool,
    position_fetch: bool,
    /// Graphics pipeline libraries (with the pipeline libraries they are
    /// made of), where also allowed.
    pipeline_library: bool,
}

impl Offered {
    /// What the driver of `physical` offers; shader objects and pipeline
    /// libraries only where `allowed` allows them.
    pub(super) fn query(instance: &ash::Instance, physical: vk::PhysicalDevice, allowed: Allowed) -> Self {
        // SAFETY: plain enumeration on a live physical device.
        let offered = unsafe { instance.enumerate_device_extension_properties(physical) }.unwrap_or_default();
        let has = |name: &CStr| offered.iter().any(|e| e.extension_name_as_c_str().ok() == Some(name));
        // Ray queries and ray tracing pipelines read acceleration
        // structures, which need deferred host operations.
        let acceleration = has(ash::khr::acceleration_structure::NAME) && has(ash::khr::deferred_host_operations::NAME);
        Self {
            local_read: has(ash::khr::dynamic_rendering_local_read::NAME),
            barycentric: has(ash::khr::fragment_shader_barycentric::NAME),
            shading_rate: has(ash::khr::fragment_shading_rate::NAME),
            acceleration,
            ray_query: acceleration && has(ash::khr::ray_query::NAME),
            ray_pipeline: acceleration && has(ash::khr::ray_tracing_pipeline::NAME),
            mesh_shader: has(ash::ext::mesh_shader::NAME),
            shader_object: allowed.shader_objects && has(ash::ext::shader_object::NAME),
            position_fetch: has(ash::khr::ray_tracing_position_fetch::NAME),
            pipeline_library: allowed.pipeline_libraries
                && has(ash::khr::pipeline_library::NAME)
                && has(ash::ext::graphics_pipeline_library::NAME),
        }
    }
}

/// The optional ways of making programs the caller allows (each can be
/// turned off by a variable, for a driver whose implementation is broken
/// and to compare the paths).
#[derive(Clone, Copy, Debug)]
pub(super) struct Allowed {
    /// `VK_EXT_shader_object`.
    pub(super) shader_objects: bool,
    /// `VK_EXT_graphics_pipeline_library`.
    pub(super) pipeline_libraries: bool,
}

/// The device's features: the core ones, Vulkan 1.1's to 1.3's, and those
/// of each extension offered (left at their defaults where it is not),
/// their chain pointers cleared.
pub(super) struct Features {
    pub(super) core: vk::PhysicalDeviceFeatures,
    pub(super) vulkan11: vk::PhysicalDeviceVulkan11Features<'static>,
    pub(super) vulkan12: vk::PhysicalDeviceVulkan12Features<'static>,
    pub(super) vulkan13: vk::PhysicalDeviceVulkan13Features<'static>,
    pub(super) local_read: vk::PhysicalDeviceDynamicRenderingLocalReadFeaturesKHR<'static>,
    pub(super) barycentric: vk::PhysicalDeviceFragmentShaderBarycentricFeaturesKHR<'static>,
    pub(super) shading_rate: vk::PhysicalDeviceFragmentShadingRateFeaturesKHR<'static>,
    pub(super) acceleration: vk::PhysicalDeviceAccelerationStructureFeaturesKHR<'static>,
    pub(super) ray_query: vk::PhysicalDeviceRayQueryFeaturesKHR<'static>,
    pub(super) ray_pipeline: vk::PhysicalDeviceRayTracingPipelineFeaturesKHR<'static>,
    pub(super) mesh_shader: vk::PhysicalDeviceMeshShaderFeaturesEXT<'static>,
    pub(super) shader_object: vk::PhysicalDeviceShaderObjectFeaturesEXT<'static>,
    pub(super) position_fetch: vk::PhysicalDeviceRayTracingPositionFetchFeaturesKHR<'static>,
    pub(super) pipeline_library: vk::PhysicalDeviceGraphicsPipelineLibraryFeaturesEXT<'static>,
}

impl Features {
    /// Every feature the device has, as shaders ask for them (clip
    /// distances, cube map arrays, multiview, storage formats, ...): a
    /// module that declares a capability whose feature is off is invalid.
    /// Robust access is left off: it costs on GPUs and hides bugs.
    pub(super) fn query(instance: &ash::Instance, physical: vk::PhysicalDevice, offered: &Offered) -> Self {
        let mut local_read = vk::PhysicalDeviceDynamicRenderingLocalReadFeaturesKHR::default();
        let mut barycentric = vk::PhysicalDeviceFragmentShaderBarycentricFeaturesKHR::default();
        let mut shading_rate = vk::PhysicalDeviceFragmentShadingRateFeaturesKHR::default();
        let mut acceleration = vk::PhysicalDeviceAccelerationStructureFeaturesKHR::default();
        let mut ray_query = vk::PhysicalDeviceRayQueryFeaturesKHR::default();
        let mut ray_pipeline = vk::PhysicalDeviceRayTracingPipelineFeaturesKHR::default();
        let mut mesh_shader = vk::PhysicalDeviceMeshShaderFeaturesEXT::default();
        let mut shader_object = vk::PhysicalDeviceShaderObjectFeaturesEXT::default();
        let mut position_fetch = vk::PhysicalDeviceRayTracingPositionFetchFeaturesKHR::default();
        let mut pipeline_library = vk::PhysicalDeviceGraphicsPipelineLibraryFeaturesEXT::default();
        let mut vulkan11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut vulkan12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut vulkan13 = vk::PhysicalDeviceVulkan13Features::default();
        {
            let mut query = vk::PhysicalDeviceFeatures2::default()
                .push_next(&mut vulkan11)
                .push_next(&mut vulkan12)
                .push_next(&mut vulkan13);
            if offered.local_read {
                query = query.push_next(&mut local_read);
            }
            if offered.barycentric {
                query = query.push_next(&mut barycentric);
            }
            if offered.shading_rate {
                query = query.push_next(&mut shading_rate);
            }
            if offered.acceleration {
                query = query.push_next(&mut acceleration);
            }
            if offered.ray_query {
                query = query.push_next(&mut ray_query);
            }
            if offered.ray_pipeline {
                query = query.push_next(&mut ray_pipeline);
            }
            if offered.mesh_shader {
                query = query.push_next(&mut mesh_shader);
            }
            if offered.shader_object {
                query = query.push_next(&mut shader_object);
            }
            if offered.position_fetch {
                query = query.push_next(&mut position_fetch);
            }
            if offered.pipeline_library {
                query = query.push_next(&mut pipeline_library);
            }
            // SAFETY: `physical` belongs to this instance; the chain lives across the call.
            unsafe { instance.get_physical_device_features2(physical, &mut query) };
        }
        let core = {
            // SAFETY: `physical` belongs to this instance.
            let mut features = unsafe { instance.get_physical_device_features(physical) };
            features.robust_buffer_access = vk::FALSE;
            features
        };
        vulkan11.p_next = std::ptr::null_mut();
        vulkan12.p_next = std::ptr::null_mut();
        vulkan13.p_next = std::ptr::null_mut();
        local_read.p_next = std::ptr::null_mut();
        barycentric.p_next = std::ptr::null_mut();
        shading_rate.p_next = std::ptr::null_mut();
        acceleration.p_next = std::ptr::null_mut();
        ray_query.p_next = std::ptr::null_mut();
        ray_pipeline.p_next = std::ptr::null_mut();
        mesh_shader.p_next = std::ptr::null_mut();
        shader_object.p_next = std::ptr::null_mut();
        position_fetch.p_next = std::ptr::null_mut();
        pipeline_library.p_next = std::ptr::null_mut();
        Self {
            core,
            vulkan11,
            vulkan12,
            vulkan13,
            local_read,
            barycentric,
            shading_rate,
            acceleration,
            ray_query,
            ray_pipeline,
            mesh_shader,
            shader_object,
            position_fetch,
            pipeline_library,
        }
    }

    /// Turns the features into those the device is created with: mesh
    /// shaders' cut down to the stages, robust image access off, and what
    /// XR itself draws with on.
    pub(super) fn set_for_creation(&mut self, enabled: &Enabled) {
        // Mesh and task stages; the features that need others XR does not
        // enable (multiview, per-primitive shading rate, queries) stay off.
        if enabled.mesh_shaders {
            self.mesh_shader = vk::PhysicalDeviceMeshShaderFeaturesEXT::default()
                .mesh_shader(true)
                .task_shader(self.mesh_shader.task_shader == vk::TRUE);
        }
        self.vulkan13.robust_image_access = vk::FALSE;
        // What XR itself draws with.
        self.vulkan13.dynamic_rendering = vk::TRUE;
        self.vulkan13.synchronization2 = vk::TRUE;
    }
}

/// The extensions the device is created with beyond those XR always
/// enables: each offered, with the feature that makes it useful on.
pub(super) struct Enabled {
    /// `VK_KHR_dynamic_rendering_local_read`: input attachments are read
    /// within dynamic rendering.
    pub(super) reads_attachments: bool,
    pub(super) barycentrics: bool,
    pub(super) shading_rates: bool,
    pub(super) ray_queries: bool,
    pub(super) ray_pipelines: bool,
    /// Hit stages reading their triangle's vertex positions
    /// (`gl_HitTriangleVertexPositionsEXT`).
    pub(super) positions_fetched: bool,
    pub(super) mesh_shaders: bool,
    pub(super) shader_objects: bool,
    /// `VK_EXT_graphics_pipeline_library` (and `VK_KHR_pipeline_library`):
    /// build systems make each program's stages as libraries at load and
    /// link a pipeline for a new draw state at once.
    pub(super) pipeline_libraries: bool,
}

impl Enabled {
    /// What of `offered` the device's `features` make worth enabling.
    pub(super) fn of(offered: &Offered, features: &Features) -> Self {
        let accelerations = offered.acceleration
            && features.acceleration.acceleration_structure == vk::TRUE
            && features.vulkan12.buffer_device_address == vk::TRUE;
        let ray_queries = accelerations && offered.ray_query && features.ray_query.ray_query == vk::TRUE;
        let ray_pipelines =
            accelerations && offered.ray_pipeline && features.ray_pipeline.ray_tracing_pipeline == vk::TRUE;
        Self {
            reads_attachments: offered.local_read && features.local_read.dynamic_rendering_local_read == vk::TRUE,
            barycentrics: offered.barycentric && features.barycentric.fragment_shader_barycentric == vk::TRUE,
            shading_rates: offered.shading_rate && features.shading_rate.pipeline_fragment_shading_rate == vk::TRUE,
            ray_queries,
            ray_pipelines,
            positions_fetched: (ray_queries || ray_pipelines)
                && offered.position_fetch
                && features.position_fetch.ray_tracing_position_fetch == vk::TRUE,
            mesh_shaders: offered.mesh_shader && features.mesh_shader.mesh_shader == vk::TRUE,
            shader_objects: offered.shader_object && features.shader_object.shader_object == vk::TRUE,
            pipeline_libraries: offered.pipeline_library
                && features.pipeline_library.graphics_pipeline_library == vk::TRUE,
        }
    }

    /// The names of the extensions enabled, in the order they are enabled.
    pub(super) fn extensions(&self) -> Vec<*const c_char> {
        let mut extensions = Vec::new();
        if self.reads_attachments {
            extensions.push(ash::khr::dynamic_rendering_local_read::NAME.as_ptr());
        }
        if self.barycentrics {
            extensions.push(ash::khr::fragment_shader_barycentric::NAME.as_ptr());
        }
        if self.shading_rates {
            extensions.push(ash::khr::fragment_shading_rate::NAME.as_ptr());
        }
        if self.ray_queries || self.ray_pipelines {
            extensions.extend([
                ash::khr::acceleration_structure::NAME.as_ptr(),
                ash::khr::deferred_host_operations::NAME.as_ptr(),
            ]);
        }
        if self.ray_queries {
            extensions.push(ash::khr::ray_query::NAME.as_ptr());
        }
        if self.ray_pipelines {
            extensions.push(ash::khr::ray_tracing_pipeline::NAME.as_ptr());
        }
        if self.positions_fetched {
            extensions.push(ash::khr::ray_tracing_position_fetch::NAME.as_ptr());
        }
        if self.mesh_shaders {
            extensions.push(ash::ext::mesh_shader::NAME.as_ptr());
        }
        if self.shader_objects {
            extensions.push(ash::ext::shader_object::NAME.as_ptr());
        }
        if self.pipeline_libraries {
            extensions.extend([
                ash::khr::pipeline_library::NAME.as_ptr(),
                ash::ext::graphics_pipeline_library::NAME.as_ptr(),
            ]);
        }
        extensions
    }
}
