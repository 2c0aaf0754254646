// ONNX Resize's sampling matrices (compiler/frontends/onnx/onnx_resize.h), worked by
// hand from the reference's formulas; tests/onnx's conformance run checks them
// against ONNX's own data for every Resize case.
#include "frontends/onnx/onnx_resize.h"

#include <gtest/gtest.h>

#include <numeric>

#include "support/error.h"

namespace aotc::onnx_frontend {
namespace {

ResizeSampling sampling(const std::string& mode, const std::string& transform,
                        const std::string& nearest_mode = "round_prefer_floor") {
  ResizeSampling s;
  s.mode = mode;
  s.transform = transform;
  s.nearest_mode = nearest_mode;
  return s;
}

std::vector<double> row(const ResizeAxis& a, int64_t o) {
  return {a.weights.begin() + o * a.in, a.weights.begin() + (o + 1) * a.in};
}

TEST(OnnxResize, LinearHalfPixelRepeatsTheEdge) {
  // Sources -0.25, 0.25, 0.75, 1.25: past either end the edge element counts twice.
  const ResizeAxis a = resize_axis(2, 4, 2.0, sampling("linear", "half_pixel"), 0, 1);
  EXPECT_EQ(row(a, 0), (std::vector<double>{1, 0}));
  EXPECT_EQ(row(a, 1), (std::vector<double>{0.75, 0.25}));
  EXPECT_EQ(row(a, 2), (std::vector<double>{0.25, 0.75}));
  EXPECT_EQ(row(a, 3), (std::vector<double>{0, 1}));
  EXPECT_FALSE(a.identity());
}

TEST(OnnxResize, NearestRoundsHalvesAsItsModeSays) {
  // Asymmetric sources 0, 0.5, 1, 1.5 over an input of 2.
  const ResizeAxis floor_half = resize_axis(2, 4, 2.0, sampling("nearest", "asymmetric"), 0, 1);
  const ResizeAxis ceil_half = resize_axis(2, 4, 2.0, sampling("nearest", "asymmetric", "round_prefer_ceil"), 0, 1);
  EXPECT_EQ(row(floor_half, 1), (std::vector<double>{1, 0}));
  EXPECT_EQ(row(ceil_half, 1), (std::vector<double>{0, 1}));
  EXPECT_EQ(row(floor_half, 3), (std::vector<double>{0, 1}));  // 1.5 -> 1, then the edge
  EXPECT_EQ(row(ceil_half, 3), (std::vector<double>{0, 1}));
}

TEST(OnnxResize, EveryRowSumsToOne) {
  for (const std::string mode : {"nearest", "linear", "cubic"})
    for (const std::string transform :
         {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"})
      for (const double scale : {0.6, 1.7, 3.0}) {
        const auto out = static_cast<int64_t>(7 * scale);
        const ResizeAxis a = resize_axis(7, out, scale, sampling(mode, transform), 0, 1);
        for (int64_t o = 0; o < out; ++o) {
          const std::vector<double> r = row(a, o);
          EXPECT_NEAR(std::accumulate(r.begin(), r.end(), 0.0), 1.0, 1e-12) << mode << " " << transform << " " << scale;
        }
      }
}

TEST(OnnxResize, CubicAtWholePositionsIsTheIdentity) {
  ResizeSampling s = sampling("cubic", "half_pixel");
  EXPECT_TRUE(resize_axis(5, 5, 1.0, s, 0, 1).identity());
  EXPECT_TRUE(resize_keeps(5, 1.0, s, 0, 1));
  s.exclude_outside = true;
  EXPECT_TRUE(resize_axis(5, 5, 1.0, s, 0, 1).identity());
  EXPECT_TRUE(resize_keeps(5, 1.0, s, 0, 1));
}

TEST(OnnxResize, AScaleOfOneNeedNotKeepTheAxis) {
  // tf_half_pixel_for_nn samples output o at o + 0.5, which rounding up moves on.
  const ResizeSampling s = sampling("nearest", "tf_half_pixel_for_nn", "round_prefer_ceil");
  EXPECT_FALSE(resize_keeps(3, 1.0, s, 0, 1));
  EXPECT_FALSE(resize_axis(3, 3, 1.0, s, 0, 1).identity());
  EXPECT_TRUE(resize_keeps(1, 1.0, s, 0, 1));  // one element has nowhere else to go
}

TEST(OnnxResize, ExcludeOutsideDropsTapsPastTheEnds) {
  // Half-pixel source -0.25 for output 0: taps -2, -1, 0, 1; only 0 and 1 remain.
  ResizeSampling s = sampling("cubic", "half_pixel");
  s.exclude_outside = true;
  const std::vector<double> r = row(resize_axis(4, 8, 2.0, s, 0, 1), 0);
  EXPECT_EQ(r[2], 0);
  EXPECT_EQ(r[3], 0);
  EXPECT_NEAR(r[0] + r[1], 1.0, 1e-12);
  EXPECT_GT(r[0], r[1]);
}

TEST(OnnxResize, CropAndResizeMarksSamplesOutsideTheInput) {
  // roi [0.4, 1.2] of an input of 5: sources 1.6, 2.4 ... 4.8; past 4 is outside.
  const ResizeAxis a = resize_axis(5, 5, 1.0, sampling("linear", "tf_crop_and_resize"), 0.4, 1.2);
  EXPECT_FALSE(a.outside[0]);
  EXPECT_TRUE(a.outside[4]);
  EXPECT_TRUE(a.any_outside());
  EXPECT_EQ(row(a, 4), std::vector<double>(5, 0.0));
}

TEST(OnnxResize, UnknownNamesAreRefused) {
  for (const ResizeSampling& s : {sampling("area", "half_pixel"), sampling("linear", "tf_magic"),
                                  sampling("nearest", "asymmetric", "round_to_odd")}) {
    try {
      resize_axis(4, 8, 2.0, s, 0, 1);
      ADD_FAILURE() << s.mode << " " << s.transform << " " << s.nearest_mode << " was accepted";
    } catch (const UserError& e) {
      EXPECT_EQ(e.code(), ExitCode::kUnsupported);
    }
  }
}

}  // namespace
}  // namespace aotc::onnx_frontend
