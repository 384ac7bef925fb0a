// Internal to the JSON graph importer (import_json.cc: file, tensors, weights; import_json_ops.cc:
// ops and their attributes): the Importer class and the helpers both files use.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/common/result.h"
#include "compiler/graph/ir.h"
#include "compiler/graph/safetensors.h"

namespace vkqc::json_import {

using nlohmann::json;

inline std::string Quote(const std::string& s) { return "'" + s + "'"; }
std::string Join(const std::vector<std::string>& v);
std::optional<ir::Scheme> ParseScheme(const std::string& s);
// Where a value sits in the JSON, for messages: "tensors[2] 'fc1.weight'".
std::string Where(const char* list, size_t i, const std::string& name);

class Importer;
struct OpSyntax;
// The op types of the JSON form and their parsers (import_json_ops.cc).
const std::vector<OpSyntax>& OpSyntaxes();

// Reads the JSON authoring form. One instance per import; not thread-safe.
class Importer {
 public:
  explicit Importer(std::string path) : path_(std::move(path)) {}
  Result<ir::Graph> Run();

 private:
  friend const std::vector<OpSyntax>& OpSyntaxes();
  Error Fail(const std::string& where, const std::string& what) const {
    return UserError(path_ + ": " + where + ": " + what);
  }
  Status CheckKeys(const json& obj, const std::string& where,
                   const std::vector<std::string>& allowed) const;
  Result<std::string> String(const json& obj, const char* key, const std::string& where) const;
  Result<std::vector<int>> TensorList(const json& obj, const char* key,
                                      const std::string& where) const;
  Result<const SafetensorsTensor*> Weight(const std::string& name, const std::string& where);
  Result<std::vector<float>> Floats(const json& v, const std::string& where);
  Result<std::vector<int32_t>> Ints(const json& v, const std::string& where);
  Status ParseTensor(const json& j, size_t index);
  Status ParseTensorQuant(const json& j, const std::string& where, ir::Quant& q);
  Status ConvertU8(ir::Tensor& t, const std::string& where) const;
  bool u8_quant_ = false;  // ParseTensorQuant is reading the quant of a u8 tensor
  Status ImportInt4(ir::Tensor& t, const SafetensorsTensor& w, const std::string& in,
                    const std::string& where) const;
  Status ParseOp(const json& j, size_t index);
  Status ParseLinear(const json& j, const std::string& where, ir::Op& op);
  Status ParseNoAttrs(const json&, const std::string&, ir::Op&) { return {}; }
  Status ParseActivationQuant(const json& j, const std::string& where, ir::Quant& q) const;
  Status ParseConv2d(const json& j, const std::string& where, ir::Op& op);
  Status ParseAdd(const json& j, const std::string& where, ir::Op& op);
  Status ParsePool(const json& j, const std::string& where, ir::Op& op);
  Status ParseNorm(const json& j, const std::string& where, ir::Op& op);
  Status ParseRope(const json& j, const std::string& where, ir::Op& op);
  Status ParseAttention(const json& j, const std::string& where, ir::Op& op);
  Status ParseConcat(const json& j, const std::string& where, ir::Op& op);
  Status ParseHardSigmoid(const json& j, const std::string& where, ir::Op& op);
  Status ParseResize(const json& j, const std::string& where, ir::Op& op);
  Status ParseTranspose(const json& j, const std::string& where, ir::Op& op);
  Status ParseReshape(const json& j, const std::string& where, ir::Op& op);
  Status ParseClip(const json& j, const std::string& where, ir::Op& op);
  // An optional number (float) or integer key; absent keeps `out`.
  Status ParseFloat(const json& j, const char* key, const std::string& where, float& out) const;
  Status ParseInt(const json& j, const char* key, const std::string& where, int32_t& out) const;
  Status ParseInts(const json& j, const char* key, size_t n, const char* meaning,
                   const std::string& where, int32_t* out) const;
  Status ParseActivation(const json& j, const std::string& where, ir::Activation& out) const;
  Status ParseBool(const json& j, const char* key, const std::string& where, bool& out) const;
  Status ApplyOutputQuant(const ir::Quant& oq, const ir::Op& op, const std::string& where);

  std::string path_;
  std::string weights_path_;  // empty when the JSON names no weights file
  std::optional<std::map<std::string, SafetensorsTensor>> weights_;
  std::unordered_map<std::string, size_t> tensor_index_;
  ir::Graph g_;
};

// Op types of the JSON form, their attribute keys and parsers. Keep in step with kOpRules in
// verify.cc and docs/graph-json.md.
struct OpSyntax {
  const char* type;
  ir::OpType op_type;
  std::vector<std::string> attr_keys;
  Status (Importer::*parse)(const json&, const std::string&, ir::Op&);
};

}  // namespace vkqc::json_import
