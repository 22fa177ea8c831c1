#!/usr/bin/env bash
# Freezes the plugin ABI: copies the three ABI crates (xr-device,
# xr-sourcebuild, xr-plugin) into tests/fixtures/frozen/vendor/ (a vendored
# copy: never edited by hand), where the fixture plugin xr-fixture-frozen is
# built against them; with them xr-env, which xr-plugin's root module links
# (a plugin file exports its record of the variables read), so that the
# frozen plugin is built from nothing of the live tree (xr-env is no ABI
# crate: VERSIONS leaves it out). Run it only in the
# commit that breaks the ABI (and bumps the interface version of the crate
# it breaks): between breaks, the frozen copy is how the tests know that a
# plugin built against the last break still loads and works in this host
# (the ABI rule, xr-plugin's crate docs).
#   scripts/freeze-contract.sh
set -euo pipefail
cd "$(dirname "$0")/.."
frozen=tests/fixtures/frozen/vendor
rm -rf "$frozen"
for crate in xr-device xr-sourcebuild xr-plugin xr-env; do
    mkdir -p "$frozen/$crate"
    cp -r "$crate/src" "$crate/Cargo.toml" "$frozen/$crate/"
done
{
    echo "# The ABI crates as frozen by scripts/freeze-contract.sh; never edit by hand."
    for crate in xr-device xr-sourcebuild xr-plugin; do
        echo "$crate $(sed -n 's/^version = "\(.*\)"/\1/p' "$crate/Cargo.toml" | head -1)"
    done
} >"$frozen/VERSIONS"
echo "freeze-contract: froze $(tr '\n' ' ' <"$frozen/VERSIONS" | sed 's/^# [^x]*//') into $frozen"
