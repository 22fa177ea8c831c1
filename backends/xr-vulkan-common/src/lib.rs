//! What XR's two Vulkan draw paths share. The compiler plugin bakes
//! fixed-function state into pipelines; the device plugin sets the same
//! state on a command buffer before a shader-object draw. Both read it from
//! [`fixed_function`], so a program draws the same pixels either way.

pub mod fixed_function;
pub mod formats;
