#!/usr/bin/env bash
# The main job: build XR and its plugins, list what it finds, render the
# samples through the plugins, build the materials library with `xr build`
# (and with the sample's own build script) and render its scene through
# every load path, printing where the PNGs went
# and which path each program took.
#
# Each step says what it is doing, then its result and time:
#   ==> Installing the missing system packages (apt-get) ... ok (12 s)
# The set-up and the build keep what apt-get, dpkg, pip and cargo say in
# target/logs/STEP.log, printed only when the step fails; the samples'
# own lines (where the PNGs went, which path each program took) are shown.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/target-dir.sh
logs=$target/logs
mkdir -p "$logs"
job_start=$SECONDS

took() { # seconds → "12 s", "3 min 4 s"
    if [ "$1" -ge 60 ]; then echo "$(($1 / 60)) min $(($1 % 60)) s"; else echo "$1 s"; fi
}

# A step whose output goes to its log: one line, its output only on failure.
quiet_step() { # log name, what it does, command…
    local log="$logs/$1.log" what=$2 start=$SECONDS status=0
    shift 2
    printf '==> %s ... ' "$what"
    "$@" >"$log" 2>&1 || status=$?
    if [ "$status" -eq 0 ]; then
        echo "ok ($(took $((SECONDS - start))))"
        return
    fi
    echo "failed (exit status $status, $(took $((SECONDS - start))))"
    echo "--- what it said (the last 200 lines of $log):"
    tail -n 200 "$log"
    echo "--- the step failed: the log above says why"
    exit "$status"
}

# A step whose output is its result: shown as it comes.
step() { # what it does, command…
    local what=$1 start=$SECONDS status=0
    shift
    echo "==> $what"
    "$@" || status=$?
    if [ "$status" -eq 0 ]; then
        echo "    ok ($(took $((SECONDS - start))))"
        echo
        return
    fi
    echo "    failed (exit status $status, $(took $((SECONDS - start))))"
    exit "$status"
}

need_cargo() {
    command -v cargo || {
        echo "cargo is not on PATH; install the stable Rust toolchain (rustup) first"
        return 1
    }
    cargo --version
}

# What scripts/setup.sh does, one step at a time.
quiet_step packages "Installing the missing system packages (apt-get; Mesa, shaderc, Vulkan, Xvfb, …)" \
    scripts/setup-packages.sh
quiet_step rust "Checking the Rust toolchain (cargo)" need_cargo
quiet_step slang "Fetching the Slang library into target/slang (pip download of the slangpy wheel)" \
    scripts/setup-slang.sh
quiet_step lavapipe "Fetching Mesa 25's lavapipe into target/lavapipe (apt-get download, dpkg -x)" \
    scripts/setup-lavapipe.sh
. scripts/lavapipe-env.sh

quiet_step build "Building XR, its plugins and the samples (cargo build --release; minutes on a fresh checkout)" \
    cargo build --release
out=target/xr-samples
step "Listing the plugins and devices XR finds (xr plugins)" "$target"/release/xr plugins
step "Rendering the triangle on every back end" "$target"/release/triangle --out "$out"
step "Rendering the pipelines sample" "$target"/release/pipelines --store target/xr-store --out "$out/pipelines.png"
# The material library: every program, variant and target into its store
# (target/xr-store/materials), plus its guarded sources (every variant of a stage in one file) beside it.
step "Building the materials library (xr build -m samples/materials/xr.toml)" \
    "$target"/release/xr build -m samples/materials/xr.toml --emit guarded
# The sample's own store: the one its build script built (build.rs, xr-cargo), drawn through its typed bindings.
step "Rendering the materials scene through every load path (from the store its build script built)" \
    "$target"/release/materials --out "$out"
# Record, warm, play: the scene drawn into five target formats records a
# usage log; `xr warm` makes its driver objects in the store `xr build` wrote
# (and draws each program once); the scene drawn again compiles nothing.
warm_log=$(mktemp -d)/usage.jsonl
step "Recording what the materials scene loads and draws (materials --frames 10 --usage-log)" \
    "$target"/release/materials --store target/xr-store/materials --frames 10 --usage-log "$warm_log"
step "Warming the store for this device from that log (xr warm)" \
    "$target"/release/xr warm --store target/xr-store/materials --log "$warm_log"
step "Drawing the scene again after the warm: no shader object from SPIR-V, no pipeline at a draw" \
    "$target"/release/materials --store target/xr-store/materials --frames 10 --usage-log "$warm_log"
# Textures, buffers, depth and compute: a compute pass paints a texture, a
# lit cube samples it, through every path.
# wgpu: the scene's programs loaded twice on a wgpu device; the second
# launch makes its pipelines with the pipeline cache the first stored.
for launch in first second; do
    step "Drawing the materials scene on wgpu, $launch launch (materials --frames 5 --device wgpu)" \
        "$target"/release/materials --store target/xr-store/materials --frames 5 --device wgpu
done
# Draws that never wait: the scene into five new target formats on a fresh
# device, each draw skipped while its pipeline is made on a worker thread
# (wgpu) or linked from libraries and optimized on another thread (Vulkan
# pipelines); the sample says what was skipped and when all was ready.
step "Drawing the scene into new formats, skipping what is not ready (materials --frames 10 --when-not-ready skip, wgpu)" \
    "$target"/release/materials --store target/xr-store/materials --frames 10 --device wgpu --when-not-ready skip
step "Rendering the textured sample (compute, textures, depth)" "$target"/release/textured --out "$out"
# Task and mesh stages (Vulkan; the OpenGL paths say why they skip): the
# textured cube drawn into the vertex pipeline's pixels, or the step fails.
step "Rendering the meshlets sample (task and mesh stages)" "$target"/release/meshlets --out "$out"
step "Tracing the raytraced sample (a ray tracing pipeline)" "$target"/release/raytraced --out "$out"
# Deferred shading: a bindless G-buffer pass into three attachments, a
# lighting pass reading them, through every path.
step "Rendering the deferred-shading sample" "$target"/release/deferred --out "$out"
# The viewer: the same scene in a window on each back end, picked at
# start-up, presented for 60 frames and read back from the window. Under
# Xvfb where there is no display.
run_in_x() { if [ -n "${DISPLAY:-}" ]; then "$@"; else xvfb-run -a "$@"; fi; }
display="on ${DISPLAY:-}"
[ -n "${DISPLAY:-}" ] || display="under Xvfb (no DISPLAY)"
for backend in opengl vulkan wgpu; do
    step "Showing the materials scene in the viewer's window on $backend, $display, for 60 frames" \
        run_in_x "$target"/release/viewer --backend "$backend" --store target/xr-store/materials \
        --manifest samples/materials/xr.toml --no-watch --frames 60 --screenshot "$out/viewer-$backend.png"
done
pngs=$(find "$out" -name '*.png' | wc -l)
echo "==> Done in $(took $((SECONDS - job_start))): $pngs PNGs in $out; the set-up and build logs in $logs"
