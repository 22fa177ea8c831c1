#!/usr/bin/env bash
# The main job: build XR and its plugins, list what it finds, and render the
# samples through the plugins, printing where their PNGs went.
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
