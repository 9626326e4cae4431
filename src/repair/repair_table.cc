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

}  // namespace

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
