// fuzz/npy_fuzz.cc — the .npy reader: decode; whatever decodes encodes to
// bytes that decode to the same tensor.
#include <cstdint>
#include <string_view>

#include "validate/npy.h"
#include "fuzz_util.h"

using namespace ferry;

namespace ferry::fuzz {

void npy_init() {
  fuzz::init_limits();
}

int npy_one(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto t = decode_npy(bytes);
  if (!t.ok()) {
    fuzz::fuzz_check(t.status(), "decode_npy");
    return 0;
  }
  auto enc = encode_npy(*t);
  if (!enc.ok()) {
    fuzz::fuzz_check(enc.status(), "encode_npy");
    return 0;
  }
  auto back = decode_npy(*enc);
  if (!back.ok()) fuzz::fuzz_fail("re-encoded .npy does not decode: " + back.status().message());
  if (!back->bit_equal(*t)) fuzz::fuzz_fail(".npy round trip changed the tensor " + t->type_string());
  return 0;
}

}  // namespace ferry::fuzz

FERRY_FUZZ_ENTRY_POINTS(npy)
