// SHA-512 (FIPS 180-4) and Ed25519 signatures (RFC 8032, pure Ed25519) for signed bundles.
// Written for the runtime: no dependencies, portable C++ (64-bit integer arithmetic only, no
// __int128), so it builds wherever the runtime does (Android, 32-bit included). Verification is not
// secret-dependent; signing (done by `vkqc compile --sign-key` / `vkqc sign`) uses a ladder
// without secret-dependent branches or table lookups.
#pragma once
#include <cstddef>
#include <cstdint>

namespace vkqc::crypto {

class Sha512 {
 public:
  Sha512();
  void Update(const void* data, size_t size);
  void Final(uint8_t out[64]);

 private:
  void Block(const uint8_t* p);
  uint64_t h_[8];
  uint8_t buf_[128];
  size_t fill_ = 0;
  uint64_t bytes_ = 0;
};

// The 32-byte public key of a 32-byte secret seed (RFC 8032 5.1.5).
void Ed25519PublicKey(const uint8_t seed[32], uint8_t public_key[32]);
// A 64-byte signature of msg (RFC 8032 5.1.6; deterministic).
void Ed25519Sign(const uint8_t seed[32], const uint8_t* msg, size_t size, uint8_t signature[64]);
// RFC 8032 5.1.7 (cofactorless: [S]B - [k]A must encode to R): true when valid. Rejects S >= L and
// public keys or R that are not canonical encodings of a curve point.
bool Ed25519Verify(const uint8_t public_key[32], const uint8_t* msg, size_t size, const uint8_t signature[64]);

}  // namespace vkqc::crypto
