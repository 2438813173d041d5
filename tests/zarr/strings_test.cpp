// Zarr string arrays as strings nodes: v3 "string" + vlen-utf8 written by
// zarr-python 3 (tests/fixtures/zarr/zarrs_strings), v2 "|O" + vlen-utf8
// both ways with zarr-python 2.13 (zarr_strings_peer.py), v3 read by
// zarrita 0.7.5, and malformed chunks and metadata refused by name.
#include "zarr_helpers.hpp"

#include <algorithm>
#include <map>

using namespace zarrtest;
using stowage::ErrorCode;

namespace {

fs::path strings_fixture(const std::string& name) { return fixture("zarrs_strings") / name; }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> slice(const std::vector<std::string>& v, size_t begin, size_t end) {
  return std::vector<std::string>(v.begin() + long(begin), v.begin() + long(end));
}

std::string run_strings_peer(const std::string& args) {
  const fs::path script = test::source_root() / "tests" / "zarr" / "zarr_strings_peer.py";
  test::RunResult r = test::run(test::python() + " " + test::quote(script.string()) + " " + args);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  return r.output;
}

std::string run_zarrita_strings(const std::string& args) {
  const fs::path script = test::source_root() / "tests" / "zarr" / "zarrita_peer.mjs";
  test::RunResult r = test::run("node " + test::quote(script.string()) + " read-strings " + args);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  return r.output;
}

// Strings a reader must keep byte for byte: empty, accents, CJK, a 4-byte
// emoji, a NUL inside, a newline.
std::vector<std::string> words(size_t n, size_t seed) {
  static const std::vector<std::string> kWords = {"",
                                                  "a",
                                                  "Zürich",
                                                  "東京",
                                                  "\xF0\x9F\x99\x82 smile",
                                                  std::string("nul\0in", 6),
                                                  "two\nlines",
                                                  "São Paulo",
                                                  std::string(300, 'x')};
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i)
    out.push_back(kWords[(seed + 5 * i) % kWords.size()] + (i % 3 ? std::to_string(i) : ""));
  return out;
}

std::string le32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[size_t(i)] = char((v >> (8 * i)) & 0xFF);
  return s;
}

// The string arrays stowage writes (both versions): 1-3 dimensions, edge
// chunks, compressors, a fill value, a node made by write_strings alone.
struct Written {
  std::string node;
  std::vector<uint64_t> shape, chunks;
  json codec;
  std::string fill;
};
const std::vector<Written> kWritten = {
    {"one", {11}, {4}, nullptr, ""},
    {"zstd2d", {3, 5}, {2, 2}, {{"type", "zstd"}, {"level", 3}}, "-"},
    {"gzip3d", {2, 3, 4}, {1, 2, 3}, {{"type", "gzip"}, {"level", 5}}, ""},
    {"blosc", {9}, {9}, {{"type", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 1}}, "?"},
};

std::map<std::string, std::vector<std::string>> write_all(const fs::path& path, int version) {
  stowage::Store s = stowage::Store::open(path.string(), stowage::Mode::create, "zarr",
                                          json{{"zarr_version", version}});
  std::map<std::string, std::vector<std::string>> values;
  size_t seed = 0;
  for (const Written& w : kWritten) {
    json d = {{"kind", "strings"},
              {"shape", w.shape},
              {"chunks", w.chunks},
              {"codec", w.codec},
              {"storage", {{"fill_value", w.fill}}}};
    if (w.node == "gzip3d" && version == 2) d["storage"]["dimension_separator"] = "/";
    s.create(w.node, d);
    uint64_t n = 1;
    for (uint64_t e : w.shape) n *= e;
    values[w.node] = words(n, seed++);
    s.write_strings(w.node, values[w.node]);
  }
  values["made/by/write"] = words(70000, 7);  // no create: one dimension, default chunks
  s.write_strings("made/by/write", values["made/by/write"]);
  s.close();
  return values;
}

}  // namespace

TEST_CASE("zarr strings: v3 cities written by zarr-python 3 read equal to cities.csv") {
  const std::vector<std::string> cities = lines_of(test::read_file(strings_fixture("cities.csv")));
  REQUIRE(cities.size() == 47868);
  CHECK(std::any_of(cities.begin(), cities.end(), [](const std::string& c) {
    return std::any_of(c.begin(), c.end(), [](char ch) { return (ch & 0x80) != 0; });
  }));
  stowage::Store s = open_zarr(strings_fixture("cities_v3.zarr").string());
  const stowage::NodeInfo info = s.describe("");
  CHECK(info.kind == stowage::NodeKind::strings);
  CHECK(info.shape == std::vector<uint64_t>{47868});
  CHECK(info.raw["chunks"] == json::array({1000}));
  CHECK(s.read_strings("") == cities);
  CHECK(s.read_strings("", 998, 1003) == slice(cities, 998, 1003));  // across a chunk boundary
  CHECK(s.read_strings("", 47860, 47868) == slice(cities, 47860, 47868));  // the padded last chunk
  CHECK(s.read_strings("", 5, 5).empty());
  TEST_REQUIRE_ERROR(s.read_strings("", 47868, 47869), ErrorCode::invalid_argument);
}

TEST_CASE(
    "zarr strings: v2 strings by zarr-python 3 with fill_value 0 or null read missing as \"\"") {
  for (const char* name : {"str_v2_fv_0.zarr", "str_v2_fv_null.zarr"}) {
    CAPTURE(name);
    stowage::Store s = open_zarr(strings_fixture(name).string());
    CHECK(s.describe("").kind == stowage::NodeKind::strings);
    CHECK(!fs::exists(strings_fixture(name) / "2"));  // the chunk never written
    CHECK(s.read_strings("") == std::vector<std::string>{"a", "bb", "", "", ""});
  }
}

TEST_CASE(
    "zarr strings: zarr-python 3.1's zstd string array reads equal; other types are refused") {
  stowage::Store s = open_zarr(strings_fixture("issue_287.zarr").string());
  CHECK(s.describe("meta/collection").codec.value("type", "") == "zstd");
  CHECK(s.read_strings("meta/collection") ==
        std::vector<std::string>{"collection_a", "collection_b", "collection_c"});
  CHECK(s.describe("meta/bbox").kind == stowage::NodeKind::strings);
  const std::string bytes = strings_fixture("v3_bytes.zarr").string();
  std::string message = TEST_REQUIRE_ERROR(open_zarr(bytes).describe(""), ErrorCode::unsupported);
  CHECK_MESSAGE(message.find(bytes + "/zarr.json") != std::string::npos, message);
  CHECK_MESSAGE(message.find("variable_length_bytes") != std::string::npos, message);
}

TEST_CASE("zarr strings: stowage reads what zarr-python 2.13 writes, equal" *
          test::needs({"zstd", "blosc", "gzip"})) {
  test::TempDir tmp;
  const fs::path path = tmp / "py.zarr";
  const std::map<std::string, json> lines =
      lines_by_node(run_strings_peer("write " + test::quote(path.string())));
  REQUIRE(lines.size() == 6);
  REQUIRE(lines.at("f_order_3d")["zarray"]["order"] == "F");
  CHECK(!fs::exists(path / "plain" / "2"));  // a chunk never written: the fill value
  CHECK(!fs::exists(path / "zstd_2d" / "2" / "0"));
  stowage::Store s = open_zarr(path.string());
  for (const auto& [node, line] : lines) {
    CAPTURE(node);
    const stowage::NodeInfo info = s.describe(node);
    CHECK(info.kind == stowage::NodeKind::strings);
    CHECK(json(info.shape) == line["shape"]);
    CHECK(info.raw["storage"]["filters"] == line["zarray"]["filters"]);
    const auto expected = line["values"].get<std::vector<std::string>>();
    CHECK(s.read_strings(node) == expected);
    const size_t end = std::min<size_t>(9, expected.size());
    CHECK(s.read_strings(node, 3, end) == slice(expected, 3, end));
  }
  s = stowage::Store();
  // stowage writing into zarr-python's arrays (F order kept), which reads them back equal.
  stowage::Store w = open_zarr(path.string(), stowage::Mode::update);
  std::map<std::string, std::vector<std::string>> written;
  std::string nodes;
  for (const auto& [node, line] : lines) {
    auto values = line["values"].get<std::vector<std::string>>();
    std::reverse(values.begin(), values.end());
    w.write_strings(node, values);
    written[node] = values;
    nodes += " " + node;
  }
  w.close();
  CHECK(test::read_json(path / "f_order_3d" / ".zarray")["order"] == "F");
  const std::map<std::string, json> back =
      lines_by_node(run_strings_peer("read " + test::quote(path.string()) + nodes));
  for (const auto& [node, values] : written) {
    CAPTURE(node);
    CHECK(back.at(node)["values"].get<std::vector<std::string>>() == values);
  }
}

TEST_CASE("zarr strings: zarr-python 2.13 reads what stowage writes as v2, equal" *
          test::needs({"zstd", "blosc", "gzip"})) {
  test::TempDir tmp;
  const fs::path path = tmp / "s.zarr";
  const auto values = write_all(path, 2);
  CHECK(fs::exists(path / "gzip3d" / "1" / "1" / "1"));  // dimension_separator "/"
  std::string nodes;
  for (const auto& [node, v] : values) nodes += " " + node;
  const std::map<std::string, json> lines =
      lines_by_node(run_strings_peer("read " + test::quote(path.string()) + nodes));
  stowage::Store s = open_zarr(path.string());
  for (const auto& [node, v] : values) {
    CAPTURE(node);
    REQUIRE(lines.count(node));
    CHECK(lines.at(node)["values"].get<std::vector<std::string>>() == v);
    CHECK(lines.at(node)["zarray"]["dtype"] == "|O");
    CHECK(s.read_strings(node) == v);
  }
  CHECK(lines.at("zstd2d")["zarray"]["fill_value"] == "-");
  CHECK(lines.at("zstd2d")["zarray"]["compressor"]["id"] == "zstd");
  CHECK(lines.at("blosc")["zarray"]["compressor"]["id"] == "blosc");
}

TEST_CASE("zarr strings: zarrita 0.7.5 reads what stowage writes as v3, equal" *
          test::needs({"zstd", "blosc", "gzip"})) {
  test::TempDir tmp;
  const fs::path path = tmp / "s.zarr";
  const auto values = write_all(path, 3);
  const json meta = test::read_json(path / "zstd2d" / "zarr.json");
  CHECK(meta["data_type"] == "string");
  CHECK(meta["fill_value"] == "-");
  CHECK(meta["codecs"][0]["name"] == "vlen-utf8");
  CHECK(meta["codecs"][1]["name"] == "zstd");
  std::string nodes;
  for (const auto& [node, v] : values) nodes += " " + node;
  const std::map<std::string, json> lines =
      lines_by_node(run_zarrita_strings(test::quote(path.string()) + nodes));
  stowage::Store s = open_zarr(path.string());
  for (const auto& [node, v] : values) {
    CAPTURE(node);
    REQUIRE(lines.count(node));
    CHECK(lines.at(node)["values"].get<std::vector<std::string>>() == v);
    CHECK(s.read_strings(node) == v);
  }
}

TEST_CASE("zarr strings: malformed vlen-utf8 chunks are CORRUPT naming the chunk file") {
  const std::string ok = le32(2) + "ab" + le32(0) + le32(1) + "c";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "has no 4-byte count"},
      {le32(2) + le32(2) + "ab" + le32(0), "the chunk holds 2 strings"},
      {le32(0xFFFFFFFF), "holds 4294967295 strings"},
      {le32(3) + le32(2) + "ab" + le32(0) + le32(5) + "c", "past the end of the chunk"},
      {le32(3) + le32(2) + "ab" + le32(0) + "xy", "has no length"},
      {le32(3) + le32(2) + "\xC3\x28" + le32(0) + le32(1) + "c", "string 0 is not valid UTF-8"},
      {le32(3) + le32(3) + "\xED\xA0\x80" + le32(0) + le32(1) + "c",
       "not valid UTF-8"},  // a surrogate
      {le32(3) + ok + "!", "1 bytes follow the last string"},
  };
  for (int version : {2, 3}) {
    CAPTURE(version);
    test::TempDir tmp;
    const fs::path root = tmp / "m.zarr";
    {
      stowage::Store s = stowage::Store::open(root.string(), stowage::Mode::create, "zarr",
                                              json{{"zarr_version", version}});
      s.create("s", json{{"kind", "strings"}, {"shape", {3}}, {"chunks", {3}}});
      s.write_strings("s", {"ab", "", "c"});
      s.close();
    }
    const fs::path chunk = version == 2 ? root / "s" / "0" : root / "s" / "c" / "0";
    REQUIRE(test::read_file(chunk) == le32(3) + ok);  // numcodecs' layout, byte for byte
    for (const auto& [bytes, says] : cases) {
      CAPTURE(says);
      test::write_file(chunk, bytes);
      stowage::Store s = open_zarr(root.string());
      const std::string message = TEST_REQUIRE_ERROR(s.read_strings("s"), ErrorCode::corrupt);
      CHECK_MESSAGE(message.find(chunk.string()) != std::string::npos, message);
      CHECK_MESSAGE(message.find(says) != std::string::npos, message);
    }
  }
}

TEST_CASE("zarr strings: a compressed chunk of garbage is an error naming it, not a hang" *
          test::needs({"zstd"})) {
  test::TempDir tmp;
  const fs::path root = tmp / "g.zarr";
  {
    stowage::Store s = stowage::Store::open(root.string(), stowage::Mode::create, "zarr",
                                            json{{"zarr_version", 2}});
    s.create("s", json{{"kind", "strings"}, {"shape", {4}}, {"chunks", {4}}, {"codec", "zstd"}});
    s.write_strings("s", {"w", "x", "y", "z"});
    s.close();
  }
  test::write_file(root / "s" / "0", std::string(100, '\x5a'));
  const std::string message =
      TEST_REQUIRE_ERROR(open_zarr(root.string()).read_strings("s"), ErrorCode::corrupt);
  CHECK_MESSAGE(message.find((root / "s" / "0").string()) != std::string::npos, message);
}

TEST_CASE("zarr strings: metadata stowage cannot read as strings is refused naming the file") {
  const std::string v2 =
      R"({"zarr_format":2,"shape":[4,4],"chunks":[2,2],"dtype":"|O","compressor":null,"order":"C")";
  const std::string v3 = R"({"zarr_format":3,"node_type":"array","shape":[4],"data_type":"string",)"
                         R"("chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2]}},)";
  struct Case {
    std::string file, text;
    ErrorCode code;
    std::string words;
  };
  const std::vector<Case> cases = {
      {".zarray", v2 + R"(,"fill_value":"","filters":null})", ErrorCode::unsupported,
       "without an object codec"},
      {".zarray", v2 + R"(,"fill_value":"","filters":[{"id":"vlen-bytes"}]})",
       ErrorCode::unsupported, "vlen-bytes"},
      {".zarray", v2 + R"(,"fill_value":"","filters":[{"id":"json2"}]})", ErrorCode::unsupported,
       "with the filter \"json2\""},
      {".zarray", v2 + R"(,"fill_value":5,"filters":[{"id":"vlen-utf8"}]})", ErrorCode::corrupt,
       "\"fill_value\" 5 is not a string"},
      {"zarr.json",
       R"({"zarr_format":3,"node_type":"array","shape":[4,4],"data_type":"string",)"
       R"("chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2,2]}},"fill_value":"",)"
       R"("codecs":[{"name":"transpose","configuration":{"order":[1,0]}},{"name":"vlen-utf8"}]})",
       ErrorCode::unsupported, "through a \"transpose\" codec"},
      {"zarr.json", v3 + R"("fill_value":"","codecs":[{"name":"bytes"}]})", ErrorCode::corrupt,
       "codec \"bytes\" cannot encode"},
      {"zarr.json", v3 + R"("fill_value":"","codecs":[{"name":"zstd"}]})", ErrorCode::corrupt,
       "needs the codec \"vlen-utf8\""},
      {"zarr.json", v3 + R"("fill_value":0,"codecs":[{"name":"vlen-utf8"}]})", ErrorCode::corrupt,
       "\"fill_value\" 0 is not a string"},
      {"zarr.json",
       v3 +
           R"("fill_value":"","codecs":[{"name":"sharding_indexed","configuration":{"chunk_shape":[1],)"
           R"("codecs":[{"name":"vlen-utf8"}],"index_codecs":[{"name":"bytes"}]}}]})",
       ErrorCode::unsupported, "sharded string arrays"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    test::TempDir tmp;
    const fs::path root = tmp / "b.zarr";
    fs::create_directories(root / "a");
    test::write_file(root / (c.file == "zarr.json" ? "zarr.json" : ".zgroup"),
                     c.file == "zarr.json" ? R"({"zarr_format":3,"node_type":"group"})"
                                           : R"({"zarr_format":2})");
    test::write_file(root / "a" / c.file, c.text);
    const std::string message = TEST_REQUIRE_ERROR(open_zarr(root.string()).describe("a"), c.code);
    CHECK_MESSAGE(message.find((root / "a" / c.file).string()) != std::string::npos, message);
    CHECK_MESSAGE(message.find(c.words) != std::string::npos, message);
  }
}

TEST_CASE("zarr strings: write_strings checks its values and the node it writes") {
  test::TempDir tmp;
  stowage::Store s = stowage::Store::open((tmp / "w.zarr").string(), stowage::Mode::create, "zarr");
  s.create("n", json{{"kind", "array"}, {"dtype", "uint8"}, {"shape", {2}}});
  s.create("t", json{{"kind", "strings"}, {"shape", {2, 2}}});
  CHECK(TEST_REQUIRE_ERROR(s.write_strings("n", {"a", "b"}), ErrorCode::invalid_argument)
            .find("not strings") != std::string::npos);
  CHECK(TEST_REQUIRE_ERROR(s.write_strings("t", {"a", "b"}), ErrorCode::invalid_argument)
            .find("2 strings for an array of shape [2,2]") != std::string::npos);
  CHECK(
      TEST_REQUIRE_ERROR(s.write_strings("t", {"a", "b", "\xFF", "d"}), ErrorCode::invalid_argument)
          .find("string 2 is not valid UTF-8") != std::string::npos);
  s.write_strings("t", {"a", "b", "c", "d"});
  CHECK(s.read_strings("t", 1, 3) == std::vector<std::string>{"b", "c"});
  CHECK(
      TEST_REQUIRE_ERROR(s.create("u", json{{"kind", "strings"}, {"shape", {4}}, {"shards", {4}}}),
                         ErrorCode::unsupported)
          .find("sharded string arrays") != std::string::npos);
  s.close();
}

TEST_CASE("zarr strings: a chunk decoding to hundreds of times its size reads whole" *
          test::needs({"zstd", "gzip"})) {
  // 3 MiB of strings zstd and gzip store in a few KiB: the decoded size is
  // not stored, so the reader's buffer must grow to it.
  const std::vector<std::string> values = {std::string(1 << 20, 'x'), "", std::string(1 << 21, 'y'),
                                           "end"};
  for (int version : {2, 3})
    for (const char* codec : {"zstd", "gzip"}) {
      CAPTURE(version);
      CAPTURE(codec);
      test::TempDir tmp;
      const fs::path root = tmp / "l.zarr";
      {
        stowage::Store s = stowage::Store::open(root.string(), stowage::Mode::create, "zarr",
                                                json{{"zarr_version", version}});
        s.create("s", json{{"kind", "strings"}, {"shape", {4}}, {"chunks", {4}}, {"codec", codec}});
        s.write_strings("s", values);
        s.close();
      }
      const fs::path chunk = version == 2 ? root / "s" / "0" : root / "s" / "c" / "0";
      CHECK(fs::file_size(chunk) < 32 * 1024);
      CHECK(open_zarr(root.string()).read_strings("s") == values);
      if (version == 2) {
        const std::map<std::string, json> lines =
            lines_by_node(run_strings_peer("read " + test::quote(root.string()) + " s"));
        CHECK(lines.at("s")["values"].get<std::vector<std::string>>() == values);
      }
    }
}

TEST_CASE("zarr strings: a v3 string chunk failing its crc32c is CORRUPT naming it") {
  test::TempDir tmp;
  const fs::path root = tmp / "c.zarr";
  {
    stowage::Store s = stowage::Store::open(root.string(), stowage::Mode::create, "zarr");
    s.create("s", json{{"kind", "strings"}, {"shape", {2}}, {"chunks", {2}}});
    s.write_strings("s", {"ab", "c"});
    s.close();
  }
  json meta = test::read_json(root / "s" / "zarr.json");
  meta["codecs"].push_back({{"name", "crc32c"}});
  test::write_file(root / "s" / "zarr.json", meta.dump());
  const fs::path chunk = root / "s" / "c" / "0";
  test::write_file(chunk, test::read_file(chunk) + le32(0x12345678));  // not its CRC-32C
  const std::string message =
      TEST_REQUIRE_ERROR(open_zarr(root.string()).read_strings("s"), ErrorCode::corrupt);
  CHECK_MESSAGE(
      message.find(chunk.string() + ": chunk fails its crc32c checksum") != std::string::npos,
      message);
}
