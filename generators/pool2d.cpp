#include "generators/pool2d.h"

#include <algorithm>
#include <limits>

#include "generators/epilogue.h"

namespace aotc::gen {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

// Most window taps unrolled along a row (wider windows keep a loop).
constexpr int kMaxUnrolledTaps = 8;

struct Pool2dFuncs {
  Var x{"x"}, y{"y"}, c{"c"}, n{"n"};
  Func window{"window"};  // the window's reduction, before the divisor and epilogue
  Func source{"source"};  // the input, padded where windows reach outside it
  Halide::RDom r;         // the window: r.x along the row, r.y across rows
  bool padded = false;    // some window reaches outside the input
};

void require_valid(const Pool2dSpec& s) {
  require(s.input_shape.size() == 4 && s.output_shape.size() == 4,
          "pool2d: input and output must be NCHW, got " + to_string(s.input_shape) + " -> " + to_string(s.output_shape));
  require(s.input_shape[0] == s.output_shape[0] && s.input_shape[1] == s.output_shape[1],
          "pool2d: batch and channels must be kept");
  if (s.kind == Pool2dSpec::Kind::kAdaptiveAverage) return;
  for (int i = 0; i < 2; ++i)
    require(s.kernel[i] >= 1 && s.stride[i] >= 1 && s.dilation[i] >= 1,
            "pool2d: kernel, stride and dilation must be positive");
  for (int p : s.pad) require(p >= 0, "pool2d: padding must be non-negative");
  require(s.kind == Pool2dSpec::Kind::kMax || (s.dilation[0] == 1 && s.dilation[1] == 1),
          "pool2d: average pooling has no dilation");
}

// Whether some window along one dim reaches before the start or past the end.
bool reads_outside(int64_t in, int64_t out, int kernel, int stride, int pad_begin, int dilation) {
  return pad_begin > 0 || (out - 1) * stride - pad_begin + int64_t{dilation} * (kernel - 1) >= in;
}

// Bytes of the padded input rows one output row of windows reads (rows
// padded to whole vectors, as stage_on_stack stores them).
int64_t staged_row_bytes(const Pool2dSpec& s, int lanes) {
  const int64_t rows = int64_t{s.dilation[0]} * (s.kernel[0] - 1) + 1;
  const int64_t width = (s.output_shape[3] - 1) * s.stride[1] + int64_t{s.dilation[1]} * (s.kernel[1] - 1) + 1;
  return rows * ((width + lanes - 1) / lanes * lanes) * 4;
}

// Max and average pooling over a fixed window.
Expr window_pool(const Pool2dSpec& s, const Halide::ImageParam& input, Pool2dFuncs& f) {
  const int64_t h = s.input_shape[2], w = s.input_shape[3];
  const bool is_max = s.kind == Pool2dSpec::Kind::kMax;
  const Halide::Type type = s.element_type;
  const Expr outside = !is_max ? Expr(0.0f) : type.is_float() ? Expr(-std::numeric_limits<float>::infinity()) : type.min();
  f.padded = reads_outside(h, s.output_shape[2], s.kernel[0], s.stride[0], s.pad[0], s.dilation[0]) ||
             reads_outside(w, s.output_shape[3], s.kernel[1], s.stride[1], s.pad[1], s.dilation[1]);
  if (f.padded)
    f.source = Halide::BoundaryConditions::constant_exterior(input, outside,
                                                            {{0, static_cast<int>(w)}, {0, static_cast<int>(h)}});
  else
    f.source(f.x, f.y, f.c, f.n) = input(f.x, f.y, f.c, f.n);
  f.r = Halide::RDom(0, s.kernel[1], 0, s.kernel[0], "r");
  const Expr tap = f.source(f.x * s.stride[1] - s.pad[1] + f.r.x * s.dilation[1],
                            f.y * s.stride[0] - s.pad[0] + f.r.y * s.dilation[0], f.c, f.n);
  f.window(f.x, f.y, f.c, f.n) = outside;
  const Expr current = f.window(f.x, f.y, f.c, f.n);
  // The max keeps a NaN, as PyTorch's does: evaluated strictly, since Halide
  // compiles float max with fast-math flags (x86 maxps drops a NaN operand).
  const Expr larger = type.is_float() ? Halide::strict_float(Halide::select(tap > current || Halide::is_nan(tap), tap, current))
                                      : Halide::max(tap, current);
  f.window(f.x, f.y, f.c, f.n) = is_max ? larger : current + tap;
  if (is_max) return f.window(f.x, f.y, f.c, f.n);

  // The divisor, as in the reference: the window clipped to the padded input,
  // or to the input itself without count_include_pad.
  const Expr h0 = f.y * s.stride[0] - s.pad[0], w0 = f.x * s.stride[1] - s.pad[1];
  const Expr h1 = Halide::min(h0 + s.kernel[0], static_cast<int>(h) + s.pad[2]);
  const Expr w1 = Halide::min(w0 + s.kernel[1], static_cast<int>(w) + s.pad[3]);
  const Expr count = s.count_include_pad
                         ? (h1 - h0) * (w1 - w0)
                         : (Halide::min(h1, static_cast<int>(h)) - Halide::max(h0, 0)) *
                               (Halide::min(w1, static_cast<int>(w)) - Halide::max(w0, 0));
  return f.window(f.x, f.y, f.c, f.n) / Halide::cast<float>(count);
}

// The largest adaptive window along a dim of `in` cut into `out` cells.
int64_t largest_adaptive_window(int64_t in, int64_t out) {
  int64_t largest = 1;
  for (int64_t i = 0; i < out; ++i) largest = std::max(largest, ((i + 1) * in + out - 1) / out - i * in / out);
  return largest;
}

Expr adaptive_pool(const Pool2dSpec& s, const Halide::ImageParam& input, Pool2dFuncs& f) {
  const int h = static_cast<int>(s.input_shape[2]), w = static_cast<int>(s.input_shape[3]);
  const int oh = static_cast<int>(s.output_shape[2]), ow = static_cast<int>(s.output_shape[3]);
  const Expr h0 = f.y * h / oh, h1 = ((f.y + 1) * h + oh - 1) / oh;
  const Expr w0 = f.x * w / ow, w1 = ((f.x + 1) * w + ow - 1) / ow;
  // A fixed RDom covers the largest window; taps past a smaller window add 0
  // (their clamped reads stay inside the input).
  f.r = Halide::RDom(0, static_cast<int>(largest_adaptive_window(w, ow)), 0,
                     static_cast<int>(largest_adaptive_window(h, oh)), "r");
  const Expr tap = input(Halide::min(w0 + f.r.x, w - 1), Halide::min(h0 + f.r.y, h - 1), f.c, f.n);
  f.window(f.x, f.y, f.c, f.n) = 0.0f;
  f.window(f.x, f.y, f.c, f.n) += Halide::select(f.r.x < w1 - w0 && f.r.y < h1 - h0, tap, 0.0f);
  return f.window(f.x, f.y, f.c, f.n) / Halide::cast<float>((h1 - h0) * (w1 - w0));
}

const char* kind_name(Pool2dSpec::Kind kind) {
  switch (kind) {
    case Pool2dSpec::Kind::kMax: return "max";
    case Pool2dSpec::Kind::kAverage: return "average";
    case Pool2dSpec::Kind::kAdaptiveAverage: return "adaptive average";
  }
  return "?";
}

// A thread per output value, warps along output rows (coalesced writes, and
// reads with the stride's gaps), 32 x 4 threads per block; the window's
// reduction in registers.
std::string schedule_gpu(Func& output, Pool2dFuncs& f, const Pool2dSpec& s) {
  const int columns = s.output_shape[3] >= 32 ? 32 : s.output_shape[3] >= 16 ? 16 : 8;
  const Var xi = schedule_gpu_rows(output, f.x, f.y, f.c, f.n, columns);
  f.window.compute_at(output, xi).store_in(Halide::MemoryType::Register);
  if (*Halide::Internal::as_const_int(f.r.x.extent()) <= kMaxUnrolledTaps) f.window.update().unroll(f.r.x);
  return "one output per thread, " + std::to_string(columns) + "x4 threads per block";
}

}  // namespace

Kernel pool2d(const Pool2dSpec& spec, const Halide::Target& target) {
  require_valid(spec);
  Kernel kernel;
  require(spec.element_type == Halide::Float(32) || (spec.kind == Pool2dSpec::Kind::kMax && spec.epilogue.empty()),
          "pool2d: only a max pool without epilogue takes integers");
  Halide::ImageParam input = dense_input("input", spec.input_shape, spec.element_type);
  kernel.inputs = {input};

  /* algorithm */
  Pool2dFuncs f;
  Func output("pool2d");
  const Expr value = spec.kind == Pool2dSpec::Kind::kAdaptiveAverage ? adaptive_pool(spec, input, f)
                                                                     : window_pool(spec, input, f);
  output(f.x, f.y, f.c, f.n) =
      apply_epilogue(value, spec.epilogue, {f.n, f.c, f.y, f.x}, spec.output_shape, kernel.inputs);
  constrain_output(output, spec.output_shape);

  /* schedule */
  if (target.has_gpu_feature()) {
    kernel.output = output;
    kernel.schedule = std::string("pool2d ") + kind_name(spec.kind) + " gpu: " + schedule_gpu(output, f, spec) +
                      (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
    return kernel;
  }
  // Vectors along output rows (windows of neighbouring lanes are independent);
  // planes (n, c) in parallel.
  const int lanes = lanes_for_extent(spec.output_shape[3], native_lanes(target));
  Var xo("xo"), xi("xi"), planes("planes");
  output.split(f.x, xo, xi, lanes).reorder(xi, xo, f.y, f.c, f.n).fuse(f.c, f.n, planes);
  const Shape& out = spec.output_shape;
  const std::string parallel = parallel_in_tasks(output, planes, out[0] * out[1], out[2] * out[3]);
  f.window.compute_at(output, xo);
  if (lanes > 1) {
    output.vectorize(xi);
    f.window.vectorize(f.x);
    f.window.update().vectorize(f.x);
  }
  if (*Halide::Internal::as_const_int(f.r.x.extent()) <= kMaxUnrolledTaps) f.window.update().unroll(f.r.x);
  // The padded input rows one output row reads, staged where they fit the
  // stack; else every read checks its coordinates.
  std::string padding = f.padded ? ", bounds-checked reads" : "";
  // (Not with strides above 2: Halide 14 then read the staged rows with
  // misaligned aligned loads; found by aotc-fuzz, stride 3 dilation 2.)
  if (f.padded && spec.stride[1] <= kMaxStagedLoadStride && staged_row_bytes(spec, lanes) <= kMaxStagedBytes) {
    f.source.compute_at(output, f.y);
    stage_on_stack(f.source, lanes);
    padding = ", padded rows staged";
  }
  kernel.output = output;
  kernel.schedule = std::string("pool2d ") + kind_name(spec.kind) + ": vec" + std::to_string(lanes) +
                    "(w), planes " + parallel + padding +
                    (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
  return kernel;
}

}  // namespace aotc::gen
