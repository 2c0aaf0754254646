#include "generators/subsample.h"

namespace aotc::gen {

Shape subsample_output_shape(const SubsampleSpec& spec) {
  const Shape& x = spec.input_shape;
  require(x.size() == 4 && num_elements(x) > 0, "subsample: the input must be a non-empty [N, C, H, W]");
  require(spec.stride[0] >= 1 && spec.stride[1] >= 1, "subsample: strides must be positive");
  return {x[0], x[1], (x[2] + spec.stride[0] - 1) / spec.stride[0], (x[3] + spec.stride[1] - 1) / spec.stride[1]};
}

Kernel subsample(const SubsampleSpec& spec, const Halide::Target& target) {
  const Shape out_shape = subsample_output_shape(spec);
  Kernel kernel;
  Halide::ImageParam x = dense_input("input", spec.input_shape);
  kernel.inputs = {x};

  /* algorithm */
  Halide::Var w("w"), h("h"), c("c"), n("n");
  Halide::Func output("subsample");
  output(w, h, c, n) = x(w * spec.stride[1], h * spec.stride[0], c, n);
  constrain_output(output, out_shape);

  /* schedule */
  // Rows are not fused: input and output rows differ in length.
  kernel.schedule = "subsample: " + schedule_pointwise(output, out_shape, false, target);
  kernel.output = output;
  return kernel;
}

}  // namespace aotc::gen
