#include "frontends/tensorflow/sstable.h"

#include <gtest/gtest.h>

#include "tf_test_util.h"

namespace ferry {
namespace {

using namespace tf_test;
using tf_import::parse_sstable;

TEST(TfSSTable, Crc32cKnownValue) {
  EXPECT_EQ(tf_import::crc32c("123456789"), 0xE3069283u);  // the CRC-32C check value
  EXPECT_EQ(tf_import::crc32c(""), 0u);
}

TEST(TfSSTable, ReadsPrefixCompressedEntriesAcrossBlocks) {
  std::map<std::string, std::string> kv = {
      {"", "header"}, {"layer/bias", "b"}, {"layer/kernel", "kk"}, {"layer/kernel2", ""}, {"zz", std::string(300, 'z')}};
  auto t = parse_sstable(make_table(kv, 2));
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(*t, kv);
}

TEST(TfSSTable, EmptyTable) {
  auto t = parse_sstable(make_table({}));
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_TRUE(t->empty());
}

TEST(TfSSTable, TruncationAndCorruptionAreErrors) {
  std::string file = make_table({{"", "h"}, {"a", "1"}, {"b", "2"}});
  auto short_file = parse_sstable(file.substr(0, 20));
  ASSERT_FALSE(short_file.ok());
  EXPECT_NE(short_file.status().message().find("shorter than a table footer"), std::string::npos);

  auto cut = parse_sstable(file.substr(10));  // footer intact, handles point past the start
  ASSERT_FALSE(cut.ok());

  std::string bad_magic = file;
  bad_magic[bad_magic.size() - 1] ^= 1;
  auto m = parse_sstable(bad_magic);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("magic"), std::string::npos);

  std::string flipped = file;
  flipped[2] ^= 0x40;  // inside the first data block
  auto c = parse_sstable(flipped);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("checksum mismatch"), std::string::npos);
}

TEST(TfSSTable, MalformedBlocksAreErrors) {
  auto table_with_block = [](const std::string& block) {
    std::string file;
    std::string data_handle = append_block(file, block);
    std::string meta = append_block(file, make_block({}));
    std::string index = append_block(file, make_block({{"zzz", data_handle}}, 1));
    std::string footer = meta + index;
    footer.resize(40, '\0');
    put_fixed32(footer, 0x8b80fb57u);
    put_fixed32(footer, 0xdb477524u);
    return file + footer;
  };
  // An entry sharing more bytes than the previous key has.
  std::string b;
  put_varint(b, 5);
  put_varint(b, 1);
  put_varint(b, 0);
  b += "k";
  put_fixed32(b, 0);
  put_fixed32(b, 1);
  auto r = parse_sstable(table_with_block(b));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("shares 5 bytes"), std::string::npos) << r.status().to_string();

  // A value length past the block.
  std::string v;
  put_varint(v, 0);
  put_varint(v, 1);
  put_varint(v, 1000);
  v += "k";
  put_fixed32(v, 0);
  put_fixed32(v, 1);
  r = parse_sstable(table_with_block(v));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("runs past the block"), std::string::npos) << r.status().to_string();

  // A restart count larger than the block.
  std::string rc;
  put_fixed32(rc, 1000);
  r = parse_sstable(table_with_block(rc));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("restart count"), std::string::npos) << r.status().to_string();

  // Keys out of order.
  r = parse_sstable(table_with_block(make_block({{"b", "1"}, {"a", "2"}}, 1)));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not sorted"), std::string::npos) << r.status().to_string();
}

}  // namespace
}  // namespace ferry
