#!/usr/bin/python3
"""GPU libraries (aotc --target=host-cuda...) against PyTorch or the reference evaluator.

  gpu_models.py build --aotc AOTC --exporter EXPORTER --workdir DIR (--model NAME | --module F.py:C | --graph F)...
                [--name NAME] [--size S] [--input-shape N,C,H,W] [--capability 80] [--weight-pool N]
                [--gpu-backends auto[,halide,cudnn]] [--tuning-cache F] [--external-weights-variant]
      exports each model with random weights and PyTorch's output on a random input
      (aotc-export-torch --reference), or takes a model file (--graph: .tflite, .fb, .air)
      and the reference evaluator's output on a random input, compiles its GPU library, links
      tests/cuda/run_gpu_library.cpp against it, and leaves DIR/<model>/{run, input.bin,
      output.bin}, after checking that the report names a backend for every layer. With
      --weight-pool the weights repeat (aotc-export-torch says why), so that an xz archive
      carries the programs to a lent GPU machine (bench/gpu/run-gpu-bench prepare). With
      --external-weights-variant, one more library, DIR/<model>-external, has the first
      backend choice and aotc --weights=external: its program reads the library's weights
      file (copied to weights.bin beside it) and, with --expect-unavailable, checks that
      create refuses broken weights.
  gpu_models.py check --workdir DIR [--require-gpu]
      runs each DIR/<model>/run and compares each output with the reference (PyTorch's, or
      the reference evaluator's for --graph): the largest difference must be at most
      1e-3 * max|reference| of that output (cuDNN runs without TF32). Exits 77
      (ctest: skipped) when there is no usable GPU, unless --require-gpu. On a machine whose
      cuDNN is PyTorch's wheel (nvidia-cudnn-cu13), that library's folder is put on
      LD_LIBRARY_PATH first, as an app would.
  gpu_models.py test ...   build, then check (the ctest of one model).
  gpu_models.py no-device --workdir DIR
      runs each DIR/<model>/run --expect-unavailable with CUDA_VISIBLE_DEVICES= (create must
      return AOTC_ERROR_DEVICE_UNAVAILABLE with a message, on any machine) and, where a GPU
      is visible, again with AOTC_CUDNN_LIBRARY naming a cuDNN that is not there.
"""
import os
import shutil
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TOLERANCE = 1e-3  # of max|reference|
BACKENDS = ("halide-cpu", "halide-cuda", "cudnn")
SKIP = 77


def run(command, **kwargs):
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit(f"{' '.join(map(str, command))} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return result


def build(args):
    cases = [(m, ["--model", m]) for m in args.model] + \
            [(m.rpartition(":")[2].lower(), ["--module", m]) for m in args.module] + \
            [(Path(m).stem.replace("-", "_"), ["--graph", m]) for m in args.graph]
    if args.name:
        if len(cases) != 1:
            sys.exit("--name names one model")
        cases = [(args.name, cases[0][1])]
    for name, source in cases:
        out = args.workdir / name
        out.mkdir(parents=True, exist_ok=True)
        if source[0] == "--graph":
            model = Path(source[1])
            if not model.exists():  # tests/tflite's fixture could not fetch it (npm unreachable)
                print(f"SKIPPED: {model} is not there")
                sys.exit(SKIP)
            evaluator_reference(args.aotc, model, out)
        else:
            model = out / f"{name}.fb"
            shape = args.input_shape or f"1,3,{args.size},{args.size}"
            export = [args.exporter, *source, "-o", model, "--input-shape", shape, "--reference", out]
            if args.weight_pool:
                export += ["--weight-pool", args.weight_pool]
            run(export)
        # The first backend choice builds in out; each other one in out-<choice>, same input and reference.
        choices = [(b, False) for b in args.gpu_backends.split(",")]
        if args.external_weights_variant:
            choices.append((choices[0][0], True))
        for i, (backends, external) in enumerate(choices):
            variant = out if i == 0 else args.workdir / f"{name}-{'external' if external else backends}"
            if i > 0:
                variant.mkdir(parents=True, exist_ok=True)
                for f in ["input.bin", "output.bin"]:
                    if (out / f).exists():
                        shutil.copyfile(out / f, variant / f)
            build_library(args, model, name, variant, backends, external)
        if source[0] != "--graph":
            model.unlink()


def build_library(args, model, name, out, backends, external_weights):
    """out/lib (the GPU library of `model` with aotc --gpu-backends=`backends`), out/run;
    with `external_weights`, out/weights.bin too."""
    lib = out / "lib"
    run([args.aotc, model, "--emit=lib", "--name", name, "-o", lib,
         "--target", f"host-cuda-cuda_capability_{args.capability}", "--gpu-backends", backends,
         *(["--tuning-cache", args.tuning_cache] if args.tuning_cache else []),
         *(["--weights=external"] if external_weights else [])])
    if external_weights:
        shutil.copyfile(lib / f"{name}.weights", out / "weights.bin")
    report = check_report(lib / f"{name}.report.json")
    shutil.copyfile(lib / f"{name}.report.json", out / "report.json")  # travels with the program (bench/gpu)
    (out / "outputs.json").write_text(json.dumps(
        [[o["name"], int(np.prod(o["shape"]))] for o in report["outputs"]]))
    run(["c++", "-std=c++17", "-O2", f"-DAOTC_MODEL={name}", "-I", lib, "-I", HERE.parent.parent / "tools",
         "-I", "/usr/local/cuda/include", *(["-DAOTC_EXTERNAL_WEIGHTS"] if external_weights else []),
         HERE / "run_gpu_library.cpp", lib / f"lib{name}.a",
         "-lpthread", "-ldl", "-lrt", "-o", out / "run"])
    print(f"{out.name}: built ({(out / 'run').stat().st_size / 2**20:.1f} MiB, --gpu-backends={backends}"
          f"{', --weights=external' if external_weights else ''})", flush=True)


def evaluator_reference(aotc, model, out):
    """out/input.bin (standard normal, fresh seed) and out/output.bin, the reference
    evaluator's outputs on it: the oracle for a model file that is not a PyTorch export."""
    graph = run([aotc, model, "--emit=graph"]).stdout
    shapes = [[int(d) for d in line.split("f32[", 1)[1].split("]", 1)[0].split(",")]
              for line in graph.splitlines() if line.strip().startswith("input %")]
    if len(shapes) != 1:
        sys.exit(f"{model}: run_gpu_library takes models of one input, not {len(shapes)}")
    seed = np.random.SeedSequence().entropy % 2**32
    print(f"{model.name}: input {shapes[0]}, seed {seed}", flush=True)
    np.random.default_rng(seed).standard_normal(shapes[0]).astype("<f4").tofile(out / "input.bin")
    run([aotc, model, "--emit=run", "--input", out / "input.bin", "-o", out / "output.bin"])


def check_report(path):
    """Every layer of the report names its backend and what runs it."""
    report = json.loads(path.read_text())
    layers = report["layers"]
    if not layers or any(l.get("backend") not in BACKENDS or not l.get("call") for l in layers):
        sys.exit(f"{path}: every layer needs a backend (one of {BACKENDS}) and a call: {layers[:3]}")
    if report["totals"]["device_arena_bytes"] <= report["totals"]["weights_bytes"]:
        sys.exit(f"{path}: the device arena must hold the weights and the activations: {report['totals']}")
    return report


def cudnn_environment():
    """os.environ, with the library folders of PyTorch's NVIDIA wheels (cuDNN and the cuBLAS
    it loads, if installed) first on LD_LIBRARY_PATH."""
    env = dict(os.environ)
    try:
        import nvidia
        folders = sorted(str(f) for root in nvidia.__path__ for f in Path(root).glob("*/lib") if f.is_dir())
        env["LD_LIBRARY_PATH"] = ":".join(folders + [env.get("LD_LIBRARY_PATH", "")])
    except ImportError:
        pass
    return env


def programs(workdir):
    """The programs build left in workdir; SKIPPED (exit 77) where it left none (its models
    were not there)."""
    found = sorted(p for p in workdir.iterdir() if (p / "run").exists()) if workdir.is_dir() else []
    if not found:
        print(f"SKIPPED: no programs in {workdir}")
        sys.exit(SKIP)
    return found


def no_device(args):
    for directory in programs(args.workdir):
        hidden_gpu = dict(os.environ, CUDA_VISIBLE_DEVICES="")
        print(run([directory / "run", "--expect-unavailable"], env=hidden_gpu).stdout.strip())
        probe = subprocess.run([directory / "run", "--expect-unavailable"], capture_output=True, text=True)
        if probe.returncode != 0:  # a GPU is visible: hide cuDNN instead
            hidden_cudnn = dict(os.environ, AOTC_CUDNN_LIBRARY=str(directory / "no-such-libcudnn.so.9"))
            result = run([directory / "run", "--expect-unavailable"], env=hidden_cudnn)
            if "cudnn" not in result.stdout.lower():
                sys.exit(f"without cuDNN, create should say so: {result.stdout}")
            print(result.stdout.strip())


def check(args):
    failures, skipped = [], None
    print(f"{'model':32s} {'max|diff|':>10s} {'max|ref|':>10s} {'ratio':>9s}  result")
    env = cudnn_environment()
    for directory in programs(args.workdir):
        output = directory / "gpu_output.bin"
        start = time.time()
        result = subprocess.run([directory / "run", output, directory / "input.bin"], capture_output=True, text=True,
                                env=env)
        seconds = time.time() - start
        if result.returncode == SKIP:
            skipped = result.stdout.strip()
            print(f"{directory.name:32s} {skipped}")
            continue
        if result.returncode != 0:
            failures.append(directory.name)
            print(f"{directory.name:32s} failed ({result.returncode}): {result.stdout}{result.stderr}")
            continue
        got = np.fromfile(output, dtype="<f4")
        want = np.fromfile(directory / "output.bin", dtype="<f4")
        # Each output against its own scale (outputs.json: names and sizes in order).
        sizes = json.loads((directory / "outputs.json").read_text()) if (directory / "outputs.json").exists() \
            else [["all", want.size]]
        worst = (0.0, 1.0, 0.0)  # diff, scale, diff / scale
        ok = got.shape == want.shape and bool(np.all(np.isfinite(got)))
        start = 0
        for _, size in sizes:
            g, w = got[start:start + size], want[start:start + size]
            start += size
            scale = max(float(np.max(np.abs(w))), 1e-30)
            diff = float(np.max(np.abs(g - w))) if ok else float("inf")
            ok = ok and diff <= TOLERANCE * scale
            if diff / scale >= worst[2]:
                worst = (diff, scale, diff / scale)
        diff, scale, ratio = worst
        # A refused capture is no error (the layers run one by one), but costs a host call each.
        graph = "CUDA graph" if "cuda_graph 1" in result.stdout else "NO CUDA GRAPH (capture refused)"
        print(f"{directory.name:32s} {diff:10.3g} {scale:10.3g} {ratio:9.2e}  "
              f"{'ok' if ok else 'MISMATCH'} ({seconds:.1f} s with create, {graph})")
        if not ok:
            failures.append(directory.name)
    if failures:
        sys.exit(f"GPU output differs from the reference: {', '.join(failures)}")
    if skipped is not None:
        if args.require_gpu:
            sys.exit(f"no GPU but --require-gpu: {skipped}")
        sys.exit(SKIP)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["build", "check", "test", "no-device"])
    p.add_argument("--workdir", type=Path, required=True)
    p.add_argument("--aotc")
    p.add_argument("--exporter")
    p.add_argument("--model", action="append", default=[])
    p.add_argument("--module", action="append", default=[])
    p.add_argument("--graph", action="append", default=[],
                   help="a model file aotc reads (.fb, .tflite, .air), checked against the reference evaluator")
    p.add_argument("--name", help="the library's name (default: the model's)")
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--input-shape")
    p.add_argument("--capability", type=int, default=80)
    p.add_argument("--gpu-backends", default="auto",
                   help="aotc --gpu-backends (auto, halide, cudnn), or several, comma-separated: one library each, "
                        "the first in DIR/<model>, the others in DIR/<model>-<choice>")
    p.add_argument("--tuning-cache", help="aotc --tuning-cache: measured times to choose the backends by")
    p.add_argument("--external-weights-variant", action="store_true",
                   help="one more library, DIR/<model>-external: the first backend choice, --weights=external")
    p.add_argument("--weight-pool", type=int, default=0)
    p.add_argument("--require-gpu", action="store_true")
    args = p.parse_args()
    if args.mode in ("build", "test"):
        if not args.aotc or (not args.exporter and (args.model or args.module)):
            p.error(f"{args.mode} needs --aotc, and --exporter for --model and --module")
        build(args)
    if args.mode in ("check", "test"):
        check(args)
    if args.mode == "no-device":
        no_device(args)


if __name__ == "__main__":
    main()
