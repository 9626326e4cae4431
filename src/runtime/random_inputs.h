// runtime/random_inputs.h — seeded random tensors for a graph's inputs, so a
// model can be run without real data (`ferry run`, benchmarks, validation).
//
// Values, by input:
//   name contains "mask" (any case)   0 or 1, whatever the dtype
//   bool                              0 or 1
//   integer, feeding Gather indices   uniform in [0, rows of the gathered table)
//                                     (followed through Cast/Reshape/Squeeze/Unsqueeze/Flatten/Identity)
//   other integers                    uniform in [0, 10)
//   floating point                    N(0, 1)
// Shapes: static dims as declared; a symbolic or unknown dim takes its value
// from a --shape override of that input, else from another input (given or
// overridden) that binds the same symbol, else 1 when it is batch-like (the
// first dim, or a symbol named like a batch: N, B, batch, batch_size, bs, ...);
// any other unresolved dim is an error telling the user to pass --shape.
//
// Determinism: each input draws from its own std::mt19937_64 seeded from the
// seed and the input's name (splitmix64 of seed ^ FNV-1a(name)), and normals
// come from our own Box-Muller transform, so values depend only on (seed,
// name, dtype, shape): not on the standard library's distributions, nor on
// which other inputs are given.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ferry/status.h"
#include "ir/graph.h"

namespace ferry {

struct RandomInputOptions {
  uint64_t seed = 0;
  /// Input name -> full static dims (from --shape NAME=1x3x224x224).
  std::map<std::string, std::vector<int64_t>> shapes;
};

/// How an input's values were chosen, for printing ("N(0,1)", "ints in [0, 30522) (Gather indices)").
struct RandomInputInfo {
  std::string name;
  std::string distribution;
};

/// Resolves concrete dims for every graph input not in `given`, and checks the
/// given tensors and the overrides against the model and against each other
/// (a symbol bound to two values, an override of a missing input, a rank or
/// static dim mismatch). Errors name the input.
Result<std::map<std::string, std::vector<int64_t>>> resolve_input_dims(
    const Graph& g, const std::map<std::string, Tensor>& given, const RandomInputOptions& options);

/// Returns a tensor for every graph input: the given ones unchanged, the others
/// random as above. `infos` (if non-null) receives how each random input was made.
Result<std::map<std::string, Tensor>> make_inputs(const Graph& g, const std::map<std::string, Tensor>& given,
                                                  const RandomInputOptions& options,
                                                  std::vector<RandomInputInfo>* infos = nullptr);

/// The random tensor for one input with resolved `dims` (exposed for tests).
Result<Tensor> random_input(const Value& input, const std::vector<int64_t>& dims, uint64_t seed,
                            RandomInputInfo* info = nullptr);

/// Standard normal samples from a 64-bit generator state: Box-Muller on
/// 53-bit uniforms in (0, 1). Deterministic across standard libraries.
class NormalSampler {
 public:
  explicit NormalSampler(uint64_t seed);
  double normal();
  /// Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; bias < n / 2^64).
  uint64_t below(uint64_t n);

 private:
  double uniform_open();
  std::mt19937_64 engine_;  // its output sequence is fixed by the C++ standard
  bool have_spare_ = false;
  double spare_ = 0;
};

}  // namespace ferry
