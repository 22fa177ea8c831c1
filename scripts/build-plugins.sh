#!/usr/bin/env bash
# Builds only the plugins XR ships (plugins.txt) with cargo, passing its
# arguments on (--release), for a script that needs them and not the whole
# workspace. A plain `cargo build` builds them too, before the materials
# sample's build script (it names the compilers as build-dependencies).
set -euo pipefail
cd "$(dirname "$0")/.."
packages=()
for plugin in $(grep -v -e '^#' -e '^$' plugins.txt); do packages+=(-p "$plugin-cdylib"); done
exec cargo build "$@" "${packages[@]}"
