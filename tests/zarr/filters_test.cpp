// numcodecs' filters (delta, shuffle, astype, fixedscaleoffset, quantize,
// bitround, packbits: codec plugins; plugins/formats/zarr/filter_chain.hpp)
// against zarr-python 2.13: arrays it writes with each filter, alone and
// chained, over several dtypes in both byte orders and with compressors,
// read equal to numpy's values; the data zarr-python was given, written by
// stowage with the filters its describe() shows, read by zarr-python equal
// to its own store, and byte for byte the chunk files numcodecs wrote where
// there is no compressor.
#include "zarr_helpers.hpp"

#include <algorithm>

using namespace zarrtest;

namespace {

// zarr-python's filtered store (zarr_peer.py write-filters) and its dumps.
struct Filtered {
  test::TempDir tmp;
  fs::path theirs = tmp / "theirs.zarr", out = tmp / "dump";
  json manifest;
  Filtered() {
    fs::create_directories(out);
    run_peer("write-filters " + test::quote(theirs.string()) + " " + test::quote(out.string()));
    manifest = test::read_json(out / "manifest.json");
  }
  bool skipped(const json& entry) const { return test::plugin_off(plugin_of(entry["compressor"])); }
};

}  // namespace

TEST_CASE(
    "zarr filters: zarr-python writes each numcodecs filter (alone and chained), stowage reads numpy's values") {
  Filtered f;
  REQUIRE(f.manifest["arrays"].size() == 27);
  stowage::Store store = open_zarr(f.theirs.string());
  size_t read = 0;
  for (const json& entry : f.manifest["arrays"]) {
    const std::string node = entry["node"];
    CAPTURE(node);
    if (f.skipped(entry)) continue;
    const json d = store.describe_json(node);
    // The user sees the filters as the file has them.
    CHECK(unordered(d["storage"]["filters"]) == unordered(entry["written"]["filters"]));
    CHECK(unordered(d["storage"]["compressor"]) == unordered(entry["compressor"]));
    CHECK(d["shape"] == entry["shape"]);
    CHECK(read_bytes(store.array(node)) == dumped(f.out, node));
    ++read;
  }
  MESSAGE("read " << read << " filtered arrays zarr-python wrote");
  CHECK(read >= 17);
}

TEST_CASE(
    "zarr filters: stowage writes the same data with the same filters, zarr-python reads the same values") {
  Filtered f;
  stowage::Store theirs = open_zarr(f.theirs.string());
  const fs::path ours_path = f.tmp / "ours.zarr", out = f.tmp / "ours-dump";
  fs::create_directories(out);
  std::string nodes;
  {
    stowage::Store ours = stowage::Store::open(ours_path.string(), stowage::Mode::create, "zarr",
                                               {{"zarr_version", 2}});
    for (const json& entry : f.manifest["arrays"]) {
      if (f.skipped(entry)) continue;
      const std::string node = entry["node"];
      CAPTURE(node);
      ours.create(node, theirs.describe_json(node));
      // The data zarr-python was given (before astype or a float delta
      // rounded it), over the same rows.
      const std::string data = test::read_file(f.out / (node + ".orig.bin"));
      stowage::Array a = ours.array(node);
      std::vector<uint64_t> region = a.shape();
      if (!entry["rows"].is_null()) region[0] = entry["rows"].get<uint64_t>();
      a.write(std::vector<uint64_t>(a.ndim(), 0), region, data.data());
      nodes += " " + node;
    }
    ours.close();
  }
  const std::map<std::string, json> seen = lines_by_node(run_peer(
      "read " + test::quote(ours_path.string()) + " " + test::quote(out.string()) + nodes));
  size_t identical = 0;
  for (const json& entry : f.manifest["arrays"]) {
    const std::string node = entry["node"];
    CAPTURE(node);
    if (f.skipped(entry)) continue;
    REQUIRE(seen.count(node));
    CHECK(unordered(seen.at(node)["filters"]) == unordered(entry["written"]["filters"]));
    CHECK(dumped(out, node) == dumped(f.out, node));  // numpy's values of both: the same rounding
    // No compressor: each chunk file numcodecs wrote is the one stowage writes.
    if (!entry["compressor"].is_null()) continue;
    for (const auto& e : fs::directory_iterator(f.theirs / node)) {
      if (e.path().filename().string()[0] == '.') continue;
      CAPTURE(e.path().filename().string());
      CHECK(test::read_file(ours_path / node / e.path().filename()) == test::read_file(e.path()));
      ++identical;
    }
  }
  MESSAGE(identical << " uncompressed filtered chunk files byte-identical to numcodecs'");
  CHECK(identical >= 53);
}

TEST_CASE(
    "zarr filters in v3: the same arrays in a v3 store, sharded and not, carry numcodecs.<id> "
    "before bytes, read the same values and, uncompressed, store numcodecs' bytes") {
  // zarr-python 3 writes numcodecs' filters into v3 as "numcodecs.<id>"
  // codecs before "bytes", each encoding as numcodecs does; so an
  // uncompressed C-order little-endian chunk is the v2 chunk file itself.
  // Sharded, the filters are the inner chunks' codecs.
  Filtered f;
  stowage::Store theirs = open_zarr(f.theirs.string());
  const fs::path v3_path = f.tmp / "v3.zarr", v2_path = f.tmp / "v2.zarr",
                 sharded_path = f.tmp / "sharded.zarr";
  size_t identical = 0, read = 0;
  for (const fs::path& path : {v2_path, v3_path, sharded_path}) {
    stowage::Store out = stowage::Store::open(path.string(), stowage::Mode::create, "zarr",
                                              {{"zarr_version", path == v2_path ? 2 : 3}});
    for (const json& entry : f.manifest["arrays"]) {
      if (f.skipped(entry)) continue;
      const std::string node = entry["node"];
      CAPTURE(node);
      json d = theirs.describe_json(node);
      if (path == sharded_path) {  // two inner chunks a side
        d["shards"] = d["chunks"];
        for (json& e : d["shards"]) e = 2 * e.get<uint64_t>();
      }
      out.create(node, d);
      const std::string values = read_bytes(theirs.array(node));
      stowage::Array a = out.array(node);
      a.write(std::vector<uint64_t>(a.ndim(), 0), a.shape(), values.data());
    }
    out.close();
  }
  stowage::Store v3 = open_zarr(v3_path.string()), v2 = open_zarr(v2_path.string()),
                 sharded = open_zarr(sharded_path.string());
  for (const json& entry : f.manifest["arrays"]) {
    if (f.skipped(entry)) continue;
    const std::string node = entry["node"];
    CAPTURE(node);
    std::vector<std::string> expected;
    for (const json& filter : entry["written"]["filters"])
      expected.push_back("numcodecs." + filter["id"].get<std::string>());
    for (const fs::path& path : {v3_path, sharded_path}) {
      const json doc = test::read_json(path / node / "zarr.json");
      const json& codecs =
          path == v3_path ? doc["codecs"] : doc["codecs"][0]["configuration"]["codecs"];
      std::vector<std::string> names;
      for (const json& c : codecs) names.push_back(c["name"]);
      CAPTURE(doc["codecs"].dump());
      REQUIRE(names.size() >= expected.size() + 1);
      CHECK(std::vector<std::string>(names.begin(), names.begin() + expected.size()) == expected);
      CHECK(names[expected.size()] == "bytes");
    }
    // What stowage reads back of the same values through the same filters
    // in v2 (float deltas are lossy: a re-encoding need not give them back).
    const std::string values = read_bytes(v2.array(node));
    CHECK(read_bytes(v3.array(node)) == values);
    CHECK(read_bytes(sharded.array(node)) == values);
    ++read;
    const json d = theirs.describe_json(node);
    if (!entry["compressor"].is_null() || d["order"] != "C" || d["byte_order"] != "little")
      continue;
    for (const auto& e : fs::directory_iterator(f.theirs / node)) {
      const std::string name = e.path().filename().string();
      if (name[0] == '.') continue;
      std::string key = "c/" + name;
      std::replace(key.begin(), key.end(), '.', '/');
      CAPTURE(key);
      CHECK(test::read_file(v3_path / node / key) == test::read_file(e.path()));
      ++identical;
    }
  }
  MESSAGE(read << " filtered arrays in v3, " << identical
               << " uncompressed chunks byte-identical to numcodecs'");
  CHECK(read >= 8);
  CHECK(identical >= 4);
}
