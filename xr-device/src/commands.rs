//! The small command surface samples and tests need: an offscreen target, a
//! vertex buffer, a program to bind, a draw, and pixels read back.

use crate::resources::BufferId;
use abi_stable::{
    StableAbi,
    std_types::{ROption, RVec},
};

/// An offscreen colour target created by [`crate::Device::create_render_target`].
#[repr(transparent)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RenderTargetId(pub u32);

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
