#!/usr/bin/env python3
"""The Fashion-MNIST sample model quantized to int8: its accuracy as an aotc library.

The float model's weights are read from samples/models/fashion_mnist.fb (flatc's Python API
of the schema, tools/export-fashion-mnist-int8's reader) into
samples/models/fashion_net.py:FashionNet; PyTorch FX quantizes it
(tools/aotc-export-torch's quantize_fx: onednn, per-channel weights) calibrated on the first
--calibrate training images, in the batches the exporter's --quantize-calibration makes, so
that the exporter, given the same images, makes the same quantized model. It reaches aotc
three ways (batch --batch), each compiled to a library:
  - onnx:  torch.onnx.export writes it as QDQ ONNX;
  - fb:    tools/aotc-export-torch --quantize-calibration writes aotc's own int8 .fb;
  - uint8: the same with --uint8-input (the camera sample's int8 build: its checked-in
           samples/models/fashion_mnist_int8.fb is this model at batch 1, written by
           tools/export-fashion-mnist-int8): the library takes the test images' bytes as they
           are, the normalisation folded into the input's quantization; compared with
           PyTorch's model quantized with that input quantization.
All 10,000 test images run through each library and PyTorch's quantized models. Checks:
  - the float model reproduces the recorded float accuracy (fashion_mnist.json), so the
    weights were read right;
  - each int8 library's accuracy is within 0.5 points of the float accuracy (the INT8 issue's
    bar), and its top-1 label equals PyTorch's quantized model's on >= 99% of the images.
Prints the accuracies (README: samples/README.md).
"""
import argparse
import gzip
import importlib.machinery
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "samples" / "models"
EXPORTER = ROOT / "tools" / "aotc-export-torch"
# tools/aotc-export-torch as a module (the file has no .py suffix), for quantize_fx and its
# calibration batches.
exporter = importlib.machinery.SourceFileLoader("aotc_export_torch", str(EXPORTER)).load_module()
# tools/export-fashion-mnist-int8, which makes the camera sample's int8 model from the same
# weights: its reader of the float model's weights.
int8_export = importlib.machinery.SourceFileLoader(
    "export_fashion_mnist_int8", str(ROOT / "tools" / "export-fashion-mnist-int8")).load_module()


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def compile_library(aotc, model, name, workdir):
    """The runner (tools/run_library.c) of `model` compiled by aotc as library `name`."""
    lib = workdir / name
    compiled = subprocess.run([aotc, model, "--emit=lib", "--name", name, "-o", lib], capture_output=True, text=True)
    if compiled.returncode != 0:
        sys.exit(f"aotc {model}: exit {compiled.returncode}: {compiled.stderr[-2000:]}")
    runner = workdir / f"run_{name}"
    subprocess.run(["cc", "-std=c11", "-O1", f"-DAOTC_MODEL={name}", "-I", lib, ROOT / "tools" / "run_library.c",
                    lib / f"lib{name}.a", "-lm", "-lpthread", "-o", runner], check=True)
    return runner


def run_library(runner, batch, workdir):
    """Top-1 labels of the library on `batch` (float32 values; an integer input's integers)."""
    batch.astype(np.float32).tofile(workdir / "batch.bin")
    subprocess.run([runner, workdir / "logits.bin", workdir / "batch.bin"], check=True)
    return np.fromfile(workdir / "logits.bin", dtype=np.float32).reshape(-1, 10).argmax(1)


def export_fb(workdir, state_dict, calibration, batch, name, *options):
    """tools/aotc-export-torch's int8 .fb of FashionNet with `state_dict`."""
    fb = workdir / f"{name}.fb"
    subprocess.run([EXPORTER, "--module", f"{MODELS / 'fashion_net.py'}:FashionNet", "--state-dict", state_dict,
                    "--input-shape", f"{batch},1,28,28", "--quantize-calibration", calibration, "-o", fb, *options],
                   check=True)
    return fb


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aotc", required=True, type=Path)
    parser.add_argument("--data", required=True, type=Path, help="Debian's /usr/share/datasets/fashion-mnist")
    parser.add_argument("--workdir", required=True, type=Path)
    parser.add_argument("--calibrate", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=1000)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    info = json.loads((MODELS / "fashion_mnist.json").read_text())
    mean, std = info["input"]["mean"], info["input"]["std"]

    def normalised(images):
        return ((images.astype(np.float32) / 255 - mean) / std)[:, None, :, :]

    test_pixels = idx(args.data / "t10k-images-idx3-ubyte.gz")[:, None, :, :]
    test_x = normalised(test_pixels[:, 0])
    test_y = idx(args.data / "t10k-labels-idx1-ubyte.gz").astype(np.int64)
    train_pixels = idx(args.data / "train-images-idx3-ubyte.gz")[:args.calibrate, None, :, :]

    torch.manual_seed(0)
    net = int8_export.float_model(MODELS / "fashion_mnist.fb")
    with torch.no_grad():
        float_top1 = np.concatenate([net(torch.from_numpy(test_x[i:i + args.batch])).argmax(1).numpy()
                                     for i in range(0, len(test_x), args.batch)])
    float_accuracy = 100 * float(np.mean(float_top1 == test_y))
    if abs(float_accuracy - info["test_accuracy_percent"]) > 0.01:
        sys.exit(f"the float model read from the .fb scores {float_accuracy:.2f}%, "
                 f"recorded {info['test_accuracy_percent']}%")

    # The calibration images as the exporter reads them: float32 model inputs for the float
    # input, the pixels themselves for --uint8-input (which normalises them alike).
    shape = [args.batch, 1, 28, 28]
    calibration = {"float": args.workdir / "calibration.npy", "uint8": args.workdir / "calibration_pixels.npy"}
    np.save(calibration["float"], normalised(train_pixels[:, 0]))
    np.save(calibration["uint8"], train_pixels)
    state_dict = args.workdir / "fashion_net.pt"
    torch.save(net.state_dict(), state_dict)
    quantized = exporter.quantize_fx(net, exporter.calibration_batches(calibration["float"], shape, None))
    onnx_path = args.workdir / "fashion_mnist_int8.onnx"
    torch.onnx.export(quantized, (torch.from_numpy(test_x[:args.batch]),), str(onnx_path), opset_version=13)
    # The uint8 build's PyTorch reference: calibrated alike, its input quantized as the
    # exporter's --uint8-input quantizes it.
    normalisation = (mean, std)
    quantized_pixels = exporter.quantize_fx(
        net, exporter.calibration_batches(calibration["uint8"], shape, normalisation))
    exporter.quantize_input_as_pixels(quantized_pixels, *normalisation)

    runners = {
        "onnx": compile_library(args.aotc, onnx_path, "fm8", args.workdir),
        "fb": compile_library(args.aotc, export_fb(args.workdir, state_dict, calibration["float"], args.batch,
                                                   "fm8fb"), "fm8fb", args.workdir),
        "uint8": compile_library(args.aotc, export_fb(args.workdir, state_dict, calibration["uint8"], args.batch,
                                                      "fm8u8", "--uint8-input", f"{mean},{std}"),
                                 "fm8u8", args.workdir),
    }
    library_top1 = {name: [] for name in runners}
    torch_top1 = {"float input": [], "uint8 input": []}
    for i in range(0, len(test_x), args.batch):
        batch = test_x[i:i + args.batch]
        for name in ("onnx", "fb"):
            library_top1[name].append(run_library(runners[name], batch, args.workdir))
        library_top1["uint8"].append(run_library(runners["uint8"], test_pixels[i:i + args.batch], args.workdir))
        with torch.no_grad():
            torch_top1["float input"].append(quantized(torch.from_numpy(batch)).argmax(1).numpy())
            torch_top1["uint8 input"].append(quantized_pixels(torch.from_numpy(batch)).argmax(1).numpy())
    torch_top1 = {k: np.concatenate(v) for k, v in torch_top1.items()}
    references = {"onnx": "float input", "fb": "float input", "uint8": "uint8 input"}
    print(f"float {float_accuracy:.2f}%; PyTorch's quantized model "
          + ", ".join(f"({k}) {100 * np.mean(v == test_y):.2f}%" for k, v in torch_top1.items()))
    failures = []
    for name, top1 in library_top1.items():
        top1 = np.concatenate(top1)
        accuracy = 100 * float(np.mean(top1 == test_y))
        agreement = 100 * float(np.mean(top1 == torch_top1[references[name]]))
        print(f"int8 library ({name}): {accuracy:.2f}%, same top-1 as PyTorch's quantized model "
              f"({references[name]}) on {agreement:.2f}% of the images")
        if abs(accuracy - float_accuracy) > 0.5:
            failures.append(f"the int8 library ({name}) is more than 0.5 points from the float accuracy")
        if agreement < 99:
            failures.append(f"the int8 library's ({name}) top-1 differs from PyTorch's quantized model on more "
                            "than 1% of the images")
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
