// The SDK as a third party sees it: install stowage into a staging
// directory, build examples/plugin-sdk out of tree finding the SDK through pkg-config
// only, then load the results (the xordelta and snappy codecs) with the real
// registry and round-trip data: xordelta's bytes against hand-computed ones,
// the codec checks, python-snappy's bytes, N5 (created, and hand-written by
// Python; refusing xordelta), stowage-convert and the Python package. Zarr:
// sdk_example_zarr_test.cpp.
// Also: every place that reports stowage's version or plugin ABI agrees with
// the one source of each (meson.build's project version, plugin.h's ABI).
#include "codec_test_helpers.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <numeric>

namespace {

// Installs stowage into `tmp`/dest and builds examples/plugin-sdk in
// `tmp`/example-build against that staged SDK; returns the build folder.
std::string build_example(const test::TempDir& tmp) {
  std::string dest = (tmp / "dest").string();
  test::RunResult install =
      test::run("meson install -C " + test::quote(test::build_root().string()) +
                " --no-rebuild --quiet --destdir " + test::quote(dest));
  REQUIRE_MESSAGE(install.status == 0, install.output);
  test::RunResult pc = test::run("find " + test::quote(dest) + " -name stowage-sdk.pc");
  REQUIRE(pc.status == 0);
  std::string pc_dir =
      test::fs::path(pc.output.substr(0, pc.output.find('\n'))).parent_path().string();
  REQUIRE_MESSAGE(!pc_dir.empty(), "stowage-sdk.pc was not installed");

  // Only the staged SDK: PKG_CONFIG_SYSROOT_DIR maps its /usr/local/... paths into the staging
  // dir. (nlohmann_json's and snappy's files are in the compiler's and linker's own paths.)
  std::string env = "PKG_CONFIG_PATH=" + test::quote(pc_dir) +
                    " PKG_CONFIG_SYSROOT_DIR=" + test::quote(dest) + " ";
  std::string src = (test::source_root() / "examples" / "plugin-sdk").string();
  std::string build = (tmp / "example-build").string();
  test::RunResult setup =
      test::run(env + "meson setup " + test::quote(build) + " " + test::quote(src));
  REQUIRE_MESSAGE(setup.status == 0, setup.output);
  test::RunResult ninja = test::run(env + "ninja -C " + test::quote(build));
  REQUIRE_MESSAGE(ninja.status == 0, ninja.output);
  return build;
}

// The example's build, made once for the test cases that load it.
const std::string& example_build() {
  static const test::TempDir tmp;
  static std::string build;
  if (build.empty()) build = build_example(tmp);
  return build;
}

// A registry of the example's plugins alone, or (with_environment) also
// this build's, for the formats and storage.
stowage::Registry::Options example_registry_options(bool with_environment) {
  stowage::Registry::Options o;
  o.paths = {example_build()};
  o.use_environment = with_environment;
  o.use_default_dir = false;
  return o;
}

}  // namespace

namespace {

// Little-endian bytes of `values`, each `size` bytes wide.
std::string le(std::initializer_list<uint64_t> values, size_t size) {
  std::string out;
  for (uint64_t v : values)
    for (size_t b = 0; b < size; ++b) out += char((v >> (8 * b)) & 0xff);
  return out;
}

std::string text(const std::vector<uint8_t>& bytes) {
  return std::string(bytes.begin(), bytes.end());
}

// A JSON value with its keys sorted (stowage::json keeps their order).
nlohmann::json unordered(const stowage::json& j) { return nlohmann::json::parse(j.dump()); }

uint64_t bits(double v) {
  uint64_t u;
  std::memcpy(&u, &v, 8);
  return u;
}

// The code of the stowage::Error `f` throws.
template <class F>
stowage::ErrorCode code_of(F&& f) {
  try {
    f();
  } catch (const stowage::Error& e) {
    return e.code();
  }
  FAIL("no stowage::Error thrown");
  return stowage::ErrorCode::internal;
}

}  // namespace

TEST_CASE("examples/plugin-sdk builds out of tree; its xordelta encodes the XOR rule") {
  const std::string build = example_build();
  stowage::Registry registry(example_registry_options(false));
  auto info = registry.find("codec", "xordelta");
  REQUIRE(info.has_value());
  auto xordelta = [&](const std::string& config, const stowage::json& chunk) {
    return registry.array_codec(config, chunk);
  };
  const stowage::Codec u2 = xordelta(R"({"type":"xordelta"})", {{"dtype", "<u2"}, {"shape", {4}}});
  CHECK(registry.find("codec", "xordelta")->state == stowage::PluginState::loaded);
  CHECK(registry.find("codec", "xordelta")->codec_kind == "array");
  // The dtype defaults to the chunk's, written back canonically; it encodes
  // into unsigned integers of that width, in the chunk's shape.
  CHECK(u2.canonical_config() == R"({"dtype":"<u2","type":"xordelta"})");
  CHECK(unordered(u2.encoded_chunk()) == nlohmann::json{{"dtype", "<u2"}, {"shape", {4}}});
  CHECK(u2.bound(8) == 8);

  // Hand-computed: 1000, 1001, 1003, 1006 are stored as 1000, 1000^1001 = 1,
  // 1001^1003 = 2 and 1003^1006 = 5.
  const std::string plain = le({1000, 1001, 1003, 1006}, 2);
  const std::string coded = le({1000, 1, 2, 5}, 2);
  CHECK(text(u2.encode(plain.data(), plain.size())) == coded);
  CHECK(text(u2.decode(coded.data(), coded.size(), plain.size())) == plain);

  // float64 (Gorilla's case): -3.25 is 0xC00A..., -2.25 0xC002..., so the
  // second word is 0x0008000000000000; all four in one 2x2 chunk.
  const stowage::Codec f8 =
      xordelta(R"({"type":"xordelta"})", {{"dtype", "<f8"}, {"shape", {2, 2}}});
  CHECK(unordered(f8.encoded_chunk()) == nlohmann::json{{"dtype", "<u8"}, {"shape", {2, 2}}});
  const std::vector<double> floats{-3.25, -2.25, -1.25, -1.25};
  const std::string fcoded =
      le({0xC00A000000000000u, 0x0008000000000000u, bits(-2.25) ^ bits(-1.25), 0}, 8);
  CHECK(bits(-2.25) == 0xC002000000000000u);
  CHECK(text(f8.encode(floats.data(), 32)) == fcoded);
  CHECK(text(f8.decode(fcoded.data(), 32, 32)) == std::string((const char*)floats.data(), 32));

  // Bits have no byte order: a big-endian chunk XORs byte by byte, and its
  // encoded chunk keeps the byte order.
  const stowage::Codec be = xordelta(R"({"type":"xordelta"})", {{"dtype", ">i2"}, {"shape", {2}}});
  CHECK(unordered(be.encoded_chunk()) == nlohmann::json{{"dtype", ">u2"}, {"shape", {2}}});
  const std::string be_plain("\x12\x34\x12\x35", 4);
  CHECK(text(be.encode(be_plain.data(), 4)) == std::string("\x12\x34\x00\x01", 4));

  // "dtype" sets the element width: a uint8 chunk of 8 bytes as two 4-byte
  // words, encoded flat.
  const stowage::Codec u4 =
      xordelta(R"({"type":"xordelta","dtype":"<u4"})", {{"dtype", "|u1"}, {"shape", {2, 4}}});
  CHECK(unordered(u4.encoded_chunk()) == nlohmann::json{{"dtype", "<u4"}, {"shape", {2}}});
  const std::string w = le({0x01020304, 0x01020305}, 4);
  CHECK(text(u4.encode(w.data(), 8)) == le({0x01020304, 1}, 4));

  // Every width round-trips random bytes.
  std::string noise(4096, '\0');
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = char((i * 2654435761u) >> 13);
  for (const char* dtype : {"|i1", "<f2", ">u4", "<i8"}) {
    CAPTURE(dtype);
    const size_t size = std::stoul(std::string(dtype).substr(2));
    const stowage::Codec c =
        xordelta(R"({"type":"xordelta"})", {{"dtype", dtype}, {"shape", {noise.size() / size}}});
    auto enc = c.encode(noise.data(), noise.size());
    CHECK(text(enc) != noise);
    CHECK(text(c.decode(enc.data(), enc.size(), noise.size())) == noise);
  }

  // The caller's mistakes are INVALID_ARGUMENT, a wrong stored chunk CORRUPT.
  CHECK_THROWS_WITH_AS(
      xordelta(R"({"type":"xordelta","dtype":"<c16"})", {{"dtype", "<u2"}, {"shape", {4}}}),
      doctest::Contains("not 1, 2, 4 or 8 bytes wide"), stowage::Error);
  CHECK_THROWS_WITH_AS(
      xordelta(R"({"type":"xordelta","dtype":"<u8"})", {{"dtype", "|u1"}, {"shape", {3}}}),
      doctest::Contains("no whole number"), stowage::Error);
  CHECK(code_of([&] {
          xordelta(R"({"type":"xordelta","dtype":"|O"})", {{"dtype", "<u2"}, {"shape", {4}}});
        }) == stowage::ErrorCode::invalid_argument);
  std::vector<uint8_t> out(16);
  CHECK(code_of([&] { u2.encode(plain.data(), 6, out.data(), out.size()); }) ==
        stowage::ErrorCode::invalid_argument);
  CHECK(code_of([&] { u2.decode(coded.data(), 6, out.data(), out.size()); }) ==
        stowage::ErrorCode::corrupt);
  // An array -> array codec is no compressor.
  CHECK_THROWS_WITH_AS(registry.codec(R"({"type":"xordelta"})"),
                       doctest::Contains("codec 'xordelta' is array -> array (a filter)"),
                       stowage::Error);

  // The one exported symbol holds for a third party's build too.
  test::RunResult nm =
      test::run("nm -D --defined-only " + test::quote(build + "/stowage_codec_xordelta.so"));
  CHECK(nm.output.find("stowage_plugin_entry") != std::string::npos);
  CHECK(nm.output.find("basic_string") == std::string::npos);
}

TEST_CASE("the example snappy codec passes the codec checks and writes python-snappy's bytes") {
  stowage::Registry registry(example_registry_options(false));
  codec_checks::Spec spec;
  spec.config = R"({"type":"snappy"})";
  spec.id = "snappy";
  spec.registry = &registry;
  codec_checks::check_codec(spec);
  const stowage::Codec snappy = registry.codec(spec.config);
  CHECK(snappy.canonical_config() == R"({"type":"snappy"})");
  CHECK(registry.find("codec", "snappy")->state == stowage::PluginState::loaded);

  // python-snappy (Debian's python3-snappy, on the same libsnappy): the same
  // bytes, and each side decodes the other's.
  codec_test::PeerExchange peer;
  peer.put_samples({{".ours.snappy", snappy}});
  peer.run_python(R"PY(
import snappy
for n in sample_names:
    wr(n + '.py.snappy', snappy.compress(rd(n + '.data')))
    wr(n + '.snappy.by_py', snappy.decompress(rd(n + '.ours.snappy')))
)PY");
  codec_test::check_samples_came_back(peer, {".snappy.by_py"});
  codec_test::check_we_decode_theirs(peer, snappy, {".py.snappy"});
  codec_test::check_we_encode_their_bytes(peer, snappy, ".py.snappy");

  test::RunResult nm = test::run("nm -D --defined-only " +
                                 test::quote(example_build() + "/stowage_codec_snappy.so"));
  CHECK(nm.output.find("stowage_plugin_entry") != std::string::npos);
  CHECK(nm.output.find("snappy_compress") == std::string::npos);  // linked, not exported
}

namespace {

// The values of the N5 test arrays: uint16 6x10 (C order), v[r][c] = 100 r + c.
std::vector<uint16_t> grid_values() {
  std::vector<uint16_t> v;
  for (uint16_t r = 0; r < 6; ++r)
    for (uint16_t c = 0; c < 10; ++c) v.push_back(static_cast<uint16_t>(100 * r + c));
  return v;
}

std::vector<uint16_t> read_grid(const std::string& path, stowage::Registry& registry) {
  stowage::Store store =
      stowage::Store::open(path, stowage::Mode::read, "n5", stowage::json::object(), registry);
  stowage::Array a = store.array("v");
  REQUIRE(a.shape() == std::vector<uint64_t>{6, 10});
  std::vector<uint16_t> out(60);
  a.read({0, 0}, {6, 10}, out.data());
  return out;
}

std::string compression_type(const test::fs::path& dataset) {
  return test::read_json(dataset / "attributes.json")["compression"]["type"];
}

// Python writes N5 chunks by hand (header, then python-snappy's bytes), or
// checks ours the same way: `values` big-endian in 4x4 blocks, x fastest.
const char* kN5SnappyPeer = R"PY(
import json, os, struct, sys
import numpy as np
import snappy
mode, root = sys.argv[1], sys.argv[2]
values = (np.arange(6)[:, None] * 100 + np.arange(10)[None, :]).astype('>u2')
if mode == 'write':
    os.makedirs(os.path.join(root, 'v'))
    open(os.path.join(root, 'attributes.json'), 'w').write('{"n5": "4.0.0"}')
    open(os.path.join(root, 'v', 'attributes.json'), 'w').write(
        '{"dataType": "uint16", "dimensions": [10, 6], "blockSize": [4, 4], '
        '"compression": {"type": "snappy"}}')
for gx in range(3):
    for gy in range(2):
        block = values[4 * gy:4 * gy + 4, 4 * gx:4 * gx + 4]
        header = struct.pack('>HHII', 0, 2, block.shape[1], block.shape[0])
        chunk = os.path.join(root, 'v', str(gx), str(gy))
        if mode == 'write':
            os.makedirs(os.path.dirname(chunk), exist_ok=True)
            open(chunk, 'wb').write(header + snappy.compress(block.tobytes()))
        else:
            data = open(chunk, 'rb').read()
            assert data[:len(header)] == header, chunk
            assert snappy.decompress(data[len(header):]) == block.tobytes(), chunk
print('ok')
)PY";

void run_n5_peer(const std::string& mode, const std::string& root) {
  test::RunResult r = test::run_python(kN5SnappyPeer, mode + " " + test::quote(root));
  REQUIRE_MESSAGE(r.status == 0, r.output);
}

}  // namespace

TEST_CASE("snappy through N5: created, hand-written, stowage-convert and the Python package") {
  stowage::Registry registry(example_registry_options(true));
  test::TempDir tmp;
  const std::vector<uint16_t> values = grid_values();

  // Created through the API: python-snappy decodes every chunk.
  const std::string made = (tmp / "made.n5").string();
  {
    stowage::Store store =
        stowage::Store::open(made, stowage::Mode::create, "n5", stowage::json::object(), registry);
    store.create("v", stowage::json{{"kind", "array"},
                                    {"dtype", "uint16"},
                                    {"shape", {6, 10}},
                                    {"chunks", {4, 4}},
                                    {"codec", {{"type", "snappy"}}}});
    store.array("v").write({0, 0}, {6, 10}, values.data());
    store.close();
  }
  CHECK(compression_type(test::fs::path(made) / "v") == "snappy");
  CHECK(read_grid(made, registry) == values);
  run_n5_peer("check", made);

  // An attributes.json written by hand naming "type": "snappy", chunks from python-snappy.
  const std::string hand = (tmp / "hand.n5").string();
  run_n5_peer("write", hand);
  CHECK(read_grid(hand, registry) == values);

  // stowage-convert --compression snappy, with the plugin from --plugin-path.
  const std::string converted = (tmp / "converted.n5").string();
  const std::string tool =
      test::quote(test::build_root().string() + "/tools/convert/stowage-convert");
  test::RunResult convert =
      test::run(tool + " --quiet " + test::quote(made) + " " + test::quote(converted) +
                " --compression snappy --plugin-path=" + test::quote(example_build()));
  REQUIRE_MESSAGE(convert.status == 0, convert.output);
  CHECK(compression_type(test::fs::path(converted) / "v") == "snappy");
  CHECK(read_grid(converted, registry) == values);
  run_n5_peer("check", converted);

  // The Python package: stowage.convert(..., compression="snappy") and reading back.
  const char* python_package = std::getenv("STOWAGE_PYTHON_PACKAGE");
  if (python_package && std::string(python_package) == "1") {
    const std::string py_out = (tmp / "python.n5").string();
    test::RunResult py = test::run_python(
        R"PY(
import sys
import numpy as np
import stowage
plugins, src, dst = [sys.argv[1]], sys.argv[2], sys.argv[3]
stowage.convert(src, dst, compression="snappy", plugin_path=plugins)
got = np.asarray(stowage.open(dst, plugin_path=plugins)["v"])
want = np.arange(6)[:, None] * 100 + np.arange(10)[None, :]
assert got.dtype == np.uint16 and (got == want).all(), got
assert stowage.open(dst, plugin_path=plugins)["v"].codec["type"] == "snappy"
)PY",
        test::quote(example_build()) + " " + test::quote(hand) + " " + test::quote(py_out));
    REQUIRE_MESSAGE(py.status == 0, py.output);
    CHECK(compression_type(test::fs::path(py_out) / "v") == "snappy");
    run_n5_peer("check", py_out);
  }
}

TEST_CASE("N5 has no filter slot: it refuses the array -> array example codec clearly") {
  stowage::Registry registry(example_registry_options(true));
  test::TempDir tmp;
  const std::string path = (tmp / "refused.n5").string();
  stowage::Store store =
      stowage::Store::open(path, stowage::Mode::create, "n5", stowage::json::object(), registry);
  const stowage::json description{{"kind", "array"},
                                  {"dtype", "uint16"},
                                  {"shape", {6, 10}},
                                  {"chunks", {4, 4}},
                                  {"codec", {{"type", "xordelta"}}}};
  try {
    store.create("v", description);
    FAIL("N5 took an array -> array codec as its compression");
  } catch (const stowage::Error& e) {
    CHECK(e.code() == stowage::ErrorCode::invalid_argument);
    CHECK_MESSAGE(std::string(e.what()).find(
                      "codec 'xordelta' is array -> array (a filter): it goes where the format "
                      "takes filters, not here") != std::string::npos,
                  e.what());
  }
  // Nothing half-made: no dataset, and the store still takes a compressor.
  CHECK_FALSE(test::fs::exists(test::fs::path(path) / "v" / "attributes.json"));
  stowage::json snappy = description;
  snappy["codec"] = {{"type", "snappy"}};
  store.create("v", snappy);
  store.close();
  CHECK(compression_type(test::fs::path(path) / "v") == "snappy");
}

namespace {
// The first line of `s`, without its newline.
std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }
}  // namespace

TEST_CASE("every version stowage reports is meson.build's, every ABI plugin.h's") {
  const std::string build = test::build_root().string();
  test::RunResult info = test::run("meson introspect --projectinfo " + test::quote(build));
  REQUIRE_MESSAGE(info.status == 0, info.output);
  const std::string version =
      stowage::json::parse(info.output.substr(info.output.find('{')))["version"];
  const std::string abi = std::to_string(STOWAGE_PLUGIN_ABI);

  CHECK(std::string(STOWAGE_SDK_VERSION) == version);  // stowage/version.h, generated
  CHECK(std::string(stowage::version()) == version);   // libstowage

  // pkg-config, as a plugin author's build sees the SDK.
  const std::string pc =
      "PKG_CONFIG_PATH=" + test::quote(build + "/meson-private") + " pkg-config ";
  test::RunResult modversion = test::run(pc + "--modversion stowage-sdk");
  REQUIRE_MESSAGE(modversion.status == 0, modversion.output);
  CHECK(first_line(modversion.output) == version);
  test::RunResult pc_abi = test::run(pc + "--variable=plugin_abi stowage-sdk");
  CHECK(first_line(pc_abi.output) == abi);
  test::RunResult plugindir = test::run(pc + "--variable=plugindir stowage-sdk");
  CHECK(first_line(plugindir.output).size() > 0);
  CHECK(plugindir.output.find("/stowage/plugins-" + abi) != std::string::npos);

  // The tools.
  const std::string tool = test::quote(build + "/tools/plugin-list/stowage-plugin-list");
  test::RunResult v = test::run(tool + " --version");
  REQUIRE_MESSAGE(v.status == 0, v.output);
  CHECK_MESSAGE(
      v.output.find("(stowage " + version + ", plugin ABI " + abi + ")") != std::string::npos,
      v.output);
  test::RunResult list = test::run(tool + " --json");
  REQUIRE_MESSAGE(list.status == 0, list.output);
  stowage::json doc = stowage::json::parse(list.output);
  CHECK(doc["stowage_version"] == version);
  CHECK(doc["abi"] == STOWAGE_PLUGIN_ABI);

  // A plugin built here says which SDK it was built with.
  stowage::Registry& registry = stowage::Registry::global();
  registry.codec(R"({"type":"raw"})");
  auto raw = registry.find("codec", "raw");
  REQUIRE(raw.has_value());
  CHECK_MESSAGE(raw->build_info.find("sdk " + version + ",") != std::string::npos, raw->build_info);
  CHECK(raw->abi_version == STOWAGE_PLUGIN_ABI);

  // The Python package (its wheel's version is meson's too, through meson-python).
  const char* python_package = std::getenv("STOWAGE_PYTHON_PACKAGE");
  if (python_package && std::string(python_package) == "1") {
    test::RunResult py =
        test::run(test::python() + " -c 'import stowage; print(stowage.__version__)'");
    REQUIRE_MESSAGE(py.status == 0, py.output);
    CHECK(first_line(py.output) == version);
  }
}
