#include "reference/evaluator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "ir/shape_rules.h"
#include "support/error.h"

namespace aotc {
namespace {

// ---- Elementwise functions, shared by the ops and the post-ops so that a fused
// epilogue computes bit for bit what the separate node would. -----------------

float relu(float v) { return v < 0 ? 0.0f : v; }  // keeps NaN, as PyTorch does
float clamp(float v, float lo, float hi) { return std::min(std::max(v, lo), hi); }
float hardswish(float v) {
  const double d = v;
  return static_cast<float>(d * std::clamp(d + 3, 0.0, 6.0) / 6);
}
float sigmoid(float v) { return static_cast<float>(1 / (1 + std::exp(-static_cast<double>(v)))); }
float tanh(float v) { return static_cast<float>(std::tanh(static_cast<double>(v))); }
float elu(float v, float alpha) { return v > 0 ? v : static_cast<float>(alpha * std::expm1(static_cast<double>(v))); }
float softplus(float v) { return static_cast<float>(std::log1p(std::exp(static_cast<double>(v)))); }
float affine(float v, float scale, float shift) {
  return static_cast<float>(static_cast<double>(v) * scale + shift);
}
float add(float a, float b) { return static_cast<float>(static_cast<double>(a) + b); }
float mul(float a, float b) { return static_cast<float>(static_cast<double>(a) * b); }
float prelu(float v, float alpha) { return v >= 0 ? v : mul(alpha, v); }
float maximum(float a, float b) { return std::isnan(a) || std::isnan(b) ? a + b : std::max(a, b); }
float minimum(float a, float b) { return std::isnan(a) || std::isnan(b) ? a + b : std::min(a, b); }
float divide(float a, float b) { return static_cast<float>(static_cast<double>(a) / b); }

// Product of the dims in [begin, end).
int64_t extent(const Shape& s, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t d = begin; d < end; ++d) n *= s[d];
  return n;
}

// Flat index into `operand` of element `flat` of `out`, with NumPy broadcasting
// (dims aligned from the right; size-1 and missing dims repeat).
int64_t broadcast_offset(int64_t flat, const Shape& out, const Shape& operand) {
  int64_t offset = 0, stride = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t d = out.size() - 1 - i;
    const int64_t index = flat % out[d];
    flat /= out[d];
    if (i >= operand.size()) continue;
    const int64_t operand_dim = operand[operand.size() - 1 - i];
    if (operand_dim != 1) offset += index * stride;
    stride *= operand_dim;
  }
  return offset;
}

// Channel (dim 1) of element `flat` of a tensor of shape `s` (rank >= 2).
int64_t channel_of(int64_t flat, const Shape& s) { return flat / extent(s, 2, s.size()) % s[1]; }

template <typename Fn>
void map_unary(const Value& x, Value& out, Fn fn) {
  for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = fn(x.data[i]);
}

template <typename Fn>
void map_binary(const Value& a, const Value& b, Value& out, Fn fn) {
  for (int64_t i = 0; i < static_cast<int64_t>(out.data.size()); ++i)
    out.data[static_cast<size_t>(i)] = fn(a.data[static_cast<size_t>(broadcast_offset(i, out.shape, a.shape))],
                                          b.data[static_cast<size_t>(broadcast_offset(i, out.shape, b.shape))]);
}

// Row-major offset of [n, c, h, w] in an NCHW tensor of shape s.
int64_t at4(const Shape& s, int64_t n, int64_t c, int64_t h, int64_t w) {
  return ((n * s[1] + c) * s[2] + h) * s[3] + w;
}

// The convolution's sums in double (exact for integer operands below 2^53), row-major over `os`.
std::vector<double> conv2d_sums(const Value& x, const Value& w, const Value* bias, const Conv2dAttrs& a,
                                const Shape& os) {
  const Shape& xs = x.shape;
  const Shape& ws = w.shape;
  std::vector<double> sums(static_cast<size_t>(num_elements(os)));
  const int64_t in_per_group = ws[1];
  const int64_t out_per_group = os[1] / a.groups;
  for (int64_t n = 0; n < os[0]; ++n)
    for (int64_t o = 0; o < os[1]; ++o) {
      const int64_t first_in = o / out_per_group * in_per_group;
      for (int64_t oh = 0; oh < os[2]; ++oh)
        for (int64_t ow = 0; ow < os[3]; ++ow) {
          double acc = bias ? bias->data[static_cast<size_t>(o)] : 0.0;
          for (int64_t ci = 0; ci < in_per_group; ++ci)
            for (int64_t kh = 0; kh < ws[2]; ++kh)
              for (int64_t kw = 0; kw < ws[3]; ++kw) {
                const int64_t ih = oh * a.stride[0] - a.pad[0] + kh * a.dilation[0];
                const int64_t iw = ow * a.stride[1] - a.pad[1] + kw * a.dilation[1];
                if (ih < 0 || ih >= xs[2] || iw < 0 || iw >= xs[3]) continue;  // zero padding
                acc += static_cast<double>(x.data[static_cast<size_t>(at4(xs, n, first_in + ci, ih, iw))]) *
                       w.data[static_cast<size_t>(at4(ws, o, ci, kh, kw))];
              }
          sums[static_cast<size_t>(at4(os, n, o, oh, ow))] = acc;
        }
    }
  return sums;
}

void conv2d(const Value& x, const Value& w, const Value* bias, const Conv2dAttrs& a, Value& out) {
  const std::vector<double> sums = conv2d_sums(x, w, bias, a, out.shape);
  std::transform(sums.begin(), sums.end(), out.data.begin(), [](double v) { return static_cast<float>(v); });
}

void batch_norm(const std::vector<const Value*>& in, bool has_affine, float eps, Value& out) {
  for (int64_t i = 0; i < static_cast<int64_t>(out.data.size()); ++i) {
    const size_t c = static_cast<size_t>(channel_of(i, out.shape));
    const double normalized = (static_cast<double>(in[0]->data[static_cast<size_t>(i)]) - in[1]->data[c]) /
                              std::sqrt(static_cast<double>(in[2]->data[c]) + eps);
    const double y = has_affine ? normalized * in[3]->data[c] + in[4]->data[c] : normalized;
    out.data[static_cast<size_t>(i)] = static_cast<float>(y);
  }
}

// Padding acts as -inf; NaN propagates as in PyTorch.
void max_pool2d(const Value& x, const Pool2dAttrs& a, Value& out) {
  const Shape& xs = x.shape;
  const Shape& os = out.shape;
  for (int64_t n = 0; n < os[0]; ++n)
    for (int64_t c = 0; c < os[1]; ++c)
      for (int64_t oh = 0; oh < os[2]; ++oh)
        for (int64_t ow = 0; ow < os[3]; ++ow) {
          float best = -std::numeric_limits<float>::infinity();
          for (int64_t kh = 0; kh < a.kernel[0]; ++kh)
            for (int64_t kw = 0; kw < a.kernel[1]; ++kw) {
              const int64_t ih = oh * a.stride[0] - a.pad[0] + kh * a.dilation[0];
              const int64_t iw = ow * a.stride[1] - a.pad[1] + kw * a.dilation[1];
              if (ih < 0 || ih >= xs[2] || iw < 0 || iw >= xs[3]) continue;
              const float v = x.data[static_cast<size_t>(at4(xs, n, c, ih, iw))];
              if (v > best || std::isnan(v)) best = v;
            }
          out.data[static_cast<size_t>(at4(os, n, c, oh, ow))] = best;
        }
}

// PyTorch's divisor: with count_include_pad, the window clipped to the padded
// input (so the ceil_mode overhang beyond the end padding does not count);
// without, the number of input elements in the window.
void avg_pool2d(const Value& x, const Pool2dAttrs& a, Value& out) {
  const Shape& xs = x.shape;
  const Shape& os = out.shape;
  for (int64_t n = 0; n < os[0]; ++n)
    for (int64_t c = 0; c < os[1]; ++c)
      for (int64_t oh = 0; oh < os[2]; ++oh)
        for (int64_t ow = 0; ow < os[3]; ++ow) {
          const int64_t h0 = oh * a.stride[0] - a.pad[0];
          const int64_t w0 = ow * a.stride[1] - a.pad[1];
          const int64_t h1 = std::min(h0 + a.kernel[0], xs[2] + a.pad[2]);
          const int64_t w1 = std::min(w0 + a.kernel[1], xs[3] + a.pad[3]);
          const int64_t padded_count = (h1 - h0) * (w1 - w0);
          double sum = 0;
          int64_t count = 0;
          for (int64_t ih = std::max<int64_t>(h0, 0); ih < std::min(h1, xs[2]); ++ih)
            for (int64_t iw = std::max<int64_t>(w0, 0); iw < std::min(w1, xs[3]); ++iw) {
              sum += x.data[static_cast<size_t>(at4(xs, n, c, ih, iw))];
              ++count;
            }
          const double divisor = static_cast<double>(a.count_include_pad ? padded_count : count);
          out.data[static_cast<size_t>(at4(os, n, c, oh, ow))] = static_cast<float>(sum / divisor);
        }
}

// Window i of `out` over `in`: [floor(i*in/out), ceil((i+1)*in/out)).
void adaptive_avg_pool2d(const Value& x, Value& out) {
  const Shape& xs = x.shape;
  const Shape& os = out.shape;
  for (int64_t n = 0; n < os[0]; ++n)
    for (int64_t c = 0; c < os[1]; ++c)
      for (int64_t oh = 0; oh < os[2]; ++oh)
        for (int64_t ow = 0; ow < os[3]; ++ow) {
          const int64_t h0 = oh * xs[2] / os[2], h1 = ((oh + 1) * xs[2] + os[2] - 1) / os[2];
          const int64_t w0 = ow * xs[3] / os[3], w1 = ((ow + 1) * xs[3] + os[3] - 1) / os[3];
          double sum = 0;
          for (int64_t ih = h0; ih < h1; ++ih)
            for (int64_t iw = w0; iw < w1; ++iw) sum += x.data[static_cast<size_t>(at4(xs, n, c, ih, iw))];
          out.data[static_cast<size_t>(at4(os, n, c, oh, ow))] =
              static_cast<float>(sum / static_cast<double>((h1 - h0) * (w1 - w0)));
        }
}

void global_avg_pool(const Value& x, Value& out) {
  const int64_t plane = x.shape[2] * x.shape[3];
  for (size_t nc = 0; nc < out.data.size(); ++nc) {
    double sum = 0;
    for (int64_t i = 0; i < plane; ++i) sum += x.data[nc * static_cast<size_t>(plane) + static_cast<size_t>(i)];
    out.data[nc] = static_cast<float>(sum / static_cast<double>(plane));
  }
}

// y[n, m] = sum_k x[n, k] * w[m, k] + b[m], x's dims after the first flattened to k.
void linear(const Value& x, const Value& w, const Value* bias, Value& out) {
  const int64_t rows = out.shape[0], features = w.shape[0], depth = w.shape[1];
  for (int64_t n = 0; n < rows; ++n)
    for (int64_t m = 0; m < features; ++m) {
      double acc = bias ? bias->data[static_cast<size_t>(m)] : 0.0;
      for (int64_t k = 0; k < depth; ++k)
        acc += static_cast<double>(x.data[static_cast<size_t>(n * depth + k)]) *
               w.data[static_cast<size_t>(m * depth + k)];
      out.data[static_cast<size_t>(n * features + m)] = static_cast<float>(acc);
    }
}

void concat(const std::vector<const Value*>& in, size_t operands, size_t axis, Value& out) {
  const int64_t outer = extent(out.shape, 0, axis);
  size_t dst = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t i = 0; i < operands; ++i) {
      const Value& x = *in[i];
      const int64_t block = extent(x.shape, axis, x.shape.size());
      const auto src = x.data.begin() + o * block;
      std::copy(src, src + block, out.data.begin() + static_cast<int64_t>(dst));
      dst += static_cast<size_t>(block);
    }
}

// Numerically stable: exp(x - max) / sum(exp(x - max)) along `axis`.
void softmax(const Value& x, size_t axis, Value& out) {
  const Shape& s = x.shape;
  const int64_t outer = extent(s, 0, axis), length = s[axis], inner = extent(s, axis + 1, s.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto index = [&](int64_t k) { return static_cast<size_t>((o * length + k) * inner + i); };
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < length; ++k) max = std::max(max, static_cast<double>(x.data[index(k)]));
      double sum = 0;
      for (int64_t k = 0; k < length; ++k) sum += std::exp(x.data[index(k)] - max);
      for (int64_t k = 0; k < length; ++k)
        out.data[index(k)] = static_cast<float>(std::exp(x.data[index(k)] - max) / sum);
    }
}

void pad(const Value& x, const PadAttrs& a, Value& out) {
  const size_t rank = x.shape.size();
  for (int64_t i = 0; i < static_cast<int64_t>(out.data.size()); ++i) {
    // Unravel i in the output; shift by the begin pads to find the source element.
    int64_t rest = i, src = 0, stride = 1;
    bool inside = true;
    for (size_t k = 0; k < rank; ++k) {
      const size_t d = rank - 1 - k;
      const int64_t source_index = rest % out.shape[d] - a.pads[d];
      rest /= out.shape[d];
      inside = inside && source_index >= 0 && source_index < x.shape[d];
      src += source_index * stride;
      stride *= x.shape[d];
    }
    out.data[static_cast<size_t>(i)] = inside ? x.data[static_cast<size_t>(src)] : a.value;
  }
}

// y[i] = x[j] with j[perm[k]] = i[k].
void transpose(const Value& x, const std::vector<int>& perm, Value& out) {
  const size_t rank = x.shape.size();
  for (int64_t i = 0; i < static_cast<int64_t>(out.data.size()); ++i) {
    int64_t rest = i, src = 0;
    for (size_t k = rank; k-- > 0;) {
      const size_t d = static_cast<size_t>(perm[k]);
      src += rest % out.shape[k] * extent(x.shape, d + 1, rank);
      rest /= out.shape[k];
    }
    out.data[static_cast<size_t>(i)] = x.data[static_cast<size_t>(src)];
  }
}

// ---- Resizing with TensorFlow Lite's float reference kernels' sampling. The
// sample positions are computed in float, as TFLite does, because nearest
// rounding and the bilinear taps depend on the exact float value. -------------

float resize_scale(int64_t in, int64_t out, bool align_corners) {
  return align_corners && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                  : static_cast<float>(in) / static_cast<float>(out);
}

// Output row/column o reads input lo and hi: (1 - weight) * x[lo] + weight * x[hi].
struct BilinearTap {
  int64_t lo = 0, hi = 0;
  double weight = 0;
};

// TFLite's ComputeInterpolationValues. Near the borders the source position may
// lie outside [lo, hi]; then lo == hi and the weights still sum to 1.
std::vector<BilinearTap> bilinear_taps(int64_t in, int64_t out, const ResizeAttrs& a) {
  const float scale = resize_scale(in, out, a.align_corners);
  std::vector<BilinearTap> taps;
  for (int64_t o = 0; o < out; ++o) {
    const float src = a.half_pixel_centers ? (static_cast<float>(o) + 0.5f) * scale - 0.5f
                                           : static_cast<float>(o) * scale;
    BilinearTap t;
    t.lo = std::max<int64_t>(static_cast<int64_t>(std::floor(src)), 0);
    t.hi = std::min<int64_t>(static_cast<int64_t>(std::ceil(src)), in - 1);
    t.weight = static_cast<double>(src) - static_cast<double>(t.lo);
    taps.push_back(t);
  }
  return taps;
}

void resize_bilinear(const Value& x, const ResizeAttrs& a, Value& out) {
  const Shape& xs = x.shape;
  const Shape& os = out.shape;
  const std::vector<BilinearTap> rows = bilinear_taps(xs[2], os[2], a);
  const std::vector<BilinearTap> cols = bilinear_taps(xs[3], os[3], a);
  for (int64_t n = 0; n < os[0]; ++n)
    for (int64_t c = 0; c < os[1]; ++c)
      for (int64_t oh = 0; oh < os[2]; ++oh)
        for (int64_t ow = 0; ow < os[3]; ++ow) {
          const BilinearTap& r = rows[static_cast<size_t>(oh)];
          const BilinearTap& q = cols[static_cast<size_t>(ow)];
          const auto in = [&](int64_t h, int64_t w) -> double {
            return x.data[static_cast<size_t>(at4(xs, n, c, h, w))];
          };
          const double dy = r.weight, dx = q.weight;
          const double v = in(r.lo, q.lo) * (1 - dy) * (1 - dx) + in(r.hi, q.lo) * dy * (1 - dx) +
                           in(r.lo, q.hi) * (1 - dy) * dx + in(r.hi, q.hi) * dy * dx;
          out.data[static_cast<size_t>(at4(os, n, c, oh, ow))] = static_cast<float>(v);
        }
}

// TFLite's GetNearestNeighbor: the input row/column that output o copies.
std::vector<int64_t> nearest_indices(int64_t in, int64_t out, const ResizeAttrs& a) {
  const float scale = resize_scale(in, out, a.align_corners);
  const float offset = a.half_pixel_centers ? 0.5f : 0.0f;
  std::vector<int64_t> indices;
  for (int64_t o = 0; o < out; ++o) {
    const float src = (static_cast<float>(o) + offset) * scale;
    // std::round rounds half away from zero, as TfLiteRound does.
    int64_t i = std::min(static_cast<int64_t>(a.align_corners ? std::round(src) : std::floor(src)), in - 1);
    if (a.half_pixel_centers) i = std::max<int64_t>(i, 0);
    indices.push_back(i);
  }
  return indices;
}

void resize_nearest(const Value& x, const ResizeAttrs& a, Value& out) {
  const Shape& xs = x.shape;
  const Shape& os = out.shape;
  const std::vector<int64_t> rows = nearest_indices(xs[2], os[2], a);
  const std::vector<int64_t> cols = nearest_indices(xs[3], os[3], a);
  for (int64_t n = 0; n < os[0]; ++n)
    for (int64_t c = 0; c < os[1]; ++c)
      for (int64_t oh = 0; oh < os[2]; ++oh)
        for (int64_t ow = 0; ow < os[3]; ++ow)
          out.data[static_cast<size_t>(at4(os, n, c, oh, ow))] = x.data[static_cast<size_t>(
              at4(xs, n, c, rows[static_cast<size_t>(oh)], cols[static_cast<size_t>(ow)]))];
}

// Output row oh of the full transposed convolution (before cropping) receives
// input row ih through kernel row kh where ih * stride + kh = oh + pad_top;
// likewise for columns.
void conv_transpose2d(const Value& x, const Value& w, const Value* bias, const ConvTranspose2dAttrs& a,
                      Value& out) {
  const Shape& xs = x.shape;
  const Shape& ws = w.shape;
  const Shape& os = out.shape;
  for (int64_t n = 0; n < os[0]; ++n)
    for (int64_t o = 0; o < os[1]; ++o)
      for (int64_t oh = 0; oh < os[2]; ++oh)
        for (int64_t ow = 0; ow < os[3]; ++ow) {
          double acc = bias ? bias->data[static_cast<size_t>(o)] : 0.0;
          for (int64_t c = 0; c < xs[1]; ++c)
            for (int64_t kh = 0; kh < ws[2]; ++kh)
              for (int64_t kw = 0; kw < ws[3]; ++kw) {
                const int64_t th = oh + a.pad[0] - kh, tw = ow + a.pad[1] - kw;
                if (th < 0 || tw < 0 || th % a.stride[0] != 0 || tw % a.stride[1] != 0) continue;
                const int64_t ih = th / a.stride[0], iw = tw / a.stride[1];
                if (ih >= xs[2] || iw >= xs[3]) continue;
                acc += static_cast<double>(x.data[static_cast<size_t>(at4(xs, n, c, ih, iw))]) *
                       w.data[static_cast<size_t>(at4(ws, c, o, kh, kw))];
              }
          out.data[static_cast<size_t>(at4(os, n, o, oh, ow))] = static_cast<float>(acc);
        }
}

// TensorFlow's DCR order: y[n, c, h*b + i, w*b + j] = x[n, (i*b + j) * C_out + c, h, w].
void depth_to_space(const Value& x, int64_t block, Value& out) {
  const Shape& os = out.shape;
  for (int64_t n = 0; n < os[0]; ++n)
    for (int64_t c = 0; c < os[1]; ++c)
      for (int64_t oh = 0; oh < os[2]; ++oh)
        for (int64_t ow = 0; ow < os[3]; ++ow) {
          const int64_t source_channel = (oh % block * block + ow % block) * os[1] + c;
          out.data[static_cast<size_t>(at4(os, n, c, oh, ow))] =
              x.data[static_cast<size_t>(at4(x.shape, n, source_channel, oh / block, ow / block))];
        }
}

// The channel of flat index `i` along quantization axis `q.axis` (0 per tensor).
size_t quant_channel(int64_t i, const Shape& s, const Quantization& q) {
  if (q.axis < 0) return 0;
  const auto axis = static_cast<size_t>(q.axis);
  return static_cast<size_t>(i / extent(s, axis + 1, s.size()) % s[axis]);
}

void quantize(const Value& x, const QuantizeAttrs& a, Value& out) {
  const Quantization& q = a.quant;
  for (int64_t i = 0; i < static_cast<int64_t>(out.data.size()); ++i) {
    const size_t c = quant_channel(i, x.shape, q);
    out.data[static_cast<size_t>(i)] = static_cast<float>(
        quantize_value(x.data[static_cast<size_t>(i)], a.dtype, q.scale[c], q.zero_point[c], a.arithmetic));
  }
}

// ONNX DequantizeLinear: (q - zero_point) * scale in float32.
void dequantize(const Value& x, const Quantization& q, Value& out) {
  for (int64_t i = 0; i < static_cast<int64_t>(out.data.size()); ++i) {
    const size_t c = quant_channel(i, x.shape, q);
    const auto integer = static_cast<int64_t>(x.data[static_cast<size_t>(i)]) - q.zero_point[c];
    out.data[static_cast<size_t>(i)] = static_cast<float>(integer) * q.scale[c];
  }
}

// qconv2d (graph.h): the exact integer convolution of the zero-point-shifted operands (conv2d's
// zero padding of x - x_zero_point is padding x with its zero point), then the requantization.
void qconv2d(const Graph& g, const Node& node, const std::vector<const Value*>& in, size_t operands, Value& out) {
  const auto& a = node.attr<QConv2dAttrs>();
  const Quantization& xq = *g.tensor(node.inputs[0]).quant;
  const Quantization& wq = *g.tensor(node.inputs[1]).quant;
  Value x = *in[0], w = *in[1];
  for (float& v : x.data) v -= static_cast<float>(xq.zero_point[0]);
  for (int64_t i = 0; i < static_cast<int64_t>(w.data.size()); ++i)
    w.data[static_cast<size_t>(i)] -= static_cast<float>(wq.zero_point[quant_channel(i, w.shape, wq)]);
  // Exact: the shape rules bound every sum below 2^31.
  const std::vector<double> sums = conv2d_sums(x, w, operands == 3 ? in[2] : nullptr, a.conv, out.shape);
  const int64_t plane = out.shape[2] * out.shape[3];
  for (int64_t i = 0; i < static_cast<int64_t>(out.data.size()); ++i) {
    const int64_t o = i / plane % out.shape[1];
    const auto acc = static_cast<int32_t>(sums[static_cast<size_t>(i)]);
    const int64_t scaled =
        a.out.arithmetic == Arithmetic::kTflite
            ? multiply_by_quantized_multiplier(acc, tflite_requantization_multiplier(xq, wq, a.out.quant, o))
            : static_cast<int64_t>(
                  std::nearbyint(static_cast<float>(acc) * requantization_multiplier(xq, wq, a.out.quant, o)));
    out.data[static_cast<size_t>(i)] =
        static_cast<float>(std::clamp(scaled + a.out.quant.zero_point[0], a.min, a.max));
  }
}

// qglobal_avg_pool (graph.h): the exact sum of the zero-point-shifted plane, requantized.
void qglobal_avg_pool(const Graph& g, const Node& node, const Value& x, Value& out) {
  const auto& a = node.attr<QuantizeAttrs>();
  const Quantization& xq = *g.tensor(node.inputs[0]).quant;
  const int64_t plane = x.shape[2] * x.shape[3];
  const float m = global_avg_pool_multiplier(xq, a.quant, plane);
  for (size_t nc = 0; nc < out.data.size(); ++nc) {
    int64_t acc = 0;
    for (int64_t i = 0; i < plane; ++i)
      acc += static_cast<int64_t>(x.data[nc * static_cast<size_t>(plane) + static_cast<size_t>(i)]) - xq.zero_point[0];
    const auto scaled = static_cast<int64_t>(std::nearbyint(static_cast<float>(acc) * m));  // ties to even
    out.data[nc] = static_cast<float>(std::clamp(scaled + a.quant.zero_point[0], dtype_min(a.dtype), dtype_max(a.dtype)));
  }
}

// qadd (graph.h): ONNX Runtime's QLinearAdd or TFLite's ADD, saturated to the bounds.
void qadd(const Graph& g, const Node& node, const std::vector<const Value*>& in, Value& out) {
  const auto& a = node.attr<QAddAttrs>();
  const Quantization& aq = *g.tensor(node.inputs[0]).quant;
  const Quantization& bq = *g.tensor(node.inputs[1]).quant;
  const bool tflite = a.out.arithmetic == Arithmetic::kTflite;  // only that arithmetic's constants
  const QAddConstants k = tflite ? QAddConstants{} : qadd_constants(aq, bq, a.out.quant, a.out.dtype);
  const TfliteAddParameters p = tflite ? tflite_add_parameters(aq, bq, a.out.quant) : TfliteAddParameters{};
  for (size_t i = 0; i < out.data.size(); ++i) {
    const auto x = static_cast<int64_t>(in[0]->data[i]), y = static_cast<int64_t>(in[1]->data[i]);
    const int64_t sum = tflite ? tflite_add_value(x, y, p) : qadd_value(x, y, k);
    out.data[i] = static_cast<float>(std::clamp(sum, a.min, a.max));
  }
}

void compute_op(const Graph& g, const Node& node, const std::vector<const Value*>& in, size_t operands, Value& out) {
  const Value& x = *in[0];
  switch (node.op) {
    case OpKind::Conv2d: return conv2d(x, *in[1], operands == 3 ? in[2] : nullptr, node.attr<Conv2dAttrs>(), out);
    case OpKind::BatchNorm:
      return batch_norm(in, operands == 5, node.attr<BatchNormAttrs>().eps, out);
    case OpKind::Affine:
      for (int64_t i = 0; i < static_cast<int64_t>(out.data.size()); ++i) {
        const size_t c = static_cast<size_t>(channel_of(i, out.shape));
        out.data[static_cast<size_t>(i)] = affine(x.data[static_cast<size_t>(i)], in[1]->data[c], in[2]->data[c]);
      }
      return;
    case OpKind::Relu: return map_unary(x, out, relu);
    case OpKind::Clamp: {
      const ClampAttrs& a = node.attr<ClampAttrs>();
      return map_unary(x, out, [&](float v) { return clamp(v, a.min, a.max); });
    }
    case OpKind::HardSwish: return map_unary(x, out, hardswish);
    case OpKind::Sigmoid: return map_unary(x, out, sigmoid);
    case OpKind::Add: return map_binary(x, *in[1], out, add);
    case OpKind::Mul: return map_binary(x, *in[1], out, mul);
    case OpKind::Max: return map_binary(x, *in[1], out, maximum);
    case OpKind::Min: return map_binary(x, *in[1], out, minimum);
    case OpKind::Div: return map_binary(x, *in[1], out, divide);
    case OpKind::MaxPool2d: return max_pool2d(x, node.attr<Pool2dAttrs>(), out);
    case OpKind::AvgPool2d: return avg_pool2d(x, node.attr<Pool2dAttrs>(), out);
    case OpKind::AdaptiveAvgPool2d: return adaptive_avg_pool2d(x, out);
    case OpKind::GlobalAvgPool: return global_avg_pool(x, out);
    case OpKind::Linear: return linear(x, *in[1], operands == 3 ? in[2] : nullptr, out);
    case OpKind::Flatten:
    case OpKind::Reshape:
    case OpKind::Dropout:  // the identity at inference
      out.data = x.data;
      return;
    case OpKind::Concat: return concat(in, operands, static_cast<size_t>(node.attr<AxisAttrs>().axis), out);
    case OpKind::Softmax: return softmax(x, static_cast<size_t>(node.attr<AxisAttrs>().axis), out);
    case OpKind::Pad: return pad(x, node.attr<PadAttrs>(), out);
    case OpKind::Tanh: return map_unary(x, out, tanh);
    case OpKind::Elu: {
      const float alpha = node.attr<EluAttrs>().alpha;
      return map_unary(x, out, [alpha](float v) { return elu(v, alpha); });
    }
    case OpKind::Softplus: return map_unary(x, out, softplus);
    case OpKind::PRelu: return map_binary(x, *in[1], out, prelu);
    case OpKind::Transpose: return transpose(x, node.attr<TransposeAttrs>().perm, out);
    case OpKind::ResizeBilinear: return resize_bilinear(x, node.attr<ResizeAttrs>(), out);
    case OpKind::ResizeNearest: return resize_nearest(x, node.attr<ResizeAttrs>(), out);
    case OpKind::ConvTranspose2d:
      return conv_transpose2d(x, *in[1], operands == 3 ? in[2] : nullptr, node.attr<ConvTranspose2dAttrs>(), out);
    case OpKind::DepthToSpace: return depth_to_space(x, node.attr<DepthToSpaceAttrs>().block, out);
    case OpKind::Quantize: return quantize(x, node.attr<QuantizeAttrs>(), out);
    case OpKind::Dequantize: return dequantize(x, *g.tensor(node.inputs[0]).quant, out);
    case OpKind::QConv2d: return qconv2d(g, node, in, operands, out);
    case OpKind::QAdd: return qadd(g, node, in, out);
    case OpKind::QGlobalAvgPool: return qglobal_avg_pool(g, node, x, out);
    case OpKind::QLookup: {
      const auto& a = node.attr<QLookupAttrs>();
      const int64_t lowest = dtype_min(g.tensor(node.inputs[0]).dtype);
      for (size_t i = 0; i < out.data.size(); ++i)
        out.data[i] = static_cast<float>(a.table[static_cast<size_t>(static_cast<int64_t>(x.data[i]) - lowest)]);
      return;
    }
  }
  AOTC_CHECK(false, "unhandled op kind");
}

void apply_epilogue(const Node& node, const std::vector<const Value*>& in, Value& out) {
  for (const PostOp& p : node.epilogue) {
    const auto operand = [&](int k) -> const Value& { return *in[static_cast<size_t>(p.input + k)]; };
    switch (p.kind) {
      case PostOpKind::kRelu: map_unary(out, out, relu); break;
      case PostOpKind::kClamp: map_unary(out, out, [&](float v) { return clamp(v, p.min, p.max); }); break;
      case PostOpKind::kHardSwish: map_unary(out, out, hardswish); break;
      case PostOpKind::kSigmoid: map_unary(out, out, sigmoid); break;
      case PostOpKind::kTanh: map_unary(out, out, tanh); break;
      case PostOpKind::kAffine:
        for (int64_t i = 0; i < static_cast<int64_t>(out.data.size()); ++i) {
          const size_t c = static_cast<size_t>(channel_of(i, out.shape));
          float& v = out.data[static_cast<size_t>(i)];
          v = affine(v, operand(0).data[c], operand(1).data[c]);
        }
        break;
      case PostOpKind::kAdd: map_binary(out, operand(0), out, add); break;
      case PostOpKind::kMul: map_binary(out, operand(0), out, mul); break;
      case PostOpKind::kPRelu: map_binary(out, operand(0), out, prelu); break;
      case PostOpKind::kElu: map_unary(out, out, [&](float v) { return elu(v, p.alpha); }); break;
      case PostOpKind::kSoftplus: map_unary(out, out, softplus); break;
    }
  }
}

}  // namespace

float requantization_multiplier(const Quantization& x, const Quantization& w, const Quantization& y, int64_t o) {
  const float accumulator_scale = x.scale[0] * w.scale[w.axis < 0 ? 0 : static_cast<size_t>(o)];
  return accumulator_scale / y.scale[0];
}

float global_avg_pool_multiplier(const Quantization& x, const Quantization& y, int64_t count) {
  return x.scale[0] / (y.scale[0] * static_cast<float>(count));
}

QAddConstants qadd_constants(const Quantization& a, const Quantization& b, const Quantization& y, DType dtype) {
  QAddConstants k;
  k.shift = dtype == DType::I8 ? 128 : 0;
  k.a_ratio = a.scale[0] / y.scale[0];
  k.b_ratio = b.scale[0] / y.scale[0];
  // volatile: r_b * b_zp rounded to float32 before the fused multiply-add.
  const volatile float b_part = k.b_ratio * static_cast<float>(b.zero_point[0] + k.shift);
  k.offset = static_cast<float>(y.zero_point[0] + k.shift) -
             std::fmaf(k.a_ratio, static_cast<float>(a.zero_point[0] + k.shift), b_part);
  return k;
}

int64_t qadd_value(int64_t a, int64_t b, const QAddConstants& k) {
  const float sum = std::fmaf(static_cast<float>(a + k.shift), k.a_ratio,
                              std::fmaf(static_cast<float>(b + k.shift), k.b_ratio, k.offset));
  return static_cast<int64_t>(std::nearbyint(sum)) - k.shift;  // ties to even
}

bool qadd_exact_in_double(const QAddConstants& k) {
  for (int b = 0; b < 256; ++b) {
    const auto partial = static_cast<float>(static_cast<double>(b) * k.b_ratio + k.offset);
    if (partial != std::fmaf(static_cast<float>(b), k.b_ratio, k.offset)) return false;
    for (int a = 0; a < 256; ++a) {
      const auto sum = static_cast<float>(static_cast<double>(a) * k.a_ratio + partial);
      if (sum != std::fmaf(static_cast<float>(a), k.a_ratio, partial)) return false;
    }
  }
  return true;
}

FixedPointMultiplier quantize_multiplier(double real) {
  if (real == 0) return {};
  int shift = 0;
  const double significand = std::frexp(real, &shift);  // in [0.5, 1)
  auto fixed = static_cast<int64_t>(std::round(significand * double(int64_t{1} << 31)));  // ties away from zero
  if (fixed == int64_t{1} << 31) {
    fixed /= 2;
    ++shift;
  }
  if (shift < -31) return {};
  if (shift > 30) return {std::numeric_limits<int32_t>::max(), 30};
  return {static_cast<int32_t>(fixed), shift};
}

FixedPointMultiplier tflite_requantization_multiplier(const Quantization& x, const Quantization& w,
                                                      const Quantization& y, int64_t o) {
  const double w_scale = w.scale[w.axis < 0 ? 0 : static_cast<size_t>(o)];
  return quantize_multiplier(static_cast<double>(x.scale[0]) * w_scale / static_cast<double>(y.scale[0]));
}

int32_t multiply_by_quantized_multiplier(int32_t acc, FixedPointMultiplier m) {
  const int left = std::max(m.shift, 0), right = std::max(-m.shift, 0);
  const auto shifted = static_cast<int32_t>(static_cast<uint32_t>(acc) << left);  // wraps, as int32 in TFLite
  // SaturatingRoundingDoublingHighMul: the multiplier is positive, so it never saturates.
  const int64_t product = int64_t{shifted} * m.multiplier;
  const int64_t nudge = product >= 0 ? int64_t{1} << 30 : 1 - (int64_t{1} << 30);
  const auto high = static_cast<int32_t>((product + nudge) / (int64_t{1} << 31));  // truncates toward zero
  // RoundingDivideByPOT: ties away from zero.
  const int64_t mask = (int64_t{1} << right) - 1;
  const int64_t remainder = high & mask, threshold = (mask >> 1) + (high < 0 ? 1 : 0);
  return (high >> right) + (remainder > threshold ? 1 : 0);
}

TfliteAddParameters tflite_add_parameters(const Quantization& a, const Quantization& b, const Quantization& y) {
  TfliteAddParameters p;
  const double twice = 2 * std::max(a.scale[0], b.scale[0]);
  p.a = quantize_multiplier(a.scale[0] / twice);
  p.b = quantize_multiplier(b.scale[0] / twice);
  p.out = quantize_multiplier(twice / static_cast<double>((1 << TfliteAddParameters::kLeftShift) * y.scale[0]));
  p.a_offset = static_cast<int32_t>(-a.zero_point[0]);
  p.b_offset = static_cast<int32_t>(-b.zero_point[0]);
  p.out_offset = static_cast<int32_t>(y.zero_point[0]);
  return p;
}

int64_t tflite_add_value(int64_t a, int64_t b, const TfliteAddParameters& p) {
  const auto scaled = [](int64_t x, int32_t offset, FixedPointMultiplier m) {
    return multiply_by_quantized_multiplier(static_cast<int32_t>((x + offset) << TfliteAddParameters::kLeftShift), m);
  };
  const int32_t sum = scaled(a, p.a_offset, p.a) + scaled(b, p.b_offset, p.b);
  return int64_t{multiply_by_quantized_multiplier(sum, p.out)} + p.out_offset;
}

int64_t quantize_value(float x, DType dtype, float scale, int64_t zero_point, Arithmetic arithmetic) {
  const float quotient = x / scale;
  const float scaled = arithmetic == Arithmetic::kTflite ? std::round(quotient)       // ties away from zero
                                                          : std::nearbyint(quotient);  // ties to even
  const double v = std::isnan(scaled) ? 0.0 : static_cast<double>(scaled);
  return static_cast<int64_t>(std::clamp(v + static_cast<double>(zero_point), static_cast<double>(dtype_min(dtype)),
                                         static_cast<double>(dtype_max(dtype))));
}

std::vector<Value> evaluate_node(const Graph& g, const Node& node, const std::vector<const Value*>& inputs) {
  AOTC_CHECK(inputs.size() == node.inputs.size(), "node '", node.name, "'");
  for (size_t i = 0; i < inputs.size(); ++i) {
    AOTC_CHECK(inputs[i] != nullptr, "node '", node.name, "' input ", i);
    AOTC_CHECK(inputs[i]->shape == g.tensor(node.inputs[i]).shape, "node '", node.name, "' input ", i, " has shape ",
               to_string(inputs[i]->shape), ", graph says ", to_string(g.tensor(node.inputs[i]).shape));
    AOTC_CHECK(static_cast<int64_t>(inputs[i]->data.size()) == num_elements(inputs[i]->shape));
  }
  Value out;
  out.shape = infer_node_shapes(g, node)[0];
  out.data.resize(static_cast<size_t>(num_elements(out.shape)));
  compute_op(g, node, inputs, node.op_operand_count(), out);
  apply_epilogue(node, inputs, out);
  std::vector<Value> results;
  results.push_back(std::move(out));
  return results;
}

std::vector<Value> evaluate(const Graph& g, const std::vector<Value>& inputs) {
  if (inputs.size() != g.inputs.size())
    fail(ExitCode::kInvalidModel, "graph '", g.name, "' has ", g.inputs.size(), " inputs but ", inputs.size(),
         " values were given");
  std::vector<std::optional<Value>> values(g.tensors.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = g.tensor(g.inputs[i]);
    if (inputs[i].shape != t.shape)
      fail(ExitCode::kInvalidModel, "input '", t.name, "' has shape ", to_string(t.shape), " but the value given has ",
           to_string(inputs[i].shape));
    if (static_cast<int64_t>(inputs[i].data.size()) != num_elements(t.shape))
      fail(ExitCode::kInvalidModel, "input '", t.name, "' needs ", num_elements(t.shape), " values, got ",
           inputs[i].data.size());
    if (is_integer(t.dtype)) {
      Tensor given = t;
      given.data = std::make_shared<const std::vector<float>>(inputs[i].data);
      check_element_type(given, "the value given for input '" + t.name + "'");
    }
    values[static_cast<size_t>(g.inputs[i])] = inputs[i];
  }

  // A tensor's value is freed after the last node that reads it (outputs are kept).
  std::vector<size_t> last_use(g.tensors.size(), 0);
  for (size_t n = 0; n < g.nodes.size(); ++n)
    for (TensorId id : g.nodes[n].inputs) last_use[static_cast<size_t>(id)] = n;

  // The value of `id`: computed, an input, or a constant materialised on first use.
  auto value_of = [&](TensorId id, const std::string& reader) -> const Value& {
    std::optional<Value>& v = values[static_cast<size_t>(id)];
    if (!v) {
      const Tensor& t = g.tensor(id);
      if (!t.is_constant())
        fail(ExitCode::kInvalidModel, reader, " reads tensor '", t.name, "', which no earlier node defines");
      v = Value{t.shape, *t.data};
    }
    return *v;
  };

  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    std::vector<const Value*> args;
    for (TensorId id : node.inputs) args.push_back(&value_of(id, "node '" + node.name + "'"));
    std::vector<Value> results = evaluate_node(g, node, args);
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const Tensor& t = g.tensor(node.outputs[k]);
      if (t.shape != results[k].shape)
        fail(ExitCode::kInvalidModel, "node '", node.name, "' (", op_name(node.op), "): output '", t.name,
             "' is declared as ", to_string(t.shape), " but the op produces ", to_string(results[k].shape));
      values[static_cast<size_t>(node.outputs[k])] = std::move(results[k]);
    }
    for (TensorId id : node.inputs)
      if (last_use[static_cast<size_t>(id)] == n && !is_graph_output(g, id)) values[static_cast<size_t>(id)].reset();
  }

  std::vector<Value> outputs;
  for (TensorId id : g.outputs) outputs.push_back(value_of(id, "graph output"));
  return outputs;
}

}  // namespace aotc
