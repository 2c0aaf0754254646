#include "generators/concat.h"

#include "generators/epilogue.h"

namespace aotc::gen {

Shape concat_output_shape(const ConcatSpec& spec) {
  require(!spec.input_shapes.empty(), "concat: needs at least one input");
  const Shape& first = spec.input_shapes[0];
  require(spec.axis >= 0 && static_cast<size_t>(spec.axis) < first.size(),
          "concat: axis " + std::to_string(spec.axis) + " is out of range for " + to_string(first));
  Shape out = first;
  out[static_cast<size_t>(spec.axis)] = 0;
  for (const Shape& s : spec.input_shapes) {
    bool compatible = s.size() == first.size();
    for (size_t d = 0; compatible && d < s.size(); ++d) compatible = d == static_cast<size_t>(spec.axis) || s[d] == first[d];
    require(compatible, "concat: input " + to_string(s) + " does not match " + to_string(first) + " off the axis");
    out[static_cast<size_t>(spec.axis)] += s[static_cast<size_t>(spec.axis)];
  }
  return out;
}

Kernel concat(const ConcatSpec& spec, const Halide::Target& target) {
  const Shape out_shape = concat_output_shape(spec);
  const size_t rank = out_shape.size();
  const size_t axis_dim = rank - 1 - static_cast<size_t>(spec.axis);  // in Halide's order
  Kernel kernel;
  for (size_t i = 0; i < spec.input_shapes.size(); ++i)
    kernel.inputs.push_back(dense_input("input" + std::to_string(i), spec.input_shapes[i]));
  const size_t inputs = kernel.inputs.size();
  const size_t first_operand = add_epilogue_operands(spec.epilogue, out_shape, kernel.inputs);

  /* algorithm */
  std::vector<Halide::Var> vars = make_vars(rank);
  Halide::Func output("concat");
  output(vars) = Halide::undef<float>();
  // Input i fills [offset, offset + extent) along the axis: one update each,
  // its RDom running over the axis.
  std::vector<Halide::RDom> slices;
  int64_t offset = 0;
  for (size_t i = 0; i < inputs; ++i) {
    const int64_t extent = spec.input_shapes[i][static_cast<size_t>(spec.axis)];
    slices.emplace_back(0, static_cast<int>(extent), "slice" + std::to_string(i));
    std::vector<Halide::Expr> at(vars.begin(), vars.end()), source(vars.begin(), vars.end());
    at[axis_dim] = slices.back().x + static_cast<int>(offset);
    source[axis_dim] = slices.back().x;
    std::vector<Halide::Expr> nchw(at.rbegin(), at.rend());
    output(at) = epilogue_expr(kernel.inputs[i](source), spec.epilogue, nchw, kernel.inputs, first_operand);
    offset += extent;
  }
  constrain_output(output, out_shape);

  /* schedule */
  // The loops of copy i: the output's dims, the axis's being the slice's RVar.
  auto copy_loops = [&](size_t i) {
    std::vector<Halide::VarOrRVar> loops(vars.begin(), vars.end());
    loops[axis_dim] = Halide::RVar(slices[i].x);
    return loops;
  };
  if (target.has_gpu_feature()) {
    // Each copy a kernel of one thread per element of its input: all its loops
    // fused (the axis's RVar among them, so the fused loop is an RVar too).
    for (size_t i = 0; i < inputs; ++i) {
      Halide::Stage copy = output.update(static_cast<int>(i));
      const std::vector<Halide::VarOrRVar> loops = copy_loops(i);
      Halide::VarOrRVar all = loops[0];
      for (size_t d = 1; d < rank; ++d) {
        const std::string name = "fused" + std::to_string(d);
        const Halide::VarOrRVar fused =
            d >= axis_dim ? Halide::VarOrRVar(Halide::RVar(name)) : Halide::VarOrRVar(Halide::Var(name));
        copy.fuse(all, loops[d], fused);
        all = fused;
      }
      const int threads = gpu_threads_for(num_elements(spec.input_shapes[i]), 32, kGpuPointwiseThreads);
      Halide::RVar block("block"), thread("thread");
      copy.gpu_tile(all, block, thread, threads, Halide::TailStrategy::GuardWithIf);
    }
    kernel.schedule = "concat of " + std::to_string(inputs) + " along axis " + std::to_string(spec.axis) +
                      " gpu: one kernel per input, one element per thread, dims fused" +
                      (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
    kernel.output = output;
    return kernel;
  }
  // Each copy: the innermost dim vectorised, the outermost dim with more than
  // one iteration parallel in tasks (the slices of a copy are disjoint, so
  // Halide can prove an axis RDom race-free).
  const int native = native_lanes(target);
  for (size_t i = 0; i < inputs; ++i) {
    Halide::Stage copy = output.update(static_cast<int>(i));
    const std::vector<Halide::VarOrRVar> loops = copy_loops(i);
    const Shape& in = spec.input_shapes[i];
    const int lanes = lanes_for_extent(in.back(), native);
    // An update may not shift its last vector inwards, and rounding up (the
    // default) would write past the end: the tail is guarded.
    if (lanes > 1) copy.vectorize(loops[0], lanes, Halide::TailStrategy::GuardWithIf);
    for (size_t d = rank; d-- > 1;)
      if (in[rank - 1 - d] > 1) {
        int64_t inside = 1;  // elements per iteration of loop d
        for (size_t k = rank - d; k < rank; ++k) inside *= in[k];
        parallel_in_tasks(copy, loops[d], in[rank - 1 - d], inside);
        break;
      }
  }
  kernel.schedule = "concat of " + std::to_string(inputs) + " along axis " + std::to_string(spec.axis) +
                    ": one vectorised copy per input, parallel in tasks over the outermost dim" +
                    (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
  kernel.output = output;
  return kernel;
}

}  // namespace aotc::gen
