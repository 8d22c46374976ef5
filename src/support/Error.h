// The one error model of r3: library code returns values carrying errors and
// never prints or exits; only src/cli/ prints and chooses exit codes. This
// header has no dependency on LLVM so that every layer, including the injected
// record library's parent side, can use it; llvm::Error is converted at the
// boundary.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace r3 {

/// A failure with a message in r3's style: lower case, no final period, saying
/// where, what was expected and what was got. A default-constructed or
/// `Error::success()` value means "no error". Like llvm::Error, it converts to
/// true when it holds a failure.
class [[nodiscard]] Error {
public:
  Error() = default;
  static Error success() { return Error(); }
  /// A failure with the given message.
  static Error make(std::string Message) { return Error(std::move(Message)); }

  explicit operator bool() const { return Message.has_value(); }
  const std::string &message() const {
    assert(Message && "message() of a success value");
    return *Message;
  }
  /// Prefixes the message with "Where: " (a file, an object path), keeping the
  /// innermost detail last: `cap.h5: /launches/3: missing attribute 'grid'`.
  Error context(const std::string &Where) && {
    if (Message)
      Message = Where + ": " + *Message;
    return std::move(*this);
  }

private:
  explicit Error(std::string M) : Message(std::move(M)) {}
  std::optional<std::string> Message;
};

/// A value of type T or an Error.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T Value) : Storage(std::move(Value)) {}
  Expected(Error E) : Storage(std::move(E)) {
    assert(std::get<Error>(Storage) && "Expected built from a success Error");
  }

  explicit operator bool() const { return std::holds_alternative<T>(Storage); }
  T &operator*() { return std::get<T>(Storage); }
  const T &operator*() const { return std::get<T>(Storage); }
  T *operator->() { return &std::get<T>(Storage); }
  const T *operator->() const { return &std::get<T>(Storage); }
  /// The error; only valid when the Expected holds no value.
  Error takeError() {
    if (*this)
      return Error::success();
    return std::move(std::get<Error>(Storage));
  }
  const Error &error() const { return std::get<Error>(Storage); }

private:
  std::variant<T, Error> Storage;
};

inline void appendPart(std::string &S, const std::string &P) { S += P; }
inline void appendPart(std::string &S, const char *P) { S += P; }
inline void appendPart(std::string &S, std::string_view P) { S += P; }
inline void appendPart(std::string &S, char C) { S += C; }
template <typename N>
requires std::is_arithmetic_v<N>
void appendPart(std::string &S, N Value) { S += std::to_string(Value); }

/// Builds an error message from pieces: `makeError("expected ", N, " got ",
/// M)`.
template <typename... Ts> Error makeError(const Ts &...Parts) {
  std::string S;
  (appendPart(S, Parts), ...);
  return Error::make(std::move(S));
}

/// Moves the value of V into Out, or returns V's error: lets a sequence of
/// reads be written as `R3_TRY(moveInto(readX(), X));`.
template <typename T, typename U> Error moveInto(Expected<T> V, U &Out) {
  if (!V)
    return V.takeError();
  Out = static_cast<U>(std::move(*V));
  return Error::success();
}

/// A failure from a failed system call: "What: strerror(errno)".
Error errnoError(const std::string &What);

} // namespace r3

/// Returns from the enclosing function if Expr yields a failure.
#define R3_TRY(Expr)                                                           \
  do {                                                                         \
    if (::r3::Error R3Err_ = (Expr))                                           \
      return R3Err_;                                                           \
  } while (false)
