// Shapes and chunk grids that open would refuse are refused by create,
// before any byte is written: by the core's Store::create, and by each
// format's own create (called here through its plugin table, as a host that
// is not the core calls it). Afterwards the store still lists and describes
// every node, and stowage-info of the whole store exits 0. (Before, Zarr
// wrote (2^40)^3 and N5 (2^62)^2, open then called them corrupt, and every
// stowage-info of the store failed from then on.)
#include "test_support.hpp"

#include <stowage/stowage.hpp>

#include <doctest/doctest.h>

#include <map>
#include <string>

namespace {

namespace fs = std::filesystem;
using stowage::ErrorCode;
using stowage::json;
using stowage::Mode;
using stowage::Store;

constexpr uint64_t k2e40 = uint64_t(1) << 40, k2e62 = uint64_t(1) << 62, k2e63 = uint64_t(1) << 63;

// Every file under `dir` with its bytes: what "no byte written" compares.
std::map<std::string, std::string> files_of(const fs::path& dir) {
  std::map<std::string, std::string> files;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return files;
  if (fs::is_regular_file(dir)) return {{dir.filename().string(), test::read_file(dir)}};
  for (const auto& e : fs::recursive_directory_iterator(dir))
    files[fs::relative(e.path(), dir).string() + (e.is_directory() ? "/" : "")] =
        e.is_regular_file() ? test::read_file(e.path()) : "";
  return files;
}

// The format plugin's own create, the core left out: its status and message.
test::Failure plugin_create(const std::string& format, const std::string& path, uint32_t mode,
                            const std::string& node, const json& description,
                            const json& options = json::object()) {
  stowage::Registry& registry = stowage::Registry::global();
  auto* vt = static_cast<const stowage_format_vtable*>(registry.load("format", format)->vtable);
  const std::string opts = options.dump(), text = description.dump();
  stowage_store_handle handle = nullptr;
  stowage_error err{};
  int rc = vt->open(registry.host(), path.data(), path.size(), mode, opts.data(), opts.size(),
                    &handle, &err);
  REQUIRE_MESSAGE(rc == STOWAGE_OK, err.message);
  rc = vt->create(handle, node.data(), node.size(), text.data(), text.size(), &err);
  test::Failure f{static_cast<ErrorCode>(rc), rc == STOWAGE_OK ? "" : err.message};
  stowage_error close_err{};
  vt->close(handle, &close_err);
  return f;
}

// The store opens, lists and describes every node, and stowage-info shows it.
void check_readable(const std::string& path) {
  Store store = Store::open(path);
  std::vector<std::string> unvisited{""};
  while (!unvisited.empty()) {
    const std::string node = unvisited.back();
    unvisited.pop_back();
    CAPTURE(node);
    const stowage::NodeInfo info = store.describe(node);
    if (info.kind == stowage::NodeKind::group)
      for (const std::string& child : store.list(node))
        unvisited.push_back(node.empty() ? child : node + "/" + child);
  }
  test::RunResult r = test::run((test::build_root() / "tools" / "info" / "stowage-info").string() +
                                " " + test::quote(path));
  CHECK_MESSAGE(r.status == 0, r.output);
}

struct Case {
  const char* name;
  std::string format;
  json options;
  json description;
  std::string core_why;    // what Store::create says after "<path>::big: cannot create it: "
  std::string plugin_why;  // a part of what the format's own create says
};

}  // namespace

TEST_CASE(
    "create: containers refuse sizes open would refuse, before a byte; the store still reads") {
  const json uint8_2d = {
      {"kind", "array"}, {"dtype", "uint8"}, {"shape", {3, 4}}, {"chunks", {2, 2}}};
  const Case cases[] = {
      {"zarr v3 (2^40)^3",
       "zarr",
       {{"zarr_version", 3}},
       {{"kind", "array"},
        {"dtype", "float64"},
        {"shape", {k2e40, k2e40, k2e40}},
        {"chunks", {64, 64, 64}}},
       "shape [1099511627776,1099511627776,1099511627776] of float64 is more bytes than a 64-bit offset can address",
       "zarr create: shape [1099511627776,1099511627776,1099511627776] of float64 is more bytes than a 64-bit offset can address"},
      {"zarr v3 sharded (2^40)^3",
       "zarr",
       {{"zarr_version", 3}},
       {{"kind", "array"},
        {"dtype", "uint8"},
        {"shape", {k2e40, k2e40, k2e40}},
        {"chunks", {64, 64, 64}},
        {"shards", {128, 128, 128}}},
       "shape [1099511627776,1099511627776,1099511627776] of uint8 is more bytes than a 64-bit offset can address",
       "is more bytes than a 64-bit offset can address"},
      {"zarr v2 (2^40)^3",
       "zarr",
       {{"zarr_version", 2}},
       {{"kind", "array"},
        {"dtype", "int16"},
        {"shape", {k2e40, k2e40, k2e40}},
        {"chunks", {64, 64, 64}}},
       "shape [1099511627776,1099511627776,1099511627776] of int16 is more bytes than a 64-bit offset can address",
       "is more bytes than a 64-bit offset can address"},
      {"n5 (2^62)^2",
       "n5",
       json::object(),
       {{"kind", "array"}, {"dtype", "float64"}, {"shape", {k2e62, k2e62}}, {"chunks", {64, 64}}},
       "shape [4611686018427387904,4611686018427387904] of float64 is more bytes than a 64-bit offset can address",
       "n5 create: shape [4611686018427387904,4611686018427387904] of float64 is more bytes than a 64-bit offset can address"},
      {"n5 zero chunk",
       "n5",
       json::object(),
       {{"kind", "array"}, {"dtype", "uint8"}, {"shape", {10, 10}}, {"chunks", {0, 5}}},
       "chunks [0,5] has an extent of 0; each must be at least 1",
       "N5 allows integers in 1.."},
      {"zarr zero chunk",
       "zarr",
       json::object(),
       {{"kind", "array"}, {"dtype", "uint8"}, {"shape", {10, 10}}, {"chunks", {5, 0}}},
       "chunks [5,0] has an extent of 0; each must be at least 1",
       "each entry must be an integer >= 1"},
  };
  for (const Case& c : cases) {
    const std::string name = c.name;
    CAPTURE(name);
    test::TempDir tmp;
    const std::string path = (tmp / (c.format == "n5" ? "c.n5" : "c.zarr")).string();
    {
      Store store = Store::open(path, Mode::create, c.format, c.options);
      store.create("ok", uint8_2d);
      store.close();
    }
    const auto before = files_of(path);
    {
      Store store = Store::open(path, Mode::update, c.format);
      test::Failure f = test::failure_of([&] { store.create("deep/big", c.description); });
      CHECK(f.code == ErrorCode::invalid_argument);
      CHECK(f.message == path + "::deep/big: cannot create it: " + c.core_why);
      store.close();
    }
    CHECK(files_of(path) == before);
    // The format's own create, without the core's check: refused too, naming the node.
    test::Failure f = plugin_create(c.format, path, STOWAGE_MODE_UPDATE, "deep/big", c.description);
    CHECK(f.code == ErrorCode::invalid_argument);
    CHECK(f.message.find(path + "/deep/big: ") == 0);
    CHECK(f.message.find(c.plugin_why) != std::string::npos);
    CHECK(files_of(path) == before);
    check_readable(path);
  }
}

TEST_CASE("create: single-array formats refuse sizes open would refuse, before a byte") {
  const Case cases[] = {
      {"npy [0, 2^63]",
       "npy",
       json::object(),
       {{"kind", "array"}, {"dtype", "float64"}, {"shape", {0, k2e63}}},
       "shape [0,9223372036854775808] of float64 is more bytes than a 64-bit offset can address",
       "is too large"},
      {"datg (2^62)^2",
       "datg",
       json::object(),
       {{"kind", "array"}, {"dtype", "float64"}, {"shape", {k2e62, k2e62}}},
       "shape [4611686018427387904,4611686018427387904] of float64 is more bytes than a 64-bit offset can address",
       "the datg specification allows writers at most"},
  };
  for (const Case& c : cases) {
    const std::string name = c.name;
    CAPTURE(name);
    test::TempDir tmp;
    const std::string path = (tmp / ("x." + c.format)).string();
    {
      Store store = Store::open(path, Mode::create, c.format);
      test::Failure f = test::failure_of([&] { store.create("", c.description); });
      CHECK(f.code == ErrorCode::invalid_argument);
      CHECK(f.message == path + ": cannot create it: " + c.core_why);
    }
    test::Failure f = plugin_create(c.format, path, STOWAGE_MODE_CREATE, "", c.description);
    CHECK(f.code == ErrorCode::invalid_argument);
    CHECK(f.message.find(c.plugin_why) != std::string::npos);
    CHECK(files_of(tmp.path()).empty());
  }
}

TEST_CASE(
    "create: Daf and BPCells refuse sizes they cannot hold, before a byte; the store still reads") {
  test::TempDir tmp;
  const std::string repo = (tmp / "repo").string();
  {
    Store store = Store::open(repo, Mode::create, "daf");
    store.write_strings("axes/cell", {"a", "b"});
    store.close();
  }
  const auto before = files_of(repo);
  const json huge = {{"kind", "array"}, {"dtype", "float64"}, {"shape", {k2e40, k2e40}}};
  {
    Store store = Store::open(repo, Mode::update, "daf");
    test::Failure f = test::failure_of([&] { store.create("matrices/gene/peak/x", huge); });
    CHECK(f.code == ErrorCode::invalid_argument);
    CHECK(f.message ==
          repo +
              "::matrices/gene/peak/x: cannot create it: shape [1099511627776,1099511627776] of "
              "float64 is more bytes than a 64-bit offset can address");
    store.close();
  }
  test::Failure f = plugin_create("daf", repo, STOWAGE_MODE_UPDATE, "matrices/gene/peak/x", huge);
  CHECK(f.code == ErrorCode::invalid_argument);
  CHECK(
      f.message.find(
          "matrices/gene/peak/x: shape [1099511627776,1099511627776] of float64 is more bytes than a "
          "64-bit offset can address") != std::string::npos);
  CHECK(files_of(repo) == before);
  check_readable(repo);

  const std::string matrix = (tmp / "m.bpcells").string();
  const json wide = {
      {"kind", "sparse"}, {"dtype", "float64"}, {"shape", {k2e40, 3}}, {"layout", "csc"}};
  f = plugin_create("bpcells", matrix, STOWAGE_MODE_CREATE, "", wide);
  CHECK(f.code == ErrorCode::invalid_argument);
  CHECK(f.message.find("BPCells stores the shape as uint32") != std::string::npos);
  CHECK_FALSE(fs::exists(matrix));
}

TEST_CASE("create: an N5 object dataset whose block grid overflows is refused before a byte") {
  test::TempDir tmp;
  const std::string path = (tmp / "r.n5").string();
  {  // a new container is published at close ("w+" is a transaction): made first
    Store made = Store::open(path, Mode::create, "n5");
    made.create("ok", {{"kind", "array"}, {"dtype", "uint8"}, {"shape", {3}}, {"chunks", {2}}});
    made.close();
  }
  Store store = Store::open(path, Mode::update, "n5");
  const auto before = files_of(path);
  test::Failure f = test::failure_of([&] {
    store.create("records", {{"kind", "records"}, {"shape", {k2e62, k2e62}}, {"chunks", {1, 1}}});
  });
  CHECK(f.code == ErrorCode::invalid_argument);
  CHECK(f.message ==
        path +
            "/records: shape [4611686018427387904,4611686018427387904] in chunks [1,1] is more "
            "than 2^64 blocks");
  store.close();
  CHECK(files_of(path) == before);
  check_readable(path);
}
