#include "generators/qadd.h"

namespace aotc::gen {

Kernel qadd(const QAddSpec& spec, const Halide::Target& target) {
  require(!spec.shape.empty() && spec.shape.size() <= kMaxRank, "qadd: rank must be 1..6, got " + to_string(spec.shape));
  require(spec.type == Halide::Int(8) || spec.type == Halide::UInt(8), "qadd: int8 or uint8 only");
  const int64_t lowest = spec.type.is_int() ? -128 : 0;
  require(spec.min <= spec.max && spec.min >= lowest && spec.max <= lowest + 255, "qadd: saturation bounds outside the type");

  Kernel kernel;
  Halide::ImageParam a = dense_input("a", spec.shape, spec.type), b = dense_input("b", spec.shape, spec.type);
  kernel.inputs = {a, b};

  /* algorithm */
  std::vector<Halide::Var> vars = make_vars(spec.shape.size());
  // fma(x, ratio, addend) rounded once to float32: x * ratio is exact in double.
  const auto fused = [](const Halide::Expr& x, float ratio, const Halide::Expr& addend) {
    return Halide::cast<float>(Halide::cast<double>(x) * Halide::Expr(static_cast<double>(ratio)) + Halide::cast<double>(addend));
  };
  const auto shifted = [&](const Halide::ImageParam& x) { return Halide::cast<int32_t>(x(vars)) + spec.shift; };
  const Halide::Expr partial = fused(shifted(b), spec.b_ratio, Halide::Expr(spec.offset));
  Halide::Expr sum = Halide::cast<int32_t>(Halide::strict_float(Halide::round(fused(shifted(a), spec.a_ratio, partial)))) -
                     spec.shift;  // ties to even
  if (spec.fixed_point) {
    const auto scaled = [&](const Halide::ImageParam& x, int k) {
      return multiply_by_quantized_multiplier((Halide::cast<int32_t>(x(vars)) + spec.offsets[k]) << 20,
                                              spec.multipliers[k], spec.shifts[k]);
    };
    sum = multiply_by_quantized_multiplier(scaled(a, 0) + scaled(b, 1), spec.multipliers[2], spec.shifts[2]) +
          spec.offsets[2];
  }
  Halide::Func output("qadd");
  output(vars) = Halide::cast(spec.type, Halide::clamp(sum, static_cast<int32_t>(spec.min), static_cast<int32_t>(spec.max)));
  constrain_output(output, spec.shape);

  /* schedule */
  kernel.schedule = "qadd: " + schedule_pointwise(output, spec.shape, true, target);
  kernel.output = output;
  return kernel;
}

}  // namespace aotc::gen
