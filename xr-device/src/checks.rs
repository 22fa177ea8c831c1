//! The checks every device system makes before a call reaches its API.
//!
//! Each takes the facts it needs (ids, counts, sizes, flags) rather than a
//! device's own objects, so that OpenGL and Vulkan refuse the same input
//! with the same message. A render target's size and a buffer write are
//! checked beside their types: [`crate::check_target_size`] and
//! [`crate::check_buffer_write`].

use crate::{
    commands::RenderTargetId,
    error::XrError,
    resources::{BufferId, BufferUsage, TextureId},
};

/// The object numbered `id` among a device's `items` of one kind; `what`
/// names the kind in the refusal ("render target", "vertex buffer").
pub fn find<'a, T>(items: &'a [T], what: &str, id: u32) -> Result<&'a T, XrError> {
    items.get(id as usize).ok_or_else(|| XrError::invalid_input(format!("no {what} {id}")))
}

/// Checks that a buffer of `size` bytes made with `usage` holds the
/// 32-bit indices `first..first + count` of an indexed draw.
pub fn check_index_buffer(
    id: BufferId,
    usage: BufferUsage,
    size: usize,
    first: u32,
    count: u32,
) -> Result<(), XrError> {
    if !usage.contains(BufferUsage::INDEX) {
        return Err(XrError::invalid_input(format!("buffer {} was not made for indices", id.0)));
    }
    let end = u64::from(first) + u64::from(count);
    if end * 4 > size as u64 {
        return Err(XrError::invalid_input(format!(
            "indices {first}..{end} lie past the end of buffer {} ({} indices)",
            id.0,
            size / 4
        )));
    }
    Ok(())
}

/// Checks that a draw with the depth test on (`depth_test`) goes into a
/// target that has a depth attachment (`has_depth`).
pub fn check_depth_test(target: RenderTargetId, depth_test: bool, has_depth: bool) -> Result<(), XrError> {
    if depth_test && !has_depth {
        return Err(XrError::invalid_input(format!(
            "render target {} has no depth attachment (create it with create_depth_render_target)",
            target.0
        )));
    }
    Ok(())
}

/// Checks a mesh draw's work group counts against the device's `limits`
/// (its largest count in x, y and z), naming the axis: a count of 0 draws
/// nothing, and one beyond the limit is undefined behaviour in the driver.
pub fn check_mesh_groups(groups: [u32; 3], limits: [u32; 3]) -> Result<(), XrError> {
    for ((axis, asked), most) in ["x", "y", "z"].into_iter().zip(groups).zip(limits) {
        if asked == 0 || asked > most {
            return Err(XrError::invalid_input(format!(
                "a mesh draw of {asked} work groups in {axis}: the device takes 1 to {most} (maxTaskWorkGroupCount and maxMeshWorkGroupCount)"
            )));
        }
    }
    Ok(())
}

/// Checks that every index of a bottom level's triangles names one of
/// its `vertex_count` vertices: the driver would read past the buffer.
pub fn check_triangle_indices(buffer: BufferId, indices: &[u32], vertex_count: u64) -> Result<(), XrError> {
    match indices.iter().enumerate().find(|(_, i)| u64::from(**i) >= vertex_count) {
        Some((at, index)) => Err(XrError::invalid_input(format!(
            "index buffer {}: index {index} (at {at}) is past the {vertex_count} vertices of the bottom level",
            buffer.0
        ))),
        None => Ok(()),
    }
}

/// Checks a ray launch's size: at least one ray in each direction, and no
/// more in all than the device launches (`maxRayDispatchInvocationCount`).
pub fn check_launch_size(size: [u32; 3], max_invocations: u64) -> Result<(), XrError> {
    let total = size.iter().map(|s| u64::from(*s)).product::<u64>();
    if total == 0 || total > max_invocations {
        return Err(XrError::invalid_input(format!(
            "a ray launch of {} × {} × {} = {total} rays: the device launches 1 to {max_invocations} \
             (maxRayDispatchInvocationCount)",
            size[0], size[1], size[2]
        )));
    }
    Ok(())
}

/// Checks that `program`, with `unbound` resources not bound yet, can be
/// drawn or dispatched: every resource it uses is bound.
pub fn check_bound(program: u32, unbound: u32) -> Result<(), XrError> {
    if unbound > 0 {
        return Err(XrError::invalid_input(format!(
            "program {program} has {unbound} resource(s) not bound yet: set every texture and buffer it uses (set_texture, set_buffer) before drawing"
        )));
    }
    Ok(())
}

/// Checks that a texture of `levels` levels has `level`.
pub fn check_texture_level(id: TextureId, levels: u32, level: u32) -> Result<(), XrError> {
    if level >= levels {
        return Err(XrError::invalid_input(format!(
            "texture {} has {levels} level(s), not {}",
            id.0,
            u64::from(level) + 1
        )));
    }
    Ok(())
}

/// Checks the contents a buffer is made with: at least one byte.
pub fn check_buffer_data(len: usize) -> Result<(), XrError> {
    if len == 0 {
        return Err(XrError::invalid_input("a buffer needs at least one byte"));
    }
    Ok(())
}

/// Checks that a device whose limit, named `limit_name` as its API names
/// it, is `limit` colour attachments can draw into `count` of them.
pub fn check_color_attachment_limit(count: usize, limit: usize, limit_name: &str) -> Result<(), XrError> {
    if count > limit {
        return Err(XrError::invalid_input(format!(
            "a render target of {count} colour attachments: this device draws into at most {limit} ({limit_name})"
        )));
    }
    Ok(())
}

/// Checks that colour attachment `attachment` of `target`, which has
/// `colors` of them and was made with `create_render_target_with` when
/// `textures`, can be seen as a texture.
pub fn check_attachment_texture(
    target: RenderTargetId,
    textures: bool,
    colors: usize,
    attachment: u32,
) -> Result<(), XrError> {
    if !textures {
        return Err(XrError::invalid_input(format!(
            "render target {} was not made with create_render_target_with: its attachment is not a texture",
            target.0
        )));
    }
    if attachment as usize >= colors {
        return Err(XrError::invalid_input(format!(
            "render target {} has {colors} colour attachment(s), no attachment {attachment}",
            target.0
        )));
    }
    Ok(())
}

/// Checks that `read_pixels` can read `target`, whose colour attachment 0
/// is RGBA8 when `rgba8`.
pub fn check_read_pixels(target: RenderTargetId, rgba8: bool) -> Result<(), XrError> {
    if !rgba8 {
        return Err(XrError::invalid_input(format!(
            "render target {}: read_pixels reads an RGBA8 colour attachment 0; read this one with render_target_texture and read_texture",
            target.0
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The message of a refusal, which is always invalid input.
    fn refused(result: Result<(), XrError>) -> String {
        let error = result.expect_err("refused");
        assert_eq!(error.kind, crate::ErrorKind::InvalidInput, "{error}");
        error.message.into()
    }

    #[test]
    fn a_mesh_draw_launches_one_to_the_device_s_most_work_groups_in_each_axis() {
        let limits = [4_194_304, 65_535, 65_535];
        assert!(check_mesh_groups([1, 1, 1], limits).is_ok());
        assert!(check_mesh_groups([4_194_304, 65_535, 65_535], limits).is_ok());
        assert!(refused(check_mesh_groups([1, 65_536, 1], limits)).contains("65536 work groups in y"));
        assert!(refused(check_mesh_groups([1, 1, 0], limits)).contains("0 work groups in z"));
        // A device without mesh shaders takes none.
        assert!(refused(check_mesh_groups([1, 1, 1], [0; 3])).contains("1 to 0"));
    }

    #[test]
    fn triangles_name_their_vertices_and_a_launch_fits_the_device() {
        assert!(check_triangle_indices(BufferId(2), &[0, 1, 2, 2, 3, 0], 4).is_ok());
        let past = refused(check_triangle_indices(BufferId(2), &[0, 1, 4], 4));
        assert!(past.contains("index buffer 2: index 4 (at 2) is past the 4 vertices"), "{past}");
        assert!(check_launch_size([160, 160, 1], 1 << 30).is_ok());
        assert!(refused(check_launch_size([160, 0, 1], 1 << 30)).contains("= 0 rays"));
        assert!(refused(check_launch_size([1 << 16, 1 << 16, 1], 1 << 30)).contains("launches 1 to 1073741824"));
    }

    #[test]
    fn an_object_is_found_by_its_number() {
        let items = ["a", "b"];
        assert_eq!(find(&items, "texture", 1), Ok(&"b"));
        assert_eq!(find(&items, "render target", 2).unwrap_err().message, "no render target 2");
        assert_eq!(find::<u8>(&[], "vertex buffer", 0).unwrap_err().message, "no vertex buffer 0");
    }

    #[test]
    fn an_index_buffer_is_made_for_indices_and_holds_the_range_drawn() {
        let index = BufferUsage::INDEX;
        // Six indices: 24 bytes.
        assert!(check_index_buffer(BufferId(3), index, 24, 0, 6).is_ok());
        assert!(check_index_buffer(BufferId(3), index, 24, 2, 4).is_ok());
        assert!(check_index_buffer(BufferId(3), index.union(BufferUsage::STORAGE), 24, 0, 0).is_ok());
        assert_eq!(
            refused(check_index_buffer(BufferId(3), BufferUsage::VERTEX, 24, 0, 3)),
            "buffer 3 was not made for indices"
        );
        assert_eq!(
            refused(check_index_buffer(BufferId(3), index, 24, 2, 5)),
            "indices 2..7 lie past the end of buffer 3 (6 indices)"
        );
        assert_eq!(
            refused(check_index_buffer(BufferId(3), index, 24, 0, 7)),
            "indices 0..7 lie past the end of buffer 3 (6 indices)"
        );
        // No overflow where first + count passes u32.
        assert_eq!(
            refused(check_index_buffer(BufferId(0), index, 24, u32::MAX, u32::MAX)),
            format!("indices {}..{} lie past the end of buffer 0 (6 indices)", u32::MAX, 2 * u64::from(u32::MAX))
        );
    }

    #[test]
    fn a_depth_test_needs_a_depth_attachment() {
        assert!(check_depth_test(RenderTargetId(1), true, true).is_ok());
        assert!(check_depth_test(RenderTargetId(1), false, false).is_ok());
        assert!(check_depth_test(RenderTargetId(1), false, true).is_ok());
        assert_eq!(
            refused(check_depth_test(RenderTargetId(1), true, false)),
            "render target 1 has no depth attachment (create it with create_depth_render_target)"
        );
    }

    #[test]
    fn a_program_is_drawn_with_every_resource_bound() {
        assert!(check_bound(7, 0).is_ok());
        assert_eq!(
            refused(check_bound(7, 2)),
            "program 7 has 2 resource(s) not bound yet: set every texture and buffer it uses (set_texture, set_buffer) before drawing"
        );
    }

    #[test]
    fn a_texture_level_is_one_the_texture_has() {
        assert!(check_texture_level(TextureId(4), 3, 0).is_ok());
        assert!(check_texture_level(TextureId(4), 3, 2).is_ok());
        assert_eq!(refused(check_texture_level(TextureId(4), 3, 3)), "texture 4 has 3 level(s), not 4");
        assert_eq!(
            refused(check_texture_level(TextureId(4), 1, u32::MAX)),
            format!("texture 4 has 1 level(s), not {}", u64::from(u32::MAX) + 1)
        );
    }

    #[test]
    fn a_buffer_holds_at_least_one_byte() {
        assert!(check_buffer_data(1).is_ok());
        assert_eq!(refused(check_buffer_data(0)), "a buffer needs at least one byte");
    }

    #[test]
    fn a_render_target_has_no_more_attachments_than_the_device_draws_into() {
        assert!(check_color_attachment_limit(8, 8, "maxColorAttachments").is_ok());
        assert_eq!(
            refused(check_color_attachment_limit(9, 8, "GL_MAX_DRAW_BUFFERS")),
            "a render target of 9 colour attachments: this device draws into at most 8 (GL_MAX_DRAW_BUFFERS)"
        );
    }

    #[test]
    fn an_attachment_is_a_texture_of_a_target_made_with_textures() {
        assert!(check_attachment_texture(RenderTargetId(2), true, 3, 0).is_ok());
        assert!(check_attachment_texture(RenderTargetId(2), true, 3, 2).is_ok());
        assert_eq!(
            refused(check_attachment_texture(RenderTargetId(2), false, 1, 0)),
            "render target 2 was not made with create_render_target_with: its attachment is not a texture"
        );
        assert_eq!(
            refused(check_attachment_texture(RenderTargetId(2), true, 3, 3)),
            "render target 2 has 3 colour attachment(s), no attachment 3"
        );
    }

    #[test]
    fn read_pixels_reads_an_rgba8_attachment() {
        assert!(check_read_pixels(RenderTargetId(5), true).is_ok());
        assert_eq!(
            refused(check_read_pixels(RenderTargetId(5), false)),
            "render target 5: read_pixels reads an RGBA8 colour attachment 0; read this one with render_target_texture and read_texture"
        );
    }
}
