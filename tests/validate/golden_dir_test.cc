#include "validate/golden_dir.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "validate/npy.h"

namespace ferry::validate {
namespace {

namespace fs = std::filesystem;

class ValidateGoldenDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ferry_golden_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write_text(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
  }
  fs::path dir_;
};

TEST_F(ValidateGoldenDir, RoundTrip) {
  GoldenSet set;
  set.producer = "test";
  set.model = "m.onnx";
  Tensor x = Tensor::from_vector<float>({1, 2, 3}, {3});
  Tensor y = Tensor::from_vector<int64_t>({4}, {1});
  Tensor mid = Tensor::from_vector<float>({0.5f}, {1});
  set.put("x", x, &set.inputs);
  set.put("out/y", y, &set.outputs);  // '/' must not make a subdirectory
  set.put("OUT_y", mid, &set.intermediates);
  set.put("out:y", mid, &set.intermediates);  // same stem as "out/y": gets a suffix
  set.nodes["node1"] = {"out/y"};
  set.skipped.emplace_back("seq", "not a tensor");
  const std::string out = (dir_ / "g").string();
  ASSERT_TRUE(write_golden_dir(out, set).ok());

  auto back = open_golden_dir(out);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->producer, "test");
  EXPECT_EQ(back->model, "m.onnx");
  EXPECT_EQ(back->inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(back->outputs, std::vector<std::string>{"out/y"});
  EXPECT_EQ(back->intermediates, (std::vector<std::string>{"OUT_y", "out:y"}));
  EXPECT_EQ(back->nodes.at("node1"), std::vector<std::string>{"out/y"});
  ASSERT_EQ(back->skipped.size(), 1u);
  EXPECT_EQ(back->skipped[0].second, "not a tensor");
  EXPECT_EQ(back->names(), (std::vector<std::string>{"OUT_y", "out/y", "out:y", "x"}));
  EXPECT_TRUE(back->get("x")->bit_equal(x));
  EXPECT_TRUE(back->get("out/y")->bit_equal(y));
  EXPECT_TRUE(back->get("out:y")->bit_equal(mid));
  // Four distinct files, even on a case-insensitive file system.
  size_t npy_files = 0;
  for (const auto& e : fs::directory_iterator(out)) npy_files += e.path().extension() == ".npy";
  EXPECT_EQ(npy_files, 4u);
  // Sorted by name: OUT_y, out/y, out:y all sanitize to out_y (ignoring case).
  EXPECT_TRUE(fs::exists(fs::path(out) / "OUT_y.npy"));
  EXPECT_TRUE(fs::exists(fs::path(out) / "out_y_1.npy"));
  EXPECT_TRUE(fs::exists(fs::path(out) / "out_y_2.npy"));
}

TEST_F(ValidateGoldenDir, Bf16IsWrittenAsF32) {
  GoldenSet set;
  Tensor b = Tensor::empty(DType::bf16, {1});
  b.data<uint16_t>()[0] = f32_to_bf16(1.5f);
  set.put("b", b, &set.outputs);
  ASSERT_TRUE(write_golden_dir(dir_.string(), set).ok());
  auto t = open_golden_dir(dir_.string())->get("b");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->dtype(), DType::f32);
  EXPECT_FLOAT_EQ(t->data<float>()[0], 1.5f);
}

TEST_F(ValidateGoldenDir, FlatManifestMapsNamesToFiles) {
  ASSERT_TRUE(write_npy((dir_ / "a.npy").string(), Tensor::from_vector<float>({7}, {1})).ok());
  write_text("manifest.json", R"({"input:0": "a.npy"})");
  auto set = open_golden_dir(dir_.string());
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_TRUE(set->has("input:0"));
  EXPECT_FLOAT_EQ(set->get("input:0")->data<float>()[0], 7.0f);
  EXPECT_TRUE(set->inputs.empty());
  EXPECT_FALSE(set->get("nope").ok());
  EXPECT_EQ(set->get("nope").status().message(), "the reference has no tensor 'nope'");
}

TEST_F(ValidateGoldenDir, FilesMayNotLeaveTheDirectory) {
  write_text("manifest.json", R"({"x": "../x.npy"})");
  auto a = open_golden_dir(dir_.string());
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("the file '../x.npy' for 'x' lies outside the directory"), std::string::npos)
      << a.status().message();
  write_text("manifest.json", R"({"x": "/etc/passwd"})");
  EXPECT_FALSE(open_golden_dir(dir_.string()).ok());
}

TEST_F(ValidateGoldenDir, ManifestErrorsAreNamed) {
  EXPECT_NE(open_golden_dir(dir_.string()).status().message().find("no manifest.json in the directory"),
            std::string::npos);
  write_text("manifest.json", "{not json");
  EXPECT_NE(open_golden_dir(dir_.string()).status().message().find("not valid JSON"), std::string::npos);
  write_text("manifest.json", R"({"x": "missing.npy"})");
  EXPECT_NE(open_golden_dir(dir_.string()).status().message().find("the file 'missing.npy' for 'x' does not exist"),
            std::string::npos);
  write_text("manifest.json", R"({"x": 3})");
  EXPECT_NE(open_golden_dir(dir_.string()).status().message().find("must be a file name"), std::string::npos);
  write_text("manifest.json", R"({"tensors": {}, "inputs": "x"})");
  EXPECT_NE(open_golden_dir(dir_.string()).status().message().find("'inputs' must be a list"), std::string::npos);
  write_text("manifest.json", R"({"tensors": {}, "version": 99})");
  EXPECT_NE(open_golden_dir(dir_.string()).status().message().find("newer than this ferry reads"), std::string::npos);
  EXPECT_NE(open_golden_dir((dir_ / "none").string()).status().message().find("not a directory"), std::string::npos);
}

TEST_F(ValidateGoldenDir, CorruptTensorFileNamesTheTensor) {
  write_text("x.npy", "garbage");
  write_text("manifest.json", R"({"x": "x.npy"})");
  auto set = open_golden_dir(dir_.string());
  ASSERT_TRUE(set.ok());
  auto t = set->get("x");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("(tensor 'x')"), std::string::npos) << t.status().message();
}

TEST(ValidateGoldenFileStem, Sanitizes) {
  EXPECT_EQ(golden_file_stem("/conv1/Conv_output_0"), "_conv1_Conv_output_0");
  EXPECT_EQ(golden_file_stem(".."), "_");
  EXPECT_EQ(golden_file_stem(""), "_");
  EXPECT_EQ(golden_file_stem(std::string(300, 'a')).size(), 200u);
}

}  // namespace
}  // namespace ferry::validate
