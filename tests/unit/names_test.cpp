#include <gtest/gtest.h>

#include "support/names.h"

namespace aotc {
namespace {

TEST(Names, CIdentifierReplacesWhatCIdentifiersCannotHold) {
  EXPECT_EQ(c_identifier("resnet18"), "resnet18");
  EXPECT_EQ(c_identifier("mobilenet-v2.1"), "mobilenet_v2_1");
  EXPECT_EQ(c_identifier("3d"), "m_3d");
  EXPECT_EQ(c_identifier(""), "m_");
}

TEST(Names, CStringLiteralEscapesQuotesBackslashesAndNewlines) {
  EXPECT_EQ(c_string_literal("conv1"), "\"conv1\"");
  EXPECT_EQ(c_string_literal("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
}

TEST(Names, KernelSymbolIsTheFamilyAndADigestOfDescriptionAndTarget) {
  const std::string conv = "conv2d (1x3x8x8, 4x3x3x3) -> 1x4x8x8 {stride=[1,1]}";
  const std::string symbol = kernel_symbol("conv2d", conv, "x86-64-linux-avx2");
  EXPECT_TRUE(symbol.starts_with("aotc_conv2d_")) << symbol;
  ASSERT_EQ(symbol.size(), std::string("aotc_conv2d_").size() + 16) << symbol;
  EXPECT_EQ(symbol.find_first_not_of("0123456789abcdef", 12), std::string::npos) << symbol;
  // Whichever model or variant asks: the same kernel, the same symbol.
  EXPECT_EQ(kernel_symbol("conv2d", conv, "x86-64-linux-avx2"), symbol);
  // Another computation, or the same one for another target, is another symbol.
  EXPECT_NE(kernel_symbol("conv2d", conv + " relu", "x86-64-linux-avx2"), symbol);
  EXPECT_NE(kernel_symbol("conv2d", conv, "x86-64-linux-avx2-avx512"), symbol);
  EXPECT_EQ(kernel_symbol("max-pool", "x", "t").rfind("aotc_max_pool_", 0), 0u);
}

}  // namespace
}  // namespace aotc
