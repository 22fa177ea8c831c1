//! A window on a virtual display, and shaders edited while it runs (hot reload).

mod hot_reload;
mod viewer;
