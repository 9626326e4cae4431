// precision/calibrate_int8.h — calibration of the int8 nodes' activations: the per-tensor
// u8 quantization of input 0 of every node the precision pass put at int8, observed on
// the fp32 run of the calibration samples (reference interpreter, the optimized graph).
//
//   minmax       lo = min(0, min x), hi = max(0, max x) over every sample (the default)
//   percentile   lo, hi = the 0.01st and 99.99th percentiles of x over every sample
//                (each widened to include 0): an outlier no longer stretches the scale
//   entropy      the range whose 256-level quantization keeps the histogram closest in KL
//                divergence (TensorRT's calibration; precision/activation_histogram.h)
//   mse          the range with the least expected squared quantization error, clipping
//                included (precision/activation_histogram.h)
//   scale = (hi - lo) / 255 (1 when hi == lo),  zero_point = round(-lo / scale) in [0, 255]
// An int8 FusedConv's computed residual Z (input 3) is observed the same way (res_scale /
// res_zero_point): the emulation may read Z quantized (emulate_precision.h).
// Weights are quantized per output channel, symmetric s8, by the emulation
// (precision/emulate_precision.h); they need no samples.
#pragma once

#include "precision/graph_runner.h"

#include <map>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/graph.h"
#include "passes/assign_precision.h"
#include "precision/emulate_precision.h"

namespace ferry {

enum class Int8Observer { minmax, percentile, entropy, mse };

/// "minmax" / "percentile" / "entropy" / "mse"; invalid_argument otherwise.
Result<Int8Observer> parse_int8_observer(const std::string& name);
const char* int8_observer_name(Int8Observer o);
/// "minmax, percentile, entropy, mse": for messages and help texts.
const char* int8_observer_names();

/// Fills act_scale / act_zero_point of every int8 node of `report` from the fp32 run of `g`
/// on `samples`; `samples_from` ("8 seeded random samples") goes into each node's reason.
/// The fp32 runs go through `runner` (precision/graph_runner.h; empty: the reference interpreter).
Status calibrate_int8(const Graph& g, PrecisionReport& report, const std::vector<std::map<std::string, Tensor>>& samples,
                      Int8Observer observer, const std::string& samples_from, const GraphRunner& runner = {});

/// True when some int8 node of `report` has no calibration yet.
bool needs_int8_calibration(const PrecisionReport& report);

/// The int8 nodes' calibrated activations, for lower_emulated_precision.
std::map<std::string, ActivationQuant> activation_quant(const PrecisionReport& report);

}  // namespace ferry
