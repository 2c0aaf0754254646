#!/usr/bin/python3
"""Where a model library's bytes go, per target: code (kernels, runner, Halide runtime),
weights and arena from the report aotc writes (`footprint`), and the peak stack of one
run, measured by tools/measure_stack.c on a painted stack (under qemu for ARM targets:
tools/cross_targets.py). Prints a Markdown table and writes it as JSON.

  footprint.py --aotc AOTC --exporter EXPORTER --workdir DIR [--json OUT.json]
               [--models resnet18,mobilenet_v2,fashion_mnist] [--targets host,arm-64-linux,arm-32-linux]
               [--max-stack-kib K]

With --max-stack-kib (tests/library runs it so), the exit status is 1 when a run's peak
stack exceeds K KiB, or a measurement is implausible (no code, no stack).

A model is a torchvision name (exported at 224x224 with tools/aotc-export-torch) or
fashion_mnist (the sample's model, samples/models/fashion_mnist.fb).
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import cross_targets  # noqa: E402

TARGET_NAMES = {"host": "x86-64", "arm-64-linux": "AArch64", "arm-32-linux": "ARMv7"}


def run(cmd):
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return result.stdout


def model_file(args, model):
    if model == "fashion_mnist":
        return ROOT / "samples" / "models" / "fashion_mnist.fb"
    path = args.workdir / f"{model}.fb"
    if not path.exists():
        run([args.exporter, "--model", model, "-o", path, "--input-shape", "1,3,224,224"])
    return path


def measure(args, model, target):
    out = args.workdir / f"{model}-{target}"
    run([args.aotc, model_file(args, model), "--emit=lib", "--target", target, "-o", out, "--name", model])
    footprint = json.loads((out / f"{model}.report.json").read_text())["footprint"]
    cc, emulator, _ = cross_targets.toolchain(target)
    exe = out / "measure_stack"
    run([cc, "-std=c11", "-O2", f"-DAOTC_MODEL={model}", "-I", out, ROOT / "tools" / "measure_stack.c",
         out / f"lib{model}.a", "-lpthread", "-ldl", "-lm", "-o", exe])
    footprint["stack_bytes"] = int(run(emulator + [exe]).split()[1])
    return footprint


def kib(n):
    return f"{n / 1024:,.1f}"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--aotc", type=Path, required=True)
    p.add_argument("--exporter", type=Path, required=True)
    p.add_argument("--workdir", type=Path, required=True)
    p.add_argument("--json", type=Path)
    p.add_argument("--models", default="resnet18,mobilenet_v2,fashion_mnist")
    p.add_argument("--targets", default="host,arm-64-linux,arm-32-linux")
    p.add_argument("--max-stack-kib", type=float)
    args = p.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    print("| model | target | code KiB (kernels + runner + Halide runtime) | weights KiB | arena KiB | peak stack KiB |")
    print("| --- | --- | --- | --- | --- | --- |")
    for model in args.models.split(","):
        for target in args.targets.split(","):
            f = measure(args, model, target)
            c = f["code_bytes"]
            rows.append({"model": model, "target": target, **f})
            print(f"| {model} | {TARGET_NAMES.get(target, target)} | {kib(c['total'])} ({kib(c['kernels'])} + "
                  f"{kib(c['runner'])} + {kib(c['halide_runtime'])}) | {kib(f['weights_bytes'])} | "
                  f"{kib(f['arena_bytes'])} | {kib(f['stack_bytes'])} |", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    if args.max_stack_kib is not None:
        bad = [r for r in rows if not (1024 <= r["stack_bytes"] <= args.max_stack_kib * 1024)
               or min(r["code_bytes"].values()) <= 0]
        for r in bad:
            print(f"FAILED: {r['model']} on {r['target']}: stack {r['stack_bytes']} bytes, code {r['code_bytes']}")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
