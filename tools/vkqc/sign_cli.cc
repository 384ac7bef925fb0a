#include "tools/vkqc/sign_cli.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "compiler/graph/vkqg_io.h"
#include "runtime/src/ed25519.h"
#include "vkqc/vkqc.h"

namespace vkqc {
namespace {

Result<std::vector<uint8_t>> ReadSmall(const std::string& path, const char* what) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return UserError(std::string(what) + " " + path + ": cannot open: " + std::strerror(errno));
  std::vector<uint8_t> v((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (v.size() > 65536) return UserError(std::string(what) + " " + path + ": not a key file (over 64 KiB)");
  return v;
}

Result<Ed25519Key> ReadSeed(const std::string& path) {
  VKQC_ASSIGN_OR_RETURN(auto file, ReadSmall(path, "--sign-key"));
  Ed25519Key seed;
  if (auto e = ParseEd25519Seed(file, &seed); !e.empty()) return UserError("--sign-key " + path + ": " + e);
  return seed;
}

// A new file only (a key is never overwritten), mode 0600 for the private key.
Status WriteNew(const std::string& path, const std::string& text, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0)
    return UserError(path + ": " + (errno == EEXIST ? std::string("exists (vkqc keygen never overwrites a key)")
                                                      : std::string(std::strerror(errno))));
  const bool ok = ::write(fd, text.data(), text.size()) == ssize_t(text.size());
  const bool closed = ::close(fd) == 0;
  if (!ok || !closed) {
    ::unlink(path.c_str());
    return UserError(path + ": write failed");
  }
  return {};
}

}  // namespace

Status CheckSignKey(const Args& a) {
  VKQC_ASSIGN_OR_RETURN(Ed25519Key seed, ReadSeed(a.Get("--sign-key")));
  (void)seed;
  return {};
}

Status SignWithKeyFile(const Args& a, std::vector<uint8_t>* bundle) {
  if (!a.Has("--sign-key")) return {};
  VKQC_ASSIGN_OR_RETURN(Ed25519Key seed, ReadSeed(a.Get("--sign-key")));
  if (auto e = SignBundle(bundle, seed.data()); !e.empty()) return UserError(e);
  return {};
}

Result<std::vector<Ed25519Key>> TrustedKeys(const Args& a) {
  std::vector<Ed25519Key> keys;
  for (auto [it, end] = a.opt.equal_range("--trusted-key"); it != end; ++it) {
    VKQC_ASSIGN_OR_RETURN(auto file, ReadSmall(it->second, "--trusted-key"));
    Ed25519Key k;
    if (auto e = ParseEd25519PublicKey(file, &k); !e.empty()) return UserError("--trusted-key " + it->second + ": " + e);
    keys.push_back(k);
  }
  return keys;
}

Status CmdKeygen(const Args& a) {
  VKQC_TRY(CheckKnown(a, {"-o"}));
  if (!a.pos.empty() || !a.Has("-o")) return UserError("usage: vkqc keygen -o NAME   (writes NAME.key and NAME.pub)");
  Ed25519Key seed;
  {
    std::ifstream r("/dev/urandom", std::ios::binary);
    if (!r.read(reinterpret_cast<char*>(seed.data()), 32)) return UserError("cannot read /dev/urandom");
  }
  Ed25519Key pub;
  crypto::Ed25519PublicKey(seed.data(), pub.data());
  const std::string name = a.Get("-o");
  VKQC_TRY(WriteNew(name + ".key", Ed25519SeedPem(seed), 0600));
  if (Status s = WriteNew(name + ".pub", Ed25519PublicKeyPem(pub), 0644); !s.ok()) {
    ::unlink((name + ".key").c_str());
    return s;
  }
  std::printf("wrote %s.key (private: keep it secret; `vkqc compile --sign-key`, `vkqc sign`) and %s.pub\n"
              "public key (ed25519): %s\n", name.c_str(), name.c_str(), KeyHex(pub).c_str());
  return {};
}

Status CmdSign(const Args& a) {
  VKQC_TRY(CheckKnown(a, {"--sign-key", "-o"}));
  if (a.pos.size() != 1 || !a.Has("--sign-key"))
    return UserError("usage: vkqc sign BUNDLE.vkqb --sign-key KEY [-o OUT.vkqb]   (default: in place)");
  VKQC_ASSIGN_OR_RETURN(auto file, ReadFileBytes(a.pos[0]));
  std::vector<uint8_t> bytes = *file;
  if (vkqc_verify_bundle(bytes.data(), bytes.size()) != VKQC_OK) return UserError(a.pos[0] + ": " + vkqc_last_error());
  VKQC_TRY(SignWithKeyFile(a, &bytes));
  const std::string out = a.Get("-o", a.pos[0]);
  VKQC_TRY(WriteFileBytes(out, bytes.data(), bytes.size()));
  BundleSignatureInfo info;
  ReadBundleSignature(bytes.data(), bytes.size(), &info);
  std::printf("wrote %s, signed by ed25519 key %s\n", out.c_str(), KeyHex(info.signer).c_str());
  return {};
}

Status PrintSignature(const Args& a, const std::vector<uint8_t>& bundle) {
  BundleSignatureInfo info;
  if (auto e = ReadBundleSignature(bundle.data(), bundle.size(), &info); !e.empty()) return UserError(e);
  VKQC_ASSIGN_OR_RETURN(auto keys, TrustedKeys(a));
  std::string line = !info.has_slots ? "unsigned (no signature slots: written by an older vkqc)"
                     : info.is_signed ? "signed by ed25519 key " + KeyHex(info.signer)
                                      : "unsigned";
  if (!keys.empty()) {
    const std::string why = VerifyBundleSignature(bundle.data(), bundle.size(), keys.data(), keys.size());
    if (!why.empty()) return UserError("signature check failed: " + why);
    line += ", verified against --trusted-key";
  }
  std::printf("signature: %s\n", line.c_str());
  return {};
}

}  // namespace vkqc
