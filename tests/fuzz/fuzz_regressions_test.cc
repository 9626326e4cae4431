// Replays the fuzz regression corpus (fuzz/regressions/<target>/: inputs that
// once crashed ferry, hung it or tripped a sanitizer) through the same code as
// the libFuzzer targets, in the ordinary test build. fuzz/smoke.sh replays them
// under ASan+UBSan too. A regression that fails again aborts this test
// (fuzz_check / fuzz_fail), which ctest reports as a failure.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#define FERRY_FUZZ_NO_MAIN 1
#include "../../fuzz/npy_fuzz.cc"
#include "../../fuzz/npz_fuzz.cc"
#include "../../fuzz/onnx_load_fuzz.cc"
#include "../../fuzz/pt2_load_fuzz.cc"
#include "../../fuzz/text_ir_fuzz.cc"
#include "../../fuzz/tf_load_fuzz.cc"

namespace ferry::fuzz {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> regression_files(const std::string& target) {
  std::vector<std::string> out;
  fs::path dir = fs::path(FERRY_SOURCE_DIR) / "fuzz" / "regressions" / target;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename().string()[0] != '.') out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void replay(const std::string& target, void (*init)(), int (*one)(const uint8_t*, size_t)) {
  auto files = regression_files(target);
  ASSERT_TRUE(fs::is_directory(fs::path(FERRY_SOURCE_DIR) / "fuzz" / "regressions" / target)) << target;
  const size_t limit = tensor_size_limit();
  init();
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    std::string bytes = read_file(f);
    EXPECT_EQ(one(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0);
  }
  set_tensor_size_limit(limit);  // init lowered it for the fuzz inputs
}

TEST(FuzzRegressions, OnnxLoad) { replay("onnx_load_fuzz", onnx_load_init, onnx_load_one); }
TEST(FuzzRegressions, TextIr) { replay("text_ir_fuzz", text_ir_init, text_ir_one); }
TEST(FuzzRegressions, Npy) { replay("npy_fuzz", npy_init, npy_one); }
TEST(FuzzRegressions, Npz) { replay("npz_fuzz", npz_init, npz_one); }
TEST(FuzzRegressions, Pt2Load) { replay("pt2_load_fuzz", pt2_load_init, pt2_load_one); }
TEST(FuzzRegressions, TfLoad) {
  const int64_t inline_limit = tf_import::inline_node_limit();
  replay("tf_load_fuzz", tf_load_init, tf_load_one);
  tf_import::set_inline_node_limit(inline_limit);  // init lowered it for the fuzz inputs
}

}  // namespace
}  // namespace ferry::fuzz
