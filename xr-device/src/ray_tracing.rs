//! Ray tracing on a device: acceleration structures built from a device's
//! buffers, and the launch of a ray tracing program's rays.
//!
//! A bottom level holds triangles (positions in a buffer, 32-bit indices
//! in another); a top level holds instances of bottom levels, each with a
//! transform. A program binds a top level by name through its constant
//! table ([`crate::Device::acceleration_structure_binding`]), as it binds a
//! buffer; ray queries in any stage read one the same way.

use crate::{ProgramRef, resources::BufferId};
use abi_stable::{StableAbi, std_types::ROption};

/// An acceleration structure made by
/// [`crate::Device::create_bottom_level`] or [`crate::Device::create_top_level`].
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AccelerationStructureId(pub u32);

/// Triangles for a bottom-level acceleration structure.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub struct BottomLevelDesc {
    /// Interleaved float vertices; each starts with its position (3 floats).
    /// Shaders may read the same buffer (made with `BufferUsage::STORAGE`) for
    /// the other attributes of the triangle a ray hit.
    pub vertices: BufferId,
    /// Floats from one vertex to the next (3 or more).
    pub vertex_stride: u32,
    /// 32-bit indices, three per triangle; without them, every three
    /// vertices are a triangle.
    pub indices: ROption<BufferId>,
    /// Triangles any-hit stages never see (`VK_GEOMETRY_OPAQUE_BIT_KHR`).
    pub opaque: bool,
}

/// One instance of a bottom level in a top level.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq)]
pub struct AccelerationInstance {
    /// The bottom level it places.
    pub bottom_level: AccelerationStructureId,
    /// Object to world: a 3 × 4 matrix, row by row (the top three rows of
    /// a 4 × 4 affine transform).
    pub transform: [f32; 12],
    /// What a hit stage reads as `gl_InstanceCustomIndexEXT` (24 bits).
    pub custom_index: u32,
    /// Rays whose cull mask shares no bit with it pass it by (8 bits).
    pub mask: u32,
    /// Added to a ray's hit group index (`instanceShaderBindingTableRecordOffset`, 24 bits).
    pub hit_group_offset: u32,
}

impl AccelerationInstance {
    /// An instance of `bottom_level` with `transform`, seen by every ray,
    /// custom index 0, the first hit group.
    pub fn new(bottom_level: AccelerationStructureId, transform: [f32; 12]) -> Self {
        Self { bottom_level, transform, custom_index: 0, mask: 0xff, hit_group_offset: 0 }
    }

    /// Object to world as a 3 × 4 row-major matrix, from a column-major 4 × 4 one.
    pub fn rows_of(column_major: &[f32; 16]) -> [f32; 12] {
        let mut rows = [0.0; 12];
        for row in 0..3 {
            for column in 0..4 {
                rows[row * 4 + column] = column_major[column * 4 + row];
            }
        }
        rows
    }
}

/// A launch of a ray tracing program's ray generation stage.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TraceRaysCall {
    /// A program of ray tracing stages.
    pub program: ProgramRef,
    /// Invocations in x, y and z (`gl_LaunchSizeEXT`): a trace target's
    /// width, height and 1, typically.
    pub size: [u32; 3],
}

/// The field limits of an instance, checked before a device writes it.
pub fn check_instance(index: usize, instance: &AccelerationInstance) -> Result<(), crate::XrError> {
    let too_wide = |value: u32, bits: u32| value >> bits != 0;
    let field = if too_wide(instance.custom_index, 24) {
        Some("custom_index (24 bits)")
    } else if too_wide(instance.mask, 8) {
        Some("mask (8 bits)")
    } else if too_wide(instance.hit_group_offset, 24) {
        Some("hit_group_offset (24 bits)")
    } else {
        None
    };
    match field {
        Some(field) => Err(crate::XrError::invalid_input(format!("instance {index}: {field} is out of range"))),
        None if instance.transform.iter().any(|v| !v.is_finite()) => {
            Err(crate::XrError::invalid_input(format!("instance {index}: its transform is not finite")))
        }
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_major_matrix_gives_its_top_three_rows() {
        let mut m = [0.0f32; 16];
        for (i, v) in m.iter_mut().enumerate() {
            *v = i as f32;
        }
        // Column-major: element (row r, column c) is at c * 4 + r.
        assert_eq!(AccelerationInstance::rows_of(&m), [0.0, 4.0, 8.0, 12.0, 1.0, 5.0, 9.0, 13.0, 2.0, 6.0, 10.0, 14.0]);
    }

    #[test]
    fn instance_fields_are_refused_past_their_bits() {
        let ok = AccelerationInstance::new(AccelerationStructureId(0), [0.0; 12]);
        assert!(check_instance(0, &ok).is_ok());
        let wide = AccelerationInstance { mask: 0x100, ..ok };
        assert!(check_instance(3, &wide).unwrap_err().message.contains("instance 3: mask (8 bits)"));
        let index = AccelerationInstance { custom_index: 1 << 24, ..ok };
        assert!(check_instance(0, &index).is_err());
        let nan = AccelerationInstance { transform: [f32::NAN; 12], ..ok };
        assert!(check_instance(0, &nan).unwrap_err().message.contains("not finite"));
    }
}
