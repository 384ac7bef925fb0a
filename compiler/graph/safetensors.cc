// safetensors (https://github.com/huggingface/safetensors): [u64 LE header length N][N bytes of
// JSON header][data]. Header entries map a tensor name to {dtype, shape, data_offsets} with
// offsets relative to the data section; "__metadata__" holds free-form strings.
#include "compiler/graph/safetensors.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "compiler/graph/vkqg_io.h"

namespace vkqc {
namespace {

using nlohmann::json;

// The reference implementation's limit; a larger header is almost surely a corrupt length.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

// Element size in bytes of a safetensors dtype; 0 if unknown.
size_t ElementSize(const std::string& dtype) {
  static const std::pair<const char*, size_t> kSizes[] = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},
      {"I32", 4}, {"I16", 2}, {"I8", 1},  {"U8", 1},   {"BOOL", 1}};
  for (const auto& [name, size] : kSizes) {
    if (dtype == name) return size;
  }
  return 0;
}

const char* kKnownDtypes = "F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL";

// out = prod(shape) * elem; false on overflow.
bool ByteSize(const std::vector<int64_t>& shape, size_t elem, uint64_t& out) {
  uint64_t n = elem;
  for (int64_t d : shape) {
    if (d != 0 && n > UINT64_MAX / static_cast<uint64_t>(d)) return false;
    n *= static_cast<uint64_t>(d);
  }
  out = n;
  return true;
}

Result<SafetensorsTensor> ParseEntry(const std::string& origin, const std::string& name,
                                     const json& entry,
                                     const std::shared_ptr<const std::vector<uint8_t>>& bytes,
                                     uint64_t data_start, uint64_t data_size) {
  auto fail = [&](const std::string& what) {
    return UserError(origin + ": tensor '" + name + "': " + what +
                     " (the safetensors file is corrupt or was written by a broken tool)");
  };
  if (!entry.is_object()) return fail("header entry is not a JSON object");
  auto dt = entry.find("dtype");
  auto sh = entry.find("shape");
  auto offs = entry.find("data_offsets");
  if (dt == entry.end() || sh == entry.end() || offs == entry.end()) {
    return fail("header entry needs \"dtype\", \"shape\" and \"data_offsets\"");
  }
  SafetensorsTensor t;
  if (!dt->is_string()) return fail("dtype is not a string");
  t.dtype = dt->get<std::string>();
  const size_t elem = ElementSize(t.dtype);
  if (elem == 0) {
    return fail("unsupported dtype '" + t.dtype + "' (supported: " + kKnownDtypes + ")");
  }
  if (!sh->is_array()) return fail("shape is not an array");
  for (const json& d : *sh) {
    if (!d.is_number_unsigned()) {
      return fail("shape " + sh->dump() + " must hold non-negative integers");
    }
    if (d.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return fail("shape " + sh->dump() + " is too large");
    }
    t.shape.push_back(d.get<int64_t>());
  }
  if (!offs->is_array() || offs->size() != 2 || !(*offs)[0].is_number_unsigned() ||
      !(*offs)[1].is_number_unsigned()) {
    return fail("data_offsets " + offs->dump() +
                " must be [begin, end] with non-negative integers");
  }
  const uint64_t begin = (*offs)[0].get<uint64_t>();
  const uint64_t end = (*offs)[1].get<uint64_t>();
  if (begin > end || end > data_size) {
    return fail("data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                "] lie outside the data section (" + std::to_string(data_size) + " bytes)");
  }
  uint64_t want = 0;
  if (!ByteSize(t.shape, elem, want) || end - begin != want) {
    return fail("data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] span " +
                std::to_string(end - begin) + " bytes but shape " + sh->dump() + " of " + t.dtype +
                " needs " + (want ? std::to_string(want) : std::string("more")) + " bytes");
  }
  t.data = ir::ConstData{bytes, static_cast<size_t>(data_start + begin),
                         static_cast<size_t>(end - begin)};
  return t;
}

}  // namespace

Result<std::map<std::string, SafetensorsTensor>> ParseSafetensors(
    std::shared_ptr<const std::vector<uint8_t>> bytes, const std::string& origin) {
  if (!bytes) return InternalError(origin + ": ParseSafetensors called without bytes");
  const uint8_t* p = bytes->data();
  const uint64_t size = bytes->size();
  if (size < 8) {
    return UserError(origin + ": is " + std::to_string(size) +
                     " bytes, too small for a safetensors file (truncated?)");
  }
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | p[i];
  if (header_len > kMaxHeaderBytes) {
    return UserError(origin + ": header length " + std::to_string(header_len) +
                     " exceeds the 100 MB limit; this is not a safetensors file or it is corrupt");
  }
  if (header_len > size - 8) {
    return UserError(origin + ": header length " + std::to_string(header_len) +
                     " runs past the end of the file (" + std::to_string(size) +
                     " bytes); the file is truncated or not safetensors");
  }
  const char* text = reinterpret_cast<const char*>(p + 8);
  json header = json::parse(text, text + header_len, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) {
    return UserError(origin +
                     ": header is not a JSON object; this is not a safetensors file or "
                     "it is corrupt");
  }
  const uint64_t data_start = 8 + header_len;
  const uint64_t data_size = size - data_start;
  std::map<std::string, SafetensorsTensor> out;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    VKQC_ASSIGN_OR_RETURN(auto t, ParseEntry(origin, name, entry, bytes, data_start, data_size));
    out.emplace(name, std::move(t));
  }
  return out;
}

Result<std::map<std::string, SafetensorsTensor>> ReadSafetensors(const std::string& path) {
  VKQC_ASSIGN_OR_RETURN(auto bytes, ReadFileBytes(path));
  return ParseSafetensors(std::move(bytes), path);
}

Status WriteSafetensors(const std::string& path, const std::vector<SafetensorsEntry>& tensors) {
  // Data is packed without gaps (other readers reject holes), largest element size first so
  // every tensor starts aligned to its element size.
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return ElementSize(tensors[a].dtype) > ElementSize(tensors[b].dtype);
  });

  json header = json::object();
  uint64_t offset = 0;
  for (size_t i : order) {
    const SafetensorsEntry& e = tensors[i];
    const size_t elem = ElementSize(e.dtype);
    if (elem == 0) {
      return UserError(path + ": tensor '" + e.name + "': unsupported dtype '" + e.dtype +
                       "' (supported: " + kKnownDtypes + ")");
    }
    if (e.name == "__metadata__" || header.contains(e.name)) {
      return UserError(path + ": tensor name '" + e.name + "' is reserved or used twice");
    }
    uint64_t want = 0;
    for (int64_t d : e.shape) {
      if (d < 0) return UserError(path + ": tensor '" + e.name + "': negative dimension");
    }
    if (!ByteSize(e.shape, elem, want) || want != e.bytes.size()) {
      return UserError(path + ": tensor '" + e.name + "': " + std::to_string(e.bytes.size()) +
                       " bytes given, but its shape and dtype need " + std::to_string(want));
    }
    header[e.name] = {
        {"dtype", e.dtype}, {"shape", e.shape}, {"data_offsets", {offset, offset + want}}};
    offset += want;
  }
  std::string text = header.dump(-1, ' ', false, json::error_handler_t::replace);
  text.append((8 - text.size() % 8) % 8, ' ');

  std::vector<uint8_t> file(8 + text.size() + offset);
  const uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) file[i] = static_cast<uint8_t>(n >> (8 * i));
  std::memcpy(file.data() + 8, text.data(), text.size());
  uint8_t* data = file.data() + 8 + text.size();
  for (size_t i : order) {
    const SafetensorsEntry& e = tensors[i];
    if (!e.bytes.empty()) std::memcpy(data, e.bytes.data(), e.bytes.size());
    data += e.bytes.size();
  }
  return WriteFileBytes(path, file.data(), file.size());
}

}  // namespace vkqc
