// fuzz/npz_fuzz.cc — the .npz (zip) reader: central directory, zip64, local
// headers, stored and deflated members, CRC, and each member's .npy.
#include <cstdint>
#include <string_view>

#include "fuzz_util.h"
#include "validate/npz.h"

using namespace ferry;

namespace ferry::fuzz {

void npz_init() {
  fuzz::init_limits();
}

int npz_one(const uint8_t* data, size_t size) {
  auto arrays = validate::decode_npz(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!arrays.ok()) fuzz::fuzz_check(arrays.status(), "decode_npz");
  return 0;
}

}  // namespace ferry::fuzz

FERRY_FUZZ_ENTRY_POINTS(npz)
