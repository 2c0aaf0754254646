// ONNX Resize's sampling along one axis, as a matrix: out[o] = sum_i w[o][i] * in[i].
// The semantics are those of ONNX's reference (onnx/backend/test/case/node/resize.py,
// which made the conformance data): a source coordinate per output from the
// coordinate transformation mode, the 2 (nearest, linear) or 4 (cubic) nearest
// input positions with the edge repeated past the ends, their coefficients from
// the fractional part, in double. Resize is separable, so a 4-D Resize is one such
// matrix per resized axis (onnx_lowering.cpp applies them as linear layers).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace aotc::onnx_frontend {

struct ResizeSampling {
  std::string mode = "nearest";                     // nearest, linear, cubic
  std::string transform = "half_pixel";             // coordinate_transformation_mode
  std::string nearest_mode = "round_prefer_floor";  // round_prefer_floor, round_prefer_ceil, floor, ceil
  double cubic_a = -0.75;                           // cubic_coeff_a
  bool exclude_outside = false;                     // cubic: taps past the ends weigh 0, the rest renormalised
};

// The sampling of one axis of extent `in` to `out`.
struct ResizeAxis {
  int64_t in = 0, out = 0;
  std::vector<double> weights;  // [out, in], row-major
  // tf_crop_and_resize: outputs whose source lies outside the input take the
  // extrapolation value (their row of weights is zero).
  std::vector<bool> outside;
  bool identity() const;
  bool any_outside() const;
};

// `scale` is the axis's scale (given, or out / in when the sizes were);
// roi_start and roi_end the axis's region of interest (tf_crop_and_resize only).
// Throws UserError(kUnsupported) naming a mode, transformation or rounding it
// does not know.
ResizeAxis resize_axis(int64_t in, int64_t out, double scale, const ResizeSampling& sampling, double roi_start,
                       double roi_end);

// Whether sampling an axis of extent `in` to `in` keeps every element (the batch
// and channel axes must), without building the matrix.
bool resize_keeps(int64_t in, double scale, const ResizeSampling& sampling, double roi_start, double roi_end);

}  // namespace aotc::onnx_frontend
