#!/usr/bin/env bash
# Puts the Slang library where xr-compiler-slang looks for it in a checkout:
# target/slang/ (beside target/debug/ and target/release/). The library
# comes from a registry package: the slangpy 0.43.1 wheel on PyPI, fetched
# with pip (`pip download`, nothing installed into Python) and unpacked
# with Python's zipfile; only the compiler library, its glslang modules
# and slang.h (the reference for the plugin's declarations) are kept.
# Does nothing when the library is there.
#
#   scripts/setup-slang.sh [DIR]    # default: target/slang (under CARGO_TARGET_DIR when set)
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-${CARGO_TARGET_DIR:-target}/slang}"
library=libslang-compiler.so.0.2026.12
wheel_version=0.43.1
if [ -f "$dir/$library" ]; then
    exit 0
fi
if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "setup-slang: installing pip (python3-pip) to download the slangpy wheel"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-pip
fi
download=$(mktemp -d)
trap 'rm -rf "$download"' EXIT
echo "setup-slang: downloading slangpy $wheel_version from PyPI for the Slang library"
# The wheel for CPython 3.11 on manylinux 2.34 (glibc 2.34+; Debian 12 has
# 2.36): the library inside does not depend on Python's version.
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
    --platform manylinux_2_34_x86_64 "slangpy==$wheel_version" -d "$download"
mkdir -p "$dir"
python3 - "$download"/slangpy-*.whl "$dir" <<'PY'
import os, sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
wanted = {
    "slangpy/libslang-compiler.so.0.2026.12",
    "slangpy/libslang-glslang-2026.12.so",
    "slangpy/libslang-glsl-module-2026.12.so",
    "slangpy/include/slang.h",
    "slangpy/include/slang-deprecated.h",
}
with zipfile.ZipFile(wheel) as z:
    missing = wanted - set(z.namelist())
    if missing:
        sys.exit(f"setup-slang: the wheel lacks {sorted(missing)}")
    for name in sorted(wanted):
        target = os.path.join(out, os.path.basename(name))
        with z.open(name) as src, open(target + ".part", "wb") as dst:
            dst.write(src.read())
        os.replace(target + ".part", target)
PY
echo "setup-slang: Slang 2026.12 in $dir"
