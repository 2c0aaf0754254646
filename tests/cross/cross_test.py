#!/usr/bin/python3
"""Cross-compilation to ARM: aotc compiles a model for an ARM Halide target (kernels by
Halide, runner by Debian's cross g++), a C program is linked with the cross gcc and run
under qemu (tools/cross_targets.py); every archive member must be an object for that
architecture, and the output must match the reference evaluator on the same random
input: max|diff| <= 1e-4 * max(1, max|ref|).

  cross_test.py --target arm-64-linux|arm-32-linux --aotc AOTC --model MODEL.air
                --harness run_library.c --workdir DIR
"""

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "tools"))
import cross_targets  # noqa: E402

TOLERANCE = 1e-4
# What `file` says of the objects of each target's library.
OBJECT_KINDS = {"arm-64-linux": "ELF 64-bit LSB relocatable, ARM aarch64",
                "arm-32-linux": "ELF 32-bit LSB relocatable, ARM, EABI5"}


def run(cmd, cwd=None):
    print("$ " + " ".join(str(c) for c in cmd), flush=True)
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=cwd)
    if result.returncode != 0:
        sys.stdout.write(result.stdout[-3000:] + result.stderr[-3000:])
        raise SystemExit(f"FAILED: exit code {result.returncode}")
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--target", required=True, choices=sorted(OBJECT_KINDS))
    for flag in ("--aotc", "--model", "--harness", "--workdir"):
        p.add_argument(flag, type=Path, required=True)
    args = p.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    cc, emulator, executable_kind = cross_targets.toolchain(args.target)
    name = args.model.stem
    out = args.workdir / "lib"
    run([args.aotc, args.model, "--emit=lib", "--target", args.target, "-o", out, "--jobs", "1"])

    members = args.workdir / "members"
    members.mkdir(exist_ok=True)
    run(["ar", "x", out / f"lib{name}.a"], cwd=members)
    for member in sorted(members.iterdir()):
        kind = run(["file", member]).stdout.strip()
        print(kind)
        if OBJECT_KINDS[args.target] not in kind:
            raise SystemExit(f"FAILED: {member.name} is not an {args.target} object")

    exe = args.workdir / f"run_{name}"
    run([cc, "-std=c11", "-O2", f"-DAOTC_MODEL={name}", "-I", out, args.harness,
         out / f"lib{name}.a", "-lpthread", "-ldl", "-lm", "-o", exe])
    check = run(["file", exe]).stdout
    print(check.strip())
    if executable_kind not in check:
        raise SystemExit(f"FAILED: the program is not an {args.target} executable")

    graph = run([args.aotc, args.model, "--emit=graph", "--passes="]).stdout
    shape = [int(d) for d in graph.split("input %", 1)[1].split("f32[", 1)[1].split("]", 1)[0].split(",")]
    seed = np.random.SeedSequence().entropy % 2**32
    print(f"input f32{shape}, seed {seed}")
    np.random.default_rng(seed).standard_normal(shape).astype("<f4").tofile(args.workdir / "input.bin")
    run(emulator + [exe, args.workdir / "library.bin", args.workdir / "input.bin"])
    run([args.aotc, args.model, "--emit=run", "--input", args.workdir / "input.bin", "-o", args.workdir / "ref.bin"])
    got = np.fromfile(args.workdir / "library.bin", dtype="<f4")
    ref = np.fromfile(args.workdir / "ref.bin", dtype="<f4")
    if got.size != ref.size:
        raise SystemExit(f"FAILED: {got.size} outputs, expected {ref.size}")
    ratio = float(np.max(np.abs(got - ref)) / max(1.0, float(np.max(np.abs(ref)))))
    print(f"{args.target} under qemu vs reference: max|diff| / max(1, max|ref|) = {ratio:.3g} (tolerance {TOLERANCE:g})")
    if ratio > TOLERANCE:
        raise SystemExit("FAILED: outside the tolerance")
    print("PASSED")


if __name__ == "__main__":
    main()
