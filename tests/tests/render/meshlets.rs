//! Mesh and task stages on the device: the meshlets sample draws the
//! textured cube through them into the vertex pipeline's pixels (Vulkan,
//! under the validation layers), a mesh program is drawn only by a mesh
//! draw, and OpenGL refuses the stages by name.

use meshlets::{CLEAR, PATHS, SIZE, differing_pixels, meshlet_program, render, skipped};
use xr_device::{DeviceKind, DeviceOptions, DrawCall, MeshDrawCall};
use xr_sourcebuild::{BuildOptions, ConstantTableExt};
use xr_tests::registry;

fn validated() -> DeviceOptions {
    DeviceOptions { validation: true, ..DeviceOptions::default() }
}

#[test]
fn the_meshlets_sample_draws_the_vertex_pipeline_s_pixels_through_task_and_mesh_stages() {
    let registry = registry();
    let vulkan = PATHS.iter().find(|p| p.kind == DeviceKind::VULKAN).expect("a Vulkan path");
    let rendered = render(&registry, *vulkan, &validated()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((rendered.meshlets.width, rendered.meshlets.height), (SIZE, SIZE));
    // Turned about two axes, the cube shows three faces: the task stage
    // culled the three turned away (and drew nothing twice).
    assert_eq!(rendered.faces_drawn, 3, "faces the task stage kept");
    let clear = CLEAR.map(|c| (c * 255.0).round() as u8);
    let covered = rendered.meshlets.rgba.chunks(4).filter(|p| *p != clear).count();
    assert!(covered > 3000, "the cube covers {covered} pixels");
    // One rasteriser, the same positions computed the same way, the same
    // fragment stage: every pixel the vertex pipeline's.
    assert_eq!(differing_pixels(&rendered.meshlets, &rendered.vertex_pipeline), 0);
}

#[test]
fn a_mesh_program_is_drawn_only_by_a_mesh_draw_of_work_groups_the_device_takes() {
    let registry = registry();
    let mut attached = registry.open_with(DeviceKind::VULKAN, "xr-compiler-vk-spirv", &validated()).unwrap();
    let program = attached.compiler.build_program(&meshlet_program().unwrap(), &BuildOptions::default());
    let mut program = program.into_result().unwrap_or_else(|e| panic!("{e}"));
    let device = &mut attached.device;
    let (texture, _paint) = textured::paint_texture(device, &mut attached.compiler).unwrap();
    textured::set_cube_constants(device, &mut program, texture).unwrap();
    let buffer = device.create_buffer(xr_device::BufferUsage::STORAGE, [0u8; 768].as_slice().into()).into_result();
    let binding = device.buffer_binding(buffer.unwrap()).into_result().unwrap();
    for name in ["CubeVertices", "Drawn"] {
        let handle = program.constants.handle(name).unwrap();
        program.constants.set_buffer(handle, &binding).unwrap();
    }
    let target = device.create_depth_render_target(SIZE, SIZE).into_result().unwrap();
    let (vertices, _, _) = textured::cube_buffers(device).unwrap();
    let refused = device.draw(&DrawCall::triangles(target, program.program, vertices, 3)).into_result().unwrap_err();
    assert!(refused.message.contains("is a mesh program: draw it with draw_mesh_tasks"), "{refused}");
    for (groups, said) in [([0, 1, 1], "0 work groups in x"), ([1, u32::MAX, 1], "4294967295 work groups in y")] {
        let call = MeshDrawCall { target, program: program.program, groups, depth_test: true };
        let refused = device.draw_mesh_tasks(&call).into_result().unwrap_err();
        assert!(refused.message.contains(said), "{said}: {refused}");
    }
    let colour_only = device.create_render_target(SIZE, SIZE).into_result().unwrap();
    let call = MeshDrawCall { target: colour_only, program: program.program, groups: [1, 1, 1], depth_test: true };
    let refused = device.draw_mesh_tasks(&call).into_result().unwrap_err();
    assert!(refused.message.contains("has no depth attachment"), "{refused}");
    let vertex = attached.compiler.build_program(&textured::mesh_program().unwrap(), &BuildOptions::default());
    let mut vertex = vertex.into_result().unwrap();
    textured::set_cube_constants(device, &mut vertex, texture).unwrap();
    let call = MeshDrawCall { target, program: vertex.program, groups: [1, 1, 1], depth_test: false };
    let refused = device.draw_mesh_tasks(&call).into_result().unwrap_err();
    assert!(refused.message.contains("is not a mesh program"), "{refused}");
    // Nothing refused reached the driver.
    assert_eq!(device.take_validation_messages().into_result().unwrap().len(), 0);
}

#[test]
fn opengl_says_why_it_skips_the_sample_and_refuses_its_stages_by_name() {
    let registry = registry();
    for path in PATHS.iter().filter(|p| p.kind == DeviceKind::OPENGL) {
        assert!(skipped(*path).is_some_and(|why| why.contains("OpenGL has no task or mesh stages")), "{}", path.name);
        let mut attached = registry.open_with(path.kind, path.build_system, &DeviceOptions::default()).unwrap();
        let built = attached.compiler.build_program(&meshlet_program().unwrap(), &BuildOptions::default());
        let error = built.into_result().err().unwrap_or_else(|| panic!("{} built a mesh program", path.name));
        assert!(
            error.to_string().contains("OpenGL has no task stage (") && error.to_string().contains("cube.task"),
            "{}: {error}",
            path.name
        );
    }
    let vulkan = PATHS.iter().find(|p| p.kind == DeviceKind::VULKAN).unwrap();
    assert_eq!(skipped(*vulkan), None);
}
