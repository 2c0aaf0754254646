"""The kernel bench's cases: one layer each, written as a one-node IR graph (.air text).

Each case is a layer shape that real models run (ResNet-18/50, MobileNetV2, DenseNet-121,
SqueezeNet, MediaPipe decoders). The graph has one input %x (the layer's activation) and
constants with random weights (uniform in [-1, 1], aotc's `random(seed)`), and it is compiled
with `--passes=infer-shapes` only, so that aotc builds exactly this node with exactly this
epilogue: the kernel that a library of the real model calls for that layer.

compute cases count FLOPs as 2 x multiply-adds (the FMA work, which the FMA peak bounds;
epilogue operations are not counted); data cases count bytes read plus written (aotc's
report, which sums the layer's buffers).
"""

import re
from dataclasses import dataclass, field

BIAS_RELU = ("bias", "relu")
RELU6 = "clamp{min=0, max=6}"


@dataclass
class Case:
    name: str
    kind: str  # "compute" (GFLOP/s against the FMA peak) or "data" (GB/s against copy bandwidth)
    input_shape: list
    output_shape: list
    node: str  # the node's text after "%y = ", without the output type
    consts: list = field(default_factory=list)  # (name, shape) of the constants, random weights
    macs: int = 0  # multiply-adds (compute cases)
    epilogue_ops: int = 0  # post-ops in the epilogue (aotc's report counts one FLOP each per output)

    @property
    def slug(self):
        """The case's folder and library name (a C identifier)."""
        s = self.name.lower().replace("->", " to ").replace("@", " at ").replace("+", " ")
        return re.sub(r"[^a-z0-9]+", "_", s).strip("_")

    @property
    def flops(self):
        return 2.0 * self.macs

    def air(self):
        """The one-node graph."""
        def t(shape):
            return "f32[" + ",".join(map(str, shape)) + "]"
        lines = [f"graph {self.slug} {{", f"  input %x: {t(self.input_shape)}"]
        lines += [f"  const %{n}: {t(s)} = random({i + 1})" for i, (n, s) in enumerate(self.consts)]
        lines += [f"  %y = {self.node}: {t(self.output_shape)}", "  output %y", "}"]
        return "\n".join(lines) + "\n"


def _epilogue(post):
    return f" epilogue[{', '.join(post)}]" if post else ""


def conv(name, input_shape, out, k, stride=1, pad=None, groups=1, bias=True, post=("relu",)):
    """conv2d, square kernel, symmetric padding (default 'same' for odd k)."""
    n, c, h, w = input_shape
    pad = (k - 1) // 2 if pad is None else pad
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    consts = [("w", [out, c // groups, k, k])] + ([("b", [out])] if bias else [])
    operands = "%x, %w" + (", %b" if bias else "")
    node = (f"conv2d({operands}) {{stride=[{stride},{stride}], pad=[{pad},{pad},{pad},{pad}], "
            f"dilation=[1,1], groups={groups}}}{_epilogue(post)}")
    out_shape = [n, out, oh, ow]
    macs = n * out * oh * ow * (c // groups) * k * k
    return Case(name, "compute", list(input_shape), out_shape, node, consts, macs, len(post))


def conv_transpose(name, input_shape, out, k, stride, pad, post=("relu",)):
    """conv_transpose2d with bias, PyTorch's weight layout [C, O, KH, KW]."""
    n, c, h, w = input_shape
    oh, ow = (h - 1) * stride - 2 * pad + k, (w - 1) * stride - 2 * pad + k
    node = (f"conv_transpose2d(%x, %w, %b) {{stride=[{stride},{stride}], pad=[{pad},{pad},{pad},{pad}]}}"
            f"{_epilogue(post)}")
    # Every input value times every tap and output channel (the cropped rows included), as aotc counts.
    macs = n * c * h * w * out * k * k
    return Case(name, "compute", list(input_shape), [n, out, oh, ow], node, [("w", [c, out, k, k]), ("b", [out])],
                macs, len(post))


def transpose(name, input_shape, perm):
    out = [input_shape[p] for p in perm]
    return Case(name, "data", list(input_shape), out, f"transpose(%x) {{perm=[{','.join(map(str, perm))}]}}")


def resize(name, op, input_shape):
    """A 2x upscale with half-pixel centers (MediaPipe's decoders)."""
    n, c, h, w = input_shape
    node = f"{op}(%x) {{size=[{2 * h},{2 * w}], half_pixel_centers=true}}"
    return Case(name, "data", list(input_shape), [n, c, 2 * h, 2 * w], node)


def affine_relu(name, input_shape):
    """Per-channel scale and shift, then relu: a batch norm that could not fold (DenseNet's
    norm-relu after each concat)."""
    c = input_shape[1]
    return Case(name, "data", list(input_shape), list(input_shape), "affine(%x, %s, %t) epilogue[relu]",
                [("s", [c]), ("t", [c])], 0, 1)


def max_pool(name, input_shape, k, stride, pad):
    n, c, h, w = input_shape
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    node = f"max_pool2d(%x) {{kernel=[{k},{k}], stride=[{stride},{stride}], pad=[{pad},{pad},{pad},{pad}]}}"
    return Case(name, "data", list(input_shape), [n, c, oh, ow], node)


CASES = [
    # The cases of the former JIT bench (bench/kernels_bench.cpp), same shapes.
    conv("resnet18 layer1 3x3 64@56", [1, 64, 56, 56], 64, 3),
    conv("resnet18 conv1 7x7/2 3@224", [1, 3, 224, 224], 64, 7, 2),
    conv("alexnet conv1 11x11/4 3@224 -> 64", [1, 3, 224, 224], 64, 11, 4, 2),
    conv("resnet18 layer2 3x3/2 64@56 -> 128", [1, 64, 56, 56], 128, 3, 2),
    conv("resnet50 layer2 3x3 128@28", [1, 128, 28, 28], 128, 3),
    conv("resnet18 layer3 3x3 256@14", [1, 256, 14, 14], 256, 3),
    conv("resnet18 layer4 3x3 512@7", [1, 512, 7, 7], 512, 3),
    conv("resnet50 1x1 64->256 @56", [1, 64, 56, 56], 256, 1),
    conv("resnet50 1x1 1024->256 @14", [1, 1024, 14, 14], 256, 1),
    conv("resnet50 1x1 128->512 @28", [1, 128, 28, 28], 512, 1),
    conv("resnet50 1x1 512->2048 @7", [1, 512, 7, 7], 2048, 1),
    conv("resnet50 downsample 1x1/2 256@56 -> 512", [1, 256, 56, 56], 512, 1, 2),
    conv("resnet50 downsample 1x1/2 512@28 -> 1024", [1, 512, 28, 28], 1024, 1, 2),
    conv("resnet50 downsample 1x1/2 1024@14 -> 2048", [1, 1024, 14, 14], 2048, 1, 2),
    conv("mobilenetv2 dw 3x3 144@56", [1, 144, 56, 56], 144, 3, groups=144, post=(RELU6,)),
    conv("mobilenetv2 dw 3x3/2 96@112", [1, 96, 112, 112], 96, 3, 2, groups=96, post=(RELU6,)),
    conv("mobilenetv2 dw 3x3/2 144@56", [1, 144, 56, 56], 144, 3, 2, groups=144, post=(RELU6,)),
    conv("mobilenetv2 dw 3x3/2 576@14", [1, 576, 14, 14], 576, 3, 2, groups=576, post=(RELU6,)),
    conv_transpose("selfie conv_transpose 2x2/2 16@128 -> 1", [1, 16, 128, 128], 1, 2, 2, 0),
    conv_transpose("decoder conv_transpose 4x4/2 64@32 -> 32", [1, 64, 32, 32], 32, 4, 2, 1),
    # Layers that dominate the other models of bench/peers.
    conv("densenet121 1x1 1024->128 @7", [1, 1024, 7, 7], 128, 1),
    conv("densenet121 3x3 128->32 @14", [1, 128, 14, 14], 32, 3, bias=False, post=()),
    conv("densenet121 3x3 128->32 @56", [1, 128, 56, 56], 32, 3, bias=False, post=()),
    conv("squeezenet fire expand 1x1 16->64 @55", [1, 16, 55, 55], 64, 1),
    conv("squeezenet fire expand 3x3 16->64 @55", [1, 16, 55, 55], 64, 3),
    conv("mobilenetv2 stem 3x3/2 3->32 @224", [1, 3, 224, 224], 32, 3, 2, post=(RELU6,)),
    conv("mobilenetv2 1x1 expand 24->144 @56", [1, 24, 56, 56], 144, 1, post=(RELU6,)),
    conv("mobilenetv2 1x1 project 144->24 @56", [1, 144, 56, 56], 24, 1, post=()),
    # Data movement.
    transpose("transpose copy 16@128", [1, 16, 128, 128], [0, 1, 2, 3]),
    transpose("transpose nhwc->nchw rgb 256", [1, 256, 256, 3], [0, 3, 1, 2]),
    transpose("transpose nchw->nhwc rgb 256", [1, 3, 256, 256], [0, 2, 3, 1]),
    transpose("transpose nhwc->nchw 16@128", [1, 128, 128, 16], [0, 3, 1, 2]),
    transpose("transpose nchw->nhwc 16@128", [1, 16, 128, 128], [0, 2, 3, 1]),
    transpose("transpose nhwc->nchw 96@16", [1, 16, 16, 96], [0, 3, 1, 2]),
    transpose("transpose nchw->nhwc 96@16", [1, 96, 16, 16], [0, 2, 3, 1]),
    resize("resize bilinear 2x 16@64", "resize_bilinear", [1, 16, 64, 64]),
    resize("resize bilinear 2x 128@16", "resize_bilinear", [1, 128, 16, 16]),
    resize("resize nearest 2x 16@64", "resize_nearest", [1, 16, 64, 64]),
    affine_relu("affine+relu 512@7", [1, 512, 7, 7]),
    affine_relu("affine+relu 128@56", [1, 128, 56, 56]),
    max_pool("max pool 3x3/2 64@112", [1, 64, 112, 112], 3, 2, 1),
]


def select(text):
    """The cases whose name contains `text` (all if empty)."""
    return [c for c in CASES if not text or text in c.name]
