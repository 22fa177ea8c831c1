#!/usr/bin/env bash
# Fuzzing on the stable toolchain: the property tests over arbitrary input
# (manifest parser, store objects, journal and catalog readers, program-binary
# records, source bundles, SPIR-V objects, pipeline-cache headers, the include
# resolver and flattener), run round after round with fresh random seeds until
# DURATION seconds have passed. A failure stops the run; proptest prints the
# smallest failing input and keeps it under proptest-regressions/, where it is
# replayed first on every later run (commit it: it is the regression test).
#
#   scripts/fuzz.sh 30      # the smoke run scripts/test.sh ends with
#   scripts/fuzz.sh 3600    # the long run recorded in docs/TESTING.md
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-60}
cases=${PROPTEST_CASES:-1000}

# package, test target (`lib`: its unit tests), name filter.
targets=(
    "xr-plugin-kit fuzz"
    "xr-build fuzz"
    "xr-spirv-object lib any_"
    "xr-compiler-vk-spirv lib only_this_devices"
    "xr-compiler-glsl lib any_includes"
)
# The test binaries as `cargo test --workspace` builds them: one feature set
# for the workspace, so after the test step nothing is compiled again (a
# `cargo test -p` of each package would rebuild dependencies with that
# package's features alone, minutes on a clean clone).
executables=$(cargo test --workspace --no-run --message-format=json 2>/dev/null | python3 -c '
import json, os, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") != "compiler-artifact" or not message.get("executable"):
        continue
    if not message["profile"]["test"]:
        continue
    target = message["target"]
    package = os.path.basename(os.path.dirname(message["manifest_path"]))
    name = "lib" if target["name"] == package.replace("-", "_") and "test" not in target["kind"] else target["name"]
    print(package, name, os.path.dirname(message["manifest_path"]), message["executable"])
')
executable_of() { # package, target → "dir executable"
    awk -v p="$1" -v t="$2" '$1 == p && $2 == t { print $3, $4; exit }' <<<"$executables"
}
for target in "${targets[@]}"; do
    read -r package name _ <<<"$target"
    [ -n "$(executable_of "$package" "$name")" ] || {
        echo "fuzz: no test binary for $package ($name): does cargo test --workspace --no-run build?" >&2
        exit 1
    }
done
start=$SECONDS
rounds=0
while [ $((SECONDS - start)) -lt "$duration" ] || [ "$rounds" -eq 0 ]; do
    for target in "${targets[@]}"; do
        read -r package name filter <<<"$target"
        read -r dir executable <<<"$(executable_of "$package" "$name")"
        # As cargo runs a test: from its package's directory, where proptest
        # finds and keeps its regression files.
        (cd "$dir" && CARGO_MANIFEST_DIR=$dir PROPTEST_CASES=$cases "$executable" -q ${filter:+"$filter"}) \
            >/tmp/xr-fuzz.$$.log 2>&1 || {
            cat /tmp/xr-fuzz.$$.log
            echo "fuzz: a property failed in round $((rounds + 1)) ($package $name $filter)" >&2
            exit 1
        }
    done
    rounds=$((rounds + 1))
done
rm -f /tmp/xr-fuzz.$$.log
echo "fuzz: ${#targets[@]} suites, $rounds rounds of $cases cases per property in $((SECONDS - start)) s: no failure"
