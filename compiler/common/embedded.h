// Files embedded into the compiler at build time (cmake/embed.cmake): shaders/ and profiles/.
#pragma once
#include <cstddef>
#include <string_view>

namespace vkqc {

struct EmbeddedFile {
  const char* name;  // base file name, e.g. "linear.comp"
  const char* data;  // not NUL-terminated semantics: use size
  size_t size;
  std::string_view view() const { return {data, size}; }
};

extern const EmbeddedFile vkqc_embedded_shaders[];
extern const size_t vkqc_embedded_shaders_count;
extern const EmbeddedFile vkqc_embedded_profiles[];
extern const size_t vkqc_embedded_profiles_count;

}  // namespace vkqc
