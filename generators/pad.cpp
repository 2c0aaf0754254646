#include "generators/pad.h"

#include "generators/epilogue.h"

namespace aotc::gen {

Shape pad_output_shape(const PadSpec& spec) {
  const size_t rank = spec.input_shape.size();
  require(rank >= 1 && spec.pads.size() == 2 * rank,
          "pad: " + to_string(spec.input_shape) + " needs " + std::to_string(2 * rank) + " pads (begins, then ends)");
  Shape out = spec.input_shape;
  for (size_t d = 0; d < rank; ++d) {
    out[d] += spec.pads[d] + spec.pads[rank + d];
    require(out[d] >= 1, "pad: the pads of " + to_string(spec.input_shape) + " leave dim " + std::to_string(d) +
                             " empty");
  }
  return out;
}

Kernel pad(const PadSpec& spec, const Halide::Target& target) {
  const Shape out_shape = pad_output_shape(spec);
  const size_t rank = out_shape.size();
  Kernel kernel;
  Halide::ImageParam x = dense_input("input", spec.input_shape);
  kernel.inputs = {x};

  /* algorithm */
  Halide::Region bounds;  // Halide's order: innermost first
  for (size_t d = rank; d-- > 0;) bounds.push_back({0, static_cast<int>(spec.input_shape[d])});
  Halide::Func padded = Halide::BoundaryConditions::constant_exterior(x, spec.value, bounds);
  std::vector<Halide::Var> vars = make_vars(rank);
  std::vector<Halide::Expr> source;
  for (size_t i = 0; i < rank; ++i) source.push_back(vars[i] - static_cast<int>(spec.pads[rank - 1 - i]));
  Halide::Func output("pad");
  output(vars) = apply_epilogue(padded(source), spec.epilogue, outermost_first(vars), out_shape, kernel.inputs);
  constrain_output(output, out_shape);

  /* schedule */
  // Rows are not fused: input and output rows differ in length.
  kernel.schedule = "pad: " + schedule_pointwise(output, out_shape, false, target) +
                    (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
  kernel.output = output;
  return kernel;
}

}  // namespace aotc::gen
