#!/usr/bin/env bash
# The one test command (README, .ci/run): set up, then configure, build and run
# every test in the release preset and again under ASan + UBSan, then the ARM trees
# (aarch64, armhf: the model libraries, their API and the samples' accuracy test built
# for ARM and run under qemu, with release's aotc).
set -euo pipefail
cd "$(dirname "$0")/.."

tools/setup.sh
cmake --workflow --preset release
cmake --workflow --preset asan
cmake --workflow --preset aarch64
cmake --workflow --preset armhf
