//! The small command surface samples and tests need: an offscreen target, a
//! vertex buffer, a program to bind, a draw, and pixels read back.

use crate::{error::XrError, readiness::NotReady, resources::BufferId};
use abi_stable::{
    StableAbi,
    std_types::{ROption, RVec},
};

/// An offscreen colour target created by [`crate::Device::create_render_target`].
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RenderTargetId(pub u32);

/// The most colour attachments a render target may have: what every
/// OpenGL 4.5 context offers (`GL_MAX_DRAW_BUFFERS`) and desktop Vulkan
/// drivers offer (`maxColorAttachments`; Vulkan itself promises 4, and a
/// device refuses more than its own limit).
pub const MAX_COLOR_ATTACHMENTS: usize = 8;

/// A render target of several colour attachments (a G-buffer), made by
/// [`crate::Device::create_render_target_with`].
///
/// A fragment output at `location = i` writes colour attachment `i`; a
/// draw writes only the attachments its fragment stage has outputs for,
/// and leaves the others as they were. On Vulkan, a program's input
/// attachment `input_attachment_index = i` reads colour attachment `i` of
/// the target it draws into (the device binds it: nothing to set).
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct RenderTargetDesc {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The colour attachments' formats, attachment 0 first: 1 to
    /// [`MAX_COLOR_ATTACHMENTS`].
    pub colors: RVec<crate::resources::TextureFormat>,
    /// With a depth attachment (32-bit float).
    pub depth: bool,
}

impl RenderTargetDesc {
    /// Checks the size and the number of attachments before a device makes it.
    pub fn check(&self) -> Result<(), XrError> {
        check_target_size(self.width, self.height)?;
        if self.colors.is_empty() || self.colors.len() > MAX_COLOR_ATTACHMENTS {
            return Err(XrError::invalid_input(format!(
                "a render target has 1 to {MAX_COLOR_ATTACHMENTS} colour attachments, not {}",
                self.colors.len()
            )));
        }
        Ok(())
    }
}

/// A vertex buffer created by [`crate::Device::create_vertex_buffer`].
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VertexBufferId(pub u32);

/// What a [`ProgramRef`] names.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProgramKind {
    /// One linked program holding every stage (`glUseProgram`).
    Program,
    /// A program pipeline combining separable stage programs (`glBindProgramPipeline`).
    Pipeline,
}

/// A linked program or a program pipeline on the device, as a build system hands it out.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProgramRef {
    /// Program or pipeline.
    pub kind: ProgramKind,
    /// The device-native name (a GL program or program pipeline object).
    pub name: u32,
}

impl ProgramRef {
    /// A linked program.
    pub fn program(name: u32) -> Self {
        Self { kind: ProgramKind::Program, name }
    }

    /// A program pipeline.
    pub fn pipeline(name: u32) -> Self {
        Self { kind: ProgramKind::Pipeline, name }
    }
}

/// One float vertex attribute inside an interleaved buffer.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct VertexAttribute {
    /// Shader input location (`layout(location = N)`).
    pub location: u32,
    /// Number of float components, 1 to 4.
    pub components: u32,
    /// Offset from the start of a vertex, in floats.
    pub offset: u32,
}

/// The layout of one interleaved vertex.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct VertexLayout {
    /// Size of one vertex, in floats.
    pub stride: u32,
    /// The attributes of one vertex.
    pub attributes: RVec<VertexAttribute>,
}

impl VertexLayout {
    /// Checks the layout before a device uploads vertices with it: a stride
    /// of at least one float, and every attribute of 1 to 4 floats inside it.
    pub fn check(&self) -> Result<(), XrError> {
        if self.stride == 0 {
            return Err(XrError::invalid_input("vertex layout stride is 0"));
        }
        match self.attributes.iter().find(|a| !(1..=4).contains(&a.components) || a.offset + a.components > self.stride)
        {
            Some(a) => Err(XrError::invalid_input(format!(
                "vertex attribute at location {} does not fit a stride of {} floats",
                a.location, self.stride
            ))),
            None => Ok(()),
        }
    }
}

/// The largest width or height of a render target, in pixels.
pub const MAX_TARGET_SIZE: u32 = 16384;

/// Checks a render target's size before a device makes one.
pub fn check_target_size(width: u32, height: u32) -> Result<(), XrError> {
    if width == 0 || height == 0 || width > MAX_TARGET_SIZE || height > MAX_TARGET_SIZE {
        return Err(XrError::invalid_input(format!("render target size {width}x{height} is out of range")));
    }
    Ok(())
}

/// A triangle-list draw into a render target.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct DrawCall {
    /// Where to draw.
    pub target: RenderTargetId,
    /// What to draw with.
    pub program: ProgramRef,
    /// The vertices.
    pub vertex_buffer: VertexBufferId,
    /// First vertex to draw (first index, for an indexed draw).
    pub first_vertex: u32,
    /// Number of vertices (indices), three per triangle.
    pub vertex_count: u32,
    /// 32-bit indices into the vertices (a buffer made with `BufferUsage::INDEX`).
    pub index_buffer: ROption<BufferId>,
    /// Test and write depth (less passes); the target needs a depth attachment.
    pub depth_test: bool,
    /// What the draw does when its program is not ready for the target
    /// (still compiling off the draw path): wait, by default.
    pub when_not_ready: NotReady,
}

impl DrawCall {
    /// `vertex_count` vertices from the first, no depth test, not indexed.
    pub fn triangles(
        target: RenderTargetId,
        program: ProgramRef,
        vertex_buffer: VertexBufferId,
        vertex_count: u32,
    ) -> Self {
        Self {
            target,
            program,
            vertex_buffer,
            first_vertex: 0,
            vertex_count,
            index_buffer: ROption::RNone,
            depth_test: false,
            when_not_ready: NotReady::Wait,
        }
    }

    /// Drawn through `count` indices of `indices`.
    pub fn indexed(mut self, indices: BufferId, count: u32) -> Self {
        self.index_buffer = ROption::RSome(indices);
        self.vertex_count = count;
        self
    }

    /// With the depth test on.
    pub fn with_depth_test(mut self) -> Self {
        self.depth_test = true;
        self
    }

    /// Skipped, or drawn by a fallback, when its program is not ready.
    pub fn when_not_ready(mut self, policy: NotReady) -> Self {
        self.when_not_ready = policy;
        self
    }
}

/// A draw of a mesh program (task and mesh stages, or a mesh stage alone)
/// into a render target: no vertex buffer, the stages make the geometry.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct MeshDrawCall {
    /// Where to draw.
    pub target: RenderTargetId,
    /// A program of task (optional), mesh and fragment stages.
    pub program: ProgramRef,
    /// Work groups of the first stage (task, or mesh without one) in x, y and z.
    pub groups: [u32; 3],
    /// Test and write depth (less passes); the target needs a depth attachment.
    pub depth_test: bool,
}

/// RGBA8 pixels read back from a render target, top row first.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height * 4` bytes, rows top to bottom.
    pub rgba: RVec<u8>,
}

impl Image {
    /// The RGBA value at (`x`, `y`), `y` counted from the top; `None` outside.
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 4]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let at = ((y * self.width + x) * 4) as usize;
        let p = self.rgba.get(at..at + 4)?;
        Some([p[0], p[1], p[2], p[3]])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(stride: u32, attributes: &[(u32, u32)]) -> VertexLayout {
        VertexLayout {
            stride,
            attributes: attributes
                .iter()
                .enumerate()
                .map(|(i, &(components, offset))| VertexAttribute { location: i as u32, components, offset })
                .collect(),
        }
    }

    #[test]
    fn a_vertex_layout_fits_its_attributes_in_its_stride() {
        assert!(layout(5, &[(2, 0), (3, 2)]).check().is_ok());
        assert!(layout(0, &[]).check().unwrap_err().message.contains("stride is 0"));
        let error = layout(4, &[(2, 0), (3, 2)]).check().unwrap_err();
        assert!(error.message.contains("location 1 does not fit a stride of 4 floats"), "{error}");
        assert!(layout(8, &[(0, 0)]).check().is_err(), "an attribute of no floats");
        assert!(layout(8, &[(5, 0)]).check().is_err(), "more than a vec4");
    }

    #[test]
    fn a_render_target_is_one_pixel_to_the_largest_size() {
        assert!(check_target_size(1, MAX_TARGET_SIZE).is_ok());
        assert!(check_target_size(0, 4).is_err());
        let error = check_target_size(MAX_TARGET_SIZE + 1, 4).unwrap_err();
        assert!(error.message.contains("16385x4 is out of range"), "{error}");
    }
}
