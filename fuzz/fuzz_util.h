// fuzz/fuzz_util.h — what every ferry libFuzzer target shares.
//
// Bounds: the fuzzers lower ferry's own allocation limit (set_tensor_size_limit,
// the same knob an embedding service would use) so that a tiny input naming a
// legitimately huge tensor fails with ferry's "exceeds the size limit" error
// instead of tripping libFuzzer's -rss_limit_mb / -malloc_limit_mb.
//
// A failed Status is a fine outcome for a fuzz input; what is not fine is a
// crash, a sanitizer report, a hang, an internal error (a ferry bug surfaced as
// a Status), or an error without a message. fuzz_check() aborts on those, so
// libFuzzer records the input.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "ferry/status.h"
#include "ir/tensor.h"

namespace ferry::fuzz {

/// Largest tensor a fuzz input may make ferry allocate.
inline constexpr size_t kFuzzTensorLimit = size_t(16) << 20;

inline void init_limits() { set_tensor_size_limit(kFuzzTensorLimit); }

/// Aborts (a libFuzzer finding) when a failure is a ferry bug rather than a bad input.
inline void fuzz_check(const Status& st, const char* what) {
  if (st.ok()) return;
  if (st.message().empty() || st.code() == StatusCode::kInternal) {
    std::fprintf(stderr, "fuzz: %s failed with an internal or empty error: %s\n", what, st.to_string().c_str());
    std::abort();
  }
}

/// Aborts with a message: an invariant of the target failed (e.g. a round trip).
[[noreturn]] inline void fuzz_fail(const std::string& msg) {
  std::fprintf(stderr, "fuzz: %s\n", msg.c_str());
  std::abort();
}

}  // namespace ferry::fuzz

/// Defines libFuzzer's entry points for target NAME from NAME_init() and
/// NAME_one(). tests/fuzz/fuzz_regressions_test.cc includes the target files
/// with FERRY_FUZZ_NO_MAIN defined, to replay the regression corpus in ctest.
#ifndef FERRY_FUZZ_NO_MAIN
#define FERRY_FUZZ_ENTRY_POINTS(NAME)                                           \
  extern "C" int LLVMFuzzerInitialize(int*, char***) {                         \
    ::ferry::fuzz::NAME##_init();                                              \
    return 0;                                                                  \
  }                                                                            \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {    \
    return ::ferry::fuzz::NAME##_one(data, size);                              \
  }
#else
#define FERRY_FUZZ_ENTRY_POINTS(NAME)
#endif
