// Errors as values for the compiler and tools (DESIGN 8).
// A UserError is the user's mistake (bad file, unsupported op, shape mismatch): the message
// names the file / tensor / op and what to do. An InternalError is a bug in vkqc.
#pragma once
#include <string>
#include <utility>
#include <variant>

namespace vkqc {

enum class ErrorKind { User, Internal };

struct Error {
  ErrorKind kind = ErrorKind::User;
  std::string message;
};

inline Error UserError(std::string msg) { return Error{ErrorKind::User, std::move(msg)}; }
inline Error InternalError(std::string msg) { return Error{ErrorKind::Internal, std::move(msg)}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  T& operator*() { return value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result<void>.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : err_(std::move(error)), ok_(false) {}
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return err_; }

 private:
  Error err_;
  bool ok_ = true;
};

#define VKQC_TRY(expr)                       \
  do {                                       \
    auto vkqc_try_s_ = (expr);               \
    if (!vkqc_try_s_.ok()) return vkqc_try_s_.error(); \
  } while (0)

#define VKQC_CONCAT_INNER(a, b) a##b
#define VKQC_CONCAT(a, b) VKQC_CONCAT_INNER(a, b)
#define VKQC_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.error();               \
  lhs = std::move(tmp).value()
#define VKQC_ASSIGN_OR_RETURN(lhs, expr) \
  VKQC_ASSIGN_OR_RETURN_IMPL(VKQC_CONCAT(vkqc_r_, __LINE__), lhs, expr)

}  // namespace vkqc
