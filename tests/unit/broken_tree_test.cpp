// Issue 30, "errors, not zeros": a chunk or shard path of the wrong type (a
// directory where the file should be, a file where a chunk directory should
// be) and an array removed while its store is open are errors naming the path
// as the user gave it; only a chunk absent from an existing array reads as the
// fill value. N5, Zarr v2 ('/' keys), v3 unsharded and v3 sharded, on local files.
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <numeric>

namespace fs = std::filesystem;
using stowage::json;

namespace {

// One layout: how to make the store, and where chunk (1, 1) of the 8x8 int32
// array "a" (4x4 chunks) lives: its file (a shard, sharded) and the chunk
// directory above it.
struct Layout {
  const char* name;
  const char* format;
  json options;
  json extra;          // more of the array's description
  const char* file;    // relative to the store
  const char* folder;  // the chunk directory holding `file`
};

const Layout kLayouts[] = {
    {"N5", "n5", json::object(), json::object(), "a/1/1", "a/1"},
    {"Zarr v2",
     "zarr",
     {{"zarr_version", 2}},
     {{"storage", {{"dimension_separator", "/"}}}},
     "a/1/1",
     "a/1"},
    {"Zarr v3", "zarr", json::object(), json::object(), "a/c/1/1", "a/c/1"},
    {"Zarr v3 sharded", "zarr", json::object(), {{"shards", {4, 8}}}, "a/c/1/0", "a/c/1"},
};

std::vector<int32_t> values() {
  std::vector<int32_t> v(64);
  std::iota(v.begin(), v.end(), 1);
  return v;
}

// A store at `root` whose array "a" holds 1..64.
void make(const Layout& l, const fs::path& root) {
  stowage::Store s =
      stowage::Store::open(root.string(), stowage::Mode::create, l.format, l.options);
  json d = {{"kind", "array"}, {"dtype", "int32"}, {"shape", {8, 8}}, {"chunks", {4, 4}}};
  d.update(l.extra);
  s.create("a", d);
  s.array("a").write({0, 0}, {8, 8}, values().data());
  s.close();
  REQUIRE(fs::is_regular_file(root / l.file));
}

std::vector<int32_t> read_all(const fs::path& root, const Layout& l) {
  stowage::Store s = stowage::Store::open(root.string(), stowage::Mode::read, l.format);
  return s.array("a").read_all<int32_t>();
}

bool exists_11(const fs::path& root, const Layout& l) {
  stowage::Store s = stowage::Store::open(root.string(), stowage::Mode::read, l.format);
  return s.array("a").chunk_exists({1, 1});
}

}  // namespace

TEST_CASE("broken trees: a chunk absent from an existing array is the fill value" *
          test::needs({"zarr"})) {
  for (const Layout& l : kLayouts) {
    const std::string layout = l.name;
    CAPTURE(layout);
    test::TempDir tmp;
    const fs::path root = tmp / "s";
    make(l, root);
    fs::remove(root / l.file);
    std::vector<int32_t> want = values();
    for (int r = 4; r < 8; ++r)
      for (int c = 4; c < 8; ++c) want[r * 8 + c] = 0;
    if (std::string(l.name) == "Zarr v3 sharded")  // the shard holds chunks (1, 0) and (1, 1)
      for (int r = 4; r < 8; ++r)
        for (int c = 0; c < 4; ++c) want[r * 8 + c] = 0;
    CHECK(read_all(root, l) == want);
    CHECK_FALSE(exists_11(root, l));
  }
}

TEST_CASE("broken trees: a directory where a chunk or shard file should be is an error naming it" *
          test::needs({"zarr"})) {
  for (const Layout& l : kLayouts) {
    const std::string layout = l.name;
    CAPTURE(layout);
    test::TempDir tmp;
    const fs::path root = tmp / "s";
    make(l, root);
    fs::remove(root / l.file);
    fs::create_directories(root / l.file / "x");
    const std::string key = (root / l.file).string();
    std::string message = TEST_REQUIRE_ERROR(read_all(root, l), stowage::ErrorCode::io);
    CHECK_MESSAGE(message.find(key + ": is a directory") != std::string::npos, message);
    message = TEST_REQUIRE_ERROR(exists_11(root, l), stowage::ErrorCode::io);
    CHECK_MESSAGE(message.find(key + ": is a directory") != std::string::npos, message);
  }
}

TEST_CASE("broken trees: a file where a chunk directory should be is an error naming the chunk" *
          test::needs({"zarr"})) {
  for (const Layout& l : kLayouts) {
    const std::string layout = l.name;
    CAPTURE(layout);
    test::TempDir tmp;
    const fs::path root = tmp / "s";
    make(l, root);
    fs::remove_all(root / l.folder);
    test::write_file(root / l.folder, "not a directory");
    const std::string under = (root / l.folder).string() + "/";
    std::string message = TEST_REQUIRE_ERROR(read_all(root, l), stowage::ErrorCode::io);
    CHECK_MESSAGE(message.find(under) != std::string::npos, message);
    CHECK_MESSAGE(message.find("is a file") != std::string::npos, message);
    message = TEST_REQUIRE_ERROR(exists_11(root, l), stowage::ErrorCode::io);
    CHECK_MESSAGE(message.find((root / l.file).string() + ": cannot open") != std::string::npos,
                  message);
  }
}

TEST_CASE("broken trees: an array removed while its store is open is an error, not the fill value" *
          test::needs({"zarr"})) {
  for (const Layout& l : kLayouts) {
    const std::string layout = l.name;
    CAPTURE(layout);
    test::TempDir tmp;
    const fs::path root = tmp / "s";
    make(l, root);
    stowage::Store s = stowage::Store::open(root.string(), stowage::Mode::read, l.format);
    stowage::Array a = s.array("a");
    std::vector<int32_t> got(64);
    a.read({0, 0}, {4, 4}, got.data());  // the array is open and was read
    fs::remove_all(root / "a");
    std::string message =
        TEST_REQUIRE_ERROR(a.read({4, 4}, {4, 4}, got.data()), stowage::ErrorCode::not_found);
    CHECK_MESSAGE(message.find((root / l.file).string() + ":") != std::string::npos, message);
    message = TEST_REQUIRE_ERROR(a.chunk_exists({1, 1}), stowage::ErrorCode::not_found);
    const std::string what = std::string(l.format) == "n5" ? ": the dataset" : ": the array";
    CHECK_MESSAGE(message.find((root / l.file).string() + what + " was removed while open") !=
                      std::string::npos,
                  message);
  }
}
