"""Random valid aotc IR graphs (NNSmith-style), printed in the .air text form.

A graph is built forwards: a pool of available tensors starts with the graph
inputs; each step picks an op, picks operands from the pool (recent tensors
more often, so that chains form, older ones too, so that tensors get several
consumers), draws attributes that are valid for those operands and computes
the output shape, which aotc's parser checks against its own shape inference.
Shapes favour the edges: extents of 1, odd and prime extents, tails that are
not a multiple of any vector width; strides, dilations, groups and padding at
their limits.

The graph model (Graph, Node, Tensor) is also what the shrinker edits.
"""
import math
import random

import numpy as np

# ---- The graph model ------------------------------------------------------------


class Tensor:
    """A graph input, a constant (values: a list, or `random(seed[, scale])`) or a node's result;
    f32, or quantized: `dtype` "i8"/"u8"/"i32" with its quantization block `quant`
    ("{scale=[0.5], zero_point=[3]}", or "{axis=1, ...}" per channel)."""

    def __init__(self, name, shape, values=None, dtype="f32", quant=""):
        self.name = name
        self.shape = list(shape)
        self.values = values  # None: input or computed; a list of floats, or ("random", "seed[, scale]"), ("splat", v)
        self.dtype = dtype
        self.quant = quant

    @property
    def is_constant(self):
        return self.values is not None

    @property
    def type_text(self):
        return f"{self.dtype}[" + ",".join(str(d) for d in self.shape) + "]" + self.quant


class Node:
    def __init__(self, op, inputs, output, attrs="", epilogue=None):
        self.op = op
        self.inputs = list(inputs)        # tensor names, the op's own operands
        self.output = output              # tensor name
        self.attrs = attrs                # the attribute block text, e.g. "{axis=1}"
        self.epilogue = epilogue or []    # [(post-op text without operands, [operand names])]


class Graph:
    def __init__(self, name):
        self.name = name
        self.tensors = {}   # name -> Tensor, in definition order
        self.inputs = []
        self.nodes = []
        self.outputs = []

    def add(self, tensor):
        self.tensors[tensor.name] = tensor
        return tensor.name

    def shape(self, name):
        return self.tensors[name].shape

    def text(self):
        """The .air text; constants first, then nodes in order, then outputs."""
        lines = [f"graph {self.name} {{"]
        for name in self.inputs:
            lines.append(f"  input %{name}: {self.tensors[name].type_text}")
        for t in self.tensors.values():
            if t.is_constant and self.is_used(t.name):
                lines.append(f"  const %{t.name}: {t.type_text} = {values_text(t.values)}")
        for n in self.nodes:
            operands = ", ".join(f"%{i}" for i in n.inputs)
            line = f"  %{n.output} = {n.op}({operands})"
            if n.attrs:
                line += " " + n.attrs
            if n.epilogue:
                posts = []
                for text, operands in n.epilogue:
                    posts.append(text + (f"({', '.join('%' + o for o in operands)})" if operands else ""))
                line += " epilogue[" + ", ".join(posts) + "]"
            lines.append(line + f": {self.tensors[n.output].type_text}")
        for name in self.outputs:
            lines.append(f"  output %{name}")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def is_used(self, name):
        return name in self.outputs or any(name in n.inputs or any(name in ops for _, ops in n.epilogue)
                                           for n in self.nodes)

    def remove_dead(self):
        """Drops nodes that no output depends on, then unused inputs and constants."""
        live = set(self.outputs)
        kept = []
        for n in reversed(self.nodes):
            if n.output in live:
                kept.append(n)
                live.update(n.inputs)
                for _, operands in n.epilogue:
                    live.update(operands)
        self.nodes = list(reversed(kept))
        self.inputs = [i for i in self.inputs if i in live]
        self.tensors = {k: t for k, t in self.tensors.items() if k in live}

    def copy(self):
        g = Graph(self.name)
        g.tensors = {k: Tensor(t.name, t.shape, t.values, t.dtype, t.quant) for k, t in self.tensors.items()}
        g.inputs = list(self.inputs)
        g.nodes = [Node(n.op, n.inputs, n.output, n.attrs, [(t, list(o)) for t, o in n.epilogue])
                   for n in self.nodes]
        g.outputs = list(self.outputs)
        return g


def values_text(values):
    if isinstance(values, tuple):
        return f"{values[0]}({values[1]})"
    return "[" + ", ".join(f"{v:.9g}" for v in values) + "]"


def num_elements(shape):
    return math.prod(shape)


# ---- Shapes ---------------------------------------------------------------------

# Extents that sit on edges: 1, primes, odd, around vector widths (4, 8, 16).
SPATIAL = [1, 2, 3, 4, 5, 7, 8, 9, 11, 13, 15, 16, 17, 19, 23, 31, 32, 33]
CHANNELS = [1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 16, 17, 24, 32]

MAX_ELEMENTS = 40_000       # keeps the reference evaluator fast
MAX_LINEAR_FEATURES = 3000


def window_extent(size, kernel, stride, pad_begin, pad_end, dilation, ceil_mode=False):
    span = size + pad_begin + pad_end - dilation * (kernel - 1) - 1
    if span < 0:
        return 0
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    # PyTorch's rule: the last window must start inside the input or the begin padding.
    if ceil_mode and (out - 1) * stride >= size + pad_begin:
        out -= 1
    return out


class Generator:
    """Builds one random graph from `seed`."""

    def __init__(self, seed, name):
        self.rng = random.Random(seed)
        self.g = Graph(name)
        self.prefix = name + "_"  # tensor names stay unique when graphs are merged
        self.pool = []          # names of tensors an op may read
        # f32 tensors whose values both the library and the reference evaluator hold exactly
        # (graph inputs, dequantized integers): only these are quantized, so that a quantize
        # never rounds two slightly different floats differently (integer ops are exact).
        self.exact = set()
        self.next_id = 0
        self.next_constant_seed = self.rng.randrange(1, 2**31)

    # -- helpers --

    def fresh(self, prefix="t"):
        self.next_id += 1
        return f"{self.prefix}{prefix}{self.next_id}"

    def choice(self, items, weights=None):
        return self.rng.choices(items, weights=weights)[0] if weights else self.rng.choice(items)

    def constant(self, shape, kind="random", fan_in=None):
        """A constant operand: uniform [-1, 1) values, weights uniform in +-1/sqrt(fan_in)
        (so that a layer's sums stay near its inputs' scale, as trained weights keep them:
        with [-1, 1) weights, sums in the thousands lost more to fp32 rounding than the
        oracle's tolerance of a squashed output allows), or small explicit vectors."""
        name = self.fresh("c")
        if kind == "positive":  # batch-norm variances
            values = [round(self.rng.uniform(0.2, 2.0), 4) for _ in range(num_elements(shape))]
        elif kind == "vector":
            values = [round(self.rng.uniform(-2.0, 2.0), 4) for _ in range(num_elements(shape))]
        else:
            self.next_constant_seed += 1
            seed = self.next_constant_seed % (2**31)
            values = ("random", seed if fan_in is None else f"{seed}, {1 / math.sqrt(fan_in):.6g}")
        return self.g.add(Tensor(name, shape, values))

    def add_input(self, shape):
        name = self.g.add(Tensor(self.fresh("x"), shape))
        self.g.inputs.append(name)
        self.pool.append(name)
        self.exact.add(name)
        return name

    def emit(self, op, inputs, shape, attrs="", epilogue=None, into_pool=True, dtype="f32", quant=""):
        assert all(d >= 1 for d in shape), (op, shape)
        name = self.g.add(Tensor(self.fresh(), shape, dtype=dtype, quant=quant))
        self.g.nodes.append(Node(op, inputs, name, attrs, epilogue))
        if into_pool:
            self.pool.append(name)
        return name

    def pick(self, accept=lambda s: True, integer=False, tensor=lambda t: True):
        """A tensor from the pool whose shape `accept`s (f32, or with `integer` i8/u8, and that
        `tensor` accepts), recent ones more likely; or None."""
        candidates = [t for t in self.pool if accept(self.g.shape(t)) and (self.g.tensors[t].dtype != "f32") == integer
                      and tensor(self.g.tensors[t])]
        if not candidates:
            return None
        weights = [1 + 3 * (i >= len(candidates) - 3) for i in range(len(candidates))]
        return self.choice(candidates, weights)

    def pick4(self):
        return self.pick(lambda s: len(s) == 4)

    @staticmethod
    def ints(values):
        return "[" + ",".join(str(v) for v in values) + "]"

    def broadcast_operand_shape(self, shape):
        """A shape that broadcasts to `shape` (NumPy rules), edge cases favoured."""
        options = [list(shape), [1], [shape[-1]]]
        if len(shape) >= 2:
            options.append([shape[1]] + [1] * (len(shape) - 2))       # [C,1,1]: channel-wise
            options.append([1, shape[1]] + [1] * (len(shape) - 2))    # [1,C,1,1]
            options.append([1] * (len(shape) - 1) + [shape[-1]])      # [1,1,1,W]
            options.append([d if self.rng.random() < 0.5 else 1 for d in shape])
        return self.choice(options)

    # -- epilogues --

    def epilogue(self, out_shape):
        """0-3 post-ops, each kind possible (affine needs a channel dim)."""
        posts = []
        for _ in range(self.choice([0, 0, 1, 1, 2, 3])):
            kind = self.choice(["relu", "clamp", "hardswish", "sigmoid", "tanh", "elu", "softplus", "affine", "add",
                                "mul", "prelu"])
            if kind == "affine" and len(out_shape) < 2:
                kind = "relu"
            if kind == "clamp":
                lo = round(self.rng.uniform(-3, 1), 3)
                posts.append((f"clamp{{min={lo}, max={round(lo + self.rng.uniform(0, 4), 3)}}}", []))
            elif kind == "elu":
                posts.append((f"elu{{alpha={round(self.rng.uniform(-2, 2), 3)}}}", []))
            elif kind == "affine":
                c = out_shape[1]
                posts.append(("affine", [self.constant([c], "vector"), self.constant([c], "vector")]))
            elif kind in ("add", "mul", "prelu"):
                shape = self.broadcast_operand_shape(out_shape)
                # The operand: a constant, or a tensor of the pool (another branch) when one fits.
                operand = self.pick(lambda s: s == shape) if self.rng.random() < 0.5 else None
                posts.append((kind, [operand or self.constant(shape, "vector" if num_elements(shape) <= 64
                                                                          else "random")]))
            else:
                posts.append((kind, []))
        return posts

    # -- ops: each returns the output name, or None when no operand fits --

    def op_conv2d(self):
        x = self.pick4()
        if x is None:
            return None
        n, c, h, w = self.g.shape(x)
        groups = self.choice([1, 1, 1, c] + [g for g in (2, 3, 4) if c % g == 0])
        per_group_out = self.choice([1, 1, 2, 3] if groups == c else [1, 2, 3, 5, 8, 16])
        o = groups * per_group_out
        if o > 48:
            o = groups
        kh, kw = self.choice([(1, 1), (3, 3), (3, 3), (5, 5), (1, 3), (3, 1), (2, 2), (7, 7)])
        stride = [self.choice([1, 1, 2, 3]), self.choice([1, 1, 2, 2, 3, 4])]
        dilation = [self.choice([1, 1, 1, 2, 3]), self.choice([1, 1, 2])]
        pad = [self.rng.randrange(0, dilation[0] * (kh - 1) + 2), self.rng.randrange(0, dilation[1] * (kw - 1) + 2),
               0, 0]
        pad[2] = pad[0] if self.rng.random() < 0.7 else self.rng.randrange(0, kh + 1)
        pad[3] = pad[1] if self.rng.random() < 0.7 else self.rng.randrange(0, kw + 1)
        if self.rng.random() < 0.2:  # a plain 1x1 conv, which has a GEMM kernel of its own
            groups, o, (kh, kw), stride, pad = 1, self.choice([1, 8, 10, 16, 24, 32]), (1, 1), [1, 1], [0, 0, 0, 0]
        oh = window_extent(h, kh, stride[0], pad[0], pad[2], dilation[0])
        ow = window_extent(w, kw, stride[1], pad[1], pad[3], dilation[1])
        if oh < 1 or ow < 1 or n * o * oh * ow > MAX_ELEMENTS:
            return None
        inputs = [x, self.constant([o, c // groups, kh, kw], fan_in=c // groups * kh * kw)]
        if self.rng.random() < 0.7:
            inputs.append(self.constant([o], "vector"))
        attrs = (f"{{stride={self.ints(stride)}, pad={self.ints(pad)}, dilation={self.ints(dilation)}, "
                 f"groups={groups}}}")
        out_shape = [n, o, oh, ow]
        return self.emit("conv2d", inputs, out_shape, attrs, self.epilogue(out_shape))

    def op_winograd_conv2d(self):
        """A 3x3 stride-1 conv that aotc computes by Winograd (generators/winograd_conv.cpp,
        use_winograd): 16+ channels in and out, 13x13+ maps, 1M+ multiply-adds."""
        x = self.pick(lambda s: len(s) == 4 and s[1] >= 16 and min(s[2], s[3]) >= 11)
        if x is None:
            return None
        n, c, h, w = self.g.shape(x)
        o = self.choice([32, 33, 48])
        pad = [self.rng.randrange(0, 3) for _ in range(4)]
        out_shape = [n, o, h + pad[0] + pad[2] - 2, w + pad[1] + pad[3] - 2]
        if num_elements(out_shape) > MAX_ELEMENTS:
            return None
        inputs = [x, self.constant([o, c, 3, 3], fan_in=c * 9)]
        if self.rng.random() < 0.7:
            inputs.append(self.constant([o], "vector"))
        attrs = f"{{pad={self.ints(pad)}}}"
        return self.emit("conv2d", inputs, out_shape, attrs, self.epilogue(out_shape))

    def op_conv_transpose2d(self):
        x = self.pick4()
        if x is None:
            return None
        n, c, h, w = self.g.shape(x)
        o = self.choice([1, 2, 3, 4, 7, 8, 16])
        kh, kw = self.choice([(1, 1), (2, 2), (3, 3), (4, 4), (3, 2), (5, 5)])
        stride = [self.choice([1, 2, 2, 3]), self.choice([1, 2, 3])]
        pad = [self.rng.randrange(0, kh) for _ in range(2)] + [self.rng.randrange(0, kh), self.rng.randrange(0, kw)]
        pad[1] = min(pad[1], kw - 1)
        oh = (h - 1) * stride[0] + kh - pad[0] - pad[2]
        ow = (w - 1) * stride[1] + kw - pad[1] - pad[3]
        if oh < 1 or ow < 1 or n * o * oh * ow > MAX_ELEMENTS:
            return None
        inputs = [x, self.constant([c, o, kh, kw], fan_in=c * kh * kw)]
        if self.rng.random() < 0.6:
            inputs.append(self.constant([o], "vector"))
        out_shape = [n, o, oh, ow]
        return self.emit("conv_transpose2d", inputs, out_shape, f"{{stride={self.ints(stride)}, pad={self.ints(pad)}}}",
                         self.epilogue(out_shape))

    def op_batch_norm(self):
        x = self.pick(lambda s: len(s) >= 2)
        if x is None:
            return None
        c = self.g.shape(x)[1]
        inputs = [x, self.constant([c], "vector"), self.constant([c], "positive")]
        if self.rng.random() < 0.7:
            inputs += [self.constant([c], "vector"), self.constant([c], "vector")]
        eps = self.choice([1e-5, 1e-3, 0.1])
        return self.emit("batch_norm", inputs, self.g.shape(x), f"{{eps={eps}}}")

    def op_affine(self):
        x = self.pick(lambda s: len(s) >= 2)
        if x is None:
            return None
        c = self.g.shape(x)[1]
        shape = self.g.shape(x)
        return self.emit("affine", [x, self.constant([c], "vector"), self.constant([c], "vector")], shape, "",
                         self.epilogue(shape))

    def op_unary(self):
        x = self.pick()
        op = self.choice(["relu", "relu", "clamp", "hardswish", "sigmoid", "tanh", "elu", "softplus", "dropout"])
        attrs = ""
        if op == "clamp":
            lo = round(self.rng.uniform(-2, 1), 3)
            attrs = f"{{min={lo}, max={round(lo + self.rng.uniform(0, 3), 3)}}}"
        elif op == "elu":
            attrs = f"{{alpha={round(self.rng.uniform(-2, 2), 3)}}}"
        shape = self.g.shape(x)
        return self.emit(op, [x], shape, attrs, self.epilogue(shape) if op != "dropout" else None)

    def op_prelu(self):
        x = self.pick()
        shape = self.g.shape(x)
        alpha_shape = self.broadcast_operand_shape(shape)
        alpha = self.constant(alpha_shape, "vector" if num_elements(alpha_shape) <= 64 else "random")
        return self.emit("prelu", [x, alpha], shape, "", self.epilogue(shape))

    def op_binary(self):
        x = self.pick()
        shape = self.g.shape(x)
        op = self.choice(["add", "add", "mul", "max", "min", "div"])
        other_shape = self.broadcast_operand_shape(shape)
        if op == "div":  # by a constant kept away from 0, so that quotients stay in the oracle's range
            operands = [x, self.constant(other_shape, "positive")]
            return self.emit(op, operands, shape, "", self.epilogue(shape))
        other = self.pick(lambda s: s == other_shape) if self.rng.random() < 0.7 else None
        if other is None:
            other = self.constant(other_shape, "vector" if num_elements(other_shape) <= 64 else "random")
        operands = [x, other] if self.rng.random() < 0.7 else [other, x]
        return self.emit(op, operands, shape, "", self.epilogue(shape))

    def op_pool(self):
        x = self.pick4()
        if x is None:
            return None
        n, c, h, w = self.g.shape(x)
        op = self.choice(["max_pool2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "global_avg_pool"])
        if op == "global_avg_pool":
            out = [n, c, 1, 1]
            return self.emit(op, [x], out, "", self.epilogue(out))
        if op == "adaptive_avg_pool2d":
            size = [self.choice([1, 1, 2, 3, h, h + 2]), self.choice([1, 2, 4, w, max(1, w // 2)])]
            out = [n, c] + size
            if num_elements(out) > MAX_ELEMENTS:
                return None
            return self.emit(op, [x], out, f"{{output_size={self.ints(size)}}}", self.epilogue(out))
        kernel = [self.choice([1, 2, 3, 3, 4, 5]), self.choice([1, 2, 3, 3, 5])]
        if op == "max_pool2d" and self.rng.random() < 0.25:
            # PyTorch's way of padding a max pool asymmetrically: an explicit -inf pad
            # (which fold-pad folds), read by the pool alone; every window still
            # overlaps the input, so no -inf flows on.
            begins = [0, 0, self.rng.randrange(kernel[0]), self.rng.randrange(kernel[1])]
            ends = [0, 0, self.rng.randrange(kernel[0]), self.rng.randrange(kernel[1])]
            n, c, h, w = n, c, h + begins[2] + ends[2], w + begins[3] + ends[3]
            if h < kernel[0] or w < kernel[1]:
                return None
            x = self.emit("pad", [x], [n, c, h, w], f"{{pads={self.ints(begins + ends)}, value=-inf}}", into_pool=False)
            attrs = (f"{{kernel={self.ints(kernel)}, stride={self.ints(kernel)}, pad=[0,0,0,0], dilation=[1,1], "
                     f"ceil_mode=false, count_include_pad=true}}")
            out = [n, c, h // kernel[0], w // kernel[1]]
            return self.emit(op, [x], out, attrs, self.epilogue(out))
        stride = [self.choice([1, 2, 2, 3]), self.choice([1, 2, 3])]
        dilation = [self.choice([1, 1, 2]), self.choice([1, 1, 2])] if op == "max_pool2d" else [1, 1]
        pad = [self.rng.randrange(0, kernel[0] // 2 + 1), self.rng.randrange(0, kernel[1] // 2 + 1)]
        pad += [self.choice([pad[0], self.rng.randrange(0, kernel[0] // 2 + 1)]),
                self.choice([pad[1], self.rng.randrange(0, kernel[1] // 2 + 1)])]
        ceil_mode = self.rng.random() < 0.3
        oh = window_extent(h, kernel[0], stride[0], pad[0], pad[2], dilation[0], ceil_mode)
        ow = window_extent(w, kernel[1], stride[1], pad[1], pad[3], dilation[1], ceil_mode)
        if oh < 1 or ow < 1:
            return None
        # Every window must read the input (aotc refuses others).
        for size, out, k, s, p, d in ((h, oh, kernel[0], stride[0], pad[0], dilation[0]),
                                      (w, ow, kernel[1], stride[1], pad[1], dilation[1])):
            if not all(any(0 <= o * s - p + t * d < size for t in range(k)) for o in range(out)):
                return None
        attrs = (f"{{kernel={self.ints(kernel)}, stride={self.ints(stride)}, pad={self.ints(pad)}, "
                 f"dilation={self.ints(dilation)}, ceil_mode={'true' if ceil_mode else 'false'}, "
                 f"count_include_pad={'true' if self.rng.random() < 0.5 else 'false'}}}")
        out = [n, c, oh, ow]
        return self.emit(op, [x], out, attrs, self.epilogue(out))

    def op_linear(self):
        x = self.pick(lambda s: len(s) >= 2 and num_elements(s) // s[0] <= MAX_LINEAR_FEATURES)
        if x is None:
            return None
        shape = self.g.shape(x)
        k = num_elements(shape) // shape[0]
        m = self.choice([1, 3, 10, 16, 17, 33, 64])
        inputs = [x, self.constant([m, k], fan_in=k)]
        if self.rng.random() < 0.7:
            inputs.append(self.constant([m], "vector"))
        out = [shape[0], m]
        return self.emit("linear", inputs, out, "", self.epilogue(out))

    def op_flatten(self):
        x = self.pick(lambda s: len(s) >= 2)
        if x is None:
            return None
        shape = self.g.shape(x)
        start = self.rng.randrange(0, len(shape))
        end = self.rng.randrange(start, len(shape))
        out = shape[:start] + [num_elements(shape[start:end + 1])] + shape[end + 1:]
        end_text = end - len(shape) if self.rng.random() < 0.5 else end
        return self.emit("flatten", [x], out, f"{{start_dim={start}, end_dim={end_text}}}")

    def op_reshape(self):
        x = self.pick()
        shape = self.g.shape(x)
        factors = prime_factors(num_elements(shape))
        self.rng.shuffle(factors)
        rank = self.choice([1, 2, 3, 4, 4, 5])
        out = [1] * rank
        for f in factors:
            out[self.rng.randrange(rank)] *= f
        return self.emit("reshape", [x], out, f"{{shape={self.ints(out)}}}")

    def op_concat(self):
        x = self.pick()
        shape = self.g.shape(x)
        axis = self.choice([1, 1, 1] + list(range(len(shape)))) if len(shape) >= 2 else 0
        parts = [x]
        for _ in range(self.choice([1, 1, 2, 3])):
            other = self.pick(lambda s: len(s) == len(shape) and
                              all(a == b for i, (a, b) in enumerate(zip(s, shape)) if i != axis))
            parts.append(other if other is not None and self.rng.random() < 0.8 else x)
        out = list(shape)
        out[axis] = sum(self.g.shape(p)[axis] for p in parts)
        if num_elements(out) > MAX_ELEMENTS:
            return None
        return self.emit("concat", parts, out, f"{{axis={axis}}}", self.epilogue(out))

    def op_softmax(self):
        x = self.pick()
        shape = self.g.shape(x)
        return self.emit("softmax", [x], shape, f"{{axis={self.rng.randrange(len(shape))}}}", self.epilogue(shape))

    def op_pad(self):
        x = self.pick()
        shape = self.g.shape(x)
        rank = len(shape)
        # Negative pads crop (the IR's static slice, e.g. ONNX's Slice and Split).
        begins = [self.choice([0, 0, 1, 2, -1]) if d >= rank - 2 or self.rng.random() < 0.2 else 0 for d in range(rank)]
        ends = [self.choice([0, 0, 1, 3, -1, -2]) if d >= rank - 2 or self.rng.random() < 0.2 else 0
                for d in range(rank)]
        for d in range(rank):
            if shape[d] + begins[d] + ends[d] < 1:
                begins[d] = ends[d] = 0
        out = [s + b + e for s, b, e in zip(shape, begins, ends)]
        if num_elements(out) > MAX_ELEMENTS:
            return None
        value = self.choice([0, 0, -1.5, 2]) if rank == 4 else self.choice([0, 0.5])
        attrs = f"{{pads={self.ints(begins + ends)}, value={value}}}"
        return self.emit("pad", [x], out, attrs, self.epilogue(out))

    def op_transpose(self):
        x = self.pick(lambda s: len(s) >= 2)
        if x is None:
            return None
        shape = self.g.shape(x)
        perm = list(range(len(shape)))
        while perm == list(range(len(shape))) and len(shape) > 1:
            self.rng.shuffle(perm)
        out = [shape[p] for p in perm]
        return self.emit("transpose", [x], out, f"{{perm={self.ints(perm)}}}", self.epilogue(out))

    def op_resize(self):
        x = self.pick4()
        if x is None:
            return None
        n, c, h, w = self.g.shape(x)
        size = [self.choice([1, h, 2 * h, h + 3, max(1, h // 2)]), self.choice([1, w, 2 * w, 3 * w, w + 1])]
        out = [n, c] + size
        if num_elements(out) > MAX_ELEMENTS:
            return None
        mode = self.choice(["plain", "align_corners", "half_pixel_centers"])
        attrs = (f"{{size={self.ints(size)}, align_corners={'true' if mode == 'align_corners' else 'false'}, "
                 f"half_pixel_centers={'true' if mode == 'half_pixel_centers' else 'false'}}}")
        return self.emit(self.choice(["resize_bilinear", "resize_nearest"]), [x], out, attrs, self.epilogue(out))

    def op_depth_to_space(self):
        x = self.pick(lambda s: len(s) == 4 and any(s[1] % (b * b) == 0 for b in (2, 3)))
        if x is None:
            return None
        n, c, h, w = self.g.shape(x)
        block = self.choice([b for b in (2, 3) if c % (b * b) == 0])
        out = [n, c // (block * block), h * block, w * block]
        return self.emit("depth_to_space", [x], out, f"{{block={block}}}", self.epilogue(out))

    # -- quantized ops (docs/int8.md): quantize exact floats, integer ops, dequantize --

    def quantization(self, dtype, channels=None):
        """A quantization block: odd zero points at and inside the dtype's edges."""
        zero_points = {"u8": [0, 1, 77, 128, 200, 255], "i8": [-128, -5, 0, 3, 127]}[dtype]
        scales = [0.003, 0.01, 0.02, 0.05, 0.3, 1.5]
        if channels is None:
            return f"{{scale=[{self.choice(scales)}], zero_point=[{self.choice(zero_points)}]}}"
        return (f"{{axis=1, scale=[{','.join(str(self.choice(scales)) for _ in range(channels))}], "
                f"zero_point=[{','.join(str(self.choice(zero_points)) for _ in range(channels))}]}}")

    def op_quantize(self, accept=lambda s: True, per_tensor=False):
        x = self.pick(accept, tensor=lambda t: t.name in self.exact)
        if x is None:
            return None
        shape = self.g.shape(x)
        dtype = self.choice(["u8", "i8"])
        per_channel = not per_tensor and len(shape) >= 2 and shape[1] <= 32 and self.rng.random() < 0.25
        quant = self.quantization(dtype, shape[1] if per_channel else None)
        return self.emit("quantize", [x], shape, f"{{dtype={dtype}, {quant[1:]}", dtype=dtype, quant=quant)

    def op_dequantize(self):
        q = self.pick(integer=True)
        if q is None:
            return None
        name = self.emit("dequantize", [q], self.g.shape(q))
        self.exact.add(name)
        return name

    @staticmethod
    def scale_of(quant, channel=0):
        scales = quant[quant.index("scale=[") + 7:].split("]")[0].split(",")
        return float(scales[channel if len(scales) > 1 else 0])

    def op_qconv2d(self):
        x = self.pick(lambda s: len(s) == 4, integer=True, tensor=lambda t: "axis" not in t.quant)
        if x is None:  # start a quantized chain
            x = self.op_quantize(lambda s: len(s) == 4, per_tensor=True)
        if x is None:
            return None
        n, c, h, w = self.g.shape(x)
        groups = self.choice([1, 1, c] + [g for g in (2, 3) if c % g == 0])
        o = groups * self.choice([1, 2, 3] if groups == c else [1, 2, 5, 8, 16])
        kh, kw = self.choice([(1, 1), (3, 3), (3, 3), (2, 3), (5, 5)])
        stride = [self.choice([1, 1, 2]), self.choice([1, 2, 3])]
        dilation = [self.choice([1, 1, 2]), self.choice([1, 1, 2])]
        pad = [self.choice([0, 1, (kh - 1) * dilation[0]]), self.choice([0, 1, 2]), self.choice([0, 1]),
               self.choice([0, (kw - 1) * dilation[1]])]
        oh = window_extent(h, kh, stride[0], pad[0], pad[2], dilation[0])
        ow = window_extent(w, kw, stride[1], pad[1], pad[3], dilation[1])
        if oh < 1 or ow < 1 or n * o * oh * ow > MAX_ELEMENTS:
            return None
        # Weights: i8 per tensor or per output channel, or u8 with per-channel zero points.
        w_dtype = self.choice(["i8", "i8", "u8"])
        per_channel = w_dtype == "u8" or self.rng.random() < 0.5
        w_scales = [self.choice([0.001, 0.004, 0.02]) for _ in range(o if per_channel else 1)]
        w_zeros = [self.choice([100, 128, 155]) if w_dtype == "u8" else 0 for _ in w_scales]
        axis = "axis=0, " if per_channel else ""
        self.next_constant_seed += 1
        weight = self.g.add(Tensor(self.fresh("c"), [o, c // groups, kh, kw], ("random", self.next_constant_seed % 2**31),
                                   w_dtype, f"{{{axis}scale={self.ints(w_scales)}, zero_point={self.ints(w_zeros)}}}"))
        x_scale = self.scale_of(self.g.tensors[x].quant)
        inputs = [x, weight]
        if self.rng.random() < 0.7:  # an i32 bias at the accumulator's scale (float32 products, as the IR checks)
            bias_scales = [f"{float(np.float32(x_scale) * np.float32(s)):.9g}" for s in w_scales]
            bias = self.g.add(Tensor(self.fresh("c"), [o], [float(self.rng.randrange(-3000, 3000)) for _ in range(o)],
                                     "i32", f"{{{axis}scale=[{','.join(bias_scales)}], zero_point={self.ints([0] * len(w_scales))}}}"))
            inputs.append(bias)
        # An output scale that spreads the sums over the type, some saturating.
        taps = (c // groups) * kh * kw
        y_dtype = self.choice(["u8", "i8"])
        y_scale = float(f"{x_scale * w_scales[0] * math.sqrt(taps) * self.choice([20, 60, 200]):.4g}")
        y_zero = self.choice({"u8": [0, 60, 128, 255], "i8": [-128, -3, 0, 100]}[y_dtype])
        lo, hi = (0, 255) if y_dtype == "u8" else (-128, 127)
        bounds = self.choice([(lo, hi), (lo, hi), (max(lo, y_zero), hi), (max(lo, y_zero - 20), min(hi, y_zero + 40))])
        quant = f"{{scale=[{y_scale}], zero_point=[{y_zero}]}}"
        attrs = (f"{{stride={self.ints(stride)}, pad={self.ints(pad)}, dilation={self.ints(dilation)}, groups={groups}, "
                 f"dtype={y_dtype}, {quant[1:-1]}, min={bounds[0]}, max={bounds[1]}}}")
        return self.emit("qconv2d", inputs, [n, o, oh, ow], attrs, dtype=y_dtype, quant=quant)

    def op_qadd(self):
        x = self.pick(integer=True, tensor=lambda t: "axis" not in t.quant)
        if x is None:
            return None
        t = self.g.tensors[x]
        # The other operand: another tensor of its shape and type, else x itself.
        y = self.pick(lambda s: s == t.shape, integer=True,
                      tensor=lambda u: u.dtype == t.dtype and "axis" not in u.quant) or x
        lo, hi = (0, 255) if t.dtype == "u8" else (-128, 127)
        quant = self.quantization(t.dtype)
        zero = int(quant.split("zero_point=[")[1].split("]")[0])
        bounds = self.choice([(lo, hi), (lo, hi), (max(lo, zero), hi)])
        attrs = f"{{dtype={t.dtype}, {quant[1:-1]}, min={bounds[0]}, max={bounds[1]}}}"
        return self.emit("qadd", [x, y], t.shape, attrs, dtype=t.dtype, quant=quant)

    def op_qglobal_avg_pool(self):
        x = self.pick(lambda s: len(s) == 4, integer=True, tensor=lambda t: "axis" not in t.quant)
        if x is None:
            return None
        t = self.g.tensors[x]
        quant = self.quantization(t.dtype)
        return self.emit("qglobal_avg_pool", [x], t.shape[:2] + [1, 1], f"{{dtype={t.dtype}, {quant[1:]}",
                         dtype=t.dtype, quant=quant)

    def op_qpool(self):
        x = self.pick(lambda s: len(s) == 4 and s[2] >= 2 and s[3] >= 2, integer=True)
        if x is None:
            return None
        n, c, h, w = self.g.shape(x)
        k, st = self.choice([(2, 2), (3, 2), (3, 1)])
        p = self.choice([0, k // 2])
        oh, ow = window_extent(h, k, st, p, p, 1), window_extent(w, k, st, p, p, 1)
        if oh < 1 or ow < 1:
            return None
        t = self.g.tensors[x]
        return self.emit("max_pool2d", [x], [n, c, oh, ow], f"{{kernel=[{k},{k}], stride=[{st},{st}], pad={self.ints([p] * 4)}}}",
                         dtype=t.dtype, quant=t.quant)

    def op_qflatten(self):
        x = self.pick(lambda s: len(s) >= 2, integer=True, tensor=lambda t: "axis" not in t.quant)
        if x is None:
            return None
        shape, t = self.g.shape(x), self.g.tensors[x]
        return self.emit("flatten", [x], [shape[0], num_elements(shape[1:])], "{start_dim=1, end_dim=-1}",
                         dtype=t.dtype, quant=t.quant)

    OPS = {  # op generator -> weight
        "op_conv2d": 6, "op_winograd_conv2d": 4, "op_conv_transpose2d": 2, "op_batch_norm": 2, "op_affine": 1, "op_unary": 4,
        "op_prelu": 1, "op_binary": 3, "op_pool": 3, "op_linear": 1, "op_flatten": 1, "op_reshape": 1,
        "op_concat": 3, "op_softmax": 1, "op_pad": 2, "op_transpose": 2, "op_resize": 2, "op_depth_to_space": 1,
        "op_quantize": 4, "op_dequantize": 3, "op_qconv2d": 8, "op_qadd": 6, "op_qglobal_avg_pool": 2, "op_qpool": 2, "op_qflatten": 1,
    }

    # -- the graph --

    def input_shape(self):
        kind = self.choice(["4d"] * 8 + ["deep", "deep", "blocked", "wide", "strided", "2d", "3d", "5d", "1d"])
        if kind == "deep":  # enough channels and pixels for the Winograd convolution
            return [1, self.choice([16, 24, 32]), self.choice([14, 15, 16]), self.choice([16, 19])]
        if kind == "blocked":  # channels that fill NCHWc blocks (16 floats with AVX-512, 8 with AVX2, 4 on ARM)
            return [1, self.choice([16, 32, 48]), self.choice([5, 8, 13]), self.choice([7, 12, 19])]
        if kind == "strided":  # rows that strided convs stage as column phases (32+ outputs)
            return [1, self.choice([1, 2, 3, 4]), self.choice([5, 7, 9]), self.choice([70, 99, 131])]
        if kind == "wide":  # rows too wide for a schedule to stage on the stack
            return [1, self.choice([1, 2, 3]), self.choice([1, 2, 3]), self.choice([700, 1100, 2100])]
        if kind == "4d":
            return [self.choice([1, 1, 1, 2]), self.choice(CHANNELS), self.choice(SPATIAL), self.choice(SPATIAL)]
        if kind == "2d":
            return [self.choice([1, 2, 3]), self.choice([1, 7, 16, 33, 100])]
        if kind == "3d":
            return [self.choice([1, 2]), self.choice([3, 8, 13]), self.choice([1, 5, 17])]
        if kind == "5d":
            return [1, self.choice([2, 3]), 3, self.choice([4, 5]), self.choice([2, 7])]
        return [self.choice([1, 5, 16, 17, 64])]

    def build(self):
        for _ in range(self.choice([1, 1, 1, 2])):
            shape = self.input_shape()
            while num_elements(shape) > MAX_ELEMENTS // 4:
                shape[-1] = max(1, shape[-1] // 2)
            self.add_input(shape)
        steps = self.choice([2, 3, 4, 5, 6, 8, 10])
        ops, weights = zip(*self.OPS.items())
        for _ in range(steps):
            for _attempt in range(8):
                if getattr(self, self.choice(list(ops), list(weights)))() is not None:
                    break
        self.choose_outputs()
        self.g.remove_dead()
        return self.g

    def choose_outputs(self):
        # A library's integer outputs are quantized per tensor.
        computed = [n.output for n in self.g.nodes if "axis" not in self.g.tensors[n.output].quant]
        outputs = [computed[-1]] if computed else [self.g.inputs[0]]
        # The last quantized result too, often: else a quantized chain off the main line is dead code.
        quantized = [t for t in computed if self.g.tensors[t].dtype != "f32"]
        if quantized and quantized[-1] not in outputs and self.rng.random() < 0.7:
            outputs.append(quantized[-1])
        for _ in range(self.choice([0, 0, 1, 2])):
            kind = self.choice(["intermediate", "intermediate", "input", "duplicate", "constant", "folded"])
            if kind == "intermediate" and computed:
                outputs.append(self.choice(computed))
            elif kind == "input":
                outputs.append(self.choice(self.g.inputs))
            elif kind == "duplicate":
                outputs.append(self.choice(outputs))
            elif kind == "constant":
                outputs.append(self.constant([self.choice([1, 3, 5])], "vector"))
            else:  # a computation on constants only, which fold-constants folds
                c = self.constant([1, self.choice([2, 5]), 3, 3], "vector")
                outputs.append(self.emit("relu", [c], self.g.shape(c), "", [("mul", [self.constant([1], "vector")])],
                                         into_pool=False))
        self.g.outputs = outputs


def prime_factors(n):
    factors, p = [], 2
    while p * p <= n:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    if n > 1:
        factors.append(n)
    return factors


def random_graph(seed, name="g"):
    return Generator(seed, name).build()


def merge(graphs, name):
    """One graph holding `graphs` side by side (their tensor names are disjoint)."""
    merged = Graph(name)
    for g in graphs:
        merged.tensors.update(g.tensors)
        merged.inputs += g.inputs
        merged.nodes += g.nodes
        merged.outputs += g.outputs
    return merged
