#include "generators/layout.h"

namespace aotc::gen {

Shape layout_output_shape(const LayoutSpec& spec) {
  const Shape& s = spec.input_shape;
  require(s.size() == 4, "layout: needs a 4-D tensor, got " + to_string(s));
  return spec.conversion == LayoutSpec::Conversion::kNchwToNhwc ? Shape{s[0], s[2], s[3], s[1]}
                                                                : Shape{s[0], s[3], s[1], s[2]};
}

Kernel convert_layout(const LayoutSpec& spec, const Halide::Target& target) {
  const Shape out_shape = layout_output_shape(spec);
  const bool to_nhwc = spec.conversion == LayoutSpec::Conversion::kNchwToNhwc;
  Kernel kernel;
  Halide::ImageParam x = dense_input("input", spec.input_shape);
  kernel.inputs = {x};

  /* algorithm */
  // In Halide's order the input is (w, h, c, n) or (c, w, h, n); the output
  // the other. `a` is the output's innermost dim, `b` the input's.
  Halide::Var c("c"), w("w"), h("h"), n("n");
  Halide::Func staged("staged"), output("layout");
  if (to_nhwc) {
    staged(w, h, c, n) = x(w, h, c, n);
    output(c, w, h, n) = staged(w, h, c, n);
  } else {
    staged(c, w, h, n) = x(c, w, h, n);
    output(w, h, c, n) = staged(c, w, h, n);
  }
  constrain_output(output, out_shape);

  /* schedule */
  const Halide::Var a = to_nhwc ? c : w, b = to_nhwc ? w : c;
  const int64_t channels = to_nhwc ? spec.input_shape[1] : spec.input_shape[3];
  const int64_t width = to_nhwc ? spec.input_shape[3] : spec.input_shape[2];
  const int native = native_lanes(target);
  const int a_lanes = lanes_for_extent(to_nhwc ? channels : width, native);
  const int b_lanes = lanes_for_extent(to_nhwc ? width : channels, native);
  Halide::Var ao("ao"), ai("ai"), bo("bo"), bi("bi"), rows("rows");
  output.tile(a, b, ao, bo, ai, bi, a_lanes, b_lanes).reorder(ai, bi, ao, bo, h, n).fuse(h, n, rows).parallel(rows);
  if (a_lanes > 1) output.vectorize(ai);
  output.unroll(bi);
  staged.compute_at(output, ao);
  if (b_lanes > 1) staged.vectorize(b).unroll(a);
  kernel.schedule = std::string(to_nhwc ? "nchw->nhwc" : "nhwc->nchw") + ": tiles " + std::to_string(a_lanes) + "x" +
                    std::to_string(b_lanes) + " staged, parallel(n*h)";
  kernel.output = output;
  return kernel;
}

}  // namespace aotc::gen
