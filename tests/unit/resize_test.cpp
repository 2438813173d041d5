// The format command "resize" ({"shape": [...]}) of N5, Zarr v2/v3 (sharded
// too) and npy: data inside the new shape stays, the chunk files wholly
// outside it go, and a shrink then grow reads what zarr-python reads after
// the same steps (an edge chunk the small shape still reached keeps its old
// values; the rest is the fill value). tests/python/test_resize.py checks
// the same against zarr-python and numpy.
#include "test_support.hpp"

#include <doctest/doctest.h>

using stowage::json;
namespace fs = std::filesystem;

namespace {

int32_t value(uint64_t i, uint64_t j) { return int32_t(i * 100 + j + 1); }  // never the fill, 0

std::vector<int32_t> values(const std::vector<uint64_t>& shape) {
  std::vector<int32_t> v;
  for (uint64_t i = 0; i < shape[0]; ++i)
    for (uint64_t j = 0; j < shape[1]; ++j) v.push_back(value(i, j));
  return v;
}

// The data files under `dir` (chunks or shards), metadata aside.
size_t data_files(const fs::path& dir) {
  size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name != "attributes.json" && name != "zarr.json" && name[0] != '.')
      ++n;
  }
  return n;
}

struct Case {
  const char* name;
  const char* format;
  json options;
  json description;            // shape (10, 6), int32
  std::vector<uint64_t> unit;  // the extents of one data file (a chunk, or a shard)
};

std::vector<Case> chunked_cases() {
  const json base = {{"kind", "array"}, {"dtype", "int32"}, {"shape", {10, 6}}, {"chunks", {4, 4}}};
  json sharded = base;
  sharded["chunks"] = {4, 2};
  sharded["shards"] = {8, 4};
  return {{"n5", "n5", json::object(), base, {4, 4}},
          {"zarr v2", "zarr", {{"zarr_version", 2}}, base, {4, 4}},
          {"zarr v3", "zarr", json::object(), base, {4, 4}},
          {"zarr v3 sharded", "zarr", json::object(), sharded, {8, 4}}};
}

}  // namespace

TEST_CASE("resize: a shrink drops the chunks outside, a grow back reads as zarr-python's") {
  for (const Case& c : chunked_cases()) {
    CAPTURE(c.name);
    test::TempDir tmp;
    const std::string path = (tmp / "a").string();
    {
      stowage::Store s = stowage::Store::open(path, stowage::Mode::truncate, c.format, c.options);
      s.create("x", c.description);
      s.array("x").write({0, 0}, {10, 6}, values({10, 6}).data());
      s.close();
    }
    stowage::Store s = stowage::Store::open(path, stowage::Mode::update, c.format);
    s.command("x", "resize", {{"shape", {6, 3}}});
    CHECK(s.describe("x").shape == std::vector<uint64_t>{6, 3});
    std::vector<int32_t> small(6 * 3);
    s.array("x").read({0, 0}, {6, 3}, small.data());
    std::vector<int32_t> want;
    for (uint64_t i = 0; i < 6; ++i)
      for (uint64_t j = 0; j < 3; ++j) want.push_back(value(i, j));
    CHECK(small == want);
    // (6, 3) reaches one data file of (4, 4) chunks along each axis but the first's two.
    const size_t kept = ((6 + c.unit[0] - 1) / c.unit[0]) * ((3 + c.unit[1] - 1) / c.unit[1]);
    CHECK(data_files(tmp / "a" / "x") == kept);

    s.command("x", "resize", {{"shape", {12, 7}}});
    stowage::Array a = s.array("x");
    REQUIRE(a.shape() == std::vector<uint64_t>{12, 7});
    std::vector<int32_t> got = a.read_all<int32_t>();
    // What the kept files hold stays, all of it (zarr-python keeps edge chunks whole).
    const uint64_t rows = 8, cols = 4;
    for (uint64_t i = 0; i < 12; ++i)
      for (uint64_t j = 0; j < 7; ++j) {
        const int32_t expected = i < rows && j < cols && i < 10 && j < 6 ? value(i, j) : 0;
        if (got[i * 7 + j] != expected)
          FAIL(std::string(c.name)
               << ": (" << i << ", " << j << ") reads " << got[i * 7 + j] << ", not " << expected);
      }
    s.close();
    stowage::Store again = stowage::Store::open(path, stowage::Mode::read, c.format);
    CHECK(again.describe("x").shape == std::vector<uint64_t>{12, 7});
    CHECK(again.array("x").read_all<int32_t>() == got);
  }
}

TEST_CASE("resize: npy grows by an append and rewrites for other axes, published at close") {
  test::TempDir tmp;
  const std::string path = (tmp / "a.npy").string();
  {
    stowage::Store s = stowage::Store::open(path, stowage::Mode::truncate, "npy");
    s.create("", {{"kind", "array"}, {"dtype", "int32"}, {"shape", {5, 3}}});
    s.array().write({0, 0}, {5, 3}, values({5, 3}).data());
    s.close();
  }
  const std::string before = test::read_file(path);
  stowage::Store s = stowage::Store::open(path, stowage::Mode::update, "npy");
  s.command("", "resize", {{"shape", {7, 3}}});
  std::vector<int32_t> grown = s.array().read_all<int32_t>();
  std::vector<int32_t> want = values({5, 3});
  want.resize(7 * 3, 0);
  CHECK(grown == want);
  CHECK(test::read_file(path) == before);  // not until close

  s.command("", "resize", {{"shape", {4, 2}}});
  s.command("", "resize", {{"shape", {4, 4}}});
  s.close();
  stowage::Store again = stowage::Store::open(path, stowage::Mode::read, "npy");
  REQUIRE(again.describe().shape == std::vector<uint64_t>{4, 4});
  std::vector<int32_t> got = again.array().read_all<int32_t>();
  for (uint64_t i = 0; i < 4; ++i)
    for (uint64_t j = 0; j < 4; ++j) CHECK(got[i * 4 + j] == (j < 2 ? value(i, j) : 0));
}

TEST_CASE("resize: a wrong shape, a read-only store and a group are refused, naming the path") {
  test::TempDir tmp;
  const std::string path = (tmp / "a.n5").string();
  {
    stowage::Store s = stowage::Store::open(path, stowage::Mode::truncate, "n5");
    s.create("x", {{"kind", "array"}, {"dtype", "uint8"}, {"shape", {4}}, {"chunks", {2}}});
    s.create("g", {{"kind", "group"}});
    s.close();
  }
  auto refused = [&](stowage::Store& s, const std::string& node, const json& args,
                     stowage::ErrorCode code) {
    try {
      s.command(node, "resize", args);
      FAIL("resize " << args.dump() << " of '" << node << "' was accepted");
    } catch (const stowage::Error& e) {
      CHECK(e.code() == code);
      CHECK(std::string(e.what()).find(path) != std::string::npos);
    }
  };
  stowage::Store r = stowage::Store::open(path, stowage::Mode::read, "n5");
  refused(r, "x", {{"shape", {8}}}, stowage::ErrorCode::invalid_argument);
  stowage::Store s = stowage::Store::open(path, stowage::Mode::update, "n5");
  refused(s, "x", {{"shape", {8, 1}}}, stowage::ErrorCode::invalid_argument);
  refused(s, "x", {{"shape", {-1}}}, stowage::ErrorCode::invalid_argument);
  refused(s, "x", json::object(), stowage::ErrorCode::invalid_argument);
  refused(s, "g", {{"shape", {8}}}, stowage::ErrorCode::invalid_argument);
  CHECK(s.describe("x").shape == std::vector<uint64_t>{4});
}
