#include <gtest/gtest.h>
TEST(AscendCommunication, Placeholder) {}
