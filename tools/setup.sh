#!/usr/bin/env bash
# Installs every Debian package aotc's build, tests and tools need. Idempotent:
# installs only what is missing, so a second run is quick and changes nothing.
set -euo pipefail

packages=(
  # build
  cmake ninja-build g++ clang libclang-rt-14-dev
  # compiler dependencies
  libhalide14-0-dev flatbuffers-compiler flatbuffers-compiler-dev libflatbuffers-dev libcli11-dev
  nlohmann-json3-dev binutils zlib1g-dev libssl-dev
  # the ONNX frontend (protobuf classes, checker, shape inference) and ONNX's conformance data
  libonnx-dev libprotobuf-dev libonnx-testdata python3-onnx
  # the presets' caches of what aotc compiles: ccache for the generated runners and CUDA stubs
  ccache
  # tests: GoogleTest, lit + FileCheck, the PyTorch reference and the exporter
  libgtest-dev libgmock-dev llvm-14-tools
  python3-torch python3-torchvision python3-numpy python3-flatbuffers
  # tests/tflite: Arm NN's TfLite parser on the CpuRef backend, the independent TFLite executor
  python3-pyarmnn libarmnntfliteparser22 libarmnn-cpuref-backend22
  # cross-compilation checks: model libraries for arm-64-linux and arm-32-linux run under qemu
  g++-aarch64-linux-gnu g++-arm-linux-gnueabihf qemu-user file
  # samples (OpenCV's camera, video and image I/O); their tests and training read Fashion-MNIST
  libopencv-dev dataset-fashion-mnist
  # face_detect's test photo (skimage/data/astronaut.png)
  python3-skimage
  # bench/gpu/fit-gpu-cost-model (fits the GPU cost model; a unit test checks its constants)
  python3-scipy
  # tests/gpu_schedules: the generators' GPU schedules on an OpenCL CPU device (POCL);
  # Halide's runtime opens libOpenCL.so, which the -dev package links to the ICD loader
  pocl-opencl-icd ocl-icd-libopencl1 ocl-icd-opencl-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
