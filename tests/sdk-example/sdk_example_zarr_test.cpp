// The out-of-tree example codec (examples/plugin-sdk, id "delta") in Zarr
// (issue 32): it declares no Zarr names, so the default rule knows it as
// numcodecs id "delta" and v3 name "delta" (or "numcodecs.delta"), its
// configuration passed through. Created into v2 and v3, read back, and
// hand-written metadata naming it read with the values the delta rule gives.
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cstring>

namespace {

namespace fs = test::fs;
using stowage::json;

// Installs stowage into `tmp`/dest and builds examples/plugin-sdk against it
// (pkg-config only); the directory holding stowage_codec_delta.so.
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

}  // namespace

TEST_CASE("the example codec, declaring no names, works in Zarr v2 and v3 by its id" *
          test::needs({"zarr"})) {
  test::TempDir tmp;
  stowage::Registry::Options o;
  o.paths = {build_example(tmp)};  // and the built plugins, through STOWAGE_PLUGIN_PATH
  o.use_default_dir = false;
  stowage::Registry registry(o);
  REQUIRE(registry.find("codec", "delta").has_value());

  std::vector<uint16_t> values(12 * 10);
  for (size_t i = 0; i < values.size(); ++i) values[i] = uint16_t(50000 + i * i);
  const json delta = {{"type", "delta"}, {"typesize", 2}};
  for (int version : {2, 3}) {
    CAPTURE(version);
    const fs::path path = tmp / ("created_v" + std::to_string(version) + ".zarr");
    {
      stowage::Store s = stowage::Store::open(path.string(), stowage::Mode::create, "zarr",
                                              {{"zarr_version", version}}, registry);
      s.create("d", {{"kind", "array"},
                     {"dtype", "uint16"},
                     {"shape", {12, 10}},
                     {"chunks", {5, 4}},
                     {"codec", delta}});
      s.array("d").write({0, 0}, {12, 10}, values.data());
      s.close();
    }
    const json written = version == 2 ? test::read_json(path / "d" / ".zarray")["compressor"]
                                      : test::read_json(path / "d" / "zarr.json")["codecs"][1];
    CHECK(nlohmann::json::parse(written.dump()) ==
          (version == 2 ? nlohmann::json{{"id", "delta"}, {"typesize", 2}}
                        : nlohmann::json{{"name", "delta"}, {"configuration", {{"typesize", 2}}}}));
    stowage::Store s =
        stowage::Store::open(path.string(), stowage::Mode::read, "zarr", json::object(), registry);
    CHECK(nlohmann::json::parse(s.describe_json("d")["codec"].dump()) ==
          nlohmann::json{{"type", "delta"}, {"typesize", 2}});
    std::vector<uint16_t> back(values.size());
    s.array("d").read({0, 0}, {12, 10}, back.data());
    CHECK(back == values);
  }

  // Hand-written metadata naming it: 1000, 1001, 1003, 1006 stored as their
  // differences 1000, 1, 2, 3 (the delta rule, delta.cpp).
  const std::string chunk = le16({1000, 1, 2, 3});
  const std::vector<uint16_t> expected{1000, 1001, 1003, 1006};
  const fs::path v2 = tmp / "hand_v2.zarr";
  write(v2 / ".zgroup", R"({"zarr_format": 2})");
  write(v2 / "a" / ".zarray",
        R"({"zarr_format":2,"shape":[4],"chunks":[4],"dtype":"<u2","compressor":)"
        R"({"id":"delta","typesize":2},"fill_value":0,"order":"C","filters":null})");
  write(v2 / "a" / "0", chunk);
  const fs::path v3 = tmp / "hand_v3.zarr";
  write(v3 / "zarr.json", R"({"zarr_format":3,"node_type":"group","attributes":{}})");
  for (const char* name : {"delta", "numcodecs.delta"}) {
    write(v3 / name / "zarr.json",
          std::string(R"({"zarr_format":3,"node_type":"array","shape":[4],"data_type":"uint16",)") +
              R"("chunk_grid":{"name":"regular","configuration":{"chunk_shape":[4]}},)" +
              R"("fill_value":0,"codecs":[{"name":"bytes","configuration":{"endian":"little"}},)" +
              R"({"name":")" + name + R"(","configuration":{"typesize":2}}]})");
    write(v3 / name / "c" / "0", chunk);
  }
  for (const auto& [store_path, node] : std::vector<std::pair<fs::path, std::string>>{
           {v2, "a"}, {v3, "delta"}, {v3, "numcodecs.delta"}}) {
    CAPTURE(node);
    stowage::Store s = stowage::Store::open(store_path.string(), stowage::Mode::read, "zarr",
                                            json::object(), registry);
    std::vector<uint16_t> back(4);
    s.array(node).read({0}, {4}, back.data());
    CHECK(back == expected);
  }
}
