#!/usr/bin/env bash
# Benchmarks: builds XR and its plugins in release, then runs xr-bench.
#   scripts/bench.sh gl-program-binaries [--programs 100]
#   scripts/bench.sh constant-setters
#   scripts/bench.sh slang [--scales 1,10]
#   scripts/bench.sh vulkan-load [--frames 300]
#   scripts/bench.sh warm [--frames 300]
#   scripts/bench.sh wgpu-load [--rounds 5]
#   scripts/bench.sh not-ready [--frames 60] [--paths opengl,wgpu]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/target-dir.sh
scripts/setup.sh
. scripts/lavapipe-env.sh
cargo build --release --quiet
exec "$target/release/xr-bench" "$@"
