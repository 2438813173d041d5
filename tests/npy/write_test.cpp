// numpy.load reads every .npy stowage writes to the values written, bit for
// bit (NaN payloads included); partial and in-place writes; killed writers
// leave no destination.
#include "npy_helpers.hpp"

#include <random>

using npytest::run_peer;

namespace {

// Random bytes as values of `dtype` (bool: 0 or 1); floats get random bit
// patterns, so NaN payloads, infinities and subnormals all occur.
std::string random_values(stowage::DType dtype, uint64_t count, std::mt19937_64& rng) {
  std::string bytes(count * stowage::dtype_size(dtype), '\0');
  for (char& b : bytes) b = static_cast<char>(rng() & 0xff);
  if (dtype == stowage::DType::boolean)
    for (char& b : bytes) b = static_cast<char>(b & 1);
  return bytes;
}

// The little-endian form of host-order values (what npy_peer.py compares);
// `esize` is that of one number (a complex part).
std::string little_endian(std::string bytes, size_t esize) {
  if (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
    for (size_t i = 0; i < bytes.size(); i += esize)
      std::reverse(bytes.begin() + i, bytes.begin() + i + esize);
  return bytes;
}

stowage::json array_description(stowage::DType dtype, const std::vector<uint64_t>& shape) {
  return {{"kind", "array"}, {"dtype", stowage::dtype_name(dtype)}, {"shape", shape}};
}

const stowage::DType kAllTypes[] = {
    stowage::DType::boolean,   stowage::DType::int8,      stowage::DType::int16,
    stowage::DType::int32,     stowage::DType::int64,     stowage::DType::uint8,
    stowage::DType::uint16,    stowage::DType::uint32,    stowage::DType::uint64,
    stowage::DType::float32,   stowage::DType::float64,   stowage::DType::float16,
    stowage::DType::complex64, stowage::DType::complex128};

}  // namespace

TEST_CASE("numpy.load reads every array stowage writes, bit for bit") {
  test::TempDir dir;
  std::mt19937_64 rng(9);
  const std::vector<std::vector<uint64_t>> shapes = {{3, 4, 5}, {},        {0, 3},
                                                     {7},       {2, 0, 4}, {129, 33, 5}};
  stowage::json manifest = stowage::json::array();
  for (stowage::DType dtype : kAllTypes) {
    for (size_t si = 0; si < shapes.size(); ++si) {
      const std::vector<uint64_t>& shape = shapes[si];
      std::string name = std::string(stowage::dtype_name(dtype)) + "_" + std::to_string(si);
      CAPTURE(name);
      uint64_t count = 1;
      for (uint64_t e : shape) count *= e;
      std::string values = random_values(dtype, count, rng);
      // Small slabs for the big shape, so that the host writes many in parallel.
      stowage::Store store = stowage::Store::open(
          (dir / (name + ".npy")).string(), stowage::Mode::truncate, "", {{"chunk_bytes", 1000}});
      CHECK(store.format() == "npy");
      store.create("", array_description(dtype, shape));
      stowage::Array a = store.array("");
      CHECK(a.shape() == shape);
      CHECK_FALSE(a.info().big_endian);
      CHECK_FALSE(a.info().fortran_order);
      a.write(std::vector<uint64_t>(shape.size(), 0), shape, values.data());
      CHECK(npytest::read_bytes(a) == values);  // reads back before close, from the temporary file
      CHECK_FALSE(test::fs::exists(dir / (name + ".npy")));
      store.close();
      const size_t parts = stowage::dtype_is_complex(dtype) ? 2 : 1;
      test::write_file(dir / (name + ".raw"),
                       little_endian(values, stowage::dtype_size(dtype) / parts));
      manifest.push_back({{"name", name}, {"dtype", stowage::dtype_name(dtype)}, {"shape", shape}});
    }
  }
  test::write_file(dir / "manifest.json", manifest.dump());
  std::string out = run_peer("check", dir.path());
  CHECK(out.find("checked " + std::to_string(manifest.size())) != std::string::npos);
  // Only the destinations remain: no temporary files.
  for (const auto& entry : test::fs::directory_iterator(dir.path()))
    CHECK(entry.path().filename().string().find("stowage-tmp") == std::string::npos);
}

TEST_CASE("region writes in any order, merged inside slabs, give numpy the whole array") {
  test::TempDir dir;
  std::mt19937_64 rng(11);
  const std::vector<uint64_t> shape{17, 9, 6};
  const std::string values = random_values(stowage::DType::float64, 17 * 9 * 6, rng);
  stowage::Store store = stowage::Store::open((dir / "parts.npy").string(), stowage::Mode::create,
                                              "", {{"chunk_bytes", 500}});
  store.create("", array_description(stowage::DType::float64, shape));
  stowage::Array a = store.array("");
  // Blocks of 4x4x6 that straddle the slabs, written last-first.
  for (uint64_t i0 = 16;; i0 -= 4) {
    for (uint64_t j0 = 0; j0 < 9; j0 += 4) {
      std::vector<uint64_t> off{i0, j0, 0},
          shp{std::min<uint64_t>(4, 17 - i0), std::min<uint64_t>(4, 9 - j0), 6};
      std::vector<double> block;
      for (uint64_t i = 0; i < shp[0]; ++i)
        for (uint64_t j = 0; j < shp[1]; ++j)
          for (uint64_t k = 0; k < 6; ++k) {
            double v;
            std::memcpy(&v, values.data() + (((off[0] + i) * 9 + off[1] + j) * 6 + k) * 8, 8);
            block.push_back(v);
          }
      a.write(off, shp, block.data());
    }
    if (i0 < 4) break;
  }
  store.close();
  test::write_file(dir / "parts.raw", little_endian(values, 8));
  test::write_file(
      dir / "manifest.json",
      stowage::json::array({{{"name", "parts"}, {"dtype", "float64"}, {"shape", shape}}}).dump());
  CHECK(run_peer("check", dir.path()).find("checked 1") != std::string::npos);
}

TEST_CASE("update mode rewrites part of a numpy file; the original is untouched until close") {
  test::TempDir dir;
  test::fs::path p = dir / "u.npy";
  test::RunResult r = test::run_python(
      "import numpy as np, sys\nnp.save(sys.argv[1], np.asfortranarray(np.arange(60, dtype='>i4').reshape(5, 12)))\n",
      test::quote(p.string()));
  REQUIRE(r.status == 0);
  const std::string before = test::read_file(p);
  stowage::Store store = stowage::Store::open(p.string(), stowage::Mode::update);
  stowage::Array a = store.array("");
  std::vector<int32_t> patch(2 * 3, -7);
  a.write({1, 4}, {2, 3}, patch.data());
  CHECK(test::read_file(p) == before);
  store.close();
  std::vector<int32_t> expected(60);
  for (int i = 0; i < 60; ++i)
    expected[i] = (i / 12 >= 1 && i / 12 < 3 && i % 12 >= 4 && i % 12 < 7) ? -7 : i;
  CHECK(stowage::Store::open(p.string()).array("").read_all<int32_t>() == expected);
  r = test::run_python(
      "import numpy as np, sys\na = np.load(sys.argv[1])\nb = np.arange(60).reshape(5, 12)\nb[1:3, 4:7] = -7\n"
      "assert a.dtype == np.dtype('>i4') and np.isfortran(a) and (a == b).all(), a\nprint('same')\n",
      test::quote(p.string()));
  INFO(r.output);
  CHECK(r.status == 0);
}

TEST_CASE("a read-only store refuses writes; nodes other than the root do not exist") {
  test::TempDir dir;
  test::fs::path p = dir / "r.npy";
  {
    stowage::Store w = stowage::Store::open(p.string(), stowage::Mode::truncate);
    w.create("", array_description(stowage::DType::int8, {4}));
    int8_t v[4] = {1, -2, 3, -4};
    w.array("").write({0}, {4}, v);
    w.close();
  }
  stowage::Store s = stowage::Store::open(p.string());
  int8_t v[4] = {0, 0, 0, 0};
  CHECK_THROWS_AS(s.array("").write({0}, {4}, v), stowage::Error);
  CHECK_THROWS_AS(s.describe("x"), stowage::Error);
  stowage::Store t = stowage::Store::open((dir / "t.npy").string(), stowage::Mode::truncate);
  CHECK_THROWS_AS(t.create("inner", array_description(stowage::DType::int8, {4})), stowage::Error);
  CHECK_THROWS_AS(t.create("", {{"kind", "sparse"}, {"dtype", "int8"}, {"shape", {2, 2}}}),
                  stowage::Error);
}

TEST_CASE("a writer killed before close leaves no destination") {
  test::TempDir dir;
  test::fs::path dst = dir / "killed.npy";
  test::fs::path writer = test::build_root() / "tests" / "npy" / "npy_test_writer";
  test::RunResult r = test::run(test::quote(writer.string()) + " " + test::quote(dst.string()));
  INFO(r.output);
  CHECK(r.output.find("wrote, now killing myself") != std::string::npos);
  CHECK_FALSE(test::fs::exists(dst));
}

// Issue 21: the plugin does not write big-endian or Fortran-order files
// (plugins/formats/npy/README.md: `byte_order` and `order` in a description
// are ignored; files are little-endian, C order, as numpy.save writes). A
// description asking for them still gives numpy the right values, and a
// big-endian Fortran-order file numpy wrote (read by the plugin, see
// read_test.cpp) copied through the plugin is equal in numpy's eyes.
TEST_CASE(
    "asked for big-endian Fortran order, the writer writes '<' C order that numpy reads to the same values") {
  test::TempDir dir;
  const char* make = R"PY(
import sys, numpy as np
a = np.asfortranarray(np.array([[-0.0, np.inf, -np.inf, np.nan, 1.5], [np.finfo('>f8').max, np.finfo('>f8').tiny, -7.25, 5e-324, 0]], dtype='>f8'))
np.save(sys.argv[1] + "/theirs.npy", a)
b = np.asfortranarray((np.arange(-40, 20).reshape(3, 4, 5) * 65537).astype('>i4'))
np.save(sys.argv[1] + "/theirs3.npy", b)
)PY";
  test::RunResult r = test::run_python(make, test::quote(dir.path().string()));
  REQUIRE_MESSAGE(r.status == 0, r.output);
  for (const std::string name : {"theirs", "theirs3"}) {
    CAPTURE(name);
    stowage::Store in = stowage::Store::open((dir / (name + ".npy")).string());
    stowage::Array src = in.array("");
    CHECK(src.info().big_endian);
    CHECK(src.info().fortran_order);
    std::string values = npytest::read_bytes(src);
    stowage::json desc = {{"kind", "array"},
                          {"dtype", stowage::dtype_name(src.dtype())},
                          {"shape", src.shape()},
                          {"byte_order", "big"},
                          {"order", "F"}};
    stowage::Store out =
        stowage::Store::open((dir / (name + "_ours.npy")).string(), stowage::Mode::truncate, "npy");
    out.create("", desc);
    stowage::Array dst = out.array("");
    CHECK_FALSE(dst.info().big_endian);
    CHECK_FALSE(dst.info().fortran_order);
    dst.write(std::vector<uint64_t>(dst.ndim(), 0), dst.shape(), values.data());
    out.close();
  }
  const char* check = R"PY(
import sys, numpy as np
d = sys.argv[1]
for name in ("theirs", "theirs3"):
    theirs, ours = np.load(d + "/" + name + ".npy"), np.load(d + "/" + name + "_ours.npy")
    same = theirs.shape == ours.shape and theirs.astype(theirs.dtype.newbyteorder("<")).tobytes() == ours.tobytes()
    print(name, ours.dtype.str, ours.flags.f_contiguous and ours.ndim > 1, ours.flags.c_contiguous, same)
)PY";
  r = test::run_python(check, test::quote(dir.path().string()));
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK_MESSAGE(r.output.find("theirs <f8 False True True") != std::string::npos, r.output);
  CHECK_MESSAGE(r.output.find("theirs3 <i4 False True True") != std::string::npos, r.output);
}

// Issue 21: a non-ASCII directory and file name: written, loaded by numpy,
// and a truncated file's error names it as given.
TEST_CASE("a non-ASCII path: written, loaded by numpy, errors name the file") {
  test::TempDir dir;
  const test::fs::path file = dir / "donn\u00e9es-\u03b2" / "\u00df-\u03bc.npy";
  test::fs::create_directories(file.parent_path());
  std::vector<int16_t> values = {-32768, -1, 0, 1, 32767, 12345};
  {
    stowage::Store s = stowage::Store::open(file.string(), stowage::Mode::truncate);
    CHECK(s.format() == "npy");
    s.create("", array_description(stowage::DType::int16, {2, 3}));
    s.array("").write({0, 0}, {2, 3}, values.data());
    s.close();
  }
  CHECK(stowage::Store::open(file.string()).array("").read_all<int16_t>() == values);
  test::RunResult r =
      test::run_python("import sys, numpy as np\nprint(np.load(sys.argv[1]).ravel().tolist())\n",
                       test::quote(file.string()));
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(r.output == "[-32768, -1, 0, 1, 32767, 12345]\n");
  test::write_file(file, test::read_file(file).substr(0, 100));
  stowage::Error e = npytest::open_error(file.string());
  CHECK(e.code() == stowage::ErrorCode::corrupt);
  CHECK_MESSAGE(std::string(e.what()).find(file.string()) != std::string::npos, e.what());
}
