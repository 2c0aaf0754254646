// Fused epilogues: the post-ops a node applies to every output element before
// it is stored, as one Halide expression. Shared by every generator, so a
// post-op means the same thing after any op.
#pragma once

#include <vector>

#include "generators/kernel.h"

namespace aotc::gen {

// Applies `epilogue` in order to `value`, the output element at coordinates
// `nchw` (outermost first, one Expr per dim of `output_shape`). Each post-op
// with operands appends their ImageParams to `params` (the kernel's inputs) in
// epilogue order: affine its scale then shift, [C] each, indexed by the
// channel nchw[1]; add, mul and prelu their operand, broadcast to the output
// shape. The operands are named after their post-op's position in the whole
// epilogue: `first_post_op` is that of epilogue[0] (a caller applying a longer
// epilogue one post-op at a time passes each one's, so names stay unique).
Halide::Expr apply_epilogue(Halide::Expr value, const std::vector<PostOpSpec>& epilogue,
                            const std::vector<Halide::Expr>& nchw, const Shape& output_shape,
                            std::vector<Halide::ImageParam>& params, size_t first_post_op = 0);

// The same in two steps, for kernels that compute their output in several
// definitions (concat): declare the operands once, then apply the epilogue in
// each definition. add_epilogue_operands returns the index of the first.
size_t add_epilogue_operands(const std::vector<PostOpSpec>& epilogue, const Shape& output_shape,
                             std::vector<Halide::ImageParam>& params, size_t first_post_op = 0);
Halide::Expr epilogue_expr(Halide::Expr value, const std::vector<PostOpSpec>& epilogue,
                           const std::vector<Halide::Expr>& nchw, const std::vector<Halide::ImageParam>& params,
                           size_t first_operand);

// The epilogue of a kernel that writes NCHWc: add and mul operands of the
// whole output are read in NCHWc, at `blocked` of `blocked_shape`; everything
// else (affine's vectors) at the logical coordinates `nchw` of `logical_shape`.
Halide::Expr apply_blocked_epilogue(Halide::Expr value, const std::vector<PostOpSpec>& epilogue,
                                    const std::vector<Halide::Expr>& blocked, const Shape& blocked_shape,
                                    const std::vector<Halide::Expr>& nchw, const Shape& logical_shape,
                                    std::vector<Halide::ImageParam>& params);

// "+relu+add" for schedule descriptions; empty for an empty epilogue.
std::string epilogue_suffix(const std::vector<PostOpSpec>& epilogue);

}  // namespace aotc::gen
