#!/usr/bin/python3
"""ONNX lowerings that ONNX's conformance data leaves uncovered, against PyTorch.

One module with several outputs, exported by torch.onnx.export (opset 13), compiled
into one library, linked into tools/run_library.c and run on a fresh standard-normal
input; each output must match PyTorch's within max|a - b| <= 1e-4 * max|b|:

- ConvTranspose with output_padding inside the end pads (the pads shrink) and beyond
  them (the extra rows and columns hold the bias only), each with a bias;
- a dilated ConvTranspose with a stride and output_padding (the kernel dilated with zeros);
- 1-D Conv, ConvTranspose, MaxPool and AveragePool (their 2-D forms over [N, C, 1, L]);
- DepthToSpace in CRD mode (PixelShuffle);
- Split and Slice of a run-time tensor (torch.split, indexing), which become crops, and
  strided Slices (YOLOv5's Focus, a channel step past the end): crop, split view, crop;
- Slice with negative steps (torch.flip): the forward window, then reversed by crops;
- MatMul by a constant with batch dims (broadcast): one linear layer per matrix;
- Gather of a run-time tensor by a constant index (x[:, 2]) and Expand of one (crops and a
  product with ones);
- Elu with a non-default alpha and Softplus (ONNX's own Softplus cases are opsets 1 and 6,
  older than aotc reads), after a convolution whose epilogue they join;
- Resize no IR resize samples alike (bicubic, and nearest by a scale that gives a
  fractional size): one linear layer per axis by its sampling matrix.

The exported graph is checked to hold those nodes, so that a change in the exporter
cannot leave the lowerings untested.
"""
import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import numpy_helper

TOLERANCE = 1e-4
OUTPUTS = ["uncropped", "beyond", "shuffled", "split", "sliced", "elu_softplus", "picked", "expanded", "dilated", "one_d",
           "focus", "strided", "flipped", "batched", "bicubic", "nearest_fractional"]
HERE = Path(__file__).resolve().parent


class LoweringCases(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.uncropped = torch.nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1)
        self.beyond = torch.nn.ConvTranspose2d(8, 4, 3, stride=3, padding=(0, 1), output_padding=(2, 1))
        self.conv = torch.nn.Conv2d(8, 6, 3, padding=1)
        self.conv1d = torch.nn.Conv1d(8, 5, 4, stride=2, padding=(1,), dilation=2)
        self.deconv1d = torch.nn.ConvTranspose1d(5, 3, 3, stride=2, padding=1, output_padding=1)
        self.dilated = torch.nn.ConvTranspose2d(8, 3, (3, 2), stride=2, padding=(2, 1), dilation=(2, 3), output_padding=1)
        self.register_buffer("matrices", torch.randn(2, 6, 4))

    def forward(self, x):
        first, second = torch.split(x, [3, 5], dim=1)
        return (self.uncropped(x), self.beyond(x), torch.nn.functional.pixel_shuffle(x, 2), second[:, 1:4] * first,
                x[:, 2:7, 1:-1, 3:],
                torch.nn.functional.softplus(4 * torch.nn.functional.elu(self.conv(x), alpha=0.4)),
                torch.index_select(x, 3, torch.tensor([4, 0, 4])) + 1, x[:, 3:4].expand(2, 3, 5, 6) * 2, self.dilated(x),
                torch.nn.functional.avg_pool1d(
                    self.deconv1d(torch.nn.functional.max_pool1d(self.conv1d(x.reshape(1, 8, 30)), 3, 1, 1)), 2),
                self.focus(x[:, :, :4]), x[..., ::2, 1::4] * 3, torch.flip(x[:, 1:4, :, 1:], [1, 3]) * 2,
                torch.matmul(x[:, 2:4], self.matrices),
                torch.nn.functional.interpolate(x[:, :3], scale_factor=1.7, mode="bicubic", align_corners=False),
                torch.nn.functional.interpolate(x[:, 5:], scale_factor=1.5, mode="nearest"))

    @staticmethod
    def focus(y):
        return torch.cat([y[..., ::2, ::2], y[..., 1::2, ::2], y[..., ::2, 1::2], y[:, 1::3, 1::2, 1::2]], 1)


def run(cmd):
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if result.returncode != 0:
        sys.stdout.write(result.stdout[-4000:] + result.stderr[-4000:])
        sys.exit(f"FAILED: {' '.join(map(str, cmd))}: exit code {result.returncode}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--aotc", required=True, type=Path)
    parser.add_argument("--harness", type=Path, default=HERE.parent.parent / "tools" / "run_library.c")
    parser.add_argument("--workdir", required=True, type=Path)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)

    torch.manual_seed(20261128)
    model = LoweringCases().eval()
    x = torch.randn(1, 8, 5, 6)
    with torch.no_grad():
        refs = [y.numpy().astype("<f4").ravel() for y in model(x)]
    x.numpy().astype("<f4").tofile(args.workdir / "input.bin")
    onnx_file = args.workdir / "lowering_cases.onnx"
    with torch.no_grad():
        torch.onnx.export(model, x, str(onnx_file), opset_version=13, input_names=["x"],
                          output_names=OUTPUTS)

    graph = onnx.load(str(onnx_file)).graph
    nodes = graph.node
    padded = [n for n in nodes if n.op_type == "ConvTranspose"
              and any(a.name == "output_padding" and any(a.ints) for a in n.attribute)
              and not any(a.name == "dilations" and a.ints != [1, 1] for a in n.attribute)]
    dilated = [n for n in nodes if n.op_type == "ConvTranspose"
               and any(a.name == "dilations" and a.ints == [2, 3] for a in n.attribute)]
    crd = [n for n in nodes if n.op_type == "DepthToSpace" and any(a.name == "mode" and a.s == b"CRD" for a in n.attribute)]
    constants = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    constants.update({n.output[0]: numpy_helper.to_array(n.attribute[0].t) for n in nodes if n.op_type == "Constant"})
    backwards = [n for n in nodes if n.op_type == "Slice" and len(n.input) > 4 and (constants[n.input[4]] < 0).any()]
    batched = [n for n in nodes if n.op_type == "MatMul" and n.input[1] in constants and constants[n.input[1]].ndim == 3]
    counts = tuple(sum(n.op_type == op for n in nodes) for op in ("Split", "Elu", "Softplus", "Slice", "Gather", "Expand"))
    resizes = [n for n in nodes if n.op_type == "Resize"
               and any(a.name == "mode" and a.s in (b"cubic", b"nearest") for a in n.attribute)]
    counts = (len(padded), len(dilated), len(crd)) + counts + (len(backwards), len(batched), len(resizes))
    if counts[:6] != (2, 1, 1, 1, 1, 1) or min(counts[6:-1]) < 1 or counts[-1] != 2:
        sys.exit(f"FAILED: the export holds {counts} ConvTranspose with output_padding, dilated ConvTranspose, "
                 "DepthToSpace in CRD mode, Split, Elu, Softplus, Slice, Gather, Expand, Slice with a negative step, "
                 "MatMul by a constant 3-D tensor and cubic or nearest Resize nodes, expected 2, 1, 1, 1, 1, 1, "
                 "at least 1 each and 2")

    lib = args.workdir / "lib"
    run([args.aotc, onnx_file, "--emit=lib", "-o", lib])
    runner = args.workdir / "run"
    run(["cc", "-std=c11", "-O2", "-DAOTC_MODEL=lowering_cases", "-I", lib, "-I", args.harness.parent, args.harness,
         lib / "liblowering_cases.a", "-lm", "-lpthread", "-o", runner])
    run([runner, args.workdir / "outputs.bin", args.workdir / "input.bin"])
    got = np.fromfile(args.workdir / "outputs.bin", dtype="<f4")
    if got.size != sum(r.size for r in refs):
        sys.exit(f"FAILED: the library wrote {got.size} values, PyTorch's outputs have {sum(r.size for r in refs)}")
    offset, failed = 0, False
    for name, ref in zip(OUTPUTS, refs):
        part = got[offset:offset + ref.size]
        offset += ref.size
        ratio = float(np.max(np.abs(part - ref)) / np.max(np.abs(ref)))
        print(f"{name}: max|diff| / max|ref| = {ratio:.3g} (tolerance {TOLERANCE:g})")
        failed |= not ratio <= TOLERANCE
    if failed:
        sys.exit("FAILED: an output is off")
    print("PASSED")


if __name__ == "__main__":
    main()
