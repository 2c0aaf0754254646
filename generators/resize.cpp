#include "generators/resize.h"

#include <algorithm>
#include <cmath>

#include "generators/epilogue.h"

namespace aotc::gen {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

// Integer upscales of the rows by a factor up to this use the phase form
// (column_phases) when it samples where TFLite does; other ratios gather.
constexpr int64_t kMaxPhases = 8;

// The sampling of one axis: for each output position, the input position(s)
// it reads (lo; hi and the weight of hi for bilinear).
struct AxisSampling {
  Halide::Buffer<int32_t> lo, hi;
  Halide::Buffer<float> weight;
};

float sampling_scale(int64_t in, int64_t out, bool align_corners) {
  return align_corners && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                  : static_cast<float>(in) / static_cast<float>(out);
}

AxisSampling bilinear_sampling(int64_t in, int64_t out, const ResizeSpec& s, const std::string& axis) {
  const float scale = sampling_scale(in, out, s.align_corners);
  const int extent = static_cast<int>(out);
  AxisSampling t{Halide::Buffer<int32_t>(extent, axis + "_lo"), Halide::Buffer<int32_t>(extent, axis + "_hi"),
                 Halide::Buffer<float>(extent, axis + "_weight")};
  for (int o = 0; o < extent; ++o) {
    const float source =
        s.half_pixel_centers ? (static_cast<float>(o) + 0.5f) * scale - 0.5f : static_cast<float>(o) * scale;
    // (lo never exceeds in - 1 in exact arithmetic; the clamp keeps float rounding in bounds.)
    const int64_t lo = std::clamp<int64_t>(static_cast<int64_t>(std::floor(source)), 0, in - 1);
    t.lo(o) = static_cast<int32_t>(lo);
    t.hi(o) = static_cast<int32_t>(std::min<int64_t>(static_cast<int64_t>(std::ceil(source)), in - 1));
    t.weight(o) = source - static_cast<float>(lo);  // exact: lo is source's integer part, or 0
  }
  return t;
}

AxisSampling nearest_sampling(int64_t in, int64_t out, const ResizeSpec& s, const std::string& axis) {
  const float scale = sampling_scale(in, out, s.align_corners);
  const float offset = s.half_pixel_centers ? 0.5f : 0.0f;
  const int extent = static_cast<int>(out);
  AxisSampling t{Halide::Buffer<int32_t>(extent, axis + "_index"), {}, {}};
  for (int o = 0; o < extent; ++o) {
    const float source = (static_cast<float>(o) + offset) * scale;
    // std::round rounds half away from zero, as TFLite's TfLiteRound.
    const auto index = static_cast<int64_t>(s.align_corners ? std::round(source) : std::floor(source));
    t.lo(o) = static_cast<int32_t>(std::clamp<int64_t>(index, 0, in - 1));
  }
  return t;
}

// A table entry as an index into [0, in): the tables hold nothing else, and
// Halide cannot see that through the load (it needs it to bound the reads).
Expr index_from(const Halide::Buffer<int32_t>& table, const Expr& at, int64_t in) {
  return Halide::unsafe_promise_clamped(table(at), 0, static_cast<int>(in - 1));
}

// An integer upscale along the rows in phase form: output column x = q*k + r
// samples input column q + offset[r] (and the next one, weight[r], bilinear),
// clamped to the row. Vectorised over q with r unrolled, the reads are dense
// vectors and the k strided stores merge into dense ones; table reads would be
// gathers (16 per vector, the cost of 4-5 GB/s measured for 2x bilinear).
struct Phases {
  int64_t k = 0;  // 0: no phase form, the tables are used
  std::vector<int> offset;
  std::vector<float> weight;
};

// The phase form, if the upscale is by an integer factor up to kMaxPhases and
// the form samples where the tables do (exactly for nearest; bilinear
// positions within 1e-5, since the two compute in different float orders).
Phases column_phases(const ResizeSpec& s, const AxisSampling& table, int64_t in, int64_t out) {
  Phases p;
  if (out % in != 0 || out / in > kMaxPhases || s.align_corners) return p;
  p.k = out / in;
  for (int64_t r = 0; r < p.k; ++r) {
    const double d = s.half_pixel_centers ? (static_cast<double>(r) + 0.5) / static_cast<double>(p.k) - 0.5
                                          : static_cast<double>(r) / static_cast<double>(p.k);
    p.offset.push_back(s.kind == ResizeSpec::Kind::kNearest ? 0 : static_cast<int>(std::floor(d)));
    p.weight.push_back(static_cast<float>(d - std::floor(d)));
  }
  // Where a sampling reads one column (lo == hi) its weight does not matter.
  auto position = [](int64_t lo, int64_t hi, double weight) { return lo == hi ? static_cast<double>(lo) : lo + weight; };
  for (int x = 0; x < static_cast<int>(out); ++x) {
    const int64_t q = x / p.k, r = x % p.k;
    const int64_t column = q + p.offset[static_cast<size_t>(r)];
    const int64_t lo = std::clamp<int64_t>(column, 0, in - 1), hi = std::clamp<int64_t>(column + 1, 0, in - 1);
    const bool same = s.kind == ResizeSpec::Kind::kNearest
                          ? table.lo(x) == lo
                          : std::abs(position(table.lo(x), table.hi(x), table.weight(x)) -
                                     position(lo, hi, p.weight[static_cast<size_t>(r)])) <= 1e-5;
    if (!same) return {};
  }
  return p;
}

// values[r] as an Expr of r (constant once r is unrolled).
template <typename T>
Expr pick(const std::vector<T>& values, const Expr& r) {
  Expr e = values.back();
  for (size_t i = values.size() - 1; i-- > 0;) e = Halide::select(r == static_cast<int>(i), Expr(values[i]), e);
  return e;
}

}  // namespace

Shape resize_output_shape(const ResizeSpec& spec) {
  const Shape& in = spec.input_shape;
  require(in.size() == 4, "resize: input must be NCHW, got " + to_string(in));
  require(spec.size[0] >= 1 && spec.size[1] >= 1, "resize: the output size must be positive");
  require(!(spec.align_corners && spec.half_pixel_centers), "resize: align_corners and half_pixel_centers exclude each other");
  return {in[0], in[1], spec.size[0], spec.size[1]};
}

Kernel resize(const ResizeSpec& spec, const Halide::Target& target) {
  const Shape out_shape = resize_output_shape(spec);
  const int64_t in_h = spec.input_shape[2], in_w = spec.input_shape[3];
  const bool bilinear = spec.kind == ResizeSpec::Kind::kBilinear;
  Kernel kernel;
  Halide::ImageParam input = dense_input("input", spec.input_shape);
  kernel.inputs = {input};

  /* algorithm */
  Var x("x"), y("y"), c("c"), n("n"), ix("ix");
  Func rows("rows"), output("resize");
  const int64_t out_w = out_shape[3];
  const AxisSampling along_x = bilinear ? bilinear_sampling(in_w, out_w, spec, "x") : nearest_sampling(in_w, out_w, spec, "x");
  const Phases phases = column_phases(spec, along_x, in_w, out_w);
  const int k = static_cast<int>(phases.k);
  Expr value;
  if (bilinear) {
    const AxisSampling along_y = bilinear_sampling(in_h, out_shape[2], spec, "y");
    // Rows first: output row y blends input rows lo and hi, then columns.
    const Expr wy = along_y.weight(y);
    rows(ix, y, c, n) = input(ix, index_from(along_y.lo, y, in_h), c, n) * (1.0f - wy) +
                        input(ix, index_from(along_y.hi, y, in_h), c, n) * wy;
    if (k > 0) {
      Func edge = Halide::BoundaryConditions::repeat_edge(rows, {{0, static_cast<int>(in_w)}});
      const Expr lo = x / k + pick(phases.offset, x % k), wx = pick(phases.weight, x % k);
      value = edge(lo, y, c, n) * (1.0f - wx) + edge(lo + 1, y, c, n) * wx;
    } else {
      const Expr wx = along_x.weight(x);
      value = rows(index_from(along_x.lo, x, in_w), y, c, n) * (1.0f - wx) +
              rows(index_from(along_x.hi, x, in_w), y, c, n) * wx;
    }
  } else {
    const AxisSampling along_y = nearest_sampling(in_h, out_shape[2], spec, "y");
    const Expr column = k > 0 ? x / k : index_from(along_x.lo, x, in_w);
    value = input(column, index_from(along_y.lo, y, in_h), c, n);
  }
  output(x, y, c, n) = apply_epilogue(value, spec.epilogue, {n, c, y, x}, out_shape, kernel.inputs);
  constrain_output(output, out_shape);

  /* schedule */
  const int native = native_lanes(target);
  std::string description = bilinear ? "resize bilinear: " : "resize nearest: ";
  if (k > 0) {
    Var q("q"), r("r");
    const int lanes = lanes_for_extent(in_w, native);
    output.split(x, q, r, k).unroll(r);
    if (lanes > 1) output.vectorize(q, lanes);
    description += std::to_string(k) + " column phases unrolled, vec" + std::to_string(lanes) + " dense reads";
  } else {
    const int lanes = lanes_for_extent(out_w, native);
    if (lanes > 1) output.vectorize(x, lanes);
    description += "gathers along output rows, vec" + std::to_string(lanes);
  }
  Var yc("yc"), tasks("tasks"), row("row");
  output.fuse(y, c, yc).fuse(yc, n, tasks);
  description += ", rows " + parallel_in_tasks(output, tasks, out_shape[0] * out_shape[1] * out_shape[2], out_w, row);
  const int row_lanes = lanes_for_extent(in_w, native);
  const int64_t row_bytes = (in_w + row_lanes - 1) / row_lanes * row_lanes * 4;
  if (bilinear && row_bytes <= kMaxStagedBytes) {
    rows.compute_at(output, row);
    stage_on_stack(rows, row_lanes);
    description += ", input rows blended on the stack";
  }
  kernel.schedule = description +
                    (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
  kernel.output = output;
  return kernel;
}

}  // namespace aotc::gen
