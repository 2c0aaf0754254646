#include "passes/fold_pad.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "ir/shape_rules.h"
#include "support/error.h"

namespace aotc {
namespace {

// The padding of a pad node as [top, left, bottom, right], if it pads only H and W of a 4-D tensor.
std::optional<std::array<int64_t, 4>> spatial_padding(const Graph& g, const Node& pad) {
  if (g.tensor(pad.inputs[0]).shape.size() != 4) return std::nullopt;
  const std::vector<int64_t>& p = pad.attr<PadAttrs>().pads;  // begins of N,C,H,W, then ends
  AOTC_CHECK(p.size() == 8, pad.name);
  if (p[0] != 0 || p[1] != 0 || p[4] != 0 || p[5] != 0) return std::nullopt;
  if (p[2] < 0 || p[3] < 0 || p[6] < 0 || p[7] < 0) return std::nullopt;  // a crop is no padding
  return std::array<int64_t, 4>{p[2], p[3], p[6], p[7]};
}

// True if padding with `value` before `consumer` is the same as widening the
// consumer's own padding (which is implicit zeros for conv, -inf for max pooling).
bool value_matches(const Node& consumer, float value) {
  switch (consumer.op) {
    case OpKind::Conv2d:
      return value == 0;
    case OpKind::MaxPool2d:
      // A zero pad is not the same: max over a window of negatives would become 0.
      return std::isinf(value) && value < 0;
    case OpKind::AvgPool2d: {
      // The explicit zeros count in the divisor, so the pool must count its own padding too.
      const Pool2dAttrs& a = consumer.attr<Pool2dAttrs>();
      return value == 0 && (a.count_include_pad || a.pad == std::array<int, 4>{0, 0, 0, 0});
    }
    default:
      return false;
  }
}

// `consumer` reading the pad's input directly, with the padding added to its own;
// nullopt unless that node is well-formed and keeps the output shape (ceil_mode
// can lose a last window that started in the folded padding).
std::optional<Node> folded_consumer(const Graph& g, const Node& consumer, TensorId pad_input,
                                    const std::array<int64_t, 4>& padding) {
  Node folded = consumer;
  folded.inputs[0] = pad_input;
  std::array<int, 4>& own = std::holds_alternative<Conv2dAttrs>(folded.attrs) ? folded.attr<Conv2dAttrs>().pad
                                                                              : folded.attr<Pool2dAttrs>().pad;
  for (size_t i = 0; i < 4; ++i) {
    const int64_t total = own[i] + padding[i];
    if (total > std::numeric_limits<int>::max()) return std::nullopt;
    own[i] = static_cast<int>(total);
  }
  if (folded.op == OpKind::AvgPool2d) folded.attr<Pool2dAttrs>().count_include_pad = true;
  // The one definition of a well-formed node (it refuses, e.g., pool windows lying
  // wholly in the padding, which the explicit pad made legal).
  try {
    if (infer_node_shapes(g, folded) != std::vector<Shape>{g.tensor(consumer.outputs[0]).shape}) return std::nullopt;
  } catch (const UserError&) {
    return std::nullopt;
  }
  return folded;
}

}  // namespace

Graph fold_pad(Graph g, PassCounters& counters) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    // A pad with an epilogue also transforms the values it copies: not a padding.
    if (g.nodes[i].op != OpKind::Pad || !g.nodes[i].epilogue.empty()) continue;
    const std::optional<std::array<int64_t, 4>> padding = spatial_padding(g, g.nodes[i]);
    if (!padding) continue;
    const TensorId padded = g.nodes[i].outputs[0];
    const TensorId pad_input = g.nodes[i].inputs[0];
    const float value = g.nodes[i].attr<PadAttrs>().value;
    // Each consumer folds on its own; dce removes the pad once none is left.
    for (size_t j = i + 1; j < g.nodes.size(); ++j) {
      Node& consumer = g.nodes[j];
      if (consumer.inputs.empty() || consumer.inputs[0] != padded) continue;
      if (std::count(consumer.inputs.begin(), consumer.inputs.end(), padded) != 1) continue;
      if (!value_matches(consumer, value)) continue;
      if (std::optional<Node> folded = folded_consumer(g, consumer, pad_input, *padding)) {
        consumer = std::move(*folded);
        counters.add("folded");
      }
    }
  }
  return g;
}

}  // namespace aotc
