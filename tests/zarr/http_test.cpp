// The Zarr plugin over HTTP: a private nginx (tests/http/nginx.hpp, Debian's
// nginx with JSON listings) serves the z5 fixture and a store zarr-python
// writes, and every node reads from its URL equal to the local read, through
// the http storage backend. Writing to a URL is refused, naming it.
#include "../http/flaky_proxy.hpp"
#include "../http/nginx.hpp"
#include "zarr_helpers.hpp"

#include <cstring>

using namespace zarrtest;

namespace {

// Compares every node under `node` of two opens of one store: the same tree,
// descriptions and values. Returns the number of arrays compared.
size_t compare_trees(const stowage::Store& local, const stowage::Store& remote,
                     const std::string& node) {
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
  for (const std::string& child : children)
    arrays += compare_trees(local, remote, node.empty() ? child : node + "/" + child);
  return arrays;
}

}  // namespace

TEST_CASE(
    "zarr over HTTP: the z5 store and one zarr-python wrote read from nginx equal to the local read" *
    test::needs({"http", "blosc", "gzip", "bzip2", "xz", "zstd", "lz4"})) {
  test::Nginx nginx;
  fs::create_directory_symlink(fs::absolute(fixture("v2_uint16_blosc_slash.zarr")),
                               nginx.root() / "z5.zarr");
  test::TempDir tmp;
  run_peer("write " + test::quote((nginx.root() / "theirs.zarr").string()) + " " +
           test::quote(tmp.path().string()));
  for (const auto& [name, arrays] :
       std::vector<std::pair<std::string, size_t>>{{"z5.zarr", 1}, {"theirs.zarr", 80}}) {
    CAPTURE(name);
    const std::string url = nginx.url(name);
    stowage::Store local = open_zarr((nginx.root() / name).string());
    stowage::Store remote = stowage::Store::open(url);  // detected over HTTP too
    CHECK(remote.format() == "zarr");
    CHECK(compare_trees(local, remote, "") == arrays);
    test::Failure write =
        test::failure_of([&] { stowage::Store::open(url, stowage::Mode::update, "zarr"); });
    CHECK(write.code != stowage::ErrorCode::ok);
    CHECK_MESSAGE(write.message.find(url) != std::string::npos, write.message);
  }
}

TEST_CASE(
    "zarr v3 over HTTP: z5's sharded and unsharded v3 stores read from nginx equal to the local read "
    "(shard indexes and inner chunks as ranged GETs)" *
    test::needs({"http", "gzip", "zstd"})) {
  test::Nginx nginx;
  for (const char* name :
       {"v3_uint16_raw", "v3_int32_zstd_sharded", "v3_float32_gzip_sharded_partial"}) {
    CAPTURE(name);
    fs::create_directory_symlink(fs::absolute(fixture(std::string(name) + ".zarr")),
                                 nginx.root() / name);
    stowage::Store local = open_zarr(fixture(std::string(name) + ".zarr").string());
    stowage::Store remote = stowage::Store::open(nginx.url(name));
    CHECK(remote.format() == "zarr");
    CHECK(compare_trees(local, remote, "") == 1);
    CHECK(read_bytes(remote.array("data")) ==
          test::read_file(fixture(std::string(name) + ".expected.bin")));
  }
}

namespace {

// "bytes=A-B" -> B - A + 1; 0 for anything else.
uint64_t range_length(const std::string& range) {
  uint64_t first = 0, last = 0;
  if (std::sscanf(range.c_str(), "bytes=%lu-%lu", &first, &last) != 2 || last < first) return 0;
  return last - first + 1;
}

// The fixture shard's index, read here from the file itself: (offset,
// length) per inner chunk, little endian, at the end before its crc32c.
std::vector<std::pair<uint64_t, uint64_t>> shard_index(const std::string& shard,
                                                       size_t inner_chunks) {
  std::vector<std::pair<uint64_t, uint64_t>> entries(inner_chunks);
  const char* index = shard.data() + shard.size() - 4 - 16 * inner_chunks;
  for (size_t i = 0; i < inner_chunks; ++i) {
    std::memcpy(&entries[i].first, index + 16 * i, 8);
    std::memcpy(&entries[i].second, index + 16 * i + 8, 8);
  }
  return entries;
}

}  // namespace

TEST_CASE(
    "zarr v3 sharding over HTTP: reading one inner chunk fetches the shard's index and that chunk, nothing more" *
    test::needs({"http", "zstd"})) {
  // z5's 64^3 int32 store: 32^3 shards of 16^3 zstd inner chunks (8 per
  // shard), index at the end with crc32c (8 * 16 + 4 bytes).
  const std::string name = "v3_int32_zstd_sharded";
  test::Nginx nginx;
  fs::create_directory_symlink(fs::absolute(fixture(name + ".zarr")), nginx.root() / name);
  test::FlakyProxy proxy(nginx.port());
  const std::string shard = test::read_file(fixture(name + ".zarr") / "data" / "c.0.0.0");
  const auto index = shard_index(shard, 8);
  const std::string expected = test::read_file(fixture(name + ".expected.bin"));
  stowage::Registry::global().set_threads(1);
  stowage::Store remote = stowage::Store::open(proxy.url(name), stowage::Mode::read, "zarr");
  stowage::Array a = remote.array("data");
  // Inner chunk (1, 0, 1) of shard (0, 0, 0), then (0, 1, 1) of the same shard.
  for (const auto& [at, entry, expected_requests] :
       std::vector<std::tuple<std::vector<uint64_t>, size_t, size_t>>{{{16, 0, 16}, 5, 3},
                                                                      {{0, 16, 16}, 3, 1}}) {
    CAPTURE(entry);
    proxy.take_requests();
    std::vector<int32_t> got(16 * 16 * 16);
    a.read(at, {16, 16, 16}, got.data());
    for (uint64_t z = 0; z < 16; ++z)
      for (uint64_t y = 0; y < 16; ++y) {
        const size_t from = ((at[0] + z) * 64 + at[1] + y) * 64 + at[2];
        REQUIRE(std::memcmp(&got[(z * 16 + y) * 16], expected.data() + 4 * from, 16 * 4) == 0);
      }
    uint64_t ranged = 0;
    const std::vector<test::FlakyProxy::Request> requests = proxy.take_requests();
    for (const auto& r : requests) {
      CAPTURE(r.line);
      CHECK(r.line.find("/" + name + "/data/c.0.0.0 ") != std::string::npos);
      if (r.line.rfind("GET ", 0) == 0) {
        CHECK(range_length(r.range) > 0);  // never the whole shard
        ranged += range_length(r.range);
      }
    }
    // The first read: a stat, the index, the chunk; the second: the chunk
    // alone (the handle keeps the index).
    CHECK(requests.size() <= expected_requests);
    const uint64_t index_bytes = entry == 5 ? 8 * 16 + 4 : 0;
    CHECK(ranged == index_bytes + index[entry].second);
    CHECK(ranged < shard.size() / 4);
  }
}
