// safetensors reader/writer: round trip and one Rejects... test per header check.
#include "compiler/graph/safetensors.h"

#include <algorithm>

#include "compiler/graph/vkqg_io.h"
#include "graph_test_util.h"

namespace vkqc {
namespace {

using testing_util::FailsWith;
using testing_util::MakeTempDir;
using testing_util::ToBytes;

constexpr const char* kOrigin = "w.safetensors";

// [u64 header length][header][data], with `header_len` overriding the real length if >= 0.
std::vector<uint8_t> Raw(const std::string& header, std::vector<uint8_t> data,
                         int64_t header_len = -1) {
  const uint64_t n = header_len >= 0 ? static_cast<uint64_t>(header_len) : header.size();
  // Sized once and filled with copies: inserting into the 8-byte vector trips GCC 12's -Warray-bounds.
  std::vector<uint8_t> out(8 + header.size() + data.size());
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(n >> (8 * i));
  std::copy(header.begin(), header.end(), out.begin() + 8);
  std::copy(data.begin(), data.end(), out.begin() + 8 + int64_t(header.size()));
  return out;
}

Result<std::map<std::string, SafetensorsTensor>> Parse(std::vector<uint8_t> bytes) {
  return ParseSafetensors(std::make_shared<const std::vector<uint8_t>>(std::move(bytes)), kOrigin);
}

TEST(SafetensorsTest, RoundTrip) {
  const std::string path = MakeTempDir() + "/w.safetensors";
  std::vector<SafetensorsEntry> in = {
      {"a.i8", "I8", {3}, ToBytes(std::vector<int8_t>{-1, 2, -3})},
      {"b.f32", "F32", {2, 2}, ToBytes(std::vector<float>{1.5f, -2.0f, 3.25f, 0.0f})},
      {"c.u8", "U8", {1, 2}, {7, 250}},
      {"d.f64", "F64", {1}, ToBytes(std::vector<double>{0.125})},
      {"e.empty", "F16", {0, 4}, {}},
      {"f.scalar", "I32", {}, ToBytes(std::vector<int32_t>{-7})},
  };
  const std::map<std::string, size_t> elem = {{"I8", 1},  {"F32", 4}, {"U8", 1},
                                              {"F64", 8}, {"F16", 2}, {"I32", 4}};
  Status w = WriteSafetensors(path, in);
  ASSERT_TRUE(w.ok()) << w.error().message;
  auto bytes = ReadFileBytes(path);
  ASSERT_TRUE(bytes.ok());
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = header_len << 8 | (*bytes.value())[i];
  EXPECT_EQ(header_len % 8, 0u);

  auto r = ReadSafetensors(path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), in.size());
  for (const SafetensorsEntry& e : in) {
    SCOPED_TRACE(e.name);
    auto it = r->find(e.name);
    ASSERT_NE(it, r->end());
    EXPECT_EQ(it->second.dtype, e.dtype);
    EXPECT_EQ(it->second.shape, e.shape);
    const ir::ConstData& d = it->second.data;
    EXPECT_EQ(std::vector<uint8_t>(d.data(), d.data() + d.size), e.bytes);
    // Packed largest element size first: every tensor is aligned to its element size.
    EXPECT_EQ((d.offset - 8 - header_len) % elem.at(e.dtype), 0u);
  }
}

TEST(SafetensorsTest, IgnoresMetadata) {
  auto r = Parse(
      Raw(R"({"__metadata__":{"format":"pt"},"t":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})",
          {1, 2}));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->size(), 1u);
  EXPECT_EQ(r->at("t").data.data()[1], 2);
}

TEST(SafetensorsTest, WriterRejectsSizeMismatch) {
  const std::string path = MakeTempDir() + "/w.safetensors";
  EXPECT_TRUE(FailsWith(WriteSafetensors(path, {{"t", "F32", {3}, {0, 0, 0, 0}}}),
                        {path, "'t'", "4 bytes given", "12"}));
  EXPECT_TRUE(FailsWith(WriteSafetensors(path, {{"t", "Q7", {1}, {0}}}), {path, "'t'", "Q7"}));
}

TEST(SafetensorsTest, RejectsTooSmallFile) {
  EXPECT_TRUE(FailsWith(Parse({1, 0, 0}), {kOrigin, "too small"}));
}

TEST(SafetensorsTest, RejectsTruncatedFile) {
  const std::string path = MakeTempDir() + "/w.safetensors";
  ASSERT_TRUE(WriteSafetensors(path, {{"t", "F32", {4}, std::vector<uint8_t>(16, 1)}}).ok());
  auto bytes = ReadFileBytes(path);
  ASSERT_TRUE(bytes.ok());
  std::vector<uint8_t> cut = *bytes.value();
  cut.resize(cut.size() - 3);
  EXPECT_TRUE(FailsWith(Parse(cut), {kOrigin, "tensor 't'", "outside the data section"}));
  cut.resize(20);
  EXPECT_TRUE(FailsWith(Parse(cut), {kOrigin, "header length", "past the end"}));
}

TEST(SafetensorsTest, RejectsHeaderLengthPastEnd) {
  EXPECT_TRUE(
      FailsWith(Parse(Raw("{}", {}, 1000)), {kOrigin, "header length 1000", "past the end"}));
}

TEST(SafetensorsTest, RejectsHugeHeaderLength) {
  EXPECT_TRUE(FailsWith(Parse(Raw("{}", {}, int64_t{1} << 40)), {kOrigin, "100 MB"}));
}

TEST(SafetensorsTest, RejectsNonJsonHeader) {
  EXPECT_TRUE(FailsWith(Parse(Raw("{\"t\":", {})), {kOrigin, "not a JSON object"}));
  EXPECT_TRUE(FailsWith(Parse(Raw("[1,2]", {})), {kOrigin, "not a JSON object"}));
}

TEST(SafetensorsTest, RejectsOffsetsOutsideData) {
  auto r = Parse(Raw(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", {0, 0, 0, 0}));
  EXPECT_TRUE(
      FailsWith(r, {kOrigin, "tensor 'w'", "[0, 16]", "outside the data section (4 bytes)"}));
}

TEST(SafetensorsTest, RejectsReversedOffsets) {
  auto r = Parse(Raw(R"({"w":{"dtype":"U8","shape":[0],"data_offsets":[3,1]}})", {0, 0, 0, 0}));
  EXPECT_TRUE(FailsWith(r, {kOrigin, "tensor 'w'", "outside"}));
}

TEST(SafetensorsTest, RejectsSizeNotMatchingShape) {
  auto r = Parse(Raw(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", {0, 0, 0, 0}));
  EXPECT_TRUE(FailsWith(r, {kOrigin, "tensor 'w'", "span 4 bytes", "needs 8"}));
}

TEST(SafetensorsTest, RejectsUnknownDtype) {
  auto r = Parse(Raw(R"({"w":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}})", {0}));
  EXPECT_TRUE(FailsWith(r, {kOrigin, "tensor 'w'", "F8_E4M3"}));
}

TEST(SafetensorsTest, RejectsNegativeShape) {
  auto r = Parse(Raw(R"({"w":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}})", {0}));
  EXPECT_TRUE(FailsWith(r, {kOrigin, "tensor 'w'", "non-negative"}));
}

TEST(SafetensorsTest, RejectsMissingFields) {
  auto r = Parse(Raw(R"({"w":{"dtype":"U8","shape":[1]}})", {0}));
  EXPECT_TRUE(FailsWith(r, {kOrigin, "tensor 'w'", "data_offsets"}));
  r = Parse(Raw(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0]}})", {0}));
  EXPECT_TRUE(FailsWith(r, {kOrigin, "tensor 'w'", "[begin, end]"}));
}

TEST(SafetensorsTest, RejectsShapeOverflow) {
  auto r = Parse(
      Raw(R"({"w":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", {}));
  EXPECT_TRUE(FailsWith(r, {kOrigin, "tensor 'w'"}));
}

}  // namespace
}  // namespace vkqc
