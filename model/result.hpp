// Errors as values: every library function below app/ returns Result<T>.
// A small stand-in for C++23 std::expected, kept deliberately minimal.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace pcieval {

struct Error {
  std::string message;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // REQUIRES: ok().
  [[nodiscard]] const T& value() const& { return std::get<0>(state_); }
  [[nodiscard]] T& value() & { return std::get<0>(state_); }
  [[nodiscard]] T&& value() && { return std::get<0>(std::move(state_)); }
  const T* operator->() const { return &value(); }
  const T& operator*() const { return value(); }

  // REQUIRES: !ok().
  [[nodiscard]] const Error& error() const { return std::get<1>(state_); }

  [[nodiscard]] T value_or(T fallback) const { return ok() ? value() : std::move(fallback); }

 private:
  std::variant<T, Error> state_;
};

// For operations that produce nothing but can fail.
using Status = Result<std::monostate>;
inline Status ok_status() { return std::monostate{}; }

inline Error make_error(std::string message) { return Error{std::move(message)}; }

// A value read from the system, or the reason it could not be read. Unknown
// readings never count as a pass: the validator turns them into inconclusive.
template <class T>
using Reading = Result<T>;

}  // namespace pcieval
