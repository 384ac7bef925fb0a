#include "tools/vkqc/npy.h"

#include <bit>
#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>

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

Result<NpyArray> ReadNpy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return UserError(path + ": cannot open");
  std::vector<uint8_t> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (b.size() < 10 || std::memcmp(b.data(), "\x93NUMPY", 6) != 0) return UserError(path + ": not a .npy file");
  const int major = b[6];
  size_t hlen = 0, hoff = 0;
  if (major == 1) {
    hlen = b[8] | (size_t(b[9]) << 8);
    hoff = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) return UserError(path + ": truncated header");
    hlen = b[8] | (size_t(b[9]) << 8) | (size_t(b[10]) << 16) | (size_t(b[11]) << 24);
    hoff = 12;
  } else {
    return UserError(path + ": unsupported .npy version " + std::to_string(major));
  }
  if (hoff + hlen > b.size()) return UserError(path + ": truncated header");
  const std::string h(reinterpret_cast<const char*>(b.data() + hoff), hlen);
  std::smatch m;
  NpyArray a;
  if (!std::regex_search(h, m, std::regex("'descr':\\s*'([^']*)'"))) return UserError(path + ": header has no descr");
  a.descr = m[1];
  if (a.descr == "<i1") a.descr = "|i1";
  if (a.descr == "<u1") a.descr = "|u1";
  if (!ElemSize(a.descr)) return UserError(path + ": unsupported dtype '" + a.descr + "' (use float32, float16, int8, uint8 or int32)");
  if (std::regex_search(h, m, std::regex("'fortran_order':\\s*True"))) return UserError(path + ": Fortran order is not supported");
  if (!std::regex_search(h, m, std::regex("'shape':\\s*\\(([^)]*)\\)"))) return UserError(path + ": header has no shape");
  const std::string dims = m[1];
  std::regex num("(\\d+)");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), num); it != std::sregex_iterator(); ++it) {
    const std::string s = (*it)[1];
    if (s.size() > 12) return UserError(path + ": dimension too large");
    a.shape.push_back(std::stoll(s));
  }
  const uint64_t need = uint64_t(a.NumElements()) * ElemSize(a.descr);
  const size_t doff = hoff + hlen;
  if (b.size() - doff != need)
    return UserError(path + ": data has " + std::to_string(b.size() - doff) + " bytes, shape needs " + std::to_string(need));
  a.data.assign(b.begin() + doff, b.end());
  return a;
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
    else if (a.descr == "<f2") { uint16_t h; std::memcpy(&h, a.data.data() + 2 * i, 2); v[i] = float(std::bit_cast<_Float16>(h)); }
    else v[i] = float(a.data[i]);
  }
  return v;
}

}  // namespace vkqc
