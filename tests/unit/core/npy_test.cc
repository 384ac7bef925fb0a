// The .npy reader of `vkqc run --input` (tools/vkqc/npy.cc): round trips, and the hostile headers
// its fuzz target (tests/fuzz/npy_fuzz.cc) found or could find.
#include "tools/vkqc/npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace vkqc {
namespace {

std::vector<uint8_t> Npy(const std::string& header, size_t data_bytes, int version = 1) {
  std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(version), 0};
  const uint32_t n = uint32_t(header.size());
  b.push_back(uint8_t(n));
  b.push_back(uint8_t(n >> 8));
  if (version >= 2) {
    b.push_back(uint8_t(n >> 16));
    b.push_back(uint8_t(n >> 24));
  }
  b.insert(b.end(), header.begin(), header.end());
  b.resize(b.size() + data_bytes, 0x3f);
  return b;
}

Result<NpyArray> Parse(const std::vector<uint8_t>& b) { return ParseNpy(b.data(), b.size(), "t.npy"); }

TEST(Npy, ParsesEveryDtypeAndVersion) {
  auto a = Parse(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", 24));
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(NpyToFloats(*a).size(), 6u);
  a = Parse(Npy("{'descr': '<u1', 'fortran_order': False, 'shape': (5,), }", 5, 2));
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->descr, "|u1");
  a = Parse(Npy("{'descr': '<f2', 'fortran_order': False, 'shape': (), }", 2));
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->NumElements(), 1);
  EXPECT_EQ(NpyToFloats(*a)[0], 1.8115234375f);  // 0x3f3f as fp16
  a = Parse(Npy("{'descr': '<i4', 'fortran_order': False, 'shape': (4, 0, 999999999999), }", 0));
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->NumElements(), 0);
}

TEST(Npy, RejectsHostileHeaders) {
  // Found by the fuzz target: dimensions whose product overflowed int64 (undefined behaviour).
  auto a = Parse(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (999999999999, 999999999999, 5), }", 8));
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("too many elements"), std::string::npos) << a.error().message;
  a = Parse(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1234567890123,), }", 8));
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("dimension too large"), std::string::npos) << a.error().message;
  a = Parse(Npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8));
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("Fortran"), std::string::npos) << a.error().message;
  EXPECT_FALSE(Parse(Npy("{'descr': '<f4', 'shape': (3,), }", 8)).ok());  // 8 bytes for 12
  EXPECT_FALSE(Parse(Npy("{'descr': '<f8', 'shape': (1,), }", 8)).ok());
  EXPECT_FALSE(Parse(Npy("{'descr': '<f4', 'shape': 3, }", 12)).ok());
  EXPECT_FALSE(Parse(Npy("{'descr: '<f4', 'shape': (3,) }", 12)).ok());
  std::vector<uint8_t> cut = Npy("{'descr': '<f4', 'shape': (3,), }", 12);
  cut.resize(12);
  EXPECT_FALSE(Parse(cut).ok());
  // A header of 1 MiB (version 2): parsed without recursion (std::regex overflowed the stack on
  // long headers).
  const std::string pad(1 << 20, ' ');
  a = Parse(Npy("{'descr': '" + std::string(1 << 20, 'x') + "', 'shape': (1,), }" + pad, 4, 2));
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("unsupported dtype"), std::string::npos);
}

}  // namespace
}  // namespace vkqc
