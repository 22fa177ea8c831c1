#!/usr/bin/env bash
# The main job: build XR and its plugins, list what it finds, render the
# samples through the plugins, build the materials library with `xr build`
# and render its scene through every load path, printing where the PNGs went
# and which path each program took.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
. scripts/lavapipe-env.sh

cargo build --release
out=target/xr-samples
target/release/xr plugins
echo
target/release/triangle --out "$out"
echo
target/release/pipelines --store target/xr-store --out "$out/pipelines.png"
echo
# The material library: every program, variant and target into its store
# (target/xr-store/materials), plus its guarded sources (every variant of a stage in one file) beside it.
target/release/xr build -m samples/materials/xr.toml --emit guarded
echo
target/release/materials --store target/xr-store/materials --out "$out"
echo
# Textures, buffers, depth and compute: a compute pass paints a texture, a
# lit cube samples it, through every path.
target/release/textured --out "$out"
echo
# Deferred shading: a bindless G-buffer pass into three attachments, a
# lighting pass reading them, through every path.
target/release/deferred --out "$out"
echo
# The viewer: the same scene in a window on each back end, picked at
# start-up, presented for 60 frames and read back from the window. Under
# Xvfb where there is no display.
run_in_x() { if [ -n "${DISPLAY:-}" ]; then "$@"; else xvfb-run -a "$@"; fi; }
for backend in opengl vulkan; do
    run_in_x target/release/viewer --backend "$backend" --store target/xr-store/materials \
        --manifest samples/materials/xr.toml --no-watch --frames 60 --screenshot "$out/viewer-$backend.png"
done
