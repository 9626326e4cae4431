#include "frontends/tensorflow/tensor_bundle.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include "tf_test_util.h"

namespace ferry {
namespace {

namespace fs = std::filesystem;
using namespace tf_test;
using tf_import::TensorBundle;

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("ferry_tf_bundle_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(TfTensorBundle, ReadsTensors) {
  fs::path d = fresh_dir("read");
  write_bundle(d, {{"dense/kernel", {{2, 3}, {1, 2, 3, 4, 5, 6}}}, {"dense/bias", {{3}, {0.5f, -1, 2}}}});
  auto b = TensorBundle::open(d.string(), (d / "variables" / "variables").string());
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(b->keys(), (std::vector<std::string>{"dense/bias", "dense/kernel"}));
  auto k = b->read("dense/kernel");
  ASSERT_TRUE(k.ok()) << k.status().to_string();
  EXPECT_EQ(k->type_string(), "f32[2,3]");
  EXPECT_FLOAT_EQ(k->data<float>()[5], 6.0f);
  auto missing = b->read("nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no tensor 'nope'"), std::string::npos);
  fs::remove_all(d);
}

TEST(TfTensorBundle, TruncatedOrCorruptDataIsAnError) {
  fs::path d = fresh_dir("trunc");
  write_bundle(d, {{"w", {{4}, {1, 2, 3, 4}}}});
  fs::path shard = d / "variables" / "variables.data-00000-of-00001";
  fs::resize_file(shard, 8);
  auto b = TensorBundle::open(d.string(), (d / "variables" / "variables").string());
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  auto t = b->read("w");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("the checkpoint is truncated"), std::string::npos) << t.status().to_string();

  write_bundle(d, {{"w", {{4}, {1, 2, 3, 4}}}});
  {
    std::fstream f(shard, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(5);
    f.put('\x7f');
  }
  t = b->read("w");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("checksum mismatch"), std::string::npos) << t.status().to_string();
  fs::remove_all(d);
}

TEST(TfTensorBundle, ShardOutsideTheModelDirectoryIsRefused) {
  fs::path d = fresh_dir("outside");
  fs::path elsewhere = fresh_dir("elsewhere");
  write_bundle(d, {{"w", {{1}, {1}}}});
  fs::path shard = d / "variables" / "variables.data-00000-of-00001";
  fs::rename(shard, elsewhere / "data");
  fs::create_symlink(elsewhere / "data", shard);
  auto b = TensorBundle::open(d.string(), (d / "variables" / "variables").string());
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  auto t = b->read("w");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("outside the model directory"), std::string::npos) << t.status().to_string();
  fs::remove_all(d);
  fs::remove_all(elsewhere);
}

TEST(TfTensorBundle, MissingIndexAndBadHeader) {
  fs::path d = fresh_dir("header");
  auto none = TensorBundle::open(d.string(), (d / "variables" / "variables").string());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("does not exist"), std::string::npos) << none.status().to_string();

  fs::create_directories(d / "variables");
  BundleHeaderProto h;
  h.set_num_shards(0);
  std::ofstream(d / "variables" / "variables.index", std::ios::binary) << make_table({{"", h.SerializeAsString()}});
  auto bad = TensorBundle::open(d.string(), (d / "variables" / "variables").string());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("num_shards = 0"), std::string::npos) << bad.status().to_string();

  // An entry naming a shard the header does not have.
  h.set_num_shards(1);
  BundleEntryProto e;
  e.set_dtype(DT_FLOAT);
  e.set_shard_id(3);
  std::ofstream(d / "variables" / "variables.index", std::ios::binary)
      << make_table({{"", h.SerializeAsString()}, {"w", e.SerializeAsString()}});
  bad = TensorBundle::open(d.string(), (d / "variables" / "variables").string());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("shard 3 of 1"), std::string::npos) << bad.status().to_string();
  fs::remove_all(d);
}

}  // namespace
}  // namespace ferry
