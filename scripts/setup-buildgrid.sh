#!/usr/bin/env bash
# Installs BuildGrid, the Remote Execution API server the farm tests and
# benchmarks start (scripts/remote-exec.sh), into a virtual environment
# under target/buildgrid, from PyPI through pip's configured index, at
# the versions pinned in scripts/buildgrid-requirements.txt. BuildGrid
# 0.9 needs Python 3.13: the image's pyenv has one beside the default.
# Idempotent: an environment with the pinned BuildGrid is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${CARGO_TARGET_DIR:-target}/buildgrid
pins=scripts/buildgrid-requirements.txt
want=$(grep -i '^buildgrid==' "$pins")
if [ -x "$venv/bin/bgd" ] && "$venv/bin/pip" freeze 2>/dev/null | grep -qix "$want"; then
    exit 0
fi
python=""
# pyenv's shim answers for every version it knows but runs only the selected one: ask each.
for candidate in python3.13 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python3.13 /usr/bin/python3.13; do
    if "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] < (3, 13))' >/dev/null 2>&1; then
        python=$candidate
        break
    fi
done
if [ -z "$python" ]; then
    echo "setup-buildgrid: BuildGrid needs Python 3.13, and none is installed (pyenv install 3.13, or Debian's python3.13)" >&2
    exit 1
fi
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$pins"
"$venv/bin/bgd" --help >/dev/null
echo "setup-buildgrid: $want in $venv"
