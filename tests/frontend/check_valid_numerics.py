#!/usr/bin/python3
"""Runs a valid corpus model with aotc and with PyTorch, and compares the outputs.

    check_valid_numerics.py --aotc AOTC [--flatc FLATC] MODEL.fb

The model is read here with the FlatBuffers Python API (generated from the schema at
run time) and executed op by op with torch.nn.functional, following the schema's
comments: an independent reading of the same file. aotc runs it with the reference
evaluator, first with no passes (the reader's graph as it is), then with the default
pipeline. Inputs are uniform in [-1, 1) from a fixed seed. Tolerance: |aotc - torch| <=
1e-5 + 1e-4 * |torch| per element (float32 kernels against float32 PyTorch), plus, for an
output that a Dequantize writes, one quantization step of its operand in the default
pipeline (quantize-ops sums integers and requantizes once: docs/int8.md).
"""

import argparse
import importlib
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "aotc_model.fbs"
ATOL, RTOL = 1e-5, 1e-4


def load(path, flatc, tempdir):
    subprocess.run([flatc, "--python", "-o", tempdir, str(SCHEMA)], check=True)
    sys.path.insert(0, tempdir)
    fb = {name: importlib.import_module(f"aotc.fb.{name}") for name in ["Model", "OpCode", "OpOptions"]}
    data = Path(path).read_bytes()
    return fb, fb["Model"].Model.GetRootAs(data, 0)


def options(fb, node):
    """The node's options table as an object of its generated class, or None."""
    type_names = {v: k for k, v in vars(fb["OpOptions"].OpOptions).items() if not k.startswith("_")}
    name = type_names[node.OptionsType()]
    if name == "NONE":
        return None
    table = getattr(importlib.import_module(f"aotc.fb.{name}"), name)()
    table.Init(node.Options().Bytes, node.Options().Pos)
    return table


def symmetric(padding, node):
    top, left, bottom, right = padding
    if (top, left) != (bottom, right):
        raise NotImplementedError(f"{node}: asymmetric pooling padding is not modelled here")
    return (top, left)


# The schema's integer DType values -> (numpy dtype of the stored bytes, [lo, hi]).
INTEGER_DTYPES = {1: ("<i4", (-2**31, 2**31 - 1)), 3: ("i1", (-128, 127)), 4: ("u1", (0, 255))}


def quantization(t):
    """(scale, zero_point) of a quantized tensor, shaped to broadcast against it."""
    q = t.Quantization()
    scale = torch.from_numpy(q.ScaleAsNumpy().astype(np.float32))
    zero = torch.from_numpy(q.ZeroPointAsNumpy().astype(np.float32))
    if q.Axis() >= 0:
        shape = [1] * t.ShapeLength()
        shape[q.Axis()] = -1
        scale, zero = scale.reshape(shape), zero.reshape(shape)
    return scale, zero


def run_node(op, o, args, tensors):
    """`tensors`: the node's input and output Tensor tables (their dtypes and quantization)."""
    x = args[0]
    if op == "Quantize":  # the schema: saturate(round_half_to_even(x / scale) + zero_point)
        out = tensors[-1]
        scale, zero = quantization(out)
        lo, hi = INTEGER_DTYPES[out.Dtype()][1]
        return torch.clamp(torch.round(x / scale) + zero, lo, hi)
    if op == "Dequantize":
        scale, zero = quantization(tensors[0])
        return (x - zero) * scale
    if op == "Conv2d":
        top, left, bottom, right = o.PaddingAsNumpy().tolist()
        return F.conv2d(F.pad(x, (left, right, top, bottom)), args[1], args[2] if len(args) > 2 else None,
                        stride=o.StrideAsNumpy().tolist(), dilation=o.DilationAsNumpy().tolist(), groups=o.Groups())
    if op == "BatchNorm":
        gamma, beta = (args[3], args[4]) if len(args) == 5 else (None, None)
        return F.batch_norm(x, args[1], args[2], gamma, beta, training=False, eps=o.Eps() if o else 1e-5)
    if op in ("MaxPool2d", "AvgPool2d"):
        kernel, stride = o.KernelAsNumpy().tolist(), o.StrideAsNumpy().tolist()
        padding = symmetric(o.PaddingAsNumpy().tolist(), op)
        if op == "MaxPool2d":
            return F.max_pool2d(x, kernel, stride, padding, o.DilationAsNumpy().tolist(), o.CeilMode())
        return F.avg_pool2d(x, kernel, stride, padding, o.CeilMode(), o.CountIncludePad())
    if op == "Pad":
        pads = o.PadsAsNumpy().tolist()
        rank = len(pads) // 2
        pairs = [p for d in reversed(range(rank)) for p in (pads[d], pads[rank + d])]  # F.pad: last dim first
        return F.pad(x, pairs, value=o.Value())
    simple = {
        "Relu": lambda: F.relu(x),
        "Clamp": lambda: torch.clamp(x, o.Min(), o.Max()),
        "HardSwish": lambda: F.hardswish(x),
        "Sigmoid": lambda: torch.sigmoid(x),
        "Add": lambda: x + args[1],
        "Mul": lambda: x * args[1],
        "AdaptiveAvgPool2d": lambda: F.adaptive_avg_pool2d(x, o.OutputSizeAsNumpy().tolist()),
        "GlobalAvgPool": lambda: x.mean(dim=(2, 3), keepdim=True),
        "Linear": lambda: F.linear(x.flatten(1), args[1], args[2] if len(args) > 2 else None),
        "Flatten": lambda: torch.flatten(x, o.StartDim() if o else 1, o.EndDim() if o else -1),
        "Reshape": lambda: x.reshape(o.ShapeAsNumpy().tolist()),
        "Concat": lambda: torch.cat(args, dim=o.Axis()),
        "Dropout": lambda: x,
        "Softmax": lambda: F.softmax(x, dim=o.Axis()),
    }
    return simple[op]()


def torch_outputs(fb, model, inputs):
    op_names = {v: k for k, v in vars(fb["OpCode"].OpCode).items() if not k.startswith("_")}
    values = {}
    for i in range(model.TensorsLength()):
        t = model.Tensors(i)
        if t.Buffer():
            raw = model.Buffers(t.Buffer()).DataAsNumpy().tobytes()
            stored = INTEGER_DTYPES[t.Dtype()][0] if t.Dtype() in INTEGER_DTYPES else "<f4"
            values[i] = torch.from_numpy(np.frombuffer(raw, dtype=stored).astype(np.float32)
                                         .reshape(t.ShapeAsNumpy().tolist()))
    for k, value in zip(model.InputsAsNumpy().tolist(), inputs):
        values[k] = torch.from_numpy(value)
    for n in range(model.NodesLength()):  # the corpus's valid models are stored in execution order
        node = model.Nodes(n)
        args = [values[i] for i in node.InputsAsNumpy().tolist()]
        tensors = [model.Tensors(i) for i in [*node.InputsAsNumpy().tolist(), node.Outputs(0)]]
        values[int(node.Outputs(0))] = run_node(op_names[node.Op()], options(fb, node), args, tensors)
    return [values[k].numpy() for k in model.OutputsAsNumpy().tolist()]


def requantization_step(fb, model, output):
    """The largest scale of the operand of the Dequantize node writing `output`, or 0."""
    dequantize = vars(fb["OpCode"].OpCode)["Dequantize"]
    for n in range(model.NodesLength()):
        node = model.Nodes(n)
        if node.Outputs(0) == output and node.Op() == dequantize:
            return float(np.max(model.Tensors(node.Inputs(0)).Quantization().ScaleAsNumpy()))
    return 0.0


def aotc_outputs(aotc, model_path, model, inputs, tempdir, passes):
    input_files = []
    for k, value in enumerate(inputs):
        input_files += ["--input", f"{tempdir}/input{k}.bin"]
        value.astype("<f4").tofile(input_files[-1])
    out = f"{tempdir}/out.bin"
    subprocess.run([aotc, str(model_path), "--emit=run", *input_files, "-o", out, *passes], check=True)
    flat = np.fromfile(out, dtype="<f4")
    shapes = [model.Tensors(k).ShapeAsNumpy().tolist() for k in model.OutputsAsNumpy().tolist()]
    sizes = [int(np.prod(s)) for s in shapes]
    assert flat.size == sum(sizes), f"aotc wrote {flat.size} floats, expected {sum(sizes)}"
    return [part.reshape(s) for part, s in zip(np.split(flat, np.cumsum(sizes)[:-1]), shapes)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--aotc", required=True)
    parser.add_argument("--flatc", default="flatc")
    parser.add_argument("model", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tempdir:
        fb, model = load(args.model, args.flatc, tempdir)
        rng = np.random.RandomState(1234)
        inputs = [rng.uniform(-1, 1, size=model.Tensors(k).ShapeAsNumpy().tolist()).astype(np.float32)
                  for k in model.InputsAsNumpy().tolist()]
        expected = torch_outputs(fb, model, inputs)
        steps = [requantization_step(fb, model, k) for k in model.OutputsAsNumpy().tolist()]
        failed = False
        for label, passes in [("no passes", ["--passes", ""]), ("default pipeline", [])]:
            got = aotc_outputs(args.aotc, args.model, model, inputs, tempdir, passes)
            for k, (g, e) in enumerate(zip(got, expected)):
                error = np.abs(g - e) - (ATOL + RTOL * np.abs(e) + (steps[k] if passes == [] else 0))
                worst = float(np.max(np.abs(g - e)))
                if g.shape != e.shape or np.any(error > 0) or not np.all(np.isfinite(g)):
                    print(f"{args.model.name} ({label}): output {k} differs from PyTorch, max |diff| {worst:g}",
                          file=sys.stderr)
                    failed = True
                else:
                    print(f"{args.model.name} ({label}): output {k} matches PyTorch, max |diff| {worst:g}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
