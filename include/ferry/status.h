// ferry/status.h — errors are values.
//
// A Status is ok, or a code plus a message with a context chain:
//   importing node 'conv3' (Conv): attribute 'pads' has 3 values, expected 4
// Context is prepended as the error travels up (with_context). Model and user
// errors come back as Status; broken internal invariants are FERRY_CHECK.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace ferry {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  ///< bad user input: CLI arguments, input tensors
  kInvalidModel,     ///< the model file is malformed or contradicts itself
  kUnsupported,      ///< valid model, but something ferry does not implement
  kIoError,          ///< a file could not be read or written
  kInternal,         ///< a ferry bug surfaced as an error
};

const char* status_code_name(StatusCode code);

/// The result of an operation that can fail: ok, or a code and a message.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  /// Prepends "context: " to the message of a failed status; no-op when ok.
  Status with_context(const std::string& context) && {
    if (!ok()) message_ = context + ": " + message_;
    return std::move(*this);
  }
  Status with_context(const std::string& context) const& {
    Status copy = *this;
    return std::move(copy).with_context(context);
  }

  /// "invalid model: <message>"
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status invalid_model(std::string msg) { return {StatusCode::kInvalidModel, std::move(msg)}; }
inline Status invalid_argument(std::string msg) { return {StatusCode::kInvalidArgument, std::move(msg)}; }
inline Status unsupported(std::string msg) { return {StatusCode::kUnsupported, std::move(msg)}; }
inline Status io_error(std::string msg) { return {StatusCode::kIoError, std::move(msg)}; }
inline Status internal_error(std::string msg) { return {StatusCode::kInternal, std::move(msg)}; }

/// A value or a failed Status.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    if (std::get<Status>(v_).ok()) v_ = Status(StatusCode::kInternal, "Result constructed from ok Status");
  }
  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

[[noreturn]] void check_failed(const char* file, int line, const char* cond, const std::string& msg);

}  // namespace ferry

#define FERRY_CONCAT_INNER(a, b) a##b
#define FERRY_CONCAT(a, b) FERRY_CONCAT_INNER(a, b)

/// Returns the status from the enclosing function when it is not ok.
#define FERRY_TRY(expr)                        \
  do {                                         \
    ::ferry::Status _ferry_st = (expr);        \
    if (!_ferry_st.ok()) return _ferry_st;     \
  } while (0)

/// auto x = ...; from a Result<T>, returning its status on failure.
/// Expands to several statements: never use it as the body of an unbraced if/for.
#define FERRY_ASSIGN_OR_RETURN(lhs, expr) \
  FERRY_ASSIGN_OR_RETURN_IMPL(FERRY_CONCAT(_ferry_res_, __LINE__), lhs, expr)
#define FERRY_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()

/// Internal invariant: aborts with a message. Never for model or user errors.
#define FERRY_CHECK(cond, ...)                                                      \
  do {                                                                              \
    if (!(cond)) ::ferry::check_failed(__FILE__, __LINE__, #cond, std::string(__VA_ARGS__)); \
  } while (0)
