#include "generators/resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

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
  std::vector<int64_t> lo, hi;
  std::vector<float> weight;
};

float sampling_scale(int64_t in, int64_t out, bool align_corners) {
  return align_corners && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                  : static_cast<float>(in) / static_cast<float>(out);
}

AxisSampling bilinear_sampling(int64_t in, int64_t out, const ResizeSpec& s) {
  const float scale = sampling_scale(in, out, s.align_corners);
  AxisSampling t;
  for (int64_t o = 0; o < out; ++o) {
    const float source =
        s.half_pixel_centers ? (static_cast<float>(o) + 0.5f) * scale - 0.5f : static_cast<float>(o) * scale;
    // (lo never exceeds in - 1 in exact arithmetic; the clamp keeps float rounding in bounds.)
    const int64_t lo = std::clamp<int64_t>(static_cast<int64_t>(std::floor(source)), 0, in - 1);
    t.lo.push_back(lo);
    t.hi.push_back(std::min<int64_t>(static_cast<int64_t>(std::ceil(source)), in - 1));
    t.weight.push_back(source - static_cast<float>(lo));  // exact: lo is source's integer part, or 0
  }
  return t;
}

AxisSampling nearest_sampling(int64_t in, int64_t out, const ResizeSpec& s) {
  const float scale = sampling_scale(in, out, s.align_corners);
  const float offset = s.half_pixel_centers ? 0.5f : 0.0f;
  AxisSampling t;
  for (int64_t o = 0; o < out; ++o) {
    const float source = (static_cast<float>(o) + offset) * scale;
    // std::round rounds half away from zero, as TFLite's TfLiteRound.
    const auto index = static_cast<int64_t>(s.align_corners ? std::round(source) : std::floor(source));
    t.lo.push_back(std::clamp<int64_t>(index, 0, in - 1));
  }
  return t;
}

AxisSampling sampling(int64_t in, int64_t out, const ResizeSpec& s) {
  return s.kind == ResizeSpec::Kind::kBilinear ? bilinear_sampling(in, out, s) : nearest_sampling(in, out, s);
}

// The rows of the tables input: per axis (y, then x) lo, then for bilinear hi
// and the weight of hi.
enum TableRow { kYLo, kYHi, kYWeight, kXLo, kXHi, kXWeight };
int table_row(TableRow row, const ResizeSpec& s) {
  if (s.kind == ResizeSpec::Kind::kBilinear) return row;
  require(row == kYLo || row == kXLo, "resize: nearest sampling has one table per axis");
  return row == kYLo ? 0 : 1;
}

// A table entry as an index into [0, in): the tables hold nothing else, and
// Halide cannot see that through the load (it needs it to bound the reads).
Expr index_from(const Halide::ImageParam& tables, int row, const Expr& at, int64_t in) {
  return Halide::unsafe_promise_clamped(Halide::reinterpret<int32_t>(tables(at, row)), 0, static_cast<int>(in - 1));
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
    const auto at = static_cast<size_t>(x);
    const bool same = s.kind == ResizeSpec::Kind::kNearest
                          ? table.lo[at] == lo
                          : std::abs(position(table.lo[at], table.hi[at], table.weight[at]) -
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

Shape resize_tables_shape(const ResizeSpec& spec) {
  const Shape out = resize_output_shape(spec);
  return {spec.kind == ResizeSpec::Kind::kBilinear ? 6 : 2, std::max(out[2], out[3])};
}

PackedWeights resize_tables(const ResizeSpec& spec) {
  const Shape out = resize_output_shape(spec);
  const AxisSampling along_y = sampling(spec.input_shape[2], out[2], spec);
  const AxisSampling along_x = sampling(spec.input_shape[3], out[3], spec);
  PackedWeights tables{resize_tables_shape(spec), {}};
  const auto length = static_cast<size_t>(tables.shape[1]);
  tables.data.assign(static_cast<size_t>(num_elements(tables.shape)), 0.0f);
  // Indices as the bits of int32s (the kernel reinterprets them: converting a float
  // per row cost the CPU kernels 3-12%).
  auto fill_index = [&](TableRow row, const std::vector<int64_t>& values) {
    for (size_t i = 0; i < values.size(); ++i) {
      const auto v = static_cast<int32_t>(values[i]);
      std::memcpy(&tables.data[static_cast<size_t>(table_row(row, spec)) * length + i], &v, sizeof v);
    }
  };
  auto fill_weight = [&](TableRow row, const std::vector<float>& values) {
    for (size_t i = 0; i < values.size(); ++i) tables.data[static_cast<size_t>(table_row(row, spec)) * length + i] = values[i];
  };
  fill_index(kYLo, along_y.lo);
  fill_index(kXLo, along_x.lo);
  if (spec.kind == ResizeSpec::Kind::kBilinear) {
    fill_index(kYHi, along_y.hi);
    fill_weight(kYWeight, along_y.weight);
    fill_index(kXHi, along_x.hi);
    fill_weight(kXWeight, along_x.weight);
  }
  return tables;
}

Kernel resize(const ResizeSpec& spec, const Halide::Target& target) {
  const Shape out_shape = resize_output_shape(spec);
  const int64_t in_h = spec.input_shape[2], in_w = spec.input_shape[3];
  const bool bilinear = spec.kind == ResizeSpec::Kind::kBilinear;
  Kernel kernel;
  Halide::ImageParam input = dense_input("input", spec.input_shape);
  Halide::ImageParam tables = dense_input("tables", resize_tables_shape(spec));
  kernel.inputs = {input, tables};
  auto index = [&](TableRow row, const Expr& at, int64_t in) { return index_from(tables, table_row(row, spec), at, in); };
  auto weight = [&](TableRow row, const Expr& at) { return tables(at, table_row(row, spec)); };

  /* algorithm */
  Var x("x"), y("y"), c("c"), n("n"), ix("ix");
  Func rows("rows"), output("resize");
  const int64_t out_w = out_shape[3];
  // The phase form is for dense CPU vectors; a GPU thread reads its samples' positions.
  const Phases phases =
      target.has_gpu_feature() ? Phases{} : column_phases(spec, sampling(in_w, out_w, spec), in_w, out_w);
  const int k = static_cast<int>(phases.k);
  Expr value;
  if (bilinear) {
    // Rows first: output row y blends input rows lo and hi, then columns.
    const Expr wy = weight(kYWeight, y);
    rows(ix, y, c, n) = input(ix, index(kYLo, y, in_h), c, n) * (1.0f - wy) + input(ix, index(kYHi, y, in_h), c, n) * wy;
    if (k > 0) {
      Func edge = Halide::BoundaryConditions::repeat_edge(rows, {{0, static_cast<int>(in_w)}});
      const Expr lo = x / k + pick(phases.offset, x % k), wx = pick(phases.weight, x % k);
      value = edge(lo, y, c, n) * (1.0f - wx) + edge(lo + 1, y, c, n) * wx;
    } else {
      const Expr wx = weight(kXWeight, x);
      value = rows(index(kXLo, x, in_w), y, c, n) * (1.0f - wx) + rows(index(kXHi, x, in_w), y, c, n) * wx;
    }
  } else {
    const Expr column = k > 0 ? x / k : index(kXLo, x, in_w);
    value = input(column, index(kYLo, y, in_h), c, n);
  }
  output(x, y, c, n) = apply_epilogue(value, spec.epilogue, {n, c, y, x}, out_shape, kernel.inputs);
  constrain_output(output, out_shape);

  /* schedule */
  std::string description = bilinear ? "resize bilinear" : "resize nearest";
  if (target.has_gpu_feature()) {
    // A thread per output, its rows blended inline (no row buffer to share).
    const int columns = gpu_threads_for(out_w, 8, 32);
    schedule_gpu_rows(output, x, y, c, n, columns);
    kernel.schedule = description + " gpu: one output per thread, " + std::to_string(columns) +
                      "x4 threads per block, sample positions from the tables" +
                      (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
    kernel.output = output;
    return kernel;
  }
  description += ": ";
  const int native = native_lanes(target);
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
