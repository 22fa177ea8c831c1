#!/usr/bin/env bash
# Mutation testing of the files whose bugs lose work or load wrong objects:
# the store, the journal, the catalogs, the manifest, the program cache, the
# Vulkan pipeline cache, the stage-interface linking and the farm's
# persistent workers. Each group runs
# cargo-mutants with the tests that guard that file (the fast package tests
# where they reach it, the real-driver integration test for the program
# cache), one mutant at a time, in place: run it in a clean clone, not in a
# tree you are editing. Results: target/mutants/<group>/mutants.out;
# docs/TESTING.md records the last run and explains each survivor.
#
#   scripts/mutants.sh            # every group
#   scripts/mutants.sh store      # one group
#   scripts/mutants.sh smoke      # CI's minute: the journal's mutants, every one must be caught
#   scripts/mutants.sh diff BASE  # every function the commits since BASE (the last landed
#                                 # commit) changed; results in target/mutants/diff
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo-mutants >/dev/null || cargo install cargo-mutants --locked

run() {
    local group=$1
    shift
    if [ -n "${ONLY:-}" ] && [ "$ONLY" != "$group" ]; then return; fi
    echo "== $group"
    local start=$SECONDS
    # Exit 2 (survivors) and 3 (timeouts) are what we are here to find:
    # report them and go on; anything else is a broken run.
    mkdir -p "target/mutants/$group"
    local status=0
    cargo mutants --in-place --no-shuffle --baseline skip --timeout 300 -o "target/mutants/$group" "$@" || status=$?
    case $status in 0 | 2 | 3) ;; *) echo "cargo mutants failed ($status)" >&2 && exit "$status" ;; esac
    echo "== $group: $((SECONDS - start)) s"
}
ONLY=${1:-}

# A mutant that breaks a property makes proptest keep its failing case as a
# regression file: those belong to the mutant, not to the tree.
forget_mutant_regressions() {
    # No such file is the usual case: grep's "no match" must not become the
    # script's exit status (this runs as the EXIT trap, under pipefail).
    git ls-files --others --exclude-standard | { grep 'proptest-regressions' || true; } | xargs -r rm -rf
}
trap forget_mutant_regressions EXIT

if [ "$ONLY" = smoke ]; then
    mkdir -p target/mutants/smoke
    # Strict: a survivor here fails the run.
    # Incremental compilation on, where CI turns it off for the rest of the
    # suite: each mutant changes one function, and an incremental rebuild of
    # xr-build recompiles little more than that function. The tests that
    # read the journal: the unit tests, the catalog's and the fuzzing ones.
    CARGO_INCREMENTAL=1 cargo mutants --in-place --no-shuffle --timeout 120 -o target/mutants/smoke \
        -f xr-build/src/journal.rs --test-package xr-build \
        --cargo-test-arg=--lib --cargo-test-arg=--test=catalog_journal --cargo-test-arg=--test=fuzz
    exit
fi

if [ "$ONLY" = diff ]; then
    # The functions a branch changed, not chosen files: each mutant first
    # against the tests of its own crate (unit and integration tests, no
    # doc tests), then what survives against the integration modules, which
    # drive the real plugins and drivers: those the branch changed or
    # added, or those XR_MUTANTS_MODULES names, as BINARY/MODULE or a
    # MODULE of one binary, in the order to try them ("warm hermetic
    # build/slang remote_exec").
    base=${2:-${XR_LANDED:-}}
    if [ -z "$base" ]; then
        echo "usage: scripts/mutants.sh diff BASE (the last landed commit; or set XR_LANDED)" >&2
        exit 2
    fi
    if ! git rev-parse --verify -q "$base^{commit}" >/dev/null; then
        echo "mutants.sh diff: '$base' is not a commit of this repository" >&2
        exit 2
    fi
    # In place: a mutant is written into the tree while its tests run.
    if ! git diff --quiet HEAD; then
        echo "mutants.sh diff mutates files in place: commit (or stash) your changes first" >&2
        exit 2
    fi
    # The drivers the suite runs on (the integration modules draw).
    . scripts/lavapipe-env.sh
    # Each mutant changes one function: an incremental rebuild recompiles
    # little more. Set for every cargo here, or the baselines and the
    # mutants would be two builds.
    export CARGO_INCREMENTAL=1
    out=target/mutants/diff
    rm -rf "$out"
    mkdir -p "$out"
    git diff "$base" HEAD -- '*.rs' >"$out/changes.diff"
    start=$SECONDS
    # The integration modules as BINARY/MODULE, in the order they are tried.
    modules=()
    if [ -n "${XR_MUTANTS_MODULES:-}" ]; then
        for name in $XR_MUTANTS_MODULES; do
            case $name in
            */*) pattern=tests/tests/$name.rs ;;
            *) pattern="tests/tests/*/$name.rs" ;;
            esac
            existing=()
            for file in $pattern; do
                [ -f "$file" ] || continue
                file=${file#tests/tests/}
                existing+=("${file%.rs}")
            done
            case ${#existing[@]} in
            1) modules+=("${existing[0]}") ;;
            0) echo "mutants.sh diff: no integration module '$name' (XR_MUTANTS_MODULES)" >&2 && exit 2 ;;
            *) echo "mutants.sh diff: '$name' is a module of several binaries: name one (${existing[*]})" >&2 && exit 2 ;;
            esac
        done
    else
        for file in $(git diff --name-only --diff-filter=AM "$base" HEAD -- 'tests/tests/*/*.rs'); do
            file=${file#tests/tests/}
            [ "${file##*/}" = main.rs ] || modules+=("${file%.rs}")
        done
    fi
    # The test helpers are no product code; the benchmarks are measured by
    # running them (scripts/bench.sh, CI's bench smokes), not by tests.
    filters=(--in-diff "$out/changes.diff" -e 'tests/**' -e 'xr-bench/**')
    # Each run's results are kept (pass-1, pass-2, ...): with --iterate,
    # cargo-mutants counts what earlier runs caught or found unviable as
    # "previously caught", and keeps only its own unviable mutants.
    passes=0
    mutants() {
        local status=0
        cargo mutants --in-place --no-shuffle -o "$out" "${filters[@]}" "$@" || status=$?
        case $status in 0 | 2 | 3) ;; *) echo "cargo mutants failed ($status)" >&2 && exit "$status" ;; esac
        passes=$((passes + 1))
        cp -r "$out/mutants.out" "$out/pass-$passes"
    }
    echo "== diff against $(git rev-parse --short "$base"): $(cargo mutants --list "${filters[@]}" | wc -l) mutants"
    echo "== the tests of each mutant's own crate"
    # With a baseline: a test that fails anyway would count every mutant
    # as caught. Every feature of the crate: alone, a crate is built with
    # its default features, and code behind the others (xr-build's farm)
    # would not even compile, its mutants "missed" untested.
    mutants --timeout 300 --all-features --cargo-arg=--tests
    missed=$out/mutants.out/missed.txt
    if [ -s "$missed" ] && [ ${#modules[@]} -gt 0 ]; then
        echo "== $(wc -l <"$missed") survivors against the integration modules, one after another: ${modules[*]}"
        # The workspace's one feature set, as the suite builds it; each
        # module's filter run in its own binary.
        binaries=$(printf '%s\n' "${modules[@]}" | cut -d/ -f1 | sort -u)
        # The baseline here (cargo-mutants' own would build the mutated
        # packages' tests, not these), one binary at a time.
        for binary in $binaries; do
            binary_filters=()
            for module in "${modules[@]}"; do
                if [ "${module%%/*}" = "$binary" ]; then binary_filters+=("${module#*/}::"); fi
            done
            echo "== baseline: cargo test --workspace --test $binary -- ${binary_filters[*]}"
            if ! cargo test --workspace --test "$binary" -- "${binary_filters[@]}" >>"$out/baseline.log" 2>&1; then
                echo "mutants.sh diff: the integration modules fail unmutated (see $out/baseline.log)" >&2
                exit 1
            fi
        done
        # Module by module: a mutant one kills is not tried against the next.
        for module in "${modules[@]}"; do
            [ -s "$missed" ] || break
            echo "== $(wc -l <"$missed") survivors against $module"
            mutants --iterate --baseline skip --timeout 600 --test-workspace true \
                "--cargo-arg=--test=${module%%/*}" --cargo-test-arg=-- "--cargo-test-arg=${module#*/}::"
        done
    fi
    count() { cat "$@" 2>/dev/null | grep -c . || true; }
    # Caught and unviable: each run's own, summed (no mutant is tried again
    # once caught or unviable); missed and timed out: the last run's.
    last=$out/pass-$passes
    echo "== diff: $(count "$out"/pass-*/caught.txt) caught, $(count "$last/missed.txt") missed," \
        "$(count "$out"/pass-*/unviable.txt) unviable, $(count "$last/timeout.txt") timed out;" \
        "$((SECONDS - start)) s"
    if [ -s "$last/missed.txt" ]; then
        echo "missed (kill each with a test, or say in docs/TESTING.md why it cannot be):"
        sed 's/^/  /' "$last/missed.txt"
    fi
    exit
fi

run store -f xr-store/src/object.rs --test-package xr-store,xr-plugin-kit
run journal-catalog-manifest -f xr-build/src/journal.rs -f xr-store/src/catalog.rs -f 'xr-build/src/manifest/*.rs' \
    --test-package xr-build,xr-store
run pipeline-cache -f backends/xr-compiler-vk-spirv/src/pipeline_cache.rs --test-package xr-compiler-vk-spirv,xr-tests \
    --cargo-test-arg=--lib --cargo-test-arg=--test=render
run interface-linking -f backends/xr-spirv/src/reflect/gl.rs -f backends/xr-spirv/src/reflect/interface.rs -F 'link_interface_locations|assign_uniform_locations' \
    --test-package xr-spirv
# A persistent worker that answers wrong hands a farm's client another action's reply.
run persistent-workers -f xr-remote-exec/src/persistent_worker.rs -f xr-bot/src/persistent.rs \
    --test-package xr-remote-exec,xr-bot
run program-cache -f xr-plugin-kit/src/program_cache.rs --test-package xr-plugin-kit,xr-tests \
    --cargo-test-arg=--test=fuzz --cargo-test-arg=--test=render --cargo-test-arg=--test=build
