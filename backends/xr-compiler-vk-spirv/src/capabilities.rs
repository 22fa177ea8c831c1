//! What a Vulkan device must have to take a SPIR-V module: every
//! capability and extension of the specification's SPIR-V environment
//! appendix, generated from the Vulkan registry into [`capability_table`]
//! (`scripts/gen-vulkan-capabilities.py`), checked against the live device
//! by name before the driver sees a module. A module that needs what the
//! device lacks is refused naming the capability, what would enable it and
//! the device; the drivers answer such a module with validation errors at
//! best and a crash at worst.
//!
//! The device's features are read by name: the table carries each feature
//! struct's `sType` and `VkBool32` members, so one
//! `vkGetPhysicalDeviceFeatures2` over a chain of those the device provides
//! reads them all, with no code per struct. The device system enables every
//! feature of the core structs it has, and those of the extensions it
//! enables (docs/SPIRV.md), so what it has is what a module may use.

// Generated: kept as the script writes it, so that its test compares it byte for byte.
#[rustfmt::skip]
pub mod capability_table;

use ash::vk;
use std::collections::HashMap;

/// One way a device enables a capability or extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enable {
    /// A core version (major, minor).
    Version(u32, u32),
    /// A device extension.
    Extension(&'static str),
    /// A feature of a feature struct, where one of its requirements holds.
    Feature {
        /// The struct (`VkPhysicalDeviceVulkan11Features`).
        structure: &'static str,
        /// Its member (`storageInputOutput16`).
        feature: &'static str,
        /// Any one of these makes the struct count.
        requires: &'static [Requirement],
    },
    /// A value of a device property.
    Property {
        /// The property struct (`VkPhysicalDeviceVulkan11Properties`).
        structure: &'static str,
        /// Its member.
        member: &'static str,
        /// The value (`VK_TRUE`, or a bit such as `VK_SUBGROUP_FEATURE_BASIC_BIT`).
        value: &'static str,
        /// What must hold for the struct to count.
        requires: &'static [Requirement],
    },
}

/// A core version or a device extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requirement {
    /// A core version (major, minor).
    Version(u32, u32),
    /// A device extension.
    Extension(&'static str),
}

/// A feature struct: its `sType` (0 for `VkPhysicalDeviceFeatures`), its
/// `VkBool32` members in order, what provides it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeatureStruct {
    /// `VkPhysicalDevice…Features…`.
    pub name: &'static str,
    /// Its `VkStructureType`.
    pub s_type: i32,
    /// Its members after `sType` and `pNext`, all `VkBool32`.
    pub members: &'static [&'static str],
    /// The core versions and extensions that provide it.
    pub provided_by: &'static [Requirement],
}

/// What a device has, as the table names it.
#[derive(Clone, Debug, Default)]
pub struct DeviceOffer {
    /// The core version the device runs (the lower of its own and XR's instance's).
    pub version: (u32, u32),
    /// The extensions enabled on the device.
    pub extensions: Vec<String>,
    /// `struct.member` → enabled, for every struct the device provides.
    pub features: HashMap<String, bool>,
    /// `struct.member` → value, for the properties the table names.
    pub properties: HashMap<String, Property>,
}

/// A property's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Property {
    /// A `VkBool32`.
    Bool(bool),
    /// Subgroup operations (`VkSubgroupFeatureFlags`).
    Subgroup(vk::SubgroupFeatureFlags),
}

impl Requirement {
    fn holds(&self, device: &DeviceOffer) -> bool {
        match self {
            Requirement::Version(major, minor) => device.version >= (*major, *minor),
            Requirement::Extension(name) => device.extensions.iter().any(|e| e == name),
        }
    }

    fn name(&self) -> String {
        match self {
            Requirement::Version(major, minor) => format!("Vulkan {major}.{minor}"),
            Requirement::Extension(name) => (*name).to_owned(),
        }
    }
}

impl Enable {
    /// Whether `device` enables it this way.
    pub fn holds(&self, device: &DeviceOffer) -> bool {
        match self {
            Enable::Version(major, minor) => device.version >= (*major, *minor),
            Enable::Extension(name) => device.extensions.iter().any(|e| e == name),
            Enable::Feature { structure, feature, requires } => {
                requires.iter().any(|r| r.holds(device))
                    && device.features.get(&format!("{structure}.{feature}")).copied().unwrap_or(false)
            }
            Enable::Property { structure, member, value, requires } => {
                requires.iter().any(|r| r.holds(device))
                    && match device.properties.get(&format!("{structure}.{member}")) {
                        Some(Property::Bool(b)) => *b == (*value == "VK_TRUE"),
                        Some(Property::Subgroup(flags)) => subgroup_bit(value).is_some_and(|bit| flags.contains(bit)),
                        // A property the device was not asked for: the validation layers judge.
                        None => true,
                    }
            }
        }
    }

    /// For a person: `the device feature storageInputOutput16`,
    /// `VK_KHR_shader_draw_parameters`, `Vulkan 1.1`.
    pub fn describe(&self) -> String {
        let core = |requires: &[Requirement]| requires.iter().all(|r| matches!(r, Requirement::Version(..)));
        match self {
            Enable::Version(major, minor) => format!("Vulkan {major}.{minor}"),
            Enable::Extension(name) => (*name).to_owned(),
            Enable::Feature { feature, requires, .. } if core(requires) => format!("the device feature {feature}"),
            Enable::Feature { feature, requires, .. } => {
                let of: Vec<String> = requires.iter().map(Requirement::name).collect();
                format!("the device feature {feature} of {}", of.join(" or "))
            }
            Enable::Property { structure, member, value, .. } => format!("{structure}.{member} {value}"),
        }
    }
}

fn subgroup_bit(name: &str) -> Option<vk::SubgroupFeatureFlags> {
    Some(match name {
        "VK_SUBGROUP_FEATURE_BASIC_BIT" => vk::SubgroupFeatureFlags::BASIC,
        "VK_SUBGROUP_FEATURE_VOTE_BIT" => vk::SubgroupFeatureFlags::VOTE,
        "VK_SUBGROUP_FEATURE_ARITHMETIC_BIT" => vk::SubgroupFeatureFlags::ARITHMETIC,
        "VK_SUBGROUP_FEATURE_BALLOT_BIT" => vk::SubgroupFeatureFlags::BALLOT,
        "VK_SUBGROUP_FEATURE_SHUFFLE_BIT" => vk::SubgroupFeatureFlags::SHUFFLE,
        "VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT" => vk::SubgroupFeatureFlags::SHUFFLE_RELATIVE,
        "VK_SUBGROUP_FEATURE_CLUSTERED_BIT" => vk::SubgroupFeatureFlags::CLUSTERED,
        "VK_SUBGROUP_FEATURE_QUAD_BIT" => vk::SubgroupFeatureFlags::QUAD,
        "VK_SUBGROUP_FEATURE_PARTITIONED_BIT_NV" => vk::SubgroupFeatureFlags::PARTITIONED_NV,
        _ => return None,
    })
}

/// The first of `declared` (extension names, of `table`) that `device`
/// cannot take, with every way it could. Names the table does not know are
/// left to the validation layers.
pub fn first_missing<'t>(
    table: &'t [(&'static str, &'static [Enable])],
    declared: &[String],
    device: &DeviceOffer,
) -> Option<(&'t str, &'t [Enable])> {
    declared.iter().find_map(|name| {
        let (name, ways) = table.iter().find(|(n, _)| n == name)?;
        (!ways.iter().any(|way| way.holds(device))).then_some((*name, *ways))
    })
}

/// The first capability of `declared` (by number) that `device` cannot
/// take, with every way it could: the table's entries are matched by the
/// number their name has in SPIR-V's grammar, so that a capability the
/// registry lists under several names (an NV and an EXT spelling of one
/// number) holds by any of their ways, and a module's capability is found
/// whatever alias its compiler had in mind.
pub fn first_missing_capability(declared: &[u32], device: &DeviceOffer) -> Option<(&'static str, Vec<Enable>)> {
    use std::str::FromStr;
    use xr_spirv::container::spirv::Capability;
    declared.iter().find_map(|number| {
        let entries: Vec<&(&'static str, &'static [Enable])> = capability_table::CAPABILITIES
            .iter()
            .filter(|(name, _)| Capability::from_str(name).is_ok_and(|c| c as u32 == *number))
            .collect();
        // Named as SPIR-V's grammar names the number first (the KHR spelling over the NV one).
        let canonical = Capability::from_u32(*number).map(|c| format!("{c:?}"));
        let (first, _) = entries.iter().find(|(name, _)| Some(*name) == canonical.as_deref()).or(entries.first())?;
        // The named entry's ways first.
        let ways: Vec<Enable> = entries
            .iter()
            .filter(|(name, _)| name == first)
            .chain(entries.iter().filter(|(name, _)| name != first))
            .flat_map(|(_, ways)| ways.iter().copied())
            .collect();
        (!ways.iter().any(|way| way.holds(device))).then_some((*first, ways))
    })
}

/// Every feature of the structs `device` provides, read from the device in
/// one `vkGetPhysicalDeviceFeatures2`, as `struct.member` → enabled.
///
/// # Safety
/// `physical` belongs to `instance`, which is live.
pub unsafe fn read_features(
    instance: &ash::Instance,
    physical: vk::PhysicalDevice,
    device: &DeviceOffer,
) -> HashMap<String, bool> {
    let provided: Vec<&FeatureStruct> = capability_table::FEATURE_STRUCTS
        .iter()
        .filter(|s| s.s_type != 0 && s.provided_by.iter().any(|r| r.holds(device)))
        .collect();
    // Each struct as a buffer of 8-byte words (its alignment): the header
    // every extensible struct starts with (sType, pNext), then its VkBool32s.
    const HEADER: usize = size_of::<vk::BaseOutStructure<'static>>();
    let mut buffers: Vec<Vec<u64>> =
        provided.iter().map(|s| vec![0u64; (HEADER + s.members.len() * 4).div_ceil(8)]).collect();
    let mut next: *mut vk::BaseOutStructure<'static> = std::ptr::null_mut();
    for (buffer, structure) in buffers.iter_mut().zip(&provided).rev() {
        let header = buffer.as_mut_ptr().cast::<vk::BaseOutStructure<'static>>();
        // SAFETY: the buffer is zeroed, 8-byte aligned and longer than the header.
        unsafe {
            (*header).s_type = vk::StructureType::from_raw(structure.s_type);
            (*header).p_next = next;
        }
        next = header;
    }
    let mut query = vk::PhysicalDeviceFeatures2 { p_next: next.cast(), ..Default::default() };
    // SAFETY: as the caller promises; every struct in the chain is one the
    // device provides, laid out as its sType says (sType, pNext, VkBool32s),
    // and the buffers outlive the call.
    unsafe { instance.get_physical_device_features2(physical, &mut query) };
    let mut features = HashMap::new();
    let core = capability_table::FEATURE_STRUCTS.iter().find(|s| s.s_type == 0);
    if let Some(core) = core {
        // VkPhysicalDeviceFeatures is a plain run of VkBool32s.
        // SAFETY: the struct is #[repr(C)] of VkBool32 members only.
        let words: &[u32] = unsafe {
            std::slice::from_raw_parts(
                (&query.features as *const vk::PhysicalDeviceFeatures).cast(),
                size_of::<vk::PhysicalDeviceFeatures>() / 4,
            )
        };
        for (member, word) in core.members.iter().zip(words) {
            features.insert(format!("{}.{member}", core.name), *word == vk::TRUE);
        }
    }
    for (buffer, structure) in buffers.iter().zip(&provided) {
        // SAFETY: the buffer holds the header, then the members.
        let words: &[u32] = unsafe {
            std::slice::from_raw_parts(buffer.as_ptr().cast::<u8>().add(HEADER).cast::<u32>(), structure.members.len())
        };
        for (member, word) in structure.members.iter().zip(words) {
            features.insert(format!("{}.{member}", structure.name), *word == vk::TRUE);
        }
    }
    features
}

/// The properties the table names, as `struct.member` → value.
///
/// # Safety
/// `physical` belongs to `instance`, which is live and of Vulkan 1.2 or later.
pub unsafe fn read_properties(instance: &ash::Instance, physical: vk::PhysicalDevice) -> HashMap<String, Property> {
    let mut vulkan11 = vk::PhysicalDeviceVulkan11Properties::default();
    let mut vulkan12 = vk::PhysicalDeviceVulkan12Properties::default();
    {
        let mut query = vk::PhysicalDeviceProperties2::default().push_next(&mut vulkan11).push_next(&mut vulkan12);
        // SAFETY: as the caller promises; the chain lives across the call.
        unsafe { instance.get_physical_device_properties2(physical, &mut query) };
    }
    let v12 = "VkPhysicalDeviceVulkan12Properties";
    let flag = |b: vk::Bool32| Property::Bool(b == vk::TRUE);
    let mut properties = HashMap::from([(
        "VkPhysicalDeviceVulkan11Properties.subgroupSupportedOperations".to_owned(),
        Property::Subgroup(vulkan11.subgroup_supported_operations),
    )]);
    for (member, value) in [
        ("shaderDenormPreserveFloat16", vulkan12.shader_denorm_preserve_float16),
        ("shaderDenormPreserveFloat32", vulkan12.shader_denorm_preserve_float32),
        ("shaderDenormPreserveFloat64", vulkan12.shader_denorm_preserve_float64),
        ("shaderDenormFlushToZeroFloat16", vulkan12.shader_denorm_flush_to_zero_float16),
        ("shaderDenormFlushToZeroFloat32", vulkan12.shader_denorm_flush_to_zero_float32),
        ("shaderDenormFlushToZeroFloat64", vulkan12.shader_denorm_flush_to_zero_float64),
        ("shaderSignedZeroInfNanPreserveFloat16", vulkan12.shader_signed_zero_inf_nan_preserve_float16),
        ("shaderSignedZeroInfNanPreserveFloat32", vulkan12.shader_signed_zero_inf_nan_preserve_float32),
        ("shaderSignedZeroInfNanPreserveFloat64", vulkan12.shader_signed_zero_inf_nan_preserve_float64),
        ("shaderRoundingModeRTEFloat16", vulkan12.shader_rounding_mode_rte_float16),
        ("shaderRoundingModeRTEFloat32", vulkan12.shader_rounding_mode_rte_float32),
        ("shaderRoundingModeRTEFloat64", vulkan12.shader_rounding_mode_rte_float64),
        ("shaderRoundingModeRTZFloat16", vulkan12.shader_rounding_mode_rtz_float16),
        ("shaderRoundingModeRTZFloat32", vulkan12.shader_rounding_mode_rtz_float32),
        ("shaderRoundingModeRTZFloat64", vulkan12.shader_rounding_mode_rtz_float64),
    ] {
        properties.insert(format!("{v12}.{member}"), flag(value));
    }
    properties
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed table is what the script makes of the registry this
    /// machine has (Debian's libvulkan-dev, installed by the setup): a
    /// table edited by hand, or a registry updated without generating it
    /// again, fails here.
    #[test]
    fn the_table_is_what_the_registry_says() {
        let registry = std::path::Path::new("/usr/share/vulkan/registry/vk.xml");
        assert!(
            registry.exists(),
            "{} is missing: scripts/setup-packages.sh installs libvulkan-dev",
            registry.display()
        );
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let output = std::process::Command::new("python3")
            .arg(root.join("scripts/gen-vulkan-capabilities.py"))
            .arg(registry)
            .output()
            .expect("python3 runs");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let committed =
            std::fs::read_to_string(root.join("backends/xr-compiler-vk-spirv/src/capabilities/capability_table.rs"))
                .unwrap();
        assert!(
            String::from_utf8_lossy(&output.stdout) == committed,
            "capability_table.rs differs from what scripts/gen-vulkan-capabilities.py makes of {}: run it again",
            registry.display()
        );
    }

    /// The struct types the script computed are ash's.
    #[test]
    fn the_struct_types_are_the_registry_s() {
        let s_type = |name: &str| capability_table::FEATURE_STRUCTS.iter().find(|s| s.name == name).unwrap().s_type;
        assert_eq!(
            s_type("VkPhysicalDeviceVulkan11Features"),
            vk::StructureType::PHYSICAL_DEVICE_VULKAN_1_1_FEATURES.as_raw()
        );
        assert_eq!(
            s_type("VkPhysicalDeviceVulkan12Features"),
            vk::StructureType::PHYSICAL_DEVICE_VULKAN_1_2_FEATURES.as_raw()
        );
        assert_eq!(
            s_type("VkPhysicalDeviceRayTracingPipelineFeaturesKHR"),
            vk::StructureType::PHYSICAL_DEVICE_RAY_TRACING_PIPELINE_FEATURES_KHR.as_raw()
        );
        assert_eq!(
            s_type("VkPhysicalDeviceFragmentShaderBarycentricFeaturesKHR"),
            vk::StructureType::PHYSICAL_DEVICE_FRAGMENT_SHADER_BARYCENTRIC_FEATURES_KHR.as_raw()
        );
        let vulkan11 =
            capability_table::FEATURE_STRUCTS.iter().find(|s| s.name == "VkPhysicalDeviceVulkan11Features").unwrap();
        assert_eq!(vulkan11.members.len() * 4, size_of::<vk::PhysicalDeviceVulkan11Features>() - 16);
    }

    #[test]
    fn a_capability_is_taken_by_any_of_its_ways_and_refused_naming_them_all() {
        let mut device = DeviceOffer { version: (1, 3), ..DeviceOffer::default() };
        device.features.insert("VkPhysicalDeviceVulkan11Features.storageInputOutput16".into(), false);
        use xr_spirv::container::spirv::Capability;
        let declared = [Capability::Shader as u32, Capability::StorageInputOutput16 as u32];
        let (name, ways) = first_missing_capability(&declared, &device).expect("refused");
        assert_eq!(name, "StorageInputOutput16");
        let said: Vec<String> = ways.iter().map(Enable::describe).collect();
        assert_eq!(
            said,
            [
                "the device feature storageInputOutput16",
                "the device feature storageInputOutput16 of VK_KHR_16bit_storage"
            ]
        );
        device.features.insert("VkPhysicalDeviceVulkan11Features.storageInputOutput16".into(), true);
        assert_eq!(first_missing_capability(&declared, &device), None);
        // Draw parameters: a feature, or the extension alone.
        let declared = [Capability::DrawParameters as u32];
        assert!(first_missing_capability(&declared, &device).is_some());
        device.extensions.push("VK_KHR_shader_draw_parameters".into());
        assert_eq!(first_missing_capability(&declared, &device), None);
        // A capability of two names in the registry holds by the ways of
        // either (ShadingRateNV and FragmentDensityEXT are one number).
        let declared = [Capability::FragmentDensityEXT as u32];
        let (_, ways) = first_missing_capability(&declared, &device).expect("neither extension");
        assert_eq!(ways.len(), 2, "both names' ways: {ways:?}");
        device.extensions.push("VK_NV_shading_rate_image".into());
        device.features.insert("VkPhysicalDeviceShadingRateImageFeaturesNV.shadingRateImage".into(), true);
        assert_eq!(first_missing_capability(&declared, &device), None);
        // Unknown to the table: left to the validation layers.
        assert_eq!(first_missing_capability(&[999_999], &device), None);
        // Extensions by name.
        let spv = ["SPV_KHR_ray_query".to_owned()];
        assert!(first_missing(capability_table::EXTENSIONS, &spv, &device).is_some());
    }

    /// Every subgroup operation a device lacks refuses the modules that use
    /// it, by the capability and the operation's bit, and a device with
    /// the rest still takes everything else: lavapipe has every operation,
    /// so this is where a refusal is seen. The arithmetic case is a real
    /// compute stage compiled by glslang (`subgroupAdd`).
    #[test]
    fn a_subgroup_operation_the_device_lacks_refuses_the_modules_that_use_it_by_name() {
        use xr_spirv::container::spirv::Capability;
        let every = vk::SubgroupFeatureFlags::BASIC
            | vk::SubgroupFeatureFlags::VOTE
            | vk::SubgroupFeatureFlags::ARITHMETIC
            | vk::SubgroupFeatureFlags::BALLOT
            | vk::SubgroupFeatureFlags::SHUFFLE
            | vk::SubgroupFeatureFlags::SHUFFLE_RELATIVE
            | vk::SubgroupFeatureFlags::CLUSTERED
            | vk::SubgroupFeatureFlags::QUAD;
        let device = |operations: vk::SubgroupFeatureFlags| {
            let mut device = DeviceOffer { version: (1, 3), ..DeviceOffer::default() };
            device.properties.insert(
                "VkPhysicalDeviceVulkan11Properties.subgroupSupportedOperations".into(),
                Property::Subgroup(operations),
            );
            device
        };
        let operations = [
            (Capability::GroupNonUniform, vk::SubgroupFeatureFlags::BASIC, "BASIC"),
            (Capability::GroupNonUniformVote, vk::SubgroupFeatureFlags::VOTE, "VOTE"),
            (Capability::GroupNonUniformArithmetic, vk::SubgroupFeatureFlags::ARITHMETIC, "ARITHMETIC"),
            (Capability::GroupNonUniformBallot, vk::SubgroupFeatureFlags::BALLOT, "BALLOT"),
            (Capability::GroupNonUniformShuffle, vk::SubgroupFeatureFlags::SHUFFLE, "SHUFFLE"),
            (
                Capability::GroupNonUniformShuffleRelative,
                vk::SubgroupFeatureFlags::SHUFFLE_RELATIVE,
                "SHUFFLE_RELATIVE",
            ),
            (Capability::GroupNonUniformClustered, vk::SubgroupFeatureFlags::CLUSTERED, "CLUSTERED"),
            (Capability::GroupNonUniformQuad, vk::SubgroupFeatureFlags::QUAD, "QUAD"),
        ];
        for (capability, bit, bit_name) in operations {
            let declared = [Capability::Shader as u32, capability as u32];
            assert_eq!(
                first_missing_capability(&declared, &device(every)),
                None,
                "{capability:?} on a device with all"
            );
            let (name, ways) = first_missing_capability(&declared, &device(every & !bit))
                .unwrap_or_else(|| panic!("{capability:?} taken by a device without {bit_name}"));
            assert_eq!(name, format!("{capability:?}"));
            let said: Vec<String> = ways.iter().map(Enable::describe).collect();
            assert_eq!(
                said,
                [format!(
                    "VkPhysicalDeviceVulkan11Properties.subgroupSupportedOperations VK_SUBGROUP_FEATURE_{bit_name}_BIT"
                )]
            );
            // The other operations' modules are not refused for this one.
            for (other, other_bit, _) in operations {
                if other_bit != bit {
                    let declared = [other as u32];
                    assert_eq!(first_missing_capability(&declared, &device(every & !bit)), None, "{other:?}");
                }
            }
        }

        let compiler = xr_spirv::SpirvCompiler::new().expect("shaderc starts");
        let source = "#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 8) in;
layout(std430, binding = 0) buffer Sums { uint sums[]; };
void main() { sums[gl_GlobalInvocationID.x] = subgroupAdd(gl_LocalInvocationID.x); }
";
        let desc = xr_sourcebuild::SourceDesc::new("glsl", xr_sourcebuild::ShaderStage::Compute, "sum.comp", source);
        let module = compiler
            .compile(&desc, &xr_spirv::SpirvOptions::new(xr_spirv::TargetEnv::Vulkan12))
            .expect("a subgroup compute stage compiles");
        let declared = xr_spirv::reflect::declared_capabilities(&module.words).expect("its capabilities");
        assert!(declared.contains(&(Capability::GroupNonUniformArithmetic as u32)), "{declared:?}");
        assert_eq!(first_missing_capability(&declared, &device(every)), None);
        let (name, _) = first_missing_capability(&declared, &device(every & !vk::SubgroupFeatureFlags::ARITHMETIC))
            .expect("refused without arithmetic");
        assert_eq!(name, "GroupNonUniformArithmetic");
    }

    /// A ray generation stage that reorders its invocations (the capability
    /// ShaderInvocationReorderNV and its extension declared) with, in every
    /// block of its body, an instruction newer than reflection's SPIR-V
    /// grammar (`OpReorderThreadWithHintEXT`, SPIR-V of 2025): reflection
    /// reads it as it reads the stage without that instruction, and a device
    /// with ray tracing pipelines but not invocation reordering refuses it by
    /// the capability's name and the extension that would enable it, as the
    /// device check does before the driver sees the module.
    #[test]
    fn a_reordering_stage_with_an_instruction_newer_than_the_grammar_is_refused_by_its_capability() {
        use xr_spirv::container::spirv::{Capability, Op};
        use xr_spirv::container::walk::{first_word, instruction_list, string_operand};
        const REORDER_THREAD_WITH_HINT_EXT: u32 = 5314;
        let source = "#version 460
#extension GL_EXT_ray_tracing : require
layout(set = 0, binding = 0) uniform accelerationStructureEXT scene;
layout(location = 0) rayPayloadEXT vec3 color;
void main() {
    traceRayEXT(scene, gl_RayFlagsOpaqueEXT, 0xFF, 0, 0, 0, vec3(0.0), 0.001, vec3(0.0, 0.0, 1.0), 100.0, 0);
}
";
        let stage = xr_sourcebuild::ShaderStage::RayGeneration;
        let options = xr_spirv::SpirvOptions::new(xr_spirv::TargetEnv::Vulkan12).for_stages(&[stage]).expect("raised");
        let desc = xr_sourcebuild::SourceDesc::new("glsl", stage, "reorder.rgen", source);
        let compiled = xr_spirv::SpirvCompiler::new().expect("shaderc starts").compile(&desc, &options);
        let plain = compiled.unwrap_or_else(|e| panic!("{e}")).words;
        let list = instruction_list(&plain).expect("well formed");
        let mut words = plain[..5].to_vec();
        for (index, i) in list.iter().enumerate() {
            words.extend_from_slice(&plain[i.offset..i.end()]);
            let next = list.get(index + 1).and_then(|n| n.op());
            if i.op() == Some(Op::Capability) && next != Some(Op::Capability) {
                words.extend([first_word(Op::Capability, 2), Capability::ShaderInvocationReorderNV as u32]);
            }
            if i.op() == Some(Op::Extension) && next != Some(Op::Extension) {
                let name = string_operand("SPV_NV_shader_invocation_reorder");
                words.push(first_word(Op::Extension, 1 + name.len()));
                words.extend(name);
            }
            if i.op() == Some(Op::Label) {
                words.extend([(3 << 16) | REORDER_THREAD_WITH_HINT_EXT, i.operands[0], i.operands[0]]);
            }
        }
        let reflection = xr_spirv::reflect(&words, "main").unwrap_or_else(|e| panic!("refused for the grammar: {e}"));
        assert_eq!(reflection, xr_spirv::reflect(&plain, "main").expect("the stage as compiled"));
        let declared = xr_spirv::reflect::declared_capabilities(&words).expect("its capabilities");
        let extensions = xr_spirv::reflect::declared_extensions(&words).expect("its extensions");
        assert!(declared.contains(&(Capability::ShaderInvocationReorderNV as u32)), "{declared:?}");

        let mut device = DeviceOffer {
            version: (1, 3),
            extensions: vec!["VK_KHR_ray_tracing_pipeline".into()],
            ..Default::default()
        };
        device.features.insert("VkPhysicalDeviceRayTracingPipelineFeaturesKHR.rayTracingPipeline".into(), true);
        let (name, ways) = first_missing_capability(&declared, &device).expect("refused without reordering");
        assert_eq!(name, "ShaderInvocationReorderNV");
        assert_eq!(ways, [Enable::Extension("VK_NV_ray_tracing_invocation_reorder")]);
        let (name, _) = first_missing(capability_table::EXTENSIONS, &extensions, &device).expect("its extension too");
        assert_eq!(name, "SPV_NV_shader_invocation_reorder");
        // The stage as compiled, and the reordering one on a device that reorders, are taken.
        let compiled = xr_spirv::reflect::declared_capabilities(&plain).expect("its capabilities");
        assert_eq!(first_missing_capability(&compiled, &device), None);
        device.extensions.push("VK_NV_ray_tracing_invocation_reorder".into());
        assert_eq!(first_missing_capability(&declared, &device), None);
        assert_eq!(first_missing(capability_table::EXTENSIONS, &extensions, &device), None);
    }
}
