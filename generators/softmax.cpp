#include "generators/softmax.h"

#include <limits>

#include "generators/epilogue.h"

namespace aotc::gen {
namespace {

// Rows at least this many run a thread each on the GPU (when the axis is not
// innermost); fewer rows, or rows along the innermost dim, a block each.
constexpr int64_t kGpuMinRowsForThreads = 1024;

// A thread per row when there are many rows across the innermost dim: warps
// across neighbouring rows (coalesced reads and writes at every step along
// the axis), max and sum in registers. Otherwise a block per row: its threads
// reduce interleaved slices of the row (rfactor: coalesced) into shared
// memory, 32 threads and then one combine the partials, and all threads
// write the row.
std::string schedule_gpu(Halide::Func& output, Halide::Func& max, Halide::Func& sum,
                         const std::vector<Halide::Var>& vars, size_t axis_dim, const Halide::RDom& r,
                         const Shape& shape) {
  const int64_t length = shape[shape.size() - 1 - axis_dim], rows = num_elements(shape) / length;
  const Halide::Var along = vars[axis_dim];
  std::vector<Halide::VarOrRVar> order{along};
  for (size_t d = 0; d < vars.size(); ++d)
    if (d != axis_dim) order.push_back(vars[d]);
  output.reorder(order);
  // The other dims, innermost first, fused into one row index.
  Halide::Var row = order.size() > 1 ? order[1].var : Halide::Var("row");
  for (size_t i = 2; i < order.size(); ++i) {
    Halide::Var fused(row.name() + "_" + order[i].name());
    output.fuse(row, order[i].var, fused);
    row = fused;
  }
  Halide::Var block("block"), thread("thread");
  if (axis_dim != 0 && rows >= kGpuMinRowsForThreads) {
    const int threads = gpu_threads_for(rows, 32, kGpuPointwiseThreads);
    output.split(row, block, thread, threads, Halide::TailStrategy::GuardWithIf).gpu_blocks(block).gpu_threads(thread);
    max.compute_at(output, thread).store_in(Halide::MemoryType::Register);
    sum.compute_at(output, thread).store_in(Halide::MemoryType::Register);
    return "one row per thread, " + std::to_string(threads) + " threads per block";
  }
  const int threads = gpu_threads_for(length, 32, kGpuPointwiseThreads);
  Halide::Var ao("ao"), ai("ai");
  output.split(along, ao, ai, threads, Halide::TailStrategy::GuardWithIf);
  if (order.size() == 1)  // rank 1: one row, in a block loop of one iteration
    output.split(ao, row, ao, static_cast<int>((length + threads - 1) / threads));
  output.reorder(ai, ao, row).gpu_blocks(row).gpu_threads(ai);
  // Each reduction in three steps: `threads` interleaved partials, combined
  // by 32 threads into 32, then by one thread (no long serial loop).
  for (Halide::Func f : {max, sum}) {
    Halide::RVar ro("ro"), ri("ri"), rio("rio"), rii("rii");
    Halide::Var lane("lane"), lane32("lane32");
    Halide::Func partial = f.update().split(r.x, ro, ri, threads).rfactor(ri, lane);
    Halide::Func partial32 = f.update().split(ri, rio, rii, 32).rfactor(rii, lane32);
    partial.compute_at(output, row).store_in(Halide::MemoryType::GPUShared).gpu_threads(lane);
    partial.update().gpu_threads(lane);
    partial32.compute_at(output, row).store_in(Halide::MemoryType::GPUShared).gpu_threads(lane32);
    partial32.update().gpu_threads(lane32);
    f.compute_at(output, row).store_in(Halide::MemoryType::GPUShared);
  }
  return "one row per block of " + std::to_string(threads) + " threads, reductions in shared memory";
}

}  // namespace

Kernel softmax(const SoftmaxSpec& spec, const Halide::Target& target) {
  const Shape& shape = spec.shape;
  require(spec.axis >= 0 && static_cast<size_t>(spec.axis) < shape.size(),
          "softmax: axis " + std::to_string(spec.axis) + " is out of range for " + to_string(shape));
  const size_t rank = shape.size();
  const size_t axis_dim = rank - 1 - static_cast<size_t>(spec.axis);  // in Halide's order
  Kernel kernel;
  Halide::ImageParam x = dense_input("input", shape);
  kernel.inputs = {x};

  /* algorithm */
  // max and sum are Funcs of the coordinates other than the axis.
  std::vector<Halide::Var> vars = make_vars(rank);
  std::vector<Halide::Var> others = vars;
  others.erase(others.begin() + static_cast<std::ptrdiff_t>(axis_dim));
  Halide::RDom r(0, static_cast<int>(shape[static_cast<size_t>(spec.axis)]), "r");
  std::vector<Halide::Expr> along(vars.begin(), vars.end());
  along[axis_dim] = r.x;
  Halide::Func max("max"), sum("sum"), output("softmax");
  max(others) = -std::numeric_limits<float>::infinity();
  max(others) = Halide::max(max(others), x(along));
  sum(others) = 0.0f;
  sum(others) += Halide::exp(x(along) - max(others));
  const Halide::Expr value = Halide::exp(x(vars) - max(others)) / sum(others);
  output(vars) = apply_epilogue(value, spec.epilogue, outermost_first(vars), shape, kernel.inputs);
  constrain_output(output, shape);

  /* schedule */
  if (target.has_gpu_feature()) {
    kernel.schedule = "softmax along axis " + std::to_string(spec.axis) +
                      " gpu: " + schedule_gpu(output, max, sum, vars, axis_dim, r, shape) +
                      (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
    kernel.output = output;
    return kernel;
  }
  // Rows along the axis are independent across the other dims: vectorise
  // across the innermost other dim when there is one (the axis loop then runs
  // inside each vector of rows); a softmax over the innermost dim vectorises
  // the final exp/divide along the axis and reduces each row serially.
  const int native = native_lanes(target);
  Halide::Var outer_tile("outer_tile"), inner("inner");
  std::string description;
  if (axis_dim != 0) {
    const int lanes = lanes_for_extent(shape.back(), native);
    output.split(vars[0], outer_tile, inner, lanes).reorder(inner, vars[axis_dim], outer_tile);
    for (Halide::Func f : {max, sum}) {
      f.compute_at(output, outer_tile);
      f.update().reorder(vars[0], r.x);
    }
    if (lanes > 1) {
      output.vectorize(inner);
      for (Halide::Func f : {max, sum}) f.vectorize(vars[0]).update().vectorize(vars[0]);
    }
    description = "vec" + std::to_string(lanes) + " across rows";
  } else {
    const int lanes = lanes_for_extent(shape.back(), native);
    if (rank > 1) {
      max.compute_at(output, vars[1]);
      sum.compute_at(output, vars[1]);
    } else {
      max.compute_root();
      sum.compute_root();
    }
    if (lanes > 1) output.vectorize(vars[0], lanes);
    description = "vec" + std::to_string(lanes) + " along the axis";
  }
  for (size_t d = rank; d-- > 1;)
    if (d != axis_dim && shape[rank - 1 - d] > 1) {
      output.parallel(vars[d]);
      description += ", parallel(dim " + std::to_string(rank - 1 - d) + ")";
      break;
    }
  kernel.schedule = "softmax along axis " + std::to_string(spec.axis) + ": " + description +
                    (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
  kernel.output = output;
  return kernel;
}

}  // namespace aotc::gen
