// Zarr v3 and sharding: the stores z5 wrote (tests/fixtures/zarr/v3_*),
// round trips through our own writer (sharded and not, several data types
// and codecs), sharded writes that never read a shard they replace whole,
// and shards left incomplete merged when the store closes.
#include "storage_checks.hpp"
#include "zarr_helpers.hpp"

#include <boost/crc.hpp>

#include <cmath>
#include <cstring>

using namespace zarrtest;

namespace {

const stowage::json kV2 = {{"zarr_version", 2}};

// The expected value of element `flat` (C order) of a fixture, as double.
double expected_at(const std::string& bin, const std::string& dtype, uint64_t flat) {
  if (dtype == "uint16") {
    uint16_t v;
    std::memcpy(&v, bin.data() + 2 * flat, 2);
    return v;
  }
  if (dtype == "int32") {
    int32_t v;
    std::memcpy(&v, bin.data() + 4 * flat, 4);
    return v;
  }
  float v;
  std::memcpy(&v, bin.data() + 4 * flat, 4);
  return v;
}

// Reads a block of a fixture array and compares it with the expected bytes.
size_t block_mismatches(const stowage::Array& a, const std::string& bin, const std::string& dtype,
                        const std::vector<uint64_t>& offset, const std::vector<uint64_t>& shape) {
  const std::vector<uint64_t> full = a.shape();
  uint64_t n = 1;
  for (uint64_t s : shape) n *= s;
  std::string part(n * stowage::dtype_size(a.dtype()), '\0');
  a.read(offset, shape, part.data());
  size_t bad = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t rest = i, flat = 0, stride = 1;
    std::vector<uint64_t> at(shape.size());
    for (size_t d = shape.size(); d-- > 0;) at[d] = rest % shape[d], rest /= shape[d];
    for (size_t d = shape.size(); d-- > 0;) flat += (offset[d] + at[d]) * stride, stride *= full[d];
    bad += expected_at(part, dtype, i) != expected_at(bin, dtype, flat);
  }
  return bad;
}

void check_v3_fixture(const std::string& name) {
  CAPTURE(name);
  const json expected = test::read_json(fixture(name + ".expected.json"));
  const std::string bin = test::read_file(fixture(name + ".expected.bin"));
  stowage::Store store = stowage::Store::open(fixture(name + ".zarr").string());  // detected
  CHECK(store.format() == "zarr");
  CHECK(store.list("") == std::vector<std::string>{"data"});
  CHECK(store.describe("").attributes == expected["root_attributes"]);
  const json d = store.describe_json("data");
  CAPTURE(d.dump());
  CHECK(d["dtype"] == expected["dtype"]);
  CHECK(d["shape"] == expected["shape"]);
  CHECK(d["chunks"] == expected["chunks"]);
  if (expected.contains("shards"))
    CHECK(d["shards"] == expected["shards"]);
  else
    CHECK_FALSE(d.contains("shards"));
  CHECK(d["fill_value"] == expected["fill_value"]);
  CHECK(d["byte_order"] == "little");
  CHECK(d["order"] == "C");
  CHECK(d["storage"]["zarr_format"] == 3);
  if (expected["compressor"] == "raw")
    CHECK(d["codec"].is_null());
  else
    CHECK(d["codec"]["type"] == expected["compressor"]);

  stowage::Array a = store.array("data");
  CHECK(read_bytes(a) == bin);
  // Blocks across (inner) chunk and shard boundaries.
  const std::string dtype = expected["dtype"];
  if (a.ndim() == 3) {
    CHECK(block_mismatches(a, bin, dtype, {5, 13, 7}, {30, 20, 40}) == 0);
    CHECK(block_mismatches(a, bin, dtype, {31, 31, 31}, {2, 2, 2}) == 0);
  } else {
    CHECK(block_mismatches(a, bin, dtype, {3, 5}, {30, 20}) == 0);
    CHECK(block_mismatches(a, bin, dtype, {17, 0}, {10, 30}) == 0);
  }
}

// Values 0, 1, 2, ... times scale, as T (bool: every third true). Integers
// go through int64 so that they wrap (uint8: 0..255, 0..): converting a
// double out of T's range is undefined.
template <class T>
std::vector<T> ramp(uint64_t n, double scale = 1) {
  std::vector<T> v(n);
  for (uint64_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(i % 1000) * scale;
    if constexpr (std::is_same_v<T, bool>)
      v[i] = i % 3 == 0;
    else if constexpr (std::is_integral_v<T>)
      v[i] = static_cast<T>(static_cast<int64_t>(x));
    else
      v[i] = static_cast<T>(x);
  }
  return v;
}

}  // namespace

TEST_CASE(
    "zarr v3 fixture: z5's unsharded uint16 store (bytes codec, '.' keys) reads equal to its expected values") {
  check_v3_fixture("v3_uint16_raw");
  stowage::Array a = open_zarr(fixture("v3_uint16_raw.zarr").string()).array("data");
  CHECK(a.chunk_exists({3, 3, 4}));
}

TEST_CASE("zarr v3 fixture: z5's sharded int32 zstd store (index at the end, crc32c) reads equal" *
          test::needs({"zstd"})) {
  check_v3_fixture("v3_int32_zstd_sharded");
  stowage::Array a = open_zarr(fixture("v3_int32_zstd_sharded.zarr").string()).array("data");
  CHECK(a.chunk_exists({0, 0, 0}));
  CHECK(a.chunk_exists({3, 3, 3}));
}

TEST_CASE(
    "zarr v3 fixture: z5's partly written sharded float32 gzip store: empty inner chunks read as the fill value" *
    test::needs({"gzip"})) {
  check_v3_fixture("v3_float32_gzip_sharded_partial");
  stowage::Array a =
      open_zarr(fixture("v3_float32_gzip_sharded_partial.zarr").string()).array("data");
  CHECK(a.chunk_exists({0, 0}));        // rows 0..7: written
  CHECK(a.chunk_exists({2, 3}));        // rows 16..23 hold written rows 16..19
  CHECK_FALSE(a.chunk_exists({3, 0}));  // rows 24..31: an empty entry of shard (1, 0)
  CHECK_FALSE(a.chunk_exists({4, 3}));  // shard (2, 1) has no file
}

TEST_CASE(
    "zarr v3 fixture: the sharded store from memory (mem://) reads the same, through the storage layer" *
    test::needs({"zstd"})) {
  const std::string name = "v3_int32_zstd_sharded";
  const std::string key = "mem://zarr-v3-fixtures/" + name + ".zarr";
  test::copy_into_storage(fixture(name + ".zarr"), key);
  stowage::Store store = stowage::Store::open(key);
  CHECK(store.format() == "zarr");
  CHECK(read_bytes(store.array("data")) == test::read_file(fixture(name + ".expected.bin")));
}

TEST_CASE(
    "zarr v3: a new store is v3 unless {\"zarr_version\": 2}; an existing store keeps its version") {
  test::TempDir tmp;
  stowage::Store v3 =
      stowage::Store::open((tmp / "new.zarr").string(), stowage::Mode::create, "zarr");
  v3.create("g/a", {{"kind", "array"}, {"dtype", "int16"}, {"shape", {4}}, {"chunks", {2}}});
  v3.close();
  CHECK(fs::exists(tmp / "new.zarr" / "zarr.json"));
  CHECK(fs::exists(tmp / "new.zarr" / "g" / "zarr.json"));
  CHECK(test::read_json(tmp / "new.zarr" / "g" / "a" / "zarr.json")["node_type"] == "array");
  CHECK_FALSE(fs::exists(tmp / "new.zarr" / ".zgroup"));
  stowage::Store v2 =
      stowage::Store::open((tmp / "old.zarr").string(), stowage::Mode::create, "zarr", kV2);
  v2.close();
  CHECK(fs::exists(tmp / "old.zarr" / ".zgroup"));
  // Reopened for writing without options: still v2, and "shards" is refused there.
  stowage::Store again =
      stowage::Store::open((tmp / "old.zarr").string(), stowage::Mode::create, "zarr");
  std::string message = TEST_REQUIRE_ERROR(again.create("s", {{"kind", "array"},
                                                              {"dtype", "int16"},
                                                              {"shape", {4}},
                                                              {"chunks", {2}},
                                                              {"shards", {4}}}),
                                           stowage::ErrorCode::invalid_argument);
  CHECK(message.find("v2") != std::string::npos);
  TEST_REQUIRE_ERROR(stowage::Store::open((tmp / "x.zarr").string(), stowage::Mode::create, "zarr",
                                          {{"zarr_version", 4}}),
                     stowage::ErrorCode::invalid_argument);
}

TEST_CASE("zarr v3: round trips of several data types, codecs, orders, sharded and not" *
          test::needs({"gzip", "zstd", "blosc"})) {
  test::TempDir tmp;
  const std::string path = (tmp / "rt.zarr").string();
  struct Case {
    std::string name, dtype;
    json codec;
    bool sharded;
    std::string order, byte_order;
  };
  const std::vector<Case> cases = {
      {"u16_raw", "uint16", nullptr, false, "C", "little"},
      {"i32_gzip_sharded", "int32", {{"type", "gzip"}, {"level", 3}}, true, "C", "little"},
      {"f64_zstd_sharded_big", "float64", {{"type", "zstd"}, {"level", 1}}, true, "C", "big"},
      {"u8_blosc_f",
       "uint8",
       {{"type", "blosc"}, {"cname", "zstd"}, {"clevel", 3}, {"shuffle", 2}},
       false,
       "F",
       "little"},
      {"f32_blosc_sharded_f",
       "float32",
       {{"type", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 1}},
       true,
       "F",
       "little"},
      {"i64_gzip", "int64", {{"type", "gzip"}, {"level", 1}}, false, "C", "big"},
      {"bool_sharded", "bool", nullptr, true, "C", "little"},
  };
  const std::vector<uint64_t> shape{13, 17, 10};
  const uint64_t n = 13 * 17 * 10;
  std::map<std::string, std::string> written;
  {
    stowage::Store store = stowage::Store::open(path, stowage::Mode::create, "zarr");
    for (const Case& c : cases) {
      json d = {{"kind", "array"},     {"dtype", c.dtype}, {"shape", shape},
                {"chunks", {4, 4, 5}}, {"order", c.order}, {"byte_order", c.byte_order},
                {"fill_value", 7}};
      if (c.dtype == "bool") d["fill_value"] = false;
      if (!c.codec.is_null()) d["codec"] = c.codec;
      if (c.sharded) d["shards"] = {8, 8, 10};
      store.create(c.name, d);
      stowage::Array a = store.array(c.name);
      std::string bytes(n * stowage::dtype_size(a.dtype()), '\0');
      if (c.dtype == "uint16") std::memcpy(bytes.data(), ramp<uint16_t>(n).data(), bytes.size());
      if (c.dtype == "int32") std::memcpy(bytes.data(), ramp<int32_t>(n, -3).data(), bytes.size());
      if (c.dtype == "float64")
        std::memcpy(bytes.data(), ramp<double>(n, 0.25).data(), bytes.size());
      if (c.dtype == "uint8") std::memcpy(bytes.data(), ramp<uint8_t>(n).data(), bytes.size());
      if (c.dtype == "float32") std::memcpy(bytes.data(), ramp<float>(n, 1.5).data(), bytes.size());
      if (c.dtype == "int64") std::memcpy(bytes.data(), ramp<int64_t>(n, -7).data(), bytes.size());
      if (c.dtype == "bool") {
        std::vector<bool> b = ramp<bool>(n);
        for (uint64_t i = 0; i < n; ++i) bytes[i] = b[i];
      }
      a.write(std::vector<uint64_t>(3, 0), shape, bytes.data());
      written[c.name] = bytes;
    }
    store.close();
  }
  stowage::Store store = open_zarr(path);
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const json d = store.describe_json(c.name);
    CHECK(d["dtype"] == c.dtype);
    CHECK(d["order"] == c.order);
    CHECK(d["chunks"] == json({4, 4, 5}));
    CHECK(d.contains("shards") == c.sharded);
    CHECK(read_bytes(store.array(c.name)) == written[c.name]);
  }
  // The sharded files are shards: one per 8x8x10 block, none per inner chunk.
  CHECK(fs::exists(tmp / "rt.zarr" / "i32_gzip_sharded" / "c" / "1" / "2" / "0"));
  CHECK_FALSE(fs::exists(tmp / "rt.zarr" / "i32_gzip_sharded" / "c" / "3"));
  CHECK(fs::exists(tmp / "rt.zarr" / "u16_raw" / "c" / "3" / "4" / "1"));
}

TEST_CASE(
    "zarr v3 sharding: a region write covering whole shards never reads them; a partial one merges before it returns" *
    test::needs({"gzip"})) {
  test::TempDir tmp;
  const std::string path = (tmp / "s.zarr").string();
  const json d = {{"kind", "array"},  {"dtype", "int32"}, {"shape", {16, 12}},
                  {"chunks", {4, 4}}, {"shards", {8, 8}}, {"codec", {{"type", "gzip"}}},
                  {"fill_value", -1}};
  std::vector<int32_t> first(16 * 12);
  for (size_t i = 0; i < first.size(); ++i) first[i] = int32_t(i);
  {
    stowage::Store store = stowage::Store::open(path, stowage::Mode::create, "zarr");
    store.create("a", d);
    store.array("a").write({0, 0}, {16, 12}, first.data());
    store.close();
  }
  // Every shard replaced by garbage: a write covering whole shards must not
  // read them (their index would be CORRUPT), and must replace them.
  const fs::path shard00 = tmp / "s.zarr" / "a" / "c" / "0" / "0";
  REQUIRE(fs::exists(shard00));
  for (const char* s : {"0/0", "0/1", "1/0", "1/1"})
    test::write_file(tmp / "s.zarr" / "a" / "c" / s, "garbage");
  std::vector<int32_t> second(first.size());
  for (size_t i = 0; i < second.size(); ++i) second[i] = int32_t(1000 + i);
  {
    stowage::Store store = stowage::Store::open(path, stowage::Mode::update, "zarr");
    store.array("a").write({0, 0}, {16, 12}, second.data());
    store.close();
  }
  std::vector<int32_t> back(first.size());
  open_zarr(path).array("a").read({0, 0}, {16, 12}, back.data());
  CHECK(back == second);

  // A write of one inner chunk is merged with the shard on disk before it returns.
  std::vector<int32_t> patch(16, 5);
  {
    stowage::Store store = stowage::Store::open(path, stowage::Mode::update, "zarr");
    store.array("a").write({4, 4}, {4, 4}, patch.data());
    // Read back through the same store before close: the buffered chunk.
    std::vector<int32_t> mid(16);
    store.array("a").read({4, 4}, {4, 4}, mid.data());
    CHECK(mid == patch);
    store.close();
  }
  for (uint64_t r = 4; r < 8; ++r)
    for (uint64_t c = 4; c < 8; ++c) second[r * 12 + c] = 5;
  open_zarr(path).array("a").read({0, 0}, {16, 12}, back.data());
  CHECK(back == second);

  // The merge reads the shard: a corrupt one fails the write, naming it.
  test::write_file(shard00, "garbage");
  stowage::Store store = stowage::Store::open(path, stowage::Mode::update, "zarr");
  std::string message = TEST_REQUIRE_ERROR(store.array("a").write({0, 0}, {4, 4}, patch.data()),
                                           stowage::ErrorCode::corrupt);
  CHECK(message.find(shard00.string()) != std::string::npos);
  store.close();
  CHECK(test::read_file(shard00) == "garbage");  // nothing published over it
}

TEST_CASE(
    "zarr v3 sharding: an edge shard is complete with the inner chunks inside the array; fill chunks stay empty" *
    test::needs({"zstd"})) {
  test::TempDir tmp;
  const std::string path = (tmp / "e.zarr").string();
  std::vector<uint16_t> values(10 * 10, 0);
  for (size_t i = 50; i < values.size(); ++i) values[i] = uint16_t(i);
  {
    stowage::Store store = stowage::Store::open(path, stowage::Mode::create, "zarr");
    store.create("a", {{"kind", "array"},
                       {"dtype", "uint16"},
                       {"shape", {10, 10}},
                       {"chunks", {2, 2}},
                       {"shards", {8, 8}},
                       {"codec", {{"type", "zstd"}}}});
    store.array("a").write({0, 0}, {10, 10}, values.data());
    store.close();
  }
  stowage::Array a = open_zarr(path).array("a");
  std::vector<uint16_t> back(100);
  a.read({0, 0}, {10, 10}, back.data());
  CHECK(back == values);
  CHECK_FALSE(a.chunk_exists({0, 0}));  // all zeros: the fill value, left empty
  CHECK(a.chunk_exists({4, 4}));
  // The shard file of the edge: 16 entries (4x4 inner chunks), 16 bytes each, and a crc32c.
  const std::string shard = test::read_file(tmp / "e.zarr" / "a" / "c" / "1" / "1");
  CHECK(shard.size() > 16 * 16 + 4);
}

// ---- zarrita (npm), the v3 peer: tests/zarr/zarrita_peer.mjs ----------------------

namespace {

std::string run_zarrita(const std::string& args) {
  const fs::path script = test::source_root() / "tests" / "zarr" / "zarrita_peer.mjs";
  test::RunResult r = test::run("node " + test::quote(script.string()) + " " + args);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  return r.output;
}

template <class T>
std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

}  // namespace

// A shard's inner chunks go into its staged file in C order as they come
// (PendingShard): here they come last first, one is written again after it
// went into the file, they are read back before their shard is done, and 80
// shards are open at once, more than the 64 the store keeps files for (the
// rest wait in memory). zarrita reads the result equal, the rewritten
// chunk's old bytes left as unused space in its shard. Uncompressed, each
// inner chunk is written straight into its place in the shard instead
// (place_inner_chunk). Both with the index at the end and at the start.
TEST_CASE(
    "zarr v3 sharding: inner chunks out of order, rewritten, read before their shard is done, 80 shards open" *
    test::needs({"zstd"})) {
  for (const json& codec : {json{{"type", "zstd"}}, json{{"type", "raw"}}})
    for (const std::string index_location : {"end", "start"}) {
      CAPTURE(codec);
      CAPTURE(index_location);
      test::TempDir tmp;
      const fs::path path = tmp / "o.zarr", out = tmp / "out";
      fs::create_directories(out);
      const uint64_t shards = 80;
      const std::vector<uint64_t> shape{4, 4 * shards};
      std::vector<int32_t> expected(shape[0] * shape[1], -1);
      auto write = [&](stowage::Array& a, uint64_t shard, uint64_t r, uint64_t c, int32_t base) {
        std::vector<int32_t> v(4);
        for (size_t k = 0; k < 4; ++k) v[k] = base + int32_t(shard * 10 + k);
        const uint64_t row = 2 * r, col = 4 * shard + 2 * c;
        a.write({row, col}, {2, 2}, v.data());
        for (size_t k = 0; k < 4; ++k) expected[(row + k / 2) * shape[1] + col + k % 2] = v[k];
        return v;
      };
      {
        stowage::Store store = stowage::Store::open(path.string(), stowage::Mode::create, "zarr");
        store.create("a", {{"kind", "array"},
                           {"dtype", "int32"},
                           {"shape", shape},
                           {"chunks", {2, 2}},
                           {"shards", {4, 4}},
                           {"codec", codec},
                           {"fill_value", -1}});
        store.close();
      }
      // The index at the start, as another writer may have chosen.
      const fs::path meta = path / "a" / "zarr.json";
      json doc = test::read_json(meta);
      REQUIRE(doc["codecs"][0]["name"] == "sharding_indexed");
      doc["codecs"][0]["configuration"]["index_location"] = index_location;
      test::write_file(meta, doc.dump(2));
      {
        stowage::Store store = stowage::Store::open(path.string(), stowage::Mode::update, "zarr");
        stowage::Array a = store.array("a");
        for (uint64_t s = 0; s < shards; ++s) write(a, s, 1, 1, 1000);  // inner chunk 3 first
        for (uint64_t s = 0; s < shards; ++s) write(a, s, 0, 0, 2000);
        for (uint64_t s = 0; s < shards; ++s) {
          const std::vector<int32_t> again = write(a, s, 0, 0, 3000);  // written again
          std::vector<int32_t> back(4), early(4);
          a.read({0, 4 * s}, {2, 2}, back.data());
          CHECK(back == again);
          a.read({2, 4 * s + 2}, {2, 2}, early.data());
          CHECK(early[0] == 1000 + int32_t(s * 10));
          CHECK(a.chunk_exists({0, 2 * s}));
          CHECK_FALSE(a.chunk_exists({0, 2 * s + 1}));
          // All fill value: held with an empty entry, so not stored.
          const std::vector<int32_t> fill(4, -1);
          a.write({0, 4 * s + 2}, {2, 2}, fill.data());
          CHECK_FALSE(a.chunk_exists({0, 2 * s + 1}));
        }
        for (uint64_t s = 0; s < shards; ++s) write(a, s, 0, 1, 4000);
        for (uint64_t s = 0; s < shards; ++s)
          write(a, s, 1, 0, 5000);  // each shard complete: published
        store.close();
      }
      std::vector<int32_t> back(expected.size());
      open_zarr(path.string()).array("a").read({0, 0}, shape, back.data());
      CHECK(back == expected);
      // zarrita 0.7.5 reads every shard index from the end of the file
      // (sharding.js asks for a suffix range; index_location is not read).
      if (index_location != "end") continue;
      const std::map<std::string, json> lines = lines_by_node(run_zarrita(
          "read " + test::quote(path.string()) + " " + test::quote(out.string()) + " a"));
      REQUIRE(lines.count("a"));
      CHECK(dumped(out, "a") == bytes_of(expected));
    }
}

TEST_CASE("zarr v3 peer: zarrita reads what stowage writes, sharded and not, equal" *
          test::needs({"gzip", "zstd", "blosc", "lz4"})) {
  test::TempDir tmp;
  const fs::path path = tmp / "ours.zarr", out = tmp / "out";
  fs::create_directories(out);
  const std::vector<uint64_t> shape{20, 15, 9};
  const uint64_t n = 20 * 15 * 9;
  struct Case {
    std::string name, dtype;
    json codec;
    json shards;
    std::string order = "C", byte_order = "little";
    json storage = json::object();
  };
  const std::vector<Case> cases = {
      {"u16_sharded_zstd", "uint16", {{"type", "zstd"}, {"level", 3}}, {8, 10, 9}},
      {"i32_sharded_gzip_big", "int32", {{"type", "gzip"}}, {16, 5, 9}, "C", "big"},
      {"f32_blosc_f",
       "float32",
       {{"type", "blosc"}, {"cname", "lz4"}, {"shuffle", 1}},
       nullptr,
       "F"},
      {"i16_zstd", "int16", {{"type", "zstd"}}, nullptr},
      // lz4 has no v3 name: written as zarr-python 3's numcodecs.lz4, which zarrita reads
      {"i32_lz4", "int32", {{"type", "lz4"}, {"acceleration", 2}}, nullptr},
      {"bool_sharded_f", "bool", {{"type", "gzip"}}, {8, 10, 9}, "F"},
      {"f64_sharded_raw_f", "float64", nullptr, {8, 10, 9}, "F"},
      {"i8_raw_dotkeys",
       "int8",
       nullptr,
       nullptr,
       "C",
       "little",
       {{"zarr_format", 3},
        {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", "."}}}}}}},
      // transpose in any order, and filters inside shards (issue 32)
      {"u16_transpose_120",
       "uint16",
       {{"type", "zstd"}},
       nullptr,
       "C",
       "little",
       {{"filters", {{{"name", "transpose"}, {"configuration", {{"order", {1, 2, 0}}}}}}}}},
      {"i32_sharded_transpose_shuffle",
       "int32",
       {{"type", "gzip"}},
       {8, 10, 9},
       "C",
       "little",
       {{"filters",
         {{{"name", "transpose"}, {"configuration", {{"order", {2, 0, 1}}}}},
          {{"name", "numcodecs.shuffle"}, {"configuration", {{"elementsize", 4}}}}}}}},
      {"f64_sharded_f_delta",
       "float64",
       {{"type", "zstd"}},
       {8, 10, 9},
       "F",
       "little",
       {{"filters", {{{"name", "numcodecs.delta"}, {"configuration", {{"dtype", "<f8"}}}}}}}},
      {"u64_sharded_v2keys",
       "uint64",
       {{"type", "zstd"}},
       {20, 15, 9},
       "C",
       "little",
       {{"zarr_format", 3},
        {"chunk_key_encoding", {{"name", "v2"}, {"configuration", {{"separator", "/"}}}}}}},
  };
  std::map<std::string, std::string> written;
  {
    stowage::Store store = stowage::Store::open(path.string(), stowage::Mode::create, "zarr");
    for (const Case& c : cases) {
      json d = {{"kind", "array"},     {"dtype", c.dtype},    {"shape", shape},
                {"chunks", {4, 5, 9}}, {"order", c.order},    {"byte_order", c.byte_order},
                {"fill_value", 0},     {"storage", c.storage}};
      if (!c.codec.is_null()) d["codec"] = c.codec;
      if (!c.shards.is_null()) d["shards"] = c.shards;
      store.create(c.name, d);
      std::string bytes;
      if (c.dtype == "bool") {
        bytes.resize(n);
        for (uint64_t i = 0; i < n; ++i) bytes[i] = char(i % 3 == 0);
      }
      if (c.dtype == "int16") bytes = bytes_of(ramp<int16_t>(n, -2));
      if (c.dtype == "uint16") bytes = bytes_of(ramp<uint16_t>(n, 3));
      if (c.dtype == "int32") bytes = bytes_of(ramp<int32_t>(n, -11));
      if (c.dtype == "float32") bytes = bytes_of(ramp<float>(n, 0.5));
      // (A float delta gives -0.0 back as 0.0, as numcodecs does: no -0.0 there.)
      if (c.dtype == "float64")
        bytes =
            bytes_of(ramp<double>(n, c.name.find("delta") == std::string::npos ? -0.125 : 0.125));
      if (c.dtype == "int8") {
        bytes.resize(n);
        for (uint64_t i = 0; i < n; ++i) bytes[i] = char(int8_t(i % 200 - 100));
      }
      if (c.dtype == "uint64") bytes = bytes_of(ramp<uint64_t>(n, 1e6));
      store.array(c.name).write({0, 0, 0}, shape, bytes.data());
      written[c.name] = bytes;
    }
    store.close();
  }
  std::string nodes;
  for (const Case& c : cases) nodes += " " + c.name;
  const std::map<std::string, json> lines = lines_by_node(
      run_zarrita("read " + test::quote(path.string()) + " " + test::quote(out.string()) + nodes));
  for (const Case& c : cases) {
    CAPTURE(c.name);
    REQUIRE(lines.count(c.name));
    CHECK(lines.at(c.name)["dtype"] == c.dtype);
    CHECK(lines.at(c.name)["shape"] == json(shape));
    CHECK(dumped(out, c.name) == written[c.name]);
  }
}

TEST_CASE(
    "zarr v3 peer: stowage reads what zarrita writes (bytes in both orders, blosc, zstd, transpose "
    "in F and another order, v2 keys)" *
    test::needs({"zstd", "blosc"})) {
  test::TempDir tmp;
  const fs::path path = tmp / "theirs.zarr", out = tmp / "out";
  fs::create_directories(out);
  const std::map<std::string, json> lines = lines_by_node(
      run_zarrita("write " + test::quote(path.string()) + " " + test::quote(out.string())));
  REQUIRE(lines.size() == 6);
  stowage::Store store = stowage::Store::open(path.string());
  CHECK(store.format() == "zarr");
  CHECK(store.describe("").attributes == json{{"writer", "zarrita"}});
  for (const auto& [node, line] : lines) {
    CAPTURE(node);
    const json d = store.describe_json(node);
    CHECK(d["dtype"] == line["dtype"]);
    CHECK(d["shape"] == line["shape"]);
    CHECK(d["dims"][2]["name"] == "x");
    if (node == "f64_transpose") CHECK(d["order"] == "F");
    if (node == "i16_transpose_120")  // no layout: the transpose codec plugin
      CHECK(d["storage"]["filters"] ==
            json::parse(R"([{"name":"transpose","configuration":{"order":[1,2,0]}}])"));
    if (node == "i32_blosc_big") CHECK(d["byte_order"] == "big");
    CHECK(read_bytes(store.array(node)) == dumped(out, node));
  }
}

// ---- bad v3 input: clear errors naming the file ---------------------------------

namespace {

uint32_t test_crc32c(const std::string& bytes) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = char(v >> (8 * i));
  return s;
}

std::string le32(uint32_t v) { return le64(v).substr(0, 4); }

// An int16 array "a" of 8 elements in one shard of 4 inner chunks of 2,
// raw, index at the end with a crc32c; `metadata` replaces its zarr.json.
fs::path sharded_store(const test::TempDir& tmp, const std::string& metadata = "") {
  const fs::path root = tmp / "bad.zarr";
  fs::create_directories(root / "a");
  test::write_file(root / "zarr.json", R"({"zarr_format":3,"node_type":"group","attributes":{}})");
  test::write_file(root / "a" / "zarr.json", metadata.empty()
                                                 ? R"({"zarr_format":3,"node_type":"array",
    "shape":[8],"data_type":"int16","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[8]}},
    "chunk_key_encoding":{"name":"default"},"fill_value":0,
    "codecs":[{"name":"sharding_indexed","configuration":{"chunk_shape":[2],
      "codecs":[{"name":"bytes","configuration":{"endian":"little"}}],
      "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],
      "index_location":"end"}}]})"
                                                 : metadata);
  return root;
}

// A shard of the inner chunks' bytes and index `entries` (offset, nbytes pairs).
std::string shard_of(const std::string& chunks, const std::vector<uint64_t>& entries,
                     bool good_crc = true) {
  std::string index;
  for (uint64_t e : entries) index += le64(e);
  return chunks + index + le32(test_crc32c(index) ^ (good_crc ? 0 : 1));
}

// test::write_file with the directories it needs.
void put(const fs::path& p, const std::string& data) {
  fs::create_directories(p.parent_path());
  test::write_file(p, data);
}

std::string array_json(const std::string& codecs, const std::string& dtype = "\"int16\"") {
  return R"({"zarr_format":3,"node_type":"array","shape":[8],"data_type":)" + dtype +
         R"(,"chunk_grid":{"name":"regular","configuration":{"chunk_shape":[4]}},"fill_value":0,"codecs":)" +
         codecs + "}";
}

}  // namespace

TEST_CASE("zarr v3 malformed: bad zarr.json is an error naming it") {
  using stowage::ErrorCode;
  struct Case {
    std::string text;
    ErrorCode code;
    std::string words;
  };
  const std::string bytes = R"([{"name":"bytes","configuration":{"endian":"little"}}])";
  const std::vector<Case> cases = {
      {R"({"zarr_format":3,"node_type":"array",)", ErrorCode::corrupt, "not valid JSON"},
      {R"({"zarr_format":3,"node_type":"table"})", ErrorCode::corrupt, "\"node_type\""},
      {array_json(bytes, "\"bfloat16\""), ErrorCode::unsupported,
       "\"data_type\" \"bfloat16\" is not supported"},
      {array_json(bytes, "\"complex256\""), ErrorCode::unsupported, "\"complex256\""},
      // (a codec no codec plugin answers to: codec_names_test.cpp)
      {array_json(R"([{"name":"gzip"}])"), ErrorCode::corrupt, "has no array -> bytes codec"},
      // before "bytes" go array -> array codecs only (filter_chain.hpp)
      {array_json(R"([{"name":"gzip"},{"name":"bytes","configuration":{"endian":"little"}}])"),
       ErrorCode::corrupt, "codec 'gzip' is bytes -> bytes"},
      {array_json(R"([])"), ErrorCode::corrupt, "\"codecs\" must be a non-empty array"},
      {array_json(R"([{"name":"bytes","configuration":{"endian":"middle"}}])"), ErrorCode::corrupt,
       "\"endian\""},
      {R"({"zarr_format":3,"node_type":"array","shape":[8],"data_type":"int16","chunk_grid":{"name":"rectilinear"},)"
       R"("fill_value":0,"codecs":[{"name":"bytes"}]})",
       ErrorCode::unsupported, "chunk grid \"rectilinear\""},
      {R"({"zarr_format":3,"node_type":"array","shape":[8],"data_type":"int16","chunk_grid":{"name":"regular",)"
       R"("configuration":{"chunk_shape":[4]}},"fill_value":null,"codecs":[{"name":"bytes","configuration":{"endian":"little"}}]})",
       ErrorCode::corrupt, "must not be null"},
      {R"({"zarr_format":3,"node_type":"array","shape":[8],"data_type":"int16","chunk_grid":{"name":"regular",)"
       R"("configuration":{"chunk_shape":[4]}},"fill_value":0,"chunk_key_encoding":{"name":"hashed"},)"
       R"("codecs":[{"name":"bytes"}]})",
       ErrorCode::unsupported, "chunk key encoding \"hashed\""},
      {R"({"zarr_format":3,"node_type":"array","shape":[8],"data_type":"int16","chunk_grid":{"name":"regular",)"
       R"("configuration":{"chunk_shape":[8]}},"fill_value":0,"codecs":[{"name":"sharding_indexed","configuration":)"
       R"({"chunk_shape":[3],"codecs":[{"name":"bytes"}],"index_codecs":[{"name":"bytes"}]}}]})",
       ErrorCode::corrupt, "not a multiple"},
      {R"({"zarr_format":3,"node_type":"array","shape":[8],"data_type":"int16","chunk_grid":{"name":"regular",)"
       R"("configuration":{"chunk_shape":[8]}},"fill_value":0,"codecs":[{"name":"sharding_indexed","configuration":)"
       R"({"chunk_shape":[4],"codecs":[{"name":"sharding_indexed","configuration":{}}],"index_codecs":[{"name":"bytes"}]}}]})",
       ErrorCode::unsupported, "nested \"sharding_indexed\""},
      {R"({"zarr_format":3,"node_type":"array","shape":[8,8,8],"data_type":"int16","chunk_grid":{"name":"regular",)"
       R"("configuration":{"chunk_shape":[4611686018427387904,4611686018427387904,8]}},"fill_value":0,"codecs":[)"
       R"({"name":"sharding_indexed","configuration":{"chunk_shape":[1,1,1],"codecs":[{"name":"bytes"}],)"
       R"("index_codecs":[{"name":"bytes"}]}}]})",
       ErrorCode::corrupt, "the count overflows"},
      {R"({"zarr_format":3,"node_type":"array","shape":[4,4,4],"data_type":"int16","chunk_grid":{"name":"regular",)"
       R"("configuration":{"chunk_shape":[2,2,2]}},"fill_value":0,"codecs":[{"name":"transpose","configuration":)"
       R"({"order":[1,1,0]}},{"name":"bytes","configuration":{"endian":"little"}}]})",
       ErrorCode::corrupt, "\"order\" [1,1,0] is no permutation of the chunk's 3 dimensions"},
      {R"({"zarr_format":3,"node_type":"array","shape":[4,4,4],"data_type":"int16","chunk_grid":{"name":"regular",)"
       R"("configuration":{"chunk_shape":[2,2,2]}},"fill_value":0,"codecs":[{"name":"transpose","configuration":)"
       R"({"order":[1,0]}},{"name":"bytes","configuration":{"endian":"little"}}]})",
       ErrorCode::corrupt, "\"order\" [1,0] is no permutation"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    test::TempDir tmp;
    const fs::path root = sharded_store(tmp, c.text);
    stowage::Store store = open_zarr(root.string());
    std::string message =
        c.words.find("node_type") != std::string::npos || c.words == "not valid JSON"
            ? TEST_REQUIRE_ERROR(store.list(""), c.code)
            : TEST_REQUIRE_ERROR(store.describe("a"), c.code);
    CHECK_MESSAGE(message.find((root / "a" / "zarr.json").string()) != std::string::npos, message);
    CHECK_MESSAGE(message.find(c.words) != std::string::npos, message);
  }
}

TEST_CASE("zarr v3 malformed: bad shards are CORRUPT naming the shard file") {
  const std::string chunks = std::string("\x01\x00\x02\x00\x03\x00\x04\x00\x05\x00\x06\x00", 12);
  struct Case {
    std::string shard, words;
  };
  const uint64_t E = UINT64_MAX;
  const std::vector<Case> cases = {
      {std::string(20, '\0'), "shorter than its 68-byte index (truncated)"},
      {shard_of(chunks, {0, 4, 4, 4, 8, 4, E, E}, false), "fails its crc32c checksum"},
      {shard_of(chunks, {0, 4, 4, 4, 8, 8, E, E}), "lies outside the shard"},
      {shard_of(chunks, {0, 4, 2, 4, 8, 4, E, E}), "overlap"},
      {shard_of(chunks, {0, 4, E, 4, 8, 4, E, E}), "half empty"},
      {shard_of(chunks, {0, 4, 4, 4, 8, 2, E, E}),
       "is 2 bytes; an uncompressed chunk of this array is 4"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.words);
    test::TempDir tmp;
    const fs::path root = sharded_store(tmp);
    put(root / "a" / "c" / "0", c.shard);
    stowage::Store store = open_zarr(root.string());
    std::string message =
        TEST_REQUIRE_ERROR(read_bytes(store.array("a")), stowage::ErrorCode::corrupt);
    CHECK_MESSAGE(message.find((root / "a" / "c" / "0").string()) != std::string::npos, message);
    CHECK_MESSAGE(message.find(c.words) != std::string::npos, message);
  }
  // The same shard, well formed, reads: three inner chunks and an empty one (the fill value).
  test::TempDir tmp;
  const fs::path root = sharded_store(tmp);
  put(root / "a" / "c" / "0", shard_of(chunks, {8, 4, 0, 4, 4, 4, E, E}));
  std::vector<int16_t> values(8);
  open_zarr(root.string()).array("a").read({0}, {8}, values.data());
  CHECK(values == std::vector<int16_t>{5, 6, 1, 2, 3, 4, 0, 0});
  CHECK_FALSE(open_zarr(root.string()).array("a").chunk_exists({3}));
  CHECK(open_zarr(root.string()).array("a").chunk_exists({2}));
}

TEST_CASE(
    "zarr v3: crc32c of unsharded chunks is checked; an index at the start and big-endian index read") {
  test::TempDir tmp;
  const fs::path root = tmp / "crc.zarr";
  fs::create_directories(root / "a");
  fs::create_directories(root / "b");
  test::write_file(root / "zarr.json", R"({"zarr_format":3,"node_type":"group"})");
  test::write_file(
      root / "a" / "zarr.json",
      array_json(R"([{"name":"bytes","configuration":{"endian":"big"}},{"name":"crc32c"}])"));
  const std::string chunk = std::string("\x00\x07\x00\x08\x00\x09\x01\x00", 8);
  put(root / "a" / "c" / "0", chunk + le32(test_crc32c(chunk)));
  put(root / "a" / "c" / "1", chunk + le32(test_crc32c(chunk) + 1));
  std::vector<int16_t> values(4);
  stowage::Store store = open_zarr(root.string());
  store.array("a").read({0}, {4}, values.data());
  CHECK(values == std::vector<int16_t>{7, 8, 9, 256});
  std::string message = TEST_REQUIRE_ERROR(store.array("a").read({4}, {4}, values.data()),
                                           stowage::ErrorCode::corrupt);
  CHECK(message.find((root / "a" / "c" / "1").string()) != std::string::npos);
  CHECK(message.find("crc32c") != std::string::npos);

  // Index first, big endian, no checksum.
  test::write_file(root / "b" / "zarr.json",
                   R"({"zarr_format":3,"node_type":"array","shape":[4],"data_type":"uint8",
    "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[4]}},"fill_value":9,
    "codecs":[{"name":"sharding_indexed","configuration":{"chunk_shape":[2],"codecs":[{"name":"bytes"}],
      "index_codecs":[{"name":"bytes","configuration":{"endian":"big"}}],"index_location":"start"}}]})");
  std::string index;
  for (uint64_t e : {uint64_t(UINT64_MAX), uint64_t(UINT64_MAX), uint64_t(32), uint64_t(2)}) {
    std::string le = le64(e);
    index += std::string(le.rbegin(), le.rend());
  }
  put(root / "b" / "c" / "0", index + "\x05\x06");
  std::vector<uint8_t> bytes(4);
  open_zarr(root.string()).array("b").read({0}, {4}, bytes.data());
  CHECK(bytes == std::vector<uint8_t>{9, 9, 5, 6});
}

TEST_CASE("zarr v3: 0-d arrays (key \"c\"), hex float fill values, dimension names both ways") {
  test::TempDir tmp;
  const std::string path = (tmp / "misc.zarr").string();
  {
    stowage::Store store = stowage::Store::open(path, stowage::Mode::create, "zarr");
    store.create("scalar", {{"kind", "array"},
                            {"dtype", "float64"},
                            {"shape", json::array()},
                            {"chunks", json::array()}});
    const double pi = 3.25;
    store.array("scalar").write({}, {}, &pi);
    store.create("named", {{"kind", "array"},
                           {"dtype", "uint8"},
                           {"shape", {2, 3}},
                           {"chunks", {1, 3}},
                           {"dims", {{{"name", "row"}}, {{"name", "col"}}}}});
    store.close();
  }
  CHECK(fs::exists(tmp / "misc.zarr" / "scalar" / "c"));
  CHECK(test::read_json(tmp / "misc.zarr" / "named" / "zarr.json")["dimension_names"] ==
        json({"row", "col"}));
  stowage::Store store = open_zarr(path);
  double back = 0;
  store.array("scalar").read({}, {}, &back);
  CHECK(back == 3.25);
  CHECK(store.describe_json("named")["dims"][1]["name"] == "col");

  // Fill values in v3's hex form: NaN (told to the host as "NaN") and 1.0f.
  for (const auto& [hex, host] :
       std::vector<std::pair<std::string, json>>{{"0x7fc00000", "NaN"}, {"0x3f800000", 1.0}}) {
    CAPTURE(hex);
    const fs::path root = tmp / ("hex" + hex + ".zarr");
    fs::create_directories(root / "a");
    test::write_file(root / "zarr.json", R"({"zarr_format":3,"node_type":"group"})");
    test::write_file(root / "a" / "zarr.json",
                     R"({"zarr_format":3,"node_type":"array","shape":[3],"data_type":"float32",
      "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[3]}},"fill_value":")" +
                         hex + R"(",
      "codecs":[{"name":"bytes","configuration":{"endian":"little"}}]})");
    stowage::Store s = open_zarr(root.string());
    CHECK(s.describe_json("a")["fill_value"] == host);
    std::vector<float> v(3);
    s.array("a").read({0}, {3}, v.data());
    if (host == "NaN")
      CHECK(std::isnan(v[2]));
    else
      CHECK(v[2] == 1.0f);
  }
}

TEST_CASE(
    "zarr v3 sharding: a handle that read a shard and then rewrites it reads the new shard (its index cache is dropped)" *
    test::needs({"zstd"})) {
  test::TempDir tmp;
  const std::string path = (tmp / "cache.zarr").string();
  {
    stowage::Store store = stowage::Store::open(path, stowage::Mode::create, "zarr");
    store.create("a", {{"kind", "array"},
                       {"dtype", "int32"},
                       {"shape", {8, 8}},
                       {"chunks", {2, 2}},
                       {"shards", {8, 8}},
                       {"codec", {{"type", "zstd"}}}});
    std::vector<int32_t> first(64);
    for (int32_t i = 0; i < 64; ++i)
      first[i] = i * 7919;  // compresses to other sizes than the 2s below
    store.array("a").write({0, 0}, {8, 8}, first.data());
    store.close();
  }
  stowage::Store store = stowage::Store::open(path, stowage::Mode::update, "zarr");
  stowage::Array a = store.array("a");
  std::vector<int32_t> back(64);
  a.read({0, 0}, {8, 8}, back.data());
  CHECK(back[63] == 63 * 7919);
  std::vector<int32_t> twos(64, 2);
  a.write({0, 0}, {8, 8}, twos.data());  // the whole shard: published now
  a.read({0, 0}, {8, 8}, back.data());
  CHECK(back == twos);
  store.close();
  // (bzip2, xz and lz4 into v3 as numcodecs.<id>: codec_names_test.cpp)
}
