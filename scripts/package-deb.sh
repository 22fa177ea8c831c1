#!/usr/bin/env bash
# Builds XR's Debian package with cargo-deb (installed with cargo install when
# missing): `scripts/install.sh` lays the tree out under a staging prefix
# (target/xr-deb/stage), and the package installs it under /usr, naming
# the Debian packages XR needs at run time (see xr-cli/Cargo.toml).
#
#   scripts/package-deb.sh [--profile release|dev] [--no-build] [--smoke]
#
# Writes target/debian/xr_<version>-1_<arch>.deb; install it with
# `sudo apt install ./target/debian/xr_*.deb`.
# --smoke (CI): package the dev build as it is (fast xz), unpack it with
# `dpkg -x` into a temporary directory (no change to the system), and check
# that the unpacked `xr` finds all of its plugins with no variable set.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/target-dir.sh

profile=release
install_args=()
smoke=false
while [ $# -gt 0 ]; do
    case "$1" in
        --profile) profile=${2:?--profile needs a name}; shift 2 ;;
        --no-build) install_args+=(--no-build); shift ;;
        --smoke) smoke=true; profile=dev; install_args+=(--no-build); shift ;;
        -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "package-deb.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done

if $smoke && [ ! -f "$target/debug/xr" ]; then
    cargo build
fi
stage=target/xr-deb/stage
rm -rf "$stage"
scripts/install.sh --prefix "$stage" --profile "$profile" "${install_args[@]}" >/dev/null

if ! cargo deb --version >/dev/null 2>&1; then
    echo "package-deb.sh: installing cargo-deb with cargo install"
    cargo install cargo-deb --locked --quiet
fi
rm -f target/debian/xr_*.deb
deb_args=(-p xr-cli --no-build --no-strip --no-dbgsym --output target/debian/)
if $smoke; then
    deb_args+=(--fast)
fi
# cargo-deb warns about every asset outside target/release/ (ours are staged on purpose).
cargo deb "${deb_args[@]}" 2> >(grep -v "Only source paths starting with" >&2)
deb=$(ls target/debian/xr_*.deb)
echo "package-deb.sh: $deb ($(du -h "$deb" | cut -f1))"

if $smoke; then
    unpacked=$(mktemp -d)
    trap 'rm -rf "$unpacked"' EXIT
    dpkg -x "$deb" "$unpacked"
    depends=$(dpkg-deb -f "$deb" Depends)
    for needed in libegl-mesa0 mesa-vulkan-drivers libvulkan1; do
        case "$depends" in
            *"$needed"*) ;;
            *) echo "package-deb.sh: the package does not depend on $needed: $depends" >&2; exit 1 ;;
        esac
    done
    listing=$(env -i HOME="$unpacked/home" PATH=/usr/bin:/bin "$unpacked/usr/bin/xr" --version -v)
    found=$(grep -c "^plugin .*($unpacked/usr/lib/xr/plugins/" <<<"$listing" || true)
    shipped=$(find "$unpacked/usr/lib/xr/plugins" -maxdepth 1 -name "*.so" | wc -l)
    listed=$(grep -c -v -e '^#' -e '^$' plugins.txt)
    if [ "$found" -ne "$shipped" ] || [ "$shipped" -ne "$listed" ]; then
        echo "package-deb.sh: the unpacked xr found $found of $shipped plugins (plugins.txt lists $listed):" >&2
        echo "$listing" >&2
        exit 1
    fi
    for file in usr/bin/xr-compile-action usr/share/man/man1/xr.1.gz usr/share/bash-completion/completions/xr \
        usr/share/doc/xr/README.md; do
        [ -s "$unpacked/$file" ] || { echo "package-deb.sh: $file missing from the package" >&2; exit 1; }
    done
    echo "package-deb.sh: smoke ok: unpacked with dpkg -x, its xr found its $found plugins in /usr/lib/xr/plugins"
fi
