#!/usr/bin/env bash
# The main job, from a fresh clone: install what is missing, build aotc and the camera
# sample (aotc compiles the trained Fashion-MNIST model into it at build time), then
# classify ten Fashion-MNIST test images (samples/data/, one per class; the file name
# holds the true label) and print the labels and the timing.
#
#   tools/run-demo.sh            (from anywhere; builds in build/release)
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

tools/setup.sh
cmake --preset release
# Only the samples (and aotc, which they need), not the test suite.
cmake --build --preset release --target camera_classify classify_image

echo
echo "== camera_classify --images samples/data (true label in each file name)"
build/release/samples/camera_classify/camera_classify --images samples/data
echo
echo "demo: done in $(( $(date +%s) - started )) s"
