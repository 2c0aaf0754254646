// A table lookup from an 8-bit quantized tensor to another, the IR's qlookup (docs/int8.md):
//
//   out = table[in - lowest value of the input's type]
//
// The 256 entries are compiled in. Kernel inputs: (input, any rank 1..6); output of the same
// shape. Schedule: schedule_pointwise (kernel.h).
#pragma once

#include "generators/kernel.h"

namespace aotc::gen {

struct QLookupSpec {
  Shape shape;
  Halide::Type in_type = Halide::UInt(8), out_type = Halide::UInt(8);  // Int(8) or UInt(8)
  std::vector<int64_t> table;  // 256 values of out_type
};

Kernel qlookup(const QLookupSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
