// .vkqg round trip, Rejects... per reader check, and a truncation/bit-flip robustness loop.
#include "compiler/graph/vkqg_io.h"

#include <random>

#include "compiler/graph/verify.h"
#include "graph_test_util.h"
#include "schema/graph_generated.h"

namespace vkqc {
namespace {

namespace fbg = vkqc::fb::graph;
using testing_util::ConstBytes;
using testing_util::ExpectSameGraph;
using testing_util::FailsWith;
using testing_util::MakeInt4MlpGraph;
using testing_util::MakeQ8toGraph;
using testing_util::MakeQuantizeGraph;
using testing_util::MakeTempDir;
using testing_util::MakeTwoLayerGraph;

std::vector<uint8_t> Serialize(const ir::Graph& g) {
  auto r = SerializeGraph(g);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? r.value() : std::vector<uint8_t>{};
}

Result<ir::Graph> Read(std::vector<uint8_t> bytes, const std::string& origin = "model.vkqg") {
  return ReadGraphBytes(std::make_shared<const std::vector<uint8_t>>(std::move(bytes)), origin);
}

uint64_t SegmentStart(const std::vector<uint8_t>& bytes) {
  uint32_t size = bytes[0] | bytes[1] << 8 | bytes[2] << 16 | static_cast<uint32_t>(bytes[3]) << 24;
  return (4 + uint64_t{size} + 63) / 64 * 64;
}

// Byte position inside `bytes` of tensor `index`'s DataRef struct.
size_t DataRefPos(const std::vector<uint8_t>& bytes, int index) {
  const fbg::Graph* g = fbg::GetSizePrefixedGraph(bytes.data());
  const fbg::DataRef* ref = g->tensors()->Get(index)->data();
  EXPECT_NE(ref, nullptr);
  return reinterpret_cast<const uint8_t*>(ref) - bytes.data();
}

void PutU64(std::vector<uint8_t>& bytes, size_t pos, uint64_t v) {
  for (int i = 0; i < 8; ++i) bytes[pos + i] = static_cast<uint8_t>(v >> (8 * i));
}

TEST(VkqgIoTest, RoundTripThroughFile) {
  const ir::Graph g = MakeTwoLayerGraph();
  const std::string path = MakeTempDir() + "/model.vkqg";
  Status w = WriteGraphFile(g, path);
  ASSERT_TRUE(w.ok()) << w.error().message;
  auto r = ReadGraphFile(path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectSameGraph(g, r.value());

  // Layout: segment starts 64-aligned from the file start, every DataRef 64-aligned inside it,
  // and the constants in the IR are views into the read bytes.
  auto bytes = ReadFileBytes(path);
  ASSERT_TRUE(bytes.ok());
  const std::vector<uint8_t>& b = *bytes.value();
  const fbg::Graph* fg = fbg::GetSizePrefixedGraph(b.data());
  EXPECT_TRUE(fbg::SizePrefixedGraphBufferHasIdentifier(b.data()));
  const uint64_t start = SegmentStart(b);
  EXPECT_EQ(start % 64, 0u);
  EXPECT_EQ(b.size(), start + fg->constant_segment_size());
  int constants = 0;
  for (const fbg::Tensor* t : *fg->tensors()) {
    if (!t->data()) continue;
    ++constants;
    EXPECT_EQ(t->data()->offset() % 64, 0u) << t->name()->str();
  }
  EXPECT_EQ(constants, 3);
  for (const ir::Tensor& t : r.value().tensors) {
    if (t.data) {
      EXPECT_EQ((t.data->offset - start) % 64, 0u) << t.name;
    }
  }
}

TEST(VkqgIoTest, RoundTripKeepsQuantDetailsAndSerializesDeterministically) {
  ir::Graph g = MakeTwoLayerGraph();
  g.symbolic_dim = "seq";
  g.tensors[3].quant = ir::Quant{ir::Scheme::None, {}, {}, 1, 0};
  const std::vector<uint8_t> a = Serialize(g);
  auto r = Read(a);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectSameGraph(g, r.value());
  EXPECT_EQ(Serialize(r.value()), a);
}

TEST(VkqgIoTest, SchemaEnumsMatchIr) {
  EXPECT_EQ(static_cast<int>(fbg::OpType::Linear), static_cast<int>(ir::OpType::Linear));
  EXPECT_EQ(static_cast<int>(fbg::OpType::Mul), static_cast<int>(ir::OpType::Mul));
  EXPECT_EQ(static_cast<int>(fbg::OpType::Silu), static_cast<int>(ir::OpType::Silu));
  EXPECT_EQ(static_cast<int>(fbg::OpType::Quantize), static_cast<int>(ir::OpType::Quantize));
  EXPECT_EQ(static_cast<int>(fbg::OpType::Quantize), 3);
  EXPECT_EQ(static_cast<int>(fbg::OpType::Dequantize), 4);
  EXPECT_EQ(static_cast<int>(fbg::OpType::Conv2d), 5);
  EXPECT_EQ(static_cast<int>(fbg::OpType::Add), 6);
  EXPECT_EQ(static_cast<int>(fbg::OpType::AvgPool2d), 7);
  EXPECT_EQ(static_cast<int>(fbg::OpType::Embedding), 8);
  EXPECT_EQ(static_cast<int>(fbg::OpType::RmsNorm), 9);
  EXPECT_EQ(static_cast<int>(fbg::OpType::Rope), 10);
  EXPECT_EQ(static_cast<int>(fbg::OpType::Attention), 11);
  EXPECT_EQ(static_cast<int>(fbg::OpType::Argmax), 12);
  EXPECT_EQ(static_cast<int>(fbg::OpType::MaxPool2d), 13);
  EXPECT_EQ(static_cast<int>(fbg::OpType::Concat), 14);
  EXPECT_EQ(static_cast<int>(fbg::OpType::Sigmoid), 15);
  EXPECT_EQ(static_cast<int>(fbg::OpType::HardSigmoid), 16);
  EXPECT_EQ(static_cast<int>(fbg::OpType::HardSwish), 17);
  EXPECT_EQ(static_cast<int>(fbg::OpType::ResizeNearest), 18);
  EXPECT_EQ(static_cast<int>(fbg::OpType::Softmax), 19);
  EXPECT_GE(static_cast<int>(fbg::OpType::MAX), 19);
  for (auto t : {ir::OpType::MaxPool2d, ir::OpType::Concat, ir::OpType::Sigmoid, ir::OpType::HardSigmoid,
                 ir::OpType::HardSwish, ir::OpType::ResizeNearest, ir::OpType::Softmax})
    EXPECT_EQ(static_cast<int>(fbg::OpType(t)), static_cast<int>(t));
  for (auto t : {ir::OpType::Embedding, ir::OpType::RmsNorm, ir::OpType::Rope, ir::OpType::Attention,
                 ir::OpType::Argmax})
    EXPECT_EQ(static_cast<int>(fbg::OpType(t)), static_cast<int>(t));
  for (auto t : {ir::OpType::Dequantize, ir::OpType::Conv2d, ir::OpType::Add,
                 ir::OpType::AvgPool2d}) {
    EXPECT_STREQ(fbg::EnumNameOpType(static_cast<fbg::OpType>(t)),
                 t == ir::OpType::Dequantize ? "Dequantize"
                 : t == ir::OpType::Conv2d   ? "Conv2d"
                 : t == ir::OpType::Add      ? "Add"
                                             : "AvgPool2d");
  }
  EXPECT_EQ(static_cast<int>(fbg::Activation::Relu), static_cast<int>(ir::Activation::Relu));
  EXPECT_EQ(static_cast<int>(fbg::Activation::Relu6), static_cast<int>(ir::Activation::Relu6));
  EXPECT_EQ(static_cast<int>(fbg::Activation::MAX), 2);
  EXPECT_EQ(static_cast<int>(fbg::Scheme::Q4GSW), static_cast<int>(ir::Scheme::Q4GSW));
  EXPECT_EQ(static_cast<int>(fbg::Scheme::Q4GAW), static_cast<int>(ir::Scheme::Q4GAW));
  EXPECT_EQ(static_cast<int>(fbg::Scheme::DQ8CA), static_cast<int>(ir::Scheme::DQ8CA));
  EXPECT_EQ(static_cast<int>(fbg::Scheme::Q8TO), static_cast<int>(ir::Scheme::Q8TO));
  EXPECT_EQ(static_cast<int>(fbg::DType::I4), static_cast<int>(ir::DType::I4));
  EXPECT_EQ(static_cast<int>(fbg::DType::U4), static_cast<int>(ir::DType::U4));
}

TEST(VkqgIoTest, RoundTripInt4MlpWithGlueOps) {
  const ir::Graph g = MakeInt4MlpGraph();
  const std::vector<uint8_t> a = Serialize(g);
  auto r = Read(a);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectSameGraph(g, r.value());
  EXPECT_EQ(Serialize(r.value()), a);

  const ir::Graph& b = r.value();
  EXPECT_EQ(b.ops[2].type, ir::OpType::Silu);
  EXPECT_EQ(b.ops[3].type, ir::OpType::Mul);
  EXPECT_EQ(b.ops[1].linear.input_quant.scheme, ir::Scheme::DQ8CA);
  const ir::Tensor& up = b.tensors[2];
  EXPECT_EQ(up.dtype, ir::DType::U4);
  EXPECT_EQ(up.quant->scheme, ir::Scheme::Q4GAW);
  EXPECT_EQ(up.quant->group_size, 32);
  EXPECT_EQ(up.quant->scales.size(), 96u * 2);
  EXPECT_EQ(up.quant->zero_points.size(), 96u * 2);
  EXPECT_EQ(b.tensors[7].quant->scales.size(), 64u * 3);

  // On disk: i4/u4 DataRef lengths are ceil(N*K/2); glue ops carry no attributes.
  const fbg::Graph* fg = fbg::GetSizePrefixedGraph(a.data());
  EXPECT_EQ(fg->tensors()->Get(1)->data()->length(), 96u * 64 / 2);
  EXPECT_EQ(fg->tensors()->Get(2)->data()->length(), 96u * 64 / 2);
  EXPECT_EQ(fg->tensors()->Get(7)->data()->length(), 64u * 96 / 2);
  EXPECT_EQ(fg->ops()->Get(2)->type(), fbg::OpType::Silu);
  EXPECT_EQ(fg->ops()->Get(2)->attrs_type(), fbg::OpAttrs::NONE);
  EXPECT_EQ(fg->ops()->Get(3)->type(), fbg::OpType::Mul);
  EXPECT_EQ(fg->ops()->Get(3)->attrs_type(), fbg::OpAttrs::NONE);
  EXPECT_EQ(fg->ops()->Get(0)->attrs_type(), fbg::OpAttrs::LinearAttrs);
}

TEST(VkqgIoTest, RoundTripInt8InputAndQ8toOutput) {
  const ir::Graph g = MakeQ8toGraph();
  const std::vector<uint8_t> a = Serialize(g);
  auto r = Read(a);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectSameGraph(g, r.value());
  EXPECT_EQ(Serialize(r.value()), a);
  const ir::Tensor& y = r->tensors[2];
  EXPECT_EQ(y.dtype, ir::DType::I8);
  EXPECT_EQ(y.quant->scheme, ir::Scheme::Q8TO);
  EXPECT_EQ(r->ops[0].linear.output_quant.scales, std::vector<float>{0.2f});
  EXPECT_EQ(r->ops[0].linear.output_quant.zero_points, std::vector<int32_t>{-5});
  EXPECT_EQ(r->tensors[0].quant->scheme, ir::Scheme::Q8TA);
  EXPECT_EQ(r->ops[0].linear.input_quant.scheme, ir::Scheme::None);
}

TEST(VkqgIoTest, RoundTripQuantizeOpAndPerTokenTensor) {
  for (bool per_token : {true, false}) {
    SCOPED_TRACE(per_token ? "dq8ca" : "q8ta");
    ir::Graph g = MakeQuantizeGraph();
    if (!per_token) g.tensors[1].quant = ir::Quant{ir::Scheme::Q8TA, {0.1f}, {-3}, 0, 0};
    const std::vector<uint8_t> a = Serialize(g);
    auto r = Read(a);
    ASSERT_TRUE(r.ok()) << r.error().message;
    ExpectSameGraph(g, r.value());
    EXPECT_EQ(Serialize(r.value()), a);
    EXPECT_EQ(r->ops[0].type, ir::OpType::Quantize);
    const ir::Tensor& xq = r->tensors[1];
    EXPECT_EQ(xq.dtype, ir::DType::I8);
    ASSERT_TRUE(xq.quant.has_value());
    EXPECT_EQ(xq.quant->scheme, per_token ? ir::Scheme::DQ8CA : ir::Scheme::Q8TA);
    EXPECT_EQ(xq.quant->scales.size(), per_token ? 0u : 1u);
    EXPECT_EQ(xq.quant->zero_points.size(), per_token ? 0u : 1u);

    // On disk: the op is Quantize without attributes; the tensor carries the scheme.
    const fbg::Graph* fg = fbg::GetSizePrefixedGraph(a.data());
    EXPECT_EQ(fg->ops()->Get(0)->type(), fbg::OpType::Quantize);
    EXPECT_EQ(fg->ops()->Get(0)->attrs_type(), fbg::OpAttrs::NONE);
    ASSERT_NE(fg->tensors()->Get(1)->quant(), nullptr);
    EXPECT_EQ(fg->tensors()->Get(1)->quant()->scheme(),
              per_token ? fbg::Scheme::DQ8CA : fbg::Scheme::Q8TA);
    EXPECT_EQ(fg->tensors()->Get(1)->dtype(), fbg::DType::I8);
  }
}

TEST(VkqgIoTest, RejectsPerTokenTensorAsGraphOutputOnRead) {
  ir::Graph g = MakeQuantizeGraph();
  g.outputs = {5, 1};
  EXPECT_TRUE(FailsWith(Read(Serialize(g)),
                        {"model.vkqg", "per-token int8 tensor 'xq' cannot be a graph input/output",
                         "graph output"}));
  g = MakeQuantizeGraph();
  g.tensors[1].quant->scales = {0.5f};
  EXPECT_TRUE(FailsWith(Read(Serialize(g)),
                        {"model.vkqg", "op 0 'quant_x' (quantize)", "quant dq8ca has 1 scales"}));
}

// A graph "a -> op -> y" (f32 [4]) built directly, so the op's type and attributes can be
// ones the writer would never produce.
std::vector<uint8_t> RawOneOpGraph(fbg::OpType type, bool linear_attrs) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fbg::Tensor>> tensors;
  for (const char* name : {"a", "y"}) {
    tensors.push_back(
        fbg::CreateTensor(fbb, fbb.CreateString(name), fbb.CreateVector(std::vector<int64_t>{4})));
  }
  auto attrs = fbg::CreateLinearAttrs(fbb);
  auto op =
      fbg::CreateOp(fbb, fbb.CreateString("glue"), type, fbb.CreateVector(std::vector<int32_t>{0}),
                    fbb.CreateVector(std::vector<int32_t>{1}),
                    linear_attrs ? fbg::OpAttrs::LinearAttrs : fbg::OpAttrs::NONE,
                    linear_attrs ? attrs.Union() : 0);
  auto root =
      fbg::CreateGraph(fbb, 1, fbb.CreateVector(tensors),
                       fbb.CreateVector(std::vector<flatbuffers::Offset<fbg::Op>>{op}),
                       fbb.CreateVector(std::vector<int32_t>{0}),
                       fbb.CreateVector(std::vector<int32_t>{1}), fbb.CreateString("tokens"), 0);
  fbg::FinishSizePrefixedGraphBuffer(fbb, root);
  std::vector<uint8_t> out(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  out.resize((out.size() + 63) / 64 * 64, 0);
  return out;
}

TEST(VkqgIoTest, ReadsRawGlueOp) {
  auto r = Read(RawOneOpGraph(fbg::OpType::Silu, false));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->ops[0].type, ir::OpType::Silu);
}

TEST(VkqgIoTest, RejectsLinearAttrsOnGlueOp) {
  EXPECT_TRUE(FailsWith(Read(RawOneOpGraph(fbg::OpType::Silu, true)),
                        {"model.vkqg", "op 0 'glue'", "silu op carries LinearAttrs"}));
  EXPECT_TRUE(FailsWith(Read(RawOneOpGraph(fbg::OpType::Quantize, true)),
                        {"model.vkqg", "op 0 'glue'", "quantize op carries LinearAttrs"}));
}

TEST(VkqgIoTest, RejectsUnknownOpType) {
  EXPECT_TRUE(FailsWith(
      Read(RawOneOpGraph(static_cast<fbg::OpType>(999), false)),
      {"model.vkqg", "op 0 'glue'", "unknown op type 999", "linear, mul, silu, quantize", "attention, argmax",
       "max_pool2d, concat, sigmoid, hard_sigmoid, hard_swish, resize_nearest, softmax",
       "newer vkqc"}));
}

TEST(VkqgIoTest, SerializeRefusesLinearAttrsOnGlueOp) {
  ir::Graph g = MakeInt4MlpGraph();
  g.ops[3].linear.fused_relu = true;
  auto r = SerializeGraph(g);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(testing_util::MessageHas(r.error(), {"'gated'", "linear attributes"}));
}

TEST(VkqgIoTest, Fnv1a64KnownValues) {
  // Standard FNV-1a 64 vectors; the default seed is the standard offset basis.
  const uint64_t basis = 0xcbf29ce484222325ull;
  EXPECT_EQ(Fnv1a64("", 0), basis);
  EXPECT_EQ(Fnv1a64("a", 1), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(Fnv1a64("foobar", 6, basis), 0x85944171f73967e8ull);
  EXPECT_EQ(Fnv1a64("foobar", 6), Fnv1a64("foobar", 6));
  EXPECT_NE(Fnv1a64("foobar", 6), Fnv1a64("foobaz", 6));
}

TEST(VkqgIoTest, RejectsMissingFile) {
  const std::string path = MakeTempDir() + "/absent.vkqg";
  EXPECT_TRUE(FailsWith(ReadGraphFile(path), {path, "cannot open"}));
}

TEST(VkqgIoTest, RejectsTinyFile) {
  EXPECT_TRUE(FailsWith(Read({1, 2, 3}), {"model.vkqg", "too small"}));
}

TEST(VkqgIoTest, RejectsTruncatedSegment) {
  std::vector<uint8_t> b = Serialize(MakeTwoLayerGraph());
  b.resize(b.size() - 1);
  EXPECT_TRUE(FailsWith(Read(b), {"model.vkqg", "truncated", "constant segment"}));
}

TEST(VkqgIoTest, RejectsTruncatedHeader) {
  std::vector<uint8_t> b = Serialize(MakeTwoLayerGraph());
  b.resize(SegmentStart(b) / 2);
  EXPECT_TRUE(FailsWith(Read(b), {"model.vkqg", "truncated"}));
}

TEST(VkqgIoTest, RejectsTrailingBytes) {
  std::vector<uint8_t> b = Serialize(MakeTwoLayerGraph());
  b.push_back(0);
  EXPECT_TRUE(FailsWith(Read(b), {"model.vkqg", "after the constant segment"}));
}

TEST(VkqgIoTest, RejectsWrongIdentifier) {
  std::vector<uint8_t> b = Serialize(MakeTwoLayerGraph());
  std::memcpy(b.data() + 8, "ABCD", 4);
  EXPECT_TRUE(FailsWith(Read(b, "other.bin"), {"other.bin", "'ABCD'", "expected 'VKQG'"}));
  std::memcpy(b.data() + 8, "VKQB", 4);
  EXPECT_TRUE(FailsWith(Read(b), {"model.vkqg", "bundle"}));
}

TEST(VkqgIoTest, RejectsCorruptFlatbuffer) {
  std::vector<uint8_t> b = Serialize(MakeTwoLayerGraph());
  const uint8_t root_offset[4] = {0xf0, 0xff, 0xff, 0x7f};  // far past the header
  std::memcpy(b.data() + 4, root_offset, 4);
  EXPECT_TRUE(FailsWith(Read(b), {"model.vkqg", "corrupt"}));
}

TEST(VkqgIoTest, RejectsDataRefOutsideSegment) {
  std::vector<uint8_t> b = Serialize(MakeTwoLayerGraph());
  const fbg::Graph* g = fbg::GetSizePrefixedGraph(b.data());
  const uint64_t segment = g->constant_segment_size();
  PutU64(b, DataRefPos(b, 1), segment);  // fc1.weight at the end: 40 bytes past it
  EXPECT_TRUE(FailsWith(Read(b), {"model.vkqg", "tensor 'fc1.weight'",
                                  "[offset " + std::to_string(segment) + ", 40 bytes]",
                                  "outside the constant segment"}));
}

TEST(VkqgIoTest, RejectsDataRefLengthOverflow) {
  std::vector<uint8_t> b = Serialize(MakeTwoLayerGraph());
  PutU64(b, DataRefPos(b, 2) + 8, ~uint64_t{0});
  EXPECT_TRUE(FailsWith(Read(b), {"model.vkqg", "tensor 'fc1.bias'", "outside"}));
}

TEST(VkqgIoTest, RejectsUnalignedDataRef) {
  std::vector<uint8_t> b = Serialize(MakeTwoLayerGraph());
  PutU64(b, DataRefPos(b, 1), 8);
  EXPECT_TRUE(FailsWith(Read(b), {"model.vkqg", "tensor 'fc1.weight'", "64-byte aligned"}));
}

TEST(VkqgIoTest, RejectsDataRefLengthNotMatchingShape) {
  std::vector<uint8_t> b = Serialize(MakeTwoLayerGraph());
  PutU64(b, DataRefPos(b, 1) + 8, 39);
  EXPECT_TRUE(FailsWith(Read(b), {"model.vkqg", "tensor 'fc1.weight'", "39 bytes", "need 40"}));
}

TEST(VkqgIoTest, RejectsOpInputIndexOutOfRange) {
  ir::Graph g = MakeTwoLayerGraph();
  g.ops[1].inputs[0] = 99;
  EXPECT_TRUE(
      FailsWith(Read(Serialize(g)), {"model.vkqg", "op 1 'fc2'", "index 99", "out of range"}));
}

TEST(VkqgIoTest, RejectsGraphOutputIndexOutOfRange) {
  ir::Graph g = MakeTwoLayerGraph();
  g.outputs = {6};
  EXPECT_TRUE(FailsWith(Read(Serialize(g)), {"model.vkqg", "graph output", "index 6"}));
}

TEST(VkqgIoTest, RejectsConsumedBeforeProduced) {
  ir::Graph g = MakeTwoLayerGraph();
  std::swap(g.ops[0], g.ops[1]);
  EXPECT_TRUE(FailsWith(Read(Serialize(g)),
                        {"model.vkqg", "op 0 'fc2'", "'h1'", "consumed before it is produced"}));
}

TEST(VkqgIoTest, RejectsUnknownEnumValues) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[1].quant->scheme = static_cast<ir::Scheme>(100);
  EXPECT_TRUE(FailsWith(Read(Serialize(g)),
                        {"model.vkqg", "tensor 'fc1.weight'", "unknown quantization scheme 100"}));
  g = MakeTwoLayerGraph();
  g.tensors[3].dtype = static_cast<ir::DType>(50);
  EXPECT_TRUE(FailsWith(Read(Serialize(g)), {"model.vkqg", "tensor 'h1'", "unknown dtype 50"}));
}

TEST(VkqgIoTest, RejectsInt4DataRefLengthNotMatchingShape) {
  std::vector<uint8_t> b = Serialize(MakeInt4MlpGraph());
  PutU64(b, DataRefPos(b, 2) + 8, 96 * 64 / 2 - 1);
  EXPECT_TRUE(FailsWith(Read(b), {"model.vkqg", "tensor 'up.weight'", "3071 bytes", "6144 elements",
                                  "u4", "need 3072"}));
}

TEST(VkqgIoTest, RejectsInvalidGraphSemantics) {
  ir::Graph g = MakeTwoLayerGraph();
  g.tensors[1].quant->scheme = ir::Scheme::Q4GSW;
  EXPECT_TRUE(FailsWith(Read(Serialize(g)), {"model.vkqg", "op 0 'fc1'", "q4gsw", "must be i4"}));
  g = MakeInt4MlpGraph();
  g.tensors[7].quant->group_size = 20;
  EXPECT_TRUE(FailsWith(Read(Serialize(g)),
                        {"model.vkqg", "op 4 'down_proj'", "group_size 20", "divides K=96"}));
  g = MakeInt4MlpGraph();
  g.tensors[2].quant->zero_points[0] = 15 + 1;
  EXPECT_TRUE(FailsWith(Read(Serialize(g)), {"model.vkqg", "op 1 'up_proj'", "[0, 15]"}));
  g = MakeQ8toGraph();
  g.tensors[2].quant->scales = {0.3f};
  EXPECT_TRUE(FailsWith(Read(Serialize(g)), {"model.vkqg", "op 0 'proj'", "same q8to quant"}));
  g = MakeQ8toGraph();
  g.ops[0].linear.input_quant = ir::Quant{ir::Scheme::DQ8CA, {}, {}, 0, 0};
  EXPECT_TRUE(FailsWith(Read(Serialize(g)), {"model.vkqg", "op 0 'proj'", "already int8"}));
  g = MakeInt4MlpGraph();
  g.ops[3].inputs = {5, 0};
  EXPECT_TRUE(FailsWith(Read(Serialize(g)), {"model.vkqg", "op 3 'gated'", "identical shapes"}));
}

// Every truncation and many random byte flips: never a crash; any graph that reads back is valid.
TEST(VkqgIoTest, SurvivesTruncationAndBitFlips) {
  const std::vector<uint8_t> good = Serialize(MakeTwoLayerGraph());
  auto check = [](const std::vector<uint8_t>& b) {
    auto r = Read(b, "fuzz.vkqg");
    if (!r.ok()) {
      EXPECT_NE(r.error().message.find("fuzz.vkqg"), std::string::npos) << r.error().message;
      return;
    }
    Status s = VerifyGraph(r.value(), "fuzz.vkqg");
    EXPECT_TRUE(s.ok()) << s.error().message;
    for (const ir::Tensor& t : r.value().tensors) {
      if (t.data) {
        EXPECT_LE(t.data->offset + t.data->size, b.size());
      }
    }
  };
  for (size_t len = 0; len < good.size(); ++len) {
    auto r = Read(std::vector<uint8_t>(good.begin(), good.begin() + len), "fuzz.vkqg");
    EXPECT_FALSE(r.ok()) << "truncated to " << len << " bytes but accepted";
  }
  // Shifting any byte by a multiple of 4 moves offsets by whole 4-byte words, which the
  // flatbuffers verifier accepts even for int64 vectors; the reader must refuse misalignment.
  int misaligned = 0;
  for (size_t p = 0; p < good.size(); ++p) {
    for (int delta : {4, 12, 252}) {
      std::vector<uint8_t> b = good;
      b[p] = static_cast<uint8_t>(b[p] + delta);
      check(b);
      auto r = Read(b, "fuzz.vkqg");
      misaligned += !r.ok() && r.error().message.find("misaligned") != std::string::npos;
    }
  }
  EXPECT_GT(misaligned, 0);

  std::mt19937 rng(20240611);
  std::uniform_int_distribution<size_t> pos(0, good.size() - 1);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> count(1, 4);
  int accepted = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> b = good;
    const int n = count(rng);
    for (int i = 0; i < n; ++i) b[pos(rng)] ^= static_cast<uint8_t>(byte(rng) | 1);
    check(b);
    accepted += Read(b, "fuzz.vkqg").ok() ? 1 : 0;
  }
  // Flips in constant data or in the padding keep the graph valid; some must be accepted.
  EXPECT_GT(accepted, 0);
}

// The int4 graph's header (quant arrays, glue ops without attrs) under random flips: refused
// with the file named, or read back as a valid graph.
TEST(VkqgIoTest, SurvivesHeaderBitFlipsInInt4Graph) {
  const std::vector<uint8_t> good = Serialize(MakeInt4MlpGraph());
  const size_t header = SegmentStart(good);
  std::mt19937 rng(7);
  std::uniform_int_distribution<size_t> pos(0, header - 1);
  std::uniform_int_distribution<int> byte(1, 255);
  for (int iter = 0; iter < 5000; ++iter) {
    std::vector<uint8_t> b = good;
    for (int i = 0; i < 2; ++i) b[pos(rng)] ^= static_cast<uint8_t>(byte(rng));
    auto r = Read(b, "fuzz.vkqg");
    if (!r.ok()) {
      EXPECT_NE(r.error().message.find("fuzz.vkqg"), std::string::npos) << r.error().message;
      continue;
    }
    Status s = VerifyGraph(r.value(), "fuzz.vkqg");
    EXPECT_TRUE(s.ok()) << s.error().message;
  }
}

}  // namespace
}  // namespace vkqc
