// Spatial resizing of NCHW tensors with TensorFlow Lite's sampling, then an
// optional fused epilogue:
//  - scale = in / out, or (in - 1) / (out - 1) with align_corners (and out > 1),
//    in float, as TFLite computes it;
//  - bilinear: source position s = (o + 0.5) * scale - 0.5 with
//    half_pixel_centers, else o * scale; lo = max(floor(s), 0),
//    hi = min(ceil(s), in - 1), weight s - lo;
//  - nearest: i = floor((o + offset) * scale), offset 0.5 with
//    half_pixel_centers; rounded half away from zero instead with
//    align_corners; then min(i, in - 1), and max(i, 0) with half_pixel_centers.
// The sample positions are computed once at compile time into small tables
// (resize_tables), so they match TFLite's float arithmetic exactly; the kernel
// takes them as an input like packed weights, so that a GPU kernel reads them
// from the model's device weights rather than from a buffer of its own.
// Kernel inputs: (x [N,C,H,W], tables (resize_tables_shape), epilogue
// operands...); output [N,C,OH,OW].
//
// Schedule: bilinear blends the two input rows of an output row into a row
// buffer on the stack (vectorised, dense reads), then samples it along the
// row; nearest samples the input row. Rows upscaled by an integer factor k
// are computed in k unrolled phases of dense vectors whose strided stores
// Halide merges; other ratios gather through the tables. Parallel over the
// rows of all planes. GPU: a thread per output, reading its positions from the
// tables.
#pragma once

#include <array>

#include "generators/kernel.h"

namespace aotc::gen {

struct ResizeSpec {
  enum class Kind { kBilinear, kNearest };
  Kind kind = Kind::kBilinear;
  Shape input_shape;                  // [N, C, H, W]
  std::array<int64_t, 2> size{1, 1};  // OH, OW
  bool align_corners = false;
  bool half_pixel_centers = false;  // excludes align_corners
  std::vector<PostOpSpec> epilogue;
};

Shape resize_output_shape(const ResizeSpec& spec);

// The sample tables: rows y_lo, y_hi, y_weight, x_lo, x_hi, x_weight
// (bilinear) or y_index, x_index (nearest), each as long as the longer output
// axis; weights are floats, indices int32s stored in their bits.
Shape resize_tables_shape(const ResizeSpec& spec);
PackedWeights resize_tables(const ResizeSpec& spec);

Kernel resize(const ResizeSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
