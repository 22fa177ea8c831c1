#!/usr/bin/env bash
# Fuzzing on the stable toolchain: the property tests over arbitrary input
# (manifest parser, store objects, journal and catalog readers, program-binary
# records, source bundles, SPIR-V objects, pipeline-cache headers, the include
# resolver and flattener), run round after round with fresh random seeds until
# DURATION seconds have passed. A failure stops the run; proptest prints the
# smallest failing input and keeps it under proptest-regressions/, where it is
# replayed first on every later run (commit it: it is the regression test).
#
#   scripts/fuzz.sh 60      # the smoke run scripts/test.sh ends with
#   scripts/fuzz.sh 3600    # the long run recorded in docs/TESTING.md
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-60}
cases=${PROPTEST_CASES:-1000}

targets=(
    "-p xr-plugin-kit --test fuzz"
    "-p xr-build --test fuzz"
    "-p xr-spirv-object --lib any_"
    "-p xr-compiler-vk-spirv --lib only_this_devices"
    "-p xr-compiler-glsl --lib any_includes"
)
for target in "${targets[@]}"; do
    # shellcheck disable=SC2086
    cargo test -q $target --no-run 2>/dev/null || cargo test $target --no-run
done

start=$SECONDS
rounds=0
while [ $((SECONDS - start)) -lt "$duration" ] || [ "$rounds" -eq 0 ]; do
    for target in "${targets[@]}"; do
        # shellcheck disable=SC2086
        PROPTEST_CASES=$cases cargo test -q $target >/tmp/xr-fuzz.$$.log 2>&1 || {
            cat /tmp/xr-fuzz.$$.log
            echo "fuzz: a property failed in round $((rounds + 1)) ($target)" >&2
            exit 1
        }
    done
    rounds=$((rounds + 1))
done
rm -f /tmp/xr-fuzz.$$.log
echo "fuzz: ${#targets[@]} suites, $rounds rounds of $cases cases per property in $((SECONDS - start)) s: no failure"
