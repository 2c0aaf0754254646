#!/usr/bin/python3
"""Checks `aotc MODEL --emit=graph` on a real TensorFlow Lite model against an
independent reading of the file (Python FlatBuffers code that flatc generates from
schemas/tflite.fbs), and that damaged copies of it are rejected without a crash.

  check_model.py --aotc AOTC --flatc FLATC --schema tflite.fbs MODEL.tflite

Until TFLite ops are lowered to the IR, aotc ends with exit code 3 and the op
census; this checks every count of that census. Exit status 75 (skipped) when the
model was not fetched (tools/fetch-mediapipe-models could not reach npm).
"""
import argparse
import collections
import os
import subprocess
import sys
import tempfile

SKIPPED = 75
INVALID_MODEL, UNSUPPORTED = 2, 3
FLOAT16 = 1


def load_schema_module(flatc, schema, work):
    subprocess.run([flatc, "--python", "-o", work, schema], check=True)
    sys.path.insert(0, work)
    from aotc.tfl.BuiltinOperator import BuiltinOperator
    from aotc.tfl.Model import Model
    names = {value: name for name, value in vars(BuiltinOperator).items() if not name.startswith("_")}
    return Model, names


def census(model_class, op_names, data):
    """Op name -> count of the main subgraph, and whether any tensor is float16 / sparse."""
    model = model_class.GetRootAs(data, 0)
    codes = []
    for i in range(model.OperatorCodesLength()):
        code = model.OperatorCodes(i)
        builtin = max(code.DeprecatedBuiltinCode(), code.BuiltinCode())
        codes.append("CUSTOM(%s)" % code.CustomCode().decode() if op_names[builtin] == "CUSTOM" else op_names[builtin])
    graph = model.Subgraphs(0)
    counts = collections.Counter(codes[graph.Operators(i).OpcodeIndex()] for i in range(graph.OperatorsLength()))
    tensors = [graph.Tensors(i) for i in range(graph.TensorsLength())]
    has_float16 = any(t.Type() == FLOAT16 for t in tensors)
    has_sparse = any(t.Sparsity() is not None for t in tensors)
    # Where the length of the main subgraph's tensor vector lies, for a bit flip.
    table = graph._tab
    tensors_length_at = table.Vector(table.Offset(4)) - 4
    return counts, has_float16, has_sparse, tensors_length_at


def run_aotc(aotc, path):
    result = subprocess.run([aotc, path, "--emit=graph"], capture_output=True, text=True, timeout=120)
    return result.returncode, result.stdout + result.stderr


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--aotc", required=True)
    parser.add_argument("--flatc", required=True)
    parser.add_argument("--schema", required=True)
    parser.add_argument("model")
    args = parser.parse_args()
    if not os.path.exists(args.model):
        print("SKIPPED: %s was not fetched (see the tflite.fetch test)" % args.model)
        return SKIPPED
    data = open(args.model, "rb").read()
    failures = []

    with tempfile.TemporaryDirectory() as work:
        model_class, op_names = load_schema_module(args.flatc, args.schema, work)
        counts, has_float16, has_sparse, tensors_length_at = census(model_class, op_names, data)

        code, message = run_aotc(args.aotc, args.model)
        print("aotc:", message.strip())
        print("expected census:", dict(counts))
        if code != UNSUPPORTED:
            failures.append("exit code %d, expected %d" % (code, UNSUPPORTED))
        if "recognised but not yet lowered" not in message:
            failures.append("the message does not say the graph is recognised but not yet lowered")
        if "(%d operators: " % sum(counts.values()) not in message:
            failures.append("the message does not give %d operators" % sum(counts.values()))
        listed = message.split(" operators: ", 1)[-1].rstrip().rstrip(")")
        for name, count in counts.items():
            if "%s x%d" % (name, count) not in listed.split(", "):
                failures.append("the census lacks %s x%d" % (name, count))
        if len(listed.split(", ")) != len(counts):
            failures.append("the census lists %d ops, the file has %d" % (len(listed.split(", ")), len(counts)))
        if has_float16 and "DEQUANTIZE x" not in message:
            failures.append("float16 constants but no DEQUANTIZE in the census")
        if has_sparse and "DENSIFY x" not in message:
            failures.append("sparse constants but no DENSIFY in the census")

        # Damaged copies: invalid (2), never a crash or an internal error.
        flipped = bytearray(data)
        flipped[tensors_length_at + 3] ^= 0x40  # the tensor vector claims 2^30 more entries
        damaged = {"truncated": (data[:len(data) // 2], [INVALID_MODEL]),
                   "bitflip_tensor_count": (bytes(flipped), [INVALID_MODEL])}
        # Bits flipped in the first 4 KiB (tables, not weights): rejected or still
        # well-formed, but handled.
        for k, position in enumerate(range(0, min(len(data), 4096) * 8, 4096 * 8 // 16)):
            copy = bytearray(data)
            copy[position // 8] ^= 1 << (position % 8)
            damaged["bitflip_%d" % k] = (bytes(copy), [INVALID_MODEL, UNSUPPORTED])
        for name, (content, allowed) in damaged.items():
            path = os.path.join(work, name + ".tflite")
            with open(path, "wb") as f:
                f.write(content)
            code, message = run_aotc(args.aotc, path)
            if code not in allowed:
                failures.append("%s: exit code %d (expected %s): %s" % (name, code, allowed, message.strip()))

    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
