// A 3x3 convolution with stride 1, dilation 1 and groups 1 by Winograd's
// minimal filtering F(4x4, 3x3) (Lavin & Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2016): each 4x4 block of output pixels of a
// channel pair costs 36 multiplies instead of 144.
//
// The output is cut into T = ceil(OH/4) x ceil(OW/4) tiles, tile t reading the
// 6x6 input patch at (4*ty - pad_top, 4*tx - pad_left), zeros outside. Three
// kernels run one after the other, through two scratch tensors:
//
//   1. input transform   V[n*36 + xi, c, t] = (B^T d B)[xi]     d: the patch of channel c
//   2. 36 GEMMs          M[n*36 + xi, o, t] = sum_c U[xi, o, c] * V[n*36 + xi, c, t]
//                        (pointwise_conv with 36 weight sets: U = G g G^T, packed
//                        at compile time)
//   3. output transform  out[n, o, 4*ty + a, 4*tx + b] = (A^T M A)[a, b] + bias[o],
//                        then the epilogue; the tiles past the map's edge are cut.
//
// Kernel inputs: (1) input [N, C, H, W], output V [N*36, C, T];
// (3) M [N*36, O, T], bias [O] if has_bias, epilogue operands against
// [N, O, OH, OW]; output [N, O, OH, OW].
//
// Error: the transforms use the points 0, +-1, +-2 and infinity; on random data the
// result differs from a direct convolution in double by a few times float's
// epsilon relative to the output's scale (tests/kernels/winograd_conv_test.cpp
// measures and bounds it).
#pragma once

#include "generators/conv2d.h"
#include "generators/pointwise_conv.h"

namespace aotc::gen {

// Points of the transformed 6x6 tile: the GEMMs' weight sets.
constexpr int64_t kWinogradPoints = 36;

// Arithmetic of the transforms per tile and channel (2 per multiply-add of a
// nonzero coefficient of B^T, A^T): 6x6 rows then columns of 22 nonzeros each
// for the input; 6x4 then 4x4 of 21 for the output.
constexpr double kWinogradInputTransformFlops = 2 * (6 * 22 + 6 * 22);
constexpr double kWinogradOutputTransformFlops = 2 * (6 * 21 + 4 * 21);

// Whether `spec` is a convolution Winograd can compute (3x3, stride 1,
// dilation 1, groups 1).
bool winograd_applies(const Conv2dSpec& spec);

// Whether the kernels can compute `spec`: it applies, and its rows fit the
// input transform's staging (output rows of up to ~330 pixels).
bool winograd_fits(const Conv2dSpec& spec);

// Whether aotc's rules compute `spec` by Winograd rather than directly: where
// it fits and it was measured faster (generators/README.md).
bool use_winograd(const Conv2dSpec& spec);

// Output tiles of one image: ceil(OH/4) * ceil(OW/4).
int64_t winograd_tiles(const Conv2dSpec& spec);

// V (channels C) or M (channels O) as the transforms see them,
// [N, 6, 6, channels, TH, TW]: the same bytes as the GEMM's [N*36, channels, T].
Shape winograd_tile_view(const Conv2dSpec& spec, int64_t channels);

// The scratch tensors' shapes: V [N*36, C, T] and M [N*36, O, T].
Shape winograd_transformed_input_shape(const Conv2dSpec& spec);
Shape winograd_transformed_output_shape(const Conv2dSpec& spec);

// The GEMM between the transforms (no bias, no epilogue).
PointwiseConvSpec winograd_gemm_spec(const Conv2dSpec& spec);

// PyTorch's weight [O, C, 3, 3] transformed (U = G g G^T, in double) and
// packed for winograd_gemm_spec's pointwise_conv on `target`.
PackedWeights pack_winograd_weights(const Conv2dSpec& spec, const Halide::Target& target, const float* oihw);

Kernel winograd_input_transform(const Conv2dSpec& spec, const Halide::Target& target);
Kernel winograd_output_transform(const Conv2dSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
