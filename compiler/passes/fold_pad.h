// fold-pad: Folds a pad node into the conv2d / max_pool2d / avg_pool2d that reads it when
// that is exact: conv2d needs a zero pad value, max pooling a -inf pad value,
// average pooling a zero value and either no padding of its own or
// count_include_pad (it becomes true: the explicit zeros counted in the divisor).
// Only spatial (H, W) padding of a 4-D tensor folds. A fold must leave a
// well-formed consumer with the same output shape (ceil_mode can drop a last
// window that would start in the folded padding; pool windows may not lie wholly
// in padding). A pad with an epilogue never folds. Each consumer folds on its
// own; the pad node stays while it has other users (dce removes it otherwise).
// Needs valid shapes. Counter: folded.
#pragma once

#include "passes/pass.h"

namespace aotc {

[[nodiscard]] Graph fold_pad(Graph g, PassCounters& counters);

}  // namespace aotc
