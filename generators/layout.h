// Physical layout conversions of a 4-D tensor between NCHW and NHWC (for the
// layout-assignment pass): a transpose of the channel dim with the pixels.
// Kernel inputs: (x); output: the same tensor in the other layout
// ([N,C,H,W] <-> [N,H,W,C], both dense row-major).
// Schedule: square tiles of channels x pixels staged on the stack, so that
// both the reads and the writes are vectors.
#pragma once

#include "generators/kernel.h"

namespace aotc::gen {

struct LayoutSpec {
  enum class Conversion { kNchwToNhwc, kNhwcToNchw };
  Conversion conversion = Conversion::kNchwToNhwc;
  Shape input_shape;  // as stored: [N,C,H,W] for kNchwToNhwc, [N,H,W,C] for kNhwcToNchw
};

Shape layout_output_shape(const LayoutSpec& spec);

Kernel convert_layout(const LayoutSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
