#!/usr/bin/env bash
# Benchmarks the shared remote store against a local cold build, side by
# side in one run, on real servers over loopback (nginx with WebDAV, and
# redis-server, started here on free ports):
#   local cold:     an empty store, no remote (the baseline)
#   first machine:  an empty store and an empty remote, uploading (--remote-upload)
#   second machine: an empty store and the warm remote: everything fetched
# The matrix is the build benchmark's fragment program (216 variants) for
# gl-spirv and vk-spirv: 432 artifacts. Prints a Markdown table: median wall
# seconds of RUNS runs, the ratio to the local cold build, objects per second.
#   scripts/bench-remote.sh            # release build, 3 runs
#   scripts/bench-remote.sh --smoke    # debug build, 24 variants, 1 run (CI)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/target-dir.sh

SMOKE=0
[ "${1:-}" = "--smoke" ] && SMOKE=1
scripts/setup.sh
if [ "$SMOKE" = 1 ]; then
    cargo build --quiet
    XR="$target/debug/xr" RUNS=1 LEVELS="[0, 0]"
else
    cargo build --release --quiet  # xr and the plugins it loads
    XR="$target/release/xr" RUNS=3 LEVELS="[0, 8]"
fi

B="$target/bench-remote"
rm -rf "$B"
mkdir -p "$B/nginx/data" "$B/nginx/temp" "$B/redis"
scripts/bench-matrix.sh "$B" '"gl-spirv", "vk-spirv"' "$LEVELS"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
WEBDAV_PORT=$(free_port)
REDIS_PORT=$(free_port)
echo "ci:{PLAIN}bench" >"$B/nginx/htpasswd"
sed -e "s|@DIR@|$B/nginx|g" -e "s|@PORT@|$WEBDAV_PORT|g" tests/servers/nginx-webdav.conf >"$B/nginx/nginx.conf"
nginx -p "$B/nginx" -c "$B/nginx/nginx.conf" &
NGINX=$!
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --requirepass bench \
    --dir "$B/redis" --daemonize no --logfile "$B/redis/log" &
REDIS=$!
trap 'kill $NGINX $REDIS 2>/dev/null || true' EXIT
for port in "$WEBDAV_PORT" "$REDIS_PORT"; do
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
done

# seconds COMMAND...: runs it in $B, prints its wall seconds; fails if it fails.
seconds() {
    local start end
    start=$(date +%s.%N)
    (cd "$B" && "$@" >"$B/last.log" 2>&1) || { cat "$B/last.log" >&2; exit 1; }
    end=$(date +%s.%N)
    python3 -c "print(f'{$end - $start:.3f}')"
}
median() { python3 -c 'import sys, statistics; print(f"{statistics.median(map(float, sys.argv[1:])):.3f}")' "$@"; }
expect() { grep -q "$1" "$B/last.log" || { echo "bench-remote: expected '$1' in:" >&2; cat "$B/last.log" >&2; exit 1; }; }

WEBDAV="http://127.0.0.1:$WEBDAV_PORT/cache"
REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
declare -A times
for run in $(seq "$RUNS"); do
    rm -rf "$B"/store-*
    times[local]+=" $(seconds "$XR" build -q --store store-local)"
    expect " 0 fetched"
    artifacts=$(grep -o '[0-9]* built' "$B/last.log" | cut -d' ' -f1)
    for kind in webdav redis; do
        if [ "$kind" = webdav ]; then
            url=$WEBDAV
            export XR_REMOTE_USER=ci XR_REMOTE_PASSWORD=bench
            rm -rf "$B/nginx/data/cache"
        else
            url=$REDIS_URL
            unset XR_REMOTE_USER
            export XR_REMOTE_PASSWORD=bench
            redis-cli -p "$REDIS_PORT" -a bench --no-auth-warning flushall >/dev/null
        fi
        times[$kind-first]+=" $(seconds "$XR" build -q --store "store-$kind-first" --remote "$url" --remote-upload)"
        expect "$artifacts built, 0 fetched"
        times[$kind-second]+=" $(seconds "$XR" build -q --store "store-$kind-second" --remote "$url")"
        expect "0 built, $artifacts fetched"
    done
done

local_median=$(median ${times[local]})
echo
echo "$artifacts artifacts (gl-spirv + vk-spirv), $RUNS run(s), median wall seconds, $(basename "$XR") at $XR"
echo
echo "| scenario | seconds | vs local cold | artifacts/s |"
echo "|---|---:|---:|---:|"
row() {
    local name=$1 m
    m=$(median $2)
    python3 -c "print(f'| $name | $m | {$m / $local_median:.2f}x | {$artifacts / $m:.0f} |')"
}
row "local cold (no remote)" "${times[local]}"
row "first machine, WebDAV: cold + upload" "${times[webdav-first]}"
row "second machine, WebDAV: everything fetched" "${times[webdav-second]}"
row "first machine, Redis: cold + upload" "${times[redis-first]}"
row "second machine, Redis: everything fetched" "${times[redis-second]}"
