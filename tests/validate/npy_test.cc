#include "validate/npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace ferry {
namespace {

using namespace std::string_literals;

std::string v1_file(const std::string& dict, const std::string& data = "") {
  std::string s("\x93NUMPY\x01\x00", 8);
  s += char(dict.size() & 0xff);
  s += char(dict.size() >> 8);
  return s + dict + data;
}

std::string message_of(const Result<Tensor>& r) { return r.ok() ? "(ok)" : r.status().message(); }

TEST(Npy, RoundTripsEveryDtype) {
  const DType dtypes[] = {DType::f32, DType::f16, DType::f64, DType::i8,  DType::u8,  DType::i16,
                          DType::u16, DType::i32, DType::u32, DType::i64, DType::u64, DType::boolean};
  for (DType dt : dtypes) {
    Tensor t = Tensor::empty(dt, {2, 3});
    for (int64_t i = 0; i < t.numel(); ++i) t.set_double(i, dt == DType::boolean ? i % 2 : double(i * 3 + 1));
    auto bytes = encode_npy(t);
    ASSERT_TRUE(bytes.ok()) << dtype_name(dt) << ": " << bytes.status().to_string();
    EXPECT_EQ((bytes->size() - t.nbytes()) % 64, 0u) << "header not 64-byte aligned for " << dtype_name(dt);
    auto back = decode_npy(*bytes);
    ASSERT_TRUE(back.ok()) << dtype_name(dt) << ": " << back.status().to_string();
    EXPECT_TRUE(back->bit_equal(t)) << dtype_name(dt);
  }
}

TEST(Npy, HeaderMatchesNumpy) {
  // Bytes numpy 2.x writes for np.save(f, np.zeros((2, 3), np.float32)).
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  dict.append(117 - dict.size(), ' ');
  dict += '\n';
  Tensor t = Tensor::empty(DType::f32, {2, 3});
  auto bytes = encode_npy(t);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->substr(0, 128), v1_file(dict));
  EXPECT_EQ(npy_descr(DType::boolean), "|b1");
  EXPECT_EQ(npy_descr(DType::i64), "<i8");
  EXPECT_EQ(npy_descr(DType::bf16), "");
}

TEST(Npy, ScalarAndEmptyShapes) {
  for (std::vector<int64_t> dims : {std::vector<int64_t>{}, {0}, {3, 0, 2}, {5}}) {
    Tensor t = Tensor::empty(DType::i32, dims);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<int32_t>()[i] = int32_t(-7 * i);
    auto back = decode_npy(*encode_npy(t));
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_EQ(back->dims(), dims);
    EXPECT_TRUE(back->bit_equal(t));
  }
}

TEST(Npy, ReadsNumpyVariants) {
  // Version 2.0 header, double quotes, no trailing comma, '|u1' and '<u1'.
  std::string dict = "{\"descr\": \"<u1\", \"shape\": (2,), \"fortran_order\": False}\n";
  std::string v2("\x93NUMPY\x02\x00", 8);
  for (int i = 0; i < 4; ++i) v2 += char((dict.size() >> (8 * i)) & 0xff);
  v2 += dict + std::string("\x05\x07", 2);
  auto t = decode_npy(v2);
  ASSERT_TRUE(t.ok()) << message_of(t);
  EXPECT_EQ(t->dtype(), DType::u8);
  EXPECT_EQ(t->get_int(1), 7);

  // Bool bytes other than 0/1 are normalized (a raw 2 in a C++ bool is UB).
  auto b = decode_npy(v1_file("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }\n", std::string("\x00\x02", 2)));
  ASSERT_TRUE(b.ok()) << message_of(b);
  EXPECT_EQ(b->raw()[0], 0);
  EXPECT_EQ(b->raw()[1], 1);
}

TEST(Npy, RejectsWhatItCannotRepresent) {
  auto data4 = std::string(4, '\0');
  EXPECT_NE(message_of(decode_npy(v1_file("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }\n", data4)))
                .find("Fortran order"),
            std::string::npos);
  EXPECT_NE(message_of(decode_npy(v1_file("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }\n", data4)))
                .find("big-endian"),
            std::string::npos);
  EXPECT_NE(message_of(decode_npy(v1_file("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }\n", data4)))
                .find("unsupported .npy dtype '|O'"),
            std::string::npos);
  EXPECT_NE(message_of(decode_npy(v1_file("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }\n", data4)))
                .find("unsupported .npy dtype '<c8'"),
            std::string::npos);
  EXPECT_NE(message_of(decode_npy(v1_file("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }\n",
                                          data4)))
                .find("structured"),
            std::string::npos);
  auto bf = encode_npy(Tensor::empty(DType::bf16, {1}));
  ASSERT_FALSE(bf.ok());
  EXPECT_NE(bf.status().message().find("bfloat16"), std::string::npos);
}

TEST(Npy, RejectsMalformedHeaders) {
  const std::string ok_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n";
  struct Case {
    std::string bytes;
    std::string expect;
  };
  const std::string d4(4, '\0');
  const std::vector<Case> cases = {
      {"", "missing the \\x93NUMPY magic"},
      {"\x93NUMP", "missing the \\x93NUMPY magic"},
      {"PK\x03\x04 this is a zip", "missing the \\x93NUMPY magic"},
      {std::string("\x93NUMPY\x01\x00", 8), "header length"},
      {std::string("\x93NUMPY\x09\x00\x10\x00", 10), "unsupported .npy version 9.0"},
      {std::string("\x93NUMPY\x01\x00\xff\x00{'descr'", 18), "file ends inside the header"},
      {std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12), "exceeds the limit"},
      {v1_file("{'descr': '<f4', 'fortran_order': False}\n", d4), "missing key 'shape'"},
      {v1_file("{'descr': '<f4', 'shape': (1,)}\n", d4), "missing key 'fortran_order'"},
      {v1_file("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}\n", d4), "duplicate key"},
      {v1_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}\n", d4), "unexpected key 'extra'"},
      {v1_file("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,)}\n", d4), "expected True or False"},
      {v1_file("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}\n", d4), "non-negative integer"},
      {v1_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1 2)}\n", d4), "expected ',' or ')'"},
      {v1_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1,\n", d4), "expected a non-negative integer"},
      {v1_file("{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}\n", d4), "expected ',' or '}'"},
      {v1_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} junk\n", d4), "unexpected text"},
      {v1_file("{'descr': '<f4'\x00, 'fortran_order': False, 'shape': (1,)}\n"s, d4), "control byte"},
      {v1_file("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}\n", d4),
       "larger than"},
      {v1_file("{'descr': '<f8', 'fortran_order': False, 'shape': (1048576, 1048576, 1048576)}\n", d4), "too large"},
      {v1_file(ok_dict, std::string(3, '\0')), "data is 3 bytes, but its header (<f4, shape (1)) needs 4"},
      {v1_file(ok_dict, std::string(8, '\0')), "data is 8 bytes"},
  };
  for (const Case& c : cases) {
    auto r = decode_npy(c.bytes);
    ASSERT_FALSE(r.ok()) << "accepted: " << c.expect;
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos)
        << "expected '" << c.expect << "' in: " << r.status().message();
  }
  // Every truncation of a valid file fails cleanly.
  std::string good = *encode_npy(Tensor::empty(DType::f32, {2, 2}));
  for (size_t n = 0; n < good.size(); ++n) EXPECT_FALSE(decode_npy(good.substr(0, n)).ok()) << n;
  // Flipping any header byte never crashes (it may still parse, e.g. a space into a tab).
  for (size_t i = 0; i < 128; ++i) {
    std::string bad = good;
    bad[i] = char(bad[i] ^ 0x5a);
    (void)decode_npy(bad);
  }
}

TEST(Npy, FileRoundTripAndErrors) {
  auto dir = std::filesystem::temp_directory_path() / ("ferry_npy_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "x.npy").string();
  Tensor t = Tensor::from_vector<float>({1.5f, -2.f, 3.25f}, {3, 1});
  ASSERT_TRUE(write_npy(path, t).ok());
  auto back = read_npy(path);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_TRUE(back->bit_equal(t));

  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << "\x93NUMPY\x01";  // truncated preamble
  }
  auto trunc = read_npy(path);
  ASSERT_FALSE(trunc.ok());
  EXPECT_NE(trunc.status().message().find("magic"), std::string::npos) << trunc.status().message();

  auto missing = read_npy((dir / "missing.npy").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
  EXPECT_NE(missing.status().message().find("cannot open"), std::string::npos);

  auto is_dir = read_npy(dir.string());
  ASSERT_FALSE(is_dir.ok());
  EXPECT_NE(is_dir.status().message().find("not a regular file"), std::string::npos);

  Status unwritable = write_npy((dir / "no_such_dir" / "y.npy").string(), t);
  ASSERT_FALSE(unwritable.ok());
  EXPECT_NE(unwritable.message().find("cannot open for writing"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ferry
