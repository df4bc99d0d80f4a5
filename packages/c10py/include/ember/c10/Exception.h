#pragma once
// ember's C++ error hierarchy. Each class maps to one Python exception type
// (see csrc/python/module.cpp): Error -> RuntimeError, IndexError -> IndexError,
// ValueError -> ValueError, TypeError -> TypeError,
// NotImplementedError -> NotImplementedError, OutOfMemoryError -> MemoryError
// subclass, LinAlgError -> RuntimeError subclass in Python.
//
// Raise them with the EMBER_CHECK* macros: the message is built only when the
// check fails, and debug builds append the C++ source location.

#include <exception>
#include <sstream>
#include <string>
#include <utility>

#include <ember/c10/Macros.h>

namespace ember::c10 {

class EMBER_C10_API Error : public std::exception {
 public:
  explicit Error(std::string msg) : msg_(std::move(msg)) {}
  const char* what() const noexcept override { return msg_.c_str(); }
  const std::string& msg() const { return msg_; }

 private:
  std::string msg_;
};

class EMBER_C10_API IndexError : public Error {
  using Error::Error;
};
class EMBER_C10_API ValueError : public Error {
  using Error::Error;
};
class EMBER_C10_API TypeError : public Error {
  using Error::Error;
};
class EMBER_C10_API NotImplementedError : public Error {
  using Error::Error;
};
class EMBER_C10_API OutOfMemoryError : public Error {
  using Error::Error;
};
class EMBER_C10_API LinAlgError : public Error {
  using Error::Error;
};

namespace detail {

inline void str_append(std::ostringstream&) {}
template <typename T, typename... Rest>
inline void str_append(std::ostringstream& ss, const T& first, const Rest&... rest) {
  ss << first;
  str_append(ss, rest...);
}

}  // namespace detail

// Concatenates its arguments with operator<<.
template <typename... Args>
inline std::string str(const Args&... args) {
  std::ostringstream ss;
  detail::str_append(ss, args...);
  return ss.str();
}
inline std::string str(const char* s) { return s; }
inline std::string str(const std::string& s) { return s; }

template <typename E, typename... Args>
[[noreturn]] void throw_error(const char* file, int line, const Args&... args) {
#ifdef NDEBUG
  (void)file;
  (void)line;
  throw E(str(args...));
#else
  throw E(str(args..., " (", file, ":", line, ")"));
#endif
}

}  // namespace ember::c10

#define EMBER_CHECK_IMPL_(E, cond, ...)                                \
  do {                                                                 \
    if (EMBER_UNLIKELY(!(cond))) {                                     \
      ::ember::c10::throw_error<E>(__FILE__, __LINE__, ##__VA_ARGS__); \
    }                                                                  \
  } while (0)

#define EMBER_CHECK(cond, ...) EMBER_CHECK_IMPL_(::ember::c10::Error, cond, __VA_ARGS__)
#define EMBER_CHECK_INDEX(cond, ...) EMBER_CHECK_IMPL_(::ember::c10::IndexError, cond, __VA_ARGS__)
#define EMBER_CHECK_VALUE(cond, ...) EMBER_CHECK_IMPL_(::ember::c10::ValueError, cond, __VA_ARGS__)
#define EMBER_CHECK_TYPE(cond, ...) EMBER_CHECK_IMPL_(::ember::c10::TypeError, cond, __VA_ARGS__)
#define EMBER_CHECK_NOT_IMPLEMENTED(cond, ...) EMBER_CHECK_IMPL_(::ember::c10::NotImplementedError, cond, __VA_ARGS__)
#define EMBER_CHECK_LINALG(cond, ...) EMBER_CHECK_IMPL_(::ember::c10::LinAlgError, cond, __VA_ARGS__)

#define EMBER_ERROR(...) ::ember::c10::throw_error<::ember::c10::Error>(__FILE__, __LINE__, __VA_ARGS__)

// Internal invariants: a failure here is a bug in ember, not in the caller.
#define EMBER_INTERNAL_ASSERT(cond, ...) \
  EMBER_CHECK_IMPL_(::ember::c10::Error, cond, "INTERNAL ASSERT FAILED: " #cond " ", ##__VA_ARGS__)
