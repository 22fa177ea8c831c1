#!/usr/bin/env bash
# Puts a current lavapipe (Mesa's Vulkan driver on the CPU) where
# xr-rhi-vulkan looks for one in a checkout: target/lavapipe/. Debian 12's
# own lavapipe (Mesa 22.3) has no descriptor indexing, no dynamic rendering
# local read and 32 samplers a stage; Debian's bookworm-backports suite
# carries Mesa 25. Only its Vulkan driver is taken, from the
# mesa-vulkan-drivers package, downloaded with apt-get (a sources list and
# package lists of this script's own, so the system's apt setup and
# installed packages stay as they are) and unpacked with dpkg -x; the
# system's Mesa, and so its OpenGL driver, is untouched. The driver needs
# only libraries Debian 12 has (LLVM 15, libdrm). Beside it goes a loader
# manifest, lvp_icd.json: `VK_ADD_DRIVER_FILES` naming it (what
# scripts/lavapipe-env.sh exports) makes the Vulkan loader offer it beside
# the system's drivers, and the Vulkan device picks the newest driver of
# the kind it wants (docs/TESTING.md, "The drivers"). Does nothing when the
# driver is there.
#
#   scripts/setup-lavapipe.sh [DIR]    # default: target/lavapipe (under CARGO_TARGET_DIR when set)
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-${CARGO_TARGET_DIR:-target}/lavapipe}"
suite=bookworm-backports
driver=libvulkan_lvp.so
if [ -f "$dir/$driver" ] && [ -f "$dir/lvp_icd.json" ]; then
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs" "$work/root"
echo "deb http://deb.debian.org/debian $suite main" >"$work/sources.list"
apt_options=(
    -o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
    -o APT::Sandbox::User=root -qq
)
echo "setup-lavapipe: downloading mesa-vulkan-drivers from Debian's $suite for lavapipe"
apt-get "${apt_options[@]}" update
version=$(apt-cache "${apt_options[@]}" policy mesa-vulkan-drivers | awk '/Candidate:/ {print $2}')
case "$version" in
    2[5-9].* | [3-9][0-9].*) ;;
    *)
        echo "setup-lavapipe: $suite offers mesa-vulkan-drivers '$version', not Mesa 25 or later" >&2
        exit 1
        ;;
esac
(cd "$work/debs" && apt-get "${apt_options[@]}" download "mesa-vulkan-drivers=$version")
dpkg -x "$work"/debs/mesa-vulkan-drivers_*.deb "$work/root"
mkdir -p "$dir"
cp "$work/root/usr/lib/x86_64-linux-gnu/$driver" "$dir/$driver.part"
mv "$dir/$driver.part" "$dir/$driver"
echo "$version" >"$dir/VERSION"
# The loader manifest; the library by absolute path (the loader resolves a
# bare name through the system's library path, which has the old one).
cat >"$dir/lvp_icd.json.part" <<JSON
{
    "file_format_version": "1.0.0",
    "ICD": { "library_path": "$(cd "$dir" && pwd)/$driver", "api_version": "1.4.305" }
}
JSON
mv "$dir/lvp_icd.json.part" "$dir/lvp_icd.json"
echo "setup-lavapipe: lavapipe of Mesa $version in $dir"
