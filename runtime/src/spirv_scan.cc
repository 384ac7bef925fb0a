// Checks SPIRV-Tools' validator does not make, on every load (validator or not), each added for a
// resealed mutant that passed spirv-val (Vulkan 1.1 rules) and crashed a driver:
// - literal indices of OpSpecConstantOp CompositeExtract / CompositeInsert / VectorShuffle lie
//   inside their composite's type (`CompositeExtract %gl_WorkGroupSize 0` made index 47872 crashed
//   NVIDIA's shader compiler on the H100);
// - constant indices of OpAccessChain / OpInBoundsAccessChain lie inside the vector, matrix,
//   array or struct they index (a constant 1 made 251 indexed gl_WorkGroupID[251] and grew the
//   workgroup to 64x251x251: lavapipe crashed);
// - the workgroup size a pipeline gets after specialization is the one the bundle records for it
//   (WorkgroupSize built-in or LocalSize), so the requirement check against the device's limits
//   covers what the driver will see (bench/RESULTS.md, 2026-11-25).
#include <string>
#include <unordered_map>
#include <vector>

#include "internal.h"

namespace vkqc::rt {
namespace {

struct TypeInfo {
  enum Kind { kOther, kVector, kMatrix, kArray, kStruct } kind = kOther;
  uint32_t count = 0;            // components, columns, array length (0: unknown), members
  std::vector<uint32_t> member;  // element type per index (one entry for vector/matrix/array)
};

}  // namespace

std::string CheckSpecConstantOps(const uint32_t* wd, size_t nw) {
  std::unordered_map<uint32_t, TypeInfo> types;
  std::unordered_map<uint32_t, uint32_t> type_of;     // constant/undef id -> its type
  std::unordered_map<uint32_t, uint32_t> int_value;   // OpConstant of one word -> value
  // Follows `indices` from the type of `composite`: "" when every index is in range.
  auto walk = [&](uint32_t composite, const uint32_t* idx, size_t n) -> std::string {
    auto t = type_of.find(composite);
    if (t == type_of.end()) return "its composite %" + std::to_string(composite) + " is not a constant";
    uint32_t type = t->second;
    for (size_t k = 0; k < n; ++k) {
      auto it = types.find(type);
      if (it == types.end() || it->second.kind == TypeInfo::kOther)
        return "index " + std::to_string(k) + " goes into a type that is not a composite";
      const TypeInfo& ti = it->second;
      if (ti.count && idx[k] >= ti.count)
        return "index " + std::to_string(idx[k]) + " is out of range (" + std::to_string(ti.count) + " elements)";
      type = ti.kind == TypeInfo::kStruct ? ti.member[idx[k]] : ti.member[0];
    }
    return {};
  };
  std::unordered_map<uint32_t, uint32_t> pointee;    // pointer type -> pointee type
  for (size_t at = 5; at < nw;) {
    const uint32_t count = wd[at] >> 16, op = wd[at] & 0xffffu;
    if (count == 0 || at + count > nw) return "a malformed instruction";
    const uint32_t* w = wd + at;
    switch (op) {
      case 32:  // OpTypePointer: id, storage class, pointee
        if (count >= 4) pointee[w[1]] = w[3];
        break;
      case 59:  // OpVariable: pointer type, id
        if (count >= 3) type_of[w[2]] = w[1];
        break;
      case 65: case 66: {  // Op(InBounds)AccessChain: pointer type, id, base, indices
        if (count < 4) return "a malformed access chain";
        type_of[w[2]] = w[1];
        auto base = type_of.find(w[3]);
        if (base == type_of.end()) break;  // a base we do not follow (function parameter, ...)
        auto pt = pointee.find(base->second);
        if (pt == pointee.end()) break;
        uint32_t type = pt->second;
        for (uint32_t k = 4; k < count; ++k) {
          auto it = types.find(type);
          if (it == types.end() || it->second.kind == TypeInfo::kOther) break;  // runtime array, ...
          const TypeInfo& ti = it->second;
          auto c = int_value.find(w[k]);
          if (c == int_value.end()) {  // a dynamic index: only into vectors/matrices/arrays
            if (ti.kind == TypeInfo::kStruct) return "access chain %" + std::to_string(w[2]) + ": a struct indexed by a non-constant";
            type = ti.member[0];
            continue;
          }
          if (ti.count && c->second >= ti.count)
            return "access chain %" + std::to_string(w[2]) + ": index " + std::to_string(c->second) +
                   " is out of range (" + std::to_string(ti.count) + " elements)";
          type = ti.kind == TypeInfo::kStruct ? ti.member[c->second] : ti.member[0];
        }
        break;
      }
      case 23: case 24:  // OpTypeVector / OpTypeMatrix: id, component/column type, count
        if (count >= 4) types[w[1]] = {op == 23 ? TypeInfo::kVector : TypeInfo::kMatrix, w[3], {w[2]}};
        break;
      case 28:  // OpTypeArray: id, element type, length (a constant id; a spec constant: unknown)
        if (count >= 4) {
          auto v = int_value.find(w[3]);
          types[w[1]] = {TypeInfo::kArray, v == int_value.end() ? 0u : v->second, {w[2]}};
        }
        break;
      case 30:  // OpTypeStruct: id, member types
        if (count >= 2) types[w[1]] = {TypeInfo::kStruct, count - 2, std::vector<uint32_t>(w + 2, w + count)};
        break;
      case 1: case 41: case 42: case 43: case 44: case 46: case 48: case 49: case 50: case 51:
        // OpUndef, OpConstant{True,False,,Composite,Null}, OpSpecConstant{True,False,,Composite}
        if (count >= 3) type_of[w[2]] = w[1];
        if (op == 43 && count == 4) int_value[w[2]] = w[3];
        break;
      case 52: {  // OpSpecConstantOp: type, id, opcode, operands
        if (count < 4) return "a malformed OpSpecConstantOp";
        type_of[w[2]] = w[1];
        const uint32_t sop = w[3];
        std::string why;
        if (sop == 81 && count >= 5) why = walk(w[4], w + 5, count - 5);        // CompositeExtract
        else if (sop == 82 && count >= 6) why = walk(w[5], w + 6, count - 6);   // CompositeInsert
        else if (sop == 79 && count >= 6) {                                     // VectorShuffle
          auto a = type_of.find(w[4]), b = type_of.find(w[5]);
          uint32_t total = 0;
          for (auto it : {a, b}) {
            if (it == type_of.end()) return "OpSpecConstantOp VectorShuffle of a non-constant";
            auto ti = types.find(it->second);
            if (ti == types.end() || ti->second.kind != TypeInfo::kVector) return "OpSpecConstantOp VectorShuffle of a non-vector";
            total += ti->second.count;
          }
          for (uint32_t k = 6; k < count; ++k)
            if (w[k] != 0xffffffffu && w[k] >= total)
              why = "component " + std::to_string(w[k]) + " is out of range (" + std::to_string(total) + ")";
        }
        if (!why.empty()) return "OpSpecConstantOp %" + std::to_string(w[2]) + ": " + why;
        break;
      }
      default:
        break;
    }
    at += count;
  }
  return {};
}

std::string CheckWorkgroupSize(const uint32_t* wd, size_t nw, const uint32_t* spec_ids, const uint32_t* spec_values,
                               size_t nspec, const uint32_t expected[3]) {
  std::unordered_map<uint32_t, uint32_t> spec_id;    // id -> SpecId
  std::unordered_map<uint32_t, uint32_t> value;      // OpConstant / OpSpecConstant (default) of one word
  std::unordered_map<uint32_t, std::vector<uint32_t>> composite;
  uint32_t builtin = 0, local[3] = {0, 0, 0};
  bool has_local = false;
  for (size_t at = 5; at < nw;) {
    const uint32_t count = wd[at] >> 16, op = wd[at] & 0xffffu;
    if (count == 0 || at + count > nw) return "a malformed instruction";
    const uint32_t* w = wd + at;
    if (op == 71 && count >= 4 && w[2] == 1) spec_id[w[1]] = w[3];                       // Decorate SpecId
    if (op == 71 && count >= 4 && w[2] == 11 && w[3] == 25) builtin = w[1];              // BuiltIn WorkgroupSize
    if (op == 16 && count >= 6 && w[2] == 17) {                                          // ExecutionMode LocalSize
      has_local = true;
      for (int i = 0; i < 3; ++i) local[i] = w[3 + i];
    }
    if (op == 331 && count >= 6 && w[2] == 38) return "LocalSizeId is not used by vkqc's shaders";
    if ((op == 43 || op == 50) && count == 4) value[w[2]] = w[3];
    if ((op == 44 || op == 51) && count >= 3) composite[w[2]] = std::vector<uint32_t>(w + 3, w + count);
    at += count;
  }
  uint32_t size[3];
  if (builtin) {
    auto c = composite.find(builtin);
    if (c == composite.end() || c->second.size() != 3) return "the WorkgroupSize built-in is not a 3-component constant";
    for (int i = 0; i < 3; ++i) {
      const uint32_t id = c->second[i];
      auto v = value.find(id);
      if (v == value.end()) return "a WorkgroupSize component is not a scalar constant";
      size[i] = v->second;
      auto sid = spec_id.find(id);
      if (sid != spec_id.end())
        for (size_t k = 0; k < nspec; ++k)
          if (spec_ids[k] == sid->second) size[i] = spec_values[k];
    }
  } else if (has_local) {
    for (int i = 0; i < 3; ++i) size[i] = local[i];
  } else {
    return "no workgroup size";
  }
  for (int i = 0; i < 3; ++i)
    if (size[i] != expected[i])
      return "its workgroup size after specialization is " + std::to_string(size[0]) + "x" + std::to_string(size[1]) + "x" +
             std::to_string(size[2]) + ", the bundle records " + std::to_string(expected[0]) + "x" +
             std::to_string(expected[1]) + "x" + std::to_string(expected[2]);
  return {};
}

}  // namespace vkqc::rt
