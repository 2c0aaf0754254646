#!/usr/bin/python3
"""Writes the frontend's model corpus: valid models, and broken ones that aotc must reject.

    /usr/bin/python3 tests/frontend/make_corpus.py [--flatc FLATC] [--check] [OUT_DIR]
    (OUT_DIR defaults to tests/frontend/corpus)

OUT_DIR/valid/*.fb load; OUT_DIR/invalid/*.fb must each fail with the exit code and the
message fragment listed in OUT_DIR/expectations.tsv (written here, next to the mutation
that makes each file broken, so the two cannot drift apart). The output is deterministic:
the test `frontend.corpus_is_current` runs this with --check.

The broken models are written with full control over every field (the exporter,
tools/aotc-export-torch, never writes such files, so its serialiser is not reused). The
FlatBuffers Python API is generated from schemas/aotc_model.fbs at run time with flatc.
"""

import importlib
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import corpus_writer

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "schemas" / "aotc_model.fbs"

INVALID_MODEL, UNSUPPORTED = 2, 3

# Vector fields declared [long] in the schema; every other int vector is [int].
LONG_VECTOR_FIELDS = {"shape", "pads"}


def import_schema_api(flatc, tempdir):
    subprocess.run([flatc, "--python", "-o", tempdir, str(SCHEMA)], check=True)
    sys.path.insert(0, tempdir)
    return {name: importlib.import_module(f"aotc.fb.{name}") for name in
            ["Model", "Tensor", "Buffer", "Node", "OpCode", "OpOptions", "Quantization"]}


# ---- A model as plain data, and its serialisation ------------------------------------------


# The schema's DType values.
FLOAT32, INT32, INT64, INT8, UINT8 = 0, 1, 2, 3, 4


def tensor(name, shape, buffer=0, dtype=FLOAT32, quant=None):
    """quant: {"scale": [...], "zero_point": [...], "axis": int} or None."""
    return {"name": name, "shape": list(shape), "buffer": buffer, "dtype": dtype, "quant": quant}


def node(name, op, inputs, outputs, options=None):
    """options: (OptionsTypeName, {field: value}) or None."""
    return {"name": name, "op": op, "inputs": list(inputs), "outputs": list(outputs), "options": options}


def tiny_cnn():
    """conv -> batch_norm -> relu -> max_pool -> global_avg_pool -> flatten -> linear -> softmax."""
    rng = np.random.RandomState(20240601)
    m = {"version": 1, "name": "tiny_cnn", "tensors": [], "buffers": [b""], "nodes": [],
         "inputs": [], "outputs": []}

    def add(name, shape, data=None):
        buffer = 0
        if data is not None:
            m["buffers"].append(np.asarray(data, dtype="<f4").reshape(-1).tobytes())
            buffer = len(m["buffers"]) - 1
        m["tensors"].append(tensor(name, shape, buffer))
        return len(m["tensors"]) - 1

    def const(name, shape, lo=-1.0, hi=1.0):
        return add(name, shape, rng.uniform(lo, hi, size=shape))

    x = add("x", [1, 3, 8, 8])
    m["inputs"] = [x]
    w, b = const("conv1.weight", [4, 3, 3, 3]), const("conv1.bias", [4])
    c1 = add("conv1", [1, 4, 8, 8])
    m["nodes"].append(node("conv1", "Conv2d", [x, w, b], [c1],
                           ("Conv2dOptions", {"stride": [1, 1], "padding": [1, 1, 1, 1],
                                              "dilation": [1, 1], "groups": 1})))
    stats = [const("bn1.running_mean", [4]), const("bn1.running_var", [4], 0.5, 2.0),
             const("bn1.weight", [4]), const("bn1.bias", [4])]
    b1 = add("bn1", [1, 4, 8, 8])
    m["nodes"].append(node("bn1", "BatchNorm", [c1] + stats, [b1], ("BatchNormOptions", {"eps": 1e-5})))
    r1 = add("relu1", [1, 4, 8, 8])
    m["nodes"].append(node("relu1", "Relu", [b1], [r1]))
    p1 = add("pool1", [1, 4, 4, 4])
    m["nodes"].append(node("pool1", "MaxPool2d", [r1], [p1],
                           ("Pool2dOptions", {"kernel": [2, 2], "stride": [2, 2], "padding": [0, 0, 0, 0],
                                              "dilation": [1, 1], "ceil_mode": False})))
    g1 = add("gap", [1, 4, 1, 1])
    m["nodes"].append(node("gap", "GlobalAvgPool", [p1], [g1]))
    f1 = add("flatten", [1, 4])
    m["nodes"].append(node("flatten", "Flatten", [g1], [f1], ("FlattenOptions", {"start_dim": 1, "end_dim": -1})))
    fw, fb_ = const("fc.weight", [2, 4]), const("fc.bias", [2])
    l1 = add("fc", [1, 2])
    m["nodes"].append(node("fc", "Linear", [f1, fw, fb_], [l1]))
    out = add("softmax", [1, 2])
    m["nodes"].append(node("softmax", "Softmax", [l1], [out], ("SoftmaxOptions", {"axis": -1})))
    m["outputs"] = [out]
    return m


def every_op():
    """The ops and options tiny_cnn does not use: pad, grouped conv, clamp, hardswish, sigmoid,
    mul, add, avg_pool, adaptive_avg_pool, concat, dropout, reshape."""
    rng = np.random.RandomState(7)
    m = {"version": 1, "name": "every_op", "tensors": [], "buffers": [b""], "nodes": [],
         "inputs": [], "outputs": []}

    def add(name, shape, data=None):
        buffer = 0
        if data is not None:
            m["buffers"].append(np.asarray(data, dtype="<f4").reshape(-1).tobytes())
            buffer = len(m["buffers"]) - 1
        m["tensors"].append(tensor(name, shape, buffer))
        return len(m["tensors"]) - 1

    def op(name, code, inputs, shape, options=None):
        t = add(name, shape)
        m["nodes"].append(node(name, code, inputs, [t], options))
        return t

    x = add("x", [1, 2, 6, 6])
    m["inputs"] = [x]
    # Asymmetric padding everywhere, so that a mix-up of the padding order shows.
    padded = op("pad", "Pad", [x], [1, 2, 9, 9], ("PadOptions", {"pads": [0, 0, 1, 2, 0, 0, 2, 1], "value": 0.5}))
    w = add("conv.weight", [4, 1, 3, 3], rng.uniform(-1, 1, size=[4, 1, 3, 3]))
    conv = op("conv", "Conv2d", [padded, w], [1, 4, 10, 8],
              ("Conv2dOptions", {"stride": [1, 1], "padding": [2, 0, 1, 1], "dilation": [1, 1], "groups": 2}))
    clamp = op("relu6", "Clamp", [conv], [1, 4, 10, 8], ("ClampOptions", {"min": 0.0, "max": 6.0}))
    hs = op("hardswish", "HardSwish", [clamp], [1, 4, 10, 8])
    sg = op("sigmoid", "Sigmoid", [hs], [1, 4, 10, 8])
    mul = op("mul", "Mul", [hs, sg], [1, 4, 10, 8])
    s = add("scale", [4, 1, 1], rng.uniform(-1, 1, size=[4, 1, 1]))
    added = op("add", "Add", [mul, s], [1, 4, 10, 8])
    avg = op("avg_pool", "AvgPool2d", [added], [1, 4, 5, 4],
             ("Pool2dOptions", {"kernel": [2, 2], "stride": [2, 2], "padding": [0, 0, 0, 0], "dilation": [1, 1],
                                "ceil_mode": False, "count_include_pad": True}))
    ada = op("adaptive", "AdaptiveAvgPool2d", [avg], [1, 4, 2, 2],
             ("AdaptiveAvgPool2dOptions", {"output_size": [2, 2]}))
    cat = op("concat", "Concat", [ada, ada], [1, 8, 2, 2], ("ConcatOptions", {"axis": -3}))
    drop = op("dropout", "Dropout", [cat], [1, 8, 2, 2], ("DropoutOptions", {"ratio": 0.25}))
    flat = op("reshape", "Reshape", [drop], [1, 32], ("ReshapeOptions", {"shape": [1, 32]}))
    m["outputs"] = [op("softmax", "Softmax", [flat], [1, 32], ("SoftmaxOptions", {"axis": 1}))]
    return m


def tiny_qdq():
    """A quantized conv in QDQ form, as tools/aotc-export-torch writes it: quantize (u8) ->
    dequantize -> conv2d(dequantize(i8 weight, per channel), dequantize(i32 bias at scale
    x_scale * w_scale)) -> relu -> quantize -> max_pool (on u8) -> dequantize."""
    rng = np.random.RandomState(11)
    m = {"version": 1, "name": "tiny_qdq", "tensors": [], "buffers": [b""], "nodes": [],
         "inputs": [], "outputs": []}

    def add(name, shape, dtype=FLOAT32, quant=None, data=None, numpy_dtype=None):
        buffer = 0
        if data is not None:
            m["buffers"].append(np.asarray(data, dtype=numpy_dtype).reshape(-1).tobytes())
            buffer = len(m["buffers"]) - 1
        m["tensors"].append(tensor(name, shape, buffer, dtype, dict(quant) if quant else None))
        return len(m["tensors"]) - 1

    def op(name, code, inputs, shape, dtype=FLOAT32, quant=None, options=None):
        t = add(name, shape, dtype, quant)
        m["nodes"].append(node(name, code, inputs, [t], options))
        return t

    x_quant = {"scale": [1 / 64], "zero_point": [128], "axis": -1}
    w_scale = [0.02, 0.01, 0.015]
    x = add("x", [1, 2, 4, 4])
    m["inputs"] = [x]
    xq = op("x.q", "Quantize", [x], [1, 2, 4, 4], UINT8, x_quant)
    xd = op("x.dq", "Dequantize", [xq], [1, 2, 4, 4])
    w = add("conv.weight", [3, 2, 1, 1], INT8, {"scale": w_scale, "zero_point": [0, 0, 0], "axis": 0},
            rng.randint(-127, 128, size=[3, 2, 1, 1]), "i1")
    wd = op("conv.weight.dq", "Dequantize", [w], [3, 2, 1, 1])
    b = add("conv.bias", [3], INT32, {"scale": [np.float32(1 / 64) * np.float32(s) for s in w_scale],
                                      "zero_point": [0, 0, 0], "axis": 0},
            rng.randint(-2000, 2000, size=[3]), "<i4")
    bd = op("conv.bias.dq", "Dequantize", [b], [3])
    conv = op("conv", "Conv2d", [xd, wd, bd], [1, 3, 4, 4],
              options=("Conv2dOptions", {"stride": [1, 1], "padding": [0, 0, 0, 0], "dilation": [1, 1], "groups": 1}))
    relu = op("relu", "Relu", [conv], [1, 3, 4, 4])
    y_quant = {"scale": [0.05], "zero_point": [3], "axis": -1}
    yq = op("relu.q", "Quantize", [relu], [1, 3, 4, 4], UINT8, y_quant)
    pool = op("pool", "MaxPool2d", [yq], [1, 3, 2, 2], UINT8, y_quant,
              ("Pool2dOptions", {"kernel": [2, 2], "stride": [2, 2], "padding": [0, 0, 0, 0], "dilation": [1, 1],
                                 "ceil_mode": False}))
    m["outputs"] = [op("pool.dq", "Dequantize", [pool], [1, 3, 2, 2])]
    return m


def serialise(m, api):
    import flatbuffers
    b = flatbuffers.Builder(1024)
    Model, Tensor, Buffer, Node = api["Model"], api["Tensor"], api["Buffer"], api["Node"]

    def int_vector(values, dtype):
        return b.CreateNumpyVector(np.asarray(values, dtype=dtype))

    def table_vector(start, offsets):
        start(b, len(offsets))
        for off in reversed(offsets):
            b.PrependUOffsetTRelative(off)
        return b.EndVector()

    def options_table(type_name, fields):
        mod = importlib.import_module(f"aotc.fb.{type_name}")
        vectors = {k: int_vector(v, np.int64 if k in LONG_VECTOR_FIELDS else np.int32)
                   for k, v in fields.items() if isinstance(v, list)}
        getattr(mod, f"{type_name}Start")(b)
        for key, value in fields.items():
            camel = "".join(part.capitalize() for part in key.split("_"))
            getattr(mod, f"{type_name}Add{camel}")(b, vectors.get(key, value))
        return getattr(mod, f"{type_name}End")(b)

    buffers = []
    for data in m["buffers"]:
        vec = b.CreateByteVector(data) if data else None
        Buffer.BufferStart(b)
        if vec is not None:
            Buffer.BufferAddData(b, vec)
        buffers.append(Buffer.BufferEnd(b))

    def quantization(q):
        Quantization = api["Quantization"]
        scale = b.CreateNumpyVector(np.asarray(q["scale"], dtype="<f4"))
        zero_point = int_vector(q["zero_point"], np.int64)
        Quantization.QuantizationStart(b)
        Quantization.QuantizationAddScale(b, scale)
        Quantization.QuantizationAddZeroPoint(b, zero_point)
        Quantization.QuantizationAddAxis(b, q["axis"])
        return Quantization.QuantizationEnd(b)

    tensors = []
    for t in m["tensors"]:
        name, shape = b.CreateString(t["name"]), int_vector(t["shape"], np.int64)
        quant = quantization(t["quant"]) if t["quant"] else None
        Tensor.TensorStart(b)
        Tensor.TensorAddName(b, name)
        Tensor.TensorAddDtype(b, t["dtype"])
        Tensor.TensorAddShape(b, shape)
        Tensor.TensorAddBuffer(b, t["buffer"])
        if quant is not None:
            Tensor.TensorAddQuantization(b, quant)
        tensors.append(Tensor.TensorEnd(b))

    shared = {}  # id() of a list -> its vector, so that nodes can alias one vector on purpose
    nodes = []
    for n in m["nodes"]:
        name = b.CreateString(n["name"])
        if id(n["inputs"]) not in shared:
            shared[id(n["inputs"])] = int_vector(n["inputs"], np.int32)
        inputs, outputs = shared[id(n["inputs"])], int_vector(n["outputs"], np.int32)
        options = options_table(*n["options"]) if n["options"] else None
        op = n["op"] if isinstance(n["op"], int) else getattr(api["OpCode"].OpCode, n["op"])
        Node.NodeStart(b)
        Node.NodeAddName(b, name)
        Node.NodeAddOp(b, op)
        Node.NodeAddInputs(b, inputs)
        Node.NodeAddOutputs(b, outputs)
        if options is not None:
            type_name = n.get("options_type", n["options"][0])
            Node.NodeAddOptionsType(b, getattr(api["OpOptions"].OpOptions, type_name))
            Node.NodeAddOptions(b, options)
        nodes.append(Node.NodeEnd(b))

    name = b.CreateString(m["name"])
    tensor_vec = table_vector(Model.ModelStartTensorsVector, tensors)
    buffer_vec = table_vector(Model.ModelStartBuffersVector, buffers)
    node_vec = table_vector(Model.ModelStartNodesVector, nodes)
    input_vec, output_vec = int_vector(m["inputs"], np.int32), int_vector(m["outputs"], np.int32)
    Model.ModelStart(b)
    Model.ModelAddVersionMajor(b, m["version"])
    Model.ModelAddName(b, name)
    Model.ModelAddTensors(b, tensor_vec)
    Model.ModelAddBuffers(b, buffer_vec)
    Model.ModelAddNodes(b, node_vec)
    Model.ModelAddInputs(b, input_vec)
    Model.ModelAddOutputs(b, output_vec)
    b.Finish(Model.ModelEnd(b), file_identifier=b"AOTC")
    return bytes(b.Output())


# ---- Where fields lie in a serialised buffer (for single-bit flips) ------------------------


def field_position(table, vtable_offset):
    o = table._tab.Offset(vtable_offset)
    assert o, "the field must be present"
    return table._tab.Pos + o


def find(items, count, name):
    return next(item for item in (items(i) for i in range(count)) if item.Name().decode() == name)


def flip(data, position, bit):
    out = bytearray(data)
    out[position] ^= 1 << bit
    return bytes(out)


# ---- The corpus ----------------------------------------------------------------------------


def tensor_index(m, name):
    return next(i for i, t in enumerate(m["tensors"]) if t["name"] == name)


def node_named(m, name):
    return next(n for n in m["nodes"] if n["name"] == name)


def model_mutations():
    """(file stem, mutation of tiny_cnn, exit code, message fragment)."""

    def conv(m):
        return node_named(m, "conv1")

    def set_shape(tensor_name, shape):
        return lambda m: m["tensors"][tensor_index(m, tensor_name)].update(shape=shape)

    def conv_option(key, value):
        def mutate(m):
            fields = dict(conv(m)["options"][1])
            if value is None:
                del fields[key]
            else:
                fields[key] = value
            conv(m)["options"] = ("Conv2dOptions", fields)
        return mutate

    def add_ghost_input(m):
        m["tensors"].append(tensor("ghost", [1, 4, 8, 8]))
        node_named(m, "relu1")["inputs"] = [len(m["tensors"]) - 1]

    def alias_inputs(m):
        # Eight relu nodes share one 1000-entry inputs vector: reading them would copy
        # far more index bytes than the file holds.
        shared = [0] * 1000
        for k in range(8):
            m["tensors"].append(tensor(f"alias{k}", [1, 3, 8, 8]))
            m["nodes"].append(node(f"alias{k}", "Relu", [], [len(m["tensors"]) - 1]))
            m["nodes"][-1]["inputs"] = shared

    def channel_mismatch(m):
        w = tensor_index(m, "conv1.weight")
        m["tensors"][w]["shape"] = [4, 2, 3, 3]
        m["buffers"][m["tensors"][w]["buffer"]] = np.zeros(72, dtype="<f4").tobytes()

    def short_bias(m):
        b = m["tensors"][tensor_index(m, "conv1.bias")]["buffer"]
        m["buffers"][b] = m["buffers"][b][:12]

    return [
        ("tensor_index_out_of_range", lambda m: conv(m)["inputs"].__setitem__(0, 99),
         INVALID_MODEL, "node 'conv1' (#0, conv2d) input 0 refers to tensor #99, but the model has 17 tensors"),
        ("graph_input_out_of_range", lambda m: m.update(inputs=[-1]),
         INVALID_MODEL, "graph input #0 refers to tensor #-1"),
        ("buffer_index_out_of_range", lambda m: m["tensors"][1].update(buffer=50),
         INVALID_MODEL, "tensor 'conv1.weight' (#1) refers to buffer #50, but the model has 9 buffers"),
        # bn1 reads relu1, relu1 reads bn1: shapes agree, only the order is impossible.
        ("cyclic_graph", lambda m: node_named(m, "bn1")["inputs"].__setitem__(0, tensor_index(m, "relu1")),
         INVALID_MODEL, "the graph has a cycle through node 'bn1' (#1, batch_norm)"),
        ("tensor_defined_twice", lambda m: node_named(m, "relu1").update(outputs=[tensor_index(m, "conv1")]),
         INVALID_MODEL, "node 'relu1' (#2, relu) writes tensor 'conv1' (#3), which already is the output of "
                        "node 'conv1' (#0, conv2d)"),
        ("node_writes_constant", lambda m: node_named(m, "relu1").update(outputs=[tensor_index(m, "fc.bias")]),
         INVALID_MODEL, "writes tensor 'fc.bias' (#14), which already is a constant"),
        ("node_writes_graph_input", lambda m: node_named(m, "relu1").update(outputs=[0]),
         INVALID_MODEL, "writes tensor 'x' (#0), which already is a graph input"),
        ("graph_input_is_constant", lambda m: m.update(inputs=[0, 1]),
         INVALID_MODEL, "graph input tensor 'conv1.weight' (#1) is a constant"),
        ("undefined_tensor", add_ghost_input,
         INVALID_MODEL, "node 'relu1' (#2, relu) reads tensor 'ghost' (#17), which is neither a graph input, "
                        "a constant nor the output of a node"),
        ("duplicate_tensor_name", lambda m: m["tensors"][16].update(name="fc"),
         INVALID_MODEL, "tensor 'fc' (#16) has the same name as an earlier tensor"),
        ("shape_mismatch", set_shape("conv1", [1, 4, 7, 7]),
         INVALID_MODEL, "output 'conv1' is declared as [1,4,7,7] but conv2d computes [1,4,8,8]"),
        ("channel_mismatch", channel_mismatch,
         INVALID_MODEL, "node 'conv1' (conv2d): input has 3 channels but weight expects 2"),
        ("absurd_dims", set_shape("x", [1, 3, 1 << 40, 8]),
         INVALID_MODEL, "tensor 'x' (#0) has shape [1,3,1099511627776,8], more than 2^31 elements"),
        ("negative_dim", set_shape("x", [1, 3, -8, 8]),
         INVALID_MODEL, "tensor 'x' (#0) has shape [1,3,-8,8]: dim 2 is -8 (every dim must be >= 1)"),
        ("zero_dim", set_shape("relu1", [1, 0, 8, 8]),
         INVALID_MODEL, "tensor 'relu1' (#9) has shape [1,0,8,8]: dim 1 is 0"),
        ("rank_too_high", set_shape("x", [1] * 9),
         UNSUPPORTED, "tensor 'x' (#0) has rank 9; at most 8 is supported"),
        ("constant_size_mismatch", short_bias,
         INVALID_MODEL, "tensor 'conv1.bias' (#2) has shape [4] (4 f32 = 16 bytes) but its buffer #2 holds "
                        "12 bytes"),
        ("unsupported_dtype", lambda m: m["tensors"][tensor_index(m, "fc.weight")].update(dtype=2),
         UNSUPPORTED, "tensor 'fc.weight' (#13) has dtype Int64; aotc reads Float32, Int8, UInt8 and Int32"),
        ("unknown_dtype", lambda m: m["tensors"][0].update(dtype=42),
         UNSUPPORTED, "tensor 'x' (#0) has dtype #42"),
        ("unknown_op_code", lambda m: node_named(m, "relu1").update(op=99),
         UNSUPPORTED, "node 'relu1' (#2) has op code 99, which this aotc does not know"),
        ("unsupported_version", lambda m: m.update(version=2),
         UNSUPPORTED, "model format version 2.0 is not supported (this aotc reads version 1.x)"),
        ("missing_options", set_options("conv1", None),
         INVALID_MODEL, "node 'conv1' (#0, conv2d): needs Conv2dOptions, but has none"),
        ("wrong_options_type", lambda m: conv(m).update(options_type="Pool2dOptions"),
         INVALID_MODEL, "node 'conv1' (#0, conv2d): needs Conv2dOptions, but has Pool2dOptions"),
        ("options_on_relu", set_options("relu1", ("DropoutOptions", {"ratio": 0.5})),
         INVALID_MODEL, "node 'relu1' (#2, relu): takes no options, but has DropoutOptions"),
        ("missing_option_vector", conv_option("dilation", None),
         INVALID_MODEL, "node 'conv1' (#0, conv2d): option 'dilation' is missing (2 values expected)"),
        ("wrong_stride_length", conv_option("stride", [1, 1, 1]),
         INVALID_MODEL, "node 'conv1' (#0, conv2d): option 'stride' has 3 values, expected 2"),
        ("wrong_padding_length", conv_option("padding", [1, 1]),
         INVALID_MODEL, "node 'conv1' (#0, conv2d): option 'padding' has 2 values, expected 4"),
        ("axis_out_of_range", set_options("softmax", ("SoftmaxOptions", {"axis": -3})),
         INVALID_MODEL, "node 'softmax' (#7, softmax): axis -3 is out of range for input tensor 'fc' (#15) of rank 2"),
        ("missing_graph_output", lambda m: m.update(outputs=[]),
         INVALID_MODEL, "the model declares no graph outputs"),
        ("graph_output_out_of_range", lambda m: m.update(outputs=[17]),
         INVALID_MODEL, "graph output #0 refers to tensor #17, but the model has 17 tensors"),
        ("graph_output_not_computed", lambda m: m["outputs"].append(add_unused(m)),
         INVALID_MODEL, "graph output tensor 'unused' (#17) is not computed by any node"),
        ("aliased_vectors", alias_inputs,
         INVALID_MODEL, "its tables share vectors (aliased offsets)"),
    ]


def quantized_mutations():
    """(file stem, mutation of tiny_qdq, exit code, message fragment): what check_element_type
    and the reader refuse in the quantization fields."""

    def tensor_named(m, name):
        return m["tensors"][tensor_index(m, name)]

    def set_quant(name, **fields):
        return lambda m: tensor_named(m, name)["quant"].update(fields)

    def weight_as_float32(m):  # declared Int8, stored as the float32 values
        w = tensor_named(m, "conv.weight")
        m["buffers"][w["buffer"]] = np.frombuffer(m["buffers"][w["buffer"]], dtype="i1").astype("<f4").tobytes()

    def bias_beyond_float(m):
        bias = tensor_named(m, "conv.bias")
        m["buffers"][bias["buffer"]] = np.array([1 << 24, 0, (1 << 24) + 1], dtype="<i4").tobytes()

    return [
        ("quant_scale_zero", set_quant("conv.weight", scale=[0.02, 0.0, 0.015]),
         INVALID_MODEL, "tensor 'conv.weight' (i8): scale 0 is not finite and positive"),
        ("quant_scale_negative", set_quant("x.q", scale=[-0.5]),
         INVALID_MODEL, "tensor 'x.q' (u8): scale -0.5 is not finite and positive"),
        ("quant_scale_nan", set_quant("relu.q", scale=[float("nan")]),
         INVALID_MODEL, "tensor 'relu.q' (u8): scale nan is not finite and positive"),
        ("quant_scale_inf", set_quant("conv.bias", scale=[1e-4, float("inf"), 1e-4]),
         INVALID_MODEL, "tensor 'conv.bias' (i32): scale inf is not finite and positive"),
        ("quant_zero_point_out_of_range", set_quant("x.q", zero_point=[256]),
         INVALID_MODEL, "tensor 'x.q' (u8): zero point 256 is outside [0, 255]"),
        ("quant_zero_point_negative_u8", set_quant("pool", zero_point=[-1]),
         INVALID_MODEL, "tensor 'pool' (u8): zero point -1 is outside [0, 255]"),
        ("quant_per_channel_length", set_quant("conv.weight", scale=[0.02, 0.01]),
         INVALID_MODEL, "tensor 'conv.weight' (i8): 2 scales and 3 zero points, expected 3 (dimension 0 of [3,2,1,1])"),
        ("quant_axis_out_of_range", set_quant("conv.weight", axis=4),
         INVALID_MODEL, "tensor 'conv.weight' (i8): quantization axis 4 is not a dimension of [3,2,1,1]"),
        ("quant_missing", lambda m: tensor_named(m, "conv.weight").update(quant=None),
         INVALID_MODEL, "tensor 'conv.weight' (i8): an integer tensor needs a scale and a zero point"),
        ("quant_on_float", lambda m: tensor_named(m, "x").update(quant={"scale": [1.0], "zero_point": [0], "axis": -1}),
         INVALID_MODEL, "tensor 'x' (f32): a float tensor has no quantization"),
        ("quant_constant_stored_as_float", weight_as_float32,
         INVALID_MODEL, "tensor 'conv.weight' (#3) has shape [3,2,1,1] (6 i8 = 6 bytes) but its buffer #1 holds 24 bytes"),
        ("quant_bias_beyond_2_24", bias_beyond_float,
         INVALID_MODEL, "tensor 'conv.bias' (#5) (i32): value 16777217 at 2 is beyond +-2^24"),
        ("quant_int64_constant", lambda m: tensor_named(m, "conv.bias").update(dtype=INT64),
         UNSUPPORTED, "tensor 'conv.bias' (#5) has dtype Int64"),
        ("quantize_to_float", lambda m: tensor_named(m, "x.q").update(dtype=FLOAT32, quant=None),
         INVALID_MODEL, "node 'x.q' (quantize): writes f32; it writes i8 or u8"),
        ("quantize_to_int32", lambda m: tensor_named(m, "x.q").update(dtype=INT32),
         INVALID_MODEL, "node 'x.q' (quantize): writes i32; it writes i8 or u8"),
        ("dequantize_declared_integer", lambda m: tensor_named(m, "pool.dq").update(dtype=UINT8, quant={
            "scale": [0.05], "zero_point": [3], "axis": -1}),
         INVALID_MODEL, "node 'pool.dq' (#8, dequantize): output 'pool.dq' is declared as u8[1,3,2,2]{scale=[0.0500000007], "
                        "zero_point=[3]} but dequantize computes f32[1,3,2,2]"),
        ("max_pool_requantized", set_quant("pool", scale=[0.1]),
         INVALID_MODEL, "node 'pool' (#7, max_pool2d): output 'pool' is declared as u8[1,3,2,2]{scale=[0.100000001], "
                        "zero_point=[3]} but max_pool2d computes u8[1,3,2,2]{scale=[0.0500000007], zero_point=[3]}"),
        ("float_op_reads_integer", lambda m: node_named(m, "relu").update(inputs=[tensor_index(m, "x.q")]),
         INVALID_MODEL, "node 'relu' (relu): input 'x.q' is u8; relu reads f32 tensors only"),
        ("options_on_dequantize", set_options("x.dq", ("DropoutOptions", {"ratio": 0.5})),
         INVALID_MODEL, "node 'x.dq' (#1, dequantize): takes no options, but has DropoutOptions"),
    ]


def set_options(name, options):
    return lambda m: node_named(m, name).update(options=options)


def add_unused(m):
    m["tensors"].append(tensor("unused", [1]))
    return len(m["tensors"]) - 1


def byte_mutations(valid, api):
    """(file stem, bytes, exit code, message fragment) for damage below the model level."""
    model = api["Model"].Model.GetRootAs(valid, 0)
    relu = find(model.Nodes, model.NodesLength(), "relu1")
    pool = find(model.Nodes, model.NodesLength(), "pool1")
    bn = find(model.Nodes, model.NodesLength(), "bn1")
    conv_out = find(model.Tensors, model.TensorsLength(), "conv1")
    tensors_vector = valid_vector_position(model, 12)
    corrupt = "corrupt aotc model: the FlatBuffers verifier rejected it"
    return [
        ("empty", b"", INVALID_MODEL, "not an aotc model (the file has only 0 bytes)"),
        ("header_only", valid[:6], INVALID_MODEL, "not an aotc model (the file has only 6 bytes)"),
        ("truncated", valid[:len(valid) // 2], INVALID_MODEL, corrupt),
        ("truncated_by_one", valid[:-1], INVALID_MODEL, corrupt),
        ("wrong_identifier", valid[:4] + b"ABCD" + valid[8:], INVALID_MODEL,
         'not an aotc model (file identifier "ABCD", expected "AOTC")'),
        ("binary_identifier", valid[:4] + b"\x00\x01\xfe\"" + valid[8:], INVALID_MODEL,
         'file identifier "\\x00\\x01\\xfe\\x22"'),
        # the TensorFlow Lite reader gets it and finds it is no TFLite model;
        ("tflite_identifier", valid[:4] + b"TFL3" + valid[8:], INVALID_MODEL,
         "corrupt TensorFlow Lite model"),
        # Single-bit flips, each at a field chosen for a known outcome:
        # the root offset grows by 16 KiB, past the end of the file;
        ("bitflip_root_offset", flip(valid, 1, 6), INVALID_MODEL, corrupt),
        # the tensor vector claims 2^30 more elements;
        ("bitflip_vector_length", flip(valid, tensors_vector + 3, 6), INVALID_MODEL, corrupt),
        # a node's vtable offset points 4 MiB away;
        ("bitflip_vtable_offset", flip(valid, bn._tab.Pos + 2, 6), INVALID_MODEL, corrupt),
        # conv1's channel dim goes from 4 to 12;
        ("bitflip_shape_dim", flip(valid, field_vector(conv_out, 8) + 8, 3), INVALID_MODEL,
         "output 'conv1' is declared as [1,12,8,8] but conv2d computes [1,4,8,8]"),
        # relu's op code goes from 2 (Relu) to 18 (Pad), which needs options;
        ("bitflip_op_code", flip(valid, field_position(relu, 6), 4), INVALID_MODEL,
         "node 'relu1' (#2, pad): needs PadOptions, but has none"),
        # pool1's input index turns negative.
        ("bitflip_node_input", flip(valid, field_vector(pool, 8) + 3, 7), INVALID_MODEL,
         "node 'pool1' (#3, max_pool2d) input 0 refers to tensor #-2147483639"),
    ]


def field_vector(table, vtable_offset):
    """Position of the first element of a vector field."""
    return table._tab.Vector(table._tab.Offset(vtable_offset))


def valid_vector_position(model, vtable_offset):
    """Position of a vector field's length prefix."""
    return field_vector(model, vtable_offset) - 4


def generate(flatc):
    """{relative path: bytes} of the whole corpus, expectations.tsv included."""
    with tempfile.TemporaryDirectory() as tempdir:
        api = import_schema_api(flatc, tempdir)
        files = {"valid/tiny_cnn.fb": serialise(tiny_cnn(), api),
                 "valid/every_op.fb": serialise(every_op(), api),
                 "valid/tiny_qdq.fb": serialise(tiny_qdq(), api)}
        expectations = []
        for stem, mutate, code, message in model_mutations():
            m = tiny_cnn()
            mutate(m)
            files[f"invalid/{stem}.fb"] = serialise(m, api)
            expectations.append((f"{stem}.fb", code, message))
        for stem, mutate, code, message in quantized_mutations():
            m = tiny_qdq()
            mutate(m)
            files[f"invalid/{stem}.fb"] = serialise(m, api)
            expectations.append((f"{stem}.fb", code, message))
        for stem, data, code, message in byte_mutations(files["valid/tiny_cnn.fb"], api):
            files[f"invalid/{stem}.fb"] = data
            expectations.append((f"{stem}.fb", code, message))
    files["expectations.tsv"] = corpus_writer.expectations_file(expectations)
    return files



if __name__ == "__main__":
    sys.exit(corpus_writer.main(__file__, __doc__, ".fb", generate))
