#include "runtime/wait_policy.h"

#include <unistd.h>

#include <cstdlib>

namespace ferry {

bool wait_policy_is_default() { return !std::getenv("OMP_WAIT_POLICY") && !std::getenv("GOMP_SPINCOUNT"); }

void apply_default_wait_policy(char** argv) {
  if (!wait_policy_is_default() || std::getenv("FERRY_WAIT_POLICY_SET")) return;
  setenv("GOMP_SPINCOUNT", kSpinCount, 1);
  setenv("FERRY_WAIT_POLICY_SET", "1", 1);
  execv("/proc/self/exe", argv);
  // exec failed (no /proc): run on with libgomp's default.
}

}  // namespace ferry
