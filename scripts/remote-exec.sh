#!/usr/bin/env bash
# A Remote Execution farm on this machine, on loopback: PostgreSQL (the
# scheduler's database, a cluster of its own), BuildGrid (REAPI server:
# Execution, ActionCache, CAS, ByteStream, Capabilities, Bots) and N
# xr-bot workers.
#
#   scripts/remote-exec.sh up DIR [--bots N] [--port P]   prints the endpoint (grpc://127.0.0.1:P)
#   scripts/remote-exec.sh bots DIR N                     starts N more bots
#   scripts/remote-exec.sh down DIR                       stops everything it started; nothing keeps running
#
# DIR holds the database, the configuration, each process's pid and log
# (DIR/logs) and the bots' scratch space. Needs scripts/setup-buildgrid.sh
# (BuildGrid in target/buildgrid) and a built xr-bot (XR_BOT, else
# target/debug/xr-bot, else target/release/xr-bot; target/ is
# CARGO_TARGET_DIR when that is set).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
command=${1:-}
dir=${2:-}
[ -n "$command" ] && [ -n "$dir" ] || { sed -n '2,15p' "$0" >&2; exit 2; }
shift 2
mkdir -p "$dir/logs"
dir=$(cd "$dir" && pwd)

# What the setup and cargo built: under CARGO_TARGET_DIR when it is set.
target=${CARGO_TARGET_DIR:-$repo/target}
case $target in /*) ;; *) target=$repo/$target ;; esac
bgd=$target/buildgrid/bin/bgd
pg_bin=$(dirname "$(command -v pg_ctl || echo /usr/lib/postgresql/15/bin/pg_ctl)")
bot=${XR_BOT:-}
if [ -z "$bot" ]; then
    for candidate in "$target/debug/xr-bot" "$target/release/xr-bot"; do
        [ -x "$candidate" ] && { bot=$candidate; break; }
    done
fi

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# PostgreSQL refuses to run as root: as root, the cluster belongs to `postgres`.
as_db_user() {
    if [ "$(id -u)" = 0 ]; then
        chown -R postgres "$pg" 2>/dev/null || true
        su postgres -s /bin/sh -c "$(printf '%q ' "$@")"
    else
        "$@"
    fi
}

# The cluster's directory: DIR/pg, unless DIR is one `postgres` cannot enter
# (as root, `mktemp -d` makes it 0700); then a directory of its own in the
# system's temporary directory, named in DIR/pg_dir and removed by `down`.
if [ -f "$dir/pg_dir" ]; then
    pg=$(cat "$dir/pg_dir")
else
    pg=$dir/pg
fi
place_cluster() {
    pg=$dir/pg
    rm -f "$dir/pg_dir"
    if [ "$(id -u)" = 0 ]; then
        id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
        if ! su postgres -s /bin/sh -c "test -x $(printf '%q' "$dir")"; then
            pg=$(mktemp -d "${TMPDIR:-/tmp}/xr-farm-pg.XXXXXX")
            echo "$pg" >"$dir/pg_dir"
        fi
    fi
}

wait_for_port() { # port seconds what
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "remote-exec: $3 did not listen on port $1 in $2 s; see $dir/logs" >&2
    return 1
}

start_bots() { # count
    local n first i
    [ -x "$bot" ] || { echo "remote-exec: no xr-bot built (cargo build -p xr-bot, or set XR_BOT)" >&2; exit 1; }
    first=$(find "$dir" -maxdepth 1 -name 'bot-*.pid' | wc -l)
    for ((i = first; i < first + $1; i++)); do
        nohup "$bot" --farm "grpc://127.0.0.1:$(cat "$dir/port")" --work "$dir/bots/$i" --id "bot-$i" \
            >"$dir/logs/bot-$i.log" 2>&1 </dev/null &
        echo $! >"$dir/bot-$i.pid"
    done
}

case $command in
up)
    bots=2
    port=""
    while [ $# -gt 0 ]; do
        case $1 in
        --bots) bots=$2; shift 2 ;;
        --port) port=$2; shift 2 ;;
        *) echo "remote-exec: unknown option $1" >&2; exit 2 ;;
        esac
    done
    [ -x "$bgd" ] || { echo "remote-exec: BuildGrid is not installed; run scripts/setup-buildgrid.sh" >&2; exit 1; }
    [ -f "$dir/server.pid" ] && { echo "remote-exec: a farm already runs in $dir (down it first)" >&2; exit 1; }
    port=${port:-$(free_port)}
    pg_port=$(free_port)
    echo "$port" >"$dir/port"
    [ "$pg" = "$dir/pg" ] || rm -rf "$pg"
    rm -rf "$dir/pg"
    place_cluster
    mkdir -p "$pg/data" "$pg/socket"
    as_db_user "$pg_bin/initdb" -D "$pg/data" -U postgres --auth=trust >"$dir/logs/initdb.log" 2>&1 || {
        echo "remote-exec: initdb failed: $(tail -n 1 "$dir/logs/initdb.log") (all of it in $dir/logs/initdb.log)" >&2
        exit 1
    }
    # The server writes its log as `postgres`, so beside the cluster.
    as_db_user "$pg_bin/pg_ctl" -D "$pg/data" -l "$pg/postgres.log" -w \
        -o "-p $pg_port -k $pg/socket -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null || {
        echo "remote-exec: PostgreSQL did not start: $(tail -n 1 "$pg/postgres.log" 2>/dev/null) (see $pg/postgres.log)" >&2
        exit 1
    }
    [ "$pg" = "$dir/pg" ] || ln -sfn "$pg/postgres.log" "$dir/logs/postgres.log"
    echo "$pg_port" >"$dir/pg_port"
    sql="postgresql://postgres@127.0.0.1:$pg_port/postgres"
    cat >"$dir/server.yml" <<YAML
# Each in-flight Execute and each bot's long poll holds a server thread.
thread-pool-size: 400
maximum-concurrent-rpcs: 800
server:
  - !channel
    address: "127.0.0.1:$port"
    insecure-mode: true
authorization:
  method: none
connections:
  - !sql-connection &sql
    connection-string: $sql
    pool-size: 20
    max-overflow: 40
storages:
  - !lru-storage &main-storage
    size: ${XR_FARM_CAS_SIZE:-4GB}
caches:
  - !lru-action-cache &main-action
    storage: *main-storage
    max-cached-refs: 100000
    allow-updates: true
    cache-failed-actions: false
schedulers:
  - !sql-scheduler &state-database
    sql: *sql
    action-cache: *main-action
    storage: *main-storage
    # A bot not heard from for this long is lost: its leases go to others.
    bot-session-keepalive-timeout: 10
    # Persistent workers (xr build --remote-persistent-workers): the key
    # picks a worker on the bot, it does not choose the bot. (The
    # scheduler's other settings are BuildGrid's defaults: more assigner
    # threads, shorter intervals and proactive fetching of the whole queue
    # changed nothing measurable; docs/PERFORMANCE.md.)
    property-set: !dynamic-property-set
      wildcard-property-keys: [persistentWorkerKey, persistentWorkerProtocol]
instances:
  - name: ''
    services:
      - !action-cache
        cache: *main-action
      - !execution
        scheduler: *state-database
      - !cas
        storage: *main-storage
      - !bytestream
        storage: *main-storage
YAML
    "$bgd" migrate apply "$sql" >"$dir/logs/migrate.log" 2>&1 || {
        echo "remote-exec: bgd migrate failed; see $dir/logs/migrate.log" >&2
        exit 1
    }
    nohup "$bgd" server start "$dir/server.yml" >"$dir/logs/server.log" 2>&1 </dev/null &
    echo $! >"$dir/server.pid"
    wait_for_port "$port" 60 BuildGrid
    start_bots "$bots"
    echo "grpc://127.0.0.1:$port"
    ;;
bots)
    start_bots "${1:?how many bots}"
    ;;
down)
    # Every process asked at once, then killed after 2 s: a bot takes about
    # 2 s to end its long poll, and the server waits on its bots' streams
    # past 5 s. Nothing is lost: the farm's state is the database's, and it
    # stops (immediate mode) below.
    pids=()
    for pidfile in "$dir"/bot-*.pid "$dir/server.pid"; do
        [ -f "$pidfile" ] || continue
        pid=$(cat "$pidfile")
        kill "$pid" 2>/dev/null && pids+=("$pid")
        rm -f "$pidfile"
    done
    for _ in $(seq 20); do
        alive=()
        for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive+=("$pid"); done
        [ ${#alive[@]} -eq 0 ] && break
        pids=("${alive[@]}")
        sleep 0.1
    done
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    if [ -d "$pg/data" ] && [ -f "$pg/data/postmaster.pid" ]; then
        as_db_user "$pg_bin/pg_ctl" -D "$pg/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    if [ -f "$dir/pg_dir" ]; then
        rm -rf "$pg" "$dir/pg_dir"
    fi
    ;;
*)
    sed -n '2,15p' "$0" >&2
    exit 2
    ;;
esac
