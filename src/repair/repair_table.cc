#include <algorithm>
#include <iterator>

#include "repair/contrib_rules.h"
#include "repair/repair_rule.h"

namespace ferry::repair {
namespace {

constexpr RepairRule kRules[] = {
#define FERRY_REPAIR(domain, op_type, becomes) {domain, #op_type, becomes, why_not_##op_type, repair_##op_type},
#include "repair/repair_table.def"
#undef FERRY_REPAIR
};

constexpr bool rule_less(const RepairRule& a, const RepairRule& b) {
  const std::string_view da = a.domain, db = b.domain;
  return da != db ? da < db : std::string_view(a.op_type) < std::string_view(b.op_type);
}
static_assert(std::is_sorted(std::begin(kRules), std::end(kRules), rule_less),
              "repair_table.def must be sorted by domain, then op type");

struct NamedTolerance {
  const char* rule;
  const char* became;  ///< the IR op the node became (null: any)
  CheckTolerance tolerance;
};

// DynamicQuantizeLSTM as QuantizedLSTM (ORT's arithmetic), measured: max |ferry - ORT| 2.4e-6
// on ddddocr's LSTM (--check-repairs, |Y_c| ~ 13) and 1e-7 to 3e-7 on the cases of
// tests/repair/test_dynamic_quantize_lstm.py, on AVX512_VNNI. Only ORT's MLAS sigmoid / tanh
// approximations differ; where they move an h code by one, outputs move by ~1e-4.
// As the f32 LSTM fallback (ops QuantizedLSTM does not cover): ONNX Runtime's outputs sit up to
// ~1.5e-2 from the f32 LSTM on the dequantized weights in tests/repair/test_dynamic_quantize_lstm.py,
// and up to 0.10 (at |y| ~ 1) on ddddocr's LSTM fed seeded random check inputs (seeds 1-8).
// A wrong layout or scale gives errors of the outputs' own size.
constexpr NamedTolerance kTolerances[] = {
    {"com.microsoft.DynamicQuantizeLSTM", "QuantizedLSTM",
     {1e-3, 1e-3,
      "ferry's QuantizedLSTM computes ONNX Runtime's dynamic quantization exactly; ORT's approximate sigmoid / "
      "tanh can move one uint8 code of h; on a CPU without VNNI ORT's u8 x s8 products also saturate in 16 bits "
      "(vpmaddubsw), which this tolerance does not cover"}},
    {"com.microsoft.DynamicQuantizeLSTM", nullptr,
     {1e-1, 1e-1,
      "ONNX Runtime quantizes X and each step's H to uint8 (dynamic quantization); the f32 LSTM does not; "
      "on a CPU without VNNI its u8 x s8 products also saturate in 16 bits (vpmaddubsw), which per-channel "
      "int8 weights can push past this tolerance"}},
};

}  // namespace

CheckTolerance rule_tolerance(std::string_view rule, const std::vector<std::string>& became) {
  for (const NamedTolerance& t : kTolerances)
    if (rule == t.rule && (!t.became || std::find(became.begin(), became.end(), t.became) != became.end()))
      return t.tolerance;
  return {};
}

std::span<const RepairRule> repair_rules() { return kRules; }

const RepairRule* find_repair(std::string_view domain, std::string_view op_type) {
  for (const RepairRule& r : kRules)
    if (domain == r.domain && op_type == r.op_type) return &r;
  return nullptr;
}

std::string rule_name(const RepairRule& rule) {
  const std::string domain = rule.domain;
  return domain.empty() ? std::string(rule.op_type) : domain + "." + rule.op_type;
}

}  // namespace ferry::repair
