// Static memory planning: assigns every intermediate tensor an offset in one
// arena, so that the generated model allocates nothing at run time (the plan
// becomes constant data in the library).
//
// - Planned: outputs of nodes that are not graph outputs. Graph inputs and
//   outputs live in the caller's buffers; constants are embedded data.
// - Step i is node i of Graph::nodes (which is in execution order). A tensor is
//   live from its defining step to the last step that reads it, inclusive, so at
//   a step the node's inputs and outputs are all live.
// - Aliases: the output of reshape/flatten/dropout shares its input's bytes (no
//   copy), when the input is itself planned.
// - In place: an elementwise node (relu, clamp, hardswish, sigmoid, affine,
//   batch_norm, add, mul) may write its output over an input with as many
//   elements that it reads elementwise, when that input's bytes are read by
//   nothing after this node. (Not over a fused epilogue operand of a conv or
//   linear: their kernels may recompute tile edges.)
// - Concatenation without copies: when a concat's slices are contiguous (every
//   dim before the axis has extent 1, as along channels at batch 1), each
//   input is placed as its slice of the concat's output, so its producer
//   writes it there and the concat moves nothing. Concats are taken largest
//   first; a smaller concat whose inputs already sit, in order, inside a
//   larger one is itself a view of it (DenseNet's growing concats of one
//   block all become prefixes of its last). An input that cannot be placed so
//   (a graph input or constant, a view elsewhere, an input listed twice, a
//   reshape's output) keeps its own bytes and the concat copies it.
// - Scratch: a backend may ask for bytes that one node's kernels use during
//   that node's step only (a Winograd convolution's transformed tiles): a
//   slot live at that step alone, beside the node's inputs and outputs.
// - Tensors sharing bytes form one slot whose lifetime is the union of theirs.
//   Slots are placed greedily, largest first, at the lowest aligned offset free
//   for their whole lifetime (tflite-micro's GreedyMemoryPlanner, hannk's
//   AllocationPlanner). A few orderings are tried, each retried with the slot
//   that set the arena's top moved first, and the smallest arena is kept.
//   On the torchvision models this meets the liveness lower bound exactly.
//
// Must run on the final (fused) graph: fusion changes which tensors exist.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <vector>

#include "ir/graph.h"

namespace aotc {

struct TensorPlacement {
  TensorId tensor = kNoTensor;
  int64_t offset = 0;  // bytes from the start of the arena, a multiple of the alignment
  int64_t bytes = 0;   // the tensor's size rounded up to the alignment
  int first_step = 0;  // the tensor's own lifetime (its slot may live longer)
  int last_step = 0;
  // The tensor whose bytes this one reuses (its alias source or the input it
  // overwrites in place), or kNoTensor.
  TensorId shares_with = kNoTensor;
  // The concat output this tensor is a slice of (it is written in place
  // there), or kNoTensor.
  TensorId slice_of = kNoTensor;
};

// Scratch bytes for the node at `step`, live during that step only.
struct ScratchPlacement {
  int step = 0;
  int64_t offset = 0;  // a multiple of the alignment
  int64_t bytes = 0;   // rounded up to the alignment
};

struct MemoryPlan {
  std::vector<TensorPlacement> placements;  // in order of definition
  std::vector<ScratchPlacement> scratch;    // in step order, only for nodes that ask for some
  int64_t arena_bytes = 0;        // max(offset + bytes)
  int64_t lower_bound_bytes = 0;  // max over steps of the bytes of the slots live then
  int64_t naive_bytes = 0;        // sum of all planned tensors' bytes (no reuse at all)
  int in_place_count = 0;
  int alias_count = 0;
  int slice_count = 0;  // tensors written straight into their slice of a concat
};

// The byte offset of each input's slice in the output of `concat` (a Concat
// node), or an empty vector when the slices are not contiguous.
std::vector<int64_t> concat_slice_offsets(const Graph& g, const Node& concat);

// The scratch bytes a backend's kernels need for a node (0: none).
using ScratchBytes = std::function<int64_t(const Graph&, const Node&)>;

// `alignment` (bytes, > 0) applies to every offset and size.
MemoryPlan plan_memory(const Graph& g, int64_t alignment = 64, const ScratchBytes& scratch_bytes = {});

// The scratch of the node at `step`, or null when it has none.
const ScratchPlacement* scratch_at(const MemoryPlan& plan, int step);

// A table, one row per planned tensor: offset, bytes, lifetime, what it shares,
// and a bar marking the steps where it is live.
void print_memory_plan(std::ostream& os, const Graph& g, const MemoryPlan& plan);

}  // namespace aotc
