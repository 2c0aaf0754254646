#include "generators/quantize.h"

namespace aotc::gen {
namespace {

// The value of `table` at the index of dim `axis` in `nchw`, or its one value.
template <typename T>
Halide::Expr per_channel(const std::vector<T>& table, int axis, const std::vector<Halide::Expr>& nchw,
                         Halide::Type type, const std::string& name) {
  if (axis < 0) return Halide::cast(type, Halide::Expr(static_cast<double>(table[0])));
  Halide::Buffer<> values(type, static_cast<int>(table.size()), name);
  for (size_t i = 0; i < table.size(); ++i) {
    if (type.is_float())
      values.as<float>()(static_cast<int>(i)) = static_cast<float>(table[i]);
    else
      values.as<int32_t>()(static_cast<int>(i)) = static_cast<int32_t>(table[i]);
  }
  return values(nchw[static_cast<size_t>(axis)]);
}

}  // namespace

Kernel quantize(const QuantizeSpec& spec, const Halide::Target& target) {
  const bool quantizing = spec.kind == QuantizeSpec::Kind::kQuantize;
  require(!spec.shape.empty() && spec.shape.size() <= kMaxRank, "quantize: rank must be 1..6, got " + to_string(spec.shape));
  require(spec.integer_type == Halide::Int(8) || spec.integer_type == Halide::UInt(8), "quantize: int8 or uint8 only");
  const size_t channels = spec.axis < 0 ? 1 : static_cast<size_t>(spec.shape.at(static_cast<size_t>(spec.axis)));
  require(spec.scale.size() == channels && spec.zero_point.size() == channels,
          "quantize: one scale and zero point per channel");

  Kernel kernel;
  Halide::ImageParam x =
      dense_input("input", spec.shape, quantizing ? Halide::Float(32) : spec.integer_type);
  kernel.inputs = {x};

  /* algorithm */
  std::vector<Halide::Var> vars = make_vars(spec.shape.size());
  const std::vector<Halide::Expr> nchw = outermost_first(vars);
  const Halide::Expr scale = per_channel(spec.scale, spec.axis, nchw, Halide::Float(32), "scale");
  const Halide::Expr zero_point = per_channel(spec.zero_point, spec.axis, nchw, Halide::Int(32), "zero_point");
  Halide::Func output(quantizing ? "quantize" : "dequantize");
  if (quantizing) {
    // strict_float: x / scale stays an IEEE division (no reciprocal), as ONNX Runtime and TFLite
    // compute it. Ties away from zero: the quotient's fraction (exact) decides; adding 0.5 and
    // flooring would round 0.49999997 up.
    const Halide::Expr quotient = x(vars) / scale;
    const Halide::Expr whole = Halide::trunc(quotient);
    const Halide::Expr scaled = Halide::strict_float(
        spec.ties_away_from_zero
            ? whole + Halide::select(Halide::abs(quotient - whole) >= 0.5f,
                                     Halide::select(quotient < 0, -1.0f, 1.0f), 0.0f)
            : Halide::round(quotient));  // ties to even
    const Halide::Expr q = Halide::select(Halide::is_nan(scaled), 0.0f, scaled) + Halide::cast<float>(zero_point);
    const Halide::Expr lo = spec.integer_type.min(), hi = spec.integer_type.max();
    output(vars) = Halide::cast(spec.integer_type,
                                Halide::clamp(q, Halide::cast<float>(lo), Halide::cast<float>(hi)));
  } else {
    output(vars) = Halide::cast<float>(Halide::cast<int32_t>(x(vars)) - zero_point) * scale;
  }
  constrain_output(output, spec.shape);

  /* schedule */
  kernel.schedule = std::string(quantizing ? "quantize" : "dequantize") + ": " +
                    schedule_pointwise(output, spec.shape, spec.axis < 0, target);
  kernel.output = output;
  return kernel;
}

}  // namespace aotc::gen
