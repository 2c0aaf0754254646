#!/usr/bin/python3
"""Cross-compilation to ARM: aotc compiles a model (.air, .fb or .tflite) for an ARM
Halide target (kernels by Halide, runner by Debian's cross g++), a C program is linked
with the cross gcc and run under qemu (tools/cross_targets.py); every archive member must
be an object for that architecture. On the same random inputs (standard normal, or
uniform in --input-range), its outputs must match both the reference evaluator and the
library compiled for this x86-64 host: max|diff| <= 1e-4 * max(1, max|ref|).

  cross_test.py --target arm-64-linux|arm-32-linux --aotc AOTC --model MODEL
                --harness run_library.c --workdir DIR [--input-range LO,HI]
"""

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "tools"))
import cross_targets  # noqa: E402

TOLERANCE = 1e-4
SKIPPED = 75
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


def link(cc, name, lib_dir, harness, exe):
    run([cc, "-std=c11", "-O2", f"-DAOTC_MODEL={name}", "-I", lib_dir, harness,
         lib_dir / f"lib{name}.a", "-lpthread", "-ldl", "-lm", "-o", exe])
    return exe


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--target", required=True, choices=sorted(OBJECT_KINDS))
    for flag in ("--aotc", "--model", "--harness", "--workdir"):
        p.add_argument(flag, type=Path, required=True)
    p.add_argument("--input-range", type=lambda s: [float(v) for v in s.split(",")])
    args = p.parse_args()
    if not args.model.exists():
        print(f"SKIPPED: {args.model} is missing (fetched by tools/fetch-mediapipe-models)")
        return SKIPPED
    args.workdir.mkdir(parents=True, exist_ok=True)
    cc, emulator, executable_kind = cross_targets.toolchain(args.target)
    name = args.model.stem
    out = args.workdir / "lib"
    run([args.aotc, args.model, "--emit=lib", "--target", args.target, "-o", out, "--name", name, "--jobs", "1"])

    members = args.workdir / "members"
    members.mkdir(exist_ok=True)
    run(["ar", "x", out / f"lib{name}.a"], cwd=members)
    for member in sorted(members.iterdir()):
        kind = run(["file", member]).stdout.strip()
        print(kind)
        if OBJECT_KINDS[args.target] not in kind:
            raise SystemExit(f"FAILED: {member.name} is not an {args.target} object")

    exe = link(cc, name, out, args.harness, args.workdir / f"run_{name}")
    check = run(["file", exe]).stdout
    print(check.strip())
    if executable_kind not in check:
        raise SystemExit(f"FAILED: the program is not an {args.target} executable")
    host_out = args.workdir / "host"
    run([args.aotc, args.model, "--emit=lib", "-o", host_out, "--name", name, "--jobs", "1"])
    host_exe = link("cc", name, host_out, args.harness, args.workdir / f"run_{name}_host")

    graph = run([args.aotc, args.model, "--emit=graph", "--passes="]).stdout
    shapes = [[int(d) for d in line.split("f32[", 1)[1].split("]", 1)[0].split(",")]
              for line in graph.splitlines() if line.strip().startswith("input %")]
    seed = np.random.SeedSequence().entropy % 2**32
    rng = np.random.default_rng(seed)
    print(f"inputs {shapes}, seed {seed}")
    inputs = []
    for i, shape in enumerate(shapes):
        values = rng.uniform(*args.input_range, shape) if args.input_range else rng.standard_normal(shape)
        inputs.append(args.workdir / f"input{i}.bin")
        values.astype("<f4").tofile(inputs[-1])
    run(emulator + [exe, args.workdir / "library.bin"] + inputs)
    run([host_exe, args.workdir / "host.bin"] + inputs)
    run([args.aotc, args.model, "--emit=run", "-o", args.workdir / "ref.bin"]
        + [flag for path in inputs for flag in ("--input", path)])
    got = np.fromfile(args.workdir / "library.bin", dtype="<f4")
    for what, path in (("reference evaluator", "ref.bin"), ("x86-64 library", "host.bin")):
        ref = np.fromfile(args.workdir / path, dtype="<f4")
        if got.size != ref.size:
            raise SystemExit(f"FAILED: {got.size} outputs, the {what} {ref.size}")
        ratio = float(np.max(np.abs(got - ref)) / max(1.0, float(np.max(np.abs(ref)))))
        print(f"{args.target} under qemu vs {what}: max|diff| / max(1, max|ref|) = {ratio:.3g} "
              f"(tolerance {TOLERANCE:g})")
        if ratio > TOLERANCE:
            raise SystemExit("FAILED: outside the tolerance")
    print("PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
