// The Zarr plugin over HTTP: a private nginx (tests/http/nginx.hpp, Debian's
// nginx with JSON listings) serves the z5 fixture and a store zarr-python
// writes, and every node reads from its URL equal to the local read, through
// the http storage backend. Writing to a URL is refused, naming it.
#include "../http/nginx.hpp"
#include "zarr_helpers.hpp"

using namespace zarrtest;

namespace {

// Compares every node under `node` of two opens of one store: the same tree,
// descriptions and values. Returns the number of arrays compared.
size_t compare_trees(const stowage::Store& local, const stowage::Store& remote, const std::string& node) {
  CAPTURE(node);
  const json d = local.describe_json(node);
  CHECK(remote.describe_json(node).dump() == d.dump());
  if (d["kind"] == "array") {
    CHECK(read_bytes(remote.array(node)) == read_bytes(local.array(node)));
    return 1;
  }
  const std::vector<std::string> children = local.list(node);
  CHECK(remote.list(node) == children);
  size_t arrays = 0;
  for (const std::string& child : children) arrays += compare_trees(local, remote, node.empty() ? child : node + "/" + child);
  return arrays;
}

}  // namespace

TEST_CASE("zarr over HTTP: the z5 store and one zarr-python wrote read from nginx equal to the local read" *
          test::needs({"http", "blosc", "gzip", "bzip2", "xz", "zstd", "lz4"})) {
  test::Nginx nginx;
  fs::create_directory_symlink(fs::absolute(fixture("v2_uint16_blosc_slash.zarr")), nginx.root() / "z5.zarr");
  test::TempDir tmp;
  run_peer("write " + test::quote((nginx.root() / "theirs.zarr").string()) + " " + test::quote(tmp.path().string()));
  for (const auto& [name, arrays] : std::vector<std::pair<std::string, size_t>>{{"z5.zarr", 1}, {"theirs.zarr", 80}}) {
    CAPTURE(name);
    const std::string url = nginx.url(name);
    stowage::Store local = open_zarr((nginx.root() / name).string());
    stowage::Store remote = stowage::Store::open(url);  // detected over HTTP too
    CHECK(remote.format() == "zarr");
    CHECK(compare_trees(local, remote, "") == arrays);
    test::Failure write = test::failure_of([&] { stowage::Store::open(url, stowage::Mode::update, "zarr"); });
    CHECK(write.code != stowage::ErrorCode::ok);
    CHECK_MESSAGE(write.message.find(url) != std::string::npos, write.message);
  }
}

TEST_CASE("zarr v3 over HTTP: z5's sharded and unsharded v3 stores read from nginx equal to the local read "
          "(shard indexes and inner chunks as ranged GETs)" *
          test::needs({"http", "gzip", "zstd"})) {
  test::Nginx nginx;
  for (const char* name : {"v3_uint16_raw", "v3_int32_zstd_sharded", "v3_float32_gzip_sharded_partial"}) {
    CAPTURE(name);
    fs::create_directory_symlink(fs::absolute(fixture(std::string(name) + ".zarr")), nginx.root() / name);
    stowage::Store local = open_zarr(fixture(std::string(name) + ".zarr").string());
    stowage::Store remote = stowage::Store::open(nginx.url(name));
    CHECK(remote.format() == "zarr");
    CHECK(compare_trees(local, remote, "") == 1);
    CHECK(read_bytes(remote.array("data")) == test::read_file(fixture(std::string(name) + ".expected.bin")));
  }
}
