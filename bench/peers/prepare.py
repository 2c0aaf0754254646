#!/usr/bin/python3
"""Writes one model's benchmark inputs into a folder:

  prepare.py MODEL DIR [--seed N] [--opset N]

  DIR/weights.pt   the state dict (the exporter's re-initialised weights for the seed)
  DIR/input.bin    the input every system is checked on (raw float32, 1x3x224x224)
  DIR/MODEL.fb     aotc's model, exported by tools/aotc-export-torch from weights.pt
  DIR/MODEL.onnx   ONNX Runtime's model, exported by torch.onnx from the same module
"""

import argparse
import subprocess
import sys
from pathlib import Path

import torch

import models


def export_onnx(model, x, path, opset):
    """torch.onnx.export with constant folding; one input 'input', one output 'output'."""
    with torch.no_grad():
        torch.onnx.export(model, x, str(path), opset_version=opset, do_constant_folding=True,
                          input_names=["input"], output_names=["output"])
    import onnx  # checks that the file is a valid model, not just that torch wrote something
    onnx.checker.check_model(onnx.load(str(path)))


def export_fb(name, weights, path):
    """Through the exporter's own command line, with the weights file as --state-dict."""
    module = f"{Path(models.__file__).resolve()}:{name}"
    subprocess.run([sys.executable, str(models.EXPORTER), "--module", module,
                    "--state-dict", str(weights), "-o", str(path),
                    "--input-shape", ",".join(map(str, models.INPUT_SHAPE))], check=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", choices=models.MODELS)
    p.add_argument("dir", type=Path)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--opset", type=int, default=17)
    args = p.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)

    model, x = models.reinitialised(args.model, args.seed)
    weights = args.dir / "weights.pt"
    torch.save(model.state_dict(), weights)
    x.numpy().astype("<f4").tofile(args.dir / "input.bin")
    export_onnx(model, x, args.dir / f"{args.model}.onnx", args.opset)
    export_fb(args.model, weights, args.dir / f"{args.model}.fb")


if __name__ == "__main__":
    main()
