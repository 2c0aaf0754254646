#!/usr/bin/env bash
# The one test command (README, .ci/run): set up, then configure, build and run
# every test in the release preset and again under ASan + UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/setup.sh
cmake --workflow --preset release
cmake --workflow --preset asan
