#!/usr/bin/python3
"""Cross-compilation to 64-bit ARM: aotc compiles a model for the Halide target
arm-64-linux (kernels by Halide, runner by aarch64-linux-gnu-g++), a C program is
linked with aarch64-linux-gnu-gcc and run under qemu-aarch64; its output must match
the reference evaluator on the same random input: max|diff| <= 1e-4 * max(1, max|ref|).

  cross_test.py --aotc AOTC --model MODEL.air --harness run_library.c --workdir DIR
"""

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

TOLERANCE = 1e-4


def run(cmd):
    print("$ " + " ".join(str(c) for c in cmd), flush=True)
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if result.returncode != 0:
        sys.stdout.write(result.stdout[-3000:] + result.stderr[-3000:])
        raise SystemExit(f"FAILED: exit code {result.returncode}")
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("--aotc", "--model", "--harness", "--workdir"):
        p.add_argument(flag, type=Path, required=True)
    args = p.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    name = args.model.stem
    out = args.workdir / "arm64"
    run([args.aotc, args.model, "--emit=lib", "--target", "arm-64-linux", "-o", out, "--jobs", "1"])
    exe = args.workdir / f"run_{name}_arm64"
    run(["aarch64-linux-gnu-gcc", "-std=c11", "-O2", f"-DAOTC_MODEL={name}", "-I", out, args.harness,
         out / f"lib{name}.a", "-lpthread", "-ldl", "-lm", "-o", exe])
    check = subprocess.run(["file", exe], capture_output=True, text=True).stdout
    print(check.strip())
    if "aarch64" not in check:
        raise SystemExit("FAILED: the program is not an aarch64 executable")

    graph = run([args.aotc, args.model, "--emit=graph", "--passes="]).stdout
    shape = [int(d) for d in graph.split("input %", 1)[1].split("f32[", 1)[1].split("]", 1)[0].split(",")]
    seed = np.random.SeedSequence().entropy % 2**32
    print(f"input f32{shape}, seed {seed}")
    np.random.default_rng(seed).standard_normal(shape).astype("<f4").tofile(args.workdir / "input.bin")
    run(["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu", exe, args.workdir / "arm64.bin", args.workdir / "input.bin"])
    run([args.aotc, args.model, "--emit=run", "--input", args.workdir / "input.bin", "-o", args.workdir / "ref.bin"])
    got = np.fromfile(args.workdir / "arm64.bin", dtype="<f4")
    ref = np.fromfile(args.workdir / "ref.bin", dtype="<f4")
    if got.size != ref.size:
        raise SystemExit(f"FAILED: {got.size} outputs, expected {ref.size}")
    ratio = float(np.max(np.abs(got - ref)) / max(1.0, float(np.max(np.abs(ref)))))
    print(f"arm64 under qemu vs reference: max|diff| / max(1, max|ref|) = {ratio:.3g} (tolerance {TOLERANCE:g})")
    if ratio > TOLERANCE:
        raise SystemExit("FAILED: outside the tolerance")
    print("PASSED")


if __name__ == "__main__":
    main()
