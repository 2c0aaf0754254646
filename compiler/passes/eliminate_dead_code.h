// dce: Removes nodes none of whose outputs reach a graph output, then drops tensors no
// node or graph output references (graph inputs always stay), renumbering
// TensorIds. The pipeline runs it after every pass, so other passes may simply
// leave dead nodes behind.
#pragma once

#include "passes/pass.h"

namespace aotc {

[[nodiscard]] Graph eliminate_dead_code(Graph g, PassCounters& counters);

}  // namespace aotc
