#include "generators/transpose.h"

#include <algorithm>

#include "generators/epilogue.h"

namespace aotc::gen {
namespace {

using Halide::Var;

// The interleaved schedule unrolls a short innermost dim whole when its extent
// is at most this (RGB-like images; wider channel counts use tiles).
constexpr int64_t kMaxInterleaved = 4;
// Most lanes of a tile side. 8x8 tiles measured 30-38 GB/s against 17-25 GB/s
// for 16x16 (one AVX-512 core, 16x128x128 and 96x16x16 feature maps): the 16
// strided reads of a 16-wide tile do not stay in registers.
constexpr int kMaxTileLanes = 8;
// GPU tiles: at most this many threads per block and elements per tile side
// along the input's innermost dim (16 floats: two whole 32-byte sectors).
constexpr int kGpuTileThreads = 256;
constexpr int kGpuTileSide = 16;

// Halide var index (innermost first) of the innermost output dim of extent > 1
// among those that satisfy `wanted`; -1 if none.
template <typename Wanted>
int innermost_var(const Shape& out_shape, Wanted wanted) {
  const int rank = static_cast<int>(out_shape.size());
  for (int v = 0; v < rank; ++v)
    if (out_shape[static_cast<size_t>(rank - 1 - v)] > 1 && wanted(v)) return v;
  return -1;
}

// Orders the loops of `output` (of `out_shape`): `inner` (innermost first), then
// the vars not `placed` there, in their order, fused into one loop, parallel in
// tasks. Returns false when there were none (nothing is parallel yet).
bool order_and_parallelise(Halide::Func& output, const std::vector<Halide::VarOrRVar>& inner,
                           const std::vector<Var>& vars, const std::vector<int>& placed, const Shape& out_shape) {
  std::vector<Var> rest;
  for (int v = 0; v < static_cast<int>(vars.size()); ++v)
    if (std::find(placed.begin(), placed.end(), v) == placed.end()) rest.push_back(vars[static_cast<size_t>(v)]);
  std::vector<Halide::VarOrRVar> order = inner;
  order.insert(order.end(), rest.begin(), rest.end());
  output.reorder(order);
  if (rest.empty()) return false;
  Var outer = rest.back();
  int64_t placed_elements = 1;
  for (int v : placed) placed_elements *= out_shape[out_shape.size() - 1 - static_cast<size_t>(v)];
  for (size_t i = rest.size() - 1; i-- > 0;) {
    Var fused(rest[i].name() + "_" + outer.name());
    output.fuse(rest[i], outer, fused);
    outer = fused;
  }
  parallel_in_tasks(output, outer, num_elements(out_shape) / placed_elements, placed_elements);
  return true;
}

}  // namespace

Shape transpose_output_shape(const TransposeSpec& spec) {
  const size_t rank = spec.input_shape.size();
  require(rank >= 1 && rank <= kMaxRank, "transpose: rank must be 1..6, got " + to_string(spec.input_shape));
  require(spec.perm.size() == rank, "transpose: perm has " + std::to_string(spec.perm.size()) + " entries for " +
                                        to_string(spec.input_shape));
  std::vector<bool> seen(rank, false);
  Shape out;
  for (int d : spec.perm) {
    require(d >= 0 && static_cast<size_t>(d) < rank && !seen[static_cast<size_t>(d)],
            "transpose: perm is not a permutation of the dims of " + to_string(spec.input_shape));
    seen[static_cast<size_t>(d)] = true;
    out.push_back(spec.input_shape[static_cast<size_t>(d)]);
  }
  return out;
}

Kernel transpose(const TransposeSpec& spec, const Halide::Target& target) {
  const Shape out_shape = transpose_output_shape(spec);
  const int rank = static_cast<int>(out_shape.size());
  Kernel kernel;
  require(spec.epilogue.empty() || spec.element_type == Halide::Float(32), "transpose: an epilogue needs float32");
  Halide::ImageParam x = dense_input("input", spec.input_shape, spec.element_type);
  kernel.inputs = {x};

  /* algorithm */
  // Output dim k (outermost first) is Halide var rank-1-k and reads input dim perm[k].
  std::vector<Var> vars = make_vars(static_cast<size_t>(rank));
  const std::vector<Halide::Expr> nchw = outermost_first(vars);
  std::vector<Var> in_vars = make_vars(static_cast<size_t>(rank), "i");
  std::vector<Halide::Expr> source(static_cast<size_t>(rank));  // input coordinates, innermost first
  for (int k = 0; k < rank; ++k) source[static_cast<size_t>(rank - 1 - spec.perm[static_cast<size_t>(k)])] = nchw[static_cast<size_t>(k)];
  Halide::Func staged("staged"), output("transpose");
  staged(in_vars) = x(in_vars);  // inlined unless the tiled schedule stages it
  output(vars) = apply_epilogue(staged(source), spec.epilogue, nchw, out_shape, kernel.inputs);
  constrain_output(output, out_shape);

  /* schedule */
  // a: y's innermost dim; b: the output var that walks x's innermost dim.
  auto input_dim_of = [&](int v) { return spec.perm[static_cast<size_t>(rank - 1 - v)]; };
  const int a = innermost_var(out_shape, [](int) { return true; });
  int innermost_input_dim = -1;
  for (int d = rank; d-- > 0;)
    if (spec.input_shape[static_cast<size_t>(d)] > 1) {
      innermost_input_dim = d;
      break;
    }
  const int b = innermost_var(out_shape, [&](int v) { return input_dim_of(v) == innermost_input_dim; });
  const std::string epilogue = spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue);
  if (a == b) {  // also a single element
    const bool rows_adjacent = rank >= 2 && input_dim_of(0) == rank - 1 && input_dim_of(1) == rank - 2;
    kernel.schedule = "transpose copy: " + schedule_pointwise(output, out_shape, rows_adjacent, target) + epilogue;
    kernel.output = output;
    return kernel;
  }
  const int64_t extent_a = out_shape[static_cast<size_t>(rank - 1 - a)];
  const int64_t extent_b = out_shape[static_cast<size_t>(rank - 1 - b)];
  const Var va = vars[static_cast<size_t>(a)], vb = vars[static_cast<size_t>(b)];
  if (target.has_gpu_feature()) {
    // A tile of a x b per block: read into shared memory with threads along b
    // (x's innermost dim), written with threads along a (y's), so that both
    // are coalesced. A short side (an RGB image) lengthens the other.
    int tile_b = gpu_threads_for(extent_b, 1, kGpuTileSide);
    const int tile_a = gpu_threads_for(extent_a, 1, kGpuTileThreads / tile_b);
    tile_b = gpu_threads_for(extent_b, 1, kGpuTileThreads / tile_a);
    Var ao("ao"), ai("ai"), bo("bo"), bi("bi");
    output.split(va, ao, ai, tile_a, Halide::TailStrategy::GuardWithIf)
        .split(vb, bo, bi, tile_b, Halide::TailStrategy::GuardWithIf);
    std::vector<Halide::VarOrRVar> order{ai, bi, ao, bo};
    for (int v = 0; v < rank; ++v)
      if (v != a && v != b) order.push_back(vars[static_cast<size_t>(v)]);
    output.reorder(order);
    // All tiles in one grid dim (y and z hold at most 65535 blocks).
    Var tile = ao;
    for (size_t i = 3; i < order.size(); ++i) {
      Var fused(tile.name() + "_" + order[i].name());
      output.fuse(tile, order[i].var, fused);
      tile = fused;
    }
    output.gpu_blocks(tile).gpu_threads(ai, bi);
    const Var staged_a = in_vars[static_cast<size_t>(rank - 1 - input_dim_of(a))];
    const Var staged_b = in_vars[static_cast<size_t>(rank - 1 - input_dim_of(b))];
    std::vector<Halide::VarOrRVar> staged_order{staged_b, staged_a};
    for (const Var& v : in_vars)
      if (v.name() != staged_a.name() && v.name() != staged_b.name()) staged_order.push_back(v);
    // Rows of tile_b + 1: the writes' column reads hit distinct banks.
    staged.compute_at(output, tile)
        .store_in(Halide::MemoryType::GPUShared)
        .bound_storage(staged_b, tile_b + 1)
        .reorder(staged_order)
        .gpu_threads(staged_b, staged_a);
    kernel.schedule = "transpose gpu: " + std::to_string(tile_a) + "x" + std::to_string(tile_b) +
                      " tiles through shared memory, coalesced reads and writes" + epilogue;
    kernel.output = output;
    return kernel;
  }
  if (extent_a <= kMaxInterleaved || extent_b <= kMaxInterleaved) {
    // The short dim unrolled whole, inside vectors along the other.
    const bool a_short = extent_a <= kMaxInterleaved;
    const Var whole = a_short ? va : vb, along = a_short ? vb : va;
    const int64_t whole_extent = a_short ? extent_a : extent_b;
    const int lanes = lanes_for_extent(a_short ? extent_b : extent_a, native_lanes(target));
    order_and_parallelise(output, {whole, along}, vars, {a, b}, out_shape);
    output.bound(whole, 0, static_cast<int>(whole_extent)).unroll(whole).vectorize(along, lanes);
    kernel.schedule = "transpose interleaved: " + std::to_string(whole_extent) + " unrolled x vec" +
                      std::to_string(lanes) + ", parallel(outer dims) in tasks" + epilogue;
    kernel.output = output;
    return kernel;
  }
  const int tile_lanes = std::min(native_lanes(target), kMaxTileLanes);
  const int lanes_a = lanes_for_extent(extent_a, tile_lanes), lanes_b = lanes_for_extent(extent_b, tile_lanes);
  Var ao("ao"), ai("ai"), bo("bo"), bi("bi");
  output.split(va, ao, ai, lanes_a).split(vb, bo, bi, lanes_b);
  if (!order_and_parallelise(output, {ai, bi, ao, bo}, vars, {a, b}, out_shape))
    parallel_in_tasks(output, bo, (extent_b + lanes_b - 1) / lanes_b, extent_a * lanes_b);
  output.vectorize(ai).unroll(bi);
  const Var staged_a = in_vars[static_cast<size_t>(rank - 1 - input_dim_of(a))];
  const Var staged_b = in_vars[static_cast<size_t>(rank - 1 - input_dim_of(b))];
  staged.compute_at(output, ao).vectorize(staged_b).unroll(staged_a);
  kernel.schedule = "transpose tiled: " + std::to_string(lanes_a) + "x" + std::to_string(lanes_b) +
                    " tiles staged, parallel(outer dims) in tasks" + epilogue;
  kernel.output = output;
  return kernel;
}

}  // namespace aotc::gen
