// float16, complex64 and complex128 in Zarr: zarr-python 2.13 writes v2
// arrays of them (both byte orders, fill values in the file) that stowage
// reads equal to numpy's values, and reads back what stowage writes; v3
// fill values in every form the spec gives them (numbers, "NaN",
// "Infinity", hex bits, [re, im] pairs) read back right.
#include "zarr_helpers.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace zarrtest;

namespace {

std::string dtype_of(const std::string& typestr) {
  const char kind = typestr[1];
  if (kind == 'f') return "float16";
  return typestr.substr(2) == "8" ? "complex64" : "complex128";
}

template <class T>
std::string bytes_of(std::initializer_list<T> values) {
  std::string out(values.size() * sizeof(T), '\0');
  size_t i = 0;
  for (T v : values) std::memcpy(out.data() + sizeof(T) * i++, &v, sizeof v);
  return out;
}

std::string repeat(const std::string& element, uint64_t n) {
  std::string out;
  for (uint64_t i = 0; i < n; ++i) out += element;
  return out;
}

}  // namespace

TEST_CASE("zarr-python writes float16 and complex (both byte orders, fill values), stowage reads") {
  test::TempDir tmp;
  const fs::path theirs = tmp / "theirs.zarr", out = tmp / "dump";
  fs::create_directories(out);
  run_peer("write-dtypes " + test::quote(theirs.string()) + " " + test::quote(out.string()));
  const json manifest = test::read_json(out / "manifest.json");
  REQUIRE(manifest["arrays"].size() == 6);
  stowage::Store store = open_zarr(theirs.string());
  for (const json& entry : manifest["arrays"]) {
    const std::string node = entry["node"], typestr = entry["dtype"];
    CAPTURE(node);
    const json d = store.describe_json(node);
    CHECK(d["dtype"] == dtype_of(typestr));
    CHECK(d["byte_order"] == (typestr[0] == '>' ? "big" : "little"));
    CHECK(d["fill_value"] == entry["fill_value"]);  // complex: [re, im] as .zarray has it
    // The rows never written read as the fill value in numpy's dump too.
    CHECK(read_bytes(store.array(node)) == dumped(out, node));
  }
}

TEST_CASE("stowage writes float16 and complex Zarr v2, zarr-python reads values and fill values") {
  struct Case {
    std::string name, dtype, byte_order;
    json fill;
    std::string fill_bytes;  // one element, host order, as numpy holds the fill value
    std::string typestr;
  };
  const float inf = HUGE_VALF;
  const std::vector<Case> cases = {
      {"f2", "float16", "little", "NaN", bytes_of<uint16_t>({0x7e00}), "<f2"},
      {"f2be", "float16", "big", -1.5, bytes_of<uint16_t>({0xbe00}), ">f2"},
      {"c8", "complex64", "little", json::array({1.5, -2.0}), bytes_of<float>({1.5f, -2.0f}),
       "<c8"},
      {"c8be", "complex64", "big", json::array({"-Infinity", 2.5}), bytes_of<float>({-inf, 2.5f}),
       ">c8"},
      {"c16be", "complex128", "big", json::array({-0.25, 1e300}), bytes_of<double>({-0.25, 1e300}),
       ">c16"},
      {"c16", "complex128", "little", 0, bytes_of<double>({0.0, 0.0}), "<c16"},
  };
  test::TempDir tmp;
  const fs::path ours = tmp / "ours.zarr", out = tmp / "dump";
  fs::create_directories(out);
  std::map<std::string, std::string> expected;
  {
    stowage::Store store =
        stowage::Store::open(ours.string(), stowage::Mode::create, "zarr", {{"zarr_version", 2}});
    uint64_t seed = 7;
    for (const Case& c : cases) {
      CAPTURE(c.name);
      store.create(c.name, {{"kind", "array"},
                            {"dtype", c.dtype},
                            {"shape", {10, 3}},
                            {"chunks", {4, 2}},
                            {"byte_order", c.byte_order},
                            {"fill_value", c.fill}});
      // Random bits for 5 rows (NaN payloads and infinities among them); the
      // other rows are chunks never written, or parts of one.
      const size_t esize = stowage::dtype_size(stowage::parse_dtype(c.dtype));
      std::string data(5 * 3 * esize, '\0');
      for (char& b : data) b = static_cast<char>((seed = seed * 6364136223846793005ull + 1) >> 56);
      store.array(c.name).write({0, 0}, {5, 3}, data.data());
      expected[c.name] = data + repeat(c.fill_bytes, 5 * 3);
    }
    store.close();
  }
  std::string nodes;
  for (const Case& c : cases) nodes += " " + c.name;
  const std::map<std::string, json> seen = lines_by_node(
      run_peer("read " + test::quote(ours.string()) + " " + test::quote(out.string()) + nodes));
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const json& z = seen.at(c.name);
    CHECK(z["dtype"] == c.typestr);
    CHECK(z["fill_value"] == (c.fill == 0 ? json::array({0.0, 0.0}) : c.fill));
    CHECK(dumped(out, c.name) == expected[c.name]);
    // And the file spells a complex fill value as zarr-python does: [re, im].
    const json zarray = test::read_json(ours / c.name / ".zarray");
    if (c.dtype != "float16") CHECK(zarray["fill_value"].is_array());
  }
}

namespace {

// A v3 array of 4 elements in 2 chunks, neither written: it reads as its fill value.
void write_v3_array(const fs::path& dir, const std::string& dtype, const json& fill,
                    const std::string& endian = "little") {
  fs::create_directories(dir);
  json meta = {{"zarr_format", 3},
               {"node_type", "array"},
               {"shape", {4}},
               {"data_type", dtype},
               {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {2}}}}}},
               {"chunk_key_encoding", {{"name", "default"}}},
               {"fill_value", fill},
               {"codecs", {{{"name", "bytes"}, {"configuration", {{"endian", endian}}}}}}};
  test::write_file(dir / "zarr.json", meta.dump());
}

}  // namespace

TEST_CASE("Zarr v3 fill values of float16 and complex, in each form the spec gives, read right") {
  struct Case {
    std::string name, dtype;
    json fill, described;
    std::string element;  // host order
  };
  const std::vector<Case> cases = {
      {"f2_number", "float16", 0.5, 0.5, bytes_of<uint16_t>({0x3800})},
      {"f2_inf", "float16", "-Infinity", "-Infinity", bytes_of<uint16_t>({0xfc00})},
      {"f2_nan", "float16", "NaN", "NaN", bytes_of<uint16_t>({0x7e00})},
      // A NaN's payload is kept in the file; missing chunks read as the host's NaN.
      {"f2_hex", "float16", "0x7c01", "NaN", bytes_of<uint16_t>({0x7e00})},
      {"f2_hex_one", "float16", "0x3c00", 1.0, bytes_of<uint16_t>({0x3c00})},
      {"f2_rounded", "float16", 0.1, 0.1, bytes_of<uint16_t>({0x2e66})},  // numpy: float16(0.1)
      {"c8_pair", "complex64", json::array({1.5, -2.0}), json::array({1.5, -2.0}),
       bytes_of<float>({1.5f, -2.0f})},
      {"c8_special", "complex64", json::array({"NaN", "-Infinity"}),
       json::array({"NaN", "-Infinity"}), bytes_of<uint32_t>({0x7fc00000, 0xff800000})},
      {"c8_hex", "complex64", json::array({"0x3f800000", "0x7fc00001"}), json::array({1.0, "NaN"}),
       bytes_of<uint32_t>({0x3f800000, 0x7fc00000})},
      {"c16_pair", "complex128", json::array({-0.25, 1e300}), json::array({-0.25, 1e300}),
       bytes_of<double>({-0.25, 1e300})},
      {"c16_hex", "complex128", json::array({2.5, "0xfff0000000000000"}),
       json::array({2.5, "-Infinity"}), bytes_of<double>({2.5, -HUGE_VAL})},
  };
  test::TempDir tmp;
  const fs::path root = tmp / "v3.zarr";
  fs::create_directories(root);
  test::write_file(root / "zarr.json", R"({"zarr_format":3,"node_type":"group"})");
  for (const Case& c : cases) write_v3_array(root / c.name, c.dtype, c.fill);
  write_v3_array(root / "c16_big", "complex128", json::array({-0.25, 1e300}), "big");
  stowage::Store store = open_zarr(root.string());
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const json d = store.describe_json(c.name);
    CHECK(d["dtype"] == c.dtype);
    CHECK(d["fill_value"] == c.described);
    CHECK(read_bytes(store.array(c.name)) == repeat(c.element, 4));
  }
  // A big-endian complex128 fills each part in host order all the same.
  CHECK(read_bytes(store.array("c16_big")) == repeat(bytes_of<double>({-0.25, 1e300}), 4));
}

TEST_CASE(
    "a complex fill value that is no pair, or a hex of the wrong width, is CORRUPT naming the file") {
  test::TempDir tmp;
  const fs::path root = tmp / "bad.zarr";
  fs::create_directories(root);
  test::write_file(root / "zarr.json", R"({"zarr_format":3,"node_type":"group"})");
  write_v3_array(root / "triple", "complex64", json::array({1, 2, 3}));
  write_v3_array(root / "word", "complex64", json::array({"one", 2}));
  write_v3_array(root / "wide", "float16", "0x7fc00000");
  stowage::Store store = open_zarr(root.string());
  for (const char* node : {"triple", "word", "wide"}) {
    CAPTURE(node);
    const std::string message =
        TEST_REQUIRE_ERROR(store.describe(node), stowage::ErrorCode::corrupt);
    CHECK(message.find("zarr.json") != std::string::npos);
    CHECK(message.find("fill_value") != std::string::npos);
  }
}

TEST_CASE(
    "stowage writes float16 and complex Zarr v3: data_type, fill value and bytes as the spec has them") {
  test::TempDir tmp;
  const fs::path path = tmp / "w.zarr";
  const std::string values = bytes_of<double>({1.0, -2.0, HUGE_VAL, -0.0, 3.5, 1e-300});
  {
    stowage::Store store = stowage::Store::open(path.string(), stowage::Mode::create, "zarr");
    store.create("c", {{"kind", "array"},
                       {"dtype", "complex128"},
                       {"shape", {5}},
                       {"chunks", {2}},
                       {"byte_order", "big"},
                       {"fill_value", json::array({"NaN", 1.5})}});
    store.array("c").write({0}, {3}, values.data());
    store.create(
        "h",
        {{"kind", "array"}, {"dtype", "float16"}, {"shape", {3}}, {"fill_value", "-Infinity"}});
    store.close();
  }
  const json c = test::read_json(path / "c" / "zarr.json");
  CHECK(c["data_type"] == "complex128");
  CHECK(c["fill_value"] == json::array({"NaN", 1.5}));
  CHECK(c["codecs"][0]["configuration"]["endian"] == "big");
  // The first chunk on disk: each 8-byte part big-endian on its own.
  std::string chunk = test::read_file(path / "c" / "c" / "0");
  REQUIRE(chunk.size() == 32);
  for (size_t part = 0; part < 4; ++part)
    std::reverse(chunk.begin() + 8 * part, chunk.begin() + 8 * part + 8);
  CHECK(chunk == values.substr(0, 32));
  const json h = test::read_json(path / "h" / "zarr.json");
  CHECK(h["data_type"] == "float16");
  CHECK(h["fill_value"] == "-Infinity");
  stowage::Store back = open_zarr(path.string());
  const std::string got = read_bytes(back.array("c"));
  CHECK(got.substr(0, 48) == values);
  CHECK(got.substr(48) ==
        repeat(bytes_of<double>({std::numeric_limits<double>::quiet_NaN(), 1.5}), 2));
  CHECK(read_bytes(back.array("h")) == repeat(bytes_of<uint16_t>({0xfc00}), 3));
}
