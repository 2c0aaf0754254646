// fuse-epilogues: Moves elementwise nodes into the epilogue of the node producing their input:
// activations (relu, clamp, hardswish, sigmoid), affine, and add/mul whose other
// operand is a constant, into conv2d, linear, add, mul and affine producers.
// A node fuses only when its producer's output has no other user and is not a
// graph output. Runs last: earlier passes see unfused graphs.
#pragma once

#include "passes/pass.h"

namespace aotc {

[[nodiscard]] Graph fuse_epilogues(Graph g, PassCounters& counters);

}  // namespace aotc
