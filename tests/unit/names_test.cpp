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

}  // namespace
}  // namespace aotc
