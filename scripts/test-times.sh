#!/usr/bin/env bash
# Per-test wall times of the integration binaries (and any other test
# binary named), from libtest's own JSON report (`--report-time`), on the
# target as it is: run after `cargo build` for a warm target's times.
#
#   scripts/test-times.sh                 # build, render, window: the 20 slowest tests, each binary's wall time
#   scripts/test-times.sh build 40        # one binary, the 40 slowest
#
# libtest takes `-Z unstable-options` on stable when RUSTC_BOOTSTRAP is set;
# only the test binary gets it (never cargo: it would rebuild everything),
# and the cargo builds a test starts drop it (xr_tests::cargo_command).
# Reports: target/test-times/<binary>.json.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/target-dir.sh
. scripts/lavapipe-env.sh
binaries=${1:-"build render window"}
slowest=${2:-20}
out="$target/test-times"
mkdir -p "$out"
executables=$(cargo test --workspace --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") == "compiler-artifact" and message.get("executable") and message["profile"]["test"]:
        print(message["target"]["name"], message["executable"])
')
for binary in $binaries; do
    executable=$(awk -v b="$binary" '$1 == b { print $2 }' <<<"$executables")
    [ -n "$executable" ] || { echo "test-times: xr-tests has no test binary '$binary'" >&2; exit 2; }
    # As cargo test runs it: from the package's directory, CARGO set.
    (cd tests && CARGO=${CARGO:-$(command -v cargo)} RUSTC_BOOTSTRAP=1 "$executable" -Z unstable-options \
        --format json --report-time >"$out/$binary.json" 2>"$out/$binary.err") || {
        echo "test-times: $binary failed: see $out/$binary.json and $out/$binary.err" >&2
        exit 1
    }
done
python3 - "$out" "$slowest" $binaries <<'PY'
import json, sys, pathlib
out, slowest, binaries = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
rows = []
for binary in binaries:
    total = 0.0
    for line in (out / f"{binary}.json").read_text().splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue  # a test's own output
        if event.get("type") == "test" and "exec_time" in event:
            rows.append((event["exec_time"], binary, event["name"]))
            total += event["exec_time"]
        elif event.get("type") == "suite" and "exec_time" in event:
            print(f"{binary}: {event['passed']} passed, {event['failed']} failed, {event['ignored']} ignored; "
                  f"{event['exec_time']:.0f} s wall, {total:.0f} s summed over its tests")
rows.sort(reverse=True)
print(f"\n| s | binary | test |\n|---:|---|---|")
for seconds, binary, name in rows[:slowest]:
    print(f"| {seconds:.1f} | {binary} | `{name}` |")
PY
