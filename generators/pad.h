// Constant padding of any rank: out = x shifted by the begin pads, `value`
// outside x; a negative pad crops (a static slice); then an optional fused
// epilogue.
// Kernel inputs: (x, epilogue operands...); output: x's shape plus the pads.
// Schedule: schedule_pointwise (kernel.h); for a GPU target a thread per float4 (4
// elements) or per element.
#pragma once

#include "generators/kernel.h"

namespace aotc::gen {

struct PadSpec {
  Shape input_shape;
  std::vector<int64_t> pads;  // the begin pad of every dim, then the end pad of every dim; negative crops
  float value = 0;
  std::vector<PostOpSpec> epilogue;
};

Shape pad_output_shape(const PadSpec& spec);

Kernel pad(const PadSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
