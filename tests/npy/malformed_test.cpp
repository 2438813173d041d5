// Malformed headers, dtypes we cannot hold and truncated files are errors
// with the right code and a message naming the file -- never a misread.
#include "npy_helpers.hpp"

#include <cstring>
#include <random>

using npytest::open_error;

namespace {

// A version-1.0 .npy file: preamble, `dict` padded to 64 bytes, then `data`.
std::string npy_file(const std::string& dict, const std::string& data = std::string(),
                     int major = 1, bool pad = true) {
  std::string header = dict;
  size_t preamble = major == 1 ? 10 : 12;
  if (pad) {
    while ((preamble + header.size() + 1) % 64) header += ' ';
    header += '\n';
  }
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  uint32_t len = static_cast<uint32_t>(header.size());
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>((len >> 8) & 0xff);
  if (major != 1) {
    out += static_cast<char>((len >> 16) & 0xff);
    out += static_cast<char>(len >> 24);
  }
  return out + header + data;
}

void expect_error(const test::fs::path& path, stowage::ErrorCode code, const std::string& words) {
  stowage::Error e = open_error(path.string());
  INFO(e.what());
  CHECK(e.code() == code);
  CHECK(std::string(e.what()).find(path.string()) != std::string::npos);
  CHECK(std::string(e.what()).find(words) != std::string::npos);
}

}  // namespace

TEST_CASE("malformed headers are CORRUPT, unknown versions, keys and dtypes UNSUPPORTED") {
  test::TempDir dir;
  const std::string ok_dict = "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }";
  const std::string six_values(12, '\x01');
  struct Case {
    const char* name;
    std::string bytes;
    stowage::ErrorCode code;
    const char* words;
  };
  using stowage::ErrorCode;
  std::string bad_version = npy_file(ok_dict, six_values);
  bad_version[6] = 4;
  std::string bad_minor = npy_file(ok_dict, six_values);
  bad_minor[7] = 1;
  const Case cases[] = {
      {"empty", "", ErrorCode::corrupt, "not a NumPy .npy file"},
      {"magic", "\x93NUMPX\x01\x00\x10\x00{}", ErrorCode::corrupt, "not a NumPy .npy file"},
      {"version4", bad_version, ErrorCode::unsupported, "version 4.0"},
      {"minor", bad_minor, ErrorCode::unsupported, "version 1.1"},
      {"header_past_end", npy_file(ok_dict).substr(0, 40), ErrorCode::corrupt, "truncated"},
      {"v2_short_preamble", std::string("\x93NUMPY\x02\x00\x10", 9), ErrorCode::corrupt,
       "not a NumPy"},
      {"truncated_data", npy_file(ok_dict, six_values.substr(0, 11)), ErrorCode::corrupt,
       "truncated"},
      {"no_brace", npy_file("'descr': '<i2', 'fortran_order': False, 'shape': (2, 3)", six_values),
       ErrorCode::corrupt, "expected '{'"},
      {"unclosed",
       npy_file("{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), ", six_values),
       ErrorCode::corrupt, "malformed"},
      {"trailing_text", npy_file(ok_dict + " x", six_values), ErrorCode::corrupt, "after the dict"},
      {"missing_shape", npy_file("{'descr': '<i2', 'fortran_order': False}"), ErrorCode::corrupt,
       "'shape'"},
      {"duplicate_key",
       npy_file("{'descr': '<i2', 'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }",
                six_values),
       ErrorCode::corrupt, "twice"},
      {"negative_dim", npy_file("{'descr': '<i2', 'fortran_order': False, 'shape': (-2, 3), }"),
       ErrorCode::corrupt, "non-negative integer"},
      {"one_tuple_no_comma",
       npy_file("{'descr': '<i2', 'fortran_order': False, 'shape': (6), }", six_values),
       ErrorCode::corrupt, "trailing comma"},
      {"fortran_not_bool",
       npy_file("{'descr': '<i2', 'fortran_order': 0, 'shape': (2, 3), }", six_values),
       ErrorCode::corrupt, "True or False"},
      {"overflow",
       npy_file("{'descr': '<i8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }"),
       ErrorCode::corrupt, "overflows"},
      {"huge_claim",
       npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (100000000000,), }"),
       ErrorCode::corrupt, "truncated"},
      {"extra_key",
       npy_file("{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), 'extra': 1, }",
                six_values),
       ErrorCode::unsupported, "'extra'"},
      {"list_descr", npy_file("{'descr': [('x', '<i4')], 'fortran_order': False, 'shape': (1,), }"),
       ErrorCode::unsupported, "structured"},
      {"complex_width",
       npy_file("{'descr': '<c4', 'fortran_order': False, 'shape': (1,), }", "1234"),
       ErrorCode::unsupported, "'<c4'"},
      {"odd_width", npy_file("{'descr': '<i3', 'fortran_order': False, 'shape': (1,), }", "123"),
       ErrorCode::unsupported, "'<i3'"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    test::fs::path p = dir / (std::string(c.name) + ".npy");
    test::write_file(p, c.bytes);
    expect_error(p, c.code, c.words);
  }
}

TEST_CASE(
    "lenient where numpy is: 16-byte alignment, no padding, double quotes, Python 2 longs, extra bytes") {
  test::TempDir dir;
  const std::string data("\x01\x00\x02\x00\x03\x00", 6);
  const std::string dicts[] = {
      "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }\n",
      "{\"descr\": \"<i2\", \"fortran_order\": False, \"shape\": (3L,)}   \n",
      "{'shape': (3,),'fortran_order':False,'descr':'<i2'}",
  };
  int n = 0;
  for (const std::string& dict : dicts) {
    test::fs::path p = dir / ("ok" + std::to_string(n++) + ".npy");
    test::write_file(p, npy_file(dict, data + "trailing", 1, false));
    stowage::Store s = stowage::Store::open(p.string());
    std::vector<int16_t> v = s.array("").read_all<int16_t>();
    CHECK(v == std::vector<int16_t>{1, 2, 3});
  }
}

TEST_CASE("valid numpy files of types stowage cannot hold are UNSUPPORTED, naming file and dtype") {
  test::TempDir dir;
  std::string out = npytest::run_peer("unsupported", dir.path());
  CHECK(out.find("wrote 7") != std::string::npos);
  for (const char* name :
       {"float128", "complex256", "unicode", "bytes", "structured", "datetime", "object"}) {
    CAPTURE(name);
    expect_error(dir / (std::string(name) + ".npy"), stowage::ErrorCode::unsupported,
                 "not supported");
  }
}

TEST_CASE("every truncation of a numpy file is an error naming the file, never a crash") {
  test::TempDir dir;
  test::RunResult r = test::run_python(
      "import numpy as np, sys\nnp.save(sys.argv[1], np.arange(24, dtype='>u4').reshape(2, 3, 4))\n",
      test::quote((dir / "whole.npy").string()));
  REQUIRE(r.status == 0);
  const std::string whole = test::read_file(dir / "whole.npy");
  for (size_t n = 0; n < whole.size(); ++n) {
    test::fs::path p = dir / "cut.npy";
    test::write_file(p, whole.substr(0, n));
    stowage::Error e = open_error(p.string());
    CHECK(e.code() == stowage::ErrorCode::corrupt);
    CHECK(std::string(e.what()).find(p.string()) != std::string::npos);
  }
}

TEST_CASE("random damage to a header gives a value or an error naming the file, never a crash") {
  test::TempDir dir;
  test::RunResult r = test::run_python(
      "import numpy as np, sys\nnp.save(sys.argv[1], np.asfortranarray(np.arange(60, dtype='<i8').reshape(3, 4, 5)))\n",
      test::quote((dir / "whole.npy").string()));
  REQUIRE(r.status == 0);
  const std::string whole = test::read_file(dir / "whole.npy");
  std::mt19937 rng(5);
  int errors = 0;
  for (int round = 0; round < 400; ++round) {
    std::string damaged = whole;
    for (int k = 0; k < 1 + round % 3; ++k)
      damaged[rng() % 128] = static_cast<char>(rng() & 0xff);  // the header is the first 128 bytes
    test::fs::path p = dir / "damaged.npy";
    test::write_file(p, damaged);
    try {
      stowage::Store s = stowage::Store::open(p.string(), stowage::Mode::read, "npy");
      npytest::read_bytes(s.array(""));
    } catch (const stowage::Error& e) {
      ++errors;
      CHECK(std::string(e.what()).find(p.string()) != std::string::npos);
    }
  }
  CHECK(errors > 100);
}
