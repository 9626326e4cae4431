#include "validate/python_bridge.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "validate/reference_provider.h"

namespace ferry::validate {
namespace {

namespace fs = std::filesystem;

/// A stand-in interpreter: a shell script, so these tests need no Python.
class ValidatePythonBridge : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ferry_bridge_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  PythonBridge fake(const std::string& body) {
    fs::path p = dir_ / "python";
    std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
    ::chmod(p.c_str(), 0755);
    return {p.string(), "/some/python/dir", "a test"};
  }
  std::string log() { return (dir_ / "bridge.log").string(); }
  fs::path dir_;
};

TEST_F(ValidatePythonBridge, PassesArgumentsAndPythonPath) {
  PythonBridge b = fake("echo \"args: $*\"; echo \"path: $PYTHONPATH\"; echo \"nopyc: $PYTHONDONTWRITEBYTECODE\"");
  ASSERT_TRUE(run_python_bridge(b, {"onnxruntime", "m.onnx", "--out", "o d"}, log()).ok());
  std::ifstream in(log());
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("args: -m ferry.reference onnxruntime m.onnx --out o d"), std::string::npos) << text;
  EXPECT_NE(text.find("path: /some/python/dir"), std::string::npos) << text;
  EXPECT_NE(text.find("nopyc: 1"), std::string::npos) << text;
}

TEST_F(ValidatePythonBridge, FailureCarriesStatusAndLogTail) {
  PythonBridge b = fake("echo 'ferry.reference: error: the Python package onnxruntime is not importable' >&2; exit 3");
  Status st = run_python_bridge(b, {"onnxruntime"}, log());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_NE(st.message().find("failed (exit status 3)"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("onnxruntime is not importable"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("interpreter from a test"), std::string::npos) << st.message();
}

TEST_F(ValidatePythonBridge, MissingFerryPackageSaysWhereToPointIt) {
  PythonBridge b = fake("echo \"No module named ferry.reference\" >&2; exit 1");
  Status st = run_python_bridge(b, {}, log());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cannot import the ferry package; set FERRY_PYTHON_DIR"), std::string::npos)
      << st.message();
}

TEST_F(ValidatePythonBridge, MissingInterpreter) {
  PythonBridge b{(dir_ / "no-such-python").string(), "", "FERRY_PYTHON"};
  Status st = run_python_bridge(b, {}, log());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cannot start the Python interpreter"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("set FERRY_PYTHON"), std::string::npos) << st.message();
}

TEST_F(ValidatePythonBridge, FerryPythonMustBeExecutable) {
  const char* old = std::getenv("FERRY_PYTHON");
  std::string saved = old ? old : "";
  ::setenv("FERRY_PYTHON", (dir_ / "nothing-here").c_str(), 1);
  auto r = find_python_bridge();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("is not an executable Python interpreter"), std::string::npos);
  PythonBridge b = fake("exit 0");
  ::setenv("FERRY_PYTHON", b.python.c_str(), 1);
  auto ok = find_python_bridge();
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->python, b.python);
  EXPECT_EQ(ok->found_via, "FERRY_PYTHON");
  if (old)
    ::setenv("FERRY_PYTHON", saved.c_str(), 1);
  else
    ::unsetenv("FERRY_PYTHON");
}

TEST(ValidateRepoPythonDir, FoundAboveABuildDirectory) {
  std::string repo = FERRY_SOURCE_DIR;
  EXPECT_EQ(fs::path(find_repo_python_dir(repo + "/build/x")), fs::path(repo) / "python");
  EXPECT_EQ(find_repo_python_dir("/"), "");
  EXPECT_EQ(find_repo_python_dir(""), "");
}

TEST(ValidateReferenceSpec, ParsesAndRejects) {
  EXPECT_EQ((*make_reference_provider("reference"))->spec(), "reference");
  auto bad = make_reference_provider("pytorch");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "unknown reference 'pytorch' (onnxruntime, tensorflow, torch, golden:DIR, reference)");
  EXPECT_FALSE(make_reference_provider("golden:").ok());
  EXPECT_NE(make_reference_provider("golden:/nonexistent").status().message().find("not a directory"),
            std::string::npos);
  EXPECT_EQ(default_reference_for("a/model.ONNX"), "onnxruntime");
  EXPECT_EQ(default_reference_for("model.ferry"), "reference");
  EXPECT_EQ(default_reference_for("frozen.pb"), "tensorflow");
  EXPECT_EQ(default_reference_for(FERRY_SOURCE_DIR), "tensorflow");  // a directory: a SavedModel
  EXPECT_EQ(default_reference_for("model.pt2"), "torch");
}

}  // namespace
}  // namespace ferry::validate
