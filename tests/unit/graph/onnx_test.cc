// The hand-written ONNX protobuf reader (compiler/graph/onnx.h) and ImportOnnx on hostile bytes.
// Every model here is built byte by byte with the small protobuf writer below (field numbers of
// /usr/include/onnx/onnx.proto), so the tests need neither libprotobuf nor python.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "compiler/graph/import_onnx.h"
#include "compiler/graph/onnx.h"
#include "compiler/graph/vkqg_io.h"
#include "graph_test_util.h"

namespace vkqc {
namespace {

using testing_util::MakeTempDir;
using testing_util::MessageHas;
using testing_util::ToBytes;

// ---- a protobuf writer ---------------------------------------------------------------------------

void PutVarint(std::vector<uint8_t>& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(uint8_t(v | 0x80));
    v >>= 7;
  }
  out.push_back(uint8_t(v));
}

// One message being written: append fields, nest messages with Msg.
class Pb {
 public:
  Pb& Key(uint32_t field, int wire) {
    PutVarint(b, (uint64_t(field) << 3) | uint64_t(wire));
    return *this;
  }
  Pb& Varint(uint32_t field, uint64_t v) {
    Key(field, 0);
    PutVarint(b, v);
    return *this;
  }
  Pb& Int(uint32_t field, int64_t v) { return Varint(field, uint64_t(v)); }  // negative: 10 bytes
  Pb& Fixed32(uint32_t field, uint32_t v) {
    Key(field, 5);
    for (int i = 0; i < 4; ++i) b.push_back(uint8_t(v >> (8 * i)));
    return *this;
  }
  Pb& Fixed64(uint32_t field, uint64_t v) {
    Key(field, 1);
    for (int i = 0; i < 8; ++i) b.push_back(uint8_t(v >> (8 * i)));
    return *this;
  }
  Pb& Float(uint32_t field, float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return Fixed32(field, u);
  }
  Pb& Double(uint32_t field, double d) {
    uint64_t u;
    std::memcpy(&u, &d, 8);
    return Fixed64(field, u);
  }
  Pb& Bytes(uint32_t field, const std::vector<uint8_t>& v) {
    Key(field, 2);
    PutVarint(b, v.size());
    b.insert(b.end(), v.begin(), v.end());
    return *this;
  }
  Pb& Str(uint32_t field, const std::string& s) { return Bytes(field, std::vector<uint8_t>(s.begin(), s.end())); }
  Pb& Msg(uint32_t field, const Pb& m) { return Bytes(field, m.b); }
  Pb& PackedVarints(uint32_t field, const std::vector<int64_t>& v) {
    std::vector<uint8_t> run;
    for (int64_t x : v) PutVarint(run, uint64_t(x));
    return Bytes(field, run);
  }
  Pb& PackedFloats(uint32_t field, const std::vector<float>& v) { return Bytes(field, ToBytes(v)); }
  Pb& PackedDoubles(uint32_t field, const std::vector<double>& v) { return Bytes(field, ToBytes(v)); }

  std::vector<uint8_t> b;
};

// ---- ONNX messages -------------------------------------------------------------------------------

constexpr int32_t kFloat = 1, kUint8 = 2, kInt8 = 3, kInt32 = 6, kInt64 = 7, kString = 8, kFloat16 = 10,
                  kDouble = 11, kUint32 = 12, kUint64 = 13, kBFloat16 = 16;

// TensorProto without values: dims (unpacked, as proto2 writes them), data_type, name.
Pb TensorHead(const std::string& name, int32_t type, const std::vector<int64_t>& dims) {
  Pb t;
  for (int64_t d : dims) t.Int(1, d);
  t.Varint(2, uint64_t(type));
  t.Str(8, name);
  return t;
}
Pb RawTensor(const std::string& name, int32_t type, const std::vector<int64_t>& dims,
             const std::vector<uint8_t>& raw) {
  return TensorHead(name, type, dims).Bytes(9, raw);
}
Pb ExternalTensor(const std::string& name, int32_t type, const std::vector<int64_t>& dims,
                  const std::map<std::string, std::string>& entries) {
  Pb t = TensorHead(name, type, dims);
  for (const auto& [k, v] : entries) t.Msg(13, Pb().Str(1, k).Str(2, v));
  t.Varint(14, 1);  // EXTERNAL
  return t;
}

struct D {  // one TensorShapeProto.Dimension: a value (>= 0), a parameter, or neither
  int64_t value = -1;
  std::string param;
};
Pb ValueInfo(const std::string& name, int32_t elem, const std::vector<D>& dims) {
  Pb shape;
  for (const D& d : dims) {
    Pb dim;
    if (d.value >= 0) dim.Int(1, d.value);
    if (!d.param.empty()) dim.Str(2, d.param);
    shape.Msg(1, dim);
  }
  Pb tensor_type;
  tensor_type.Varint(1, uint64_t(elem)).Msg(2, shape);
  return Pb().Str(1, name).Msg(2, Pb().Msg(1, tensor_type));
}

// AttributeProto (type: FLOAT 1, INT 2, STRING 3, TENSOR 4, FLOATS 6, INTS 7, STRINGS 8).
Pb AttrF(const std::string& n, float f) { return Pb().Str(1, n).Float(2, f).Varint(20, 1); }
Pb AttrI(const std::string& n, int64_t i) { return Pb().Str(1, n).Int(3, i).Varint(20, 2); }
Pb AttrS(const std::string& n, const std::string& s) { return Pb().Str(1, n).Str(4, s).Varint(20, 3); }
Pb AttrT(const std::string& n, const Pb& t) { return Pb().Str(1, n).Msg(5, t).Varint(20, 4); }
Pb AttrFloats(const std::string& n, const std::vector<float>& v) {
  return Pb().Str(1, n).PackedFloats(7, v).Varint(20, 6);
}
Pb AttrInts(const std::string& n, const std::vector<int64_t>& v) {
  return Pb().Str(1, n).PackedVarints(8, v).Varint(20, 7);
}
Pb AttrStrings(const std::string& n, const std::vector<std::string>& v) {
  Pb a;
  a.Str(1, n);
  for (const std::string& s : v) a.Str(9, s);
  return a.Varint(20, 8);
}

Pb Node(const std::string& op, const std::vector<std::string>& ins, const std::vector<std::string>& outs,
        const std::vector<Pb>& attrs = {}, const std::string& name = "", const std::string& domain = "") {
  Pb n;
  for (const std::string& s : ins) n.Str(1, s);
  for (const std::string& s : outs) n.Str(2, s);
  if (!name.empty()) n.Str(3, name);
  n.Str(4, op);
  for (const Pb& a : attrs) n.Msg(5, a);
  if (!domain.empty()) n.Str(7, domain);
  return n;
}

std::vector<uint8_t> Model(const Pb& graph, int64_t ir_version = 7,
                           const std::vector<std::pair<std::string, int64_t>>& opsets = {{"", 13}}) {
  Pb m;
  m.Int(1, ir_version);
  m.Str(2, "vkqc-test").Str(3, "0.1");
  m.Msg(7, graph);
  for (const auto& [domain, version] : opsets) m.Msg(8, Pb().Str(1, domain).Int(2, version));
  return m.b;
}

template <typename T>
std::vector<uint8_t> Le(std::initializer_list<T> v) {
  return ToBytes(std::vector<T>(v));
}

// The QDQ conv every import test starts from: x float [1, 2, 5, 5] -> QuantizeLinear (0.05, uint8
// 128) -> DequantizeLinear -> Conv (int8 weights [2, 2, 2, 2] through a per-channel
// DequantizeLinear, axis 0; float bias) -> y float [1, 2, 4, 4].
std::vector<uint8_t> WeightBytes() {
  std::vector<int8_t> w = testing_util::Pattern(16, 3);
  return ToBytes(w);
}
Pb QdqConvGraph(const Pb& weights) {
  Pb g;
  g.Msg(1, Node("QuantizeLinear", {"x", "x_scale", "x_zp"}, {"xq"}, {}, "quant_x"));
  g.Msg(1, Node("DequantizeLinear", {"xq", "x_scale", "x_zp"}, {"xdq"}, {}, "dequant_x"));
  g.Msg(1, Node("DequantizeLinear", {"w", "w_scale", "w_zp"}, {"wdq"}, {AttrI("axis", 0)}, "dequant_w"));
  g.Msg(1, Node("Conv", {"xdq", "wdq", "b"}, {"y"},
                {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {1, 1}), AttrInts("pads", {0, 0, 0, 0})},
                "conv"));
  g.Str(2, "qdq_conv");
  g.Msg(5, RawTensor("x_scale", kFloat, {}, Le<float>({0.05f})));
  g.Msg(5, RawTensor("x_zp", kUint8, {}, {128}));
  g.Msg(5, weights);
  g.Msg(5, RawTensor("w_scale", kFloat, {2}, Le<float>({0.01f, 0.02f})));
  g.Msg(5, RawTensor("w_zp", kInt8, {2}, {0, 0}));
  g.Msg(5, RawTensor("b", kFloat, {2}, Le<float>({0.5f, -0.25f})));
  g.Msg(11, ValueInfo("x", kFloat, {{1}, {2}, {5}, {5}}));
  g.Msg(12, ValueInfo("y", kFloat, {{1}, {2}, {4}, {4}}));
  return g;
}
std::vector<uint8_t> QdqConvModel() {
  return Model(QdqConvGraph(RawTensor("w", kInt8, {2, 2, 2, 2}, WeightBytes())), 7, {{"", 13}});
}

Result<onnx::Model> Parse(const std::vector<uint8_t>& bytes) {
  return onnx::ParseModel(std::make_shared<const std::vector<uint8_t>>(bytes), "test.onnx");
}

// The first initializer named `name` of a parsed model.
const onnx::Tensor* Init(const onnx::Model& m, const std::string& name) {
  for (const onnx::Tensor& t : m.graph.initializers)
    if (t.name == name) return &t;
  ADD_FAILURE() << "no initializer " << name;
  return nullptr;
}

// Parses one TensorProto and decodes it (no external data).
Result<onnx::HostTensor> DecodeTensor(const Pb& t, const std::string& base_dir = ".") {
  auto parsed = onnx::ParseTensor(t.b, "tensor");
  if (!parsed.ok()) return parsed.error();
  return onnx::Decode(parsed.value(), base_dir, "initializer '" + parsed->name + "'");
}

class OnnxTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir(); }
  std::string Write(const std::string& name, const std::vector<uint8_t>& bytes) {
    const std::string path = dir_ + "/" + name;
    EXPECT_TRUE(WriteFileBytes(path, bytes.data(), bytes.size()).ok()) << path;
    return path;
  }
  Result<ir::Graph> Import(const std::vector<uint8_t>& model) { return ImportOnnx(Write("model.onnx", model), {}); }
  std::string dir_;
};

// ---- 1. ParseModel and Decode -----------------------------------------------------------------

class OnnxReaderTest : public OnnxTest {};

TEST_F(OnnxReaderTest, ParsesEveryFieldOfAModel) {
  Pb g;
  // Node 0: every attribute type, one input left empty (an omitted optional input).
  Pb unpacked_ints = Pb().Str(1, "ints_unpacked").Int(8, 7).Int(8, -9).Int(8, int64_t(1) << 40).Varint(20, 7);
  Pb unpacked_floats = Pb().Str(1, "floats_unpacked").Float(7, 0.5f).Float(7, -8.0f).Varint(20, 6);
  g.Msg(1, Node("Conv", {"x", "w", ""}, {"y", "y2"},
                {AttrF("alpha", 0.25f), AttrI("group", -3), AttrS("auto_pad", "SAME_UPPER"),
                 AttrT("value", RawTensor("attr_t", kInt32, {2}, Le<int32_t>({-5, 70000}))),
                 AttrFloats("floats", {1.5f, -2.0f, 1e-3f}), AttrInts("ints", {1, -1, 300, 0}),
                 AttrStrings("strings", {"a", "", "bc"}), unpacked_ints, unpacked_floats},
                "n0"));
  Pb node1 = Node("MatMulNBits", {"y"}, {"z"}, {AttrI("K", 32)}, "n1", "com.microsoft");
  node1.Str(6, "a doc string").Varint(99, 5);  // skipped fields
  g.Msg(1, node1);
  g.Str(2, "every_field");
  g.Str(10, "graph doc");
  // Initializers: raw_data, and typed fields packed and unpacked.
  g.Msg(5, RawTensor("w_raw", kFloat, {2, 3}, Le<float>({1, 2, 3, 4, 5, 6})));
  Pb i64 = TensorHead("i64", kInt64, {3});
  i64.Int(7, -1).Int(7, int64_t(1) << 50).Int(7, 42);  // unpacked varints
  g.Msg(5, i64);
  Pb i32;
  i32.PackedVarints(1, {2, 2}).Varint(2, kInt32).Str(8, "i32").PackedVarints(5, {-7, 0, 2147483647, -2147483647 - 1});
  g.Msg(5, i32);
  Pb i32_unpacked = TensorHead("i32u", kInt32, {2});
  i32_unpacked.Int(5, -1).Int(5, 12);
  g.Msg(5, i32_unpacked);
  g.Msg(5, TensorHead("f_typed", kFloat, {3}).PackedFloats(4, {0.5f, -1.0f, 3.0f}));
  g.Msg(15, Pb().Msg(1, RawTensor("sparse", kFloat, {1}, Le<float>({1}))));  // a sparse initializer
  // Value infos: dim_value, dim_param, and a dimension with neither.
  g.Msg(11, ValueInfo("x", kFloat, {{.param = "batch"}, {3}, {.value = 224}, {224}}));
  g.Msg(12, ValueInfo("z", kUint8, {{1}, {}}));
  g.Msg(13, ValueInfo("y", kFloat, {{.param = "N"}, {0}}));
  g.Msg(13, Pb().Str(1, "no_type"));
  Pb m;
  m.Int(1, 9).Str(2, "vkqc-test").Str(3, "1.2.3").Str(4, "ai.vkqc").Int(5, 77).Str(6, "model doc");
  m.Fixed64(40, 0x1122334455667788ull).Fixed32(41, 0xdeadbeef);  // unknown fixed fields: skipped
  m.Msg(8, Pb().Str(1, "").Int(2, 13));
  m.Msg(8, Pb().Str(1, "com.microsoft").Int(2, 1));
  m.Msg(7, g);
  m.Msg(14, Pb().Str(1, "author").Str(2, "me"));

  auto parsed = Parse(m.b);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const onnx::Model& model = parsed.value();
  EXPECT_EQ(model.ir_version, 9);
  EXPECT_EQ(model.producer_name, "vkqc-test");
  EXPECT_EQ(model.producer_version, "1.2.3");
  ASSERT_EQ(model.opsets.size(), 2u);
  EXPECT_EQ(model.opsets[0], (std::pair<std::string, int64_t>{"", 13}));
  EXPECT_EQ(model.opsets[1], (std::pair<std::string, int64_t>{"com.microsoft", 1}));
  EXPECT_EQ(model.Opset(""), 13);
  EXPECT_EQ(model.Opset("com.microsoft"), 1);
  EXPECT_EQ(model.Opset("ai.onnx.ml"), 0);
  EXPECT_EQ(model.metadata.at("author"), "me");

  const onnx::Graph& graph = model.graph;
  EXPECT_EQ(graph.name, "every_field");
  EXPECT_EQ(graph.sparse_initializers, 1u);
  ASSERT_EQ(graph.nodes.size(), 2u);
  const onnx::Node& n0 = graph.nodes[0];
  EXPECT_EQ(n0.name, "n0");
  EXPECT_EQ(n0.op_type, "Conv");
  EXPECT_EQ(n0.domain, "");
  EXPECT_EQ(n0.inputs, (std::vector<std::string>{"x", "w", ""}));
  EXPECT_EQ(n0.outputs, (std::vector<std::string>{"y", "y2"}));
  ASSERT_EQ(n0.attributes.size(), 9u);
  ASSERT_NE(n0.Find("alpha"), nullptr);
  EXPECT_EQ(n0.Find("alpha")->type, 1);
  EXPECT_EQ(n0.Find("alpha")->f, 0.25f);
  EXPECT_EQ(n0.Find("group")->type, 2);
  EXPECT_EQ(n0.Find("group")->i, -3);
  EXPECT_EQ(n0.Find("auto_pad")->type, 3);
  EXPECT_EQ(n0.Find("auto_pad")->s, "SAME_UPPER");
  const onnx::Attribute* at = n0.Find("value");
  ASSERT_NE(at, nullptr);
  EXPECT_EQ(at->type, 4);
  ASSERT_TRUE(at->t);
  EXPECT_EQ(at->t->name, "attr_t");
  EXPECT_EQ(at->t->dims, (std::vector<int64_t>{2}));
  auto at_values = onnx::Decode(*at->t, dir_, "attr");
  ASSERT_TRUE(at_values.ok()) << at_values.error().message;
  EXPECT_EQ(at_values->At(0), -5);
  EXPECT_EQ(at_values->At(1), 70000);
  EXPECT_EQ(n0.Find("floats")->type, 6);
  EXPECT_EQ(n0.Find("floats")->floats, (std::vector<float>{1.5f, -2.0f, 1e-3f}));
  EXPECT_EQ(n0.Find("ints")->type, 7);
  EXPECT_EQ(n0.Find("ints")->ints, (std::vector<int64_t>{1, -1, 300, 0}));
  EXPECT_EQ(n0.Find("strings")->type, 8);
  EXPECT_EQ(n0.Find("strings")->strings, (std::vector<std::string>{"a", "", "bc"}));
  EXPECT_EQ(n0.Find("ints_unpacked")->ints, (std::vector<int64_t>{7, -9, int64_t(1) << 40}));
  EXPECT_EQ(n0.Find("floats_unpacked")->floats, (std::vector<float>{0.5f, -8.0f}));
  EXPECT_EQ(n0.Find("missing"), nullptr);
  const onnx::Node& n1 = graph.nodes[1];
  EXPECT_EQ(n1.name, "n1");
  EXPECT_EQ(n1.op_type, "MatMulNBits");
  EXPECT_EQ(n1.domain, "com.microsoft");
  EXPECT_EQ(n1.Find("K")->i, 32);

  ASSERT_EQ(graph.initializers.size(), 5u);
  const onnx::Tensor* w = Init(model, "w_raw");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->data_type, kFloat);
  EXPECT_EQ(w->dims, (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(w->has_raw);
  EXPECT_EQ(w->raw_size, 24u);
  // raw_data is a view into the model's bytes, not a copy.
  EXPECT_GE(w->raw, model.bytes->data());
  EXPECT_LE(w->raw + w->raw_size, model.bytes->data() + model.bytes->size());
  auto wv = onnx::Decode(*w, dir_, "initializer 'w_raw'");
  ASSERT_TRUE(wv.ok()) << wv.error().message;
  EXPECT_EQ(wv->NumElements(), 6);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(wv->At(i), i + 1);
  const onnx::Tensor* t64 = Init(model, "i64");
  EXPECT_FALSE(t64->has_raw);
  EXPECT_EQ(t64->int64_data, (std::vector<int64_t>{-1, int64_t(1) << 50, 42}));
  const onnx::Tensor* t32 = Init(model, "i32");
  EXPECT_EQ(t32->dims, (std::vector<int64_t>{2, 2}));  // packed dims
  EXPECT_EQ(t32->int32_data, (std::vector<int64_t>{-7, 0, 2147483647, -2147483647 - 1}));
  EXPECT_EQ(Init(model, "i32u")->int32_data, (std::vector<int64_t>{-1, 12}));
  EXPECT_EQ(Init(model, "f_typed")->float_data, (std::vector<float>{0.5f, -1.0f, 3.0f}));

  ASSERT_EQ(graph.inputs.size(), 1u);
  const onnx::ValueInfo& x = graph.inputs[0];
  EXPECT_EQ(x.name, "x");
  EXPECT_TRUE(x.is_tensor);
  EXPECT_TRUE(x.has_shape);
  EXPECT_EQ(x.elem_type, kFloat);
  ASSERT_EQ(x.dims.size(), 4u);
  EXPECT_FALSE(x.dims[0].has_value);
  EXPECT_EQ(x.dims[0].param, "batch");
  EXPECT_TRUE(x.dims[1].has_value);
  EXPECT_EQ(x.dims[1].value, 3);
  EXPECT_EQ(x.dims[2].value, 224);
  EXPECT_EQ(x.dims[3].param, "");
  ASSERT_EQ(graph.outputs.size(), 1u);
  EXPECT_EQ(graph.outputs[0].elem_type, kUint8);
  ASSERT_EQ(graph.outputs[0].dims.size(), 2u);
  EXPECT_FALSE(graph.outputs[0].dims[1].has_value);
  EXPECT_TRUE(graph.outputs[0].dims[1].param.empty());
  ASSERT_EQ(graph.value_info.size(), 2u);
  EXPECT_EQ(graph.value_info[0].dims[1].value, 0);
  EXPECT_TRUE(graph.value_info[0].dims[1].has_value);
  EXPECT_EQ(graph.value_info[1].name, "no_type");
  EXPECT_FALSE(graph.value_info[1].is_tensor);
  EXPECT_FALSE(graph.value_info[1].has_shape);
}

TEST_F(OnnxReaderTest, DecodesEveryElementType) {
  {  // float: raw and float_data
    auto h = DecodeTensor(RawTensor("f", kFloat, {2}, Le<float>({-1.5f, 3e38f})));
    ASSERT_TRUE(h.ok()) << h.error().message;
    EXPECT_EQ(h->type, kFloat);
    EXPECT_EQ(h->data.size(), 8u);
    EXPECT_EQ(h->At(0), -1.5);
    EXPECT_EQ(h->At(1), double(3e38f));
    auto t = DecodeTensor(TensorHead("ft", kFloat, {1, 3}).PackedFloats(4, {1, 0.1f, -0.0f}));
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t->dims, (std::vector<int64_t>{1, 3}));
    EXPECT_EQ(t->At(1), double(0.1f));
    EXPECT_TRUE(std::signbit(t->At(2)));
  }
  {  // uint8 raw; uint8 through int32_data
    auto h = DecodeTensor(RawTensor("u8", kUint8, {4}, {0, 1, 128, 255}));
    ASSERT_TRUE(h.ok()) << h.error().message;
    EXPECT_EQ(h->data, (std::vector<uint8_t>{0, 1, 128, 255}));
    EXPECT_EQ(h->At(3), 255);
    auto t = DecodeTensor(TensorHead("u8t", kUint8, {3}).PackedVarints(5, {0, 200, 255}));
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t->data, (std::vector<uint8_t>{0, 200, 255}));
  }
  {  // int8 raw; int8 through int32_data (negative values are 10-byte varints)
    auto h = DecodeTensor(RawTensor("i8", kInt8, {3}, {0x80, 0xff, 0x7f}));
    ASSERT_TRUE(h.ok()) << h.error().message;
    EXPECT_EQ(h->At(0), -128);
    EXPECT_EQ(h->At(1), -1);
    EXPECT_EQ(h->At(2), 127);
    auto t = DecodeTensor(TensorHead("i8t", kInt8, {3}).Int(5, -128).Int(5, -1).Int(5, 5));
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t->data, (std::vector<uint8_t>{0x80, 0xff, 0x05}));
    EXPECT_EQ(t->At(0), -128);
  }
  {  // int32 raw and typed
    auto h = DecodeTensor(RawTensor("i32", kInt32, {2}, Le<int32_t>({-2147483647 - 1, 123456})));
    ASSERT_TRUE(h.ok()) << h.error().message;
    EXPECT_EQ(h->At(0), -2147483648.0);
    EXPECT_EQ(h->At(1), 123456);
    auto t = DecodeTensor(TensorHead("i32t", kInt32, {3}).PackedVarints(5, {-1, 2147483647, 0}));
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t->data, Le<int32_t>({-1, 2147483647, 0}));
  }
  {  // int64 raw and typed
    auto h = DecodeTensor(RawTensor("i64", kInt64, {2}, Le<int64_t>({-3, int64_t(1) << 40})));
    ASSERT_TRUE(h.ok()) << h.error().message;
    EXPECT_EQ(h->At(0), -3);
    EXPECT_EQ(h->At(1), std::ldexp(1.0, 40));
    auto t = DecodeTensor(TensorHead("i64t", kInt64, {2}).PackedVarints(7, {std::numeric_limits<int64_t>::min(), 9}));
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(t->data, Le<int64_t>({std::numeric_limits<int64_t>::min(), 9}));
  }
  {  // float16: exact widening of normal, subnormal, signed zero, infinity and NaN bit patterns
    const std::vector<uint16_t> bits = {0x3c00, 0xc000, 0x0001, 0x03ff, 0x0400, 0x8000,
                                        0x7bff, 0x7c00, 0xfc00, 0x3555, 0x8001, 0x7e00};
    const std::vector<double> want = {1.0,
                                      -2.0,
                                      std::ldexp(1.0, -24),  // smallest subnormal
                                      1023 * std::ldexp(1.0, -24),  // largest subnormal
                                      std::ldexp(1.0, -14),  // smallest normal
                                      -0.0,
                                      65504.0,
                                      INFINITY,
                                      -INFINITY,
                                      0.333251953125,
                                      -std::ldexp(1.0, -24)};
    auto raw = DecodeTensor(RawTensor("h", kFloat16, {int64_t(bits.size())}, ToBytes(bits)));
    ASSERT_TRUE(raw.ok()) << raw.error().message;
    std::vector<int64_t> as_int32(bits.begin(), bits.end());  // float16 bits in int32_data
    auto typed = DecodeTensor(TensorHead("ht", kFloat16, {int64_t(bits.size())}).PackedVarints(5, as_int32));
    ASSERT_TRUE(typed.ok()) << typed.error().message;
    EXPECT_EQ(raw->data, typed->data);
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(raw->At(int64_t(i)), want[i]) << "bits " << std::hex << bits[i];
    EXPECT_TRUE(std::signbit(raw->At(5))) << "float16 -0 lost its sign";
    EXPECT_FALSE(std::signbit(raw->At(2)));
    EXPECT_TRUE(std::isnan(raw->At(11)));
  }
  {  // bfloat16
    auto h = DecodeTensor(RawTensor("bf", kBFloat16, {2}, Le<uint16_t>({0x3f80, 0xc0a0})));
    ASSERT_TRUE(h.ok()) << h.error().message;
    EXPECT_EQ(h->At(0), 1.0);
    EXPECT_EQ(h->At(1), -5.0);
  }
  {  // double: raw, packed and unpacked double_data
    auto h = DecodeTensor(RawTensor("d", kDouble, {2}, Le<double>({0.1, -1e300})));
    ASSERT_TRUE(h.ok()) << h.error().message;
    EXPECT_EQ(h->At(0), 0.1);
    EXPECT_EQ(h->At(1), -1e300);
    auto p = DecodeTensor(TensorHead("dp", kDouble, {2}).PackedDoubles(10, {0.1, 2.5}));
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_EQ(p->At(0), 0.1);
    EXPECT_EQ(p->At(1), 2.5);
    auto u = DecodeTensor(TensorHead("du", kDouble, {2}).Double(10, -0.5).Double(10, 1e-310));
    ASSERT_TRUE(u.ok()) << u.error().message;
    EXPECT_EQ(u->At(0), -0.5);
    EXPECT_EQ(u->At(1), 1e-310);
  }
  {  // uint32 / uint64 through uint64_data
    auto a = DecodeTensor(TensorHead("u32", kUint32, {2}).PackedVarints(11, {4294967295, 7}));
    ASSERT_TRUE(a.ok()) << a.error().message;
    EXPECT_EQ(a->At(0), 4294967295.0);
    EXPECT_EQ(a->At(1), 7);
    auto b = DecodeTensor(TensorHead("u64", kUint64, {1}).Varint(11, ~uint64_t(0)));
    ASSERT_TRUE(b.ok()) << b.error().message;
    EXPECT_EQ(b->data, std::vector<uint8_t>(8, 0xff));
  }
  {  // a scalar (no dims) and an empty tensor
    auto s = DecodeTensor(TensorHead("s", kFloat, {}).Float(4, 2.5f));
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(s->NumElements(), 1);
    EXPECT_EQ(s->At(0), 2.5);
    auto e = DecodeTensor(TensorHead("e", kFloat, {3, 0}));
    ASSERT_TRUE(e.ok()) << e.error().message;
    EXPECT_EQ(e->NumElements(), 0);
    EXPECT_TRUE(e->data.empty());
  }
}

TEST_F(OnnxReaderTest, DecodeSizeMismatchesNameTheTensor) {
  struct Case {
    Pb tensor;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {RawTensor("short_raw", kFloat, {2, 3}, std::vector<uint8_t>(20)), {"'short_raw'", "20 bytes", "24 bytes"}},
      {RawTensor("long_raw", kFloat, {2, 3}, std::vector<uint8_t>(28)), {"'long_raw'", "28 bytes", "24 bytes"}},
      {RawTensor("f16_raw", kFloat16, {3}, std::vector<uint8_t>(3)), {"'f16_raw'", "3 bytes", "6 bytes"}},
      {TensorHead("few_floats", kFloat, {4}).PackedFloats(4, {1, 2, 3}), {"'few_floats'", "12 bytes", "16 bytes"}},
      {TensorHead("many_int32", kInt32, {2}).PackedVarints(5, {1, 2, 3}), {"'many_int32'", "12 bytes", "8 bytes"}},
      {TensorHead("few_int8", kInt8, {3}).Int(5, 1), {"'few_int8'", "1 bytes", "3 bytes"}},
      {TensorHead("many_int64", kInt64, {1}).Int(7, 1).Int(7, 2), {"'many_int64'", "16 bytes", "8 bytes"}},
      {TensorHead("few_double", kDouble, {2}).Double(10, 1), {"'few_double'", "8 bytes", "16 bytes"}},
      {TensorHead("no_data", kFloat, {2}), {"'no_data'", "0 bytes", "8 bytes"}},
      // float values in int32_data are not float_data
      {TensorHead("wrong_field", kFloat, {1}).Int(5, 1), {"'wrong_field'"}},
  };
  for (const Case& c : cases) {
    auto h = DecodeTensor(c.tensor);
    ASSERT_FALSE(h.ok()) << "decoded " << std::string(c.fragments[0]);
    EXPECT_EQ(h.error().kind, ErrorKind::User);
    for (const std::string& f : c.fragments) {
      EXPECT_NE(h.error().message.find(f), std::string::npos) << "no \"" << f << "\" in: " << h.error().message;
    }
  }
  // Through ImportOnnx, the message names the file and the initializer.
  std::vector<uint8_t> model = Model(QdqConvGraph(RawTensor("w", kInt8, {2, 2, 2, 2}, std::vector<uint8_t>(15))));
  auto g = Import(model);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().kind, ErrorKind::User);
  EXPECT_TRUE(MessageHas(g.error(), {"model.onnx", "initializer 'w'", "15 bytes", "16 bytes"}));
}

TEST_F(OnnxReaderTest, DecodeRejectsBadDimsAndTypes) {
  auto neg = DecodeTensor(TensorHead("neg", kFloat, {2, -1}));
  ASSERT_FALSE(neg.ok());
  EXPECT_TRUE(MessageHas(neg.error(), {"'neg'", "dimension -1"}));
  auto huge = DecodeTensor(TensorHead("huge", kUint8, {int64_t(1) << 21, int64_t(1) << 21}).Bytes(9, {1}));
  ASSERT_FALSE(huge.ok());
  EXPECT_TRUE(MessageHas(huge.error(), {"'huge'", "2^40"}));
  auto str = DecodeTensor(TensorHead("str", kString, {1}).Str(6, "hello"));
  ASSERT_FALSE(str.ok());
  EXPECT_TRUE(MessageHas(str.error(), {"'str'", "string", "not supported"}));
  auto unknown = DecodeTensor(RawTensor("unknown", 42, {1}, {0}));
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(MessageHas(unknown.error(), {"'unknown'", "not supported"}));
  EXPECT_STREQ(onnx::ElemTypeName(kFloat16), "float16");
  EXPECT_EQ(onnx::ElemBytes(kString), 0);
  EXPECT_EQ(onnx::ElemBytes(kDouble), 8);
}

// Malformed wire format: every case is a UserError naming the source, never a crash.
TEST_F(OnnxReaderTest, MalformedWireFormatIsAUserError) {
  const std::vector<uint8_t> good = QdqConvModel();
  ASSERT_TRUE(Parse(good).ok());
  auto with = [&](Pb extra) {  // the good model plus one more top-level field
    std::vector<uint8_t> b = good;
    b.insert(b.end(), extra.b.begin(), extra.b.end());
    return b;
  };
  struct Case {
    std::string label;
    std::vector<uint8_t> bytes;
    std::string fragment;
  };
  std::vector<uint8_t> too_long_varint = {0x08};  // ir_version with 11 continuation bytes
  for (int i = 0; i < 11; ++i) too_long_varint.push_back(0xff);
  too_long_varint.push_back(0x01);
  const std::vector<Case> cases = {
      {"empty", {}, "not an ONNX model"},
      {"no graph", Pb().Int(1, 7).b, "not an ONNX model"},
      {"no ir_version", Pb().Msg(7, Pb()).b, "not an ONNX model"},
      {"field number 0", with(Pb().Key(0, 0).Varint(1, 0)), "field number 0"},
      {"group wire type", with(Pb().Key(5, 3)), "wire type 3"},
      {"wire type 7", with(Pb().Key(5, 7)), "wire type 7"},
      {"length past the end", with(Pb().Key(7, 2).Varint(1, 0)), "runs past the end"},  // length 8 of 2 bytes
      {"truncated varint", with(Pb().Key(1, 0)), "truncated varint"},
      {"varint of 11 bytes", too_long_varint, "varint longer than 10 bytes"},
      {"truncated fixed32", with(Pb().Key(9, 5)), "truncated fixed32"},
      {"truncated fixed64", with(Pb().Key(9, 1)), "truncated fixed64"},
      {"ir_version as bytes", with(Pb().Str(1, "7")), "ir_version"},
      {"graph as varint", with(Pb().Varint(7, 1)), "graph"},
      {"node name as varint", with(Pb().Msg(7, Pb().Msg(1, Pb().Varint(3, 1)))), "name"},
      {"initializer data_type as bytes", with(Pb().Msg(7, Pb().Msg(5, Pb().Str(2, "x")))), "data_type"},
      {"packed floats of 7 bytes",
       with(Pb().Msg(7, Pb().Msg(5, Pb().Bytes(4, std::vector<uint8_t>(7))))), "packed fixed-width run of 7 bytes"},
      {"packed varint run truncated", with(Pb().Msg(7, Pb().Msg(5, Pb().Bytes(1, {0x80})))), "truncated packed varint"},
      {"attribute f as varint", with(Pb().Msg(7, Pb().Msg(1, Pb().Msg(5, Pb().Varint(2, 1))))), "'f'"},
      {"dim as varint", with(Pb().Msg(7, Pb().Msg(11, Pb().Msg(2, Pb().Msg(1, Pb().Msg(2, Pb().Varint(1, 3))))))),
       "dim"},
  };
  for (const Case& c : cases) {
    auto m = Parse(c.bytes);
    ASSERT_FALSE(m.ok()) << c.label;
    EXPECT_EQ(m.error().kind, ErrorKind::User) << c.label;
    EXPECT_TRUE(MessageHas(m.error(), {"test.onnx", c.fragment})) << c.label;
  }
  auto missing = onnx::ReadModel(dir_ + "/absent.onnx");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(MessageHas(missing.error(), {"absent.onnx", "cannot open"}));
}

// ---- 2. External data ------------------------------------------------------------------------------

class OnnxExternalDataTest : public OnnxTest {
 protected:
  void SetUp() override {
    OnnxTest::SetUp();
    std::vector<uint8_t> file(16, 0xee);  // 16 bytes of padding, then 6 floats
    std::vector<uint8_t> values = Le<float>({1, -2, 3.5f, 0.25f, 5, -6});
    file.insert(file.end(), values.begin(), values.end());
    Write("weights.bin", file);  // 40 bytes
    std::filesystem::create_directories(dir_ + "/sub");
    Write("sub/w.bin", values);
  }
  Result<onnx::HostTensor> Ext(const std::map<std::string, std::string>& entries,
                               std::vector<int64_t> dims = {2, 3}) {
    return DecodeTensor(ExternalTensor("ext", kFloat, dims, entries), dir_);
  }
};

TEST_F(OnnxExternalDataTest, ReadsFromTheModelDirectory) {
  auto parsed = onnx::ParseTensor(
      ExternalTensor("ext", kFloat, {2, 3}, {{"location", "weights.bin"}, {"offset", "16"}, {"length", "24"}}).b, "t");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_TRUE(parsed->external);
  EXPECT_FALSE(parsed->has_raw);
  EXPECT_EQ(parsed->external_data.at("location"), "weights.bin");
  EXPECT_EQ(parsed->external_data.at("offset"), "16");
  for (const auto& entries : std::vector<std::map<std::string, std::string>>{
           {{"location", "weights.bin"}, {"offset", "16"}, {"length", "24"}},
           {{"location", "weights.bin"}, {"offset", "16"}},                // length from the dims
           {{"location", "sub/w.bin"}},                                    // offset 0
           {{"location", "./sub/../sub/w.bin"}, {"checksum", "ignored"}},  // normalised inside the directory
       }) {
    auto h = Ext(entries);
    ASSERT_TRUE(h.ok()) << entries.at("location") << ": " << h.error().message;
    EXPECT_EQ(h->dims, (std::vector<int64_t>{2, 3}));
    const std::vector<double> want = {1, -2, 3.5, 0.25, 5, -6};
    for (int i = 0; i < 6; ++i) EXPECT_EQ(h->At(i), want[size_t(i)]);
  }
  // ImportOnnx reads external data next to the model.
  std::vector<uint8_t> bin(8, 0);
  std::vector<uint8_t> w = WeightBytes();
  bin.insert(bin.end(), w.begin(), w.end());
  Write("conv.bin", bin);
  auto g = Import(Model(QdqConvGraph(ExternalTensor(
      "w", kInt8, {2, 2, 2, 2}, {{"location", "conv.bin"}, {"offset", "8"}, {"length", "16"}}))));
  ASSERT_TRUE(g.ok()) << g.error().message;
  auto g_missing = Import(Model(QdqConvGraph(ExternalTensor("w", kInt8, {2, 2, 2, 2}, {{"location", "nope.bin"}}))));
  ASSERT_FALSE(g_missing.ok());
  EXPECT_TRUE(MessageHas(g_missing.error(), {"initializer 'w'", "nope.bin"}));
}

TEST_F(OnnxExternalDataTest, RejectsBadLocationsAndRanges) {
  struct Case {
    std::map<std::string, std::string> entries;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {{{"location", "missing.bin"}}, "missing or unreadable"},
      {{{"location", "/etc/passwd"}}, "must be a relative path inside the model's directory"},
      {{{"location", "../x"}}, "must be a relative path inside the model's directory"},
      {{{"location", "sub/../../x"}}, "must be a relative path inside the model's directory"},
      {{{"location", "weights.bin"}, {"offset", "24"}, {"length", "24"}}, "runs past the end"},
      {{{"location", "weights.bin"}, {"offset", "41"}}, "runs past the end"},
      {{{"location", "weights.bin"}, {"offset", "18446744073709551615"}}, "runs past the end"},
      {{{"location", "weights.bin"}, {"length", "20"}}, "20 bytes of data"},
      {{{"location", "weights.bin"}, {"length", "28"}}, "28 bytes of data"},
      {{{"location", "weights.bin"}, {"offset", "sixteen"}}, "not a number"},
      {{{"location", "weights.bin"}, {"length", "99999999999999999999999"}}, "not a number"},
      {{{"offset", "0"}}, "without a location"},
      {{{"location", ""}}, "without a location"},
  };
  for (const Case& c : cases) {
    auto h = Ext(c.entries);
    std::string label;
    for (const auto& [k, v] : c.entries) label += k + "=" + v + " ";
    ASSERT_FALSE(h.ok()) << label;
    EXPECT_EQ(h.error().kind, ErrorKind::User) << label;
    EXPECT_TRUE(MessageHas(h.error(), {"initializer 'ext'", c.fragment})) << label;
  }
  // A directory as the location: an error (which one is the platform's), not a crash or a hang.
  for (const char* loc : {".", "sub", "sub/"}) {
    auto h = Ext({{"location", loc}});
    EXPECT_FALSE(h.ok()) << loc;
  }
}

// ---- 3. Hostile input through ImportOnnx -----------------------------------------------------------

class OnnxHostileTest : public OnnxTest {
 protected:
  // ImportOnnx on `bytes`: ok, or a UserError with a message; anything else (an InternalError, a
  // C++ exception) fails with `label`.
  bool ImportsOrUserError(const std::vector<uint8_t>& bytes, const std::string& path, const std::string& label) {
    EXPECT_TRUE(WriteFileBytes(path, bytes.data(), bytes.size()).ok());
    try {
      auto g = ImportOnnx(path, {});
      if (g.ok()) return true;
      if (g.error().kind != ErrorKind::User || g.error().message.empty()) {
        ADD_FAILURE() << label << ": internal error: " << g.error().message;
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << label << ": threw " << e.what();
    }
    return false;
  }
};

TEST_F(OnnxHostileTest, TheQdqConvModelImports) {
  auto g = Import(QdqConvModel());
  ASSERT_TRUE(g.ok()) << g.error().message;
  ASSERT_EQ(g->inputs.size(), 1u);
  ASSERT_EQ(g->outputs.size(), 1u);
  EXPECT_EQ(g->tensors[size_t(g->inputs[0])].name, "x");
  EXPECT_EQ(g->tensors[size_t(g->inputs[0])].shape, (std::vector<int64_t>{1, 2, 5, 5}));
  EXPECT_EQ(g->tensors[size_t(g->outputs[0])].name, "y");
  EXPECT_EQ(g->tensors[size_t(g->outputs[0])].shape, (std::vector<int64_t>{1, 2, 4, 4}));
  int convs = 0, quantizes = 0;
  for (const ir::Op& op : g->ops) {
    convs += op.type == ir::OpType::Conv2d;
    quantizes += op.type == ir::OpType::Quantize;
  }
  EXPECT_EQ(convs, 1);
  EXPECT_EQ(quantizes, 1);
}

TEST_F(OnnxHostileTest, EveryTruncationIsAUserError) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<uint8_t> model = QdqConvModel();
  const std::string path = dir_ + "/truncated.onnx";
  ASSERT_TRUE(ImportsOrUserError(model, path, "the whole model"));
  for (size_t n = 0; n < model.size(); ++n) {
    std::vector<uint8_t> cut(model.begin(), model.begin() + std::ptrdiff_t(n));
    EXPECT_FALSE(ImportsOrUserError(cut, path, "truncated to " + std::to_string(n) + " bytes"))
        << "truncated to " << n << " of " << model.size() << " bytes imports";
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ info     ] %zu truncations in %.2f s\n", model.size(), s);
}

TEST_F(OnnxHostileTest, RandomMutationsAreOkOrUserErrors) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<uint8_t> model = QdqConvModel();
  const std::string path = dir_ + "/mutated.onnx";
  std::mt19937 rng(20240611u);
  int ok = 0;
  const int kMutations = 3000;
  for (int i = 0; i < kMutations; ++i) {
    std::vector<uint8_t> m = model;
    const int changes = 1 + int(rng() % 4);
    std::string label = "mutation " + std::to_string(i) + ":";
    for (int c = 0; c < changes; ++c) {
      const size_t at = rng() % m.size();
      const uint8_t v = uint8_t(rng());
      label += " [" + std::to_string(at) + "]=" + std::to_string(v);
      m[at] = v;
    }
    ok += ImportsOrUserError(m, path, label);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ info     ] %d mutations, %d import, %d are user errors, %.2f s\n", kMutations, ok, kMutations - ok, s);
}

// Targeted hostile values the random mutations rarely reach: dimensions near the int64 limits,
// window attributes that overflow int32 or int64 arithmetic.
TEST_F(OnnxHostileTest, ExtremeDimensionsAndAttributes) {
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  auto conv_graph = [](const std::vector<D>& x_dims, const std::vector<Pb>& conv_attrs) {
    Pb g;
    g.Msg(1, Node("QuantizeLinear", {"x", "x_scale", "x_zp"}, {"xq"}));
    g.Msg(1, Node("DequantizeLinear", {"xq", "x_scale", "x_zp"}, {"xdq"}));
    g.Msg(1, Node("DequantizeLinear", {"w", "w_scale", "w_zp"}, {"wdq"}, {AttrI("axis", 0)}));
    g.Msg(1, Node("Conv", {"xdq", "wdq"}, {"y"}, conv_attrs));
    g.Msg(5, RawTensor("x_scale", kFloat, {}, Le<float>({0.05f})));
    g.Msg(5, RawTensor("x_zp", kUint8, {}, {128}));
    g.Msg(5, RawTensor("w", kInt8, {2, 2, 2, 2}, WeightBytes()));
    g.Msg(5, RawTensor("w_scale", kFloat, {2}, Le<float>({0.01f, 0.02f})));
    g.Msg(5, RawTensor("w_zp", kInt8, {2}, {0, 0}));
    g.Msg(11, ValueInfo("x", kFloat, x_dims));
    g.Msg(12, ValueInfo("y", kFloat, {{1}, {2}, {4}, {4}}));
    return Model(g);
  };
  struct Case {
    std::string label;
    std::vector<uint8_t> model;
  };
  const std::vector<Case> cases = {
      {"H = W = 2^32", conv_graph({{1}, {2}, {int64_t(1) << 32}, {int64_t(1) << 32}}, {})},
      {"H = int64 max", conv_graph({{1}, {2}, {kMax}, {5}}, {})},
      {"strides 2^32 + 1", conv_graph({{1}, {2}, {5}, {5}}, {AttrInts("strides", {(int64_t(1) << 32) + 1, 1})})},
      {"dilations 2^32 + 1", conv_graph({{1}, {2}, {5}, {5}}, {AttrInts("dilations", {(int64_t(1) << 32) + 1, 1})})},
      {"dilations int64 max", conv_graph({{1}, {2}, {5}, {5}}, {AttrInts("dilations", {kMax, 1})})},
      {"strides int64 max, SAME_UPPER",
       conv_graph({{1}, {2}, {5}, {5}}, {AttrInts("strides", {kMax, kMax}), AttrS("auto_pad", "SAME_UPPER")})},
      {"group int64 min", conv_graph({{1}, {2}, {5}, {5}}, {AttrI("group", std::numeric_limits<int64_t>::min())})},
      {"pads 2^20", conv_graph({{1}, {2}, {5}, {5}}, {AttrInts("pads", {1 << 20, 1 << 20, 1 << 20, 1 << 20})})},
  };
  for (const Case& c : cases) ImportsOrUserError(c.model, dir_ + "/extreme.onnx", c.label);

  // A Reshape whose target shape's product wraps around int64 to the input's element count
  // (7 * 0x6db6db6db6db6db7 == 1 mod 2^64): refused, not imported with a bogus shape.
  Pb g;
  g.Msg(1, Node("Reshape", {"x", "shape"}, {"y"}));
  g.Msg(5, RawTensor("shape", kInt64, {3}, Le<int64_t>({50, 7, 0x6db6db6db6db6db7})));
  g.Msg(11, ValueInfo("x", kFloat, {{1}, {50}}));
  g.Msg(12, ValueInfo("y", kFloat, {}));
  EXPECT_FALSE(ImportsOrUserError(Model(g), dir_ + "/reshape.onnx", "wrapping reshape"));
}

// Decode compares the byte count the dims declare with the bytes that are there before it
// allocates anything: 2^40 declared float elements with 4 bytes of raw_data are a size error, not
// an attempt to allocate 4 TiB (once a std::bad_alloc out of ImportOnnx).
TEST_F(OnnxHostileTest, HugeDeclaredDimsWithShortDataAreAUserError) {
  try {
    auto h = DecodeTensor(RawTensor("big", kFloat, {int64_t(1) << 40}, Le<float>({1.0f})));
    ASSERT_FALSE(h.ok());
    EXPECT_TRUE(MessageHas(h.error(), {"'big'", "4 bytes"}));
  } catch (const std::exception& e) {
    ADD_FAILURE() << "Decode threw " << e.what();
  }
  Pb g = QdqConvGraph(RawTensor("w", kInt8, {2, 2, 2, 2}, WeightBytes()));
  g.Msg(5, TensorHead("big", kFloat, {int64_t(1) << 20, int64_t(1) << 20}).PackedFloats(4, {1.0f}));
  EXPECT_FALSE(ImportsOrUserError(Model(g), dir_ + "/big.onnx", "2^40 elements declared"));
}

// A per-axis DequantizeLinear whose axis has size 0 (a 0-element scale): refused. The importer
// reaches ChannelScales (compiler/graph/import_onnx_ops.cc, `c.scales[0]` of an empty vector) with
// no scales: harmless in a release build (the verifier then refuses the 0 dimension), an abort
// with -D_GLIBCXX_ASSERTIONS.
Pb ZeroAxisGraph(bool conv) {
  Pb g;
  g.Msg(1, Node("QuantizeLinear", {"x", "x_scale", "x_zp"}, {"xq"}));
  g.Msg(1, Node("DequantizeLinear", {"xq", "x_scale", "x_zp"}, {"xdq"}));
  g.Msg(1, Node("DequantizeLinear", {"w", "w_scale", "w_zp"}, {"wdq"}, {AttrI("axis", conv ? 0 : 1)}));
  g.Msg(1, Node(conv ? "Conv" : "MatMul", {"xdq", "wdq"}, {"y"}));
  g.Msg(5, RawTensor("x_scale", kFloat, {}, Le<float>({0.05f})));
  g.Msg(5, RawTensor("x_zp", kUint8, {}, {128}));
  g.Msg(5, RawTensor("w", kInt8, conv ? std::vector<int64_t>{0, 2, 2, 2} : std::vector<int64_t>{4, 0}, {}));
  g.Msg(5, RawTensor("w_scale", kFloat, {0}, {}));
  g.Msg(5, RawTensor("w_zp", kInt8, {0}, {}));
  if (conv) {
    g.Msg(11, ValueInfo("x", kFloat, {{1}, {2}, {5}, {5}}));
    g.Msg(12, ValueInfo("y", kFloat, {{1}, {0}, {4}, {4}}));
  } else {
    g.Msg(11, ValueInfo("x", kFloat, {{1}, {4}}));
    g.Msg(12, ValueInfo("y", kFloat, {{1}, {0}}));
  }
  return g;
}
TEST_F(OnnxHostileTest, ZeroSizedPerAxisWeightsAreRefused) {
  EXPECT_FALSE(ImportsOrUserError(Model(ZeroAxisGraph(true)), dir_ + "/zero_conv.onnx", "Conv, 0 output channels"));
  EXPECT_FALSE(ImportsOrUserError(Model(ZeroAxisGraph(false)), dir_ + "/zero_mm.onnx", "MatMul, 0 output columns"));
}

// Found by the ONNX fuzz target (tests/fuzz/onnx_fuzz.cc): a node without outputs read outputs[0].
TEST_F(OnnxHostileTest, NodesWithoutOutputsAreRefused) {
  for (const char* op : {"Flatten", "Transpose", "Relu", "Sigmoid", "Softmax"}) {
    Pb g;
    g.Msg(1, Node(op, {"x"}, {}, {}, "headless"));
    g.Str(2, "no_outputs");
    g.Msg(11, ValueInfo("x", kFloat, {{1}, {4}}));
    g.Msg(12, ValueInfo("x", kFloat, {{1}, {4}}));
    auto r = Import(Model(g));
    ASSERT_FALSE(r.ok()) << op;
    EXPECT_EQ(r.error().kind, ErrorKind::User) << op;
    EXPECT_NE(r.error().message.find("no output"), std::string::npos) << op << ": " << r.error().message;
  }
}

// ---- 4. TensorProto files ----------------------------------------------------------------------------

class OnnxTensorFileTest : public OnnxTest {};

TEST_F(OnnxTensorFileTest, ParsesASerializedTensorProto) {
  std::vector<uint8_t> values(9);
  for (size_t i = 0; i < values.size(); ++i) values[i] = uint8_t(i * 29);
  const Pb t = RawTensor("input", kUint8, {1, 1, 3, 3}, values);
  auto parsed = onnx::ParseTensor(t.b, "input_0.pb");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->name, "input");
  EXPECT_EQ(parsed->data_type, kUint8);
  EXPECT_EQ(parsed->dims, (std::vector<int64_t>{1, 1, 3, 3}));
  EXPECT_EQ(parsed->raw_size, 9u);
  EXPECT_EQ(parsed->raw, t.b.data() + (t.b.size() - 9));  // a view into the bytes
  auto h = onnx::Decode(parsed.value(), dir_, "input_0.pb");
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->data, values);
  // Malformed: every strict prefix that cuts a field is an error naming the file.
  for (size_t n = 1; n < t.b.size(); ++n) {
    auto cut = onnx::ParseTensor(std::vector<uint8_t>(t.b.begin(), t.b.begin() + std::ptrdiff_t(n)), "input_0.pb");
    if (!cut.ok()) {
      EXPECT_EQ(cut.error().kind, ErrorKind::User);
      EXPECT_TRUE(MessageHas(cut.error(), {"input_0.pb"}));
    }
  }
  auto bad = onnx::ParseTensor(Pb().Str(2, "float").b, "input_1.pb");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(MessageHas(bad.error(), {"input_1.pb", "'data_type'", "wire type 2"}));
}

TEST_F(OnnxTensorFileTest, ReadsOnnxNodeTestData) {
  const std::string root = "/usr/share/libonnx-testdata/data/node";
  if (!std::filesystem::is_directory(root)) GTEST_SKIP() << root << " is missing (Debian's libonnx-testdata)";
  auto tensor_file = [](const std::string& path) -> Result<onnx::HostTensor> {
    VKQC_ASSIGN_OR_RETURN(auto bytes, ReadFileBytes(path));
    VKQC_ASSIGN_OR_RETURN(onnx::Tensor t, onnx::ParseTensor(*bytes, path));
    return onnx::Decode(t, std::filesystem::path(path).parent_path().string(), path);
  };
  const std::string qconv = root + "/test_qlinearconv";
  if (std::filesystem::exists(qconv + "/model.onnx")) {
    auto m = onnx::ReadModel(qconv + "/model.onnx");
    ASSERT_TRUE(m.ok()) << m.error().message;
    EXPECT_EQ(m->ir_version, 5);
    EXPECT_EQ(m->producer_name, "backend-test");
    EXPECT_EQ(m->Opset(""), 10);
    ASSERT_EQ(m->graph.nodes.size(), 1u);
    EXPECT_EQ(m->graph.nodes[0].op_type, "QLinearConv");
    EXPECT_EQ(m->graph.nodes[0].inputs.size(), 8u);
    EXPECT_EQ(m->graph.nodes[0].outputs, (std::vector<std::string>{"y"}));
    ASSERT_EQ(m->graph.inputs.size(), 8u);
    EXPECT_EQ(m->graph.inputs[0].name, "x");
    EXPECT_EQ(m->graph.inputs[0].elem_type, kUint8);
    ASSERT_EQ(m->graph.inputs[0].dims.size(), 4u);
    EXPECT_EQ(m->graph.inputs[0].dims[3].value, 7);

    auto x = tensor_file(qconv + "/test_data_set_0/input_0.pb");
    ASSERT_TRUE(x.ok()) << x.error().message;
    EXPECT_EQ(x->type, kUint8);
    EXPECT_EQ(x->dims, (std::vector<int64_t>{1, 1, 7, 7}));
    EXPECT_EQ(x->data.size(), 49u);
    EXPECT_EQ(x->At(0), 255);
    EXPECT_EQ(x->At(1), 174);
    auto scale = tensor_file(qconv + "/test_data_set_0/input_1.pb");
    ASSERT_TRUE(scale.ok()) << scale.error().message;
    EXPECT_EQ(scale->type, kFloat);
    EXPECT_TRUE(scale->dims.empty());
    EXPECT_NEAR(scale->At(0), 0.003692047, 1e-9);
    auto zp = tensor_file(qconv + "/test_data_set_0/input_2.pb");
    ASSERT_TRUE(zp.ok()) << zp.error().message;
    EXPECT_EQ(zp->At(0), 132);
    auto y = tensor_file(qconv + "/test_data_set_0/output_0.pb");
    ASSERT_TRUE(y.ok()) << y.error().message;
    EXPECT_EQ(y->dims, (std::vector<int64_t>{1, 1, 7, 7}));
  }
  // float16 in, the same values as double out: the reader's float16 widening is exact.
  const std::string cast = root + "/test_cast_FLOAT16_to_DOUBLE/test_data_set_0";
  if (std::filesystem::exists(cast + "/input_0.pb")) {
    auto in = tensor_file(cast + "/input_0.pb");
    auto out = tensor_file(cast + "/output_0.pb");
    ASSERT_TRUE(in.ok()) << in.error().message;
    ASSERT_TRUE(out.ok()) << out.error().message;
    EXPECT_EQ(in->type, kFloat16);
    EXPECT_EQ(out->type, kDouble);
    EXPECT_EQ(in->dims, (std::vector<int64_t>{3, 4}));
    ASSERT_EQ(in->NumElements(), out->NumElements());
    for (int64_t i = 0; i < in->NumElements(); ++i) EXPECT_EQ(in->At(i), out->At(i)) << i;
  }
}

}  // namespace
}  // namespace vkqc
