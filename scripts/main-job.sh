#!/usr/bin/env bash
# The main job: build XR and its plugins, list what it finds, and render the
# triangle sample through the plugins, printing where its PNG went.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

cargo build --release
out=target/xr-samples
target/release/xr plugins
echo
target/release/triangle --out "$out/triangle.png"
