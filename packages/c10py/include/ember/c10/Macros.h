#pragma once
// Export/visibility and host/device annotations shared by every ember C++ file.

#if defined(_WIN32)
#define EMBER_EXPORT __declspec(dllexport)
#define EMBER_IMPORT __declspec(dllimport)
#else
#define EMBER_EXPORT __attribute__((visibility("default")))
#define EMBER_IMPORT __attribute__((visibility("default")))
#endif

// libember_c10 is built with EMBER_BUILD_C10; everyone else imports its symbols.
#if defined(EMBER_BUILD_C10)
#define EMBER_C10_API EMBER_EXPORT
#else
#define EMBER_C10_API EMBER_IMPORT
#endif

#if defined(__CUDACC__)
#define EMBER_HOST_DEVICE __host__ __device__
#define EMBER_DEVICE __device__
#else
#define EMBER_HOST_DEVICE
#define EMBER_DEVICE
#endif

#define EMBER_LIKELY(x) __builtin_expect(static_cast<bool>(x), 1)
#define EMBER_UNLIKELY(x) __builtin_expect(static_cast<bool>(x), 0)

#define EMBER_DISABLE_COPY_AND_ASSIGN(T) \
  T(const T&) = delete;                  \
  T& operator=(const T&) = delete
