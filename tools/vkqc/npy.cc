#include "tools/vkqc/npy.h"

#include "compiler/common/half.h"

#include <cstring>
#include <fstream>
#include <iterator>

namespace vkqc {

int64_t NpyArray::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

static int ElemSize(const std::string& d) {
  if (d == "<f4" || d == "<i4") return 4;
  if (d == "<f2") return 2;
  if (d == "|i1" || d == "|u1" || d == "<i1" || d == "<u1") return 1;
  return 0;
}

namespace {

// The value of `key` in the header dict ({'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }):
// the text after "'key':" and blanks, or npos. Written by hand (std::regex recursed once per
// character, so a long header could overflow the stack).
size_t ValueAt(const std::string& h, const char* key) {
  const std::string k = std::string("'") + key + "':";
  size_t at = h.find(k);
  if (at == std::string::npos) return at;
  at += k.size();
  while (at < h.size() && (h[at] == ' ' || h[at] == '\t')) ++at;
  return at;
}

}  // namespace

Result<NpyArray> ParseNpy(const uint8_t* p, size_t size, const std::string& path) {
  if (size < 10 || std::memcmp(p, "\x93NUMPY", 6) != 0) return UserError(path + ": not a .npy file");
  const int major = p[6];
  size_t hlen = 0, hoff = 0;
  if (major == 1) {
    hlen = p[8] | (size_t(p[9]) << 8);
    hoff = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) return UserError(path + ": truncated header");
    hlen = p[8] | (size_t(p[9]) << 8) | (size_t(p[10]) << 16) | (size_t(p[11]) << 24);
    hoff = 12;
  } else {
    return UserError(path + ": unsupported .npy version " + std::to_string(major));
  }
  if (hlen > size - hoff) return UserError(path + ": truncated header");
  const std::string h(reinterpret_cast<const char*>(p + hoff), hlen);
  NpyArray a;
  size_t at = ValueAt(h, "descr");
  const size_t end = at == std::string::npos || at >= h.size() || h[at] != '\'' ? std::string::npos : h.find('\'', at + 1);
  if (end == std::string::npos) return UserError(path + ": header has no descr");
  a.descr = h.substr(at + 1, end - at - 1);
  if (a.descr == "<i1") a.descr = "|i1";
  if (a.descr == "<u1") a.descr = "|u1";
  const int elem = ElemSize(a.descr);
  if (!elem) return UserError(path + ": unsupported dtype '" + a.descr + "' (use float32, float16, int8, uint8 or int32)");
  at = ValueAt(h, "fortran_order");
  if (at != std::string::npos && h.compare(at, 4, "True") == 0) return UserError(path + ": Fortran order is not supported");
  at = ValueAt(h, "shape");
  const size_t close = at == std::string::npos || at >= h.size() || h[at] != '(' ? std::string::npos : h.find(')', at);
  if (close == std::string::npos) return UserError(path + ": header has no shape");
  // Every run of digits inside the parentheses is a dimension. The product of the nonzero ones is
  // bounded (2^53), so NumElements() cannot overflow even where a zero makes the array empty.
  uint64_t nonzero = 1;
  bool empty = false;
  for (size_t i = at + 1; i < close;) {
    if (h[i] < '0' || h[i] > '9') {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < close && h[j] >= '0' && h[j] <= '9') ++j;
    if (j - i > 12) return UserError(path + ": dimension too large");
    const int64_t d = std::stoll(h.substr(i, j - i));
    a.shape.push_back(d);
    if (d == 0) empty = true;
    else if (uint64_t(d) > (1ull << 53) / nonzero) return UserError(path + ": the shape has too many elements");
    else nonzero *= uint64_t(d);
    i = j;
  }
  const size_t doff = hoff + hlen;
  const uint64_t need = (empty ? 0 : nonzero) * uint64_t(elem);
  if (size - doff != need)
    return UserError(path + ": data has " + std::to_string(size - doff) + " bytes, shape needs " + std::to_string(need));
  a.data.assign(p + doff, p + size);
  return a;
}

Result<NpyArray> ReadNpy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return UserError(path + ": cannot open");
  std::vector<uint8_t> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return ParseNpy(b.data(), b.size(), path);
}

Status WriteNpy(const std::string& path, const NpyArray& a) {
  std::string shape;
  for (size_t i = 0; i < a.shape.size(); ++i) shape += std::to_string(a.shape[i]) + (a.shape.size() == 1 || i + 1 < a.shape.size() ? "," : "");
  std::string h = "{'descr': '" + a.descr + "', 'fortran_order': False, 'shape': (" + shape + "), }";
  const size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) return UserError(path + ": cannot write");
  const uint8_t pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, uint8_t(h.size() & 0xFF), uint8_t(h.size() >> 8)};
  f.write(reinterpret_cast<const char*>(pre), 10);
  f.write(h.data(), h.size());
  f.write(reinterpret_cast<const char*>(a.data.data()), a.data.size());
  if (!f) return UserError(path + ": write failed");
  return {};
}

NpyArray NpyFromFloats(const std::vector<float>& v, const std::vector<int64_t>& shape) {
  NpyArray a;
  a.descr = "<f4";
  a.shape = shape;
  a.data.resize(v.size() * 4);
  std::memcpy(a.data.data(), v.data(), a.data.size());
  return a;
}

std::vector<float> NpyToFloats(const NpyArray& a) {
  const int64_t n = a.NumElements();
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (a.descr == "<f4") std::memcpy(&v[i], a.data.data() + 4 * i, 4);
    else if (a.descr == "<i4") { int32_t x; std::memcpy(&x, a.data.data() + 4 * i, 4); v[i] = float(x); }
    else if (a.descr == "|i1") v[i] = float(int8_t(a.data[i]));
    else if (a.descr == "<f2") { uint16_t h; std::memcpy(&h, a.data.data() + 2 * i, 2); v[i] = HalfToFloat(h); }
    else v[i] = float(a.data[i]);
  }
  return v;
}

}  // namespace vkqc
