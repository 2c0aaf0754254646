#include "plan/memory_plan.h"

#include <algorithm>
#include <functional>
#include <iomanip>
#include <iterator>
#include <string>

#include "support/error.h"

namespace aotc {

namespace {

int64_t round_up(int64_t n, int64_t alignment) { return (n + alignment - 1) / alignment * alignment; }

int64_t tensor_bytes(const Tensor& t) { return num_elements(t.shape) * dtype_bytes(t.dtype); }

bool is_alias_op(OpKind op) { return op_class(op) == OpClass::kAlias; }

// Where a tensor sits inside a concat's output: `root` is a concat output that
// owns its bytes (not itself a slice), `offset` bytes into it.
struct Slice {
  TensorId root = kNoTensor;
  int64_t offset = 0;
  bool operator==(const Slice&) const = default;
};

// Places the inputs of concats as slices of their outputs (see the header),
// largest concat first. Returns, for every tensor, its slice or {kNoTensor}.
std::vector<Slice> place_concat_slices(const Graph& g, const std::vector<bool>& planned,
                                       const std::vector<int>& defined_at, int64_t alignment) {
  std::vector<Slice> slice(g.tensors.size());
  auto bytes = [&](TensorId id) { return tensor_bytes(g.tensor(id)); };
  // An input its producer can write anywhere: computed here, not a view of another tensor.
  auto placeable = [&](TensorId id) {
    const size_t t = static_cast<size_t>(id);
    return planned[t] && !is_alias_op(g.nodes[static_cast<size_t>(defined_at[t])].op);
  };
  std::vector<const Node*> concats;
  for (const Node& node : g.nodes)
    if (node.op == OpKind::Concat && node.epilogue.empty() && planned[static_cast<size_t>(node.outputs[0])] &&
        !concat_slice_offsets(g, node).empty())
      concats.push_back(&node);
  // Largest first; among equals, later first (a concat of one input is as large as it).
  std::stable_sort(concats.begin(), concats.end(), [&](const Node* a, const Node* b) {
    const int64_t ba = bytes(a->outputs[0]), bb = bytes(b->outputs[0]);
    return ba != bb ? ba > bb : defined_at[static_cast<size_t>(a->outputs[0])] >
                                    defined_at[static_cast<size_t>(b->outputs[0])];
  });
  for (const Node* concat : concats) {
    const std::vector<int64_t> offsets = concat_slice_offsets(g, *concat);
    const std::vector<TensorId>& in = concat->inputs;
    auto listed_before = [&](size_t i) {
      const auto end = in.begin() + static_cast<std::ptrdiff_t>(i);
      return std::find(in.begin(), end, in[i]) != end;
    };
    // Whether input i can be placed at its slice of `base` (slices keep the alignment).
    auto can_place = [&](size_t i, const Slice& base) {
      return placeable(in[i]) && slice[static_cast<size_t>(in[i])].root == kNoTensor && !listed_before(i) &&
             (base.offset + offsets[i]) % alignment == 0;
    };
    // Whether every input already sits at its slice of `base`. (Placing a new
    // input there could overlap what a larger concat put in that range.)
    auto all_at = [&](const Slice& base) {
      for (size_t i = 0; i < in.size(); ++i)
        if (!(slice[static_cast<size_t>(in[i])] == Slice{base.root, base.offset + offsets[i]})) return false;
      return true;
    };
    const TensorId out = concat->outputs[0];
    Slice base = slice[static_cast<size_t>(out)];
    if (base.root == kNoTensor) {
      base = {out, 0};
      // A range of a larger concat that already holds all its inputs in order.
      const Slice& first = slice[static_cast<size_t>(in[0])];
      const Slice candidate{first.root, first.offset};
      if (first.root != kNoTensor && all_at(candidate)) {
        base = candidate;
        slice[static_cast<size_t>(out)] = candidate;
      }
    }
    for (size_t i = 0; i < in.size(); ++i)
      if (can_place(i, base)) slice[static_cast<size_t>(in[i])] = {base.root, base.offset + offsets[i]};
  }
  return slice;
}

// Whether `node` may write its output over inputs[index] (equal element counts
// given): it must read that input only at the element it writes, and its kernel
// must write each element once. The elementwise generator guards its vector
// tails for exactly this reason (generators/kernel.cpp, schedule_pointwise);
// conv/linear/pool kernels may recompute tile edges (Halide's ShiftInwards
// tails), re-reading an operand after it was overwritten, so their fused
// epilogue operands are never overwritten in place.
bool reads_elementwise(const Node& node, size_t index) {
  if (index >= node.op_operand_count()) return false;
  switch (op_class(node.op)) {
    case OpClass::kElementwise: return true;
    case OpClass::kElementwiseWithParameters: return index == 0;
    case OpClass::kOther:
    case OpClass::kAlias: return false;
  }
  return false;
}

// A range of arena bytes used by one or more tensors that share it over time.
struct Slot {
  int64_t bytes = 0;
  int first_step = 0;
  int last_step = 0;
  int64_t offset = 0;
};

bool live_together(const Slot& a, const Slot& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

// Places slots in `order`, each at the lowest offset where it overlaps no
// already placed slot that is live at the same time. Returns the arena size.
int64_t place_first_fit(std::vector<Slot>& slots, const std::vector<int>& order, int64_t alignment) {
  std::vector<const Slot*> placed;
  std::vector<const Slot*> conflicts;
  int64_t arena = 0;
  for (int index : order) {
    Slot& slot = slots[static_cast<size_t>(index)];
    conflicts.clear();
    for (const Slot* other : placed)
      if (live_together(slot, *other)) conflicts.push_back(other);
    std::sort(conflicts.begin(), conflicts.end(),
              [](const Slot* a, const Slot* b) { return a->offset < b->offset; });
    int64_t candidate = 0;
    for (const Slot* other : conflicts) {
      if (candidate + slot.bytes <= other->offset) break;  // the gap before `other` fits
      candidate = std::max(candidate, round_up(other->offset + other->bytes, alignment));
    }
    slot.offset = candidate;
    arena = std::max(arena, candidate + slot.bytes);
    placed.push_back(&slot);
  }
  return arena;
}

// How often a slot that ends at the arena's top is moved to the front of the
// order and placement retried (bounded: each try costs a full placement).
constexpr int kMaxPromotions = 32;

// Greedy placement is sensitive to its order, and no single order wins on every
// model, so try the usual ones. After each placement, the slot ending at the
// arena's top that was placed last is the one squeezed out by earlier slots:
// it goes to the front and placement runs again (this is what fits DenseNet's
// growing concats into its liveness bound). Keeps the smallest arena (ties: the
// first found) and stops early at `lower_bound`, which nothing can beat.
int64_t place_slots(std::vector<Slot>& slots, int64_t alignment, int64_t lower_bound) {
  using Before = std::function<bool(const Slot&, const Slot&)>;
  auto lifetime = [](const Slot& s) { return int64_t{s.last_step - s.first_step + 1}; };
  const Before orderings[] = {
      // Largest first, then earliest (tflite-micro, hannk).
      [](const Slot& a, const Slot& b) {
        return a.bytes != b.bytes ? a.bytes > b.bytes : a.first_step < b.first_step;
      },
      // Largest area in the time x bytes plane first.
      [&](const Slot& a, const Slot& b) { return a.bytes * lifetime(a) > b.bytes * lifetime(b); },
      // Longest-lived first: they fragment memory for the longest.
      [&](const Slot& a, const Slot& b) {
        return lifetime(a) != lifetime(b) ? lifetime(a) > lifetime(b) : a.bytes > b.bytes;
      },
      // Execution order, as an online first-fit allocator would.
      [](const Slot& a, const Slot& b) { return a.first_step < b.first_step; },
  };
  std::vector<int64_t> best_offsets;
  int64_t best_arena = -1;
  for (const Before& before : orderings) {
    std::vector<int> order(slots.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return before(slots[static_cast<size_t>(a)], slots[static_cast<size_t>(b)]);
    });
    for (int promotion = 0; promotion <= kMaxPromotions; ++promotion) {
      const int64_t arena = place_first_fit(slots, order, alignment);
      if (best_arena < 0 || arena < best_arena) {
        best_arena = arena;
        best_offsets.clear();
        for (const Slot& s : slots) best_offsets.push_back(s.offset);
      }
      if (best_arena <= lower_bound) break;
      auto squeezed = std::find_if(order.rbegin(), order.rend(), [&](int i) {
        const Slot& s = slots[static_cast<size_t>(i)];
        return s.offset + s.bytes == arena;
      });
      AOTC_CHECK(squeezed != order.rend());
      if (squeezed == std::prev(order.rend())) break;  // already first
      std::rotate(order.begin(), std::prev(squeezed.base()), squeezed.base());
    }
    if (best_arena <= lower_bound) break;
  }
  for (size_t i = 0; i < slots.size(); ++i) slots[i].offset = best_offsets[i];
  return best_arena;
}

int64_t liveness_lower_bound(const std::vector<Slot>& slots, size_t steps) {
  // Bytes that become live at each step minus those that died just before it.
  std::vector<int64_t> delta(steps + 1, 0);
  for (const Slot& s : slots) {
    delta[static_cast<size_t>(s.first_step)] += s.bytes;
    delta[static_cast<size_t>(s.last_step) + 1] -= s.bytes;
  }
  int64_t live = 0, peak = 0;
  for (int64_t d : delta) peak = std::max(peak, live += d);
  return peak;
}

}  // namespace

std::vector<int64_t> concat_slice_offsets(const Graph& g, const Node& concat) {
  AOTC_CHECK(concat.op == OpKind::Concat, concat.name);
  const Shape& out = g.tensor(concat.outputs[0]).shape;
  const auto axis = static_cast<size_t>(concat.attr<AxisAttrs>().axis);
  for (size_t d = 0; d < axis; ++d)
    if (out[d] != 1) return {};
  std::vector<int64_t> offsets;
  int64_t offset = 0;
  for (size_t i = 0; i < concat.op_operand_count(); ++i) {
    offsets.push_back(offset);
    offset += tensor_bytes(g.tensor(concat.inputs[i]));
  }
  return offsets;
}

MemoryPlan plan_memory(const Graph& g, int64_t alignment, const ScratchBytes& scratch_bytes) {
  AOTC_CHECK(alignment > 0, alignment);
  const std::vector<int> defined_at = defining_nodes(g);
  std::vector<bool> planned(g.tensors.size(), false);
  for (size_t t = 0; t < g.tensors.size(); ++t) planned[t] = defined_at[t] >= 0;
  for (TensorId out : g.outputs) planned[static_cast<size_t>(out)] = false;

  std::vector<int> last_read(defined_at);
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    for (TensorId in : g.nodes[step].inputs) {
      const size_t t = static_cast<size_t>(in);
      if (!planned[t]) continue;
      AOTC_CHECK(defined_at[t] < static_cast<int>(step), "nodes out of order at ", g.nodes[step].name);
      last_read[t] = std::max(last_read[t], static_cast<int>(step));
    }
  }

  MemoryPlan plan;
  std::vector<Slot> slots;
  std::vector<int> slot_of(g.tensors.size(), -1);
  std::vector<int64_t> offset_in_slot(g.tensors.size(), 0);
  auto planned_input = [&](TensorId id) { return planned[static_cast<size_t>(id)]; };
  auto slot_of_tensor = [&](TensorId id) -> Slot& { return slots[static_cast<size_t>(slot_of[static_cast<size_t>(id)])]; };
  const std::vector<Slice> slices = place_concat_slices(g, planned, defined_at, alignment);
  std::vector<bool> is_root(g.tensors.size(), false);
  for (const Slice& s : slices)
    if (s.root != kNoTensor) is_root[static_cast<size_t>(s.root)] = true;
  // The slot holding the bytes of concat output `root` and of its slices.
  std::vector<int> root_slot(g.tensors.size(), -1);
  auto slot_of_root = [&](TensorId root, int step) {
    int& index = root_slot[static_cast<size_t>(root)];
    if (index < 0) {
      index = static_cast<int>(slots.size());
      slots.push_back({.bytes = round_up(tensor_bytes(g.tensor(root)), alignment), .first_step = step, .last_step = step});
    }
    return index;
  };

  // The input whose slot `node` (at `step`) may overwrite with `out`, or kNoTensor.
  auto in_place_candidate = [&](const Node& node, int step, TensorId out) -> TensorId {
    if (node.outputs.size() != 1) return kNoTensor;
    const Tensor& result = g.tensor(out);
    for (TensorId in : node.inputs) {
      if (!planned_input(in)) continue;
      const Tensor& source = g.tensor(in);
      if (slot_of_tensor(in).last_step != step || source.layout != result.layout ||
          num_elements(source.shape) != num_elements(result.shape))
        continue;
      // Every read of the slot by this node (perhaps through an alias) must be elementwise.
      bool elementwise = true;
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        const TensorId other = node.inputs[i];
        if (planned_input(other) && slot_of[static_cast<size_t>(other)] == slot_of[static_cast<size_t>(in)])
          elementwise = elementwise && reads_elementwise(node, i) &&
                        num_elements(g.tensor(other).shape) == num_elements(result.shape);
      }
      if (elementwise) return in;
    }
    return kNoTensor;
  };

  for (size_t step = 0; step < g.nodes.size(); ++step) {
    const Node& node = g.nodes[step];
    for (TensorId out : node.outputs) {
      const size_t t = static_cast<size_t>(out);
      if (!planned[t]) continue;
      TensorPlacement placement{.tensor = out,
                                .bytes = round_up(tensor_bytes(g.tensor(out)), alignment),
                                .first_step = defined_at[t],
                                .last_step = last_read[t]};
      plan.naive_bytes += placement.bytes;
      if (slices[t].root != kNoTensor || is_root[t]) {
        // A slice of a concat's output, or such an output itself: the bytes of the concat's slot.
        const TensorId root = slices[t].root != kNoTensor ? slices[t].root : out;
        slot_of[t] = slot_of_root(root, placement.first_step);
        offset_in_slot[t] = slices[t].offset;
        if (slices[t].root != kNoTensor) {
          placement.slice_of = root;
          ++plan.slice_count;
        }
      } else {
        const bool alias = is_alias_op(node.op) && node.epilogue.empty() && !node.inputs.empty() &&
                           planned_input(node.inputs[0]) &&
                           round_up(tensor_bytes(g.tensor(node.inputs[0])), alignment) == placement.bytes;
        placement.shares_with = alias ? node.inputs[0] : in_place_candidate(node, static_cast<int>(step), out);
        if (placement.shares_with == kNoTensor) {
          slot_of[t] = static_cast<int>(slots.size());
          slots.push_back({.bytes = placement.bytes, .first_step = placement.first_step, .last_step = placement.last_step});
        } else {
          slot_of[t] = slot_of[static_cast<size_t>(placement.shares_with)];
          offset_in_slot[t] = offset_in_slot[static_cast<size_t>(placement.shares_with)];
          ++(alias ? plan.alias_count : plan.in_place_count);
        }
      }
      Slot& slot = slot_of_tensor(out);
      slot.first_step = std::min(slot.first_step, placement.first_step);
      slot.last_step = std::max(slot.last_step, placement.last_step);
      plan.placements.push_back(placement);
    }
  }

  std::vector<int> scratch_slot;  // per plan.scratch
  for (size_t step = 0; scratch_bytes && step < g.nodes.size(); ++step) {
    const int64_t bytes = scratch_bytes(g, g.nodes[step]);
    if (bytes <= 0) continue;
    const int s = static_cast<int>(step);
    plan.scratch.push_back({.step = s, .bytes = round_up(bytes, alignment)});
    scratch_slot.push_back(static_cast<int>(slots.size()));
    slots.push_back({.bytes = plan.scratch.back().bytes, .first_step = s, .last_step = s});
  }

  plan.lower_bound_bytes = liveness_lower_bound(slots, g.nodes.size());
  plan.arena_bytes = place_slots(slots, alignment, plan.lower_bound_bytes);
  for (TensorPlacement& p : plan.placements)
    p.offset = slot_of_tensor(p.tensor).offset + offset_in_slot[static_cast<size_t>(p.tensor)];
  for (size_t i = 0; i < plan.scratch.size(); ++i)
    plan.scratch[i].offset = slots[static_cast<size_t>(scratch_slot[i])].offset;
  return plan;
}

const ScratchPlacement* scratch_at(const MemoryPlan& plan, int step) {
  for (const ScratchPlacement& s : plan.scratch)
    if (s.step == step) return &s;
  return nullptr;
}

void print_memory_plan(std::ostream& os, const Graph& g, const MemoryPlan& plan) {
  const int steps = static_cast<int>(g.nodes.size());
  os << "memory plan: arena " << plan.arena_bytes << " bytes, lower bound " << plan.lower_bound_bytes
     << ", naive " << plan.naive_bytes << "; " << plan.in_place_count << " in place, "
     << plan.alias_count << " aliased, " << plan.slice_count << " concat slices; ";
  if (!plan.scratch.empty()) os << plan.scratch.size() << " scratch; ";
  os << steps << " steps\n";
  // Long schedules are squeezed: each bar column then stands for several steps.
  const int columns = std::min(steps, 64);
  os << std::setw(12) << "offset" << std::setw(12) << "bytes" << std::setw(11) << "steps" << "  "
     << std::left << std::setw(columns + 3) << "live" << std::right << "tensor\n";
  auto row = [&](int64_t offset, int64_t bytes, int first_step, int last_step) -> std::ostream& {
    std::string bar(static_cast<size_t>(columns), '.');
    for (int c = 0; c < columns; ++c) {
      const int begin = c * steps / columns, end = (c + 1) * steps / columns - 1;
      if (begin <= last_step && first_step <= end) bar[static_cast<size_t>(c)] = '#';
    }
    const std::string lifetime = std::to_string(first_step) + "-" + std::to_string(last_step);
    return os << std::setw(12) << offset << std::setw(12) << bytes << std::setw(11) << lifetime << "  |" << bar << "| ";
  };
  for (const TensorPlacement& p : plan.placements) {
    row(p.offset, p.bytes, p.first_step, p.last_step) << "%" << g.tensor(p.tensor).name;
    if (p.shares_with != kNoTensor) {
      const bool alias = is_alias_op(g.nodes[static_cast<size_t>(p.first_step)].op);
      os << (alias ? " (alias of %" : " (in place of %") << g.tensor(p.shares_with).name << ")";
    }
    if (p.slice_of != kNoTensor) os << " (slice of %" << g.tensor(p.slice_of).name << ")";
    os << '\n';
  }
  for (const ScratchPlacement& s : plan.scratch)
    row(s.offset, s.bytes, s.step, s.step) << "scratch of %"
                                           << g.tensor(g.nodes[static_cast<size_t>(s.step)].outputs[0]).name << '\n';
}

}  // namespace aotc
