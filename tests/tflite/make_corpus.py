#!/usr/bin/python3
"""Writes the TFLite error corpus: small valid models, and hostile or unsupported ones that
aotc must reject with a given exit code and message.

    /usr/bin/python3 tests/tflite/make_corpus.py [--flatc FLATC] [--check] [OUT_DIR]
    (OUT_DIR defaults to tests/tflite/corpus)

OUT_DIR/valid/*.tflite load; OUT_DIR/invalid/*.tflite must each fail with the exit code and
the message fragment listed in OUT_DIR/expectations.tsv (written here, next to the model
that is broken, so that the two cannot drift apart). tests/frontend/check_corpus.py checks
one file; the files also seed the TFLite fuzzer (tests/frontend/fuzz_tflite_loader.cpp).
The output is deterministic: the test `tflite.corpus_is_current` runs this with --check.
Models are built with tflite_builder.py, which can write every field, broken ones too.
"""
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "frontend"))
import corpus_writer  # noqa: E402  (tests/frontend/corpus_writer.py)
import tflite_builder
from tflite_builder import ModelBuilder

INVALID_MODEL, UNSUPPORTED = 2, 3
SUFFIX = ".tflite"


def weights(shape, seed=1):
    return np.random.RandomState(seed).uniform(-1, 1, size=shape).astype(np.float32)


def conv(b, x, out_shape, name="conv", options=True, **overrides):
    """A 3x3 SAME CONV_2D with bias from x (NHWC) to a new tensor of out_shape."""
    y = b.tensor(name, out_shape)
    filt = b.constant(name + ".filter", weights((out_shape[3], 3, 3, b.tensors[x].shape[3])))
    bias = b.constant(name + ".bias", weights((out_shape[3],), 2))
    fields = {"padding": b.enum("Padding", "SAME"), "strideH": 1, "strideW": 1,
              "fusedActivationFunction": b.enum("ActivationFunctionType", "RELU6")} if options else {}
    fields.update(overrides)
    b.operator("CONV_2D", [x, filt, bias], [y], "Conv2DOptions" if options else None, **fields)
    return y


# ---- Valid models -------------------------------------------------------------------------------------


def conv_relu6():
    b = ModelBuilder()
    x = b.tensor("x", [1, 4, 4, 2])
    y = conv(b, x, [1, 4, 4, 3])
    return b.finish([x], [y])


def int8_conv(x_scale=0.02, x_zero=0, filter_scales=(0.1, 0.1, 0.1), bias_scale=0.002, activation_type=np.int8):
    """A fully int8-quantized convolution as TFLite's converter writes one: QUANTIZE, an int8
    CONV_2D (per-channel int8 filter, int32 bias at x_scale * filter_scale) with a fused
    RELU6, DEQUANTIZE. The arguments break it (x_scale None: no quantization)."""
    b = ModelBuilder()
    x = b.tensor("x", [1, 4, 4, 2])
    q = b.tensor("x.q", [1, 4, 4, 2], activation_type,
                 quantization=None if x_scale is None else b.quantization([x_scale], [x_zero]))
    b.operator("QUANTIZE", [x], [q])
    filt = b.constant("filter", (np.arange(54) % 7 - 3).astype(np.int8).reshape(3, 3, 3, 2),
                      quantization=b.quantization(list(filter_scales), [0] * len(filter_scales)))
    bias = b.constant("bias", np.array([5, -7, 11], np.int32), quantization=b.quantization([bias_scale] * 3, [0] * 3))
    yq = b.tensor("y.q", [1, 4, 4, 3], np.int8, quantization=b.quantization([0.05], [-10]))
    b.operator("CONV_2D", [q, filt, bias], [yq], "Conv2DOptions", padding=b.enum("Padding", "SAME"), strideH=1,
               strideW=1, fusedActivationFunction=b.enum("ActivationFunctionType", "RELU6"))
    y = b.tensor("y", [1, 4, 4, 3])
    b.operator("DEQUANTIZE", [yq], [y])
    return b.finish([x], [y])


def mixed_ops():
    """PAD, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, CONCATENATION, RESIZE_BILINEAR (half-pixel),
    HARD_SWISH, MEAN, RESHAPE, FULLY_CONNECTED, SOFTMAX: one of each of the common kinds."""
    b = ModelBuilder()
    x = b.tensor("x", [1, 4, 4, 2])
    padded = b.tensor("padded", [1, 6, 6, 2])
    b.operator("PAD", [x, b.constant("paddings", np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32))], [padded])
    dw = b.tensor("dw", [1, 4, 4, 4])
    b.operator("DEPTHWISE_CONV_2D", [padded, b.constant("dw.filter", weights((1, 3, 3, 4))),
                                     b.constant("dw.bias", weights((4,), 3))], [dw], "DepthwiseConv2DOptions",
               padding=b.enum("Padding", "VALID"), strideH=1, strideW=1, depthMultiplier=2)
    pooled = b.tensor("pooled", [1, 2, 2, 4])
    b.operator("AVERAGE_POOL_2D", [dw], [pooled], "Pool2DOptions", padding=b.enum("Padding", "SAME"), strideH=2,
               strideW=2, filterHeight=3, filterWidth=3)
    up = b.tensor("up", [1, 4, 4, 4])
    b.operator("RESIZE_BILINEAR", [pooled, b.constant("size", np.array([4, 4], np.int32))], [up],
               "ResizeBilinearOptions", halfPixelCenters=True)
    cat = b.tensor("cat", [1, 4, 4, 8])
    b.operator("CONCATENATION", [dw, up], [cat], "ConcatenationOptions", axis=3)
    hs = b.tensor("hard_swish", [1, 4, 4, 8])
    b.operator("HARD_SWISH", [cat], [hs])
    mean = b.tensor("mean", [1, 8])
    b.operator("MEAN", [hs, b.constant("axes", np.array([1, 2], np.int32))], [mean], "ReducerOptions")
    flat = b.tensor("flat", [1, 128])
    b.operator("RESHAPE", [hs, b.constant("shape", np.array([1, -1], np.int32))], [flat], "ReshapeOptions")
    fc = b.tensor("fc", [1, 3])
    b.operator("FULLY_CONNECTED", [flat, b.constant("fc.weights", weights((3, 128))),
                                   b.constant("fc.bias", weights((3,), 4))], [fc], "FullyConnectedOptions")
    probs = b.tensor("probs", [1, 3])
    b.operator("SOFTMAX", [fc], [probs], "SoftmaxOptions", beta=1.0)
    return b.finish([x], [probs, mean])


def sparse_float16_weights():
    """MediaPipe's storage forms: float16 weights through DEQUANTIZE, a sparse float16
    filter through DENSIFY then DEQUANTIZE."""
    b = ModelBuilder()
    x = b.tensor("x", [1, 4, 4, 2])
    dense = weights((3, 3, 3, 2))
    dense[np.abs(dense) < 0.5] = 0
    sparse = b.sparse_constant("filter.sparse", dense.astype(np.float16), ["DENSE", "DENSE", "DENSE", "SPARSE_CSR"])
    filt16 = b.tensor("filter.f16", [3, 3, 3, 2], np.float16)
    b.operator("DENSIFY", [sparse], [filt16])
    filt = b.tensor("filter", [3, 3, 3, 2])
    b.operator("DEQUANTIZE", [filt16], [filt])
    bias = b.tensor("bias", [3])
    b.operator("DEQUANTIZE", [b.constant("bias.f16", weights((3,), 5).astype(np.float16))], [bias])
    y = b.tensor("y", [1, 4, 4, 3])
    b.operator("CONV_2D", [x, filt, bias], [y], "Conv2DOptions", padding=b.enum("Padding", "SAME"), strideH=1,
               strideW=1)
    return b.finish([x], [y])


def upsampling_decoder():
    """MediaPipe's custom Convolution2DTransposeBias, TRANSPOSE_CONV, DEPTH_TO_SPACE, PRELU,
    RESIZE_NEAREST_NEIGHBOR, LOGISTIC, TANH."""
    b = ModelBuilder()
    x = b.tensor("x", [1, 2, 2, 4])
    up = b.tensor("up", [1, 4, 4, 2])
    b.operator("CUSTOM", [x, b.constant("up.filter", weights((2, 2, 2, 4))), b.constant("up.bias", weights((2,)))],
               [up], custom_code="Convolution2DTransposeBias",
               custom_options=np.array([1, 2, 2], "<i4").tobytes())
    prelu = b.tensor("prelu", [1, 4, 4, 2])
    b.operator("PRELU", [up, b.constant("alpha", weights((1, 1, 2), 6))], [prelu])
    tconv = b.tensor("tconv", [1, 8, 8, 4])
    b.operator("TRANSPOSE_CONV", [b.constant("tconv.shape", np.array([1, 8, 8, 4], np.int32)),
                                  b.constant("tconv.filter", weights((4, 3, 3, 2))), prelu], [tconv],
               "TransposeConvOptions", padding=b.enum("Padding", "SAME"), strideH=2, strideW=2)
    d2s = b.tensor("d2s", [1, 16, 16, 1])
    b.operator("DEPTH_TO_SPACE", [tconv], [d2s], "DepthToSpaceOptions", blockSize=2)
    nearest = b.tensor("nearest", [1, 8, 8, 1])
    b.operator("RESIZE_NEAREST_NEIGHBOR", [d2s, b.constant("size", np.array([8, 8], np.int32))], [nearest],
               "ResizeNearestNeighborOptions", alignCorners=True)
    sig = b.tensor("sigmoid", [1, 8, 8, 1])
    b.operator("LOGISTIC", [nearest], [sig])
    tanh = b.tensor("tanh", [1, 8, 8, 1])
    b.operator("TANH", [sig], [tanh])
    return b.finish([x], [tanh])


# ---- Invalid and unsupported models: (stem, bytes, exit code, message fragment) ------------------------


def invalid_models():
    cases = []

    def add(stem, data, code, fragment):
        cases.append((stem, data, code, fragment))

    # Operators outside the supported list: all named, with counts, in one message.
    b = ModelBuilder()
    x = b.tensor("x", [1, 4])
    e1, e2, f = b.tensor("exp1", [1, 4]), b.tensor("exp2", [1, 4]), b.tensor("floor", [1, 4])
    b.operator("EXP", [x], [e1])
    b.operator("EXP", [e1], [e2])
    b.operator("FLOOR", [e2], [f])
    r = b.tensor("relu", [1, 4])
    b.operator("RELU", [f], [r])
    add("unsupported_ops", b.finish([x], [r]), UNSUPPORTED, "unsupported TensorFlow Lite operators: EXP x2, FLOOR x1")

    # Bad quantization of an int8 model (int8_conv), each named with its tensor.
    add("int8_zero_scale", int8_conv(x_scale=0.0), INVALID_MODEL,
        "operator #0 (QUANTIZE): tensor 'x.q' (i8): scale 0 is not finite and positive")
    add("int8_zero_point_range", int8_conv(x_zero=200), INVALID_MODEL,
        "operator #0 (QUANTIZE): tensor 'x.q' (i8): zero point 200 is outside [-128, 127]")
    add("int8_channel_scales", int8_conv(filter_scales=[0.1, 0.1]), INVALID_MODEL,
        "operator #1 (CONV_2D): tensor 'filter' (i8): 2 scales and 2 zero points, expected 3")
    add("int8_bias_scale", int8_conv(bias_scale=0.003), INVALID_MODEL, "operator #1 (CONV_2D): bias tensor #3 'bias' has scale 0.003 for output channel 0")
    add("int8_no_quantization", int8_conv(x_scale=None), INVALID_MODEL,
        "operator #0 (QUANTIZE): tensor #1 'x.q' has type INT8 but no quantization scale")
    add("int16_activations", int8_conv(activation_type=np.int16), UNSUPPORTED,
        "operator #0 (QUANTIZE): QUANTIZE to INT16; aotc quantizes to int8 and uint8")

    valid = conv_relu6()
    add("truncated", valid[:len(valid) // 2], INVALID_MODEL, "the FlatBuffers verifier rejected it")

    b = ModelBuilder()
    x = b.tensor("x", [1, 4, 4, 2])
    y = b.tensor("y", [1, 4, 4, 2])
    b.operator("ADD", [x, 7], [y], "AddOptions")
    add("input_index_out_of_range", b.finish([x], [y]), INVALID_MODEL,
        "operator #0 (ADD) input 1 refers to tensor 7 but the subgraph has 2 tensors")

    b = ModelBuilder()
    x = b.tensor("x", [1, 4, 4, 2])
    never = b.tensor("never_written", [1, 4, 4, 2])
    y = b.tensor("y", [1, 4, 4, 2])
    b.operator("ADD", [x, never], [y], "AddOptions")
    add("reads_unwritten_tensor", b.finish([x], [y]), INVALID_MODEL,
        "operator #0 (ADD) reads tensor #1 'never_written' before any operator writes it")

    b = ModelBuilder()
    x = b.tensor("x", [1, 4, 4, 2])
    y = conv(b, x, [1, 4, 4, 3], options=False)
    add("missing_options", b.finish([x], [y]), INVALID_MODEL, "operator #0 (CONV_2D): has no Conv2DOptions")

    # TFLite's PAD takes no negative paddings (the IR's negative pads, crops, are not TFLite's).
    b = ModelBuilder()
    x = b.tensor("x", [1, 4, 4, 2])
    y = b.tensor("y", [1, 3, 4, 2])
    b.operator("PAD", [x, b.constant("paddings", np.array([[0, 0], [0, -1], [0, 0], [0, 0]], np.int32))], [y])
    add("negative_paddings", b.finish([x], [y]), INVALID_MODEL, "paddings hold -1; TFLite's PAD takes non-negative")

    def transpose_conv_bias(params):
        b = ModelBuilder()
        x = b.tensor("x", [1, 2, 2, 4])
        y = b.tensor("y", [1, 4, 4, 2])
        b.operator("CUSTOM", [x, b.constant("filter", weights((2, 2, 2, 4))), b.constant("bias", weights((2,)))],
                   [y], custom_code="Convolution2DTransposeBias", custom_options=np.array(params, "<i4").tobytes())
        return b.finish([x], [y])

    add("custom_options_size", transpose_conv_bias([1, 2]), INVALID_MODEL,
        "operator #0 (CUSTOM(Convolution2DTransposeBias)): custom options hold 8 bytes, expected 12")
    add("custom_options_padding", transpose_conv_bias([0, 2, 2]), INVALID_MODEL,
        "padding code 0 is neither SAME (1) nor VALID (2)")

    def densified(dense, mutate, formats=("DENSE", "SPARSE_CSR"), block_map=None):
        """x * DENSIFY(sparse constant), the sparse constant's metadata changed by mutate."""
        b = ModelBuilder()
        x = b.tensor("x", list(dense.shape))
        sparse = b.sparse_constant("weights.sparse", dense, list(formats))
        mutate(b.tensors[sparse].sparsity)
        w = b.tensor("weights", list(dense.shape))
        b.operator("DENSIFY", [sparse], [w])
        y = b.tensor("y", list(dense.shape))
        b.operator("MUL", [x, w], [y], "MulOptions")
        return b.finish([x], [y])

    pattern = np.array([[0, 1, 0, 2], [3, 0, 0, 0], [0, 0, 4, 5]], np.float32)

    def index_out_of_range(sparsity):
        sparsity.dimMetadata[1].arrayIndices.values[1] = 9

    add("sparse_index_out_of_range", densified(pattern, index_out_of_range), INVALID_MODEL,
        "operator #0 (DENSIFY): tensor #1 'weights.sparse': sparse index 9 is outside dimension 1 of [3,4]")

    def segment_out_of_range(sparsity):
        sparsity.dimMetadata[1].arraySegments.values[-1] = 40

    add("sparse_segment_out_of_range", densified(pattern, segment_out_of_range), INVALID_MODEL,
        "sparse segment [3, 40) is outside array_indices (5 entries)")

    def index_vector_missing(sparsity):  # the union's type set, its table absent (found by fuzzing)
        sparsity.dimMetadata[1].arrayIndices = None

    add("sparse_index_vector_missing", densified(pattern, index_vector_missing), INVALID_MODEL,
        "operator #0 (DENSIFY): tensor #1 'weights.sparse': a sparse dimension has no index vector")

    def block_sparse(sparsity):
        sparsity.blockMap = [0]

    add("block_sparse", densified(pattern, block_sparse), UNSUPPORTED, "operator #0 (DENSIFY): tensor #1 'weights.sparse': block-sparse constants are not supported")

    # DENSIFY, then DEQUANTIZE into a tensor of another size (found by fuzzing).
    b = ModelBuilder()
    x = b.tensor("x", [6, 4])
    sparse = b.sparse_constant("weights.sparse", pattern.astype(np.float16), ["DENSE", "SPARSE_CSR"])
    w16 = b.tensor("weights.f16", [3, 4], np.float16)
    b.operator("DENSIFY", [sparse], [w16])
    w = b.tensor("weights", [6, 4])
    b.operator("DEQUANTIZE", [w16], [w])
    y = b.tensor("y", [6, 4])
    b.operator("MUL", [x, w], [y], "MulOptions")
    add("densify_dequantize_size", b.finish([x], [y]), INVALID_MODEL,
        "operator #1 (DEQUANTIZE): tensor #3 'weights' has shape [6,4] but its input holds 12 values")

    b = ModelBuilder()
    x = b.tensor("x", [1, 4])
    r = b.tensor("relu", [1, 4])
    b.operator("RELU", [x], [r])
    y = b.tensor("y", [1, 4])
    b.operator("DEQUANTIZE", [r], [y])
    add("dequantize_computed", b.finish([x], [y]), UNSUPPORTED,
        "operator #1 (DEQUANTIZE): DEQUANTIZE of tensor #1 'relu' of type FLOAT32")

    b = ModelBuilder()
    x = b.tensor("x", [1, 4, 4, 3])
    y = b.tensor("y", [1, 4, 4])
    b.operator("MEAN", [x, b.constant("axes", np.array([3], np.int32))], [y], "ReducerOptions")
    add("mean_channel_axis", b.finish([x], [y]), UNSUPPORTED,
        "MEAN over axes [3] of [1,4,4,3]; aotc supports the mean over height and width")

    b = ModelBuilder()
    x = b.tensor("x", [1, 4, 4, 2])
    y = conv(b, x, [1, 4, 4, 3])
    b.tensors[y].shape = [1, 4, 5, 3]
    add("declared_shape_mismatch", b.finish([x], [y]), INVALID_MODEL,
        "output tensor #1 'conv' is declared [1,4,5,3] but the operator computes [1,4,4,3]")

    b = ModelBuilder()
    x = b.tensor("x", [1, 4, 4, 2])
    y = conv(b, x, [1, 4, 4, 3])
    b.operators[0].opcodeIndex = 5
    add("opcode_index_out_of_range", b.finish([x], [y]), INVALID_MODEL,
        "operator #0 has op code index 5 but the model has 1 op codes")

    b = ModelBuilder()
    x = b.tensor("x", [1, 4, 4, 2])
    y = conv(b, x, [1, 4, 4, 3])
    b.tensors[2].buffer = 9
    add("buffer_index_out_of_range", b.finish([x], [y]), INVALID_MODEL,
        "tensor #2 'conv.filter' refers to buffer 9 but the model has 3 buffers")

    b = ModelBuilder()
    x = b.tensor("x", [1, 4, 4, 2])
    y = conv(b, x, [1, 4, 4, 3])
    b.tensors[3].shape = [4]
    add("constant_size_mismatch", b.finish([x], [y]), INVALID_MODEL,
        "tensor #3 'conv.bias' holds 12 bytes of data but its shape and type (FLOAT32) need 16")

    b = ModelBuilder()
    x = b.tensor("x", [1, 4, 4, -2])
    y = b.tensor("y", [1, 4, 4, 2])
    b.operator("RELU", [x], [y])
    add("negative_dimension", b.finish([x], [y]), INVALID_MODEL, "tensor #0 'x' has a negative dimension -2")

    b = ModelBuilder()
    x = b.tensor("x", [1, 4])
    y = b.tensor("y", [1, 4])
    b.operator("RELU", [x], [x])
    add("writes_graph_input", b.finish([x], [y]), INVALID_MODEL,
        "operator #0 (RELU) writes tensor #0 'x', which is already defined")

    b = ModelBuilder()
    x = b.tensor("x", [1, 4])
    y, z = b.tensor("y", [1, 4]), b.tensor("z", [1, 4])
    b.operator("RELU", [x], [y])
    add("output_never_written", b.finish([x], [y, z]), INVALID_MODEL, "graph output tensor #2 'z' is never written")

    b = ModelBuilder()
    x = b.tensor("x", [1, 4], np.float16)
    y = b.tensor("y", [1, 4])
    b.operator("DEQUANTIZE", [x], [y])
    add("float16_graph_input", b.finish([x], [y]), UNSUPPORTED,
        "graph input tensor #0 'x' has type FLOAT16; aotc compiles float32, int8 and uint8 inputs")

    b = ModelBuilder()
    x = b.tensor("x", [1, 4, 4, 2])
    y = conv(b, x, [1, 4, 4, 3], fusedActivationFunction=b.enum("ActivationFunctionType", "SIGN_BIT"))
    add("fused_sign_bit", b.finish([x], [y]), UNSUPPORTED, "fused activation SIGN_BIT is not supported")

    b = ModelBuilder()
    x = b.tensor("x", [1, 4, 4, 2])
    y = conv(b, x, [1, 2, 2, 3], strideH=0, strideW=0)
    add("zero_stride", b.finish([x], [y]), INVALID_MODEL, "stride 0 and dilation 1 must be positive")

    b = ModelBuilder()
    x = b.tensor("x", [2, 6])
    y = b.tensor("y", [5, 3])
    b.operator("RESHAPE", [x, b.constant("shape", np.array([5, -1], np.int32))], [y], "ReshapeOptions")
    add("reshape_count_mismatch", b.finish([x], [y]), INVALID_MODEL, "operator #0 (RESHAPE): node 'y' (reshape): "
        "target shape [5,-1] must be fully resolved")

    b = ModelBuilder()
    x = b.tensor("x", [1, 2, 2, 4])
    y = b.tensor("y", [1, 9, 9, 2])
    b.operator("TRANSPOSE_CONV", [b.constant("shape", np.array([1, 9, 9, 2], np.int32)),
                                  b.constant("filter", weights((2, 3, 3, 4))), x], [y], "TransposeConvOptions",
               padding=b.enum("Padding", "VALID"), strideH=2, strideW=2)
    add("transpose_conv_output_too_large", b.finish([x], [y]), UNSUPPORTED,
        "an output of 9 from 2 (kernel 3, VALID) extends past the transposed convolution")

    b = ModelBuilder()
    x = b.tensor("x", [1, 4, 4, 8])
    y = b.tensor("y", [1, 12, 12, 1])
    b.operator("DEPTH_TO_SPACE", [x], [y], "DepthToSpaceOptions", blockSize=3)
    add("depth_to_space_block", b.finish([x], [y]), INVALID_MODEL, "operator #0 (DEPTH_TO_SPACE): node 'y' "
        "(depth_to_space): input channels 8 are not divisible by block^2 = 9")
    return cases


def generate(flatc):
    """{relative path: bytes} of the whole corpus, expectations.tsv included."""
    with tempfile.TemporaryDirectory() as tempdir:
        tflite_builder.load_schema(flatc, tempdir)
        files = {f"valid/{f.__name__}{SUFFIX}": f() for f in (conv_relu6, mixed_ops, sparse_float16_weights,
                                                               upsampling_decoder, int8_conv)}
        expectations = []
        for stem, data, code, fragment in invalid_models():
            files[f"invalid/{stem}{SUFFIX}"] = data
            expectations.append((f"{stem}{SUFFIX}", code, fragment))
    files["expectations.tsv"] = corpus_writer.expectations_file(expectations)
    return files



if __name__ == "__main__":
    sys.exit(corpus_writer.main(__file__, __doc__, SUFFIX, generate))
