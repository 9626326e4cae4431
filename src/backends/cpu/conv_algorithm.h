// backends/cpu/conv_algorithm.h — how the cpu backend computes an fp32 convolution that
// Winograd's minimal filtering can take (3x3, stride 1, no dilation, one group).
//
// oneDNN 2.6 has Winograd F(2x2,3x3) and F(4x4,3x3) kernels for AVX-512 cores only: on the
// ResNet / DenseNet 3x3 shapes they ran 1.2-2.9x faster than its direct kernel alone (1.5-1.7x
// inside ResNet-50, 1.06x inside DenseNet-121) at a difference of ~3e-6 relative to the output's
// magnitude, but slower on small ones (16 channels, 7x7 maps): bench/onednn_winograd_probe.cc and
// bench/RESULTS.md. kAuto takes Winograd only where it gained inside a model.
#pragma once

#include <optional>
#include <string>

namespace ferry {

enum class ConvAlgorithm {
  kAuto,      ///< Winograd where oneDNN has it for this CPU and the shape gains (conv_prefers_winograd)
  kDirect,    ///< always oneDNN's direct convolution (the closest to every peer's numbers)
  kWinograd,  ///< Winograd wherever oneDNN has it for the shape, direct elsewhere
};

/// "auto", "direct", "winograd".
const char* conv_algorithm_name(ConvAlgorithm a);
/// The inverse of conv_algorithm_name ("" is auto); nullopt for an unknown name.
std::optional<ConvAlgorithm> parse_conv_algorithm(const std::string& name);

/// kAuto's shape rule for a 3x3 / stride 1 / one-group fp32 conv with `ic` input and `oc`
/// output channels over `pixels` = batch x output height x width.
bool conv_prefers_winograd(long ic, long oc, long pixels);

}  // namespace ferry
