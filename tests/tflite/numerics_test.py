#!/usr/bin/python3
"""aotc's numbers on TensorFlow Lite models against an independent executor.

  numerics_test.py --aotc AOTC --flatc FLATC --model M.tflite --input-range=LO,HI [--seed S]

The independent executor is tools/tflite-reference: Arm NN 20.08 (TfLiteParser, CpuRef
backend) on the model with its float16 / sparse constants folded (tools/tflite-fold-constants).
Arm NN 20.08 lacks DEPTH_TO_SPACE and MediaPipe's Convolution2DTransposeBias and ignores
half_pixel_centers in RESIZE_BILINEAR; those operators are computed by NumPy after TFLite's
reference kernels (--numpy-ops; tools_test.py checks those kernels against TFLite's own
test vectors), and the output names each operator so computed. check_ops.py tests those
operators one by one.

Two sets of inputs: fresh random ones, uniform in the model's input range (the seed is
printed; --seed repeats a run), and scikit-image's astronaut photo scaled to that range (on
noise the segmentation models answer ~0 everywhere). Three comparisons on each, output by
output:
  aotc --emit=run (the reference evaluator)      vs tflite-reference: the frontend's lowering
  the library (aotc --emit=lib, run_library.c)   vs tflite-reference: the whole compiler
  the library                                    vs aotc --emit=run:  code generation alone

Tolerance: max|diff| <= 1e-3 * max(1, max|ref|) per output; the printed ratio is
max|diff| / max(1, max|ref|). Exit status 75 (skipped) when the model was not fetched.
"""
import argparse
import importlib
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent.parent

SKIPPED = 75
TOLERANCE = 1e-3
REFERENCE = ROOT / "tools" / "tflite-reference"
RUN_LIBRARY = ROOT / "tools" / "run_library.c"


class TestFailure(Exception):
    pass


def run(cmd, what):
    print("$ " + " ".join(str(c) for c in cmd), flush=True)
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if result.returncode != 0:
        sys.stdout.write(result.stdout[-4000:] + result.stderr[-4000:])
        raise TestFailure("%s: exit code %d" % (what, result.returncode))
    return result


def io_shapes(flatc, path, work):
    """[(name, shape)] of the main subgraph's inputs and of its outputs, read through the
    Python code flatc generates from schemas/tflite.fbs."""
    subprocess.run([flatc, "--python", "-o", work / "schema-py", ROOT / "schemas" / "tflite.fbs"], check=True)
    sys.path.insert(0, str(work / "schema-py"))
    model = importlib.import_module("aotc.tfl.Model").Model.GetRootAs(path.read_bytes(), 0)
    graph = model.Subgraphs(0)
    describe = lambda t: (graph.Tensors(t).Name().decode(), [int(d) for d in graph.Tensors(t).ShapeAsNumpy()])
    return ([describe(graph.Inputs(i)) for i in range(graph.InputsLength())],
            [describe(graph.Outputs(i)) for i in range(graph.OutputsLength())])


def compare(what, got_path, ref_path, outputs):
    """Each output of got against ref; returns the failures."""
    got, ref = np.fromfile(got_path, dtype="<f4"), np.fromfile(ref_path, dtype="<f4")
    sizes = [int(np.prod(shape)) for _, shape in outputs]
    if got.size != sum(sizes) or ref.size != sum(sizes):
        return ["%s: %d and %d values, the outputs have %d" % (what, got.size, ref.size, sum(sizes))]
    failures = []
    offset = 0
    for (name, shape), size in zip(outputs, sizes):
        g, r = got[offset:offset + size], ref[offset:offset + size]
        offset += size
        diff, scale = float(np.max(np.abs(g - r))), max(1.0, float(np.max(np.abs(r))))
        ratio = diff / scale
        print("%-44s %-28s %-14s max|diff| %.3g, max|ref| %.4g, ratio %.3g (tolerance %g)%s"
              % (what, name, shape, diff, float(np.max(np.abs(r))), ratio, TOLERANCE,
                 "" if ratio <= TOLERANCE else "  FAIL"))
        if not np.all(np.isfinite(g)) or not ratio <= TOLERANCE:
            failures.append("%s, output %s: ratio %.3g exceeds %g" % (what, name, ratio, TOLERANCE))
    return failures


def build_library(args, model, name, work):
    """Compiles model into lib<name>.a, links run_library.c; returns the executable."""
    out = work / "lib"
    run([args.aotc, model, "--emit=lib", "--name", name, "-o", out], "aotc --emit=lib")
    exe = work / "run_library"
    run(["cc", "-std=c11", "-O2", "-DAOTC_MODEL=%s" % name, "-I", out, RUN_LIBRARY, out / ("lib%s.a" % name),
         "-lpthread", "-ldl", "-lm", "-o", exe], "linking run_library.c")
    return exe


def fresh_inputs(args, inputs, work):
    """One random input file per graph input, uniform in the input range; returns the paths."""
    low, high = args.input_range
    seed = args.seed if args.seed is not None else secrets.randbits(32)
    print("random inputs uniform in [%g, %g], seed %d (--seed %d repeats this run)" % (low, high, seed, seed))
    rng = np.random.default_rng(seed)
    paths = []
    for k, (name, shape) in enumerate(inputs):
        paths.append(work / ("input%d.bin" % k))
        rng.uniform(low, high, size=shape).astype("<f4").tofile(paths[-1])
    return paths


def photo_input(args, inputs, work):
    """The astronaut photo of scikit-image, resized to the one [1, H, W, 3] input and scaled
    to the input range: a picture the models see something in (on noise the segmentation
    models answer ~0 everywhere, which any tolerance of 1e-3 accepts). None for other inputs."""
    if len(inputs) != 1 or len(inputs[0][1]) != 4 or inputs[0][1][0] != 1 or inputs[0][1][3] != 3:
        return None
    try:
        import skimage.data
        import skimage.transform
    except ImportError as e:
        raise TestFailure("%s: tools/setup.sh installs python3-skimage" % e)
    low, high = args.input_range
    image = skimage.transform.resize(skimage.data.astronaut(), inputs[0][1][1:3], anti_aliasing=True)
    path = work / "input0.bin"
    (low + (high - low) * image[None]).astype("<f4").tofile(path)
    print("the astronaut photo (skimage.data.astronaut) resized to %s, scaled to [%g, %g]"
          % (inputs[0][1][1:3], low, high))
    return [path]


def check_inputs(args, label, input_files, outputs, library_exe, work):
    """The reference, the evaluator and the library (when built) on one set of inputs;
    returns the failures."""
    reference, evaluated, library = work / "reference.bin", work / "evaluator.bin", work / "library.bin"
    result = run([REFERENCE, args.model, reference, *input_files, "--numpy-ops", "--flatc", args.flatc],
                 "tflite-reference")
    print(result.stdout, end="")
    executor = "Arm NN + NumPy" if "computed by NumPy" in result.stdout else "Arm NN"
    run([args.aotc, args.model, "--emit=run", *[f for path in input_files for f in ("--input", path)],
         "-o", evaluated], "aotc --emit=run")
    failures = compare("%s: evaluator vs %s" % (label, executor), evaluated, reference, outputs)
    if library_exe:
        run([library_exe, library, *input_files], "run_library")
        failures += (compare("%s: library vs %s" % (label, executor), library, reference, outputs)
                     + compare("%s: library vs evaluator" % label, library, evaluated, outputs))
    return failures


def check_model(args, work):
    """The three executors on fresh random inputs and on a photo; returns the failures."""
    inputs, outputs = io_shapes(args.flatc, args.model, work)
    print("model %s: inputs %s, outputs %s" % (args.model.name, inputs, outputs))
    try:  # the evaluator's comparisons stand also when the library cannot be built
        library_exe, failures = build_library(args, args.model, args.model.stem, work), []
    except TestFailure as e:
        library_exe, failures = None, [str(e)]
    for label, make_inputs in (("random", fresh_inputs), ("photo", photo_input)):
        (work / label).mkdir(exist_ok=True)
        input_files = make_inputs(args, inputs, work / label)
        if input_files:
            failures += check_inputs(args, label, input_files, outputs, library_exe, work / label)
    return failures


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--aotc", type=Path, required=True)
    p.add_argument("--flatc", type=Path, required=True)
    p.add_argument("--model", type=Path, required=True)
    p.add_argument("--input-range", type=lambda s: [float(v) for v in s.split(",")], required=True,
                   help="LOW,HIGH: the inputs are drawn uniformly from this range")
    p.add_argument("--seed", type=int)
    p.add_argument("--workdir", type=Path, help="keep the files here (default: a temporary directory)")
    args = p.parse_args()
    if not args.model.exists():
        print("SKIPPED: %s was not fetched (see the tflite.fetch test)" % args.model)
        return SKIPPED
    with tempfile.TemporaryDirectory() as temporary:
        work = args.workdir or Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        try:
            failures = check_model(args, work)
        except TestFailure as e:
            failures = [str(e)]
    for failure in failures:
        print("FAILED: " + failure)
    if not failures:
        print("PASSED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
