//! The xr-rhi-opengl plugin's shared library: its root module exported for a
//! host that loads plugins from files. The plugin itself is the crate
//! `xr-rhi-opengl`; this library only exports it.

xr_plugin::export_linked_plugin!(plugin::PLUGIN);
