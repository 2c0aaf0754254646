// Transpose of any rank 1..6: y.shape[i] = x.shape[perm[i]], and y at
// coordinates (i_0, ..., i_r-1) is x at the coordinates j with j[perm[k]] = i_k;
// then an optional fused epilogue. (Frontends of NHWC formats put one at every
// boundary between the file's layout and NCHW.)
// Kernel inputs: (x, epilogue operands...); output [x.shape[perm[0]], ...].
//
// Schedules, chosen from the dims that are innermost in memory (dims of
// extent 1 ignored):
//  - copy: the same dim is innermost in x and y: vectorised rows, as elementwise.
//  - interleaved: one of the two innermost dims is short (an NHWC image with 1-4
//    channels): that dim is unrolled whole inside vectors along the other, so
//    Halide turns the strided accesses into dense vectors plus shuffles.
//  - tiled: square tiles of (y's innermost dim) x (x's innermost dim) staged on
//    the stack, read and written as whole vectors.
// For a GPU target, copy: a thread per element; otherwise a block per tile
// (16x16; a short dim lengthens the other) staged in shared memory, read and
// written by coalesced warps.
#pragma once

#include "generators/kernel.h"

namespace aotc::gen {

struct TransposeSpec {
  Shape input_shape;
  std::vector<int> perm;  // output dim i is input dim perm[i]
  std::vector<PostOpSpec> epilogue;  // float32 only
  Halide::Type element_type = Halide::Float(32);
};

// Throws std::invalid_argument unless perm is a permutation of the input's dims.
Shape transpose_output_shape(const TransposeSpec& spec);

Kernel transpose(const TransposeSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
