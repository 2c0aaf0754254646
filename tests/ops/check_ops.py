#!/usr/bin/python3
"""Checks the reference evaluator, op by op, against torch.nn.functional.

For every op and attribute combination below, writes a one-node .air graph with
random constants given inline and a random input, runs
`aotc CASE.air --passes= --emit=run --input ... -o out.bin` (no passes: the
evaluator sees the node exactly as written) and compares the result with
PyTorch on the same float32 data, computed in float64 (resize modes PyTorch
lacks: a NumPy transcription of TensorFlow Lite's reference kernels):
    max|aotc - torch| <= 1e-5 * max(1, max|torch|).
Because the parser checks every declared output shape with the shape rules,
each case also checks the shape rules against PyTorch's output shape.

Usage: check_ops.py --aotc PATH [-k SUBSTRING]   (exit status 0 iff all pass)
"""
import argparse
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

RELATIVE_TOLERANCE = 1e-5
rng = np.random.default_rng(20240611)


def rand(*shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape).astype(np.float32)


def number(v):
    # repr of the float32 value as a double round-trips exactly through strtod.
    return repr(float(np.float32(v)))


def ints(values):
    return "[" + ",".join(str(int(v)) for v in values) + "]"


def shape_text(shape):
    return "f32" + ints(shape)


class Case:
    """One node: `op(operands) {attrs} epilogue[...]`; tensors named in `inputs` are
    graph inputs (in order), all others constants. `ref` maps a dict of float64
    torch tensors to the expected output."""

    def __init__(self, name, op, operands, tensors, ref, attrs="", inputs=("x",), epilogue=""):
        self.name, self.op, self.operands, self.tensors = name, op, operands, tensors
        self.ref, self.attrs, self.inputs, self.epilogue = ref, attrs, list(inputs), epilogue

    def expected(self):
        t = {k: torch.from_numpy(v.astype(np.float64)) for k, v in self.tensors.items()}
        return self.ref(t).numpy()

    def air(self, out_shape):
        lines = [f"graph {self.name} {{"]
        lines += [f"  input %{n}: {shape_text(self.tensors[n].shape)}" for n in self.inputs]
        for n, v in self.tensors.items():
            if n not in self.inputs:
                values = ", ".join(number(e) for e in v.reshape(-1))
                lines.append(f"  const %{n}: {shape_text(v.shape)} = [{values}]")
        node = f"  %y = {self.op}(" + ", ".join("%" + n for n in self.operands) + ")"
        if self.attrs:
            node += " {" + self.attrs + "}"
        if self.epilogue:
            node += " epilogue[" + self.epilogue + "]"
        lines += [node + ": " + shape_text(out_shape), "  output %y", "}"]
        return "\n".join(lines) + "\n"


def conv_attrs(stride=(1, 1), pad=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    return f"stride={ints(stride)}, pad={ints(pad)}, dilation={ints(dilation)}, groups={groups}"


def pool_attrs(kernel, stride, pad=(0, 0, 0, 0), dilation=(1, 1), ceil=False, include_pad=True):
    return (f"kernel={ints(kernel)}, stride={ints(stride)}, pad={ints(pad)}, dilation={ints(dilation)}, "
            f"ceil_mode={str(ceil).lower()}, count_include_pad={str(include_pad).lower()}")


def torch_pad(pad):
    # IR pads are (top, left, bottom, right); F.pad wants (left, right, top, bottom).
    top, left, bottom, right = pad
    return (left, right, top, bottom)


def per_channel(v, rank):
    return v.reshape((1, -1) + (1,) * (rank - 2))


# ---- the cases -------------------------------------------------------------------

def conv_cases():
    x = rand(2, 4, 9, 8)
    cases = []

    def conv(name, w_shape, bias=False, pad=(0, 0, 0, 0), stride=(1, 1), dilation=(1, 1), groups=1, epilogue="",
             extra=None, after=lambda y, t: y):
        tensors = {"x": x, "w": rand(*w_shape)}
        operands = ["x", "w"]
        if bias:
            tensors["b"] = rand(w_shape[0])
            operands.append("b")
        tensors.update(extra or {})

        def ref(t):
            # Asymmetric padding is not expressible in F.conv2d: pad explicitly with zeros.
            y = F.conv2d(F.pad(t["x"], torch_pad(pad)), t["w"], t.get("b"), stride, 0, dilation, groups)
            return after(y, t)

        cases.append(Case(name, "conv2d", operands, tensors, ref, conv_attrs(stride, pad, dilation, groups),
                          epilogue=epilogue))

    conv("conv2d_3x3_pad1_bias", (6, 4, 3, 3), bias=True, pad=(1, 1, 1, 1))
    conv("conv2d_stride2", (5, 4, 3, 3), pad=(1, 1, 1, 1), stride=(2, 2))
    conv("conv2d_rect_kernel_stride", (3, 4, 3, 1), bias=True, pad=(1, 0, 1, 0), stride=(2, 1))
    conv("conv2d_dilated", (4, 4, 3, 3), pad=(2, 3, 2, 3), dilation=(2, 3))
    conv("conv2d_grouped", (6, 2, 3, 3), bias=True, pad=(1, 1, 1, 1), groups=2)
    conv("conv2d_depthwise", (4, 1, 3, 3), pad=(1, 1, 1, 1), stride=(2, 2), groups=4)
    conv("conv2d_depthwise_multiplier2", (8, 1, 3, 3), bias=True, pad=(1, 1, 1, 1), groups=4)
    conv("conv2d_asymmetric_pad", (3, 4, 3, 2), bias=True, pad=(0, 1, 2, 0), stride=(2, 1))
    conv("conv2d_pad_larger_than_kernel", (2, 4, 3, 3), bias=True, pad=(3, 3, 3, 3))
    conv("conv2d_1x1", (7, 4, 1, 1))
    # Every post-op kind, on conv2d.
    conv("conv2d_epilogue_affine_add_relu", (6, 4, 3, 3), bias=True, pad=(1, 1, 1, 1),
         epilogue="affine(%s, %t), add(%r), relu",
         extra={"s": rand(6), "t": rand(6), "r": rand(2, 6, 9, 8)},
         after=lambda y, t: F.relu(y * per_channel(t["s"], 4) + per_channel(t["t"], 4) + t["r"]))
    conv("conv2d_epilogue_relu6", (6, 4, 3, 3), bias=True, pad=(1, 1, 1, 1), epilogue="clamp{min=0, max=6}",
         after=lambda y, t: torch.clamp(y, 0, 6))
    conv("conv2d_epilogue_hardswish", (6, 4, 3, 3), bias=True, pad=(1, 1, 1, 1), epilogue="hardswish",
         after=lambda y, t: F.hardswish(y))
    conv("conv2d_epilogue_sigmoid_mul", (6, 4, 1, 1), epilogue="sigmoid, mul(%m)", extra={"m": rand(1, 6, 1, 1)},
         after=lambda y, t: torch.sigmoid(y) * t["m"])
    conv("conv2d_epilogue_elu_softplus", (6, 4, 3, 3), bias=True, pad=(1, 1, 1, 1),
         epilogue="elu{alpha=0.5}, softplus", after=lambda y, t: F.softplus(F.elu(y, 0.5)))
    return cases


def conv_transpose_cases():
    x = rand(2, 4, 5, 6)
    cases = []

    def conv_transpose(name, w_shape, bias=False, pad=(0, 0, 0, 0), stride=(1, 1), epilogue="",
                       after=lambda y: y):
        tensors = {"x": x, "w": rand(*w_shape)}
        operands = ["x", "w"]
        if bias:
            tensors["b"] = rand(w_shape[1])
            operands.append("b")

        def ref(t):
            # The full transposed convolution, cropped by pad (top, left, bottom, right).
            y = F.conv_transpose2d(t["x"], t["w"], t.get("b"), stride)
            top, left, bottom, right = pad
            return after(y[:, :, top:y.shape[2] - bottom, left:y.shape[3] - right])

        cases.append(Case(name, "conv_transpose2d", operands, tensors, ref, f"stride={ints(stride)}, pad={ints(pad)}",
                          epilogue=epilogue))

    conv_transpose("conv_transpose2d_k4_s2_pad1_bias", (4, 3, 4, 4), bias=True, pad=(1, 1, 1, 1), stride=(2, 2))
    conv_transpose("conv_transpose2d_k2_s2_bias", (4, 3, 2, 2), bias=True, stride=(2, 2))
    conv_transpose("conv_transpose2d_k3_s1_pad1", (4, 5, 3, 3), pad=(1, 1, 1, 1))
    conv_transpose("conv_transpose2d_k3_s2_same", (4, 3, 3, 3), bias=True, pad=(0, 0, 1, 1), stride=(2, 2))
    conv_transpose("conv_transpose2d_rect_asymmetric", (4, 2, 3, 2), bias=True, pad=(0, 1, 2, 0), stride=(2, 1))
    conv_transpose("conv_transpose2d_stride_beyond_kernel", (4, 3, 2, 2), stride=(3, 3))
    conv_transpose("conv_transpose2d_1x1", (4, 6, 1, 1), bias=True)
    conv_transpose("conv_transpose2d_epilogue_relu", (4, 3, 4, 4), bias=True, pad=(1, 1, 1, 1), stride=(2, 2),
                   epilogue="relu", after=F.relu)
    # Against PyTorch's own padding, not the cropping above.
    cases.append(Case("conv_transpose2d_torch_padding", "conv_transpose2d", ["x", "w", "b"],
                      {"x": x, "w": rand(4, 3, 3, 3), "b": rand(3)},
                      lambda t: F.conv_transpose2d(t["x"], t["w"], t["b"], 2, padding=(1, 2)),
                      f"stride={ints((2, 2))}, pad={ints((1, 2, 1, 2))}"))
    return cases


def norm_and_elementwise_cases():
    x = rand(2, 5, 4, 3, low=-4, high=4)
    c = x.shape[1]
    stats = {"mean": rand(c), "var": rand(c, low=0.5, high=2.0), "gamma": rand(c), "beta": rand(c)}
    eps = float(np.float32(1e-3))
    cases = [
        Case("batch_norm_affine", "batch_norm", ["x", "mean", "var", "gamma", "beta"], {"x": x, **stats},
             lambda t: F.batch_norm(t["x"], t["mean"], t["var"], t["gamma"], t["beta"], False, 0.0, eps),
             f"eps={number(eps)}"),
        Case("batch_norm_no_affine", "batch_norm", ["x", "mean", "var"],
             {"x": x, "mean": stats["mean"], "var": stats["var"]},
             lambda t: F.batch_norm(t["x"], t["mean"], t["var"], None, None, False, 0.0, eps), f"eps={number(eps)}"),
        Case("batch_norm_rank2", "batch_norm", ["x", "mean", "var", "gamma", "beta"], {"x": rand(3, c), **stats},
             lambda t: F.batch_norm(t["x"], t["mean"], t["var"], t["gamma"], t["beta"], False, 0.0, eps),
             f"eps={number(eps)}"),
        Case("affine", "affine", ["x", "s", "t"], {"x": x, "s": rand(c), "t": rand(c)},
             lambda t: t["x"] * per_channel(t["s"], 4) + per_channel(t["t"], 4)),
        Case("relu", "relu", ["x"], {"x": x}, lambda t: F.relu(t["x"])),
        Case("clamp_relu6", "clamp", ["x"], {"x": x}, lambda t: torch.clamp(t["x"], 0, 6), "min=0, max=6"),
        Case("clamp_narrow", "clamp", ["x"], {"x": x}, lambda t: torch.clamp(t["x"], -0.5, 0.25),
             "min=-0.5, max=0.25"),
        Case("hardswish", "hardswish", ["x"], {"x": x}, lambda t: F.hardswish(t["x"])),
        Case("sigmoid", "sigmoid", ["x"], {"x": x}, lambda t: torch.sigmoid(t["x"])),
        Case("tanh", "tanh", ["x"], {"x": x}, lambda t: torch.tanh(t["x"])),
        Case("elu", "elu", ["x"], {"x": x}, lambda t: F.elu(t["x"]), "alpha=1"),
        Case("elu_alpha", "elu", ["x"], {"x": 4 * x}, lambda t: F.elu(t["x"], 0.3), "alpha=0.3"),
        Case("softplus", "softplus", ["x"], {"x": 8 * x}, lambda t: F.softplus(t["x"])),
        Case("prelu_per_channel", "prelu", ["x", "a"], {"x": x, "a": rand(c, 1, 1)},
             lambda t: F.prelu(t["x"], t["a"].reshape(-1))),
        Case("prelu_single_alpha", "prelu", ["x", "a"], {"x": x, "a": rand(1)}, lambda t: F.prelu(t["x"], t["a"])),
        Case("prelu_broadcast_alpha", "prelu", ["x", "a"], {"x": x, "a": rand(1, c, 1, 3)},
             lambda t: torch.where(t["x"] >= 0, t["x"], t["a"] * t["x"])),
        Case("prelu_alpha_input", "prelu", ["x", "a"], {"x": x, "a": rand(*x.shape)},
             lambda t: torch.where(t["x"] >= 0, t["x"], t["a"] * t["x"]), inputs=("x", "a")),
        Case("dropout", "dropout", ["x"], {"x": x}, lambda t: F.dropout(t["x"], 0.5, training=False)),
    ]
    for op, fn in (("add", torch.add), ("mul", torch.mul), ("max", torch.maximum), ("min", torch.minimum),
                   ("div", torch.div)):
        cases += [
            Case(f"{op}_same_shape", op, ["x", "z"], {"x": x, "z": rand(*x.shape)}, lambda t, fn=fn: fn(t["x"], t["z"]),
                 inputs=("x", "z")),
            Case(f"{op}_per_channel_const", op, ["x", "c"], {"x": x, "c": rand(c, 1, 1)},
                 lambda t, fn=fn: fn(t["x"], t["c"])),
            Case(f"{op}_both_broadcast", op, ["a", "b"], {"a": rand(2, 1, 4, 1), "b": rand(1, 3, 1, 5)},
                 lambda t, fn=fn: fn(t["a"], t["b"]), inputs=("a", "b")),
            Case(f"{op}_scalar_first", op, ["s", "x"], {"s": rand(), "x": x}, lambda t, fn=fn: fn(t["s"], t["x"])),
            Case(f"{op}_lower_rank", op, ["x", "r"], {"x": x, "r": rand(4, 3)}, lambda t, fn=fn: fn(t["x"], t["r"]),
                 inputs=("x", "r")),
        ]
    cases.append(Case("add_epilogue_relu", "add", ["x", "z"], {"x": x, "z": rand(*x.shape)},
                      lambda t: F.relu(t["x"] + t["z"]), inputs=("x", "z"), epilogue="relu"))
    # Every post-op kind, chained in one epilogue.
    cases.append(Case("dropout_epilogue_every_post_op", "dropout", ["x"],
                      {"x": x, "s": rand(c), "t": rand(c), "r": rand(*x.shape), "m": rand(1, c, 1, 1)},
                      lambda t: F.relu(torch.sigmoid(F.hardswish(
                          torch.clamp(t["x"] * per_channel(t["s"], 4) + per_channel(t["t"], 4) + t["r"], -1.5, 2)
                          * t["m"]))),
                      epilogue="affine(%s, %t), add(%r), clamp{min=-1.5, max=2}, mul(%m), hardswish, sigmoid, relu"))
    return cases


def pool_cases():
    cases = []

    def max_pool(name, x, kernel, stride, pad=(0, 0, 0, 0), dilation=(1, 1), ceil=False):
        symmetric = pad[0] == pad[2] and pad[1] == pad[3]

        def ref(t):
            if symmetric:
                return F.max_pool2d(t["x"], kernel, stride, (pad[0], pad[1]), dilation, ceil_mode=ceil)
            assert not ceil, "no PyTorch reference for asymmetric padding with ceil_mode"
            padded = F.pad(t["x"], torch_pad(pad), value=float("-inf"))
            return F.max_pool2d(padded, kernel, stride, 0, dilation)

        cases.append(Case(name, "max_pool2d", ["x"], {"x": x}, ref, pool_attrs(kernel, stride, pad, dilation, ceil)))

    def avg_pool(name, x, kernel, stride, pad=(0, 0, 0, 0), ceil=False, include_pad=True, epilogue="", extra=None,
                 after=lambda y, t: y):
        symmetric = pad[0] == pad[2] and pad[1] == pad[3]

        def ref(t):
            if symmetric:
                y = F.avg_pool2d(t["x"], kernel, stride, (pad[0], pad[1]), ceil, include_pad)
            else:
                assert not ceil, "no PyTorch reference for asymmetric padding with ceil_mode"
                # Window sums over the zero-padded input, divided by the padded or the in-bounds count.
                sums = F.avg_pool2d(F.pad(t["x"], torch_pad(pad)), kernel, stride, divisor_override=1)
                ones = F.pad(torch.ones_like(t["x"]), torch_pad(pad))
                counts = F.avg_pool2d(ones if not include_pad else torch.ones_like(ones), kernel, stride,
                                      divisor_override=1)
                y = sums / counts
            return after(y, t)

        cases.append(Case(name, "avg_pool2d", ["x"], {"x": x, **(extra or {})}, ref,
                          pool_attrs(kernel, stride, pad, (1, 1), ceil, include_pad), epilogue=epilogue))

    x = rand(2, 3, 10, 9)
    max_pool("max_pool2d_resnet_stem", x, (3, 3), (2, 2), (1, 1, 1, 1))
    max_pool("max_pool2d_ceil", rand(1, 2, 8, 10), (3, 3), (2, 2), ceil=True)
    max_pool("max_pool2d_ceil_pad", rand(1, 2, 7, 7), (2, 2), (2, 2), (1, 1, 1, 1), ceil=True)
    max_pool("max_pool2d_dilated", x, (3, 3), (1, 1), (1, 1, 1, 1), dilation=(2, 2))
    max_pool("max_pool2d_dilated_strided_rect", x, (3, 2), (2, 1), (1, 1, 1, 1), dilation=(2, 3))
    max_pool("max_pool2d_asymmetric_pad", rand(1, 2, 7, 7), (2, 2), (2, 2), (0, 1, 1, 0))
    max_pool("max_pool2d_rect", x, (3, 2), (1, 2))
    for include in (True, False):
        suffix = "include_pad" if include else "exclude_pad"
        avg_pool(f"avg_pool2d_pad1_{suffix}", x, (3, 3), (2, 2), (1, 1, 1, 1), include_pad=include)
        avg_pool(f"avg_pool2d_ceil_pad1_{suffix}", rand(1, 2, 8, 8), (3, 3), (2, 2), (1, 1, 1, 1), ceil=True,
                 include_pad=include)
        avg_pool(f"avg_pool2d_ceil_nopad_{suffix}", rand(1, 2, 7, 9), (2, 2), (2, 2), ceil=True, include_pad=include)
        avg_pool(f"avg_pool2d_asymmetric_pad_{suffix}", rand(1, 2, 7, 6), (2, 3), (2, 2), (1, 0, 0, 2),
                 include_pad=include)
    avg_pool("avg_pool2d_epilogue_affine_sigmoid", x, (2, 2), (2, 2), epilogue="affine(%s, %t), sigmoid",
             extra={"s": rand(3), "t": rand(3)},
             after=lambda y, t: torch.sigmoid(y * per_channel(t["s"], 4) + per_channel(t["t"], 4)))

    for name, shape, size in (("3x2", (2, 3, 7, 5), (3, 2)), ("1x1", (2, 3, 7, 5), (1, 1)),
                              ("non_divisible", (1, 2, 5, 6), (3, 4)), ("upsample", (1, 2, 2, 3), (3, 5)),
                              ("identity", (1, 2, 7, 5), (7, 5))):
        cases.append(Case(f"adaptive_avg_pool2d_{name}", "adaptive_avg_pool2d", ["x"], {"x": rand(*shape)},
                          lambda t, size=size: F.adaptive_avg_pool2d(t["x"], size), f"output_size={ints(size)}"))
    cases.append(Case("global_avg_pool", "global_avg_pool", ["x"], {"x": rand(2, 5, 7, 6)},
                      lambda t: F.adaptive_avg_pool2d(t["x"], 1)))
    return cases


def data_movement_cases():
    x = rand(2, 3, 4, 5)
    cases = [
        Case("linear_bias", "linear", ["x", "w", "b"], {"x": rand(3, 10), "w": rand(4, 10), "b": rand(4)},
             lambda t: F.linear(t["x"], t["w"], t["b"])),
        Case("linear_flattens_nchw", "linear", ["x", "w"], {"x": rand(2, 3, 2, 2), "w": rand(5, 12)},
             lambda t: F.linear(t["x"].flatten(1), t["w"])),
        Case("linear_epilogue_add_clamp", "linear", ["x", "w"], {"x": rand(3, 10), "w": rand(4, 10), "a": rand(4)},
             lambda t: torch.clamp(F.linear(t["x"], t["w"]) + t["a"], -0.5, 0.5),
             epilogue="add(%a), clamp{min=-0.5, max=0.5}"),
    ]
    for start, end in ((1, -1), (2, 3), (0, -1), (1, 2), (0, 0)):
        cases.append(Case(f"flatten_{start}_{end}".replace("-", "m"), "flatten", ["x"], {"x": x},
                          lambda t, s=start, e=end: torch.flatten(t["x"], s, e), f"start_dim={start}, end_dim={end}"))
    for shape in ((4, 30), (120,), (2, 3, 2, 10)):
        cases.append(Case("reshape_" + "x".join(map(str, shape)), "reshape", ["x"], {"x": x},
                          lambda t, s=shape: t["x"].reshape(s), f"shape={ints(shape)}"))
    for axis in range(4):
        shapes = [list(x.shape) for _ in range(3)]
        for s, extent in zip(shapes, (2, 1, 3)):
            s[axis] = extent
        tensors = {"a": rand(*shapes[0]), "b": rand(*shapes[1]), "c": rand(*shapes[2])}
        cases.append(Case(f"concat_axis{axis}", "concat", ["a", "b", "c"], tensors,
                          lambda t, axis=axis: torch.cat([t["a"], t["b"], t["c"]], axis), f"axis={axis}",
                          inputs=("a", "c")))
    cases.append(Case("concat_single", "concat", ["x"], {"x": x}, lambda t: t["x"], "axis=1"))
    for axis in range(4):
        cases.append(Case(f"softmax_axis{axis}", "softmax", ["x"], {"x": x * 4},
                          lambda t, axis=axis: torch.softmax(t["x"], axis), f"axis={axis}"))
    cases.append(Case("softmax_logits", "softmax", ["x"], {"x": rand(4, 10, low=-20, high=20)},
                      lambda t: torch.softmax(t["x"], 1), "axis=1"))
    for name, shape, pads, value in (("rank4", (2, 3, 4, 5), (0, 1, 2, 0, 1, 0, 3, 2), 1.5),
                                     ("rank2", (3, 4), (1, 2, 0, 3), -2.0), ("rank3_zero", (2, 3, 4), (1, 0, 1, 0, 2, 2), 0.0),
                                     ("rank1", (5,), (3, 1), 0.25)):
        rank = len(shape)
        torch_pads = tuple(p for d in reversed(range(rank)) for p in (pads[d], pads[d + rank]))
        cases.append(Case(f"pad_{name}", "pad", ["x"], {"x": rand(*shape)},
                          lambda t, tp=torch_pads, v=value: F.pad(t["x"], tp, value=v),
                          f"pads={ints(pads)}, value={number(value)}"))
    for shape, perm in (((2, 3, 4, 5), (0, 2, 3, 1)), ((2, 4, 5, 3), (0, 3, 1, 2)), ((2, 3, 4, 5), (3, 1, 0, 2)),
                        ((2, 3, 4, 5), (0, 1, 2, 3)), ((3, 4), (1, 0)), ((2, 3, 4), (2, 0, 1)), ((5,), (0,))):
        cases.append(Case("transpose_" + "".join(map(str, perm)) + f"_rank{len(shape)}", "transpose", ["x"],
                          {"x": rand(*shape)}, lambda t, p=perm: t["x"].permute(p), f"perm={ints(perm)}"))

    def tf_depth_to_space(t, b):
        # TensorFlow's DCR order: channel (i*b + j) * C_out + c moves to row h*b + i, column w*b + j.
        n, c, h, w = t["x"].shape
        return t["x"].view(n, b, b, c // (b * b), h, w).permute(0, 3, 4, 1, 5, 2).reshape(n, c // (b * b), h * b, w * b)

    for name, shape, block in (("b2", (2, 8, 3, 4), 2), ("b3", (1, 18, 2, 3), 3), ("b2_one_channel_out", (1, 4, 3, 2), 2),
                               ("b1", (1, 3, 2, 2), 1)):
        cases.append(Case(f"depth_to_space_{name}", "depth_to_space", ["x"], {"x": rand(*shape)},
                          lambda t, b=block: tf_depth_to_space(t, b), f"block={block}"))
    return cases


def resize_attrs(size, align_corners=False, half_pixel_centers=False):
    return (f"size={ints(size)}, align_corners={str(align_corners).lower()}, "
            f"half_pixel_centers={str(half_pixel_centers).lower()}")


def tflite_resize(x, size, bilinear, align_corners=False, half_pixel_centers=False):
    """NumPy transcription of TFLite's reference ResizeBilinear (float) and
    ResizeNearestNeighbor on an NCHW float64 array: sample positions in float32,
    as TFLite computes them; interpolation in float64."""
    def scale(n_in, n_out):
        if align_corners and n_out > 1:
            return np.float32(n_in - 1) / np.float32(n_out - 1)
        return np.float32(n_in) / np.float32(n_out)

    def bilinear_taps(n_in, n_out):
        o = np.arange(n_out, dtype=np.float32)
        s = scale(n_in, n_out)
        src = (o + np.float32(0.5)) * s - np.float32(0.5) if half_pixel_centers else o * s
        lo = np.maximum(np.floor(src), 0).astype(np.int64)
        hi = np.minimum(np.ceil(src), n_in - 1).astype(np.int64)
        return lo, hi, src.astype(np.float64) - lo

    def nearest_index(n_in, n_out):
        offset = np.float32(0.5 if half_pixel_centers else 0.0)
        src = (np.arange(n_out, dtype=np.float32) + offset) * scale(n_in, n_out)
        # Round half away from zero (TfLiteRound); src >= 0. np.round would round half to even.
        i = np.floor(src.astype(np.float64) + 0.5) if align_corners else np.floor(src)
        i = np.minimum(i.astype(np.int64), n_in - 1)
        return np.maximum(i, 0) if half_pixel_centers else i

    h_in, w_in = x.shape[2], x.shape[3]
    if not bilinear:
        return x[:, :, nearest_index(h_in, size[0])][:, :, :, nearest_index(w_in, size[1])]
    y0, y1, dy = bilinear_taps(h_in, size[0])
    x0, x1, dx = bilinear_taps(w_in, size[1])
    dy, dx = dy[:, None], dx[None, :]
    at = lambda ys, xs: x[:, :, ys][:, :, :, xs]
    return (at(y0, x0) * (1 - dy) * (1 - dx) + at(y1, x0) * dy * (1 - dx) + at(y0, x1) * (1 - dy) * dx
            + at(y1, x1) * dy * dx)


def resize_cases():
    cases = []
    x = rand(2, 3, 5, 7)
    # 14x26 -> 23x22: sample positions whose float32 value falls just below an integer
    # (or a .5 with align_corners) where exact arithmetic reaches it; TFLite's float
    # index differs there.
    inputs = {"up": x, "down": x, "up_down": x, "double": x, "to_1x1": x, "float_rounding": rand(1, 2, 14, 26)}
    sizes = {"up": (9, 11), "down": (3, 2), "up_down": (12, 4), "double": (10, 14), "to_1x1": (1, 1),
             "float_rounding": (23, 22)}
    flags = {"plain": (False, False), "align_corners": (True, False), "half_pixel": (False, True)}
    for size_name, size in sizes.items():
        x = inputs[size_name]
        for flag_name, (align, half) in flags.items():
            attrs = resize_attrs(size, align, half)
            if flag_name == "plain":
                bilinear_ref = lambda t, s=size: torch.from_numpy(tflite_resize(t["x"].numpy(), s, True))
            else:
                # PyTorch's half-pixel sampling (align_corners=False) is TFLite's half_pixel_centers.
                bilinear_ref = lambda t, s=size, a=align: F.interpolate(t["x"], s, mode="bilinear", align_corners=a)
            cases.append(Case(f"resize_bilinear_{size_name}_{flag_name}", "resize_bilinear", ["x"], {"x": x},
                              bilinear_ref, attrs))
            cases.append(Case(f"resize_nearest_{size_name}_{flag_name}", "resize_nearest", ["x"], {"x": x},
                              lambda t, s=size, a=align, h=half: torch.from_numpy(
                                  tflite_resize(t["x"].numpy(), s, False, a, h)), attrs))
    # PyTorch's nearest modes as independent references for two of the flag combinations,
    # run in float32 (exact for a copy): only PyTorch's float32 kernel computes the
    # source index in float as TFLite does; on float64 it differs in float_rounding.
    for size_name, size in sizes.items():
        x = inputs[size_name]
        for flag_name, mode, half in (("plain", "nearest", False), ("half_pixel", "nearest-exact", True)):
            cases.append(Case(f"resize_nearest_{size_name}_{flag_name}_vs_torch", "resize_nearest", ["x"], {"x": x},
                              lambda t, s=size, m=mode: F.interpolate(t["x"].float(), s, mode=m).double(),
                              resize_attrs(size, half_pixel_centers=half)))
    return cases


# ---- running them ------------------------------------------------------------------

def run_case(aotc, case, workdir):
    expected = case.expected()
    air = workdir / f"{case.name}.air"
    air.write_text(case.air(expected.shape))
    command = [aotc, str(air), "--passes=", "--emit=run", "-o", str(workdir / f"{case.name}.out")]
    for n in case.inputs:
        path = workdir / f"{case.name}.{n}.bin"
        case.tensors[n].astype("<f4").tofile(path)
        command += ["--input", str(path)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        return f"aotc exited with {result.returncode}: {result.stderr.strip()}"
    actual = np.fromfile(workdir / f"{case.name}.out", dtype="<f4")
    if actual.size != expected.size:
        return f"got {actual.size} values, expected {expected.size}"
    diff = float(np.max(np.abs(actual.astype(np.float64) - expected.reshape(-1)), initial=0.0))
    bound = RELATIVE_TOLERANCE * max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    if not diff <= bound:
        return f"max|diff| = {diff:.3g} > {bound:.3g}"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--aotc", required=True, help="path of the aotc executable")
    parser.add_argument("-k", default="", help="run only the cases whose name contains this")
    args = parser.parse_args()
    torch.set_num_threads(1)
    all_cases = (conv_cases() + conv_transpose_cases() + norm_and_elementwise_cases() + pool_cases()
                 + data_movement_cases() + resize_cases())
    cases = [c for c in all_cases if args.k in c.name]
    failures = 0
    with tempfile.TemporaryDirectory(prefix="aotc-ops-") as tmp:
        for case in cases:
            problem = run_case(args.aotc, case, pathlib.Path(tmp))
            print(f"{'FAIL' if problem else 'ok  '} {case.name}" + (f": {problem}" if problem else ""))
            if problem:
                failures += 1
                print(case.air(case.expected().shape)[:2000])
    print(f"{len(cases) - failures} of {len(cases)} op cases match PyTorch")
    return 1 if failures or not cases else 0


if __name__ == "__main__":
    sys.exit(main())
