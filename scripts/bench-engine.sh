#!/usr/bin/env bash
# What an engine pays to adopt XR, cold: the engine template
# (examples/engine: compilers linked into its build script, the farm and
# the shared cache left out) built from an empty target directory, beside
# the same engine written the way XR's guide said before (xr-library and
# xr-cargo by path, plugins found through XR_PLUGIN_PATH), built against
# the XR of an earlier commit from an empty target directory too: the
# packages cargo compiles and the wall time of each, one after the other in
# one run on this machine. docs/PERFORMANCE.md records the result.
#
#   scripts/bench-engine.sh [BEFORE_COMMIT]    # default: 9b28f8b, the last commit before the features
#   scripts/bench-engine.sh --smoke            # the template alone, no timing kept
#
# The smoke builds into target/engine-template, kept between runs: empty
# on a clean clone (CI: the template builds from nothing, with no XR_*
# variable), warm on a developer's machine, where only what changed compiles.
#
# Needs a built workspace (its plugins, for the earlier engine's
# XR_PLUGIN_PATH) and the setup's lavapipe; writes under target/bench-engine.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/target-dir.sh
. scripts/lavapipe-env.sh

smoke=false
before=9b28f8b
case "${1:-}" in
--smoke) smoke=true ;;
"") ;;
*) before=$1 ;;
esac
work="$target/bench-engine"
rm -rf "$work"
mkdir -p "$work"
template_target="$work/template-target"
$smoke && template_target="$target/engine-template"

# No XR_* variable reaches an engine's build: it must need none.
unset_xr() { env $(env | sed -n 's/^\(XR_[A-Z0-9_]*\)=.*/-u \1/p') "$@"; }

# cold NAME MANIFEST_DIR TARGET_DIR [VAR=VALUE…]: cargo build of the crate
# in MANIFEST_DIR into TARGET_DIR (empty, but for the smoke's); prints
# "NAME PACKAGES SECONDS".
cold() {
    local name=$1 dir=$2 target_dir=$3 log="$work/$1.log" start end
    start=$(date +%s.%N)
    if ! unset_xr "${@:4}" cargo build --manifest-path "$dir/Cargo.toml" --target-dir "$target_dir" >"$log" 2>&1; then
        echo "bench-engine: the $name engine did not build (its log: $log):" >&2
        tail -20 "$log" >&2
        return 1
    fi
    end=$(date +%s.%N)
    printf '%s %s %.1f\n' "$name" "$(grep -c '^ *Compiling ' "$log")" "$(awk "BEGIN {print $end - $start}")"
}

template=$(cold template examples/engine "$template_target")
for device in vulkan opengl; do
    unset_xr "$template_target/debug/xr-engine-template" "$device"
done
if $smoke; then
    echo "bench-engine: smoke: $template (packages compiled, seconds)"
    exit 0
fi

# The engine as the guide had it, against the XR of $before.
old="$work/xr-before"
git worktree add --detach "$old" "$before" >/dev/null 2>&1
trap 'git worktree remove --force "$old" >/dev/null 2>&1 || true' EXIT
engine="$work/engine-before"
mkdir -p "$engine/src" "$engine/shaders"
cp examples/engine/shaders/fullscreen.vert "$engine/shaders/"
# The constant as that XR needed it: a push constant block on Vulkan.
cat >"$engine/shaders/paint.frag" <<'EOF'
#version 450 core
#ifdef VULKAN
layout(push_constant) uniform Constants { vec4 tint; };
#else
uniform vec4 tint;
#endif
layout(location = 0) out vec4 out_color;
void main() {
#if INVERT
    out_color = vec4(vec3(1.0) - tint.rgb, 1.0);
#else
    out_color = vec4(tint.rgb, 1.0);
#endif
}
EOF
cp examples/engine/shaders/xr.toml "$engine/shaders/"
cat >"$engine/Cargo.toml" <<EOF
[package]
name = "engine-before"
version = "0.1.0"
edition = "2024"

[dependencies]
bytemuck = { version = "1", features = ["derive", "min_const_generics"] }
xr-library = { path = "$old/xr-library" }
xr-sourcebuild = { path = "$old/xr-sourcebuild" }
xr-host = { path = "$old/xr-host" }
xr-device = { path = "$old/xr-device" }

[build-dependencies]
xr-cargo = { path = "$old/xr-cargo" }

[workspace]
EOF
cat >"$engine/build.rs" <<'EOF'
fn main() {
    xr_cargo::Build::new("shaders/xr.toml").bindings("shaders.rs").compile();
}
EOF
cat >"$engine/src/main.rs" <<'EOF'
#[allow(dead_code)]
mod shaders {
    include!(concat!(env!("OUT_DIR"), "/shaders.rs"));
}
fn main() {
    let registry = xr_host::Registry::discover();
    let library = xr_library::ShaderLibrary::open(concat!(env!("OUT_DIR"), "/xr-store").as_ref()).expect("the store");
    let device = registry.open_device(xr_device::DeviceKind::VULKAN, &Default::default()).expect("a device");
    xr_library::DeviceLoader::attach(&registry, &device, &library).expect("a loader");
    println!("{} variants", shaders::paint::Variant::ALL.len());
}
EOF
# Its plugins: this checkout's (the interface is the same), as the guide said.
earlier=$(cold before "$engine" "$work/before-target" XR_PLUGIN_PATH="$target/debug")

echo
echo "| engine | packages compiled | cold build s |"
echo "|---|---:|---:|"
for row in "$earlier" "$template"; do
    set -- $row
    case $1 in
    before) label="the guide's engine, XR $before (XR_PLUGIN_PATH; farm and cache always in)" ;;
    template) label="examples/engine (compilers linked, farm and cache off)" ;;
    esac
    echo "| $label | $2 | $3 |"
done
