// runtime/wait_policy.h — how long idle OpenMP threads spin before they sleep.
//
// libgomp's default spins for ~300,000 iterations at every barrier and at the
// end of every parallel region. On a machine that is busy with other work (CI,
// several server replicas, a laptop) a spinning thread burns the time slice of
// the thread it waits for: measured on 2 cores with a test suite beside it,
// MobileNetV2 took 670 ms per run instead of 9 ms. ferry's default is to spin
// briefly, then sleep (as ONNX Runtime does): GOMP_SPINCOUNT = kSpinCount, unless
// the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT. libgomp reads them once, when it
// is loaded, so the CLI re-executes itself with the variable set
// (apply_default_wait_policy) and the Python package sets it before it loads the
// extension (python/ferry/__init__.py).
#pragma once

namespace ferry {

/// Spin iterations before an idle OpenMP thread sleeps (~10-20 us on current x86).
inline constexpr const char* kSpinCount = "20000";

/// True when neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set (ferry may choose).
bool wait_policy_is_default();

/// For main(): when the wait policy is libgomp's default, sets GOMP_SPINCOUNT and
/// re-executes the program (once; FERRY_WAIT_POLICY_SET marks the second start).
/// Returns normally when nothing had to change or the re-exec failed.
void apply_default_wait_policy(char** argv);

}  // namespace ferry
