// Physical layout conversions of a 4-D tensor between NCHW and the
// channel-blocked NCHWc ([N, C/B, H, W, B], depthwise_conv_blocked.h), for
// where neighbouring groups disagree on their layout. Each is a transpose of
// a 3-D view of the same bytes, [N*C/B, B, H*W] <-> [N*C/B, H*W, B]
// (transpose.h, which schedules it).
// Kernel inputs: (x); output: the same tensor in the other layout.
#pragma once

#include <vector>

#include "generators/kernel.h"

namespace aotc::gen {

struct LayoutSpec {
  enum class Conversion { kNchwToBlocked, kBlockedToNchw };
  Conversion conversion = Conversion::kNchwToBlocked;
  Shape nchw;  // the logical shape [N, C, H, W]
  int block = 16;
};

// The 3-D views of the input and the output the kernel reads and writes.
Shape layout_input_view(const LayoutSpec& spec);
Shape layout_output_view(const LayoutSpec& spec);

Kernel convert_layout(const LayoutSpec& spec, const Halide::Target& target);

// The same conversion on the host (tests, tuning): `data` in the spec's
// input layout, returned in its output layout.
std::vector<float> convert_layout_on_host(const LayoutSpec& spec, const std::vector<float>& data);

}  // namespace aotc::gen
