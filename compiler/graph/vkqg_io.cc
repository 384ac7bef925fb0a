// .vkqg reader/writer. The reader trusts nothing: the flatbuffer is verified, then every
// enum, index and DataRef is checked before the IR is built, and the IR goes through
// VerifyGraph. Constant tensors in the returned IR are views into the caller's bytes.
#include "compiler/graph/vkqg_io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <unistd.h>

#include "compiler/graph/verify.h"
#include "schema/graph_generated.h"

namespace vkqc {
namespace {

namespace fbg = vkqc::fb::graph;

constexpr uint64_t kAlign = 64;
constexpr uint32_t kFormatVersion = 1;
constexpr int64_t kMaxElements = int64_t{1} << 56;

uint64_t AlignUp(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }
std::string Quote(const std::string& s) { return "'" + s + "'"; }

std::string Printable(const uint8_t* p, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    char buf[8];
    if (p[i] >= 0x20 && p[i] < 0x7f) {
      s += static_cast<char>(p[i]);
    } else {
      std::snprintf(buf, sizeof buf, "\\x%02x", p[i]);
      s += buf;
    }
  }
  return s;
}

// ---- reading -----------------------------------------------------------------------------------

class Reader {
 public:
  Reader(std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& origin)
      : bytes_(std::move(bytes)), origin_(origin) {}

  Result<ir::Graph> Read();

 private:
  Error Fail(const std::string& what) const { return UserError(origin_ + ": " + what); }
  Status ReadQuant(const fbg::Quant* q, const std::string& owner, ir::Quant& out) const;
  Status ReadTensor(const fbg::Tensor& t, ir::Tensor& out) const;
  Status ReadOp(int index, const fbg::Op& op, ir::Op& out) const;
  Status ReadIndices(const flatbuffers::Vector<int32_t>* v, const std::string& what,
                     std::vector<int>& out) const;
  // A fixed-length int vector of an attrs table: absent keeps `out`'s default.
  Status ReadIntArray(const flatbuffers::Vector<int32_t>* v, size_t n, const std::string& what,
                      int32_t* out) const;
  Status ReadActivation(int8_t raw, const std::string& owner, ir::Activation& out) const;

  std::shared_ptr<const std::vector<uint8_t>> bytes_;
  std::string origin_;
  uint64_t segment_start_ = 0;
  uint64_t segment_size_ = 0;
  size_t num_tensors_ = 0;
};

Status Reader::ReadQuant(const fbg::Quant* q, const std::string& owner, ir::Quant& out) const {
  if (!q) return {};
  auto scheme = static_cast<uint8_t>(q->scheme());
  if (scheme > static_cast<uint8_t>(fbg::Scheme::MAX)) {
    return Fail(owner + ": unknown quantization scheme " + std::to_string(scheme) +
                "; the file may come from a newer vkqc");
  }
  out.scheme = static_cast<ir::Scheme>(scheme);
  if (q->scales()) out.scales.assign(q->scales()->begin(), q->scales()->end());
  if (q->zero_points()) out.zero_points.assign(q->zero_points()->begin(), q->zero_points()->end());
  if (!out.zero_points.empty() && out.zero_points.size() != out.scales.size()) {
    return Fail(owner + ": " + std::to_string(out.scales.size()) + " scales but " +
                std::to_string(out.zero_points.size()) + " zero points");
  }
  out.axis = q->axis();
  out.group_size = q->group_size();
  if (q->mins()) out.mins.assign(q->mins()->begin(), q->mins()->end());
  return {};
}

Status Reader::ReadTensor(const fbg::Tensor& t, ir::Tensor& out) const {
  out.name = t.name()->str();
  const std::string who = "tensor " + Quote(out.name);
  if (t.shape()) {
    // flatbuffers 2.0.8 verifies vectors for 4-byte alignment only; int64 needs 8.
    if (reinterpret_cast<uintptr_t>(t.shape()->data()) % alignof(int64_t) != 0) {
      return Fail(who + ": shape vector is misaligned; the graph header is corrupt");
    }
    out.shape.assign(t.shape()->begin(), t.shape()->end());
  }
  auto dtype = static_cast<uint8_t>(t.dtype());
  if (dtype > static_cast<uint8_t>(fbg::DType::MAX)) {
    return Fail(who + ": unknown dtype " + std::to_string(dtype) +
                "; the file may come from a newer vkqc");
  }
  out.dtype = static_cast<ir::DType>(dtype);
  if (t.quant()) {
    out.quant.emplace();
    VKQC_TRY(ReadQuant(t.quant(), who, *out.quant));
  }
  out.state = t.state();
  const fbg::DataRef* ref = t.data();
  if (!ref) return {};
  if (out.state) return Fail(who + ": a state tensor cannot carry constant data");

  const uint64_t off = ref->offset();
  const uint64_t len = ref->length();
  const std::string range =
      "constant data [offset " + std::to_string(off) + ", " + std::to_string(len) + " bytes]";
  if (off > segment_size_ || len > segment_size_ - off) {
    return Fail(who + ": " + range + " lies outside the constant segment (" +
                std::to_string(segment_size_) + " bytes)");
  }
  if (off % kAlign != 0) {
    return Fail(who + ": " + range + " is not " + std::to_string(kAlign) +
                "-byte aligned; the file is corrupt or was written by a broken tool");
  }
  int64_t elements = 1;
  for (int64_t d : out.shape) {
    if (d < 0) {
      return Fail(who + ": a constant needs a concrete shape, but dimension " + std::to_string(d) +
                  " is symbolic or negative");
    }
    if (d != 0 && elements > kMaxElements / d) return Fail(who + ": shape is too large");
    elements *= d;
  }
  const uint64_t want = (static_cast<uint64_t>(elements) * ir::DTypeBits(out.dtype) + 7) / 8;
  if (len != want) {
    return Fail(who + ": " + range + " does not match its shape: " + std::to_string(elements) +
                " elements of " + ir::DTypeName(out.dtype) + " need " + std::to_string(want) +
                " bytes");
  }
  out.data =
      ir::ConstData{bytes_, static_cast<size_t>(segment_start_ + off), static_cast<size_t>(len)};
  return {};
}

Status Reader::ReadIndices(const flatbuffers::Vector<int32_t>* v, const std::string& what,
                           std::vector<int>& out) const {
  if (!v) return {};
  for (int32_t i : *v) {
    if (i < 0 || static_cast<size_t>(i) >= num_tensors_) {
      return Fail(what + " tensor index " + std::to_string(i) + " is out of range (the graph has " +
                  std::to_string(num_tensors_) + " tensors)");
    }
    out.push_back(i);
  }
  return {};
}

Status Reader::ReadActivation(int8_t raw, const std::string& owner, ir::Activation& out) const {
  if (raw < 0 || raw > static_cast<int8_t>(fbg::Activation::MAX)) {
    return Fail(owner + ": unknown activation " + std::to_string(raw) +
                " (this vkqc knows: none, relu, relu6); the file may come from a newer vkqc");
  }
  out = static_cast<ir::Activation>(raw);
  return {};
}

Status Reader::ReadIntArray(const flatbuffers::Vector<int32_t>* v, size_t n,
                            const std::string& what, int32_t* out) const {
  if (!v) return {};
  if (v->size() != n) {
    return Fail(what + " has " + std::to_string(v->size()) + " values, expected " +
                std::to_string(n) + " (the file is corrupt or was written by a broken tool)");
  }
  for (size_t i = 0; i < n; ++i) out[i] = v->Get(static_cast<flatbuffers::uoffset_t>(i));
  return {};
}

Status Reader::ReadOp(int index, const fbg::Op& op, ir::Op& out) const {
  if (op.name()) out.name = op.name()->str();
  const std::string who = "op " + std::to_string(index) + " " + Quote(out.name);
  switch (op.type()) {
    case fbg::OpType::Linear:
    case fbg::OpType::Mul:
    case fbg::OpType::Silu:
    case fbg::OpType::Quantize:
    case fbg::OpType::Dequantize:
    case fbg::OpType::Conv2d:
    case fbg::OpType::Add:
    case fbg::OpType::AvgPool2d:
    case fbg::OpType::Embedding:
    case fbg::OpType::RmsNorm:
    case fbg::OpType::Rope:
    case fbg::OpType::Attention:
    case fbg::OpType::Argmax:
    case fbg::OpType::MaxPool2d:
    case fbg::OpType::Concat:
    case fbg::OpType::Sigmoid:
    case fbg::OpType::HardSigmoid:
    case fbg::OpType::HardSwish:
    case fbg::OpType::ResizeNearest:
    case fbg::OpType::Softmax:
    case fbg::OpType::Transpose:
    case fbg::OpType::Reshape:
    case fbg::OpType::Clip:
      break;
    default:
      return Fail(who + ": unknown op type " + std::to_string(static_cast<int>(op.type())) +
                  " (this vkqc knows: linear, mul, silu, quantize, dequantize, conv2d, add, "
                  "avg_pool2d, embedding, rms_norm, rope, attention, argmax, max_pool2d, concat, sigmoid, "
                  "hard_sigmoid, hard_swish, resize_nearest, softmax, transpose, reshape, clip); the file may come "
                  "from a newer vkqc");
  }
  out.type = static_cast<ir::OpType>(op.type());
  VKQC_TRY(ReadIndices(op.inputs(), who + ": input", out.inputs));
  VKQC_TRY(ReadIndices(op.outputs(), who + ": output", out.outputs));
  // Each attrs table belongs to one op type.
  auto wrong_attrs = [&](const char* table, ir::OpType owner) {
    return Fail(who + ": a " + ir::OpTypeName(out.type) + " op carries " + table +
                " (attributes of " + ir::OpTypeName(owner) + "); " +
                (out.type == ir::OpType::Linear || out.type == ir::OpType::Conv2d ||
                         out.type == ir::OpType::Add || out.type == ir::OpType::AvgPool2d ||
                         out.type == ir::OpType::RmsNorm || out.type == ir::OpType::Rope ||
                         out.type == ir::OpType::Attention || out.type == ir::OpType::MaxPool2d ||
                         out.type == ir::OpType::Concat || out.type == ir::OpType::HardSigmoid ||
                         out.type == ir::OpType::ResizeNearest || out.type == ir::OpType::Transpose ||
                         out.type == ir::OpType::Clip
                     ? "it takes its own attribute table"
                     : "it takes no attributes") +
                " (the file is corrupt or was written by a broken tool)");
  };
  switch (op.attrs_type()) {
    case fbg::OpAttrs::NONE:
      if (out.type == ir::OpType::Clip)
        return Fail(who + ": a clip op without UnaryAttrs (its min and max); the file is corrupt or was written by a "
                    "broken tool");
      return {};
    case fbg::OpAttrs::LinearAttrs: {
      if (out.type != ir::OpType::Linear) return wrong_attrs("LinearAttrs", ir::OpType::Linear);
      const fbg::LinearAttrs* a = op.attrs_as_LinearAttrs();
      if (!a) return {};
      VKQC_TRY(ReadQuant(a->input_quant(), who + ": input_quant", out.linear.input_quant));
      VKQC_TRY(ReadQuant(a->output_quant(), who + ": output_quant", out.linear.output_quant));
      out.linear.fused_relu = a->fused_relu();
      out.linear.fused_relu6 = a->fused_relu6();
      return {};
    }
    case fbg::OpAttrs::Conv2dAttrs: {
      if (out.type != ir::OpType::Conv2d) return wrong_attrs("Conv2dAttrs", ir::OpType::Conv2d);
      const fbg::Conv2dAttrs* a = op.attrs_as_Conv2dAttrs();
      if (!a) return {};
      ir::Conv2dAttrs& c = out.conv2d;
      VKQC_TRY(ReadIntArray(a->stride(), 2, who + ": stride", c.stride));
      VKQC_TRY(ReadIntArray(a->padding(), 4, who + ": padding", c.padding));
      VKQC_TRY(ReadIntArray(a->dilation(), 2, who + ": dilation", c.dilation));
      c.groups = a->groups();
      VKQC_TRY(ReadActivation(static_cast<int8_t>(a->activation()), who, c.activation));
      VKQC_TRY(ReadQuant(a->input_quant(), who + ": input_quant", c.input_quant));
      VKQC_TRY(ReadQuant(a->output_quant(), who + ": output_quant", c.output_quant));
      return {};
    }
    case fbg::OpAttrs::AddAttrs: {
      if (out.type != ir::OpType::Add) return wrong_attrs("AddAttrs", ir::OpType::Add);
      const fbg::AddAttrs* a = op.attrs_as_AddAttrs();
      if (!a) return {};
      VKQC_TRY(ReadActivation(static_cast<int8_t>(a->activation()), who, out.add.activation));
      VKQC_TRY(ReadQuant(a->output_quant(), who + ": output_quant", out.add.output_quant));
      return {};
    }
    case fbg::OpAttrs::Pool2dAttrs: {
      if (out.type != ir::OpType::AvgPool2d && out.type != ir::OpType::MaxPool2d) {
        return wrong_attrs("Pool2dAttrs", ir::OpType::AvgPool2d);
      }
      const fbg::Pool2dAttrs* a = op.attrs_as_Pool2dAttrs();
      if (!a) return {};
      ir::Pool2dAttrs& p = out.pool;
      VKQC_TRY(ReadIntArray(a->kernel(), 2, who + ": kernel", p.kernel));
      VKQC_TRY(ReadIntArray(a->stride(), 2, who + ": stride", p.stride));
      VKQC_TRY(ReadIntArray(a->padding(), 4, who + ": padding", p.padding));
      p.global = a->global();
      VKQC_TRY(ReadQuant(a->output_quant(), who + ": output_quant", p.output_quant));
      return {};
    }
    case fbg::OpAttrs::NormAttrs: {
      if (out.type != ir::OpType::RmsNorm) return wrong_attrs("NormAttrs", ir::OpType::RmsNorm);
      if (const fbg::NormAttrs* a = op.attrs_as_NormAttrs()) out.norm.eps = a->eps();
      return {};
    }
    case fbg::OpAttrs::RopeAttrs: {
      if (out.type != ir::OpType::Rope) return wrong_attrs("RopeAttrs", ir::OpType::Rope);
      const fbg::RopeAttrs* a = op.attrs_as_RopeAttrs();
      if (!a) return {};
      ir::RopeAttrs& r = out.rope;
      r.head_dim = a->head_dim();
      r.theta = a->theta();
      r.interleaved = a->interleaved();
      r.max_positions = a->max_positions();
      if (static_cast<int8_t>(a->scaling()) < 0 || a->scaling() > fbg::RopeScaling::MAX)
        return Fail(who + ": unknown rope scaling " + std::to_string(static_cast<int>(a->scaling())) +
                    " (this vkqc knows: none, llama3); the file may come from a newer vkqc");
      r.llama3 = a->scaling() == fbg::RopeScaling::Llama3;
      r.factor = a->factor();
      r.low_freq_factor = a->low_freq_factor();
      r.high_freq_factor = a->high_freq_factor();
      r.original_max_position = a->original_max_position();
      return {};
    }
    case fbg::OpAttrs::AttentionAttrs: {
      if (out.type != ir::OpType::Attention) return wrong_attrs("AttentionAttrs", ir::OpType::Attention);
      const fbg::AttentionAttrs* a = op.attrs_as_AttentionAttrs();
      if (!a) return {};
      out.attention.num_heads = a->num_heads();
      out.attention.num_kv_heads = a->num_kv_heads();
      out.attention.head_dim = a->head_dim();
      out.attention.scale = a->scale();
      return {};
    }
    case fbg::OpAttrs::ConcatAttrs: {
      if (out.type != ir::OpType::Concat) return wrong_attrs("ConcatAttrs", ir::OpType::Concat);
      const fbg::ConcatAttrs* a = op.attrs_as_ConcatAttrs();
      if (!a) return {};
      out.concat.axis = a->axis();
      VKQC_TRY(ReadQuant(a->output_quant(), who + ": output_quant", out.concat.output_quant));
      return {};
    }
    case fbg::OpAttrs::UnaryAttrs: {
      if (out.type != ir::OpType::HardSigmoid && out.type != ir::OpType::Clip)
        return wrong_attrs("UnaryAttrs", ir::OpType::HardSigmoid);
      if (const fbg::UnaryAttrs* a = op.attrs_as_UnaryAttrs()) {
        out.unary.alpha = a->alpha();
        out.unary.beta = a->beta();
      }
      return {};
    }
    case fbg::OpAttrs::ResizeAttrs: {
      if (out.type != ir::OpType::ResizeNearest) return wrong_attrs("ResizeAttrs", ir::OpType::ResizeNearest);
      if (const fbg::ResizeAttrs* a = op.attrs_as_ResizeAttrs())
        VKQC_TRY(ReadIntArray(a->scale(), 2, who + ": scale", out.resize.scale));
      return {};
    }
    case fbg::OpAttrs::TransposeAttrs: {
      if (out.type != ir::OpType::Transpose) return wrong_attrs("TransposeAttrs", ir::OpType::Transpose);
      const fbg::TransposeAttrs* a = op.attrs_as_TransposeAttrs();
      if (!a || !a->perm()) return {};
      if (a->perm()->size() > 64)
        return Fail(who + ": perm has " + std::to_string(a->perm()->size()) +
                    " entries (transpose takes rank 1 to 6); the file is corrupt or was written by a broken tool");
      out.transpose.perm.assign(a->perm()->begin(), a->perm()->end());
      return {};
    }
  }
  return Fail(who + ": attributes of unknown type " +
              std::to_string(static_cast<int>(op.attrs_type())) + " for a " +
              ir::OpTypeName(out.type) + " op; the file may come from a newer vkqc");
}

Result<ir::Graph> Reader::Read() {
  if (!bytes_) return InternalError(origin_ + ": ReadGraphBytes called without bytes");
  const uint8_t* p = bytes_->data();
  const size_t size = bytes_->size();
  if (size < 12) {
    return Fail("is " + std::to_string(size) + " bytes, too small to be a .vkqg graph");
  }
  if (std::memcmp(p + 8, fbg::GraphIdentifier(), 4) != 0) {
    std::string hint = std::memcmp(p + 8, "VKQB", 4) == 0
                           ? " (this is a compiled bundle, not a graph)"
                           : " (is this a .vkqg file?)";
    return Fail("file identifier is '" + Printable(p + 8, 4) + "', expected 'VKQG'" + hint);
  }
  uint32_t fb_size = 0;
  for (int i = 3; i >= 0; --i) fb_size = (fb_size << 8) | p[i];
  const uint64_t fb_end = uint64_t{4} + fb_size;
  if (fb_end > size) {
    return Fail("is truncated: the graph header claims " + std::to_string(fb_size) +
                " bytes but the file has " + std::to_string(size) + " bytes in all");
  }
  if (fb_end >= FLATBUFFERS_MAX_BUFFER_SIZE) return Fail("graph header is larger than 2 GiB");
  flatbuffers::Verifier verifier(p, static_cast<size_t>(fb_end));
  if (!fbg::VerifySizePrefixedGraphBuffer(verifier)) {
    return Fail("graph header is corrupt (flatbuffer verification failed); re-export the graph");
  }
  const fbg::Graph* g = fbg::GetSizePrefixedGraph(p);
  if (g->format_version() != kFormatVersion) {
    return Fail("format version " + std::to_string(g->format_version()) +
                " is not supported (this vkqc reads version " + std::to_string(kFormatVersion) +
                ")");
  }

  segment_start_ = AlignUp(fb_end);
  segment_size_ = g->constant_segment_size();
  if (segment_start_ > size || segment_size_ > size - segment_start_) {
    return Fail("is truncated: the constant segment [" + std::to_string(segment_start_) + ", +" +
                std::to_string(segment_size_) + " bytes] extends past the end of the file (" +
                std::to_string(size) + " bytes)");
  }
  if (size != segment_start_ + segment_size_) {
    return Fail("has " + std::to_string(size - segment_start_ - segment_size_) +
                " unexpected bytes after the constant segment; the file is corrupt");
  }

  ir::Graph out;
  if (g->symbolic_dim()) out.symbolic_dim = g->symbolic_dim()->str();
  if (g->metadata()) {
    for (const auto* e : *g->metadata()) {
      if (!e || !e->key() || !e->value()) return Fail("has a metadata entry without a key or value");
      out.metadata[e->key()->str()] = std::vector<uint8_t>(e->value()->begin(), e->value()->end());
    }
  }
  num_tensors_ = g->tensors() ? g->tensors()->size() : 0;
  out.tensors.resize(num_tensors_);
  for (size_t i = 0; i < num_tensors_; ++i) {
    VKQC_TRY(ReadTensor(*g->tensors()->Get(i), out.tensors[i]));
  }
  if (g->ops()) {
    out.ops.resize(g->ops()->size());
    for (size_t i = 0; i < out.ops.size(); ++i) {
      VKQC_TRY(ReadOp(static_cast<int>(i), *g->ops()->Get(i), out.ops[i]));
    }
  }
  VKQC_TRY(ReadIndices(g->inputs(), "graph input", out.inputs));
  VKQC_TRY(ReadIndices(g->outputs(), "graph output", out.outputs));
  VKQC_TRY(VerifyGraph(out, origin_));
  return out;
}

// ---- writing -----------------------------------------------------------------------------------

bool IsDefault(const ir::Quant& q) { return q == ir::Quant{}; }

flatbuffers::Offset<fbg::Quant> WriteQuant(flatbuffers::FlatBufferBuilder& fbb,
                                           const ir::Quant& q) {
  auto scales = fbb.CreateVector(q.scales);
  auto zps = fbb.CreateVector(q.zero_points);
  auto mins = q.mins.empty() ? flatbuffers::Offset<flatbuffers::Vector<float>>() : fbb.CreateVector(q.mins);
  return fbg::CreateQuant(fbb, static_cast<fbg::Scheme>(q.scheme), scales, zps, q.axis,
                          q.group_size, mins);
}

}  // namespace

Result<ir::Graph> ReadGraphBytes(std::shared_ptr<const std::vector<uint8_t>> bytes,
                                 const std::string& origin) {
  return Reader(std::move(bytes), origin).Read();
}

Result<ir::Graph> ReadGraphFile(const std::string& path) {
  VKQC_ASSIGN_OR_RETURN(auto bytes, ReadFileBytes(path));
  return ReadGraphBytes(std::move(bytes), path);
}

Result<std::vector<uint8_t>> SerializeGraph(const ir::Graph& graph) {
  // Constant placement: in tensor order, each at the next 64-byte boundary of the segment.
  std::vector<uint64_t> offsets(graph.tensors.size(), 0);
  uint64_t segment_size = 0;
  for (size_t i = 0; i < graph.tensors.size(); ++i) {
    const ir::Tensor& t = graph.tensors[i];
    if (!t.data) continue;
    if (!t.data->owner || t.data->offset + t.data->size > t.data->owner->size()) {
      return InternalError("SerializeGraph: tensor " + Quote(t.name) +
                           " has a constant view outside its buffer");
    }
    offsets[i] = AlignUp(segment_size);
    segment_size = offsets[i] + t.data->size;
  }

  flatbuffers::FlatBufferBuilder fbb(1024 + graph.tensors.size() * 128);
  std::vector<flatbuffers::Offset<fbg::Tensor>> tensors;
  tensors.reserve(graph.tensors.size());
  for (size_t i = 0; i < graph.tensors.size(); ++i) {
    const ir::Tensor& t = graph.tensors[i];
    auto name = fbb.CreateString(t.name);
    auto shape = fbb.CreateVector(t.shape);
    flatbuffers::Offset<fbg::Quant> quant = t.quant ? WriteQuant(fbb, *t.quant) : 0;
    fbg::DataRef ref(offsets[i], t.data ? t.data->size : 0);
    tensors.push_back(fbg::CreateTensor(fbb, name, shape, static_cast<fbg::DType>(t.dtype), quant,
                                        t.data ? &ref : nullptr, t.state));
  }
  std::vector<flatbuffers::Offset<fbg::Op>> ops;
  ops.reserve(graph.ops.size());
  auto opt_quant = [&](const ir::Quant& q) -> flatbuffers::Offset<fbg::Quant> {
    return IsDefault(q) ? 0 : WriteQuant(fbb, q);
  };
  auto ints = [&](const int32_t* v, size_t n) {
    return fbb.CreateVector(std::vector<int32_t>(v, v + n));
  };
  for (const ir::Op& op : graph.ops) {
    // Only the attributes of the op's own type have a place in the file.
    const char* foreign = nullptr;
    if (op.type != ir::OpType::Linear && !(op.linear == ir::LinearAttrs{})) foreign = "linear";
    if (op.type != ir::OpType::Conv2d && !(op.conv2d == ir::Conv2dAttrs{})) foreign = "conv2d";
    if (op.type != ir::OpType::Add && !(op.add == ir::AddAttrs{})) foreign = "add";
    if (op.type != ir::OpType::AvgPool2d && op.type != ir::OpType::MaxPool2d && !(op.pool == ir::Pool2dAttrs{}))
      foreign = "pool";
    if (op.type != ir::OpType::RmsNorm && !(op.norm == ir::NormAttrs{})) foreign = "rms_norm";
    if (op.type != ir::OpType::Rope && !(op.rope == ir::RopeAttrs{})) foreign = "rope";
    if (op.type != ir::OpType::Attention && !(op.attention == ir::AttentionAttrs{})) foreign = "attention";
    if (op.type != ir::OpType::Concat && !(op.concat == ir::ConcatAttrs{})) foreign = "concat";
    if (op.type != ir::OpType::HardSigmoid && op.type != ir::OpType::Clip && !(op.unary == ir::UnaryAttrs{}))
      foreign = "hard_sigmoid";
    if (op.type != ir::OpType::Transpose && !(op.transpose == ir::TransposeAttrs{})) foreign = "transpose";
    if (op.type != ir::OpType::ResizeNearest && !(op.resize == ir::ResizeAttrs{})) foreign = "resize_nearest";
    if (foreign) {
      return InternalError("SerializeGraph: op " + Quote(op.name) + " (" +
                           ir::OpTypeName(op.type) + ") carries " + foreign +
                           " attributes, which a .vkqg cannot hold for it");
    }
    auto name = fbb.CreateString(op.name);
    auto inputs = fbb.CreateVector(std::vector<int32_t>(op.inputs.begin(), op.inputs.end()));
    auto outputs = fbb.CreateVector(std::vector<int32_t>(op.outputs.begin(), op.outputs.end()));
    const auto type = static_cast<fbg::OpType>(op.type);
    switch (op.type) {
      case ir::OpType::Linear: {
        const ir::LinearAttrs& la = op.linear;
        auto in_q = opt_quant(la.input_quant);
        auto out_q = opt_quant(la.output_quant);
        auto attrs = fbg::CreateLinearAttrs(fbb, in_q, la.fused_relu, out_q, la.fused_relu6);
        ops.push_back(fbg::CreateOp(fbb, name, type, inputs, outputs, fbg::OpAttrs::LinearAttrs,
                                    attrs.Union()));
        break;
      }
      case ir::OpType::Conv2d: {
        const ir::Conv2dAttrs& ca = op.conv2d;
        auto stride = ints(ca.stride, 2);
        auto padding = ints(ca.padding, 4);
        auto dilation = ints(ca.dilation, 2);
        auto in_q = opt_quant(ca.input_quant);
        auto out_q = opt_quant(ca.output_quant);
        auto attrs = fbg::CreateConv2dAttrs(fbb, stride, padding, dilation, ca.groups,
                                            static_cast<fbg::Activation>(ca.activation), in_q,
                                            out_q);
        ops.push_back(fbg::CreateOp(fbb, name, type, inputs, outputs, fbg::OpAttrs::Conv2dAttrs,
                                    attrs.Union()));
        break;
      }
      case ir::OpType::Add: {
        auto out_q = opt_quant(op.add.output_quant);
        auto attrs = fbg::CreateAddAttrs(fbb, static_cast<fbg::Activation>(op.add.activation),
                                         out_q);
        ops.push_back(fbg::CreateOp(fbb, name, type, inputs, outputs, fbg::OpAttrs::AddAttrs,
                                    attrs.Union()));
        break;
      }
      case ir::OpType::AvgPool2d:
      case ir::OpType::MaxPool2d: {
        const ir::Pool2dAttrs& pa = op.pool;
        auto kernel = ints(pa.kernel, 2);
        auto stride = ints(pa.stride, 2);
        auto padding = ints(pa.padding, 4);
        auto out_q = opt_quant(pa.output_quant);
        auto attrs = fbg::CreatePool2dAttrs(fbb, kernel, stride, padding, pa.global, out_q);
        ops.push_back(fbg::CreateOp(fbb, name, type, inputs, outputs, fbg::OpAttrs::Pool2dAttrs,
                                    attrs.Union()));
        break;
      }
      case ir::OpType::RmsNorm: {
        auto attrs = fbg::CreateNormAttrs(fbb, op.norm.eps);
        ops.push_back(fbg::CreateOp(fbb, name, type, inputs, outputs, fbg::OpAttrs::NormAttrs, attrs.Union()));
        break;
      }
      case ir::OpType::Rope: {
        const ir::RopeAttrs& r = op.rope;
        auto attrs = fbg::CreateRopeAttrs(fbb, r.head_dim, r.theta, r.interleaved, r.max_positions,
                                          r.llama3 ? fbg::RopeScaling::Llama3 : fbg::RopeScaling::None, r.factor,
                                          r.low_freq_factor, r.high_freq_factor, r.original_max_position);
        ops.push_back(fbg::CreateOp(fbb, name, type, inputs, outputs, fbg::OpAttrs::RopeAttrs, attrs.Union()));
        break;
      }
      case ir::OpType::Attention: {
        const ir::AttentionAttrs& a = op.attention;
        auto attrs = fbg::CreateAttentionAttrs(fbb, a.num_heads, a.num_kv_heads, a.head_dim, a.scale);
        ops.push_back(fbg::CreateOp(fbb, name, type, inputs, outputs, fbg::OpAttrs::AttentionAttrs,
                                    attrs.Union()));
        break;
      }
      case ir::OpType::Concat: {
        auto out_q = opt_quant(op.concat.output_quant);
        auto attrs = fbg::CreateConcatAttrs(fbb, op.concat.axis, out_q);
        ops.push_back(fbg::CreateOp(fbb, name, type, inputs, outputs, fbg::OpAttrs::ConcatAttrs, attrs.Union()));
        break;
      }
      case ir::OpType::HardSigmoid:
      case ir::OpType::Clip: {
        auto attrs = fbg::CreateUnaryAttrs(fbb, op.unary.alpha, op.unary.beta);
        ops.push_back(fbg::CreateOp(fbb, name, type, inputs, outputs, fbg::OpAttrs::UnaryAttrs, attrs.Union()));
        break;
      }
      case ir::OpType::ResizeNearest: {
        auto scale = ints(op.resize.scale, 2);
        auto attrs = fbg::CreateResizeAttrs(fbb, scale);
        ops.push_back(fbg::CreateOp(fbb, name, type, inputs, outputs, fbg::OpAttrs::ResizeAttrs, attrs.Union()));
        break;
      }
      case ir::OpType::Transpose: {
        auto attrs = fbg::CreateTransposeAttrs(fbb, fbb.CreateVector(op.transpose.perm));
        ops.push_back(fbg::CreateOp(fbb, name, type, inputs, outputs, fbg::OpAttrs::TransposeAttrs, attrs.Union()));
        break;
      }
      default:  // mul, silu, quantize, dequantize, embedding, argmax, sigmoid, hard_swish, softmax, reshape: none
        ops.push_back(fbg::CreateOp(fbb, name, type, inputs, outputs));
        break;
    }
  }
  auto tensors_v = fbb.CreateVector(tensors);
  auto ops_v = fbb.CreateVector(ops);
  auto inputs_v = fbb.CreateVector(std::vector<int32_t>(graph.inputs.begin(), graph.inputs.end()));
  auto outputs_v =
      fbb.CreateVector(std::vector<int32_t>(graph.outputs.begin(), graph.outputs.end()));
  auto sym = fbb.CreateString(graph.symbolic_dim);
  std::vector<flatbuffers::Offset<fbg::MetaEntry>> meta;
  for (const auto& [k, v] : graph.metadata)
    meta.push_back(fbg::CreateMetaEntry(fbb, fbb.CreateString(k), fbb.CreateVector(v)));
  auto meta_v = fbb.CreateVector(meta);
  auto root = fbg::CreateGraph(fbb, kFormatVersion, tensors_v, ops_v, inputs_v, outputs_v, sym,
                               segment_size, meta_v);
  fbg::FinishSizePrefixedGraphBuffer(fbb, root);

  const uint64_t segment_start = AlignUp(fbb.GetSize());
  std::vector<uint8_t> out(segment_start + segment_size, 0);
  std::memcpy(out.data(), fbb.GetBufferPointer(), fbb.GetSize());
  for (size_t i = 0; i < graph.tensors.size(); ++i) {
    const ir::Tensor& t = graph.tensors[i];
    if (t.data && t.data->size) {
      std::memcpy(out.data() + segment_start + offsets[i], t.data->data(), t.data->size);
    }
  }
  return out;
}

Status WriteGraphFile(const ir::Graph& graph, const std::string& path) {
  VKQC_ASSIGN_OR_RETURN(auto bytes, SerializeGraph(graph));
  return WriteFileBytes(path, bytes.data(), bytes.size());
}

Result<std::shared_ptr<const std::vector<uint8_t>>> ReadFileBytes(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return UserError(path + ": cannot open: " + std::strerror(errno));
  auto bytes = std::make_shared<std::vector<uint8_t>>();
  if (std::fseek(f, 0, SEEK_END) == 0) {
    long end = std::ftell(f);
    if (end > 0) bytes->reserve(static_cast<size_t>(end));
    std::rewind(f);
  }
  uint8_t chunk[1 << 16];
  size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) {
    bytes->insert(bytes->end(), chunk, chunk + n);
  }
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (failed) return UserError(path + ": read failed: " + std::strerror(err));
  return std::shared_ptr<const std::vector<uint8_t>>(std::move(bytes));
}

Status WriteFileBytes(const std::string& path, const void* data, size_t size) {
  // Atomic: written to a temporary file beside `path`, flushed to disk, then renamed over it, so an
  // interrupted compile never leaves a truncated bundle or graph (the old file stays until then).
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return UserError(path + ": cannot create: " + std::strerror(errno));
  bool ok = size == 0 || std::fwrite(data, 1, size, f) == size;
  int err = errno;
  ok = ok && std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  if (!ok) err = errno;
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) {
    std::remove(tmp.c_str());
    return UserError(path + ": write failed: " + std::strerror(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    std::remove(tmp.c_str());
    return UserError(path + ": cannot replace: " + std::strerror(err));
  }
  return {};
}

uint64_t Fnv1a64(const void* data, size_t size, uint64_t seed) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t h = seed;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace vkqc
