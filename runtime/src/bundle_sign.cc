// Signed bundles: see bundle_sign.h.
#include "bundle_sign.h"

#include <algorithm>
#include <cstring>

#include "ed25519.h"
#include "schema/bundle_generated.h"
#include "schema/bundle_integrity.h"

namespace vkqc {
namespace {

namespace fbb = vkqc::fb::bundle;

constexpr char kMessagePrefix[] = "VKQB signature v1\n";
constexpr size_t kPrefixSize = sizeof(kMessagePrefix) - 1;

// DER prefixes of OpenSSL's Ed25519 keys (OID 1.3.101.112): PKCS#8 PrivateKeyInfo wrapping the
// 32-byte seed, and SubjectPublicKeyInfo wrapping the 32-byte public key.
constexpr uint8_t kPkcs8Prefix[16] = {0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06,
                                      0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20};
constexpr uint8_t kSpkiPrefix[12] = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};
constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

struct Slots {
  const uint8_t* integrity = nullptr;  // 8 bytes
  const uint8_t* signer = nullptr;     // 32 bytes
  const uint8_t* signature = nullptr;  // 64 bytes
};

std::string FindSlots(const uint8_t* data, size_t size, Slots* s) {
  uint32_t fb = 0;
  if (size < 8) return "not a bundle";
  std::memcpy(&fb, data, 4);
  if (uint64_t(fb) + 4 > size) return "truncated bundle";
  const fbb::Bundle* b = fbb::GetBundle(data + 4);
  s->integrity = reinterpret_cast<const flatbuffers::Table*>(b)->GetAddressOf(fbb::Bundle::VT_INTEGRITY);
  if (!b->signer() && !b->signature()) return {};
  if (!b->signer() || b->signer()->size() != 32 || !b->signature() || b->signature()->size() != 64)
    return "malformed signature slots (signer must be 32 bytes, signature 64)";
  s->signer = b->signer()->data();
  s->signature = b->signature()->data();
  return {};
}

// SHA-512 of the file with the integrity and signature bytes read as zero.
void Digest(const uint8_t* data, size_t size, const Slots& s, uint8_t out[64]) {
  std::pair<size_t, size_t> masks[2];
  int n = 0;
  if (s.integrity) masks[n++] = {size_t(s.integrity - data), 8};
  masks[n++] = {size_t(s.signature - data), 64};
  std::sort(masks, masks + n);
  static const uint8_t zeros[64] = {};
  crypto::Sha512 sha;
  size_t at = 0;
  for (int i = 0; i < n; ++i) {
    const size_t begin = std::max(at, masks[i].first), end = std::max(at, masks[i].first + masks[i].second);
    if (masks[i].first > at) sha.Update(data + at, masks[i].first - at);
    if (end > begin) sha.Update(zeros, end - begin);
    at = std::max(at, end);
  }
  if (size > at) sha.Update(data + at, size - at);
  sha.Final(out);
}

void Message(const uint8_t* data, size_t size, const Slots& s, uint8_t msg[kPrefixSize + 64]) {
  std::memcpy(msg, kMessagePrefix, kPrefixSize);
  Digest(data, size, s, msg + kPrefixSize);
}

std::vector<uint8_t> PemBody(const std::vector<uint8_t>& file, const std::string& label, bool* found) {
  const std::string text(file.begin(), file.end());
  const std::string begin = "-----BEGIN " + label + "-----", end = "-----END " + label + "-----";
  const size_t b = text.find(begin);
  const size_t e = b == std::string::npos ? b : text.find(end, b);
  *found = e != std::string::npos;
  std::vector<uint8_t> out;
  if (!*found) return out;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = b + begin.size(); i < e; ++i) {
    const char c = text[i];
    if (c == '=' || c == '\r' || c == '\n' || c == ' ' || c == '\t') continue;
    const char* p = std::strchr(kB64, c);
    if (!p || !c) {
      *found = false;
      return {};
    }
    acc = (acc << 6) | uint32_t(p - kB64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(uint8_t(acc >> bits));
    }
  }
  return out;
}

std::string Pem(const std::string& label, const uint8_t* der, size_t n) {
  std::string b64;
  for (size_t i = 0; i < n; i += 3) {
    const size_t left = n - i;
    uint32_t v = uint32_t(der[i]) << 16;
    if (left > 1) v |= uint32_t(der[i + 1]) << 8;
    if (left > 2) v |= der[i + 2];
    b64 += kB64[(v >> 18) & 63];
    b64 += kB64[(v >> 12) & 63];
    b64 += left > 1 ? kB64[(v >> 6) & 63] : '=';
    b64 += left > 2 ? kB64[v & 63] : '=';
  }
  std::string out = "-----BEGIN " + label + "-----\n";
  for (size_t i = 0; i < b64.size(); i += 64) out += b64.substr(i, 64) + "\n";
  return out + "-----END " + label + "-----\n";
}

}  // namespace

std::string ReadBundleSignature(const uint8_t* data, size_t size, BundleSignatureInfo* out) {
  *out = {};
  Slots s;
  if (auto e = FindSlots(data, size, &s); !e.empty()) return e;
  out->has_slots = s.signer != nullptr;
  if (!s.signer) return {};
  std::memcpy(out->signer.data(), s.signer, 32);
  out->is_signed = std::any_of(out->signer.begin(), out->signer.end(), [](uint8_t v) { return v != 0; });
  return {};
}

std::string VerifyBundleSignature(const uint8_t* data, size_t size, const Ed25519Key* keys, size_t key_count) {
  Slots s;
  if (auto e = FindSlots(data, size, &s); !e.empty()) return e;
  BundleSignatureInfo info;
  if (auto e = ReadBundleSignature(data, size, &info); !e.empty()) return e;
  if (!info.is_signed)
    return "the bundle is not signed (sign it with `vkqc compile --sign-key` or `vkqc sign`)";
  if (std::none_of(keys, keys + key_count, [&](const Ed25519Key& k) { return k == info.signer; }))
    return "the bundle is signed by key " + KeyHex(info.signer) + ", which is not among the trusted keys";
  uint8_t msg[kPrefixSize + 64];
  Message(data, size, s, msg);
  if (!crypto::Ed25519Verify(info.signer.data(), msg, sizeof msg, s.signature))
    return "the signature by key " + KeyHex(info.signer) +
           " does not match the bundle's contents (the file changed after it was signed)";
  return {};
}

std::string SignBundle(std::vector<uint8_t>* bundle, const uint8_t seed[32]) {
  Slots s;
  if (auto e = FindSlots(bundle->data(), bundle->size(), &s); !e.empty()) return e;
  if (!s.signer)
    return "the bundle has no signature slots (written by an older vkqc): compile it again with this one";
  if (!s.integrity) return "the bundle has no integrity field (format version 1): compile it again";
  uint8_t* base = bundle->data();
  auto* signer = const_cast<uint8_t*>(s.signer);
  auto* signature = const_cast<uint8_t*>(s.signature);
  crypto::Ed25519PublicKey(seed, signer);
  uint8_t msg[kPrefixSize + 64];
  Message(base, bundle->size(), s, msg);
  crypto::Ed25519Sign(seed, msg, sizeof msg, signature);
  uint32_t fb = 0;
  std::memcpy(&fb, base, 4);
  auto* b = fbb::GetMutableBundle(base + 4);
  b->mutate_integrity(BundleIntegrity(base, size_t(fb) + 4, s.integrity));
  return {};
}

std::string ParseEd25519Seed(const std::vector<uint8_t>& file, Ed25519Key* seed) {
  if (file.size() == 32) {
    std::copy(file.begin(), file.end(), seed->begin());
    return {};
  }
  bool pem = false;
  const auto der = PemBody(file, "PRIVATE KEY", &pem);
  if (pem && der.size() == 48 && std::equal(kPkcs8Prefix, kPkcs8Prefix + 16, der.begin())) {
    std::copy(der.begin() + 16, der.end(), seed->begin());
    return {};
  }
  return "not an Ed25519 private key: expected 32 raw bytes or a PKCS#8 PEM file (`vkqc keygen`, or "
         "`openssl genpkey -algorithm ed25519`)";
}

std::string ParseEd25519PublicKey(const std::vector<uint8_t>& file, Ed25519Key* key) {
  if (file.size() == 32) {
    std::copy(file.begin(), file.end(), key->begin());
    return {};
  }
  bool pem = false;
  const auto der = PemBody(file, "PUBLIC KEY", &pem);
  if (pem && der.size() == 44 && std::equal(kSpkiPrefix, kSpkiPrefix + 12, der.begin())) {
    std::copy(der.begin() + 12, der.end(), key->begin());
    return {};
  }
  return "not an Ed25519 public key: expected 32 raw bytes or a PEM public key (`vkqc keygen`, or "
         "`openssl pkey -pubout`)";
}

std::string Ed25519SeedPem(const Ed25519Key& seed) {
  uint8_t der[48];
  std::memcpy(der, kPkcs8Prefix, 16);
  std::memcpy(der + 16, seed.data(), 32);
  return Pem("PRIVATE KEY", der, sizeof der);
}

std::string Ed25519PublicKeyPem(const Ed25519Key& key) {
  uint8_t der[44];
  std::memcpy(der, kSpkiPrefix, 12);
  std::memcpy(der + 12, key.data(), 32);
  return Pem("PUBLIC KEY", der, sizeof der);
}

std::string KeyHex(const Ed25519Key& key) {
  static const char hex[] = "0123456789abcdef";
  std::string s;
  for (uint8_t v : key) {
    s += hex[v >> 4];
    s += hex[v & 15];
  }
  return s;
}

}  // namespace vkqc
