#!/usr/bin/env bash
# The main job: build XR and its plugins, list what it finds, render the
# samples through the plugins, build the materials library with `xr build`
# and render its scene through every load path, printing where the PNGs went
# and which path each program took.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

cargo build --release
out=target/xr-samples
target/release/xr plugins
echo
target/release/triangle --out "$out"
echo
target/release/pipelines --store target/xr-store --out "$out/pipelines.png"
echo
# The material library: every program, variant and target into its store
# (target/xr-store/materials), plus seed 001's guarded GLSL beside it.
target/release/xr build -m samples/materials/xr.toml --emit guarded
echo
target/release/materials --store target/xr-store/materials --out "$out"
