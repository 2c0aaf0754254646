#!/usr/bin/python3
"""Writes the ONNX reader's corpus: small valid models that must load, and damaged,
hostile or unsupported ones that must be refused with a given exit code and message
(expectations.tsv), all built with onnx.helper. The files also seed the ONNX fuzzer.

    make_corpus.py OUT_DIR            writes OUT_DIR/{valid,invalid}/*.onnx and expectations.tsv
    make_corpus.py --check OUT_DIR    exits 1 if the checked-in corpus differs from what it writes
"""
import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HEADER = "# invalid/FILE<TAB>exit code<TAB>fragment of the one-line message (written by make_corpus.py)\n"


def model(nodes, inputs, outputs, initializers=(), opset=13, name="g"):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    m = helper.make_model(graph, producer_name="aotc-corpus", opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def tensor_input(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def weight(name, shape, seed):
    rng = np.random.default_rng(seed)
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)


def conv_relu(opset=13, pads=(1, 1, 1, 1), x_shape=(1, 3, 8, 8)):
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=list(pads)),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    return model(nodes, [tensor_input("x", list(x_shape))], [tensor_input("y", [x_shape[0], 4, x_shape[2], x_shape[3]])],
                 [weight("w", (4, 3, 3, 3), 1), weight("b", (4,), 2)], opset=opset)


def conv_relu_external(location):
    """conv_relu with its weight's data in the external file `location`."""
    m = conv_relu()
    w = m.graph.initializer[0]
    w.ClearField("raw_data")
    w.ClearField("float_data")
    w.data_location = TensorProto.EXTERNAL
    w.external_data.add(key="location", value=location)
    return m


def valid_models():
    yield "conv_relu", conv_relu()
    # QDQ as quantization tools write it: a uint8 activation quantized and dequantized, an
    # int8 weight per output channel behind a DequantizeLinear.
    qdq = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="quant"),
           helper.make_node("DequantizeLinear", ["q", "s", "z"], ["xd"], name="dequant"),
           helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["w"], name="weight", axis=0),
           helper.make_node("Conv", ["xd", "w"], ["y"], name="conv")]
    yield "qdq_conv", model(qdq, [tensor_input("x", [1, 3, 4, 4])], [tensor_input("y", [1, 2, 2, 2])],
                            [numpy_helper.from_array(np.array(0.1, dtype=np.float32), "s"),
                             numpy_helper.from_array(np.array(128, dtype=np.uint8), "z"),
                             numpy_helper.from_array(np.arange(-27, 27, dtype=np.int8).reshape(2, 3, 3, 3), "wq"),
                             numpy_helper.from_array(np.array([0.5, 0.25], dtype=np.float32), "ws"),
                             numpy_helper.from_array(np.array([0, 0], dtype=np.int8), "wz")])
    yield "conv_relu_opset7", conv_relu(opset=7)
    conv1d = [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1d")]
    yield "conv1d", model(conv1d, [tensor_input("x", [1, 3, 8])], [tensor_input("y", [1, 4, 6])],
                          [weight("w", (4, 3, 3), 5)])
    gemm = [helper.make_node("Flatten", ["x"], ["f"], name="flatten"),
            helper.make_node("Gemm", ["f", "w", "b"], ["y"], name="fc", transB=1)]
    yield "flatten_gemm", model(gemm, [tensor_input("x", [1, 2, 2, 2])], [tensor_input("y", [1, 5])],
                                [weight("w", (5, 8), 3), weight("b", (5,), 4)])
    shape_arith = [helper.make_node("Shape", ["x"], ["s"], name="shape"),
                   helper.make_node("Gather", ["s", "zero"], ["n"], name="batch", axis=0),
                   helper.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsqueeze"),
                   helper.make_node("Concat", ["n1", "minus_one"], ["target"], name="target", axis=0),
                   helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape")]
    yield "shape_arithmetic", model(
        shape_arith, [tensor_input("x", [2, 3, 4, 4])], [tensor_input("y", [2, 48])],
        [numpy_helper.from_array(np.array(0, dtype=np.int64), "zero"),
         numpy_helper.from_array(np.array([0], dtype=np.int64), "axes"),
         numpy_helper.from_array(np.array([-1], dtype=np.int64), "minus_one")])
    # Resizes no IR resize samples alike: by sampling matrices (cubic by a fractional scale,
    # then a crop-and-resize that extrapolates).
    resizes = [helper.make_node("Resize", ["x", "", "scales"], ["c"], name="cubic", mode="cubic",
                                exclude_outside=1, cubic_coeff_a=-0.5),
               helper.make_node("Resize", ["c", "roi", "", "sizes"], ["y"], name="crop", mode="linear",
                                coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=10.0)]
    yield "resize_matrices", model(
        resizes, [tensor_input("x", [1, 2, 5, 5])], [tensor_input("y", [1, 2, 3, 4])],
        [numpy_helper.from_array(np.array([1, 1, 1.3, 0.7], dtype=np.float32), "scales"),
         numpy_helper.from_array(np.array([0, 0, 0.4, -0.2, 1, 1, 1.2, 0.9], dtype=np.float32), "roi"),
         numpy_helper.from_array(np.array([1, 2, 3, 4], dtype=np.int64), "sizes")])


def resize_to(scales):
    node = [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="resize", mode="linear")]
    return model(node, [tensor_input("x", [1, 1, 4, 4])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, list("nchw"))],
                 [numpy_helper.from_array(np.array(scales, dtype=np.float32), "scales")])


def invalid_models():
    """(name, bytes or model, exit code, message fragment)."""
    good = conv_relu().SerializeToString()
    yield "truncated", good[: len(good) // 2], 2, "do not parse as an ONNX ModelProto"
    yield "garbage", bytes(range(7, 200)), 2, "do not parse as an ONNX ModelProto"
    cycle = [helper.make_node("Relu", ["b"], ["a"], name="r1"), helper.make_node("Relu", ["a"], ["b"], name="r2")]
    yield "cycle", model(cycle, [tensor_input("x", [1, 2])], [tensor_input("b", [1, 2])]), 2, "checker refuses"
    dangling = [helper.make_node("Relu", ["nowhere"], ["y"], name="r")]
    yield "dangling_input", model(dangling, [tensor_input("x", [1, 2])], [tensor_input("y", [1, 2])]), 2, \
        "checker refuses"
    contradiction = conv_relu()
    contradiction.graph.output[0].CopyFrom(tensor_input("y", [1, 4, 5, 5]))
    yield "shape_contradiction", contradiction, 2, "shape inference refuses"
    yield "opset_too_new", conv_relu(opset=18), 3, "opset 18 of the default domain; aotc reads opsets 7 to 17"
    no_opset = conv_relu()
    del no_opset.opset_import[:]
    yield "no_default_opset", no_opset, 2, "imports no opset of the default ONNX domain"
    unsupported = [helper.make_node("Erf", ["x"], ["e"], name="erf1"), helper.make_node("Erf", ["e"], ["f"], name="erf2"),
                   helper.make_node("Sin", ["f"], ["y"], name="sin")]
    yield "unsupported_ops", model(unsupported, [tensor_input("x", [1, 2])], [tensor_input("y", [1, 2])]), 3, \
        "unsupported operators at opset 13: Erf x2 (erf1, erf2); Sin x1 (sin)"
    quantized = [helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"], name="dynamic"),
                 helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], name="dequant")]
    yield "quantized", model(quantized, [tensor_input("x", [1, 2])], [tensor_input("y", [1, 2])]), 3, \
        "quantized model: 1 quantized operators (DynamicQuantizeLinear x1 (dynamic))"
    # uint8 inputs read otherwise than by a DequantizeLinear or QOperator: cast to float, or passed through,
    # where nothing says their scale.
    yield "quantized_input_cast", model(
        [helper.make_node("Cast", ["x"], ["y"], name="cast", to=TensorProto.FLOAT)],
        [tensor_input("x", [1, 2], TensorProto.UINT8)], [tensor_input("y", [1, 2])]), 3, \
        "'x' (u8) is read by an operator aotc computes in float32 only; an integer tensor is read by DequantizeLinear, " \
        "QLinearConv and QLinearMatMul only"
    yield "quantized_input_unread", model(
        [helper.make_node("Identity", ["x"], ["y"], name="identity")],
        [tensor_input("x", [1, 2], TensorProto.UINT8)], [tensor_input("y", [1, 2], TensorProto.UINT8)]), 3, \
        "graph input 'x' (u8) is read by no DequantizeLinear, QLinearConv or QLinearMatMul, which would give its " \
        "scale and zero point"
    symbolic = conv_relu()
    symbolic.graph.input[0].CopyFrom(helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 8, 8]))
    yield "symbolic_batch", symbolic, 3, "dim 0 is 'batch'; aotc compiles fixed shapes: fix it with --input-shape x="
    weights_as_input = conv_relu()
    del weights_as_input.graph.initializer[0]
    weights_as_input.graph.input.append(tensor_input("w", [4, 3, 3, 3]))
    yield "weights_as_input", weights_as_input, 3, "weight 'w' is computed at run time"
    yield "external_data_outside", conv_relu_external("../outside.bin"), 2, "leaves the model's folder"
    yield "external_data_missing", conv_relu_external("missing.bin"), 4, "does not exist or is not a file"
    short = conv_relu()
    short.graph.initializer[1].raw_data = short.graph.initializer[1].raw_data[:8]
    yield "short_initializer", short, 2, "initializer 'b': holds 2 values but its dims [4] need 4"
    int_input = conv_relu()
    int_input.graph.input[0].CopyFrom(tensor_input("x", [1, 3, 8, 8], TensorProto.INT32))
    yield "int_input", int_input, 3, "graph input 'x' has element type INT32; aotc compiles float32 inputs"
    # Found by the fuzzer: libonnx 1.12's shape inference dereferences null on a Conv over a
    # 2-D input; aotc runs it in a child process and reports the crash as the file's fault.
    conv2d_input = [helper.make_node("Conv", ["x", "w"], ["y"], name="conv")]
    yield "conv_on_2d_input", model(conv2d_input, [tensor_input("x", [1, 3])], [tensor_input("y", [64, 4, 6])],
                                    [weight("w", (4, 3, 3), 5)]), 2, "ONNX's shape inference crashed on the model"
    conv3d = [helper.make_node("Conv", ["x", "w"], ["y"], name="conv3d")]
    yield "conv3d", model(conv3d, [tensor_input("x", [1, 3, 4, 8, 8])], [tensor_input("y", [1, 4, 2, 6, 6])],
                          [weight("w", (4, 3, 3, 3, 3), 5)]), 3, "2-D form of this operator"
    yield "resize_huge", resize_to([1, 1, 1e9, 1]), 3, "resized to 4e+09 (aotc resizes to 1 ... 1048576)"
    yield "resize_nan", resize_to([1, 1, float("nan"), 1]), 3, "resized to nan (aotc resizes to 1 ... 1048576)"
    yield "resize_channels", resize_to([1, 2, 1, 1]), 3, "resizing the batch or channel dims"
    reflect = [helper.make_node("Pad", ["x", "pads"], ["y"], name="pad", mode="reflect")]
    yield "pad_reflect", model(reflect, [tensor_input("x", [1, 1, 4, 4])], [tensor_input("y", [1, 1, 6, 6])],
                               [numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads")]), 3, \
        "mode 'reflect'"


def write(out_dir):
    out_dir = Path(out_dir)
    for kind in ("valid", "invalid"):
        (out_dir / kind).mkdir(parents=True, exist_ok=True)
        for old in (out_dir / kind).glob("*.onnx"):
            old.unlink()
    for name, m in valid_models():
        (out_dir / "valid" / f"{name}.onnx").write_bytes(m.SerializeToString())
    lines = []
    for name, m, code, fragment in invalid_models():
        data = m if isinstance(m, bytes) else m.SerializeToString()
        (out_dir / "invalid" / f"{name}.onnx").write_bytes(data)
        lines.append(f"{name}.onnx\t{code}\t{fragment}\n")
    (out_dir / "expectations.tsv").write_text(HEADER + "".join(sorted(lines)))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("out_dir")
    args = parser.parse_args()
    if not args.check:
        write(args.out_dir)
        return 0
    with tempfile.TemporaryDirectory() as fresh:
        write(fresh)

        def listing(d):
            return sorted(str(p.relative_to(d)) for p in Path(d).rglob("*") if p.is_file())

        files = listing(fresh)
        if files != listing(args.out_dir) or any(
                (Path(fresh) / f).read_bytes() != (Path(args.out_dir) / f).read_bytes() for f in files):
            print("the corpus is not what make_corpus.py writes: run tests/onnx/make_corpus.py tests/onnx/corpus")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
