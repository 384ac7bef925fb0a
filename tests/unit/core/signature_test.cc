// Signed bundles: SHA-512 and Ed25519 (runtime/src/ed25519.cc) against vectors computed by an
// independent implementation (python3-cryptography / OpenSSL 3.0, hashlib) and RFC 8032's first
// test vector, the bundle signature over the whole file, and the key-file formats.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "compiler/graph/synthetic.h"
#include "compiler/passes/pipeline.h"
#include "runtime/src/bundle_sign.h"
#include "runtime/src/ed25519.h"
#include "tests/common/bundle_reseal.h"
#include "vkqc/vkqc.h"

namespace vkqc {
namespace {

std::vector<uint8_t> Hex(const std::string& h) {
  std::vector<uint8_t> v;
  for (size_t i = 0; i + 1 < h.size(); i += 2) v.push_back(uint8_t(std::stoul(h.substr(i, 2), nullptr, 16)));
  return v;
}
std::vector<uint8_t> Seed(int n) {
  std::vector<uint8_t> v(32);
  for (int i = 0; i < 32; ++i) v[i] = uint8_t(i * 37 + n * 11 + 5);
  return v;
}
std::vector<uint8_t> Msg(int n) {
  std::vector<uint8_t> v(n);
  for (int i = 0; i < n; ++i) v[i] = uint8_t(i * 131 + n * 7 + 1);
  return v;
}

struct EdVector {
  int n;
  const char* pub;
  const char* sig;
};
// python3-cryptography (OpenSSL 3.0): seed[i] = i*37 + n*11 + 5, msg[i] = i*131 + n*7 + 1 (mod 256)
const EdVector kEd[] = {
    {0, "bb9954e4bec8847819244b3dbb443192d4c0b87025d3906780924afde1c8fbe8",
     "7e400018e52b4108dd8425cd52f49c3532cb50d36eea3424963a98f8d485612519410b89265c76a80f101826db638648244e53482be5823b2b10fade0c94b802"},
    {1, "cdfdaad65775cfc4dc03a6543a23817e3ae89f504746741b3d3f35da3548b749",
     "bc39a45bf5280b15f91af7302686941f5f6fe25ef212887b391c1f563b21081661cc35d87ef359bfb50963e4b0332704192c9f48008571643dbf84f2a6abe90d"},
    {3, "56b8c6dc8f51526e4957cb765e7c82aa177cd1e63ac39d7318a38494f1546f84",
     "d60e10acfd6a258dc44a5fee1ff6ec8c608d2d362d612fad191a3d276ff61666f2bff0b6cb519b46bd62f4225bd9b2d5d66029bca07ae7e33f4fa47da2033e07"},
    {64, "9d20079870275e362d5ee353278298b15efa54bdab21a5913731d2b2ccb06fce",
     "b8e648204b0694f4a74395e95bb806d548bf67ae1d2b90173e03f8a068ef62b3647d1341094daa446a071310de22a31edb8dd048cc52e39fedaf4c9b4395600e"},
    {111, "ed759114bde8ecaabc1273204f77fe151516ca4a559493d0da617f44ac96076a",
     "389b390cbe428a2f741bc44288549fbb48987b0ab11450dc9d44465ba70c3f6e3d87e3beebdd4ab3ddd864789b19ae53e4bdd2469be663ccc86585b776726e0d"},
    {112, "90a607aa88d64d61f292695effaed45527e1d8f4c25e8f17050f9ce9273a6aed",
     "3bb05f473e31560c1cb4fd85635de7e98905e9243e6a594b698d7f53feec77bb4e3130e2e1db86f82f617d7ab3fa9a182124663cae2ce86551a66cd26eca920e"},
    {127, "87ac7cdafef53e43a26d18718d4084b1b8013d24bd1248877930efe4037822a0",
     "4fd02a72b3f8ae15c3136c3f164bbeb1146229f0b62061335e0023641094cf81bb2e2f37f1c5ef1bc2d9654ecb134b204027066e7f527646970968a5b4bfa60a"},
    {128, "ba00bf8513da1d84ef26b9bf02059cb89f34f473e937eaaceb1968a4481c39cd",
     "a1363a8a5f2d912f16646252fa2148033a1f5138f25c9261133962442128a720eb18753d57e108ba9e1941cd444f27e171094c423adb25f8219ac852f5b07203"},
    {129, "37f33572009bbf32b223901753af03799406c0b76971521305d2883f3209b5e8",
     "da3324fad162f4a50b69823922f4e0725c3b2e1dfa150ceae8416c0cfdcb10effc24c793817dc01ca7d10cf1a6d33c924ec0626b3a55c563b56f943af22c680e"},
    {239, "548b3a6d857770f04a88edae02acbdb928e006c6185c6700c8f3e46a304ab954",
     "c9c33544b14741e4b56fd207616cbcd14c750a24f1f16d6095635bac009413d06c5546a50544bb797362cdc7cce67b5555d1ac767963556eda101dafa650c100"},
    {1000, "401042bbb3cc747a7ca7471d9c7903aa197053f48ec1d96fbac99ae11409cc8a",
     "b63535190346e2a56f726c32c34c19e8cfda72b124148759b1061e9dcd8325d2b0a9e58bcb027e9f5d5eb39d7113d7c8fe39f2686a4b1f2aa4cb4cab0755bd01"},
};
struct ShaVector {
  int n;
  const char* digest;
};
const ShaVector kSha[] = {  // hashlib.sha512(msg(n))
    {0, "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"},
    {3, "5c6f52240ee620116b588b66f6e4992bcf2f1ccce3fbf3d8274e07e4699f601e7db5c33fe5758d78919e6747384d0a0f9e7af1a83064c8f222cf4df4aafa390d"},
    {111, "05a512f3d5fd96141597868dd8efadf7cf34aa87d1a893c3bf464731fcce1cf839a9c861d4c79c7386e3bd8b1084f408116f3c26b3fe63431e07d0f657d221f9"},
    {112, "d5b97c9cef538d686c72c80befed51a66281b3ad4cf70a75f3812015e7f60bb0ca529f8d58661a517263a0ffaf59a8e05aee80bc0588a130f6295a94c7638657"},
    {127, "a80870471cfa28c9ef8b03cc4a05e36d8ff89275ac0264225ed334f058667f292f424dc9fd32c7caa5a4a327c871459b91d9eb7bc3fadb19448b080502768644"},
    {128, "8935215b1a5777914dc6a4f652e6b14d2d2b74964ea79b1ea24dba60809004abbf7bf50b1f16739880f4678e4a55c115e1cbc3bbab550e75489c104bc9961b43"},
    {129, "79559165feb75d9423960aaf75cf1163a2b3d5cbae8acaac40340250b46ff386a4e917bafbfa937894eb39557891a2c720dcfce6a276fcef2c68ffbd21fc7e8a"},
    {239, "28095ed293251c95ce7dd4ebe5e090daf7d29e31df4f5e84c84da9dca740e330788d08942c8341438e0b07d9d51a1165309cec78f3ad5a8af259ba63e44de48b"},
    {1000, "7a0421f85518ffa43775e3a4afe3b0e9330f8b06468b00cb85fc4eab4ba03932e508e02d10af7603700b51e26f6ee40b191342e945be3f3828965b77636fa887"},
};

TEST(Sha512, MatchesHashlibOneShotAndInPieces) {
  for (const auto& v : kSha) {
    const auto m = Msg(v.n);
    for (size_t piece : {size_t(0), size_t(1), size_t(7), size_t(127)}) {
      crypto::Sha512 s;
      if (piece == 0) {
        s.Update(m.data(), m.size());
      } else {
        for (size_t at = 0; at < m.size(); at += piece) s.Update(m.data() + at, std::min(piece, m.size() - at));
      }
      uint8_t d[64];
      s.Final(d);
      EXPECT_EQ(std::vector<uint8_t>(d, d + 64), Hex(v.digest)) << "length " << v.n << " piece " << piece;
    }
  }
}

TEST(Ed25519, Rfc8032Test1) {
  const auto seed = Hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
  const auto pub = Hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
  const auto sig = Hex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b");
  uint8_t p[32], s[64];
  crypto::Ed25519PublicKey(seed.data(), p);
  crypto::Ed25519Sign(seed.data(), nullptr, 0, s);
  EXPECT_EQ(std::vector<uint8_t>(p, p + 32), pub);
  EXPECT_EQ(std::vector<uint8_t>(s, s + 64), sig);
  EXPECT_TRUE(crypto::Ed25519Verify(pub.data(), nullptr, 0, sig.data()));
}

TEST(Ed25519, MatchesOpenSslAndRejectsEveryChange) {
  for (const auto& v : kEd) {
    const auto seed = Seed(v.n), m = Msg(v.n), pub = Hex(v.pub), sig = Hex(v.sig);
    uint8_t p[32], s[64];
    crypto::Ed25519PublicKey(seed.data(), p);
    crypto::Ed25519Sign(seed.data(), m.data(), m.size(), s);
    EXPECT_EQ(std::vector<uint8_t>(p, p + 32), pub) << v.n;
    EXPECT_EQ(std::vector<uint8_t>(s, s + 64), sig) << v.n;
    EXPECT_TRUE(crypto::Ed25519Verify(pub.data(), m.data(), m.size(), sig.data())) << v.n;
    for (int bit = 0; bit < 512; bit += 37) {  // any bit of R or S
      auto bad = sig;
      bad[bit / 8] ^= uint8_t(1 << (bit % 8));
      EXPECT_FALSE(crypto::Ed25519Verify(pub.data(), m.data(), m.size(), bad.data())) << v.n << " sig bit " << bit;
    }
    for (int bit = 0; bit < 256; bit += 29) {
      auto bad = pub;
      bad[bit / 8] ^= uint8_t(1 << (bit % 8));
      EXPECT_FALSE(crypto::Ed25519Verify(bad.data(), m.data(), m.size(), sig.data())) << v.n << " key bit " << bit;
    }
    if (!m.empty()) {
      auto bad = m;
      bad[m.size() / 2] ^= 0x10;
      EXPECT_FALSE(crypto::Ed25519Verify(pub.data(), bad.data(), bad.size(), sig.data())) << v.n;
    }
  }
}

// S + L is the same scalar mod L: RFC 8032 requires S < L (no malleable second signature).
TEST(Ed25519, RejectsNonCanonicalSAndKeys) {
  const auto& v = kEd[3];
  const auto m = Msg(v.n), pub = Hex(v.pub);
  auto sig = Hex(v.sig);
  const auto l = Hex("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010");  // L, little endian
  int carry = 0;
  for (int i = 0; i < 32; ++i) {
    const int t = sig[32 + i] + l[i] + carry;
    sig[32 + i] = uint8_t(t);
    carry = t >> 8;
  }
  ASSERT_EQ(carry, 0);
  EXPECT_FALSE(crypto::Ed25519Verify(pub.data(), m.data(), m.size(), sig.data()));
  // y = p (non-canonical encoding of y = 0) and y = 2 (no x exists for it): not public keys.
  auto p = Hex("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f");
  EXPECT_FALSE(crypto::Ed25519Verify(p.data(), m.data(), m.size(), Hex(v.sig).data()));
  std::vector<uint8_t> two(32, 0);
  two[0] = 2;
  EXPECT_FALSE(crypto::Ed25519Verify(two.data(), m.data(), m.size(), Hex(v.sig).data()));
}

TEST(KeyFiles, OpenSslPemAndRawBytes) {
  // `openssl genpkey -algorithm ed25519` and `openssl pkey -pubout` of the same key.
  const std::string priv = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIFXl4uyYVt7isWzy1HkabjM8xtcyS4TcbTrt5tDSrUBQ\n-----END PRIVATE KEY-----\n";
  const std::string pub = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAMpW++6A4Cf/mMlyO7ERgwsVYvoylDvMe9wnsTSFyRbc=\n-----END PUBLIC KEY-----\n";
  Ed25519Key seed, key, derived;
  ASSERT_EQ(ParseEd25519Seed({priv.begin(), priv.end()}, &seed), "");
  ASSERT_EQ(ParseEd25519PublicKey({pub.begin(), pub.end()}, &key), "");
  crypto::Ed25519PublicKey(seed.data(), derived.data());
  EXPECT_EQ(derived, key);
  EXPECT_EQ(KeyHex(key), "3295befba03809ffe6325c8eec4460c2c558be8ca50ef31ef709ec4d217245b7");
  // vkqc keygen's PEM reads back, byte for byte the same as OpenSSL writes it.
  EXPECT_EQ(Ed25519SeedPem(seed), priv);
  EXPECT_EQ(Ed25519PublicKeyPem(key), pub);
  std::vector<uint8_t> raw(seed.begin(), seed.end());
  Ed25519Key again;
  ASSERT_EQ(ParseEd25519Seed(raw, &again), "");
  EXPECT_EQ(again, seed);
  // A public key is not a private key, and the other way round; RSA and garbage are refused.
  EXPECT_NE(ParseEd25519Seed({pub.begin(), pub.end()}, &again), "");
  EXPECT_NE(ParseEd25519PublicKey({priv.begin(), priv.end()}, &again), "");
  const std::string junk = "-----BEGIN PRIVATE KEY-----\n!!!!\n-----END PRIVATE KEY-----\n";
  EXPECT_NE(ParseEd25519Seed({junk.begin(), junk.end()}, &again), "");
  EXPECT_NE(ParseEd25519Seed(std::vector<uint8_t>(31, 1), &again), "");
}

std::vector<uint8_t> Bundle() {
  testing_graphs::LayerSpec l{40, 24, true, 0.05f, 1, true, true};
  ir::Graph g = testing_graphs::MakeLinearChain(3, {l, {24, 8, false, 0, 0, false, false}}, 4);
  auto p = LoadProfile("lavapipe");
  EXPECT_TRUE(p.ok());
  auto b = CompileGraph(g, *p, {}, 0);
  EXPECT_TRUE(b.ok()) << b.error().message;
  return b.ok() ? *b : std::vector<uint8_t>();
}

TEST(BundleSignature, SignedBundlesVerifyAndEveryByteCounts) {
  auto bytes = Bundle();
  ASSERT_FALSE(bytes.empty());
  Ed25519Key seed, pub, other_seed, other;
  for (int i = 0; i < 32; ++i) {
    seed[i] = uint8_t(3 * i + 1);
    other_seed[i] = uint8_t(5 * i + 2);
  }
  crypto::Ed25519PublicKey(seed.data(), pub.data());
  crypto::Ed25519PublicKey(other_seed.data(), other.data());

  BundleSignatureInfo info;
  ASSERT_EQ(ReadBundleSignature(bytes.data(), bytes.size(), &info), "");
  EXPECT_TRUE(info.has_slots);
  EXPECT_FALSE(info.is_signed);
  EXPECT_NE(VerifyBundleSignature(bytes.data(), bytes.size(), &pub, 1).find("not signed"), std::string::npos);
  EXPECT_NE(vkqc_verify_bundle_signature(bytes.data(), bytes.size(), pub.data(), 1), VKQC_OK);

  ASSERT_EQ(SignBundle(&bytes, seed.data()), "");
  ASSERT_EQ(vkqc_verify_bundle(bytes.data(), bytes.size()), VKQC_OK) << vkqc_last_error();  // integrity resealed
  ASSERT_EQ(ReadBundleSignature(bytes.data(), bytes.size(), &info), "");
  EXPECT_TRUE(info.is_signed);
  EXPECT_EQ(info.signer, pub);
  EXPECT_EQ(VerifyBundleSignature(bytes.data(), bytes.size(), &pub, 1), "");
  const Ed25519Key both[2] = {other, pub};
  EXPECT_EQ(vkqc_verify_bundle_signature(bytes.data(), bytes.size(), both, 2), VKQC_OK) << vkqc_last_error();
  EXPECT_NE(VerifyBundleSignature(bytes.data(), bytes.size(), &other, 1).find("not among the trusted keys"),
            std::string::npos);

  // Every byte of the file is covered: a change anywhere (flatbuffer, padding, weights), with
  // the module hashes and the integrity checksum recomputed afterwards as a crafted bundle would
  // have them, is refused; most such changes pass the structural verifier, so it is the
  // signature that refuses them.
  uint32_t fb = 0;
  std::memcpy(&fb, bytes.data(), 4);
  int checked = 0, by_signature = 0;
  for (size_t at = 0; at < bytes.size(); at += 1 + at / 11) {
    auto bad = bytes;
    bad[at] ^= 0x01;
    testing_bundles::ResealBundle(bad.data(), bad.size());
    if (bad == bytes) continue;  // the integrity field itself: resealing restored it
    const bool structural = vkqc_verify_bundle(bad.data(), bad.size()) != VKQC_OK;
    const bool signature = !structural && VerifyBundleSignature(bad.data(), bad.size(), &pub, 1) != "";
    EXPECT_TRUE(structural || signature) << "byte " << at << " of " << bytes.size() << " (flatbuffer " << fb + 4 << ")";
    by_signature += signature;
    ++checked;
  }
  EXPECT_GT(checked, 80);
  // The signature's share depends on how much of the file the structural verifier reads (the
  // sampled bytes fall on SPIR-V, tables and weights as the layout puts them; 45 of 90 after the
  // GEMV's row-block constant, session 24): at least a third of the changes are caught by it alone.
  EXPECT_GE(by_signature * 3, checked);
  {
    auto bad = bytes;
    bad.back() ^= 0x80;  // a weight byte: not covered by the integrity checksum, covered by the signature
    EXPECT_EQ(vkqc_verify_bundle(bad.data(), bad.size()), VKQC_OK);
    EXPECT_NE(VerifyBundleSignature(bad.data(), bad.size(), &pub, 1).find("changed after it was signed"),
              std::string::npos);
  }
  // Re-signing with another key replaces the signature.
  ASSERT_EQ(SignBundle(&bytes, other_seed.data()), "");
  EXPECT_EQ(VerifyBundleSignature(bytes.data(), bytes.size(), &other, 1), "");
  EXPECT_NE(VerifyBundleSignature(bytes.data(), bytes.size(), &pub, 1), "");
}

}  // namespace
}  // namespace vkqc
