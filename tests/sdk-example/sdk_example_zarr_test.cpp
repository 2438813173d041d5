// The out-of-tree example codecs (examples/plugin-sdk) in Zarr (issue 32):
// xordelta, an array -> array codec, as a filter and snappy, a bytes ->
// bytes one, as the compressor. They declare no Zarr names, so the default
// rule knows them by their ids: numcodecs filter {"id": "xordelta"} and
// compressor {"id": "snappy"} in a .zarray, "xordelta" (or
// "numcodecs.xordelta") before "bytes" and "snappy" after it in a zarr.json.
// Created into v2 and read back by stowage, the Python package and
// zarr-python 2.13 with numcodecs codecs registered for both
// (xordelta_peer.py); zarr-python's array read by stowage; hand-written v2
// and v3 metadata naming them read with the values the XOR rule gives.
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>

namespace {

namespace fs = test::fs;
using stowage::json;

// Installs stowage into `tmp`/dest and builds examples/plugin-sdk against it
// (pkg-config only); the directory holding stowage_codec_xordelta.so.
std::string build_example(const test::TempDir& tmp) {
  const std::string dest = (tmp / "dest").string();
  test::RunResult install =
      test::run("meson install -C " + test::quote(test::build_root().string()) +
                " --no-rebuild --quiet --destdir " + test::quote(dest));
  REQUIRE_MESSAGE(install.status == 0, install.output);
  test::RunResult pc = test::run("find " + test::quote(dest) + " -name stowage-sdk.pc");
  REQUIRE(pc.status == 0);
  const std::string pc_dir = fs::path(pc.output.substr(0, pc.output.find('\n'))).parent_path();
  REQUIRE_MESSAGE(!pc_dir.empty(), "stowage-sdk.pc was not installed");
  const std::string env = "PKG_CONFIG_PATH=" + test::quote(pc_dir) +
                          " PKG_CONFIG_SYSROOT_DIR=" + test::quote(dest) + " ";
  const std::string src = (test::source_root() / "examples" / "plugin-sdk").string();
  const std::string build = (tmp / "example-build").string();
  test::RunResult setup =
      test::run(env + "meson setup " + test::quote(build) + " " + test::quote(src));
  REQUIRE_MESSAGE(setup.status == 0, setup.output);
  test::RunResult ninja = test::run(env + "ninja -C " + test::quote(build));
  REQUIRE_MESSAGE(ninja.status == 0, ninja.output);
  return build;
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  test::write_file(p, text);
}

// Little-endian uint16 bytes.
std::string le16(std::initializer_list<uint16_t> values) {
  std::string out;
  for (uint16_t v : values) out += {char(v & 0xff), char(v >> 8)};
  return out;
}

// Runs xordelta_peer.py (zarr-python 2.13 with the example codecs as
// numcodecs codecs); its output.
std::string run_peer(const std::string& args) {
  const fs::path script = test::source_root() / "tests" / "sdk-example" / "xordelta_peer.py";
  test::RunResult r = test::run(test::python() + " " + test::quote(script.string()) + " " + args);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  return r.output;
}

// The JSON line a peer printed.
json peer_line(const std::string& output) {
  const size_t brace = output.find('{');
  REQUIRE_MESSAGE(brace != std::string::npos, output);
  return json::parse(output.substr(brace, output.find('\n', brace) - brace));
}

// The values of the created arrays: float64 12x10, slowly varying (the
// data a Gorilla-style XOR suits), some exact and some not.
std::vector<double> smooth_values() {
  std::vector<double> v(12 * 10);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 20.0 + 0.125 * double(i) + (i % 7 == 3 ? 0.1 : 0);
  return v;
}

std::string as_bytes(const std::vector<double>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
}

}  // namespace

TEST_CASE("the example codecs in Zarr: xordelta as a filter, snappy as the compressor" *
          test::needs({"zarr"})) {
  test::TempDir tmp;
  stowage::Registry::Options o;
  const std::string example = build_example(tmp);
  o.paths = {example};  // and the built plugins, through STOWAGE_PLUGIN_PATH
  o.use_default_dir = false;
  stowage::Registry registry(o);
  REQUIRE(registry.find("codec", "xordelta").has_value());
  REQUIRE(registry.find("codec", "snappy").has_value());
  const stowage::Codec snappy = registry.codec(R"({"type":"snappy"})");

  // Created into v2 through the API: the filter as numcodecs spells it.
  const std::vector<double> values = smooth_values();
  const fs::path v2 = tmp / "created_v2.zarr";
  {
    stowage::Store s = stowage::Store::open(v2.string(), stowage::Mode::create, "zarr",
                                            {{"zarr_version", 2}}, registry);
    json filters = json::array();
    filters.push_back({{"id", "xordelta"}});
    s.create("d", {{"kind", "array"},
                   {"dtype", "float64"},
                   {"shape", {12, 10}},
                   {"chunks", {5, 4}},
                   {"codec", {{"type", "snappy"}}},
                   {"storage", {{"filters", filters}}}});
    s.array("d").write({0, 0}, {12, 10}, values.data());
    s.close();
  }
  const json zarray = test::read_json(v2 / "d" / ".zarray");
  CHECK(nlohmann::json::parse(zarray["compressor"].dump()) == nlohmann::json{{"id", "snappy"}});
  CHECK(nlohmann::json::parse(zarray["filters"].dump()) ==
        nlohmann::json::array({{{"id", "xordelta"}}}));
  {
    stowage::Store s =
        stowage::Store::open(v2.string(), stowage::Mode::read, "zarr", json::object(), registry);
    const json d = s.describe_json("d");
    CHECK(nlohmann::json::parse(d["codec"].dump()) == nlohmann::json{{"type", "snappy"}});
    CHECK(nlohmann::json::parse(d["storage"]["filters"].dump()) ==
          nlohmann::json::array({{{"id", "xordelta"}}}));
    std::vector<double> back(values.size());
    s.array("d").read({0, 0}, {12, 10}, back.data());
    CHECK(as_bytes(back) == as_bytes(values));
  }
  // On disk, chunk 0.0 is snappy over the XOR rule: its first row's second
  // word is the XOR of values[0] and values[1]'s bits.
  {
    const std::string file = test::read_file(v2 / "d" / "0.0");
    const auto raw = snappy.decode(file.data(), file.size(), 5 * 4 * 8);
    uint64_t w0, w1, b0, b1;
    std::memcpy(&w0, raw.data(), 8);
    std::memcpy(&w1, raw.data() + 8, 8);
    std::memcpy(&b0, &values[0], 8);
    std::memcpy(&b1, &values[1], 8);
    CHECK(w0 == b0);
    CHECK(w1 == (b0 ^ b1));
  }

  // The Python package reads it with the example's plugins.
  const char* python_package = std::getenv("STOWAGE_PYTHON_PACKAGE");
  if (python_package && std::string(python_package) == "1") {
    test::RunResult py = test::run_python(
        R"PY(
import sys
import numpy as np
import stowage
plugins, path = [sys.argv[1]], sys.argv[2]
a = stowage.open(path, plugin_path=plugins)["d"]
got = np.asarray(a)
i = np.arange(120, dtype=np.float64)
want = (20.0 + 0.125 * i + np.where(i % 7 == 3, 0.1, 0.0)).reshape(12, 10)
assert got.dtype == np.float64 and got.shape == (12, 10), (got.dtype, got.shape)
assert (got.view(np.uint64) == want.view(np.uint64)).all(), got
print('ok')
)PY",
        test::quote(example) + " " + test::quote(v2.string()));
    REQUIRE_MESSAGE(py.status == 0, py.output);
  }

  // zarr-python 2.13, with numcodecs codecs for both registered, reads the
  // same values bit for bit and sees the same filters and compressor.
  {
    const fs::path dump = tmp / "d.bin";
    const json seen = peer_line(
        run_peer("read " + test::quote(v2.string()) + " d " + test::quote(dump.string())));
    CHECK(seen["dtype"] == "<f8");
    CHECK(seen["shape"] == json::array({12, 10}));
    CHECK(seen["filters"] == json::array({{{"id", "xordelta"}}}));
    CHECK(seen["compressor"] == json{{"id", "snappy"}});
    CHECK(test::read_file(dump) == as_bytes(values));
  }

  // And the other way: zarr-python writes big-endian float64 with both, stowage reads numpy's
  // values.
  {
    const fs::path theirs = tmp / "theirs.zarr";
    run_peer("write " + test::quote(theirs.string()));
    stowage::Store s = stowage::Store::open(theirs.string(), stowage::Mode::read, "zarr",
                                            json::object(), registry);
    CHECK(nlohmann::json::parse(s.describe_json("py")["storage"]["filters"].dump()) ==
          nlohmann::json::array({{{"id", "xordelta"}, {"dtype", ">f8"}}}));
    std::vector<double> back(63);
    s.array("py").read({0, 0}, {7, 9}, back.data());
    std::vector<double> want(63);
    for (size_t i = 0; i < want.size(); ++i) want[i] = double(i) - 3.25;
    CHECK(as_bytes(back) == as_bytes(want));
  }

  // Hand-written metadata naming them: 1000, 1001, 1003, 1006 stored as
  // 1000, 1000^1001 = 1, 1001^1003 = 2, 1003^1006 = 5 (xordelta.cpp), then
  // snappy's bytes of that.
  const std::string plain = le16({1000, 1, 2, 5});
  const auto packed = snappy.encode(plain.data(), plain.size());
  const std::string chunk(packed.begin(), packed.end());
  const std::vector<uint16_t> expected{1000, 1001, 1003, 1006};
  const fs::path hand2 = tmp / "hand_v2.zarr";
  write(hand2 / ".zgroup", R"({"zarr_format": 2})");
  write(hand2 / "a" / ".zarray",
        R"({"zarr_format":2,"shape":[4],"chunks":[4],"dtype":"<u2","compressor":)"
        R"({"id":"snappy"},"fill_value":0,"order":"C","filters":[{"id":"xordelta"}]})");
  write(hand2 / "a" / "0", chunk);
  const fs::path hand3 = tmp / "hand_v3.zarr";
  write(hand3 / "zarr.json", R"({"zarr_format":3,"node_type":"group","attributes":{}})");
  for (const std::string name : {"xordelta", "numcodecs.xordelta"}) {
    const std::string filter =
        name == "xordelta" ? R"({"name":"xordelta"})"
                           : R"({"name":"numcodecs.xordelta","configuration":{"dtype":"<u2"}})";
    write(hand3 / name / "zarr.json",
          R"({"zarr_format":3,"node_type":"array","shape":[4],"data_type":"uint16",)"
          R"("chunk_grid":{"name":"regular","configuration":{"chunk_shape":[4]}},)"
          R"("chunk_key_encoding":{"name":"default"},"fill_value":0,"codecs":[)" +
              filter + R"(,{"name":"bytes","configuration":{"endian":"little"}},)" +
              R"({"name":"snappy"}]})");
    write(hand3 / name / "c" / "0", chunk);
  }
  for (const auto& [store_path, node] : std::vector<std::pair<fs::path, std::string>>{
           {hand2, "a"}, {hand3, "xordelta"}, {hand3, "numcodecs.xordelta"}}) {
    CAPTURE(node);
    stowage::Store s = stowage::Store::open(store_path.string(), stowage::Mode::read, "zarr",
                                            json::object(), registry);
    std::vector<uint16_t> back(4);
    s.array(node).read({0}, {4}, back.data());
    CHECK(back == expected);
  }
  // zarr-python reads the hand-written v2 array the same.
  const fs::path dump = tmp / "a.bin";
  run_peer("read " + test::quote(hand2.string()) + " a " + test::quote(dump.string()));
  CHECK(test::read_file(dump) == le16({1000, 1001, 1003, 1006}));
}
