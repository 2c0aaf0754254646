// ONNX Resize's sampling matrices (onnx_resize.h). Every expression follows the
// reference's, operation for operation, in double.
#include "frontends/onnx/onnx_resize.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "support/error.h"

namespace aotc::onnx_frontend {
namespace {

// Output x's position in the input; sets `outside` where tf_crop_and_resize
// takes the extrapolation value instead.
double source_coordinate(int64_t x, int64_t in, double scale, const ResizeSampling& s, double roi_start,
                         double roi_end, bool* outside) {
  const double xf = static_cast<double>(x), in_f = static_cast<double>(in);
  const double length_resized = scale * in_f;  // the reference's output_width: unfloored
  const std::string& t = s.transform;
  if (t == "half_pixel") return (xf + 0.5) / scale - 0.5;
  if (t == "pytorch_half_pixel") return length_resized == 1 ? -0.5 : (xf + 0.5) / scale - 0.5;
  if (t == "align_corners") return length_resized == 1 ? 0.0 : xf * (in_f - 1) / (length_resized - 1);
  if (t == "asymmetric") return xf / scale;
  if (t == "tf_half_pixel_for_nn") return (xf + 0.5) / scale;
  if (t == "tf_crop_and_resize") {
    double x_ori = length_resized == 1 ? (roi_end - roi_start) * (in_f - 1) / 2
                                       : xf * (roi_end - roi_start) * (in_f - 1) / (length_resized - 1);
    x_ori += roi_start * (in_f - 1);
    *outside = x_ori < 0 || x_ori > in_f - 1;
    return x_ori;
  }
  fail(ExitCode::kUnsupported, "Resize: coordinate_transformation_mode '", t, "'");
}

// The coefficients of the sorted neighbours, from ratio in (0, 1] (1 where the
// position is a whole number: the right-hand neighbour is the position itself).
std::vector<double> coefficients(double ratio, const ResizeSampling& s) {
  if (s.mode == "nearest") {
    if (ratio == 1) return {0, 1};
    const std::string& m = s.nearest_mode;
    if (m == "round_prefer_floor") return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
    if (m == "round_prefer_ceil") return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
    if (m == "floor") return {1, 0};
    if (m == "ceil") return {0, 1};
    fail(ExitCode::kUnsupported, "Resize: nearest_mode '", m, "'");
  }
  if (s.mode == "linear") return {1 - ratio, ratio};
  if (s.mode == "cubic") {
    if (!std::isfinite(s.cubic_a)) fail(ExitCode::kUnsupported, "Resize: cubic_coeff_a ", s.cubic_a);
    const double a = s.cubic_a, r = ratio;
    return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
            ((a + 2) * r - (a + 3)) * r * r + 1,
            ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1,
            ((a * ((1 - r) + 1) - 5 * a) * ((1 - r) + 1) + 8 * a) * ((1 - r) + 1) - 4 * a};
  }
  fail(ExitCode::kUnsupported, "Resize: mode '", s.mode, "'");
}

// The n positions of the edge-padded input (`limit` long) nearest to xp, ties
// to the lower, in increasing order: n consecutive ones.
std::vector<int64_t> neighbours(double xp, int64_t n, int64_t limit) {
  const double whole = std::floor(xp);
  const int64_t first = std::clamp<int64_t>(static_cast<int64_t>(whole) - n / 2 + (xp == whole ? 0 : 1), 0,
                                            std::max<int64_t>(limit - n, 0));
  std::vector<int64_t> taps;
  for (int64_t i = first; i < std::min(first + n, limit); ++i) taps.push_back(i);
  return taps;
}

// Row o of the sampling matrix: (input index, weight) per tap, the edge repeated
// past the ends; empty where tf_crop_and_resize extrapolates.
std::vector<std::pair<int64_t, double>> sampling_row(int64_t o, int64_t in, double scale, const ResizeSampling& s,
                                                     double roi_start, double roi_end) {
  bool outside = false;
  const double x = source_coordinate(o, in, scale, s, roi_start, roi_end, &outside);
  if (outside) return {};
  if (!std::isfinite(x) || std::abs(x) > 1e15)
    fail(ExitCode::kUnsupported, "Resize: output ", o, " samples the input at ", x);
  const double whole = std::floor(x);
  std::vector<double> c = coefficients(x == whole ? 1.0 : x - whole, s);
  const auto n = static_cast<int64_t>(c.size());
  const int64_t pad = (n + 1) / 2;
  const std::vector<int64_t> taps = neighbours(x + static_cast<double>(pad), n, in + 2 * pad);
  if (s.exclude_outside) {
    double sum = 0;
    for (size_t k = 0; k < taps.size(); ++k) {
      if (taps[k] - pad < 0 || taps[k] - pad >= in) c[k] = 0;
      sum += c[k];
    }
    if (sum == 0) fail(ExitCode::kUnsupported, "Resize: exclude_outside leaves output ", o, " no weight");
    for (double& v : c) v /= sum;
  }
  std::vector<std::pair<int64_t, double>> row;
  for (size_t k = 0; k < taps.size(); ++k) row.emplace_back(std::clamp<int64_t>(taps[k] - pad, 0, in - 1), c[k]);
  return row;
}

}  // namespace

bool ResizeAxis::identity() const {
  if (in != out || any_outside()) return false;
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i)
      if (weights[static_cast<size_t>(o * in + i)] != (o == i ? 1.0 : 0.0)) return false;
  return true;
}

bool ResizeAxis::any_outside() const { return std::find(outside.begin(), outside.end(), true) != outside.end(); }

ResizeAxis resize_axis(int64_t in, int64_t out, double scale, const ResizeSampling& s, double roi_start,
                       double roi_end) {
  ResizeAxis axis{in, out, std::vector<double>(static_cast<size_t>(in * out), 0.0),
                  std::vector<bool>(static_cast<size_t>(out), false)};
  for (int64_t o = 0; o < out; ++o) {
    const std::vector<std::pair<int64_t, double>> row = sampling_row(o, in, scale, s, roi_start, roi_end);
    axis.outside[static_cast<size_t>(o)] = row.empty();
    for (const auto& [i, weight] : row) axis.weights[static_cast<size_t>(o * in + i)] += weight;
  }
  return axis;
}

bool resize_keeps(int64_t in, double scale, const ResizeSampling& s, double roi_start, double roi_end) {
  for (int64_t o = 0; o < in; ++o) {
    const std::vector<std::pair<int64_t, double>> row = sampling_row(o, in, scale, s, roi_start, roi_end);
    if (row.empty()) return false;
    double on = 0;
    for (const auto& [i, weight] : row) {
      if (i == o) on += weight;
      else if (weight != 0) return false;
    }
    if (on != 1) return false;
  }
  return true;
}

}  // namespace aotc::onnx_frontend
