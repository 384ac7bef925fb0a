// Helpers of the libFuzzer targets (tests/fuzz/*_fuzz.cc): splitting one input into the files a
// reader takes together, and a private scratch directory for readers that take a path.
//
// Contract of every target: the reader under test gets arbitrary bytes and must return (a value
// or a UserError) without a crash, a sanitizer report, a leak, a hang or an allocation past
// libFuzzer's limit. A UserError is an expected outcome, never a finding.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "compiler/common/result.h"

namespace vkqc::fuzz {

// A reader's refusal of bad input is a UserError; an InternalError says "a bug in vkqc": a finding.
template <class R>
void NoInternalError(const R& r, const char* what) {
  if (!r.ok() && r.error().kind == ErrorKind::Internal) {
    std::fprintf(stderr, "%s: internal error on fuzz input: %s\n", what, r.error().message.c_str());
    std::abort();
  }
}

// A property every accepted input must keep (a round trip, a documented bound); abort otherwise.
inline void Require(bool cond, const char* what) {
  if (!cond) {
    std::fprintf(stderr, "fuzz property violated: %s\n", what);
    std::abort();
  }
}

// Two files in one input: `first SEPARATOR second` (no separator: everything is `first`). The
// seed corpora are written that way (tests/fuzz/make_corpus.sh).
inline constexpr std::string_view kSeparator = "\n--vkqc-fuzz-next-file--\n";

struct Split {
  std::string_view first, second;
  bool has_second = false;
};
inline Split SplitInput(const uint8_t* data, size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const size_t at = all.find(kSeparator);
  if (at == std::string_view::npos) return {all, {}, false};
  return {all.substr(0, at), all.substr(at + kSeparator.size()), true};
}

// A directory of this process (removed at exit), under $TMPDIR (/dev/shm is a good choice).
inline const std::string& ScratchDir() {
  static const std::string dir = [] {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/vkqc-fuzz-XXXXXX";
    if (!mkdtemp(tmpl.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    static std::string keep = tmpl;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(keep, ec);
    });
    return tmpl;
  }();
  return dir;
}

// Writes `bytes` to ScratchDir()/name (replacing it) and returns the path.
inline std::string WriteScratch(const std::string& name, std::string_view bytes) {
  const std::string path = ScratchDir() + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::perror(path.c_str());
    std::abort();
  }
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) std::abort();
  std::fclose(f);
  return path;
}

inline void RemoveScratch(const std::string& name) { std::remove((ScratchDir() + "/" + name).c_str()); }

}  // namespace vkqc::fuzz
