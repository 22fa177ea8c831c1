#!/usr/bin/env bash
# Installs the Debian packages XR needs that are missing (scripts/setup.sh
# runs this first): Mesa's EGL and software drivers (llvmpipe, lavapipe),
# the Vulkan loader, validation layers and registry (vk.xml), and shaderc's static libraries,
# the cache servers the remote-store tests run (nginx with WebDAV,
# redis-server), and Xvfb with the X11 libraries winit opens for the
# viewer's window. Installs nothing that is already there.
set -euo pipefail

packages=(
    libegl1 libegl-mesa0 libgl1-mesa-dri libgbm1   # EGL and llvmpipe (OpenGL 4.5)
    libshaderc-dev glslang-dev spirv-tools        # shaderc, glslang and SPIRV-Tools (static), spirv-val
    libvulkan1 mesa-vulkan-drivers                # the Vulkan loader and lavapipe (Vulkan 1.3)
    vulkan-validationlayers                       # VK_LAYER_KHRONOS_validation for the tests
    libvulkan-dev                                 # vk.xml: the SPIR-V capability table is generated from it, and checked against it
    glslc                                         # the baseline of the SPIR-V benchmark
    nginx libnginx-mod-http-dav-ext redis-server  # the remote-store tests' cache servers (WebDAV, Redis)
    xvfb xauth                                    # a virtual X display for the window tests (Xvfb, xvfb-run)
    libx11-6 libx11-xcb1 libxcursor1 libxrandr2 libxi6 libxkbcommon-x11-0  # what winit loads for an X11 window
)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    # RUNLEVEL=1: install the servers without starting them as system
    # services (the tests start their own, on free ports).
    $sudo env RUNLEVEL=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
