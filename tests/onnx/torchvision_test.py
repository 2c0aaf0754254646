#!/usr/bin/python3
"""A torchvision model exported by torch.onnx.export and read by aotc's ONNX frontend.

For each opset given: the model (random weights as tools/aotc-export-torch makes them, on
a fresh standard-normal input) is exported to ONNX; aotc evaluates the graph it reads
(--emit=run, the reference evaluator on the optimised graph) on the same input, which
must match PyTorch's output within max|a - b| <= 1e-4 * max|b|. With --library, the first
opset's file is also compiled into a static library, linked into tools/run_library.c and
run: its output against PyTorch's too.
"""
import argparse
import importlib.machinery
import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch

TOLERANCE = 1e-4
HERE = Path(__file__).resolve().parent


def load_exporter(path):
    loader = importlib.machinery.SourceFileLoader("aotc_export_torch", str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def run(cmd):
    print("$ " + " ".join(str(c) for c in cmd), flush=True)
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if result.returncode != 0:
        sys.stdout.write(result.stdout[-4000:] + result.stderr[-4000:])
        sys.exit(f"FAILED: exit code {result.returncode}")
    return result


def compare(what, got_path, ref):
    got = np.fromfile(got_path, dtype="<f4")
    if got.size != ref.size:
        sys.exit(f"FAILED: {what}: {got.size} values, expected {ref.size}")
    ratio = float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))
    print(f"{what}: max|diff| / max|ref| = {ratio:.3g} (tolerance {TOLERANCE:g})")
    if not ratio <= TOLERANCE:
        sys.exit(f"FAILED: {what}: ratio {ratio:.3g} exceeds {TOLERANCE:g}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--aotc", required=True, type=Path)
    parser.add_argument("--exporter", required=True, type=Path, help="tools/aotc-export-torch")
    parser.add_argument("--model", required=True)
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--opsets", default="11,13,17")
    parser.add_argument("--library", action="store_true")
    parser.add_argument("--harness", type=Path, default=HERE.parent.parent / "tools" / "run_library.c")
    parser.add_argument("--workdir", required=True, type=Path)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)

    exporter = load_exporter(args.exporter)
    model = exporter.build_torchvision_model(args.model).eval()
    shape = [1, 3, args.size, args.size]
    (x,) = exporter.random_weights_and_inputs(model, [shape], seed=1)
    with torch.no_grad():
        ref = model(x).numpy().astype("<f4").ravel()
    x.numpy().astype("<f4").tofile(args.workdir / "input.bin")

    opsets = [int(o) for o in args.opsets.split(",")]
    for opset in opsets:
        onnx_file = args.workdir / f"{args.model}_opset{opset}.onnx"
        with torch.no_grad():
            torch.onnx.export(model, x, str(onnx_file), opset_version=opset, input_names=["x"], output_names=["y"])
        out = args.workdir / f"opset{opset}.bin"
        run([args.aotc, onnx_file, "--emit=run", "--input", args.workdir / "input.bin", "-o", out])
        compare(f"opset {opset}: aotc's graph vs PyTorch", out, ref)

    if args.library:
        onnx_file = args.workdir / f"{args.model}_opset{opsets[0]}.onnx"
        lib = args.workdir / "lib"
        run([args.aotc, onnx_file, "--emit=lib", "--name", args.model, "-o", lib])
        runner = args.workdir / "run"
        run(["cc", "-std=c11", "-O2", f"-DAOTC_MODEL={args.model}", "-I", lib, "-I", args.harness.parent,
             args.harness, lib / f"lib{args.model}.a", "-lm", "-lpthread", "-o", runner])
        run([runner, args.workdir / "library.bin", args.workdir / "input.bin"])
        compare(f"opset {opsets[0]}: the library vs PyTorch", args.workdir / "library.bin", ref)
    print("PASSED")


if __name__ == "__main__":
    main()
