// Consolidated metadata (.zmetadata; plugins/formats/zarr/consolidated.hpp):
// stores zarr-python consolidated read from .zmetadata alone (nodes whose own
// files were removed still list, describe and read), over HTTP in a few
// requests where the node files take hundreds; stores stowage writes with
// {"consolidated": true} hold what zarr.consolidate_metadata writes and read
// through zarr.open_consolidated; a store being written never keeps a stale
// .zmetadata; malformed ones are errors naming it.
#include "../http/flaky_proxy.hpp"
#include "../http/nginx.hpp"
#include "zarr_helpers.hpp"

#include <cstring>

using namespace zarrtest;

namespace {

const json kUnconsolidated = {{"consolidated", false}};

// Every node under `node`, depth first, "" first.
void walk(const stowage::Store& store, const std::string& node, std::vector<std::string>& out) {
  out.push_back(node);
  if (store.describe_json(node)["kind"] == "array") return;
  for (const std::string& child : store.list(node))
    walk(store, node.empty() ? child : node + "/" + child, out);
}

std::vector<std::string> nodes_of(const stowage::Store& store) {
  std::vector<std::string> out;
  walk(store, "", out);
  return out;
}

// zarr-python's store of 80 arrays (zarr_peer.py write), consolidated by it.
struct Theirs {
  test::TempDir tmp;
  fs::path root = tmp / "theirs.zarr", out = tmp / "dump";
  explicit Theirs(const fs::path& where = {}) {
    if (!where.empty()) root = where;
    fs::create_directories(out);
    run_peer("write " + test::quote(root.string()) + " " + test::quote(out.string()));
    run_peer("consolidate " + test::quote(root.string()));
  }
};

}  // namespace

TEST_CASE(
    "zarr consolidated: a store zarr-python consolidated reads from .zmetadata, even without a node's files") {
  Theirs theirs;
  REQUIRE(fs::exists(theirs.root / ".zmetadata"));
  // What the nodes' own files say, before some are removed.
  std::map<std::string, std::string> described;
  {
    stowage::Store plain =
        stowage::Store::open(theirs.root.string(), stowage::Mode::read, "zarr", kUnconsolidated);
    for (const std::string& node : nodes_of(plain))
      described[node] = plain.describe_json(node).dump();
  }
  REQUIRE(described.size() == 91);  // the root, 10 groups, 80 arrays
  fs::remove(theirs.root / "zlib" / "u2" / ".zarray");
  fs::remove(theirs.root / "zlib" / "u2" / ".zattrs");
  fs::remove(theirs.root / "gzip" / ".zgroup");

  stowage::Store store = open_zarr(theirs.root.string());
  CHECK(nodes_of(store).size() == described.size());
  for (const auto& [node, description] : described) {
    CAPTURE(node);
    CHECK(store.describe_json(node).dump() == description);
  }
  const std::vector<std::string> read_back = {"zlib/u2", "gzip/f8be", "raw/i8"};
  for (const std::string& node : read_back) {
    CAPTURE(node);
    if (test::plugin_off(node.substr(0, node.find('/')) == "zlib" ? "gzip"
                                                                  : node.substr(0, node.find('/'))))
      continue;
    CHECK(read_bytes(store.array(node)) == dumped(theirs.out, node));
  }
  // Without .zmetadata the removed files are missed: it was .zmetadata that answered.
  stowage::Store plain =
      stowage::Store::open(theirs.root.string(), stowage::Mode::read, "zarr", kUnconsolidated);
  TEST_REQUIRE_ERROR(plain.describe("zlib/u2"), stowage::ErrorCode::not_found);
  CHECK(plain.list("").size() == 9);  // gzip is no group without its .zgroup
}

TEST_CASE("zarr consolidated over HTTP: the whole tree listed and described in a few requests" *
          test::needs({"http"})) {
  test::Nginx nginx;
  Theirs consolidated(nginx.root() / "consolidated.zarr");
  fs::copy(consolidated.root, nginx.root() / "plain.zarr", fs::copy_options::recursive);
  fs::remove(nginx.root() / "plain.zarr" / ".zmetadata");
  test::FlakyProxy proxy(nginx.port());
  std::map<std::string, size_t> requests;
  std::map<std::string, std::vector<std::string>> trees;
  for (const std::string name : {"consolidated.zarr", "plain.zarr"}) {
    proxy.take_request_lines();
    stowage::Store store = open_zarr(proxy.url(name));
    std::vector<std::string> nodes = nodes_of(store);
    for (const std::string& node : nodes) (void)store.describe_json(node);
    requests[name] = proxy.take_request_lines().size();
    trees[name] = nodes;
  }
  MESSAGE("listing and describing 91 nodes over HTTP: " << requests["consolidated.zarr"]
                                                        << " requests with .zmetadata, "
                                                        << requests["plain.zarr"] << " without");
  CHECK(trees["consolidated.zarr"] == trees["plain.zarr"]);
  CHECK(trees["plain.zarr"].size() == 91);
  // The open (a stat; zarr.json absent and .zgroup present: v2; .zmetadata):
  // nothing per node.
  CHECK(requests["consolidated.zarr"] <= 5);
  CHECK(requests["plain.zarr"] > 2 * 91);
}

TEST_CASE(
    "zarr consolidated: stowage writes .zmetadata on request, zarr-python's open_consolidated reads it") {
  test::TempDir tmp;
  const fs::path ours = tmp / "ours.zarr", out = tmp / "dump";
  fs::create_directories(out);
  std::map<std::string, std::string> written;
  {
    stowage::Store store = stowage::Store::open(ours.string(), stowage::Mode::create, "zarr",
                                                {{"consolidated", true}, {"zarr_version", 2}});
    store.set_attributes("", {{"title", "grüße"}});
    store.create("g/h", {{"kind", "group"}, {"attributes", {{"level", 2}}}});
    json delta_filters = json::array();
    delta_filters.push_back({{"id", "delta"}, {"dtype", "<f8"}});
    const std::vector<std::pair<std::string, json>> arrays = {
        {"a",
         {{"kind", "array"},
          {"dtype", "int32"},
          {"shape", {5, 4}},
          {"chunks", {2, 3}},
          {"fill_value", -1}}},
        {"g/h/b",
         {{"kind", "array"},
          {"dtype", "float64"},
          {"shape", {7}},
          {"chunks", {3}},
          {"fill_value", "NaN"},
          {"attributes", {{"units", "m"}}},
          {"storage", {{"filters", delta_filters}}}}},
    };
    for (const auto& [node, description] : arrays) {
      store.create(node, description);
      stowage::Array a = store.array(node);
      std::string data(a.info().element_count() * stowage::dtype_size(a.dtype()), '\0');
      for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + 3);
      if (a.dtype() == stowage::DType::float64)
        for (size_t i = 0; i < data.size() / 8; ++i) {
          const double v = i * 0.25 - 1;
          std::memcpy(data.data() + 8 * i, &v, 8);
        }
      a.write(std::vector<uint64_t>(a.ndim(), 0), a.shape(), data.data());
      written[node] = data;
    }
    CHECK_FALSE(fs::exists(ours / ".zmetadata"));  // written by close()
    store.close();
  }
  REQUIRE(fs::exists(ours / ".zmetadata"));
  // The same as zarr-python's own consolidation of the store.
  const json ours_meta = test::read_json(ours / ".zmetadata");
  fs::copy(ours, tmp / "copy.zarr", fs::copy_options::recursive);
  run_peer("consolidate " + test::quote((tmp / "copy.zarr").string()));
  CHECK(unordered(ours_meta) == unordered(test::read_json(tmp / "copy.zarr" / ".zmetadata")));
  CHECK(ours_meta["metadata"].contains("g/h/b/.zarray"));

  // zarr-python reads it through .zmetadata alone.
  fs::remove(ours / "g" / "h" / "b" / ".zattrs");
  fs::remove(ours / "a" / ".zarray");
  const std::map<std::string, json> seen = lines_by_node(run_peer(
      "read-consolidated " + test::quote(ours.string()) + " " + test::quote(out.string())));
  REQUIRE(seen.size() == 5);  // the root, g, g/h, a, g/h/b
  CHECK(seen.at("").at("attributes").value("title", "") == "grüße");
  CHECK(seen.at("g/h").at("attributes").value("level", 0) == 2);
  CHECK(seen.at("g/h/b").at("attributes").value("units", "") == "m");
  for (const auto& [node, data] : written) {
    CAPTURE(node);
    CHECK(dumped(out, node) == data);
  }
}

TEST_CASE("zarr consolidated: a store being written never keeps a stale .zmetadata") {
  Theirs theirs;
  const fs::path zmetadata = theirs.root / ".zmetadata";
  {  // opened for writing without a change: left alone
    stowage::Store store = open_zarr(theirs.root.string(), stowage::Mode::update);
    (void)store.list("");
    store.close();
    CHECK(fs::exists(zmetadata));
  }
  {  // the first change removes it, close() writes it again with the change
    stowage::Store store = open_zarr(theirs.root.string(), stowage::Mode::update);
    store.create("new/group", {{"kind", "group"}, {"attributes", {{"k", 1}}}});
    CHECK_FALSE(fs::exists(zmetadata));
    store.remove("raw");
    store.close();
    const json m = test::read_json(zmetadata)["metadata"];
    CHECK(m["new/group/.zattrs"]["k"] == 1);
    CHECK_FALSE(m.contains("raw/.zgroup"));
    CHECK_FALSE(m.contains("raw/u2/.zarray"));
    CHECK(m.contains("zlib/u2/.zarray"));
    stowage::Store reader = open_zarr(theirs.root.string());
    CHECK(reader.list("").size() == 10);  // raw gone, new added
  }
  {  // {"consolidated": false}: removed and not written again
    stowage::Store store =
        stowage::Store::open(theirs.root.string(), stowage::Mode::update, "zarr", kUnconsolidated);
    store.set_attributes("new", {{"k", 2}});
    store.close();
    CHECK_FALSE(fs::exists(zmetadata));
  }
}

TEST_CASE("zarr consolidated malformed: a bad .zmetadata is an error naming it") {
  using stowage::ErrorCode;
  struct Case {
    std::string text;
    ErrorCode code;
    std::string words;
  };
  const std::string group = R"(".zgroup":{"zarr_format":2})";
  const std::vector<Case> cases = {
      {R"({"metadata": {)", ErrorCode::corrupt, "not valid JSON"},
      {R"({"metadata":{)" + group + "}}", ErrorCode::corrupt,
       "has no \"zarr_consolidated_format\""},
      {R"({"metadata":{)" + group + R"(},"zarr_consolidated_format":2})", ErrorCode::unsupported,
       "\"zarr_consolidated_format\" 2"},
      {R"({"metadata":[],"zarr_consolidated_format":1})", ErrorCode::corrupt,
       "\"metadata\" must be an object"},
      {R"({"metadata":{)" + group + R"(,"a/.zarray":[1]},"zarr_consolidated_format":1})",
       ErrorCode::corrupt, "\"a/.zarray\" must hold a JSON object"},
      {R"({"metadata":{"a/.zgroup":{"zarr_format":2}},"zarr_consolidated_format":1})",
       ErrorCode::corrupt, "holds no \".zgroup\" or \".zarray\" for the root"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    test::TempDir tmp;
    const fs::path root = tmp / "bad.zarr";
    fs::create_directories(root);
    test::write_file(root / ".zgroup", R"({"zarr_format": 2})");
    test::write_file(root / ".zmetadata", c.text);
    const std::string message = TEST_REQUIRE_ERROR(open_zarr(root.string()), c.code);
    CHECK_MESSAGE(message.find((root / ".zmetadata").string() + ": ") != std::string::npos,
                  message);
    CHECK_MESSAGE(message.find(c.words) != std::string::npos, message);
  }
  {  // a bad .zarray inside it is named as the entry of .zmetadata
    test::TempDir tmp;
    const fs::path root = tmp / "bad.zarr";
    fs::create_directories(root / "a");
    test::write_file(root / ".zgroup", R"({"zarr_format": 2})");
    test::write_file(
        root / ".zmetadata",
        R"({"metadata":{)" + group +
            R"(,"a/.zarray":{"zarr_format":2,"dtype":"<u2"}},"zarr_consolidated_format":1})");
    stowage::Store store = open_zarr(root.string());
    CHECK(store.list("") == std::vector<std::string>{"a"});
    const std::string message = TEST_REQUIRE_ERROR(store.describe("a"), ErrorCode::corrupt);
    CHECK_MESSAGE(message.find((root / ".zmetadata").string() +
                               " (\"a/.zarray\"): has no \"shape\"") != std::string::npos,
                  message);
  }
}
