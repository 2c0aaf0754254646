// fold-pad: Folds a pad node into the conv2d / max_pool2d / avg_pool2d that consumes it when
// that is exact: conv2d needs a zero pad value, max pooling a -inf pad value,
// average pooling a zero value and no padding of its own (count_include_pad
// becomes true). Only spatial (H, W) padding folds. The pad node stays if it has
// other users.
#pragma once

#include "passes/pass.h"

namespace aotc {

[[nodiscard]] Graph fold_pad(Graph g, PassCounters& counters);

}  // namespace aotc
