// Writing N5: round trips for every dtype and codec, cropped edge chunks,
// attributes kept byte for byte, options, and what must be refused.
#include "n5_helpers.hpp"

#include <algorithm>
#include <cstdlib>

#include <fcntl.h>
#include <unistd.h>

using namespace n5test;

namespace {

const char* kDtypes[] = {"uint8", "int8",   "uint16", "int16",   "uint32",
                         "int32", "uint64", "int64",  "float32", "float64"};

// (Those this build has: test::codecs_built.)
json codecs() {
  return test::codecs_built(
      json::array({json(nullptr), json{{"type", "raw"}}, json{{"type", "gzip"}, {"level", 6}},
                   json{{"type", "zlib"}}, json{{"type", "bzip2"}}, json{{"type", "xz"}},
                   json{{"type", "lz4"}}, json{{"type", "zstd"}, {"level", 3}},
                   json{{"type", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 1}}}));
}

// The header of a chunk file: mode, then dims in N5 order.
std::vector<uint32_t> header_of(const fs::path& chunk) {
  std::string b = test::read_file(chunk);
  REQUIRE(b.size() >= 4);
  auto be16 = [&](size_t o) { return (uint8_t(b[o]) << 8) | uint8_t(b[o + 1]); };
  auto be32 = [&](size_t o) {
    return (uint32_t(uint8_t(b[o])) << 24) | (uint32_t(uint8_t(b[o + 1])) << 16) |
           (uint32_t(uint8_t(b[o + 2])) << 8) | uint8_t(b[o + 3]);
  };
  std::vector<uint32_t> h = {uint32_t(be16(0))};
  for (int i = 0; i < be16(2); ++i) h.push_back(be32(4 + 4 * i));
  return h;
}

size_t count_temp_files(const fs::path& dir) {
  size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename().string().find(".stowage-tmp") != std::string::npos) ++n;
  return n;
}

}  // namespace

TEST_CASE("every dtype and codec round-trips, with cropped edge chunks like N5 Java") {
  test::TempDir tmp;
  fs::path path = tmp / "round.n5";
  std::vector<uint64_t> shape = {7, 10, 13}, chunks = {3, 4, 5};
  std::map<std::string, std::string> written;
  {
    stowage::Store store = open_n5(path, stowage::Mode::create);
    uint32_t seed = 1;
    for (const json& codec : codecs()) {
      std::string group = codec.is_null()           ? "none"
                          : codec["type"] == "zlib" ? "gzip_zlib"
                                                    : codec["type"].get<std::string>();
      for (const char* dtype : kDtypes) {
        std::string node = group + "/" + dtype;
        store.create(node, array_desc(dtype, shape, chunks, codec));
        stowage::Array a = store.array(node);
        std::string data =
            sample_bytes(a.info().element_count() * stowage::dtype_size(a.dtype()), seed++);
        a.write({0, 0, 0}, shape, data.data());
        written[node] = data;
      }
    }
    store.close();
  }
  stowage::Store store = open_n5(path);
  for (const auto& [node, data] : written) {
    CAPTURE(node);
    stowage::Array a = store.array(node);
    CHECK(a.shape() == shape);
    CHECK(a.info().chunks == chunks);
    CHECK(read_bytes(a) == data);
  }
  // attributes.json in N5 order; the last chunk along each axis is cropped.
  json attrs = test::read_json(path / "gzip" / "uint16" / "attributes.json");
  CHECK(attrs.begin().key() == "dataType");
  CHECK(attrs["dimensions"] == json({13, 10, 7}));
  CHECK(attrs["blockSize"] == json({5, 4, 3}));
  CHECK(attrs["compression"]["type"] == "gzip");
  CHECK(header_of(path / "gzip" / "uint16" / "2" / "2" / "2") == std::vector<uint32_t>{0, 3, 2, 1});
  CHECK(header_of(path / "gzip" / "uint16" / "0" / "0" / "0") == std::vector<uint32_t>{0, 5, 4, 3});
  CHECK(test::read_json(path / "attributes.json")["n5"] == "4.0.0");
  CHECK(count_temp_files(path) == 0);
  // Codec aliases are stored under N5's own names.
  json zlib = test::read_json(path / "gzip_zlib" / "uint8" / "attributes.json")["compression"];
  CHECK(zlib["type"] == "gzip");
  CHECK(zlib["useZlib"] == true);
}

TEST_CASE("partial writes merge with stored chunks; missing chunks read as zeros" *
          test::needs({"zstd"})) {
  test::TempDir tmp;
  stowage::Store store = open_n5(tmp / "p.n5", stowage::Mode::create);
  store.create("a", array_desc("int32", {10, 10}, {4, 4}, json{{"type", "zstd"}}));
  stowage::Array a = store.array("a");
  std::vector<int32_t> block(9, -7);
  a.write({1, 1}, {3, 3}, block.data());
  std::vector<int32_t> one = {42};
  a.write({2, 2}, {1, 1}, one.data());
  std::vector<int32_t> all = a.read_all<int32_t>();
  for (uint64_t r = 0; r < 10; ++r)
    for (uint64_t c = 0; c < 10; ++c) {
      int32_t want = (r == 2 && c == 2) ? 42 : (r >= 1 && r < 4 && c >= 1 && c < 4) ? -7 : 0;
      CHECK(all[r * 10 + c] == want);
    }
  CHECK(a.chunk_exists({0, 0}));
  CHECK_FALSE(a.chunk_exists({2, 2}));
}

TEST_CASE("chunk_exists looks at the chunk file, never decodes it; a view outlives no store") {
  test::TempDir tmp;
  fs::path path = tmp / "x.n5";
  open_n5(path, stowage::Mode::create)
      .close();  // exists: opened in place below, not in a staging directory
  stowage::Store store = open_n5(path, stowage::Mode::create);
  store.create("a", array_desc("uint8", {8}, {4}, json{{"type", "gzip"}}));
  stowage::Array a = store.array("a");
  std::vector<uint8_t> v(4, 9);
  a.write({0}, {4}, v.data());
  // A chunk file of garbage: reading it is an error, asking whether it
  // exists is not (a decoding chunk_exists would throw here).
  test::write_file(path / "a" / "1", "not an N5 chunk");
  CHECK(a.chunk_exists({0}));
  CHECK(a.chunk_exists({1}));
  std::vector<uint8_t> out(4);
  CHECK_THROWS_AS(a.read({4}, {4}, out.data()), stowage::Error);
  fs::remove(path / "a" / "1");
  CHECK_FALSE(a.chunk_exists({1}));
  CHECK_THROWS_AS(a.chunk_exists({2}), stowage::Error);  // outside the grid
  store.close();
  CHECK_THROWS_AS(a.chunk_exists({0}), stowage::Error);  // the store (and its node handles) closed
}

TEST_CASE("write_empty_chunks=false skips all-zero chunks and deletes stale ones") {
  test::TempDir tmp;
  fs::path path = tmp / "e.n5";
  {
    stowage::Store store = open_n5(path, stowage::Mode::create);
    store.create("a", array_desc("uint16", {8}, {4}));
    std::vector<uint16_t> v = {1, 2, 3, 4, 0, 0, 0, 0};
    store.array("a").write({0}, {8}, v.data());
    store.close();
  }
  CHECK(fs::exists(path / "a" / "1"));  // default: N5 Java writes zero chunks too
  stowage::Store store = open_n5(path, stowage::Mode::update, json{{"write_empty_chunks", false}});
  std::vector<uint16_t> zeros(8, 0);
  store.array("a").write({0}, {8}, zeros.data());
  CHECK_FALSE(fs::exists(path / "a" / "0"));
  CHECK_FALSE(fs::exists(path / "a" / "1"));
  CHECK(store.array("a").read_all<uint16_t>() == zeros);
  TEST_REQUIRE_ERROR(open_n5(path, stowage::Mode::update, json{{"write_empty_chunks", 3}}),
                     stowage::ErrorCode::invalid_argument);
}

TEST_CASE("attributes keep key order and unknown keys; non-ASCII is written as \\u escapes") {
  test::TempDir tmp;
  fs::path path = tmp / "a.n5";
  open_n5(path, stowage::Mode::create)
      .close();  // exists: opened in place below, not in a staging directory
  stowage::Store store = open_n5(path, stowage::Mode::create);
  store.create("g/h", json{{"kind", "group"}});
  json attrs =
      json::parse(R"({"zeta": 1, "alpha": {"b": [1, 2.5, null], "a": "Grüße ✓"}, "mid": "<&>='"})");
  store.set_attributes("g/h", attrs);
  std::string text = test::read_file(path / "g" / "h" / "attributes.json");
  // Escaped, so that zarr-python 2.x (which decodes the file as ASCII) can open it.
  CHECK(text.find(R"(Gr\u00fc\u00dfe \u2713)") != std::string::npos);
  CHECK(std::all_of(text.begin(), text.end(),
                    [](char c) { return static_cast<unsigned char>(c) < 0x80; }));
  CHECK(text.find("<&>='") != std::string::npos);
  CHECK(text.find("zeta") < text.find("alpha"));
  CHECK(store.describe("g/h").attributes.dump() == attrs.dump());  // order included
  CHECK_FALSE(fs::exists(path / "g" / "attributes.json"));         // like N5 Java

  // A dataset keeps its dataset keys first and its user keys after them.
  json desc = array_desc("float32", {4, 6}, {2, 3}, json{{"type", "gzip"}});
  desc["attributes"] = json{{"resolution", {4.0, 40.0}}, {"unit", "µm"}};
  store.create("d", desc);
  json file = test::read_json(path / "d" / "attributes.json");
  std::vector<std::string> keys;
  for (auto it = file.begin(); it != file.end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"dataType", "compression", "blockSize", "dimensions",
                                         "resolution", "unit"});
  store.set_attributes("d", json{{"unit", "nm"}});
  file = test::read_json(path / "d" / "attributes.json");
  CHECK(file["dimensions"] == json({6, 4}));
  CHECK(file["unit"] == "nm");
  CHECK_FALSE(file.contains("resolution"));
  TEST_REQUIRE_ERROR(store.set_attributes("d", json{{"dimensions", {1}}}),
                     stowage::ErrorCode::invalid_argument);
  // The root keeps its version key whatever the user attributes are.
  store.set_attributes("", json{{"title", "t"}});
  CHECK(test::read_json(path / "attributes.json") == json{{"n5", "4.0.0"}, {"title", "t"}});
  CHECK(store.describe("").attributes == json{{"title", "t"}});
}

TEST_CASE("a dataset may be the container root") {
  test::TempDir tmp;
  fs::path path = tmp / "root.n5";
  {
    stowage::Store store = open_n5(path, stowage::Mode::create);
    store.create("", array_desc("uint8", {5, 3}, {2, 2}, json{{"type", "gzip"}}));
    std::vector<uint8_t> v(15);
    for (size_t i = 0; i < v.size(); ++i) v[i] = uint8_t(i * 3);
    store.array("").write({0, 0}, {5, 3}, v.data());
    store.close();
  }
  json attrs = test::read_json(path / "attributes.json");
  CHECK(attrs["n5"] == "4.0.0");
  CHECK(attrs["dimensions"] == json({3, 5}));
  stowage::Store store = open_n5(path);
  CHECK(store.describe("").kind == stowage::NodeKind::array);
  CHECK(store.list("").empty());
  std::vector<uint8_t> back = store.array("").read_all<uint8_t>();
  for (size_t i = 0; i < back.size(); ++i) CHECK(back[i] == uint8_t(i * 3));
}

TEST_CASE("remove, truncate, create over an existing dataset") {
  test::TempDir tmp;
  fs::path path = tmp / "r.n5";
  stowage::Store store = open_n5(path, stowage::Mode::create);
  store.create("x/y", array_desc("int16", {4}, {2}));
  std::vector<int16_t> v = {1, -2, 3, -4};
  store.array("x/y").write({0}, {4}, v.data());
  TEST_REQUIRE_ERROR(store.create("x/y", array_desc("int16", {4}, {2})),
                     stowage::ErrorCode::invalid_argument);
  TEST_REQUIRE_ERROR(store.create("x/y/z", json{{"kind", "group"}}), stowage::ErrorCode::not_found);
  store.remove("x/y");
  CHECK(store.list("x").empty());
  store.create("x/y", array_desc("int16", {4}, {4}));
  CHECK(store.array("x/y").read_all<int16_t>() == std::vector<int16_t>(4, 0));
  store.close();
  stowage::Store again = open_n5(path, stowage::Mode::truncate);
  CHECK(again.list("").empty());
  again.close();
  // A directory that is not N5 is never deleted by truncate.
  fs::create_directories(tmp / "precious");
  test::write_file(tmp / "precious" / "notes.txt", "keep me");
  TEST_REQUIRE_ERROR(open_n5(tmp / "precious", stowage::Mode::truncate),
                     stowage::ErrorCode::invalid_argument);
  CHECK(fs::exists(tmp / "precious" / "notes.txt"));
}

TEST_CASE("refused: bad paths, read-only writes, unknown versions, impossible datasets") {
  test::TempDir tmp;
  fs::path path = tmp / "bad.n5";
  stowage::Store store = open_n5(path, stowage::Mode::create);
  for (const char* node : {"../escape", "/abs", "a//b", "a/./b", "a/.."})
    TEST_REQUIRE_ERROR(store.create(node, json{{"kind", "group"}}),
                       stowage::ErrorCode::invalid_argument);
  TEST_REQUIRE_ERROR(store.create("b", array_desc("bool", {4}, {2})),
                     stowage::ErrorCode::unsupported);
  TEST_REQUIRE_ERROR(store.create("c", array_desc("uint8", {4}, {0})),
                     stowage::ErrorCode::invalid_argument);
  TEST_REQUIRE_ERROR(
      store.create("d", array_desc("uint64", {1u << 20, 1u << 20}, {1u << 15, 1u << 14})),
      stowage::ErrorCode::invalid_argument);  // 4 GiB chunks
  json filled = array_desc("uint8", {4}, {2});
  filled["fill_value"] = 3;
  TEST_REQUIRE_ERROR(store.create("e", filled), stowage::ErrorCode::unsupported);
  TEST_REQUIRE_ERROR(
      store.create("f", array_desc("uint8", {4}, {2}, json{{"type", "gzip"}, {"level", 42}})),
      stowage::ErrorCode::invalid_argument);
  store.create("ok", array_desc("uint8", {4}, {2}));
  store.close();

  stowage::Store ro = open_n5(path);
  TEST_REQUIRE_ERROR(ro.create("g", json{{"kind", "group"}}), stowage::ErrorCode::invalid_argument);
  std::vector<uint8_t> v(4, 1);
  TEST_REQUIRE_ERROR(ro.array("ok").write({0}, {4}, v.data()),
                     stowage::ErrorCode::invalid_argument);
  TEST_REQUIRE_ERROR(ro.describe("missing"), stowage::ErrorCode::not_found);
  TEST_REQUIRE_ERROR(ro.describe("../bad.n5"), stowage::ErrorCode::invalid_argument);

  test::write_file(path / "attributes.json", R"({"n5": "5.0.0"})");
  std::string msg = TEST_REQUIRE_ERROR(open_n5(path), stowage::ErrorCode::unsupported);
  CHECK(msg.find("5.0.0") != std::string::npos);
  test::write_file(path / "attributes.json", R"({"n5": "4.2.1-SNAPSHOT", "x": 1})");
  CHECK(open_n5(path).describe("").attributes == json{{"x", 1}});
  test::write_file(path / "attributes.json", R"({})");  // tensorstore writes no version
  CHECK(open_n5(path).list("") == std::vector<std::string>{"ok"});
  TEST_REQUIRE_ERROR(open_n5(tmp / "nothing.n5"), stowage::ErrorCode::not_found);
}

TEST_CASE("malformed chunks and attributes are errors naming the file") {
  test::TempDir tmp;
  fs::path path = tmp / "m.n5";
  {
    stowage::Store store = open_n5(path, stowage::Mode::create);
    store.create("raw", array_desc("uint16", {6, 6}, {3, 3}));
    store.create("gz", array_desc("uint16", {6, 6}, {3, 3}, json{{"type", "gzip"}}));
    std::vector<uint16_t> v(36, 7);
    store.array("raw").write({0, 0}, {6, 6}, v.data());
    store.array("gz").write({0, 0}, {6, 6}, v.data());
    store.close();
  }
  auto expect_corrupt = [&](const std::string& node, const fs::path& chunk,
                            const std::string& bytes,
                            stowage::ErrorCode code = stowage::ErrorCode::corrupt) {
    CAPTURE(chunk);
    test::write_file(chunk, bytes);
    stowage::Store store = open_n5(path);
    std::string msg = TEST_REQUIRE_ERROR(read_bytes(store.array(node)), code);
    CHECK_MESSAGE(msg.find(chunk.string()) != std::string::npos, msg);
  };
  std::string good = test::read_file(path / "raw" / "0" / "0");
  std::string mode7 = good;
  mode7[1] = 7;
  expect_corrupt("raw", path / "raw" / "0" / "0", mode7);
  std::string ndim3 = good;
  ndim3[3] = 3;
  expect_corrupt("raw", path / "raw" / "0" / "0", ndim3);
  std::string too_big = good;
  too_big[7] = 4;  // dim 0 = 4 > blockSize 3
  expect_corrupt("raw", path / "raw" / "0" / "0", too_big);
  expect_corrupt("raw", path / "raw" / "0" / "0", good.substr(0, good.size() - 1));
  expect_corrupt("raw", path / "raw" / "0" / "0", good.substr(0, 3));
  test::write_file(path / "raw" / "0" / "0", good);

  std::string gz = test::read_file(path / "gz" / "1" / "0");
  expect_corrupt("gz", path / "gz" / "1" / "0", gz.substr(0, gz.size() - 9));
  std::string garbage = gz;
  for (size_t i = 12; i < garbage.size(); ++i) garbage[i] = char(i * 31);
  expect_corrupt("gz", path / "gz" / "1" / "0", garbage);
  std::string varlength = gz.substr(0, 12) + std::string("\0\0\0\x05", 4) + gz.substr(12);
  varlength[1] = 1;
  expect_corrupt("gz", path / "gz" / "1" / "0", varlength, stowage::ErrorCode::unsupported);
  test::write_file(path / "gz" / "1" / "0", gz);

  // A chunk file over 2 GiB (sparse) is refused before anything is allocated.
  {
    int fd = ::open((path / "raw" / "1" / "1").c_str(), O_WRONLY);
    REQUIRE(fd >= 0);
    CHECK(::ftruncate(fd, (off_t(1) << 31) + 100) == 0);
    ::close(fd);
    stowage::Store store = open_n5(path);
    std::string msg =
        TEST_REQUIRE_ERROR(read_bytes(store.array("raw")), stowage::ErrorCode::corrupt);
    CHECK(msg.find("2 GiB") != std::string::npos);
  }

  test::write_file(path / "gz" / "attributes.json",
                   R"({"dataType": "uint16", "dimensions": [6, 6], )");
  std::string msg = TEST_REQUIRE_ERROR(open_n5(path).describe("gz"), stowage::ErrorCode::corrupt);
  CHECK(msg.find("attributes.json") != std::string::npos);
  test::write_file(path / "gz" / "attributes.json",
                   R"({"dataType": "uint16", "dimensions": [6, 6], "blockSize": [3, 3, 3]})");
  TEST_REQUIRE_ERROR(open_n5(path).describe("gz"), stowage::ErrorCode::corrupt);
  test::write_file(path / "gz" / "attributes.json",
                   R"({"dataType": "complex64", "dimensions": [6, 6], "blockSize": [3, 3]})");
  TEST_REQUIRE_ERROR(open_n5(path).describe("gz"), stowage::ErrorCode::unsupported);
  test::write_file(path / "gz" / "attributes.json",
                   R"({"dataType": "uint16", "dimensions": [6, -6], "blockSize": [3, 3]})");
  TEST_REQUIRE_ERROR(open_n5(path).describe("gz"), stowage::ErrorCode::corrupt);
  test::write_file(
      path / "gz" / "attributes.json",
      R"({"dataType": "uint16", "dimensions": [6, 6], "blockSize": [3, 3], "compression": {"type": "nosuchcodec"}})");
  msg = TEST_REQUIRE_ERROR(read_bytes(open_n5(path).array("gz")), stowage::ErrorCode::not_found);
  CHECK(msg.find("nosuchcodec") != std::string::npos);           // names the codec
  CHECK(msg.find((path / "gz").string()) != std::string::npos);  // and the dataset
}

TEST_CASE("string datasets are written as N5 Java writes them and read back") {
  test::TempDir tmp;
  fs::path path = tmp / "s.n5";
  std::vector<std::string> names;
  for (int i = 0; i < 5000; ++i)
    names.push_back(i % 11 == 0 ? "" : "gene-" + std::to_string(i) + "-β");
  {
    stowage::Store store = open_n5(path, stowage::Mode::create);
    store.create("labels/genes",
                 json{{"kind", "strings"}, {"shape", {5000}}, {"attributes", {{"axis", "gene"}}}});
    store.write_strings("labels/genes", names);
    store.write_strings("labels/genes", names);  // replacing is fine
    store.close();
  }
  json attrs = test::read_json(path / "labels" / "genes" / "attributes.json");
  CHECK(attrs["dataType"] == "string");
  CHECK(attrs["dimensions"] == json({5000}));
  std::string chunk0 = test::read_file(path / "labels" / "genes" / "0");
  CHECK(chunk0.substr(0, 4) == std::string("\0\1\0\1", 4));  // mode 1, one dimension
  stowage::Store store = open_n5(path);
  CHECK(store.describe("labels/genes").kind == stowage::NodeKind::strings);
  CHECK(store.describe("labels/genes").attributes == json{{"axis", "gene"}});
  CHECK(store.read_strings("labels/genes") == names);
  CHECK(store.read_strings("labels/genes", 4090, 4100) ==
        std::vector<std::string>(names.begin() + 4090, names.begin() + 4100));
}

TEST_CASE("a third party's codec whose context is not thread-safe gets one context per thread") {
  stowage::Registry::Options options;
  options.paths = {(test::build_root() / "tests" / "n5").string()};
  stowage::Registry registry(options);
  registry.set_threads(8);
  test::TempDir tmp;
  fs::path path = tmp / "xor.n5";
  std::vector<uint64_t> shape = {64, 96}, chunks = {8, 8};
  std::string data = sample_bytes(64 * 96 * 4, 99);
  {
    stowage::Store store =
        stowage::Store::open(path.string(), stowage::Mode::create, "n5", json::object(), registry);
    store.create("x",
                 array_desc("float32", shape, chunks, json{{"type", "n5testxor"}, {"key", 77}}));
    store.array("x").write({0, 0}, shape, data.data());
    store.close();
  }
  CHECK(test::read_json(path / "x" / "attributes.json")["compression"] ==
        json{{"type", "n5testxor"}, {"key", 77}});
  // The codec writes the most calls it saw in flight at once (over all its
  // contexts) to this file: reads one at a time would leave it at 1 and
  // prove nothing about the host's context pool.
  const fs::path overlap = tmp / "overlap";
  ::setenv("STOWAGE_N5TESTXOR_OVERLAP", overlap.c_str(), 1);
  stowage::Store store =
      stowage::Store::open(path.string(), stowage::Mode::read, "n5", json::object(), registry);
  for (int round = 0; round < 3; ++round) CHECK(read_bytes(store.array("x")) == data);
  ::unsetenv("STOWAGE_N5TESTXOR_OVERLAP");
  REQUIRE(fs::exists(overlap));
  const int most = std::stoi(test::read_file(overlap));
  MESSAGE("n5testxor: at most " << most << " calls in flight at once");
  CHECK(most >= 2);
}
