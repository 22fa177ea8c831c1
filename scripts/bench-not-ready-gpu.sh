#!/usr/bin/env bash
# The not-ready benchmark (xr-bench not-ready: the materials scene into five
# new target formats, per device path and policy) on a machine with a GPU,
# where no compiler and no network is at hand. Two steps:
#
#   scripts/bench-not-ready-gpu.sh pack
#       here: a release build, the scene's store built with it, and what the
#       benchmark loads (xr-bench, the device plugins, the loaders) packed
#       into target/gpu-bench.tar.xz
#   scripts/bench-not-ready-gpu.sh run [xr-bench not-ready options…]
#       on the GPU machine, from the repository root, with
#       target/gpu-bench.tar.xz beside it (the device tool carries it:
#       carry ["target/gpu-bench.tar.xz"]): unpacks it and runs the
#       benchmark on the machine's own drivers; the table goes to stdout and,
#       where $OUT is set, to $OUT/not-ready.md
#
# docs/PERFORMANCE.md, "Draws that do not wait", has the figures and how
# to read them.
set -euo pipefail
cd "$(dirname "$0")/.."
pack=target/gpu-bench.tar.xz
case "${1:-}" in
pack)
    . scripts/target-dir.sh
    scripts/setup.sh
    cargo build --release --quiet
    rm -rf target/gpu-bench
    mkdir -p target/gpu-bench
    "$target/release/xr" build -q -m samples/materials/xr.toml --store target/gpu-bench/store
    # The benchmark finds its plugins beside itself; the compilers stay
    # behind (the store is built), the loaders of its targets come.
    for file in xr-bench libxr_rhi_opengl.so libxr_rhi_vulkan.so libxr_rhi_wgpu.so \
        libxr_compiler_glsl.so libxr_compiler_gl_spirv.so libxr_compiler_vk_spirv.so; do
        cp "$target/release/$file" target/gpu-bench/
    done
    strip target/gpu-bench/xr-bench target/gpu-bench/*.so
    tar -C target -cJf "$pack" gpu-bench
    echo "bench-not-ready-gpu: packed $(du -h "$pack" | cut -f1) into $pack"
    ;;
run)
    shift
    [ -f "$pack" ] || { echo "bench-not-ready-gpu: no $pack: run 'pack' first (and carry it)" >&2 && exit 2; }
    work=$(mktemp -d)
    tar -C "$work" -xJf "$pack"
    nvidia-smi -L 2>/dev/null || true
    "$work/gpu-bench/xr-bench" not-ready --from-store "$work/gpu-bench/store" "$@" | tee "$work/not-ready.md"
    if [ -n "${OUT:-}" ]; then cp "$work/not-ready.md" "$OUT/not-ready.md"; fi
    rm -rf "$work"
    ;;
*)
    echo "usage: scripts/bench-not-ready-gpu.sh pack | run [xr-bench not-ready options…]" >&2
    exit 2
    ;;
esac
