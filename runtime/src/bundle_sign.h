// Signed bundles (vkqc_context_options.trusted_keys; `vkqc compile --sign-key`, `vkqc sign`).
// Every bundle vkqc writes carries two slots: Bundle.signer (32 bytes) and Bundle.signature (64
// bytes), zero when unsigned. The signature is Ed25519 (RFC 8032) by the signer's key over
//   "VKQB signature v1\n" || SHA-512(the whole file, with the 8 integrity bytes and the 64
//                                    signature bytes read as zero)
// i.e. the flatbuffer (metadata, shader code, dispatches, tokenizer), its padding and the weight
// segment: nothing in the file can change without invalidating it. The integrity checksum is
// computed after signing, so it covers the signature too. Where the slots lie follows from the
// signed bytes themselves (vtable and offsets), so a crafted file cannot move the masks.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace vkqc {

using Ed25519Key = std::array<uint8_t, 32>;

struct BundleSignatureInfo {
  bool has_slots = false;  // written by a vkqc that knows signatures
  bool is_signed = false;  // signer slot not all zero
  Ed25519Key signer{};
};

// What the bundle says about its signature (no verification). The bundle must have passed the
// flatbuffers verifier (vkqc_verify_bundle / ParseBundle). Empty string: ok.
std::string ReadBundleSignature(const uint8_t* data, size_t size, BundleSignatureInfo* out);

// Verifies the bundle's signature against `keys` (any of them). Empty string: valid, signed by a
// trusted key; else why not ("unsigned", "signed by a key this context does not trust", "invalid").
std::string VerifyBundleSignature(const uint8_t* data, size_t size, const Ed25519Key* keys, size_t key_count);

// Signs a bundle in place with a 32-byte Ed25519 seed (replacing any earlier signature) and
// recomputes the integrity checksum. Empty string: ok.
std::string SignBundle(std::vector<uint8_t>* bundle, const uint8_t seed[32]);

// Keys in files: the raw 32 bytes, or PEM as OpenSSL writes them (`openssl genpkey -algorithm
// ed25519` PKCS#8 private keys, `openssl pkey -pubout` SubjectPublicKeyInfo public keys).
// Empty string: ok.
std::string ParseEd25519Seed(const std::vector<uint8_t>& file, Ed25519Key* seed);
std::string ParseEd25519PublicKey(const std::vector<uint8_t>& file, Ed25519Key* key);
std::string Ed25519SeedPem(const Ed25519Key& seed);
std::string Ed25519PublicKeyPem(const Ed25519Key& key);
std::string KeyHex(const Ed25519Key& key);

}  // namespace vkqc
