#!/usr/bin/env bash
# Benchmarks compiles on a Remote Execution farm against local builds, side
# by side in one run, all on this machine (farms from scripts/remote-exec.sh:
# PostgreSQL, BuildGrid and xr-bot workers on loopback):
#  (a) what an action costs: the materials sample (123 artifacts, Slang
#      included) built locally, then through one farm of 2 bots, every
#      compile executed there, in three forms: the whole `xr` started per
#      action (as before xr-compile-action), xr-compile-action started per
#      action, and xr-compile-action in persistent workers; then into a
#      second store (every compile from the farm's action cache) and after
#      a one-file edit; wall seconds, ms per action, bytes sent, and where
#      an executed action's time went;
#  (b) scale out: a fixture compiler whose every compile waits 100 ms (as
#      heavy compilers such as DXC spend per permutation) over a 1,000-artifact
#      matrix, in persistent workers (no process per action: the bots' work
#      costs next to no CPU here), through fresh farms of 1, 4, 16 and 32
#      bots against `xr build -j 2` here, with the client's and the server's
#      CPU per action; then the same matrix from the last farm's action
#      cache, the rate at which the client itself can issue actions.
# Prints Markdown tables.
#   scripts/bench-remote-exec.sh            # 1,000 artifacts, bots 1 4 16 32
#   scripts/bench-remote-exec.sh --smoke    # 18 materials artifacts, 20 slow ones, one farm of 2 bots (CI)
#   BOTS=4 scripts/bench-remote-exec.sh     # one farm of 4 bots for the scale-out part (ARTIFACTS: its size)
#   CLIENT=release scripts/bench-remote-exec.sh   # the scale-out part with the release xr and xr-compile-action
# The debug build is measured (what the tests build); the figures are of
# process starts, the farm and the network, not of compile speed.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/target-dir.sh

SMOKE=0
[ "${1:-}" = "--smoke" ] && SMOKE=1
scripts/setup.sh >/dev/null
# The whole workspace (xr, xr-compile-action, xr-bot, the plugins), as
# `cargo build` builds it: a list of packages would unify other features and
# compile them again (nothing to do after the test command's build step).
cargo build --quiet
CLIENT=${CLIENT:-debug}
case $CLIENT in
debug) ;;
release) cargo build --quiet --release -p xr-cli ;;
*) echo "bench-remote-exec: CLIENT is debug or release, not $CLIENT" >&2; exit 2 ;;
esac
cargo build --quiet --manifest-path tests/fixtures/Cargo.toml --target-dir "$target/fixtures" --workspace
XR="$target/debug/xr"
B="$target/bench-remote-exec"
# ARTIFACTS and BOTS from the environment choose another scale-out run (`BOTS="4" scripts/bench-remote-exec.sh`).
if [ "$SMOKE" = 1 ]; then ARTIFACTS=${ARTIFACTS:-20} BOTS=${BOTS:-2}; else ARTIFACTS=${ARTIFACTS:-1000} BOTS=${BOTS:-"1 4 16 32"}; fi

farm=""
cleanup() { [ -n "$farm" ] && scripts/remote-exec.sh down "$farm" >/dev/null 2>&1 || true; }
trap cleanup EXIT
up() { # bots; a smoke keeps its one farm (its actions differ anyway)
    [ "$SMOKE" = 1 ] && [ "$farm" = "$B/farm-$1" ] && return
    cleanup
    farm="$B/farm-$1"
    rm -rf "$farm"
    url=$(scripts/remote-exec.sh up "$farm" --bots "$1" | tail -1)
}
# Wall seconds of `xr build` in DIR with ARGS; its summary JSON in $B/last.json, its stderr in $B/last.err,
# the CPU seconds of the client (`xr` alone: the farm's processes are not its children) in $B/last.cpu.
timed_build() { # dir, args…
    local dir=$1 start end TIMEFORMAT='%U %S'
    shift
    start=$(date +%s.%N)
    { time (cd "$dir" && "${XR_USED:-$XR}" build -m xr.toml --message-format json "$@" >"$B/last.json" 2>"$B/last.err"); } \
        2>"$B/last.cpu" || {
        cat "$B/last.err" >&2
        exit 1
    }
    end=$(date +%s.%N)
    grep '"type":"summary"' "$B/last.json" >"$B/summary.json"
    echo "$end - $start" | bc
}
# CPU milliseconds the farm's server process (BuildGrid: one Python process) has used so far.
server_cpu_ms() {
    awk -v tck="$(getconf CLK_TCK)" '{ printf "%.0f", ($14 + $15) * 1000 / tck }' "/proc/$(cat "$farm/server.pid")/stat"
}
# The client's CPU milliseconds per artifact of the last build.
client_cpu_ms() { awk -v n="$(field built)" '{ printf "%.2f", ($1 + $2) * 1000 / n }' "$B/last.cpu"; }
field() { python3 -c "import json,sys; print(json.load(open('$B/summary.json'))['$1'])"; }
bytes_sent() { sed -n 's/.* \([0-9]*\) bytes sent.*/\1/p' "$B/last.err" | tail -1; }
# The farm's line on where an executed action's time went, as "waited worker inputs command outputs" (ms).
phases() { sed -n 's/.*per executed action, \([0-9]*\) ms waited here, \([0-9]*\) ms on the worker: inputs \([0-9]*\) ms, command \([0-9]*\) ms, outputs \([0-9]*\) ms.*/\1 \2 \3 \4 \5/p' "$B/last.err" | tail -1; }
materials() { # dir
    rm -rf "$1"
    mkdir -p "$1"
    cp -r samples/materials/shaders "$1/"
    sed 's|../../target/xr-store/materials|store|' samples/materials/xr.toml >"$1/xr.toml"
    if [ "$SMOKE" = 1 ]; then echo "--program unlit"; fi
}

rm -rf "$B"
mkdir -p "$B"

echo "## (a) the materials sample: local, through a farm of 2 bots, from its action cache"
echo
echo "| build | wall s | artifacts | executed on the farm | from the action cache | ms per action | bytes sent |"
echo "|---|---|---|---|---|---|---|"
filter=$(materials "$B/m-local")
t=$(timed_build "$B/m-local" $filter)
n=$(field built)
printf "| local (-j 2, workers) | %.2f | %s | – | – | %.0f | – |\n" "$t" "$n" "$(echo "$t * 1000 / $n" | bc -l)"
up 2
farm_row() { # label, dir, args…
    local label=$1 dir=$2 t
    shift 2
    t=$(timed_build "$dir" $filter --remote-exec "$url" "$@")
    printf "| %s | %.2f | %s | %s | %s | %.0f | %s |\n" "$label" "$t" "$(field built)" "$(field remote_executed)" \
        "$(field remote_cached)" "$(echo "$t * 1000 / $(field built)" | bc -l)" "$(bytes_sent)"
}
# Before: the whole xr per action, as when no xr-compile-action is installed
# beside it (a lone hard link of xr, its plugins on XR_PLUGIN_PATH).
mkdir -p "$B/xr-alone"
ln -f "$XR" "$B/xr-alone/xr"
materials "$B/m-farm-xr" >/dev/null
XR_USED="$B/xr-alone/xr" XR_PLUGIN_PATH="$target/debug" farm_row "farm, the whole xr per action (before)" "$B/m-farm-xr"
xr_phases=$(phases)
materials "$B/m-farm-once" >/dev/null
farm_row "farm, xr-compile-action per action" "$B/m-farm-once"
once_phases=$(phases)
materials "$B/m-farm" >/dev/null
farm_row "farm, xr-compile-action in persistent workers" "$B/m-farm" --remote-persistent-workers
persistent_phases=$(phases)
materials "$B/m-second" >/dev/null
farm_row "farm, second store" "$B/m-second" --remote-persistent-workers
# One file edited (a comment line in toon.frag), into a fresh store: only
# the compiles that read it execute, the rest come from the action cache.
materials "$B/m-edit" >/dev/null
printf '\n// an edit\n' >>"$B/m-edit/shaders/toon.frag"
farm_row "farm, after a one-file edit" "$B/m-edit" --remote-persistent-workers
for built in m-farm-xr m-farm-once m-farm; do
    cmp <(cd "$B/m-local/store" && find objects catalog -type f -exec sha256sum {} + | sort) \
        <(cd "$B/$built/store" && find objects catalog -type f -exec sha256sum {} + | sort) >/dev/null ||
        { echo "bench-remote-exec: the farm's store ($built) differs from the local one" >&2; exit 1; }
done

echo
echo "Where an executed action's time went (the workers' ExecutedActionMetadata; the first build of each form):"
echo
echo "| action | waited here per action (queue included: 64 in flight) | on the worker (the server's lease times on BuildGrid) | its inputs fetched and staged | the command (start, plugin, compile) | outputs sent |"
echo "|---|---|---|---|---|---|"
for row in "the whole xr per action (before)|$xr_phases" "xr-compile-action per action|$once_phases" \
    "xr-compile-action, persistent workers|$persistent_phases"; do
    read -r waited worker inputs command outputs <<<"${row#*|}"
    echo "| ${row%%|*} | ${waited:-–} ms | ${worker:-–} ms | ${inputs:-–} ms | ${command:-–} ms | ${outputs:-–} ms |"
done

echo "## (b) scale out: $ARTIFACTS compiles of 100 ms each, in persistent workers ($CLIENT xr and xr-compile-action)"
echo
S="$B/slow"
mkdir -p "$S/plugins"
cp "$target"/fixtures/debug/libxr_fixture_crash.so "$S/plugins/"
echo "input" >"$S/a.crash"
cat >"$S/xr.toml" <<TOML
store = "store"
axis = [
    { name = "SLEEP_MS", kind = "int", range = [100, 100] },
    { name = "N", kind = "int", range = [1, $ARTIFACTS] },
]

[[program]]
name = "slow"
axes = ["SLEEP_MS", "N"]
targets = ["fixture-crash"]
stages = [{ stage = "vertex", file = "a.crash" }]
TOML
export XR_PLUGIN_PATH="$S/plugins"
# The scale-out client: the debug xr, or the release one (its xr-compile-action beside it is what the farm runs).
export XR_USED="$target/$CLIENT/xr"
echo "| build | wall s | artifacts | executed on the farm | actions per second | speed-up over local | client CPU ms per action | server CPU ms per action |"
echo "|---|---|---|---|---|---|---|---|"
rm -rf "$S/store"
local_t=$(timed_build "$S" -j 2)
printf "| local, -j 2 | %.2f | %s | – | %.1f | 1.0× | – | – |\n" "$local_t" "$(field built)" "$(echo "$ARTIFACTS / $local_t" | bc -l)"
for bots in $BOTS; do
    up "$bots"
    rm -rf "$S/store"
    server_before=$(server_cpu_ms)
    t=$(timed_build "$S" --remote-exec "$url" --remote-jobs 64 --remote-persistent-workers)
    server_ms=$(echo "($(server_cpu_ms) - $server_before) / $(field built)" | bc -l)
    printf "| farm, %s bots | %.2f | %s | %s | %.1f | %.1f× | %s | %.1f |\n" "$bots" "$t" "$(field built)" "$(field remote_executed)" \
        "$(echo "$ARTIFACTS / $t" | bc -l)" "$(echo "$local_t / $t" | bc -l)" "$(client_cpu_ms)" "$server_ms"
    last_bots=$bots last_rate=$(echo "$ARTIFACTS / $t" | bc -l) last_server_ms=$server_ms
done
rm -rf "$S/store"
server_before=$(server_cpu_ms)
t=$(timed_build "$S" --remote-exec "$url" --remote-jobs 64 --remote-persistent-workers)
server_ms=$(echo "($(server_cpu_ms) - $server_before) / $(field built)" | bc -l)
printf "| the client alone: all from the action cache | %.2f | %s | %s | %.1f | %.1f× | %s | %.1f |\n" "$t" "$(field built)" \
    "$(field remote_executed)" "$(echo "$ARTIFACTS / $t" | bc -l)" "$(echo "$local_t / $t" | bc -l)" "$(client_cpu_ms)" "$server_ms"
# A farm bounded by its server: the server's CPU per executed action times the actions a second is the
# share of a core the server used; near one core (one Python process), more bots cannot help.
share=$(echo "$last_server_ms * $last_rate / 10" | bc -l)
echo
if [ "$(echo "$share >= 80" | bc)" = 1 ]; then
    printf "At %s bots the farm is bounded by its server: %.1f ms of the server's CPU per action at %.1f actions/s is %.0f%% of a core.\n" \
        "$last_bots" "$last_server_ms" "$last_rate" "$share"
else
    printf "At %s bots the server used %.0f%% of a core (%.1f ms of CPU per action at %.1f actions/s): not the bound.\n" \
        "$last_bots" "$share" "$last_server_ms" "$last_rate"
fi
