#include "backends/cpu/conv_algorithm.h"

namespace ferry {

const char* conv_algorithm_name(ConvAlgorithm a) {
  switch (a) {
    case ConvAlgorithm::kDirect: return "direct";
    case ConvAlgorithm::kWinograd: return "winograd";
    case ConvAlgorithm::kAuto: break;
  }
  return "auto";
}

std::optional<ConvAlgorithm> parse_conv_algorithm(const std::string& name) {
  for (ConvAlgorithm a : {ConvAlgorithm::kAuto, ConvAlgorithm::kDirect, ConvAlgorithm::kWinograd})
    if (name == conv_algorithm_name(a)) return a;
  if (name.empty()) return ConvAlgorithm::kAuto;
  return std::nullopt;
}

bool conv_prefers_winograd(long ic, long oc, long pixels) {
  // Measured (2 threads, AVX-512, bench/RESULTS.md): 16 -> 16 channels lost (0.75x at 112x112),
  // 32 -> 32 gained little (1.08x); 64 -> 64 to 256 -> 256 on maps of 14x14 and up gained
  // 1.53-1.69x inside ResNet-50, more than the reorders into and out of nChw16c cost (a chain
  // of channels-last convs around them); DenseNet-121's 128 -> 32 gained 1.06x inside the model,
  // less than its reorders (1.9 ms per inference); 7x7 maps lost with 128 -> 32 (0.63x) and
  // gained nothing inside ResNet-50 with 512 -> 512 (1.02x, for 1.8x the weight memory).
  return ic >= 32 && oc >= 64 && pixels >= 14 * 14;
}

}  // namespace ferry
