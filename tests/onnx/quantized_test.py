#!/usr/bin/env python3
"""Quantized (QDQ) ONNX models, from PyTorch's post-training quantization, through aotc.

A small CNN covering what the integer kernels do (convolutions dense, strided, dilated,
grouped and depthwise, with and without relu, padded with the input's zero point; a
quantized max pool, flatten and linear, a residual add, a sigmoid) is quantized with PyTorch FX (prepare_fx / convert_fx,
calibrated on random images) for two engines: qnnpack (per-tensor weights) and onednn
(per-channel weights). Each is exported to ONNX (opset 13) and compiled by aotc into a
library. Checks, on fresh random inputs:
  - quantize-ops turned every convolution and the linear into qconv2d, the add into qadd and the
    sigmoid into a lookup table, qlookup (--stats), and the report lists no float island;
  - the library's outputs equal the reference evaluator's (--emit=run) bit for bit: the
    integer kernels compute qconv2d's stated semantics exactly (docs/int8.md);
  - against PyTorch's own quantized model (the independent reference, whose fbgemm/qnnpack
    requantization rounds differently at ties): every output within 2 quantization steps,
    and at least 99% of them within 1.
And a model of QOperator nodes (QLinearConv with uint8 weights and a bias, QLinearMatMul):
its library equals the evaluator bit for bit.
"""
import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper
import torch
import torch.nn as nn
from torch.ao.quantization import get_default_qconfig_mapping
from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

HARNESS = Path(__file__).resolve().parents[2] / "tools" / "run_library.c"
INPUTS = 8


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU())
        self.depthwise = nn.Conv2d(16, 16, 3, stride=2, padding=1, groups=16)
        self.grouped = nn.Sequential(nn.Conv2d(16, 24, 3, padding=2, dilation=2, groups=4), nn.ReLU())
        self.pool = nn.MaxPool2d(2)
        self.pointwise = nn.Conv2d(24, 24, 1)
        self.strided = nn.Conv2d(24, 8, (3, 2), stride=(1, 2), padding=(1, 0))
        self.fc = nn.Linear(8 * 4 * 2, 10)

    def forward(self, x):
        y = self.grouped(self.depthwise(self.stem(x)))
        y = self.pool(y)
        y = self.pointwise(y) + y  # qadd
        # quantize(sigmoid(dequantize)): a lookup table.
        return self.fc(torch.flatten(torch.sigmoid(self.strided(y)), 1))


def quantized(engine, seed):
    torch.manual_seed(seed)
    torch.backends.quantized.engine = engine
    model = Net().eval()
    example = torch.randn(1, 3, 16, 16)
    prepared = prepare_fx(model, get_default_qconfig_mapping(engine), (example,))
    with torch.no_grad():
        for _ in range(16):
            prepared(torch.randn(1, 3, 16, 16) * 1.5)
    return convert_fx(prepared), example


def output_step(path):
    """The scale of the DequantizeLinear that writes the graph's output."""
    graph = onnx.load(path).graph
    constants = {o: numpy_helper.to_array(n.attribute[0].t) for n in graph.node if n.op_type == "Constant"
                 for o in n.output}
    constants.update({t.name: numpy_helper.to_array(t) for t in graph.initializer})
    last = next(n for n in graph.node if graph.output[0].name in n.output)
    assert last.op_type == "DequantizeLinear", last.op_type
    return float(constants[last.input[1]])


def run(argv, **kwargs):
    done = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        sys.exit(f"{' '.join(map(str, argv))}: exit {done.returncode}\n{done.stderr[-2000:]}")
    return done


def check(engine, args):
    work = args.workdir / engine
    work.mkdir(parents=True, exist_ok=True)
    model, example = quantized(engine, seed=7)
    path = work / "q.onnx"
    torch.onnx.export(model, (example,), str(path), opset_version=13)
    step = output_step(path)

    stats = run([args.aotc, path, "--emit=graph", "-o", work / "q.air", "--stats"]).stderr
    counts = {}
    for line in stats.splitlines():
        if line.strip().startswith("quantize-ops"):
            counts = dict(f.split("=") for f in line.split()[2:] if "=" in f)
    # 5 convolutions, the linear and the add, whatever the engine's observers.
    if (int(counts.get("qconv2d", 0)) != 5 or int(counts.get("qlinear", 0)) != 1 or int(counts.get("qadd", 0)) != 1
            or int(counts.get("qlookup", 0)) != 1):
        sys.exit(f"{engine}: quantize-ops made {counts}, expected qconv2d=5, qlinear=1, qadd=1 and qlookup=1")

    lib = work / "lib"
    run([args.aotc, path, "--emit=lib", "--name", "q", "-o", lib])
    # Nothing is left in float, and the report says so.
    islands = json.loads((lib / "q.report.json").read_text())["float_islands"]
    if islands:
        sys.exit(f"{engine}: the report's float islands are {islands}, expected none")
    runner = work / "run"
    run(["cc", "-std=c11", "-O1", "-DAOTC_MODEL=q", "-I", lib, HARNESS, lib / "libq.a", "-lm", "-lpthread", "-o", runner])

    rng = np.random.default_rng(args.seed)
    within_one = total = 0
    worst = 0.0
    for i in range(INPUTS):
        x = (rng.standard_normal((1, 3, 16, 16)) * 1.5).astype(np.float32)
        x.tofile(work / "x.bin")
        run([args.aotc, path, "--emit=run", "--input", work / "x.bin", "-o", work / "evaluated.bin"])
        run([runner, work / "library.bin", work / "x.bin"])
        evaluated = np.fromfile(work / "evaluated.bin", dtype=np.float32)
        library = np.fromfile(work / "library.bin", dtype=np.float32)
        if not np.array_equal(evaluated, library):
            sys.exit(f"{engine}, input {i}: the library differs from the evaluator at "
                     f"{np.flatnonzero(evaluated != library)[:8]}: {library[:4]} against {evaluated[:4]}")
        with torch.no_grad():
            reference = model(torch.from_numpy(x)).numpy().ravel()
        steps = np.abs(library - reference) / step
        worst = max(worst, float(steps.max()))
        within_one += int(np.sum(steps <= 1.001))
        total += steps.size
    print(f"{engine}: library == evaluator on {INPUTS} inputs; against PyTorch: {within_one}/{total} outputs "
          f"within 1 step, worst {worst:.2f} steps (step {step:.3g})")
    if worst > 2.001 or within_one < 0.99 * total:
        sys.exit(f"{engine}: too far from PyTorch's quantized model")


def qoperator_model(path):
    """QuantizeLinear -> QLinearConv (uint8 weights with a zero point, a bias, stride 2, two
    groups) -> Reshape -> QLinearMatMul (per-column int8 weights) -> DequantizeLinear."""
    from onnx import TensorProto, helper
    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array(np.array(v, dtype=t), n) for n, v, t in [
        ("xs", 0.05, np.float32), ("xz", 120, np.uint8), ("ws", 0.02, np.float32), ("wz", 131, np.uint8),
        ("ys", 0.4, np.float32), ("yz", 100, np.uint8), ("ms", [0.01, 0.02, 0.03], np.float32),
        ("mz", [0, 0, 0], np.int8), ("os", 1.5, np.float32), ("oz", -4, np.int8), ("shape", [1, 36], np.int64)]]
    inits += [numpy_helper.from_array(rng.integers(0, 256, (4, 3, 3, 3)).astype(np.uint8), "w"),
              numpy_helper.from_array(rng.integers(-3000, 3000, 4).astype(np.int32), "b"),
              numpy_helper.from_array(rng.integers(-128, 128, (36, 3)).astype(np.int8), "m")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["yq"],
                              strides=[2, 2], pads=[1, 1, 1, 1], group=2),
             helper.make_node("Reshape", ["yq", "shape"], ["flat"]),
             helper.make_node("QLinearMatMul", ["flat", "ys", "yz", "m", "ms", "mz", "os", "oz"], ["oq"]),
             helper.make_node("DequantizeLinear", ["oq", "os", "oz"], ["out"])]
    graph = helper.make_graph(nodes, "qoperator", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6, 5, 5])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 3])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))


def check_qoperator(args):
    """QOperator nodes (whose semantics ONNX's own test data checks through the evaluator, in
    onnx.conformance) compiled: the library equals the evaluator bit for bit."""
    work = args.workdir / "qoperator"
    work.mkdir(parents=True, exist_ok=True)
    path = work / "q.onnx"
    qoperator_model(path)
    lib = work / "lib"
    run([args.aotc, path, "--emit=lib", "--name", "q", "-o", lib])
    runner = work / "run"
    run(["cc", "-std=c11", "-O1", "-DAOTC_MODEL=q", "-I", lib, HARNESS, lib / "libq.a", "-lm", "-lpthread", "-o", runner])
    rng = np.random.default_rng(args.seed)
    outputs = set()
    for i in range(INPUTS):
        (rng.standard_normal((1, 6, 5, 5)) * 3).astype(np.float32).tofile(work / "x.bin")
        run([args.aotc, path, "--emit=run", "--input", work / "x.bin", "-o", work / "evaluated.bin"])
        run([runner, work / "library.bin", work / "x.bin"])
        evaluated = np.fromfile(work / "evaluated.bin", dtype=np.float32)
        library = np.fromfile(work / "library.bin", dtype=np.float32)
        if not np.array_equal(evaluated, library):
            sys.exit(f"QLinearConv/QLinearMatMul, input {i}: library {library} against the evaluator's {evaluated}")
        outputs.update(library.tolist())
    if len(outputs) < 10:
        sys.exit(f"QLinearConv/QLinearMatMul: only {len(outputs)} distinct outputs; the case tests little")
    print(f"QLinearConv/QLinearMatMul: library == evaluator on {INPUTS} inputs ({len(outputs)} distinct outputs)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aotc", required=True, type=Path)
    parser.add_argument("--workdir", required=True, type=Path)
    parser.add_argument("--seed", type=int, default=20261128)
    args = parser.parse_args()
    for engine in ("qnnpack", "onednn"):
        check(engine, args)
    check_qoperator(args)


if __name__ == "__main__":
    main()
