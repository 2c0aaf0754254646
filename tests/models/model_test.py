#!/usr/bin/python3
"""Model-level tests: export with tools/aotc-export-torch, then check aotc against PyTorch.

Cases (tests/models/CMakeLists.txt runs each one as a ctest):
  --case model --model NAME --size S   a torchvision model at SxS: the exported file's op
                                       counts, then aotc --emit=run without passes and with
                                       the default pipeline, both against PyTorch's output
  --case module --module FILE.py:Class --input-shape N,C,H,W
                                       the same for a user module that uses every schema op
  --case state-dict --module FILE.py:Class --input-shape N,C,H,W
                                       export with given weights (--state-dict): the file holds
                                       them, and PyTorch with them gives the reference output
  --case resnet18-graph                ResNet-18 at 224x224: the optimised graph's structure
  --case unsupported                   modules of unsupported_ops.py are refused with exit 3
  --case library --model NAME --size S the model compiled by `aotc --emit=lib` into a static
          [--target T]                 library, linked into a C program (run_library.c) and run
                                       on PyTorch's input: its output against PyTorch's; for an
                                       ARM target, linked by Debian's cross gcc and run under
                                       qemu (tools/cross_targets.py), and also against the
                                       x86-64 library's
  --case memory-plan                   all seven models at 224x224: the static memory plan of the
                                       optimised graph needs at most 1.05x its liveness lower bound
  --case export --model NAME --size S  only the export (NAME.fb and reference/ in the workdir),
                                       which the cases above read with --exports instead of
                                       exporting again (--exports DIR: DIR/NAME_S/)

Numbers are compared as max|a - b| <= 1e-4 * max|b| (float32 kernels against PyTorch's, on
a fresh standard-normal input; the printed ratio is the measured one).
"""

import argparse
import collections
import importlib
import importlib.util
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "tools"))
import cross_targets  # noqa: E402
TOLERANCE = 1e-4

# Op counts of the exported graphs, counted by hand from the architectures (torchvision 0.14).
EXPECTED_OPS = {
    # 5 convs, each + ReLU; 2 ReLUs in the classifier; AdaptiveAvgPool2d((6, 6)).
    "alexnet": {"Conv2d": 5, "Relu": 7, "MaxPool2d": 3, "AdaptiveAvgPool2d": 1, "Flatten": 1,
                "Dropout": 2, "Linear": 3},
    # stem + 8 basic blocks x 2 convs + 3 downsample convs; a ReLU after the stem, inside and
    # after every block; one residual add per block.
    "resnet18": {"Conv2d": 20, "BatchNorm": 20, "Relu": 17, "Add": 8, "MaxPool2d": 1,
                 "GlobalAvgPool": 1, "Flatten": 1, "Linear": 1},
    # stem + 16 bottlenecks x 3 convs + 4 downsample convs.
    "resnet50": {"Conv2d": 53, "BatchNorm": 53, "Relu": 49, "Add": 16, "MaxPool2d": 1,
                 "GlobalAvgPool": 1, "Flatten": 1, "Linear": 1},
    # stem + first block (dw, project) + 16 blocks x 3 + last 1x1: 52 convs; ReLU6 after all
    # but the 17 projections; 10 blocks keep their shape and add their input.
    "mobilenet_v2": {"Conv2d": 52, "BatchNorm": 52, "Clamp": 35, "Add": 10, "GlobalAvgPool": 1,
                     "Flatten": 1, "Dropout": 1, "Linear": 1},
    # 3 stem convs + 9 inception blocks x 6 convs; 4 stem pools + a pool branch per block.
    "googlenet": {"Conv2d": 57, "BatchNorm": 57, "Relu": 57, "MaxPool2d": 13, "Concat": 9,
                  "GlobalAvgPool": 1, "Flatten": 1, "Dropout": 1, "Linear": 1},
    # conv1 + 8 fire modules x 3 convs + the final 1x1 conv classifier.
    "squeezenet1_1": {"Conv2d": 26, "Relu": 26, "MaxPool2d": 3, "Concat": 8, "Dropout": 1,
                      "GlobalAvgPool": 1, "Flatten": 1},
    # conv0 + 58 dense layers x 2 convs + 3 transitions; BN: norm0, 2 per layer, 3, norm5;
    # a concat per dense layer and per block.
    "densenet121": {"Conv2d": 120, "BatchNorm": 121, "Relu": 121, "MaxPool2d": 1,
                    "Concat": 62, "AvgPool2d": 3, "GlobalAvgPool": 1, "Flatten": 1,
                    "Linear": 1},
}


class TestFailure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise TestFailure(message)


def run(cmd, expect_rc=0):
    print("$ " + " ".join(str(c) for c in cmd), flush=True)
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if expect_rc is not None and result.returncode != expect_rc:
        # The reason first: CI reports show the start of a failing test's output.
        errors = [line for line in result.stderr.splitlines() if "error" in line.lower()]
        how = (f"killed by {signal.Signals(-result.returncode).name}" if result.returncode < 0
               else f"exit code {result.returncode}")
        print(f"{how}, expected exit code {expect_rc}; " +
              (f"stderr's errors: {errors[-3:]}" if errors else "stderr has no error line"), flush=True)
        sys.stdout.write(result.stderr[-4000:])
        sys.stdout.write(result.stdout[-4000:])
        raise TestFailure(f"{how}, expected exit code {expect_rc}")
    return result


# ---- Reading the exported file back (independently of aotc's C++ reader) ------------------


def load_schema(workdir):
    generated = Path(tempfile.mkdtemp(prefix="schema-py-", dir=workdir))
    run(["flatc", "--python", "-o", generated, HERE.parent.parent / "schemas" / "aotc_model.fbs"])
    sys.path.insert(0, str(generated))
    return importlib.import_module("aotc.fb.Model"), importlib.import_module("aotc.fb.OpCode")


def check_exported_file(path, workdir, input_shapes, output_sizes, source):
    """Structural checks of the .fb; returns the op histogram."""
    model_module, opcode_module = load_schema(workdir)
    op_names = {v: k for k, v in vars(opcode_module.OpCode).items() if not k.startswith("_")}
    buf = Path(path).read_bytes()
    check(model_module.Model.ModelBufferHasIdentifier(buf, 0), "file identifier is not AOTC")
    model = model_module.Model.GetRootAs(buf, 0)
    producer = model.Producer()
    check(producer.Name() == b"aotc-export-torch" and producer.Source() == source.encode(),
          f"producer {producer.Name()} / {producer.Source()}")
    check(model.Buffers(0).DataLength() == 0, "buffers[0] is not the empty sentinel")

    tensors = [model.Tensors(i) for i in range(model.TensorsLength())]
    names = [t.Name() for t in tensors]
    check(len(set(names)) == len(names), "tensor names are not unique")
    defined = {i for i in range(len(tensors)) if tensors[i].Buffer() != 0}
    for i in defined:
        data = model.Buffers(tensors[i].Buffer())
        check(data.DataLength() == 4 * int(np.prod(tensors[i].ShapeAsNumpy())),
              f"constant {names[i]}: {data.DataLength()} bytes for shape "
              f"{list(tensors[i].ShapeAsNumpy())}")
        check(data._tab.Vector(4) % 16 == 0, f"constant {names[i]} is not 16-byte aligned")
    inputs = list(model.InputsAsNumpy())
    check([list(tensors[i].ShapeAsNumpy()) for i in inputs] == input_shapes,
          f"input shapes {[list(tensors[i].ShapeAsNumpy()) for i in inputs]}")
    defined.update(inputs)

    histogram = collections.Counter()
    for n in range(model.NodesLength()):
        node = model.Nodes(n)
        histogram[op_names[node.Op()]] += 1
        for i in node.InputsAsNumpy():
            check(i in defined, f"node {node.Name()} reads {names[i]} before it is defined")
        for i in node.OutputsAsNumpy():
            check(i not in defined, f"node {node.Name()} redefines {names[i]}")
            defined.add(i)
    outputs = list(model.OutputsAsNumpy())
    check(all(i in defined for i in outputs), "an output is never defined")
    sizes = [int(np.prod(tensors[i].ShapeAsNumpy())) for i in outputs]
    check(sizes == output_sizes, f"output sizes {sizes}, PyTorch's {output_sizes}")
    print(f"exported: {dict(histogram)}")
    return histogram


# ---- Checks through aotc ---------------------------------------------------------------------


def graph_ops(graph_text):
    """(op, epilogue) of every node line of the IR text form."""
    node = re.compile(r'^\s*%(?:"[^"]*"|\S+) = ([a-z_0-9]+)\(.*?\)(?: \{.*\})?'
                      r'(?: epilogue\[(.*)\])?: ')
    return [(m.group(1), m.group(2) or "") for m in map(node.match, graph_text.splitlines()) if m]


def compare(what, got_path, ref):
    got = np.fromfile(got_path, dtype="<f4")
    check(got.size == ref.size, f"{what}: {got.size} values, expected {ref.size}")
    ratio = float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))
    print(f"{what}: max|diff| / max|ref| = {ratio:.3g} (tolerance {TOLERANCE:g})")
    check(ratio <= TOLERANCE, f"{what}: ratio {ratio:.3g} exceeds {TOLERANCE:g}")


def check_against_pytorch(args, model_fb, ref_dir):
    ref = np.fromfile(ref_dir / "output.bin", dtype="<f4")
    inputs = [ref_dir / "input.bin"] if (ref_dir / "input.bin").exists() else sorted(
        ref_dir.glob("input*.bin"), key=lambda p: int(p.stem[len("input"):]))
    input_flags = [flag for path in inputs for flag in ("--input", path)]
    raw, opt = args.workdir / "unoptimised.bin", args.workdir / "optimised.bin"
    run([args.aotc, model_fb, "--passes=", "--emit=run", *input_flags, "-o", raw])  # no passes
    run([args.aotc, model_fb, "--emit=run", *input_flags, "-o", opt])
    compare("unoptimised vs PyTorch", raw, ref)
    compare("optimised vs PyTorch", opt, ref)
    compare("optimised vs unoptimised", opt, np.fromfile(raw, dtype="<f4"))

    ops = graph_ops(run([args.aotc, model_fb, "--emit=graph"]).stdout)
    check(ops, "aotc --emit=graph printed no nodes")
    left = [op for op, _ in ops if op == "batch_norm"]
    check(not left, f"{len(left)} batch_norm node(s) left after the default pipeline")


# ---- Cases ---------------------------------------------------------------------------------


def export(args, model, size):
    """The exported model and its reference directory at SxS: from --exports if given,
    else exported into the workdir."""
    if args.exports:
        shared = args.exports / f"{model}_{size}"
        return shared / f"{model}.fb", shared / "reference"
    model_fb, ref_dir = args.workdir / f"{model}.fb", args.workdir / "reference"
    run([args.exporter, "--model", model, "-o", model_fb, "--input-shape", f"1,3,{size},{size}",
         "--reference", ref_dir])
    return model_fb, ref_dir


def case_export(args):
    args.exports = None
    export(args, args.model, args.size)


def case_model(args):
    model_fb, ref_dir = export(args, args.model, args.size)
    shape = [1, 3, args.size, args.size]
    histogram = check_exported_file(model_fb, args.workdir, [shape], [1000],
                                    f"torchvision.models.{args.model}")
    check(histogram == EXPECTED_OPS[args.model],
          f"op counts {dict(histogram)}, expected {EXPECTED_OPS[args.model]}")
    check_against_pytorch(args, model_fb, ref_dir)


def case_module(args):
    model_fb, ref_dir = args.workdir / "module.fb", args.workdir / "reference"
    run([args.exporter, "--module", args.module, "-o", model_fb, "--input-shape",
         args.input_shape, "--reference", ref_dir])
    shape = [int(d) for d in args.input_shape.split(",")]
    histogram = check_exported_file(model_fb, args.workdir, [shape], args.output_sizes,
                                    args.module)
    _, opcode_module = load_schema(args.workdir)
    # Quantize and Dequantize come only from a quantized export (--quantize-calibration), which
    # samples.fashion_mnist_int8_accuracy checks.
    all_ops = {k for k in vars(opcode_module.OpCode) if not k.startswith("_")} - {"Quantize", "Dequantize"}
    check(set(histogram) == all_ops, f"ops never exported: {sorted(all_ops - set(histogram))}")
    check_against_pytorch(args, model_fb, ref_dir)


def case_state_dict(args):
    import torch

    module_path, _, class_name = args.module.rpartition(":")
    spec = importlib.util.spec_from_file_location(Path(module_path).stem, module_path)
    user_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(user_module)
    torch.manual_seed(1234)
    model = getattr(user_module, class_name)().eval()
    with torch.no_grad():  # weights unlike any the exporter would draw
        for value in model.state_dict().values():
            if value.is_floating_point():
                value.uniform_(0.5, 1.0)
    weights = args.workdir / "weights.pt"
    torch.save(model.state_dict(), weights)

    model_fb, ref_dir = args.workdir / "module.fb", args.workdir / "reference"
    run([args.exporter, "--module", args.module, "--state-dict", weights, "-o", model_fb,
         "--input-shape", args.input_shape, "--reference", ref_dir])
    model_module, _ = load_schema(args.workdir)
    exported = model_module.Model.GetRootAs(model_fb.read_bytes(), 0)
    constants = {}
    for i in range(exported.TensorsLength()):
        t = exported.Tensors(i)
        if t.Buffer():
            constants[t.Name().decode()] = exported.Buffers(t.Buffer()).DataAsNumpy().view("<f4")
    for name, value in model.state_dict().items():
        if name in constants:
            check(np.array_equal(constants[name], value.numpy().ravel()),
                  f"exported {name} differs from the state dict")
    check("stem.weight" in constants, "stem.weight was not exported under its name")

    x = torch.from_numpy(np.fromfile(ref_dir / "input.bin", dtype="<f4"))
    with torch.no_grad():
        outputs = model(x.reshape([int(d) for d in args.input_shape.split(",")]))
    expected = np.concatenate([o.numpy().ravel() for o in outputs])
    compare("reference output vs PyTorch with the state dict", ref_dir / "output.bin", expected)
    check_against_pytorch(args, model_fb, ref_dir)


def case_resnet18_graph(args):
    model_fb = args.workdir / "resnet18.fb"
    run([args.exporter, "--model", "resnet18", "-o", model_fb])
    result = run([args.aotc, model_fb, "--emit=graph", "--stats"])
    print(result.stderr)
    ops = graph_ops(result.stdout)
    counts = collections.Counter(op for op, _ in ops)
    print(f"optimised graph: {dict(counts)}")
    check(counts["conv2d"] == 20, f"{counts['conv2d']} conv2d nodes, expected 20")
    for gone in ("batch_norm", "dropout", "flatten", "relu"):
        check(counts[gone] == 0, f"{counts[gone]} {gone} node(s) left")
    check(counts["add"] == 0, f"{counts['add']} add node(s) left")
    # Each block's residual add and ReLU fuse into the conv that runs last in it.
    residual = [epilogue for op, epilogue in ops if op == "conv2d" and epilogue.startswith("add(")]
    check(len(residual) == 8 and all(e.endswith(", relu") for e in residual),
          f"conv2d residual epilogues {residual}, expected 8 x add(...), relu")
    # The stem conv and the first conv of each of the 8 blocks are followed by a ReLU.
    conv_relu = [op for op, epilogue in ops if op == "conv2d" and epilogue == "relu"]
    check(len(conv_relu) == 9, f"{len(conv_relu)} conv2d nodes with epilogue[relu], expected 9")
    stats = result.stderr.split("final graph:", 1)[-1]
    histogram = {m.group(1): int(m.group(2))
                 for m in re.finditer(r"^\s+([a-z_0-9+]+):?\s+(\d+)\s*$", stats, re.M)}
    for ops_and_epilogue, count in (("conv2d+relu", 9), ("conv2d", 3), ("conv2d+add+relu", 8)):
        check(histogram.get(ops_and_epilogue) == count,
              f"--stats final histogram says {ops_and_epilogue}: "
              f"{histogram.get(ops_and_epilogue)}, expected {count}")


def case_library(args):
    import json

    model_fb, ref_dir = export(args, args.model, args.size)
    out = args.workdir / "lib"
    run([args.aotc, model_fb, "--emit=lib", "--target", args.target, "-o", out])
    for produced in (f"lib{args.model}.a", f"{args.model}.h", f"{args.model}.report.json", "aotc/aotc.h"):
        check((out / produced).exists(), f"--emit=lib did not write {produced}")
    report = json.loads((out / f"{args.model}.report.json").read_text())
    totals = report["totals"]
    print(f"compile {totals['compile_seconds']:.1f} s, library {totals['library_bytes'] / 2**20:.1f} MiB, "
          f"{totals['layers']} layers, {totals['kernels']} kernels")
    run_library(args, args.target, out, args.workdir / "library.bin", ref_dir / "input.bin")
    compare(f"library ({args.target}) vs PyTorch", args.workdir / "library.bin", np.fromfile(ref_dir / "output.bin", dtype="<f4"))
    if args.target != "host":
        # The ARM library against the x86-64 one, on the same input.
        host_out = args.workdir / "host_lib"
        run([args.aotc, model_fb, "--emit=lib", "-o", host_out])
        run_library(args, "host", host_out, args.workdir / "host_library.bin", ref_dir / "input.bin")
        compare(f"library ({args.target}) vs the x86-64 library", args.workdir / "library.bin",
                np.fromfile(args.workdir / "host_library.bin", dtype="<f4"))


def run_library(args, target, lib_dir, output, model_input):
    """Links run_library.c against lib_dir's library for `target` and runs it (under qemu
    for an ARM target) on model_input, writing output."""
    exe = lib_dir / "run_library"
    cc, emulator, _ = cross_targets.toolchain(target)
    # A C program linking only the library, -lpthread and -ldl (and libm, as any C program may).
    run([cc, "-std=c11", "-O2", f"-DAOTC_MODEL={args.model}", "-I", lib_dir, HERE.parent.parent / "tools" / "run_library.c",
         lib_dir / f"lib{args.model}.a", "-lpthread", "-ldl", "-lm", "-o", exe])
    run(emulator + [exe, output, model_input])


PLAN_SLACK = 1.05  # arena bytes may exceed the liveness lower bound by at most 5%


def case_memory_plan(args):
    line = re.compile(r"memory plan: arena (\d+) bytes, liveness lower bound (\d+) bytes .*naive sum (\d+) bytes")
    failures = []
    for model in EXPECTED_OPS:
        model_fb, _ = export(args, model, 224)
        stats = run([args.aotc, model_fb, "--emit=plan", "--stats", "-o", args.workdir / f"{model}.plan"]).stderr
        match = line.search(stats)
        check(match, f"{model}: no memory plan line in --stats")
        arena, bound, naive = (int(v) for v in match.groups())
        print(f"{model:14s} arena {arena:>10d}  lower bound {bound:>10d}  naive {naive:>11d}  "
              f"arena/bound {arena / bound:.3f}  naive/arena {naive / arena:.1f}")
        if arena > PLAN_SLACK * bound:
            failures.append(model)
        if not args.exports:
            model_fb.unlink()  # the exports are large; keep the plans only
    check(not failures, f"arena above {PLAN_SLACK}x the lower bound: {failures}")


# Module of unsupported_ops.py -> what the refusal must say.
UNSUPPORTED = {
    "SortsChannels": "unsupported: node 'sort' calls torch.sort (supported: ",
    "GeluActivation": "unsupported: node 'act' calls module 'act' (nn.GELU)",
    "ReflectPadConv": "unsupported: node 'conv': Conv2d padding_mode='reflect'",
    "ShapeIntoArithmetic": "node 'mul' (operator.mul) uses the shape value 'getitem'",
    "ReadAfterInPlace": "node 'relu' modifies 'mul' in place and 'add' reads it afterwards",
    "DataDependentBranch": "torch.fx cannot trace DataDependentBranch: TraceError: "
                           "symbolically traced variables cannot be used as inputs to control flow",
}


def case_unsupported(args):
    for module, expected in UNSUPPORTED.items():
        out = args.workdir / f"{module}.fb"
        result = run([args.exporter, "--module", f"{HERE / 'unsupported_ops.py'}:{module}",
                      "--input-shape", "1,3,8,8", "-o", out], expect_rc=3)
        message = result.stderr.strip().splitlines()[-1]
        print(message[:200])
        check(message.startswith("aotc-export-torch: ") and expected in message,
              f"{module}: message does not contain {expected!r}")
        check(not out.exists(), f"{module}: a refused export left {out}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--case", required=True,
                   choices=["model", "module", "state-dict", "resnet18-graph", "unsupported",
                            "memory-plan", "library", "export"])
    p.add_argument("--aotc", type=Path, required=True)
    p.add_argument("--exporter", type=Path, required=True)
    p.add_argument("--workdir", type=Path, required=True)
    p.add_argument("--model")
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--target", default="host", help="aotc --target for --case library")
    p.add_argument("--exports", type=Path, help="read the exports of --case export from DIR/NAME_SIZE/")
    p.add_argument("--module")
    p.add_argument("--input-shape")
    p.add_argument("--output-sizes", type=lambda s: [int(v) for v in s.split(",")],
                   help="element count of each graph output (--case module)")
    args = p.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    case = {"model": case_model, "module": case_module, "state-dict": case_state_dict,
            "resnet18-graph": case_resnet18_graph, "unsupported": case_unsupported,
            "memory-plan": case_memory_plan, "library": case_library, "export": case_export}[args.case]
    try:
        case(args)
    except TestFailure as e:
        print(f"FAILED: {e}")
        return 1
    print("PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
