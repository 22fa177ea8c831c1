#!/usr/bin/env bash
# Builds the plugins XR ships (plugins.txt) with cargo, passing its
# arguments on (--release): before the rest of the workspace, because the
# materials sample's build script builds its shaders with them, and cargo
# cannot order a build script after a cdylib it does not link.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=()
for plugin in $(grep -v -e '^#' -e '^$' plugins.txt); do packages+=(-p "$plugin"); done
exec cargo build "$@" "${packages[@]}"
