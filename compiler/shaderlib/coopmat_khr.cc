#include "compiler/shaderlib/coopmat_khr.h"

#define SPV_ENABLE_UTILITY_CODE
#include <spirv/unified1/spirv.hpp>

#include <map>
#include <string>

namespace vkqc {
namespace {

constexpr uint32_t kCapCoopMatNV = 5357, kCapCoopMatKHR = 6022;
constexpr uint32_t kTypeNV = 5358, kLoadNV = 5359, kStoreNV = 5360, kMulAddNV = 5361, kLengthNV = 5362;
constexpr uint32_t kTypeKHR = 4456, kLoadKHR = 4457, kStoreKHR = 4458, kMulAddKHR = 4459, kLengthKHR = 4460;
enum Use : uint32_t { kUseA = 0, kUseB = 1, kUseAcc = 2, kUnset = 99 };
// Cooperative Matrix Operands: Matrix{A,B,C,Result}SignedComponentsKHR.
constexpr uint32_t kSignedA = 0x1, kSignedB = 0x2, kSignedC = 0x4, kSignedResult = 0x8;

std::string LiteralString(const uint32_t* w, size_t n) {
  std::string s(reinterpret_cast<const char*>(w), n * 4);
  return s.substr(0, s.find('\0'));
}

void AppendString(std::vector<uint32_t>& out, const std::string& s) {
  std::vector<uint32_t> w(s.size() / 4 + 1, 0u);  // room for the terminating NUL
  for (size_t i = 0; i < s.size(); ++i) w[i / 4] |= uint32_t(uint8_t(s[i])) << (8 * (i % 4));
  out.insert(out.end(), w.begin(), w.end());
}

void Emit(std::vector<uint32_t>& out, uint32_t op, std::initializer_list<uint32_t> operands,
          const uint32_t* extra = nullptr, size_t extra_n = 0) {
  out.push_back(uint32_t((1 + operands.size() + extra_n) << 16) | op);
  out.insert(out.end(), operands.begin(), operands.end());
  if (extra_n) out.insert(out.end(), extra, extra + extra_n);
}

}  // namespace

Result<std::vector<uint32_t>> CoopMatNvToKhr(const std::vector<uint32_t>& w) {
  if (w.size() < 5 || w[0] != 0x07230203u) return InternalError("coopmat KHR rewrite: not SPIR-V");
  auto fail = [](const std::string& m) { return InternalError("coopmat KHR rewrite: " + m); };

  // Pass 1: types of values, integer signedness, boolean constants, MulAdd uses.
  std::map<uint32_t, uint32_t> value_type;     // result id -> result type id
  std::map<uint32_t, bool> int_signed;         // OpTypeInt id -> signedness
  std::map<uint32_t, uint32_t> matrix_comp;    // NV matrix type id -> component type id
  std::map<uint32_t, bool> bool_const;         // OpConstantTrue / False
  std::map<uint32_t, uint32_t> use;            // NV matrix type id -> Use
  uint32_t uint32_type = 0;
  size_t uint32_type_end = 0, first_matrix = 0;
  bool has_cap = false;
  for (size_t i = 5; i < w.size();) {
    const uint32_t n = w[i] >> 16, op = w[i] & 0xFFFF;
    if (n == 0 || i + n > w.size()) return fail("malformed instruction stream");
    const uint32_t* a = &w[i + 1];
    bool has_result = false, has_type = false;
    spv::HasResultAndType(spv::Op(op), &has_result, &has_type);
    if (has_result && has_type && n >= 3) value_type[a[1]] = a[0];
    switch (op) {
      case spv::OpCapability:
        if (a[0] == kCapCoopMatNV) has_cap = true;
        if (a[0] == kCapCoopMatKHR) return fail("the module already uses SPV_KHR_cooperative_matrix");
        break;
      case spv::OpTypeInt:
        int_signed[a[0]] = a[2] != 0;
        if (a[1] == 32 && a[2] == 0 && !uint32_type) {
          uint32_type = a[0];
          uint32_type_end = i + n;
        }
        break;
      case spv::OpConstantTrue: bool_const[a[1]] = true; break;
      case spv::OpConstantFalse: bool_const[a[1]] = false; break;
      case kTypeNV:
        if (n != 6) return fail("OpTypeCooperativeMatrixNV with " + std::to_string(n) + " words");
        matrix_comp[a[0]] = a[1];
        if (!first_matrix) first_matrix = i;
        break;
      default: break;
    }
    i += n;
  }
  if (!has_cap) return fail("the module does not declare CooperativeMatrixNV");
  if (!uint32_type || uint32_type_end > first_matrix)
    return fail("no 32-bit unsigned integer type declared before the first matrix type");

  auto set_use = [&](uint32_t value, Use u, const char* what) -> Status {
    auto t = value_type.find(value);
    if (t == value_type.end() || !matrix_comp.count(t->second))
      return fail(std::string("MulAdd operand ") + what + " is not a cooperative matrix value");
    auto [it, fresh] = use.emplace(t->second, u);
    if (!fresh && it->second != u)
      return fail("matrix type %" + std::to_string(t->second) + " is used both as " + std::to_string(it->second) +
                  " and " + std::to_string(u) + " (declare A and B with distinct dimension constants)");
    return {};
  };
  for (size_t i = 5; i < w.size();) {
    const uint32_t n = w[i] >> 16, op = w[i] & 0xFFFF;
    const uint32_t* a = &w[i + 1];
    if (op == kMulAddNV) {
      if (n != 6) return fail("OpCooperativeMatrixMulAddNV with " + std::to_string(n) + " words");
      VKQC_TRY(set_use(a[2], kUseA, "A"));
      VKQC_TRY(set_use(a[3], kUseB, "B"));
      VKQC_TRY(set_use(a[4], kUseAcc, "C"));
      if (!matrix_comp.count(a[0])) return fail("MulAdd result type is not a cooperative matrix");
      auto [it, fresh] = use.emplace(a[0], kUseAcc);
      if (!fresh && it->second != kUseAcc) return fail("MulAdd result type is also used as A or B");
    }
    i += n;
  }
  auto is_signed = [&](uint32_t matrix_type) {
    auto s = int_signed.find(matrix_comp[matrix_type]);
    return s != int_signed.end() && s->second;
  };

  // Pass 2: rewrite. New constants (uint 0, 1, 2: Use values and RowMajor / ColumnMajor) go
  // right after the uint type, before every matrix type that names them.
  uint32_t bound = w[3];
  const uint32_t k0 = bound++, k1 = bound++, k2 = bound++;
  const uint32_t use_const[3] = {k0, k1, k2};
  std::vector<uint32_t> out(w.begin(), w.begin() + 5);
  auto layout = [&](uint32_t col_major_id, uint32_t& id) -> Status {
    auto c = bool_const.find(col_major_id);
    if (c == bool_const.end()) return fail("a column-major operand is not OpConstantTrue / OpConstantFalse");
    id = c->second ? k1 : k0;  // ColumnMajorKHR = 1, RowMajorKHR = 0
    return {};
  };
  for (size_t i = 5; i < w.size();) {
    const uint32_t n = w[i] >> 16, op = w[i] & 0xFFFF;
    const uint32_t* a = &w[i + 1];
    switch (op) {
      case spv::OpCapability:
        Emit(out, op, {a[0] == kCapCoopMatNV ? kCapCoopMatKHR : a[0]});
        break;
      case spv::OpExtension: {
        const std::string e = LiteralString(a, n - 1);
        out.push_back(0);  // word count patched below
        const size_t at = out.size() - 1;
        AppendString(out, e == "SPV_NV_cooperative_matrix" ? "SPV_KHR_cooperative_matrix" : e);
        out[at] = uint32_t((out.size() - at) << 16) | op;
        break;
      }
      case kTypeNV: {
        auto u = use.find(a[0]);
        Emit(out, kTypeKHR, {a[0], a[1], a[2], a[3], a[4], use_const[u == use.end() ? kUseAcc : u->second]});
        break;
      }
      case kLoadNV: {  // type id pointer stride colmajor [memory access...]
        if (n < 6) return fail("short OpCooperativeMatrixLoadNV");
        uint32_t lay = 0;
        VKQC_TRY(layout(a[4], lay));
        Emit(out, kLoadKHR, {a[0], a[1], a[2], lay, a[3]}, a + 5, n - 6);
        break;
      }
      case kStoreNV: {  // pointer object stride colmajor [memory access...]
        if (n < 5) return fail("short OpCooperativeMatrixStoreNV");
        uint32_t lay = 0;
        VKQC_TRY(layout(a[3], lay));
        Emit(out, kStoreKHR, {a[0], a[1], lay, a[2]}, a + 4, n - 5);
        break;
      }
      case kMulAddNV: {  // type id A B C
        uint32_t ops = 0;
        if (is_signed(value_type[a[2]])) ops |= kSignedA;
        if (is_signed(value_type[a[3]])) ops |= kSignedB;
        if (is_signed(value_type[a[4]])) ops |= kSignedC;
        if (is_signed(a[0])) ops |= kSignedResult;
        if (ops) Emit(out, kMulAddKHR, {a[0], a[1], a[2], a[3], a[4], ops});
        else Emit(out, kMulAddKHR, {a[0], a[1], a[2], a[3], a[4]});
        break;
      }
      case kLengthNV:
        Emit(out, kLengthKHR, {}, a, n - 1);
        break;
      default:
        out.insert(out.end(), w.begin() + long(i), w.begin() + long(i + n));
        break;
    }
    if (i + n == uint32_type_end)
      for (uint32_t v = 0; v < 3; ++v) Emit(out, spv::OpConstant, {uint32_type, use_const[v], v});
    i += n;
  }
  out[3] = bound;
  return out;
}

}  // namespace vkqc
