#include "generators/layout.h"

#include "generators/transpose.h"

namespace aotc::gen {
namespace {

bool to_blocked(const LayoutSpec& spec) { return spec.conversion == LayoutSpec::Conversion::kNchwToBlocked; }

// [N*C/B, B, H*W]: NCHW; [N*C/B, H*W, B]: NCHWc.
Shape nchw_view(const LayoutSpec& spec) {
  require(spec.nchw.size() == 4 && spec.block >= 1 && spec.nchw[1] % spec.block == 0,
          "layout: needs [N, C, H, W] with C a multiple of the block, got " + to_string(spec.nchw));
  return {spec.nchw[0] * spec.nchw[1] / spec.block, spec.block, spec.nchw[2] * spec.nchw[3]};
}

Shape blocked_view(const LayoutSpec& spec) {
  const Shape v = nchw_view(spec);
  return {v[0], v[2], v[1]};
}

}  // namespace

Shape layout_input_view(const LayoutSpec& spec) { return to_blocked(spec) ? nchw_view(spec) : blocked_view(spec); }
Shape layout_output_view(const LayoutSpec& spec) { return to_blocked(spec) ? blocked_view(spec) : nchw_view(spec); }

Kernel convert_layout(const LayoutSpec& spec, const Halide::Target& target) {
  return transpose({layout_input_view(spec), {0, 2, 1}, {}}, target);
}

std::vector<float> convert_layout_on_host(const LayoutSpec& spec, const std::vector<float>& data) {
  const Shape in = layout_input_view(spec);
  require(static_cast<int64_t>(data.size()) == num_elements(in), "layout: data of the wrong size");
  std::vector<float> out(data.size());
  for (int64_t i = 0; i < in[0]; ++i)
    for (int64_t j = 0; j < in[1]; ++j)
      for (int64_t k = 0; k < in[2]; ++k)
        out[static_cast<size_t>((i * in[2] + k) * in[1] + j)] = data[static_cast<size_t>((i * in[1] + j) * in[2] + k)];
  return out;
}

}  // namespace aotc::gen
