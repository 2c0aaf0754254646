#!/usr/bin/python3
"""Writes one model's benchmark inputs into a folder:

  prepare.py MODEL DIR [--seed N] [--opset N]

  DIR/weights.pt   the state dict (the exporter's re-initialised weights for the seed)
  DIR/input.bin    the input every system is checked on (raw float32, 1x3x224x224)
  DIR/MODEL.fb     aotc's model, exported by tools/aotc-export-torch from weights.pt
  DIR/MODEL.onnx   ONNX Runtime's model, exported by torch.onnx from the same module
  DIR/MODEL.int8.onnx  the same model quantized by PyTorch FX (models.quantized), exported as
                   a QDQ graph (opset 13: torch 1.13's quantized export); float input and output
  DIR/MODEL.int8.json  how the int8 model was made, its output's quantization step, and the
                   reason when torch could not export it (then there is no MODEL.int8.onnx)
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import torch

import models

INT8_OPSET = 13  # torch 1.13 exports quantized models at opset 13 only


def export_onnx(model, x, path, opset):
    """torch.onnx.export with constant folding; one input 'input', one output 'output'."""
    with torch.no_grad():
        torch.onnx.export(model, x, str(path), opset_version=opset, do_constant_folding=True,
                          input_names=["input"], output_names=["output"])
    import onnx  # checks that the file is a valid model, not just that torch wrote something
    onnx.checker.check_model(onnx.load(str(path)))


def output_step(path):
    """The scale of the DequantizeLinear that writes the graph's output (a Constant node's or an
    initializer), or None if the output is not written by one."""
    import onnx
    from onnx import numpy_helper
    graph = onnx.load(str(path)).graph
    constants = {o: numpy_helper.to_array(n.attribute[0].t) for n in graph.node if n.op_type == "Constant"
                 for o in n.output}
    constants.update({t.name: numpy_helper.to_array(t) for t in graph.initializer})
    last = next((n for n in graph.node if graph.output[0].name in n.output), None)
    if last is None or last.op_type != "DequantizeLinear" or last.input[1] not in constants:
        return None
    return float(constants[last.input[1]])


def export_int8(name, model, x, folder, seed):
    """MODEL.int8.onnx and MODEL.int8.json. torch 1.13 cannot export some quantized models
    (a quantized concat: squeezenet1_1, googlenet, densenet121): the reason goes into the
    JSON and the benchmark runs that model without its int8 systems."""
    path = folder / f"{name}.int8.onnx"
    info = {"engine": models.QUANTIZED_ENGINE, "calibration_runs": models.CALIBRATION_RUNS,
            "seed": seed, "opset": INT8_OPSET}
    path.unlink(missing_ok=True)
    try:
        export_onnx(models.quantized(model, seed), x, path, INT8_OPSET)
        info["output_step"] = output_step(path)
    except Exception as e:  # whatever torch raised: recorded, not fatal
        path.unlink(missing_ok=True)
        first_line = (str(e).strip().splitlines() or [""])[0]
        info["error"] = f"{type(e).__name__}: {first_line}"
        print(f"{name}: no int8 export: {info['error']}", flush=True)
    (folder / f"{name}.int8.json").write_text(json.dumps(info, indent=1))


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
    export_int8(args.model, model, x, args.dir, args.seed)


if __name__ == "__main__":
    main()
