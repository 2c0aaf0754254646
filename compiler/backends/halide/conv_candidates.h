// The implementations aotc can build for a conv2d node, and which one it runs.
#pragma once

#include "backends/halide/candidates.h"
#include "backends/halide/halide_backend.h"

namespace aotc {

// The candidates of conv2d `node`: pointwise-gemm (a 1x1 conv, stride 1, no
// padding, groups 1, as a GEMM over flattened pixels); where `options` allow
// blocked layouts, pointwise-to-nchwc and nchwc-pointwise (such a 1x1 conv
// writing NCHWc from an NCHW or NCHWc input) and nchwc-depthwise; winograd-f4x4
// (a 3x3 conv, stride 1, where its kernels fit and `options` allow Winograd);
// and direct, always. The rules prefer pointwise-gemm where
// gen::use_pointwise_conv says, winograd-f4x4 where gen::use_winograd says,
// else direct; never a blocked layout, which only the plan over the chain
// (group_plan.h) can weigh.
std::vector<Candidate> conv_candidates(const Graph& g, const Node& node, const HalideLoweringOptions& options);

// The choice among conv_candidates: by the tuning cache in `options` where it
// times them all, else by the rules.
Choice conv_choice(const Graph& g, const Node& node, const HalideLoweringOptions& options);

}  // namespace aotc
