#include "generators/qconv2d.h"

#include <algorithm>

namespace aotc::gen {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

// Rows kernel (grouped, depthwise): output channels per register tile (unrolled), each a
// vector of accumulators along the row.
constexpr int64_t kChannelTile = 8;
// Dense kernel: output channels per block, the lanes of one accumulator vector (one or
// more native vectors; fixed, so that packed weights do not depend on the target).
constexpr int kBlock = 16;
// Dense kernel: input channels staged per reduction chunk.
constexpr int kChunkChannels = 32;

// Dense kernel: input channels per dot product (per int32 lane and step).
int dot_channels(const QConv2dSpec& s) { return s.vnni ? 4 : 2; }

// The uint8 value the VNNI kernel multiplies for an input zero point (int8 ones shift by 128).
int64_t unsigned_zero(const QConv2dSpec& s) { return s.in_zero + (s.input_type.is_int() ? 128 : 0); }

int64_t extent(int64_t in, int kernel, int stride, int pad_begin, int pad_end, int dilation) {
  const int64_t span = in + pad_begin + pad_end - int64_t{dilation} * (kernel - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

void check(const QConv2dSpec& s) {
  require(s.input_shape.size() == 4, "qconv2d: input must be NCHW, got " + to_string(s.input_shape));
  require(s.groups >= 1 && s.out_channels >= 1 && s.input_shape[1] % s.groups == 0 && s.out_channels % s.groups == 0,
          "qconv2d: groups must divide the input and output channels");
  for (int i = 0; i < 2; ++i)
    require(s.kernel[i] >= 1 && s.stride[i] >= 1 && s.dilation[i] >= 1,
            "qconv2d: kernel, stride and dilation must be positive");
  for (int p : s.pad) require(p >= 0, "qconv2d: padding must be non-negative");
  for (const Halide::Type& t : {s.input_type, s.out_type})
    require(t == Halide::Int(8) || t == Halide::UInt(8), "qconv2d: int8 or uint8 activations only");
  require(s.weight_type == Halide::Int(8) || s.weight_type == Halide::Int(32), "qconv2d: int8 or int32 packed weights");
  require(!s.vnni || (s.groups == 1 && s.weight_type == Halide::Int(8)), "qconv2d: VNNI needs groups 1 and int8 weights");
  const int64_t lowest = s.out_type.is_int() ? -128 : 0;
  require(s.min <= s.max && s.min >= lowest && s.max <= lowest + 255, "qconv2d: saturation bounds outside the output type");
}

// The per-channel requantization input (qconv2d.h).
Halide::ImageParam multipliers_input(const QConv2dSpec& s, int64_t o_count) {
  return s.fixed_point ? dense_input("multiplier", {o_count, 3}, Halide::Int(32))
                       : dense_input("multiplier", {o_count}, Halide::Float(32));
}

// clamp(requantized acc + out_zero, min, max) as out_type, acc of output channel `channel`.
Expr requantize(const QConv2dSpec& s, const Expr& acc, const Halide::ImageParam& multiplier, const Expr& channel) {
  const Expr scaled =
      s.fixed_point
          ? multiply_by_quantized_multiplier(acc, (multiplier(0, channel) << 16) | multiplier(1, channel),
                                             multiplier(2, channel))
          : Halide::cast<int32_t>(Halide::round(Halide::cast<float>(acc) * multiplier(channel)));  // ties to even
  return Halide::cast(s.out_type, Halide::clamp(scaled + static_cast<int32_t>(s.out_zero), static_cast<int32_t>(s.min),
                                                static_cast<int32_t>(s.max)));
}

}  // namespace

Shape qconv2d_output_shape(const QConv2dSpec& s) {
  check(s);
  const int64_t oh = extent(s.input_shape[2], s.kernel[0], s.stride[0], s.pad[0], s.pad[2], s.dilation[0]);
  const int64_t ow = extent(s.input_shape[3], s.kernel[1], s.stride[1], s.pad[1], s.pad[3], s.dilation[1]);
  require(oh >= 1 && ow >= 1, "qconv2d: the kernel is larger than the padded input");
  return {s.input_shape[0], s.out_channels, oh, ow};
}

PackedWeights pack_qconv2d_weights(const QConv2dSpec& s, const float* oihw, const std::vector<int64_t>& zero_points) {
  check(s);
  const int64_t in_per_group = s.input_shape[1] / s.groups, taps = int64_t{s.kernel[0]} * s.kernel[1];
  const auto shifted = [&](int64_t o, int64_t c, int64_t tap) {
    const int64_t zero = zero_points.size() == 1 ? zero_points[0] : zero_points.at(static_cast<size_t>(o));
    const float v = oihw[(o * in_per_group + c) * taps + tap] - static_cast<float>(zero);
    require(s.weight_type == Halide::Int(32) || (v >= -128 && v <= 127),
            "qconv2d: weights with non-zero zero points need Int(32)");
    return v;
  };
  PackedWeights p;
  p.type = s.weight_type;
  if (s.groups != 1) {
    p.shape = {s.out_channels, in_per_group, s.kernel[0], s.kernel[1]};
    for (int64_t o = 0; o < s.out_channels; ++o)
      for (int64_t c = 0; c < in_per_group; ++c)
        for (int64_t tap = 0; tap < taps; ++tap) p.data.push_back(shifted(o, c, tap));
    return p;
  }
  // [O/B, C/D, KH, KW, B, D]: D input channels of B output channels are one vector (D = 2
  // or 4: dot_channels); the channels past O and C are zeros.
  const int64_t d = dot_channels(s), blocks = (s.out_channels + kBlock - 1) / kBlock, groups = (in_per_group + d - 1) / d;
  p.shape = {blocks, groups, s.kernel[0], s.kernel[1], kBlock, d};
  p.data.assign(static_cast<size_t>(num_elements(p.shape)), 0.0f);
  for (int64_t o = 0; o < s.out_channels; ++o)
    for (int64_t c = 0; c < in_per_group; ++c)
      for (int64_t tap = 0; tap < taps; ++tap)
        p.data[static_cast<size_t>((((o / kBlock * groups + c / d) * taps + tap) * kBlock + o % kBlock) * d + c % d)] =
            shifted(o, c, tap);
  return p;
}

PackedWeights pack_fixed_point_multipliers(const std::vector<int32_t>& multipliers, const std::vector<int>& shifts) {
  require(multipliers.size() == shifts.size(), "qconv2d: one shift per fixed-point multiplier");
  PackedWeights p{{static_cast<int64_t>(multipliers.size()), 3}, {}, Halide::Int(32)};
  for (size_t o = 0; o < multipliers.size(); ++o) {
    require(multipliers[o] >= 0 && shifts[o] >= -31 && shifts[o] <= 30, "qconv2d: fixed-point multiplier out of range");
    p.data.push_back(static_cast<float>(multipliers[o] >> 16));
    p.data.push_back(static_cast<float>(multipliers[o] & 0xffff));
    p.data.push_back(static_cast<float>(shifts[o]));
  }
  return p;
}

PackedWeights qconv2d_weight_sums(const QConv2dSpec& s, const float* oihw) {
  check(s);
  require(s.vnni, "qconv2d: weight sums are the VNNI kernel's");
  const int64_t per_channel = s.input_shape[1] * s.kernel[0] * s.kernel[1];
  PackedWeights p{{s.out_channels}, {}, Halide::Int(32)};
  for (int64_t o = 0; o < s.out_channels; ++o) {
    float sum = 0;  // |sum| <= 128 * 32767 taps < 2^24: exact
    for (int64_t i = 0; i < per_channel; ++i) sum += oihw[o * per_channel + i];
    p.data.push_back(sum);
  }
  return p;
}

namespace {

// Grouped and depthwise: output rows vectorised, int32 products.
Kernel rows_qconv2d(const QConv2dSpec& s, const Halide::Target& target) {
  const Shape out_shape = qconv2d_output_shape(s);
  const int64_t o_count = out_shape[1], oh = out_shape[2], ow = out_shape[3];
  const int64_t in_per_group = s.input_shape[1] / s.groups, out_per_group = s.out_channels / s.groups;
  const Shape weight_shape{s.out_channels, in_per_group, s.kernel[0], s.kernel[1]};

  Kernel kernel;
  Halide::ImageParam input = dense_input("input", s.input_shape, s.input_type);
  Halide::ImageParam weights = dense_input("weights", weight_shape, s.weight_type);
  Halide::ImageParam bias = dense_input("bias", {o_count}, Halide::Int(32));
  Halide::ImageParam multiplier = multipliers_input(s, o_count);
  kernel.inputs = {input, weights, bias, multiplier};

  /* algorithm */
  Var x("x"), y("y"), o("o"), n("n");
  const int h = static_cast<int>(s.input_shape[2]), w = static_cast<int>(s.input_shape[3]);
  Func padded = Halide::BoundaryConditions::constant_exterior(
      input, Halide::cast(s.input_type, static_cast<int>(s.in_zero)), {{0, w}, {0, h}});
  Func shifted("shifted");
  shifted(x, y, o, n) = Halide::cast<int16_t>(padded(x, y, o, n)) - static_cast<int16_t>(s.in_zero);
  Halide::RDom r(0, static_cast<int>(s.kernel[1]), 0, static_cast<int>(s.kernel[0]), 0, static_cast<int>(in_per_group),
                 "r");
  const Expr c = o / static_cast<int>(out_per_group) * static_cast<int>(in_per_group) + r.z;
  Func acc("acc");
  acc(x, y, o, n) = bias(o);
  acc(x, y, o, n) += Halide::cast<int32_t>(shifted(x * s.stride[1] + r.x * s.dilation[1] - s.pad[1],
                                                   y * s.stride[0] + r.y * s.dilation[0] - s.pad[0], c, n)) *
                     Halide::cast<int32_t>(weights(r.x, r.y, r.z, o));
  Func output("qconv2d");
  output(x, y, o, n) = requantize(s, acc(x, y, o, n), multiplier, o);
  constrain_output(output, out_shape);

  /* schedule */
  const int lanes = lanes_for_extent(ow, native_lanes(target));
  const int tile = static_cast<int>(largest_divisor_at_most(out_per_group, kChannelTile));
  Var xo("xo"), xi("xi"), oo("oo"), oi("oi");
  output.split(x, xo, xi, lanes, Halide::TailStrategy::ShiftInwards)
      .split(o, oo, oi, tile)
      .reorder(xi, oi, xo, y, oo, n)
      .vectorize(xi)
      .unroll(oi);
  Var plane("plane");
  output.fuse(oo, n, plane);
  const std::string parallel = parallel_in_tasks(
      output, plane, o_count / tile * s.input_shape[0], oh * ow * tile * in_per_group * s.kernel[0] * s.kernel[1] / kMacsPerElement);
  acc.compute_at(output, xo).vectorize(x).unroll(o);
  acc.update().reorder(x, o, r.x, r.y, r.z).vectorize(x).unroll(o);
  // The input rows an output row reads, zero point subtracted and padding made, staged on
  // the stack per output row: no bounds checks or conversions in the taps' loop.
  const int64_t staged_bytes = int64_t{2} * tile * in_per_group / std::min<int64_t>(out_per_group, tile) *
                               ((ow - 1) * s.stride[1] + (s.kernel[1] - 1) * s.dilation[1] + 1 + lanes) *
                               ((s.kernel[0] - 1) * s.dilation[0] + 1);
  const bool staged = s.stride[1] <= kMaxStagedLoadStride && staged_bytes <= kMaxStagedBytes;
  if (staged) {
    shifted.compute_at(output, y);
    stage_on_stack(shifted, lanes);
  }
  kernel.schedule = "qconv2d: rows vectorised (" + std::to_string(lanes) + " int32 lanes) x " + std::to_string(tile) +
                    " channels per register tile, " + (staged ? "input rows staged, " : "") + parallel;
  kernel.output = output;
  return kernel;
}

// Dense (groups 1): a GEMM-like register tile that broadcasts D input channels of one pixel
// against a vector of kBlock output channels' weights, each D products summed into one int32
// lane: int16 pairs, zero point subtracted (pmaddwd on x86), the channels of a chunk staged
// per tile, or with spec.vnni uint8 quads (vpdpbusd) read from qconv2d_quads' output, whose
// reduction is split in the same chunks.
Kernel dense_qconv2d(const QConv2dSpec& s, const Halide::Target& target) {
  const Shape out_shape = qconv2d_output_shape(s);
  const int64_t o_count = out_shape[1], oh = out_shape[2], ow = out_shape[3], c_count = s.input_shape[1];
  const int d = dot_channels(s);
  const int groups = static_cast<int>((c_count + d - 1) / d), blocks = static_cast<int>((o_count + kBlock - 1) / kBlock);

  Kernel kernel;
  Halide::ImageParam input = s.vnni ? dense_input("quads", qconv2d_quads_shape(s), Halide::UInt(8))
                                    : dense_input("input", s.input_shape, s.input_type);
  Halide::ImageParam weights = dense_input("weights", {blocks, groups, s.kernel[0], s.kernel[1], kBlock, d}, s.weight_type);
  Halide::ImageParam bias = dense_input("bias", {o_count}, Halide::Int(32));
  Halide::ImageParam multiplier = multipliers_input(s, o_count);
  kernel.inputs = {input, weights, bias, multiplier};

  /* algorithm */
  Var i("i"), b("b"), x("x"), y("y"), cg("cg"), ob("ob"), o("o"), n("n");
  const int h = static_cast<int>(s.input_shape[2]), w = static_cast<int>(s.input_shape[3]);
  // The values each step multiplies: int16 minus the zero point, staged per tile, or the
  // uint8 quads (qconv2d_quads), already padded.
  Func staged("staged");
  if (!s.vnni) {
    Func padded = Halide::BoundaryConditions::constant_exterior(
        input, Halide::cast(s.input_type, static_cast<int>(s.in_zero)), {{0, w}, {0, h}, {0, static_cast<int>(c_count)}});
    staged(i, cg, x, y, n) = Halide::cast<int16_t>(padded(x, y, cg * d + i, n)) - static_cast<int16_t>(s.in_zero);
  }
  Halide::RDom r(0, d, 0, s.kernel[1], 0, s.kernel[0], 0, groups, "r");
  const Expr channel = Halide::min(ob * kBlock + b, static_cast<int>(o_count) - 1);
  const Expr in_x = x * s.stride[1] + r.y * s.dilation[1], in_y = y * s.stride[0] + r.z * s.dilation[0];
  const Expr tap = s.vnni ? Expr(input(r.x, in_x, r.w, in_y, n)) : staged(r.x, r.w, in_x - s.pad[1], in_y - s.pad[0], n);
  const Expr weight = weights(r.x, b, r.y, r.z, r.w, ob);
  Func acc("acc");
  if (s.vnni) {
    Halide::ImageParam sums = dense_input("weight_sums", {o_count}, Halide::Int(32));
    kernel.inputs.push_back(sums);
    kernel.features.push_back(Halide::Target::AVX512_SapphireRapids);
    acc(b, x, y, ob, n) = bias(channel) - static_cast<int32_t>(unsigned_zero(s)) * sums(channel);
    acc(b, x, y, ob, n) += Halide::cast<int32_t>(tap) * Halide::cast<int32_t>(weight);
  } else {
    acc(b, x, y, ob, n) = bias(channel);
    acc(b, x, y, ob, n) += Halide::cast<int32_t>(Halide::cast<int16_t>(weight)) * Halide::cast<int32_t>(tap);
  }
  Func requantized("requantized");
  requantized(b, x, y, ob, n) = requantize(s, acc(b, x, y, ob, n), multiplier, channel);
  Func output("qconv2d");
  output(x, y, o, n) = requantized(o % kBlock, x, y, o / kBlock, n);
  constrain_output(output, out_shape);

  /* schedule */
  const int vectors_per_block = std::max(1, kBlock / native_lanes(target));
  const int block_tile = blocks % 2 == 0 ? 2 : 1;
  const int tile_x = static_cast<int>(
      std::clamp<int64_t>(broadcast_tile_accumulators(target) / (block_tile * vectors_per_block), 1, ow));
  const int64_t bytes = s.vnni ? 1 : 2;
  int chunk = static_cast<int>(largest_divisor_at_most(groups, kChunkChannels / d));
  const auto staged_bytes = [&](int c) {
    return bytes * d * c * ((tile_x - 1) * s.stride[1] + (s.kernel[1] - 1) * s.dilation[1] + 1) *
           ((s.kernel[0] - 1) * s.dilation[0] + 1);
  };
  while (chunk > 1 && staged_bytes(chunk) > kMaxStagedBytes) chunk = static_cast<int>(largest_divisor_at_most(groups, chunk - 1));
  Var xo("xo"), xi("xi"), oo("oo"), oi("oi"), pixels("pixels"), tiles("tiles"), tasks("tasks"), tile("tile");
  output.split(x, xo, xi, tile_x, Halide::TailStrategy::ShiftInwards)
      .split(o, oo, oi, kBlock * block_tile, Halide::TailStrategy::GuardWithIf)
      .reorder(xi, oi, xo, y, oo, n)
      .vectorize(xi);
  output.fuse(xo, y, pixels).fuse(pixels, oo, tiles).fuse(tiles, n, tasks);
  const int64_t tile_count = (ow + tile_x - 1) / tile_x * oh * ((blocks + block_tile - 1) / block_tile) * out_shape[0];
  const int64_t macs_per_tile = int64_t{tile_x} * block_tile * kBlock * c_count * s.kernel[0] * s.kernel[1];
  const std::string parallel = parallel_in_tasks(output, tasks, tile_count, macs_per_tile / kMacsPerElement, tile);
  requantized.compute_at(output, tile).vectorize(b).unroll(x).unroll(ob);
  acc.compute_at(output, tile).vectorize(b).unroll(x).unroll(ob);
  Halide::RVar chunks("chunks"), in_chunk("in_chunk");
  acc.update()
      .split(r.w, chunks, in_chunk, chunk)
      .reorder(r.x, b, x, ob, r.y, r.z, in_chunk, chunks)
      .atomic()
      .vectorize(r.x)
      .vectorize(b)
      .unroll(x)
      .unroll(ob);
  if (!s.vnni) staged.compute_at(acc, chunks).store_in(Halide::MemoryType::Stack);
  kernel.schedule = "qconv2d: " + std::to_string(tile_x) + " pixels x " + std::to_string(block_tile) + "x" +
                    std::to_string(kBlock) + " channels per register tile, " +
                    (s.vnni ? "uint8 x int8 quads of channels (vpdpbusd)"
                            : "int16 pairs of channels (" + std::to_string(chunk * d) + " staged at a time)") +
                    ", " + parallel;
  kernel.output = output;
  return kernel;
}

}  // namespace

Shape qconv2d_quads_shape(const QConv2dSpec& s) {
  check(s);
  require(s.vnni, "qconv2d: the quads are the VNNI kernel's input");
  return {s.input_shape[0], s.input_shape[2] + s.pad[0] + s.pad[2], (s.input_shape[1] + 3) / 4,
          s.input_shape[3] + s.pad[1] + s.pad[3], 4};
}

Kernel qconv2d_quads(const QConv2dSpec& s, const Halide::Target& target) {
  const Shape out_shape = qconv2d_quads_shape(s);
  Kernel kernel;
  Halide::ImageParam input = dense_input("input", s.input_shape, s.input_type);
  kernel.inputs = {input};
  Var i("i"), x("x"), c4("c4"), y("y"), n("n");
  const int h = static_cast<int>(s.input_shape[2]), w = static_cast<int>(s.input_shape[3]);
  Func padded = Halide::BoundaryConditions::constant_exterior(
      input, Halide::cast(s.input_type, static_cast<int>(s.in_zero)),
      {{0, w}, {0, h}, {0, static_cast<int>(s.input_shape[1])}});
  const Expr value = padded(x - s.pad[1], y - s.pad[0], c4 * 4 + i, n);
  Func quads("qconv2d_quads");
  quads(i, x, c4, y, n) = s.input_type.is_int() ? Halide::cast<uint8_t>(Halide::cast<int16_t>(value) + 128) : value;
  constrain_output(quads, out_shape);
  // Four input rows per vector of pixels, interleaved into one dense store.
  const int lanes = lanes_for_extent(out_shape[3], native_lanes(target));
  Var row("row");
  quads.bound(i, 0, 4).unroll(i).vectorize(x, lanes, Halide::TailStrategy::ShiftInwards).fuse(c4, y, row).fuse(row, n, row);
  const std::string parallel = parallel_in_tasks(quads, row, out_shape[0] * out_shape[1] * out_shape[2], out_shape[3] * 4);
  kernel.schedule = "qconv2d quads: 4 input rows interleaved, vec" + std::to_string(lanes) + ", " + parallel;
  kernel.output = quads;
  return kernel;
}

bool qconv2d_uses_vnni(const QConv2dSpec& s, const Halide::Target& target) {
  return s.groups == 1 && s.weight_type == Halide::Int(8) && has_avx512_vnni(target);
}

Kernel qconv2d(const QConv2dSpec& s, const Halide::Target& target) {
  check(s);
  require(!s.vnni || has_avx512_vnni(target), "qconv2d: VNNI dot products on a target without them");
  return s.groups == 1 ? dense_qconv2d(s, target) : rows_qconv2d(s, target);
}

}  // namespace aotc::gen
