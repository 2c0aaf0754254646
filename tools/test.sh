#!/usr/bin/env bash
# The one test command (README, .ci/run): set up, then configure, build and run the tests
# of four trees, one after the other: release (every test), asan (ASan + UBSan: every test
# but the labels models and release_only, see docs/testing.md), then the ARM trees (aarch64,
# armhf: the model libraries, their API and the samples' accuracy test built for ARM and run
# under qemu, with release's aotc). Ends with each tree's wall time.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/setup.sh
times=()
for preset in release asan aarch64 armhf; do
  started=$(date +%s)
  cmake --workflow --preset "$preset"
  times+=("$preset $(( $(date +%s) - started )) s")
done
echo "test.sh: tree times: ${times[*]}"
