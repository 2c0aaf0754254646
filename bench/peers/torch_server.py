#!/usr/bin/python3
"""PyTorch as a benchmark server, driven over stdin/stdout (same protocol as aotc_server.c):

  torch_server.py MODEL DIR --mode eager|script|eager-int8

  threads N     torch.set_num_threads(N)                 -> {"ok": true}
  run K         one untimed run, then K timed forwards   -> {"ms": [...], "cpu_ms": total}
  output PATH   writes the output for DIR/input.bin, raw float32 -> {"ok": true}
  blas          which BLAS library this process loaded  -> {"blas": [paths]}
  quit

eager:  the nn.Module in eval mode under torch.inference_mode().
script: torch.jit.trace -> torch.jit.freeze -> torch.jit.optimize_for_inference, PyTorch's
        fastest CPU mode (it folds BatchNorm and may pre-pack weights for oneDNN).
eager-int8: the model quantized by PyTorch FX (onednn engine), as models.quantized() made
        it for DIR/MODEL.int8.onnx (same seed, from DIR/MODEL.int8.json): the converted module.
The weights are DIR/weights.pt, the ones aotc and ONNX Runtime were given.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

import models


def loaded_blas():
    """Shared libraries of this process that provide BLAS: the run must use OpenBLAS (OpenMP)."""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "blas" in line.lower()}
    return sorted(p for p in paths if p.startswith("/"))


def build(name, folder, mode, x):
    model = models.load(name, folder / "weights.pt")
    if mode == "eager":
        return model
    if mode == "eager-int8":
        int8 = json.loads((folder / f"{name}.int8.json").read_text())
        return models.quantized(model, int8["seed"])
    with torch.no_grad():
        traced = torch.jit.trace(model, x)
        frozen = torch.jit.freeze(traced)
        return torch.jit.optimize_for_inference(frozen)


def timed_runs(model, x, k):
    model(x)  # warms caches after another system ran
    cpu0 = time.process_time()
    ms = []
    for _ in range(k):
        t0 = time.perf_counter()
        model(x)
        ms.append((time.perf_counter() - t0) * 1e3)
    return {"ms": ms, "cpu_ms": (time.process_time() - cpu0) * 1e3}


def first_output(result):
    return result[0] if isinstance(result, (tuple, list)) else result


def serve(model, x):
    for line in sys.stdin:
        cmd, _, arg = line.strip().partition(" ")
        if cmd == "threads":
            torch.set_num_threads(int(arg))
            answer = {"ok": True}
        elif cmd == "run":
            answer = timed_runs(model, x, int(arg))
        elif cmd == "output":
            first_output(model(x)).numpy().astype("<f4").tofile(arg)
            answer = {"ok": True}
        elif cmd == "blas":
            answer = {"blas": loaded_blas()}
        elif cmd == "quit":
            return
        else:
            raise SystemExit(f"torch_server: unknown command {line!r}")
        print(json.dumps(answer), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", choices=models.MODELS)
    p.add_argument("dir", type=Path)
    p.add_argument("--mode", choices=["eager", "script", "eager-int8"], required=True)
    args = p.parse_args()
    x = torch.from_numpy(np.fromfile(args.dir / "input.bin", dtype="<f4").reshape(models.INPUT_SHAPE))
    model = build(args.model, args.dir, args.mode, x)
    with torch.inference_mode():
        serve(model, x)


if __name__ == "__main__":
    main()
