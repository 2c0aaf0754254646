#include "generators/qlookup.h"

namespace aotc::gen {

Kernel qlookup(const QLookupSpec& spec, const Halide::Target& target) {
  require(!spec.shape.empty() && spec.shape.size() <= kMaxRank, "qlookup: rank must be 1..6, got " + to_string(spec.shape));
  for (const Halide::Type& t : {spec.in_type, spec.out_type})
    require(t == Halide::Int(8) || t == Halide::UInt(8), "qlookup: int8 or uint8 only");
  require(spec.table.size() == 256, "qlookup: the table needs 256 entries");

  Kernel kernel;
  Halide::ImageParam x = dense_input("input", spec.shape, spec.in_type);
  kernel.inputs = {x};

  /* algorithm */
  Halide::Buffer<int32_t> table(256, "table");
  for (int i = 0; i < 256; ++i) table(i) = static_cast<int32_t>(spec.table[static_cast<size_t>(i)]);
  std::vector<Halide::Var> vars = make_vars(spec.shape.size());
  const int lowest = spec.in_type.is_int() ? -128 : 0;
  Halide::Func output("qlookup");
  output(vars) = Halide::cast(spec.out_type, table(Halide::cast<int32_t>(x(vars)) - lowest));
  constrain_output(output, spec.shape);

  /* schedule */
  kernel.schedule = "qlookup: " + schedule_pointwise(output, spec.shape, true, target);
  kernel.output = output;
  return kernel;
}

}  // namespace aotc::gen
