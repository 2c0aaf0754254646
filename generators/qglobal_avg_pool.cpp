#include "generators/qglobal_avg_pool.h"

namespace aotc::gen {

Kernel qglobal_avg_pool(const QGlobalAvgPoolSpec& spec, const Halide::Target& target) {
  require(spec.input_shape.size() == 4, "qglobal_avg_pool: input must be NCHW, got " + to_string(spec.input_shape));
  require(spec.type == Halide::Int(8) || spec.type == Halide::UInt(8), "qglobal_avg_pool: int8 or uint8 only");
  const Shape out_shape{spec.input_shape[0], spec.input_shape[1], 1, 1};

  Kernel kernel;
  Halide::ImageParam input = dense_input("input", spec.input_shape, spec.type);
  kernel.inputs = {input};

  /* algorithm */
  Halide::Var x("x"), y("y"), c("c"), n("n");
  Halide::RDom r(0, static_cast<int>(spec.input_shape[3]), 0, static_cast<int>(spec.input_shape[2]), "r");
  Halide::Func sum("sum");
  sum(c, n) = Halide::cast<int32_t>(0);
  sum(c, n) += Halide::cast<int32_t>(input(r.x, r.y, c, n)) - static_cast<int32_t>(spec.in_zero);
  const Halide::Expr scaled = Halide::cast<int32_t>(Halide::round(Halide::cast<float>(sum(c, n)) * spec.multiplier));
  const int lowest = spec.type.is_int() ? -128 : 0;
  Halide::Func output("qglobal_avg_pool");
  output(x, y, c, n) =
      Halide::cast(spec.type, Halide::clamp(scaled + static_cast<int32_t>(spec.out_zero), lowest, lowest + 255));
  constrain_output(output, out_shape);

  /* schedule */
  const int lanes = lanes_for_extent(spec.input_shape[1], native_lanes(target));
  output.bound(x, 0, 1).bound(y, 0, 1).vectorize(c, lanes, Halide::TailStrategy::ShiftInwards);
  sum.compute_at(output, c).vectorize(c);
  sum.update().reorder(c, r.x, r.y).vectorize(c);
  kernel.schedule = "qglobal_avg_pool: channels vectorised (" + std::to_string(lanes) + " int32 lanes)";
  kernel.output = output;
  return kernel;
}

}  // namespace aotc::gen
