#include "generators/softmax.h"

#include <limits>

#include "generators/epilogue.h"

namespace aotc::gen {

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
