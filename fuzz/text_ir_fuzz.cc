// fuzz/text_ir_fuzz.cc — the text IR parser: parse; whatever parses prints to
// a text that parses back and prints identically (print is a fixpoint); a
// graph that passes the verifier also goes through shape inference.
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "ir/text_format.h"
#include "ir/verifier.h"
#include "ops/shape_inference.h"

using namespace ferry;

namespace ferry::fuzz {

void text_ir_init() {
  fuzz::init_limits();
}

int text_ir_one(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto g = parse_graph(text);
  if (!g.ok()) {
    fuzz::fuzz_check(g.status(), "parse_graph");
    if (g.status().message().find("line ") == std::string::npos)
      fuzz::fuzz_fail("parse error without a line: " + g.status().message());
    return 0;
  }
  const std::string printed = print_graph(**g);
  auto again = parse_graph(printed);
  if (!again.ok()) fuzz::fuzz_fail("printed text does not parse: " + again.status().message() + "\n" + printed);
  const std::string reprinted = print_graph(**again);
  if (reprinted != printed) fuzz::fuzz_fail("print is not a fixpoint:\n" + printed + "\n----\n" + reprinted);
  if (verify(**g).ok()) fuzz::fuzz_check(infer_shapes(**g), "infer_shapes");
  return 0;
}

}  // namespace ferry::fuzz

FERRY_FUZZ_ENTRY_POINTS(text_ir)
