#!/usr/bin/python3
"""Quantized TensorFlow Lite models through aotc, against Arm NN's CpuRef (tools/tflite-reference).

  int8_test.py --aotc AOTC --flatc FLATC --workdir DIR [--seed S]

Real int8 .tflite files are scarce here (Debian has no TensorFlow converter), so the files are
written by this test from a PyTorch model quantized by FX (tests/tflite/tflite_builder.py, the
project's own writer): the executor, Arm NN, is the independent part of the check. Two files:

  int8   TFLite's full-integer form: int8 activations (PyTorch's uint8 ones shifted by 128),
         per-channel symmetric int8 convolution filters (onednn), an int32 bias at
         input scale x filter scale, a per-tensor int8 fully-connected weight.
  uint8  the legacy form: uint8 activations, per-tensor uint8 weights with zero point 128
         (qnnpack's int8 weights shifted by 128).

The CNN has what a quantized classifier uses: QUANTIZE of the float input, CONV_2D with a fused
RELU, DEPTHWISE_CONV_2D, a residual ADD with a fused RELU, MAX_POOL_2D, AVERAGE_POOL_2D,
RESHAPE, FULLY_CONNECTED and DEQUANTIZE of the output. Checks on fresh random inputs:
  - the convolutions and the fully-connected layer become integer qconv2d nodes and the ADD a
    qadd, all with TFLite's arithmetic, and the report lists AVERAGE_POOL_2D as the one float
    island;
  - the library is within 1 step of the reference evaluator (both compute TFLite's fixed-point
    requantization, docs/int8.md, which the kernel tests check bit for bit; but the evaluator
    sums the float islands in double, the library in float32, so a value at a rounding tie
    may land a step apart), and the count of unequal outputs is printed;
  - the library is within 1 output quantization step of Arm NN on >= 99% of the outputs and
    within 3 on all (Arm NN's CpuRef computes each layer in float and rounds once, TFLite's
    kernels requantize with a fixed-point multiplier: a layer may differ by one step, and
    the difference travels). The distribution is printed.
"""
import argparse
import json
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "tflite"))
import tflite_builder  # noqa: E402

REFERENCE = ROOT / "tools" / "tflite-reference"
RUN_LIBRARY = ROOT / "tools" / "run_library.c"
SIZE, CLASSES = 16, 10


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.relu1 = nn.Conv2d(3, 16, 3, padding=1), nn.ReLU()
        self.dw, self.relu2 = nn.Conv2d(16, 16, 3, padding=1, groups=16), nn.ReLU()
        self.pw = nn.Conv2d(16, 16, 1)
        self.relu3 = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.conv3, self.relu4 = nn.Conv2d(16, 24, 3, padding=1), nn.ReLU()
        self.avg = nn.AvgPool2d(SIZE // 2)
        self.fc = nn.Linear(24, CLASSES)

    def forward(self, x):
        y = self.relu1(self.conv1(x))
        y = self.relu3(self.pw(self.relu2(self.dw(y))) + y)
        y = self.relu4(self.conv3(self.pool(y)))
        return self.fc(torch.flatten(self.avg(y), 1))


def quantized_model(engine, seed):
    """Net with seeded weights, quantized by FX for `engine` (the fully-connected layer's
    weight per tensor: TFLite's FULLY_CONNECTED is read per tensor by Arm NN)."""
    from torch.ao.quantization import get_default_qconfig, get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

    torch.manual_seed(seed)
    torch.backends.quantized.engine = engine
    mapping = get_default_qconfig_mapping(engine).set_object_type(nn.Linear, get_default_qconfig("qnnpack"))
    example = torch.randn(1, 3, SIZE, SIZE)
    prepared = prepare_fx(Net().eval(), mapping, (example,))
    with torch.no_grad():
        for _ in range(16):
            prepared(torch.rand(1, 3, SIZE, SIZE) * 2 - 1)
    return convert_fx(prepared)


class Writer:
    """The converted FX module as a TFLite model: int8 activations (uint8 ones shifted by 128)
    or, legacy, uint8 activations and uint8 weights."""

    def __init__(self, model, legacy):
        self.model, self.legacy = model, legacy
        self.b = tflite_builder.ModelBuilder()
        self.act_type = np.uint8 if legacy else np.int8
        self.values = {}  # fx node -> (tensor index, NHWC shape, scale, zero point)

    def activation(self, name, shape, scale, zero):
        zero = int(zero) if self.legacy else int(zero) - 128
        index = self.b.tensor(name, shape, self.act_type, quantization=self.b.quantization([float(scale)], [zero]))
        return index, shape, float(scale), zero

    def weights(self, q):
        """(integers, scales, zero points, quantized dimension) of a quantized torch weight."""
        ints = q.int_repr().numpy().astype(np.int32)
        if q.qscheme() in (torch.per_channel_affine, torch.per_channel_symmetric):
            scales, zeros = q.q_per_channel_scales().numpy(), q.q_per_channel_zero_points().numpy()
        else:
            scales, zeros = np.array([q.q_scale()]), np.array([q.q_zero_point()])
        if self.legacy:  # uint8, zero point 128: the same reals
            assert len(scales) == 1 and zeros[0] == 0
            return (ints + 128).astype(np.uint8), scales, np.array([128]), 0
        return ints.astype(np.int8), scales, zeros.astype(np.int64), 0

    def constant(self, name, ints, scales, zeros, dim):
        return self.b.constant(name, ints, quantization=self.b.quantization(
            [float(s) for s in scales], [int(z) for z in zeros], dim))

    def bias(self, name, bias, x_scale, w_scales):
        scales = (np.float32(x_scale) * w_scales.astype(np.float32)).astype(np.float32)
        ints = np.round(bias.detach().numpy() / scales).astype(np.int32)
        return self.constant(name, ints, scales, np.zeros(len(scales), np.int64), 0)

    def conv(self, node, module, x):
        index, shape, x_scale, _ = x
        weight = module.weight()
        ints, scales, zeros, _ = self.weights(weight)
        out_c, depthwise = ints.shape[0], module.groups > 1
        ints = ints.transpose(1, 2, 3, 0) if depthwise else ints.transpose(0, 2, 3, 1)  # [1,KH,KW,O] / OHWI
        dim = 3 if depthwise else 0
        filt = self.constant(node.name + ".filter", np.ascontiguousarray(ints), scales, zeros, dim)
        w_scales = np.broadcast_to(scales, (out_c,)) if len(scales) == 1 else scales
        bias = self.bias(node.name + ".bias", module.bias(), x_scale, scales if len(scales) > 1 else scales[:1])
        out = self.activation(node.name, [shape[0], shape[1], shape[2], out_c], module.scale, module.zero_point)
        relu = "ReLU" in type(module).__name__
        options = dict(padding=self.b.enum("Padding", "SAME"), strideH=1, strideW=1,
                       fusedActivationFunction=self.b.enum("ActivationFunctionType", "RELU" if relu else "NONE"))
        assert module.padding == (module.kernel_size[0] // 2,) * 2 and module.stride == (1, 1) and len(w_scales) == out_c
        if depthwise:
            self.b.operator("DEPTHWISE_CONV_2D", [index, filt, bias], [out[0]], "DepthwiseConv2DOptions",
                            depthMultiplier=1, dilationHFactor=1, dilationWFactor=1, **options)
        else:
            self.b.operator("CONV_2D", [index, filt, bias], [out[0]], "Conv2DOptions", dilationHFactor=1,
                            dilationWFactor=1, **options)
        return out

    def linear(self, node, module, x):
        index, shape, x_scale, _ = x
        ints, scales, zeros, _ = self.weights(module.weight())
        filt = self.constant(node.name + ".weights", ints, scales, zeros, 0)
        bias = self.bias(node.name + ".bias", module.bias(), x_scale, scales)
        out = self.activation(node.name, [shape[0], ints.shape[0]], module.scale, module.zero_point)
        self.b.operator("FULLY_CONNECTED", [index, filt, bias], [out[0]], "FullyConnectedOptions")
        return out

    def pool(self, node, op, kernel, x):
        index, shape, scale, zero = x
        out_shape = [shape[0], shape[1] // kernel, shape[2] // kernel, shape[3]]
        out = self.b.tensor(node.name, out_shape, self.act_type, quantization=self.b.quantization([scale], [zero]))
        self.b.operator(op, [index], [out], "Pool2DOptions", padding=self.b.enum("Padding", "VALID"), strideH=kernel,
                        strideW=kernel, filterHeight=kernel, filterWidth=kernel)
        return out, out_shape, scale, zero

    def write(self):
        gm, b = self.model, self.b
        modules = dict(gm.named_modules())
        for node in gm.graph.nodes:
            arg = lambda k: self.values[node.args[k]]  # noqa: E731
            if node.op == "placeholder":
                self.values[node] = (b.tensor("x", [1, SIZE, SIZE, 3]), [1, SIZE, SIZE, 3], None, None)
                inputs = [self.values[node][0]]
            elif node.op == "get_attr":
                self.values[node] = getattr(gm, node.target)
            elif node.target == torch.quantize_per_tensor:
                out = self.activation("x.q", [1, SIZE, SIZE, 3], float(arg(1)), int(arg(2)))
                b.operator("QUANTIZE", [arg(0)[0]], [out[0]])
                self.values[node] = out
            elif node.op == "call_module" and "Conv" in type(modules[node.target]).__name__:
                self.values[node] = self.conv(node, modules[node.target], arg(0))
            elif node.op == "call_module" and "Linear" in type(modules[node.target]).__name__:
                self.values[node] = self.linear(node, modules[node.target], arg(0))
            elif node.op == "call_module" and isinstance(modules[node.target], nn.MaxPool2d):
                self.values[node] = self.pool(node, "MAX_POOL_2D", 2, arg(0))
            elif node.op == "call_module" and isinstance(modules[node.target], nn.AvgPool2d):
                self.values[node] = self.pool(node, "AVERAGE_POOL_2D", SIZE // 2, arg(0))
            elif node.target in (torch.ops.quantized.add_relu, torch.ops.quantized.add):
                a = arg(0)
                out = self.activation(node.name, a[1], float(arg(2)), int(arg(3)))
                act = "RELU" if node.target == torch.ops.quantized.add_relu else "NONE"
                b.operator("ADD", [a[0], arg(1)[0]], [out[0]], "AddOptions",
                           fusedActivationFunction=b.enum("ActivationFunctionType", act))
                self.values[node] = out
            elif node.target == torch.flatten:
                index, shape, scale, zero = arg(0)
                out = b.tensor(node.name, [1, shape[3]], self.act_type, quantization=b.quantization([scale], [zero]))
                b.operator("RESHAPE", [index, b.constant(node.name + ".shape", np.array([1, shape[3]], np.int32))],
                           [out])
                self.values[node] = out, [1, shape[3]], scale, zero
            elif node.op == "call_method" and node.target == "dequantize":
                index, shape, scale, zero = arg(0)
                out = b.tensor("y", shape)
                b.operator("DEQUANTIZE", [index], [out])
                self.values[node] = (out, shape, None, None)
                step = scale
            elif node.op == "output":
                outputs = [self.values[node.args[0]][0]]
            else:
                raise SystemExit(f"the test's TFLite writer has no mapping for fx node {node.format_node()}")
        return b.finish(inputs, outputs, name="q"), step


def run(argv):
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(map(str, argv))}: exit {done.returncode}\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return done


def check(kind, args, rng):
    work = args.workdir / kind
    work.mkdir(parents=True, exist_ok=True)
    data, step = Writer(quantized_model("qnnpack" if kind == "uint8" else "onednn", seed=5), kind == "uint8").write()
    model = work / "q.tflite"
    model.write_bytes(data)

    graph = run([args.aotc, model, "--emit=graph", "-o", work / "q.air"])
    text = (work / "q.air").read_text()
    integer = [line for line in text.splitlines() if "= qconv2d(" in line or "= qadd(" in line]
    if (sum("= qconv2d(" in line for line in integer) != 5 or sum("= qadd(" in line for line in integer) != 1
            or not all("arithmetic=tflite" in line for line in integer)):
        sys.exit(f"{kind}: expected 5 qconv2d (4 convolutions, the fully-connected) and a qadd with TFLite's "
                 "arithmetic, got:\n" + "\n".join(integer))

    lib = work / "lib"
    run([args.aotc, model, "--emit=lib", "--name", "q", "-o", lib])
    islands = json.loads((lib / "q.report.json").read_text())["float_islands"]
    ops = sorted(op.split("(")[1].split(")")[0] for island in islands for op in island)
    if ops != ["avg_pool2d"]:
        sys.exit(f"{kind}: the report's float islands are {islands}, expected the AVERAGE_POOL_2D alone")
    runner = work / "run"
    run(["cc", "-std=c11", "-O2", "-DAOTC_MODEL=q", "-I", lib, RUN_LIBRARY, lib / "libq.a", "-lpthread", "-ldl",
         "-lm", "-o", runner])

    steps, unequal = [], 0
    for i in range(args.inputs):
        x = work / f"x{i}.bin"
        (rng.uniform(-1, 1, (1, SIZE, SIZE, 3))).astype("<f4").tofile(x)
        run([runner, work / "lib.bin", x])
        run([args.aotc, model, "--emit=run", "--input", x, "-o", work / "eval.bin"])
        run([REFERENCE, model, work / "armnn.bin", x])
        got, evaluated, armnn = (np.fromfile(work / f, "<f4") for f in ("lib.bin", "eval.bin", "armnn.bin"))
        apart = np.rint(np.abs(got - evaluated) / step)
        if apart.max() > 1:
            sys.exit(f"{kind}: input {i}: the library and the evaluator differ by up to {apart.max():.0f} steps")
        unequal += int(np.count_nonzero(apart))
        steps.append(np.rint(np.abs(got - armnn) / step).astype(int))
    steps = np.concatenate(steps)
    histogram = {int(k): int(v) for k, v in zip(*np.unique(steps, return_counts=True))}
    within_one = float(np.mean(steps <= 1))
    print(f"{kind}: library != evaluator on {unequal} of {steps.size} outputs; steps from Arm NN {histogram} "
          f"({within_one:.2%} within 1, max {steps.max()})")
    if within_one < 0.99 or steps.max() > 3:
        sys.exit(f"{kind}: the library is within 1 step of Arm NN on {within_one:.2%} (needs 99%), "
                 f"at most {steps.max()} steps (needs 3)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aotc", type=Path, required=True)
    parser.add_argument("--flatc", type=Path, required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--inputs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    seed = args.seed if args.seed is not None else secrets.randbits(32)
    print(f"fresh inputs uniform in [-1, 1], seed {seed} (--seed {seed} repeats this run)")
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as api:
        tflite_builder.load_schema(args.flatc, api)
        for kind in ("int8", "uint8"):
            check(kind, args, rng)


if __name__ == "__main__":
    main()
