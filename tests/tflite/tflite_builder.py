"""Builds small TensorFlow Lite models for tests, through the Python object API that flatc
generates from aotc's schema subset (schemas/tflite.fbs, binary compatible with TFLite's).

  load_schema(flatc, workdir)
  b = ModelBuilder()
  x = b.tensor("x", [1, 4, 4, 2])
  y = b.tensor("y", [1, 8, 8, 2])
  b.operator("RESIZE_BILINEAR", [x, b.constant("size", np.array([8, 8], np.int32))], [y],
             "ResizeBilinearOptions", halfPixelCenters=True)
  data = b.finish(inputs=[x], outputs=[y])

Every field can be set to anything, also to what no converter writes: the error corpus
(make_corpus.py) builds broken models with it.
"""
import importlib
import subprocess
import sys
from pathlib import Path

import flatbuffers
import numpy as np

SCHEMA = Path(__file__).resolve().parent.parent.parent / "schemas" / "tflite.fbs"
TENSOR_TYPES = {np.dtype("float32"): 0, np.dtype("float16"): 1, np.dtype("int32"): 2, np.dtype("uint8"): 3,
                np.dtype("int64"): 4, np.dtype("int16"): 7, np.dtype("int8"): 9}
# TFLite's sparse index vectors (SparseIndexVector union members) by element type.
INDEX_VECTORS = {np.dtype("int32"): "Int32Vector", np.dtype("uint16"): "Uint16Vector", np.dtype("uint8"): "Uint8Vector"}


def load_schema(flatc, workdir):
    """Generates the Python object API for the schema into workdir."""
    subprocess.run([str(flatc), "--python", "--gen-object-api", "-o", str(workdir), str(SCHEMA)], check=True)
    sys.path.insert(0, str(workdir))


def module(name):
    """A generated module of the schema (load_schema first), e.g. module("Model")."""
    return importlib.import_module("aotc.tfl." + name)


def sparse_encoding(dense, formats, order):
    """TFLite's sparse format of `dense` (TensorFlow Lite's SparsityParameters, as its
    sparsity format converter reads it): dimension order[k] is stored at level k, DENSE
    (all its indices) or SPARSE_CSR (only indices whose sub-block holds a nonzero, listed
    per parent position in array_segments / array_indices). Returns (values in storage
    order, [(segments, indices) or None per level])."""
    levels = [([0], []) if f == "SPARSE_CSR" else None for f in formats]
    values = []

    def walk(level, index):
        dim = order[level]
        for i in range(dense.shape[dim]):
            index[dim] = i
            if level + 1 == dense.ndim:
                if formats[level] == "DENSE" or dense[tuple(index)] != 0:
                    values.append(dense[tuple(index)])
                    if levels[level]:
                        levels[level][1].append(i)
                continue
            # The sub-block of the remaining levels at this index.
            block = dense[tuple(index[d] if d in order[:level + 1] else slice(None) for d in range(dense.ndim))]
            if formats[level] == "SPARSE_CSR" and not block.any():
                continue
            if levels[level]:
                levels[level][1].append(i)
            walk(level + 1, index)
        if levels[level]:
            levels[level][0].append(len(levels[level][1]))

    walk(0, [0] * dense.ndim)
    return np.array(values, dense.dtype), levels


class ModelBuilder:
    def __init__(self):
        self.buffers = [module("Buffer").BufferT()]  # the empty sentinel
        self.tensors = []
        self.operators = []
        self.codes = []
        self.prefix = ""  # prepended to tensor names: several small graphs merged into one model

    def enum(self, enum_name, member):
        """A schema enum's value: enum("ActivationFunctionType", "RELU6")."""
        return getattr(getattr(module(enum_name), enum_name), member)

    def tensor(self, name, shape, dtype=np.float32, buffer=0, sparsity=None, quantization=None):
        """A tensor; returns its index."""
        tensor = module("Tensor").TensorT()
        tensor.name, tensor.shape = (self.prefix + name).encode(), list(shape)
        tensor.type, tensor.buffer, tensor.sparsity = TENSOR_TYPES[np.dtype(dtype)], buffer, sparsity
        tensor.quantization = quantization
        self.tensors.append(tensor)
        return len(self.tensors) - 1

    def buffer(self, data):
        buffer = module("Buffer").BufferT()
        buffer.data = np.frombuffer(np.ascontiguousarray(data).tobytes(), dtype=np.uint8)
        self.buffers.append(buffer)
        return len(self.buffers) - 1

    def constant(self, name, array, shape=None, sparsity=None, quantization=None):
        """A constant tensor holding array (stored as given; shape defaults to its shape)."""
        return self.tensor(name, array.shape if shape is None else shape, array.dtype, self.buffer(array), sparsity,
                           quantization)

    def quantization(self, scale, zero_point, dimension=0):
        q = module("QuantizationParameters").QuantizationParametersT()
        q.scale, q.zeroPoint, q.quantizedDimension = list(scale), list(zero_point), dimension
        return q

    def sparse_constant(self, name, dense, formats, order=None, index_dtype=np.int32):
        """A constant stored in TFLite's sparse format (see sparse_encoding); DENSIFY reads it."""
        order = list(range(dense.ndim)) if order is None else list(order)
        values, levels = sparse_encoding(dense, formats, order)
        sparsity = module("SparsityParameters").SparsityParametersT()
        sparsity.traversalOrder, sparsity.dimMetadata = order, []
        for level, fmt in enumerate(formats):
            meta = module("DimensionMetadata").DimensionMetadataT()
            meta.format = self.enum("DimensionType", fmt)
            if fmt == "DENSE":
                meta.denseSize = dense.shape[order[level]]
            else:
                meta.arraySegmentsType, meta.arraySegments = self.index_vector(levels[level][0], index_dtype)
                meta.arrayIndicesType, meta.arrayIndices = self.index_vector(levels[level][1], index_dtype)
            sparsity.dimMetadata.append(meta)
        return self.constant(name, values, shape=dense.shape, sparsity=sparsity)

    def index_vector(self, values, dtype):
        """(union type, table) of a sparse index vector of the given element type."""
        kind = INDEX_VECTORS[np.dtype(dtype)]
        vector = getattr(module(kind), kind + "T")()
        vector.values = list(np.asarray(values, dtype))
        return self.enum("SparseIndexVector", kind), vector

    def operator(self, op_name, inputs, outputs, options_name=None, custom_code=None, custom_options=None,
                 **options):
        """Appends an operator; options are fields of its options table (object API names)."""
        code = module("OperatorCode").OperatorCodeT()
        builtin = self.enum("BuiltinOperator", op_name)
        code.builtinCode, code.deprecatedBuiltinCode = builtin, min(builtin, 127)
        code.customCode = custom_code.encode() if custom_code else None
        self.codes.append(code)
        op = module("Operator").OperatorT()
        op.opcodeIndex, op.inputs, op.outputs = len(self.codes) - 1, list(inputs), list(outputs)
        if options_name:
            op.builtinOptionsType = self.enum("BuiltinOptions", options_name)
            op.builtinOptions = getattr(module(options_name), options_name + "T")()
            for field, value in options.items():
                assert hasattr(op.builtinOptions, field), field
                setattr(op.builtinOptions, field, value)
        if custom_options is not None:
            op.customOptions = list(custom_options)
        self.operators.append(op)
        return op

    def finish(self, inputs, outputs, name=None):
        """The model's bytes."""
        graph = module("SubGraph").SubGraphT()
        graph.tensors, graph.operators = self.tensors, self.operators
        graph.inputs, graph.outputs = list(inputs), list(outputs)
        graph.name = name.encode() if name else None
        model = module("Model").ModelT()
        model.version, model.operatorCodes, model.subgraphs, model.buffers = 3, self.codes, [graph], self.buffers
        builder = flatbuffers.Builder(1024)
        builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
        return bytes(builder.Output())
