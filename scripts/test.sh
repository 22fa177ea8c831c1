#!/usr/bin/env bash
# The tests: formatting, lints, the crate layering, then every test. The
# integration tests build the plugins (and the broken fixture plugins, a
# workspace of their own) before they load them from disk. Each step's wall
# time is printed, and the whole suite's at the end.
#
#   scripts/test.sh           # everything: the README's test command, and CI's
#   scripts/test.sh --quick   # between edits: formatting, the unit tests and
#                             #   the render suite (minutes on a warm target;
#                             #   docs/TESTING.md, "How long the suite takes")
set -euo pipefail
cd "$(dirname "$0")/.."
quick=false
case "${1:-}" in
--quick) quick=true ;;
"") ;;
*) echo "usage: scripts/test.sh [--quick]" >&2 && exit 2 ;;
esac
suite_start=$SECONDS
step_start=$SECONDS
step() { # name, command…
    local name=$1
    shift
    step_start=$SECONDS
    echo "== $name"
    "$@"
    echo "== $name: $((SECONDS - step_start)) s"
}

# A clean clone gains nothing from incremental state (2 GB of it, and time).
if [ "${CI:-}" = true ]; then
    export CARGO_INCREMENTAL=0
fi
. scripts/target-dir.sh
step setup scripts/setup.sh
# Vulkan on the setup's current lavapipe (docs/TESTING.md, "The drivers").
. scripts/lavapipe-env.sh
step fmt cargo fmt --all -- --check
if $quick; then
    # The unit tests of every crate and the render binary, with the
    # workspace's one feature set (what the full run compiles): the render
    # tests build the workspace and the fixtures first, as they always do.
    step test cargo test --workspace --lib --bins --test render
    echo "== the quick suite took $((SECONDS - suite_start)) s (the full one: scripts/test.sh)"
    exit 0
fi
# A plain cargo build first: on CI's clean clone it is the first compile into
# an empty target directory, which must pass with no step before it (cargo
# builds the compiler plugins before the materials sample's build script).
# A second copy of a plugin built for the script (features not unified
# between build-dependencies and the rest) is only a cargo warning, an
# "output filename collision", that would leave either copy in place: fail on it.
build_once() {
    local log
    log=$(mktemp)
    cargo build 2>&1 | tee "$log"
    if grep -q 'output filename collision' "$log"; then
        echo "test.sh: cargo built a plugin twice into one file name (see docs/BUILD.md, the build script)" >&2
        rm -f "$log"
        return 1
    fi
    rm -f "$log"
}
step build build_once
step clippy cargo clippy --workspace --all-targets -- -D warnings
step layering scripts/check-layering.sh
step test cargo test --workspace
# The tests build the workspace and the fixtures themselves (cargo run from a
# test process): what they built must be what the test command's cargo
# builds, or every later step compiles again (a cargo started with the
# test's CARGO_PKG_* variables reran ring's build script, 65 s twice per
# clean run). Nothing may compile here.
nothing_stale() {
    local stale
    stale=$({
        cargo build --workspace --message-format=json 2>/dev/null
        cargo test --workspace --no-run --message-format=json 2>/dev/null
    } | python3 -c '
import json, sys
names = [m["target"]["name"] for m in map(json.loads, sys.stdin)
         if m.get("reason") == "compiler-artifact" and not m.get("fresh", True)]
print(" ".join(names))
')
    if [ -n "$stale" ]; then
        echo "test.sh: after the tests, cargo compiled again: $stale (see xr_tests::cargo_command)" >&2
        return 1
    fi
}
step nothing-stale nothing_stale
# Half a minute of fuzzing: the property tests over arbitrary input, fresh seeds.
step fuzz scripts/fuzz.sh 30
# A smoke of the remote-store benchmark (real nginx and redis-server, a few seconds).
step bench-remote scripts/bench-remote.sh --smoke
# A smoke of the remote-execution benchmark (a farm of BuildGrid and 2 xr-bots on loopback; 150 s on CI).
step bench-remote-exec scripts/bench-remote-exec.sh --smoke
# A smoke of the build benchmark: glslc batched, make, ninja and xr on 48 artifacts.
step bench-build scripts/bench-build.sh --smoke
# A smoke of the Slang benchmark: xr build against the library called directly, 12 artifacts.
step bench-slang "$target"/debug/xr-bench slang --scales 1 --base-levels 1 --rounds 1 --dir target/bench-slang-smoke
# A smoke of the Vulkan load benchmark: pipelines, shader objects and shader binaries, 10 frames.
step bench-vulkan-load "$target"/debug/xr-bench vulkan-load --frames 10
# A smoke of the wgpu load benchmark: each scenario launched once.
step bench-wgpu-load "$target"/debug/xr-bench wgpu-load --rounds 1
# A smoke of the warm benchmark: record, xr warm, 10 frames on each Vulkan path, and a --used build.
step bench-warm "$target"/debug/xr-bench warm --frames 10
# A smoke of the not-ready benchmark: 5 frames per policy on OpenGL, Vulkan pipelines and wgpu.
step bench-not-ready "$target"/debug/xr-bench not-ready --frames 5 --paths opengl,vulkan-pipelines,wgpu
# A smoke of the Debian package: the debug build packaged with cargo-deb,
# unpacked with dpkg -x, its xr finding its plugins (docs/INSTALL.md).
step package-deb scripts/package-deb.sh --smoke
# The engine template (examples/engine), as an engine adopting XR builds it:
# its own workspace, an empty target directory, no XR_* variable; then it
# draws and checks its pixels on Vulkan and OpenGL.
step engine-template scripts/bench-engine.sh --smoke
# A smoke of the real-world check (xr compile --device against glslc) on our own samples.
step real-world scripts/real-world.sh --smoke
# A smoke of mutation testing: every mutant of the journal is caught. On CI
# only (it mutates the checkout in place; CI runs on a clean clone).
if [ "${CI:-}" = true ]; then
    step mutants scripts/mutants.sh smoke
    # A smoke of the cache-key drops (docs/TESTING.md, "Cache keys"): one part
    # dropped from its key, its test must go red; it edits in place, and restores.
    step plant-key-drops scripts/plant-key-drops.py "pipeline cache: vendor"
fi
echo "== the suite took $((SECONDS - suite_start)) s"
