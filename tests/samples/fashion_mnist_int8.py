#!/usr/bin/env python3
"""The Fashion-MNIST sample model quantized to int8: its accuracy as an aotc library.

The float model's weights are read from samples/models/fashion_mnist.fb (flatc's Python API
of the schema) into samples/models/fashion_net.py:FashionNet; PyTorch FX quantizes it
(prepare_fx / convert_fx, onednn: per-channel weights) calibrated on the first --calibrate
training images; torch.onnx.export writes it as QDQ ONNX (batch --batch); aotc compiles it;
all 10,000 test images run through the library with the samples' normalisation. Checks:
  - the float model reproduces the recorded float accuracy (fashion_mnist.json), so the
    weights were read right;
  - the int8 library's accuracy is within 0.5 points of the float accuracy (the INT8 issue's
    bar), and its top-1 label equals PyTorch's quantized model's on >= 99% of the images.
Prints both accuracies (README: samples/README.md).
"""
import argparse
import gzip
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
from torch.ao.quantization import get_default_qconfig_mapping
from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "samples" / "models"


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def float_model(fb_path):
    """FashionNet with the weights of the exported .fb (tensor names are state_dict keys)."""
    with tempfile.TemporaryDirectory() as api:
        subprocess.run(["flatc", "--python", "-o", api, str(ROOT / "schemas" / "aotc_model.fbs")], check=True)
        sys.path.insert(0, api)
        from aotc.fb.Model import Model  # noqa: E402 (generated above)
        model = Model.GetRootAs(fb_path.read_bytes(), 0)
        weights = {}
        for i in range(model.TensorsLength()):
            t = model.Tensors(i)
            if t.Buffer() == 0:
                continue
            raw = model.Buffers(t.Buffer()).DataAsNumpy()
            shape = [t.Shape(d) for d in range(t.ShapeLength())]
            weights[t.Name().decode()] = torch.from_numpy(raw.view(np.float32).reshape(shape).copy())
        sys.path.remove(api)
    spec = importlib.util.spec_from_file_location("fashion_net", MODELS / "fashion_net.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    net = module.FashionNet().eval()
    missing = net.load_state_dict(weights, strict=False)
    # num_batches_tracked is not exported; every weight is.
    assert all(k.endswith("num_batches_tracked") for k in missing.missing_keys), missing
    return net


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

    test_x = normalised(idx(args.data / "t10k-images-idx3-ubyte.gz"))
    test_y = idx(args.data / "t10k-labels-idx1-ubyte.gz").astype(np.int64)
    train_x = normalised(idx(args.data / "train-images-idx3-ubyte.gz")[:args.calibrate])

    torch.manual_seed(0)
    net = float_model(MODELS / "fashion_mnist.fb")
    with torch.no_grad():
        float_top1 = np.concatenate([net(torch.from_numpy(test_x[i:i + args.batch])).argmax(1).numpy()
                                     for i in range(0, len(test_x), args.batch)])
    float_accuracy = 100 * float(np.mean(float_top1 == test_y))
    if abs(float_accuracy - info["test_accuracy_percent"]) > 0.01:
        sys.exit(f"the float model read from the .fb scores {float_accuracy:.2f}%, "
                 f"recorded {info['test_accuracy_percent']}%")

    torch.backends.quantized.engine = "onednn"
    example = torch.from_numpy(test_x[:args.batch])
    prepared = prepare_fx(net, get_default_qconfig_mapping("onednn"), (example,))
    with torch.no_grad():
        for i in range(0, len(train_x), 100):
            prepared(torch.from_numpy(train_x[i:i + 100]))
    quantized = convert_fx(prepared)
    onnx_path = args.workdir / "fashion_mnist_int8.onnx"
    torch.onnx.export(quantized, (example,), str(onnx_path), opset_version=13)

    lib = args.workdir / "lib"
    compiled = subprocess.run([args.aotc, onnx_path, "--emit=lib", "--name", "fm8", "-o", lib],
                              capture_output=True, text=True)
    if compiled.returncode != 0:
        sys.exit(f"aotc exit {compiled.returncode}: {compiled.stderr[-2000:]}")
    runner = args.workdir / "run"
    subprocess.run(["cc", "-std=c11", "-O1", "-DAOTC_MODEL=fm8", "-I", lib, ROOT / "tools" / "run_library.c",
                    lib / "libfm8.a", "-lm", "-lpthread", "-o", runner], check=True)
    library_top1, torch_top1 = [], []
    for i in range(0, len(test_x), args.batch):
        batch = test_x[i:i + args.batch]
        batch.tofile(args.workdir / "batch.bin")
        subprocess.run([runner, args.workdir / "logits.bin", args.workdir / "batch.bin"], check=True)
        library_top1.append(np.fromfile(args.workdir / "logits.bin", dtype=np.float32).reshape(-1, 10).argmax(1))
        with torch.no_grad():
            torch_top1.append(quantized(torch.from_numpy(batch)).argmax(1).numpy())
    library_top1, torch_top1 = np.concatenate(library_top1), np.concatenate(torch_top1)
    int8_accuracy = 100 * float(np.mean(library_top1 == test_y))
    agreement = 100 * float(np.mean(library_top1 == torch_top1))
    torch_accuracy = 100 * float(np.mean(torch_top1 == test_y))
    print(f"float {float_accuracy:.2f}%; int8 library {int8_accuracy:.2f}% (PyTorch's quantized model "
          f"{torch_accuracy:.2f}%; same top-1 as it on {agreement:.2f}% of the images)")
    if abs(int8_accuracy - float_accuracy) > 0.5:
        sys.exit("the int8 library is more than 0.5 points from the float accuracy")
    if agreement < 99:
        sys.exit("the int8 library's top-1 differs from PyTorch's quantized model on more than 1% of the images")


if __name__ == "__main__":
    main()
