#include "generators/depth_to_space.h"

#include "generators/epilogue.h"

namespace aotc::gen {
namespace {

// Blocks up to this are computed in unrolled column phases; larger ones (not
// seen in models) vectorise the output row directly, gathering.
constexpr int kMaxUnrolledBlock = 8;

}  // namespace

Shape depth_to_space_output_shape(const DepthToSpaceSpec& spec) {
  const Shape& in = spec.input_shape;
  require(in.size() == 4, "depth_to_space: input must be NCHW, got " + to_string(in));
  const int64_t b = spec.block;
  require(b >= 1 && in[1] % (b * b) == 0,
          "depth_to_space: block " + std::to_string(b) + " does not divide the channels of " + to_string(in) + " in b^2");
  return {in[0], in[1] / (b * b), in[2] * b, in[3] * b};
}

Kernel depth_to_space(const DepthToSpaceSpec& spec, const Halide::Target& target) {
  const Shape out_shape = depth_to_space_output_shape(spec);
  const int b = spec.block;
  const int channels = static_cast<int>(out_shape[1]);
  Kernel kernel;
  Halide::ImageParam input = dense_input("input", spec.input_shape);
  kernel.inputs = {input};

  /* algorithm */
  Halide::Var x("x"), y("y"), c("c"), n("n");
  Halide::Func output("depth_to_space");
  const Halide::Expr source_channel = ((y % b) * b + x % b) * channels + c;
  output(x, y, c, n) = apply_epilogue(input(x / b, y / b, source_channel, n), spec.epilogue, {n, c, y, x}, out_shape,
                                      kernel.inputs);
  constrain_output(output, out_shape);

  /* schedule */
  if (target.has_gpu_feature()) {
    // A thread per output value, warps along output rows (coalesced writes;
    // the reads of b neighbouring threads alternate between b planes).
    const int columns = gpu_threads_for(out_shape[3], 8, 32);
    schedule_gpu_rows(output, x, y, c, n, columns);
    kernel.schedule = "depth_to_space block " + std::to_string(b) + " gpu: one output per thread, " +
                      std::to_string(columns) + "x4 threads per block" +
                      (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
    kernel.output = output;
    return kernel;
  }
  const int native = native_lanes(target);
  std::string description;
  if (b <= kMaxUnrolledBlock) {
    Halide::Var q("q"), j("j");
    const int lanes = lanes_for_extent(spec.input_shape[3], native);
    output.split(x, q, j, b).unroll(j);
    if (lanes > 1) output.vectorize(q, lanes);
    description = std::to_string(b) + " column phases unrolled, vec" + std::to_string(lanes) + " dense reads";
  } else {
    const int lanes = lanes_for_extent(out_shape[3], native);
    if (lanes > 1) output.vectorize(x, lanes);
    description = "vec" + std::to_string(lanes);
  }
  Halide::Var yc("yc"), tasks("tasks");
  output.fuse(y, c, yc).fuse(yc, n, tasks);
  const std::string parallel =
      parallel_in_tasks(output, tasks, out_shape[0] * out_shape[1] * out_shape[2], out_shape[3]);
  kernel.schedule = "depth_to_space block " + std::to_string(b) + ": " + description + ", rows " + parallel +
                    (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
  kernel.output = output;
  return kernel;
}

}  // namespace aotc::gen
