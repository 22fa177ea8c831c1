#!/usr/bin/env bash
# Instructions per constant set, counted by callgrind: unlike the timed
# `xr-bench constant-setters`, whose ~30 ns sets move with the load of a
# shared machine by more than the margins it compares, a count of
# instructions is the same run after run.
#
# Each kind (`xr-bench constant-setters --only KIND`: raw-vector,
# table-vector, resolved-vector, typed-vector, generated-vector (a
# generated binding's handle), and the same for -array and -matrix) runs twice under callgrind, LOW and HIGH sets in one loop, with
# only that loop counted (--toggle-collect). (count(HIGH) - count(LOW)) /
# (HIGH - LOW) is one set's instructions, the loop's setup and first set
# cancelled out.
#
#   scripts/bench-setters-callgrind.sh [KIND...]
#   LOW=10000 HIGH=20000 SYSTEM=xr-compiler-gl-spirv scripts/bench-setters-callgrind.sh table-vector
#   NO_BUILD=1 ...   (use the release build already there)
#   BENCH=/elsewhere/xr-bench NO_BUILD=1 ...   (another build: its plugins beside it)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/target-dir.sh
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
. scripts/lavapipe-env.sh
if [ -z "${NO_BUILD:-}" ]; then
    cargo build --release --quiet -p xr-bench -p xr-rhi-opengl-cdylib -p xr-compiler-glsl-cdylib -p xr-compiler-gl-spirv-cdylib
fi
low=${LOW:-10000}
high=${HIGH:-20000}
system=${SYSTEM:-xr-compiler-glsl}
bench=${BENCH:-$target/release/xr-bench}
kinds=("$@")
if [ ${#kinds[@]} -eq 0 ]; then
    kinds=(raw-vector resolved-vector typed-vector table-vector generated-vector
        raw-array resolved-array typed-array table-array generated-array
        raw-matrix resolved-matrix typed-matrix table-matrix generated-matrix)
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Instructions counted in the measured loop of KIND at SETS sets.
count() {
    local file="$out/$1.$2"
    valgrind --tool=callgrind --callgrind-out-file="$file" --collect-atstart=no \
        --toggle-collect='*constant_setters::measured*' \
        "$bench" constant-setters --only "$1" --sets "$2" --system "$system" \
        >"$file.out" 2>"$file.log" || { cat "$file.log" >&2; exit 1; }
    awk '/^(summary|totals):/ { print $2; exit }' "$file"
}

echo "callgrind, $bench, $system, $low and $high sets; instructions per set = difference / $((high - low))"
echo
echo "| set | instructions at $low | at $high | instructions per set |"
echo "|---|---:|---:|---:|"
for kind in "${kinds[@]}"; do
    a=$(count "$kind" "$low")
    b=$(count "$kind" "$high")
    per=$(awk -v a="$a" -v b="$b" -v n=$((high - low)) 'BEGIN { printf "%.1f", (b - a) / n }')
    echo "| $kind | $a | $b | $per |"
done
