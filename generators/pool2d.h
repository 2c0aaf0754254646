// 2-D pooling with a fused epilogue, NCHW in and out, PyTorch semantics:
//  - max: the maximum over the window (dilation allowed); padding never wins.
//  - average: the window's sum over the zero-padded input divided by, with
//    count_include_pad, the window's size clipped to the padded input (so the
//    ceil_mode overhang past the end padding does not count), else by the
//    number of input elements in the window.
//  - adaptive average (and global average, its 1x1 case): output cell i of
//    `out` over `in` averages [floor(i*in/out), ceil((i+1)*in/out)).
// Kernel inputs: (input [N,C,H,W], epilogue operands...); output [N,C,OH,OW].
// Schedule: output rows are vectors, parallel over channels; the padded input
// rows a row of windows reads are staged on the stack where windows reach
// outside the input. For a GPU target: a thread per output value, warps
// along output rows.
#pragma once

#include <array>

#include "generators/kernel.h"

namespace aotc::gen {

struct Pool2dSpec {
  enum class Kind { kMax, kAverage, kAdaptiveAverage };
  Kind kind = Kind::kMax;
  Shape input_shape;   // [N, C, H, W]
  // [N, C, OH, OW], as the compiler's shape inference computed it (ceil_mode is
  // already in it); for adaptive pooling it is the requested output size.
  Shape output_shape;
  // kMax and kAverage only:
  std::array<int, 2> kernel{1, 1};     // KH, KW
  std::array<int, 2> stride{1, 1};
  std::array<int, 4> pad{0, 0, 0, 0};  // top, left, bottom, right
  std::array<int, 2> dilation{1, 1};   // kMax only
  bool count_include_pad = true;       // kAverage only
  std::vector<PostOpSpec> epilogue;
  // kMax without an epilogue may pool int8/uint8 values (a quantized max pool: padding then
  // reads the type's minimum); everything else is float32.
  Halide::Type element_type = Halide::Float(32);
};

Kernel pool2d(const Pool2dSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
