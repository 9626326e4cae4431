#include "validate/npz.h"

#include <gtest/gtest.h>

#include "validate/npy.h"

namespace ferry::validate {
namespace {

void put(std::string& s, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s += char((v >> (8 * i)) & 0xFF);
}

struct Member {
  std::string name, data;
  uint32_t crc_delta = 0;  ///< added to the real CRC, to corrupt it
};

/// A stored zip as np.savez writes it; with zip64, sizes and offsets live in
/// zip64 extra fields and a zip64 end record, as large archives have them.
std::string make_zip(const std::vector<Member>& members, bool zip64 = false) {
  std::string out, central;
  for (const Member& m : members) {
    uint64_t offset = out.size();
    uint32_t crc = crc32(m.data) + m.crc_delta;
    put(out, 0x04034b50, 4);
    put(out, 20, 2);  // version needed
    put(out, 0, 2);   // flags
    put(out, 0, 2);   // stored
    put(out, 0, 4);   // time, date
    put(out, crc, 4);
    put(out, m.data.size(), 4);
    put(out, m.data.size(), 4);
    put(out, m.name.size(), 2);
    put(out, 0, 2);
    out += m.name + m.data;

    put(central, 0x02014b50, 4);
    put(central, 20, 2);
    put(central, 20, 2);
    put(central, 0, 2);
    put(central, 0, 2);
    put(central, 0, 4);
    put(central, crc, 4);
    put(central, zip64 ? 0xFFFFFFFF : m.data.size(), 4);
    put(central, zip64 ? 0xFFFFFFFF : m.data.size(), 4);
    put(central, m.name.size(), 2);
    put(central, zip64 ? 28 : 0, 2);  // extra length
    put(central, 0, 2);               // comment
    put(central, 0, 2);               // disk
    put(central, 0, 2);               // internal attributes
    put(central, 0, 4);               // external attributes
    put(central, zip64 ? 0xFFFFFFFF : offset, 4);
    central += m.name;
    if (zip64) {
      put(central, 0x0001, 2);
      put(central, 24, 2);
      put(central, m.data.size(), 8);  // uncompressed
      put(central, m.data.size(), 8);  // compressed
      put(central, offset, 8);
    }
  }
  uint64_t cd_offset = out.size();
  out += central;
  if (zip64) {
    uint64_t z = out.size();
    put(out, 0x06064b50, 4);
    put(out, 44, 8);
    put(out, 45, 2);
    put(out, 45, 2);
    put(out, 0, 4);
    put(out, 0, 4);
    put(out, members.size(), 8);
    put(out, members.size(), 8);
    put(out, central.size(), 8);
    put(out, cd_offset, 8);
    put(out, 0x07064b50, 4);
    put(out, 0, 4);
    put(out, z, 8);
    put(out, 1, 4);
  }
  put(out, 0x06054b50, 4);
  put(out, 0, 2);
  put(out, 0, 2);
  put(out, zip64 ? 0xFFFF : members.size(), 2);
  put(out, zip64 ? 0xFFFF : members.size(), 2);
  put(out, zip64 ? 0xFFFFFFFF : central.size(), 4);
  put(out, zip64 ? 0xFFFFFFFF : cd_offset, 4);
  put(out, 0, 2);
  return out;
}

std::string npy(const Tensor& t) { return encode_npy(t).value(); }

TEST(ValidateNpz, Crc32KnownValues) {
  EXPECT_EQ(crc32(""), 0u);
  EXPECT_EQ(crc32("123456789"), 0xCBF43926u);  // the standard check value
}

TEST(ValidateNpz, ReadsStoredMembers) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor ids = Tensor::from_vector<int64_t>({7, 8}, {2});
  for (bool zip64 : {false, true}) {
    auto r = decode_npz(make_zip({{"x.npy", npy(x)}, {"ids.npy", npy(ids)}, {"README.txt", "hi"}}, zip64));
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(r->size(), 2u);  // the non-.npy member is ignored
    EXPECT_TRUE(r->at("x").bit_equal(x));
    EXPECT_TRUE(r->at("ids").bit_equal(ids));
  }
}

TEST(ValidateNpz, ReadsDeflatedMembersFromNumpy) {
  if (!npz_deflate_available()) GTEST_SKIP() << "libz.so.1 not found";
  // np.savez_compressed(f, x=np.arange(6, dtype=np.float32).reshape(2, 3), m=np.array([True, False]))
  static const unsigned char kBytes[] =
      "\x50\x4b\x03\x04\x2d\x00\x00\x00\x08\x00\x00\x00\x21\x00\x4f\xe9\x00\x2a\xff\xff\xff\xff\xff\xff\xff\xff"
      "\x05\x00\x14\x00\x78\x2e\x6e\x70\x79\x01\x00\x10\x00\x98\x00\x00\x00\x00\x00\x00\x00\x55\x00\x00\x00\x00"
      "\x00\x00\x00\x9b\xec\x17\xea\x1b\x10\xc9\xc8\x50\xc6\x50\xad\x9e\x92\x5a\x9c\x5c\xa4\x6e\xa5\xa0\x6e\x93"
      "\x66\xa2\xae\xa3\xa0\x9e\x96\x5f\x54\x52\x94\x98\x17\x9f\x5f\x94\x92\x0a\x12\x77\x4b\xcc\x29\x4e\x05\x8a"
      "\x17\x67\x24\x16\xa4\x02\xf9\x1a\x46\x3a\x0a\xc6\x9a\x3a\x0a\xb5\x0a\x64\x03\x2e\x06\x30\x68\xb0\x07\x12"
      "\x0e\x40\x04\xc4\x0d\x40\xbc\xc0\x01\x00\x50\x4b\x03\x04\x2d\x00\x00\x00\x08\x00\x00\x00\x21\x00\xee\x19"
      "\xbb\x5d\xff\xff\xff\xff\xff\xff\xff\xff\x05\x00\x14\x00\x6d\x2e\x6e\x70\x79\x01\x00\x10\x00\x82\x00\x00"
      "\x00\x00\x00\x00\x00\x46\x00\x00\x00\x00\x00\x00\x00\x9b\xec\x17\xea\x1b\x10\xc9\xc8\x50\xc6\x50\xad\x9e"
      "\x92\x5a\x9c\x5c\xa4\x6e\xa5\xa0\x5e\x93\x64\xa8\xae\xa3\xa0\x9e\x96\x5f\x54\x52\x94\x98\x17\x9f\x5f\x94"
      "\x92\x0a\x12\x77\x4b\xcc\x29\x4e\x05\x8a\x17\x67\x24\x16\xa4\x02\xf9\x1a\x46\x3a\x9a\x3a\x0a\xb5\x0a\x14"
      "\x00\x2e\x46\x06\x00\x50\x4b\x01\x02\x2d\x03\x2d\x00\x00\x00\x08\x00\x00\x00\x21\x00\x4f\xe9\x00\x2a\x55"
      "\x00\x00\x00\x98\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x01\x00\x00\x00\x00\x78"
      "\x2e\x6e\x70\x79\x50\x4b\x01\x02\x2d\x03\x2d\x00\x00\x00\x08\x00\x00\x00\x21\x00\xee\x19\xbb\x5d\x46\x00"
      "\x00\x00\x82\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x01\x8c\x00\x00\x00\x6d\x2e"
      "\x6e\x70\x79\x50\x4b\x05\x06\x00\x00\x00\x00\x02\x00\x02\x00\x66\x00\x00\x00\x09\x01\x00\x00\x00\x00";
  std::string_view bytes(reinterpret_cast<const char*>(kBytes), sizeof kBytes - 1);
  ASSERT_EQ(bytes.size(), 389u);
  auto r = decode_npz(bytes);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->at("x").bit_equal(Tensor::from_vector<float>({0, 1, 2, 3, 4, 5}, {2, 3})));
  const Tensor& m = r->at("m");
  ASSERT_EQ(m.dtype(), DType::boolean);
  EXPECT_EQ(m.get_int(0), 1);
  EXPECT_EQ(m.get_int(1), 0);

  // One flipped byte inside the first member's deflate stream is caught.
  std::string bad(bytes);
  bad[70] = char(bad[70] ^ 0x55);
  auto c = decode_npz(bad);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("member 'x.npy'"), std::string::npos) << c.status().message();

  // A central directory claiming 2 GiB from 85 compressed bytes is refused before allocating.
  std::string lie(bytes);
  size_t cd = lie.find("PK\x01\x02");
  ASSERT_NE(cd, std::string::npos);
  for (int i = 0; i < 4; ++i) lie[cd + 24 + size_t(i)] = char(i == 3 ? 0x7F : 0xFF);
  auto l = decode_npz(lie);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("more than deflate can expand"), std::string::npos) << l.status().message();
}

TEST(ValidateNpz, CorruptCrcIsAnError) {
  auto r = decode_npz(make_zip({{"x.npy", npy(Tensor::from_vector<float>({1}, {1})), 1}}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "member 'x.npy': CRC-32 mismatch (the archive is corrupt)");
}

TEST(ValidateNpz, MalformedArchivesAreErrorsNotCrashes) {
  EXPECT_NE(decode_npz("abc").status().message().find("too short"), std::string::npos);
  EXPECT_NE(decode_npz(std::string(100, 'x')).status().message().find("no end-of-central-directory record"),
            std::string::npos);
  std::string good = make_zip({{"x.npy", npy(Tensor::from_vector<float>({1, 2}, {2}))}});
  // Every truncation fails cleanly.
  for (size_t n = 0; n < good.size(); ++n) EXPECT_FALSE(decode_npz(good.substr(0, n)).ok()) << n;
  // A member whose .npy content is not an array.
  auto r = decode_npz(make_zip({{"y.npy", "not an npy file"}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("member 'y.npy'"), std::string::npos) << r.status().message();
}

TEST(ValidateNpz, EveryCorruptedByteIsHandled) {
  // Each byte of a zip64 archive set to 0x00, 0xFF and flipped: a clean
  // result or a clean error, never a crash (the sanitizer build checks that).
  Tensor x = Tensor::from_vector<float>({1, 2, 3}, {3});
  std::string good = make_zip({{"x.npy", npy(x)}}, /*zip64=*/true);
  int64_t errors = 0;
  for (size_t i = 0; i < good.size(); ++i)
    for (int v : {0x00, 0xFF, uint8_t(good[i]) ^ 0x80}) {
      std::string bad = good;
      bad[i] = char(v);
      auto r = decode_npz(bad);
      if (!r.ok()) {
        ++errors;
        EXPECT_FALSE(r.status().message().empty());
      } else if (r->count("x")) {
        EXPECT_EQ(r->at("x").numel(), 3) << "byte " << i;  // a change the CRC cannot see, e.g. a timestamp
      }
    }
  EXPECT_GT(errors, int64_t(good.size()));  // most corruptions are detected
}

TEST(ValidateNpz, DuplicateNamesAreAnError) {
  std::string d = npy(Tensor::from_vector<float>({1}, {1}));
  auto r = decode_npz(make_zip({{"x.npy", d}, {"x.npy", d}}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "array 'x' appears twice in the archive");
}

TEST(ValidateNpz, MissingFileNamesTheProblem) {
  auto r = read_npz("/nonexistent/in.npz");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cannot open"), std::string::npos);
}

}  // namespace
}  // namespace ferry::validate
