#!/usr/bin/env bash
# The tests: formatting, lints, then every test. The integration tests build
# the plugins (and the broken fixture plugins) before they load them from disk.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo build
cargo test --workspace
# A minute of fuzzing: the property tests over arbitrary input, fresh seeds.
scripts/fuzz.sh 60
# A smoke of the remote-store benchmark (real nginx and redis-server, a few seconds).
scripts/bench-remote.sh --smoke
# A smoke of the build benchmark: glslc batched, make, ninja and xr on 48 artifacts.
scripts/bench-build.sh --smoke
# A smoke of the real-world check (xr compile --device against glslc) on our own samples.
scripts/real-world.sh --smoke
# A smoke of mutation testing: every mutant of the journal is caught. On CI
# only (it mutates the checkout in place; CI runs on a clean clone).
if [ "${CI:-}" = true ]; then
    scripts/mutants.sh smoke
fi
