#!/usr/bin/env bash
# Installs what XR needs on a fresh Debian machine: Mesa's EGL and software
# drivers (llvmpipe, lavapipe), the Vulkan loader and validation layers, and
# shaderc's static libraries, the cache servers the remote-store tests
# run (nginx with WebDAV, redis-server), and Xvfb with the X11 libraries
# winit opens for the viewer's window. Installs nothing that is already there.
set -euo pipefail

# The Debian packages.
"$(dirname "$0")/setup-packages.sh"

if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: cargo is not on PATH; install the stable Rust toolchain (rustup) first" >&2
    exit 1
fi

# The Slang library for xr-compiler-slang, from the slangpy wheel on PyPI.
"$(dirname "$0")/setup-slang.sh"
# A current lavapipe beside the system's (Mesa 25, from Debian's bookworm-backports).
"$(dirname "$0")/setup-lavapipe.sh"
# BuildGrid, the Remote Execution farm the farm tests start (scripts/remote-exec.sh).
"$(dirname "$0")/setup-buildgrid.sh"
