// ops/unimplemented.cc — weak fallbacks so the build links while op families
// are being written: an op whose family file does not define infer_/ref_ yet
// reports "not implemented" instead of failing the link. A family file's
// strong definition replaces these. (Temporary; removed once every op is in.)
#include "ops/op_context.h"

namespace ferry {

#define FERRY_OP(name, ...)                                                              \
  __attribute__((weak)) Status infer_##name(InferContext&) {                            \
    return unsupported("op " #name " has no shape inference yet");                      \
  }                                                                                      \
  __attribute__((weak)) Status ref_##name(KernelContext&) {                             \
    return unsupported("op " #name " has no reference kernel yet");                     \
  }
#include "ir/ops.def"
#undef FERRY_OP

}  // namespace ferry
