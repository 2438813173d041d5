// Conversion into and out of Zarr through stowage::copy and stowage-convert:
// the destination's open options and shards (--zarr-version, --shards,
// --open-option), N5 codecs kept as their numcodecs counterparts, and
// multiscale metadata between n5-viewer's keys and OME-NGFF (the pure
// mapping of core/src/ome_zarr.cpp first, then whole conversions read back
// by zarr-python 2.13).
#include "test_support.hpp"

#include "ome_zarr.hpp"

#include <stowage/copy.hpp>

#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <set>

using stowage::json;
namespace fs = std::filesystem;
namespace ome = stowage::ome;

namespace {

// JSON equality ignoring key order (ordered_json compares the order too).
nlohmann::json unordered(const json& j) { return nlohmann::json::parse(j.dump()); }

std::string convert_cmd() { return test::env_or("STOWAGE_CONVERT", "stowage-convert"); }
std::string q(const fs::path& p) { return test::quote(p.string()); }

// The group attributes of the n5-viewer example below: s0's voxel size in
// N5 order (X, Y, Z) and its unit.
const json kPixelResolution = {{"unit", "um"}, {"dimensions", {0.5, 0.25, 2.0}}};

// Three levels of a 3-d N5 group: factors [2,2,1] and [4,4,2] (X, Y, Z).
std::vector<ome::Level> example_levels() {
  return {{"s0", json::object(), {}, 3},
          {"s1", {{"downsamplingFactors", {2, 2, 1}}}, {}, 3},
          {"s2", {{"downsamplingFactors", {4, 4, 2}}}, {}, 3}};
}

// What the example becomes, worked out by hand: axes z, y, x (N5's X, Y, Z
// reversed); scale = resolution * factor, translation = resolution *
// (factor - 1) / 2, both in z, y, x order.
json expected_multiscale() {
  const json axes = json::array({{{"name", "z"}, {"type", "space"}, {"unit", "micrometer"}},
                                 {{"name", "y"}, {"type", "space"}, {"unit", "micrometer"}},
                                 {{"name", "x"}, {"type", "space"}, {"unit", "micrometer"}}});
  auto level = [](const char* path, json scale, json translation) {
    json t = json::array({{{"type", "scale"}, {"scale", scale}}});
    if (!translation.is_null())
      t.push_back({{"type", "translation"}, {"translation", translation}});
    return json{{"path", path}, {"coordinateTransformations", t}};
  };
  const json datasets =
      json::array({level("s0", {2, 0.25, 0.5}, nullptr), level("s1", {2, 0.5, 1}, {0, 0.125, 0.25}),
                   level("s2", {4, 1, 2}, {1, 0.375, 0.75})});
  return {{"axes", axes}, {"datasets", datasets}};
}

}  // namespace

// ---- the mapping alone -------------------------------------------------------------------

TEST_CASE(
    "ome: an n5-viewer group becomes OME-NGFF 0.4 multiscales, axes reversed, half-voxel offsets") {
  const json group = {{"pixelResolution", kPixelResolution}, {"name", "raw"}};
  std::string why;
  const json got = ome::multiscales_from_n5(group, example_levels(), "0.4", &why);
  json want = expected_multiscale();
  want["version"] = "0.4";
  want["name"] = "raw";
  CHECK(why.empty());
  REQUIRE(got.contains("multiscales"));
  CHECK(unordered(got) == unordered(json{{"multiscales", json::array({want})}}));
}

TEST_CASE("ome: 0.5 puts it under \"ome\" with the version there, not in the multiscale") {
  const json got =
      ome::multiscales_from_n5({{"pixelResolution", kPixelResolution}}, example_levels(), "0.5");
  CHECK(unordered(got) ==
        unordered(json{
            {"ome", {{"version", "0.5"}, {"multiscales", json::array({expected_multiscale()})}}}}));
}

TEST_CASE(
    "ome: factors from the group's scales, resolution and units from tensorstore's keys, names from dims") {
  // 2-d, dims named, resolution a plain list with per-dimension units.
  const json group = {
      {"scales", {{1, 1}, {2, 3}}}, {"resolution", {4, 8}}, {"units", {"nm", "nm"}}};
  const std::vector<ome::Level> levels = {{"s1", json::object(), {"row", "col"}, 2},
                                          {"s0", json::object(), {"row", "col"}, 2},
                                          {"labels", json::object(), {}, 2}};
  const json got = ome::multiscales_from_n5(group, levels, "0.4");
  REQUIRE(got.contains("multiscales"));
  const json& ms = got["multiscales"][0];
  CHECK(unordered(ms["axes"]) ==
        unordered(json::array({{{"name", "row"}, {"type", "space"}, {"unit", "nanometer"}},
                               {{"name", "col"}, {"type", "space"}, {"unit", "nanometer"}}})));
  REQUIRE(ms["datasets"].size() == 2);  // "labels" is not a level
  CHECK(ms["datasets"][1]["path"] == "s1");
  // N5 [X=2, Y=3] of [X=4, Y=8]: scale (Y, X) = [24, 8], translation [8, 2].
  CHECK(unordered(ms["datasets"][1]["coordinateTransformations"]) ==
        unordered(json::array({{{"type", "scale"}, {"scale", {24, 8}}},
                               {{"type", "translation"}, {"translation", {8, 2}}}})));
  CHECK(ms["datasets"][0]["coordinateTransformations"].size() == 1);  // s0: no offset
}

TEST_CASE(
    "ome: groups that are not n5-viewer multiscales give nothing, and say why when they look like one") {
  std::string why;
  // A dataset named s0 and no factors anywhere: an ordinary group.
  CHECK(ome::multiscales_from_n5(json::object(), {{"s0", json::object(), {}, 3}}, "0.4", &why)
            .is_null());
  CHECK(why.empty());
  // A gap.
  CHECK(ome::multiscales_from_n5(
            json::object(),
            {{"s0", json::object(), {}, 3}, {"s2", {{"downsamplingFactors", {2, 2, 2}}}, {}, 3}},
            "0.4", &why)
            .is_null());
  CHECK(why.find("s0..sN") != std::string::npos);
  // A level without factors.
  why.clear();
  CHECK(ome::multiscales_from_n5({{"scales", {{1, 1, 1}}}},
                                 {{"s0", json::object(), {}, 3}, {"s1", json::object(), {}, 3}},
                                 "0.4", &why)
            .is_null());
  CHECK(why.find("s1 has no downsamplingFactors") != std::string::npos);
  // Four unnamed dimensions: OME needs to know which is time or channel.
  why.clear();
  CHECK(ome::multiscales_from_n5(
            json::object(),
            {{"s0", json::object(), {}, 4}, {"s1", {{"downsamplingFactors", {2, 2, 2, 1}}}, {}, 4}},
            "0.4", &why)
            .is_null());
  CHECK(why.find("4 unnamed dimensions") != std::string::npos);
  // Named, but space before channel.
  why.clear();
  const std::vector<std::string> dims = {"z", "c", "y", "x"};
  CHECK(ome::multiscales_from_n5(json::object(),
                                 {{"s0", json::object(), dims, 4},
                                  {"s1", {{"downsamplingFactors", {2, 2, 1, 1}}}, dims, 4}},
                                 "0.4", &why)
            .is_null());
  CHECK(why.find("time, channel, space") != std::string::npos);
}

TEST_CASE("ome: channel and time axes by name, units on space axes only") {
  const std::vector<std::string> dims = {"c", "y", "x"};
  const json got = ome::multiscales_from_n5(
      {{"pixelResolution", {{"unit", "nm"}, {"dimensions", {1, 1, 1}}}}},
      {{"s0", json::object(), dims, 3}, {"s1", {{"downsamplingFactors", {2, 2, 1}}}, dims, 3}},
      "0.4");
  REQUIRE(got.contains("multiscales"));
  CHECK(unordered(got["multiscales"][0]["axes"][0]) ==
        unordered(json{{"name", "c"}, {"type", "channel"}}));
  CHECK(got["multiscales"][0]["axes"][2]["unit"] == "nanometer");
}

TEST_CASE(
    "ome: OME multiscales become n5-viewer's scales, resolution and downsamplingFactors (and back)") {
  const json n5_group = {{"pixelResolution", kPixelResolution}};
  for (const char* version : {"0.4", "0.5"}) {
    CAPTURE(version);
    const json attrs = ome::multiscales_from_n5(n5_group, example_levels(), version);
    std::string why;
    const auto viewer = ome::n5_viewer_from_multiscales(attrs, &why);
    REQUIRE_MESSAGE(viewer, why);
    CHECK(unordered(viewer->group) == unordered(json{{"scales", {{1, 1, 1}, {2, 2, 1}, {4, 4, 2}}},
                                                     {"resolution", {0.5, 0.25, 2}},
                                                     {"pixelResolution", kPixelResolution}}));
    REQUIRE(viewer->datasets.size() == 3);
    CHECK(viewer->datasets.at("s0") == json{{"downsamplingFactors", {1, 1, 1}}});
    CHECK(viewer->datasets.at("s2") == json{{"downsamplingFactors", {4, 4, 2}}});
  }
}

TEST_CASE(
    "ome: the reverse takes a multiscale-wide scale and decimal scales, and refuses what it cannot map") {
  // ome-zarr-py style: paths 0, 1; scales written as decimals; a global scale.
  const json attrs = {
      {"multiscales",
       {{{"version", "0.4"},
         {"axes", {{{"name", "y"}, {"type", "space"}}, {{"name", "x"}, {"type", "space"}}}},
         {"coordinateTransformations", {{{"type", "scale"}, {"scale", {10, 10}}}}},
         {"datasets",
          {{{"path", "0"},
            {"coordinateTransformations", {{{"type", "scale"}, {"scale", {0.1, 0.3}}}}}},
           {{"path", "1"},
            {"coordinateTransformations",
             {{{"type", "scale"}, {"scale", {0.2, 0.9000000000000001}}}}}}}}}}}};
  const auto viewer = ome::n5_viewer_from_multiscales(attrs);
  REQUIRE(viewer);
  CHECK(viewer->datasets.at("1") == json{{"downsamplingFactors", {3, 2}}});  // X, Y
  CHECK(unordered(viewer->group["pixelResolution"]) ==
        unordered(json{{"unit", "pixel"}, {"dimensions", {3, 1}}}));

  std::string why;
  CHECK(!ome::n5_viewer_from_multiscales({{"other", 1}}, &why));
  CHECK(why.empty());
  json finer = attrs;
  finer["multiscales"][0]["datasets"][1]["coordinateTransformations"][0]["scale"] = {0.05, 0.3};
  CHECK(!ome::n5_viewer_from_multiscales(finer, &why));
  CHECK(why.find("finer") != std::string::npos);
  json no_path = attrs;
  no_path["multiscales"][0]["datasets"][1].erase("path");
  CHECK(!ome::n5_viewer_from_multiscales(no_path, &why));
  CHECK(why.find("no path") != std::string::npos);
}

TEST_CASE("ome: units between n5-viewer's abbreviations and UDUNITS-2 names") {
  CHECK(ome::ome_unit("um") == "micrometer");
  CHECK(ome::ome_unit("\xC2\xB5m") == "micrometer");
  CHECK(ome::ome_unit("nm") == "nanometer");
  CHECK(ome::ome_unit("pixel").empty());
  CHECK(ome::ome_unit("parsec") == "parsec");
  CHECK(ome::n5_unit("micrometer") == "um");
  CHECK(ome::n5_unit("nanometer") == "nm");
}

// ---- whole conversions ---------------------------------------------------------------------

namespace {

// Zarr v2, as zarr-python 2.13 (the peer) reads it.
stowage::CopyOptions zarr_v2() {
  stowage::CopyOptions o;
  o.open_options = {{"zarr_version", 2}};
  return o;
}

// Every array node below `node`, with its path.
void for_each_array(const stowage::Store& s, const std::string& node,
                    const std::function<void(const std::string&, const stowage::NodeInfo&)>& f) {
  const stowage::NodeInfo info = s.describe(node);
  if (info.kind == stowage::NodeKind::array) return f(node, info);
  if (info.kind != stowage::NodeKind::group) return;
  for (const std::string& child : s.list(node))
    for_each_array(s, node.empty() ? child : node + "/" + child, f);
}

// The numcodecs compressor zarr-python writes for an N5 codec, by hand
// from numcodecs' own configurations (null for raw).
json numcodecs_for(const json& n5) {
  const std::string type = n5.value("type", "raw");
  if (type == "raw") return nullptr;
  if (type == "gzip")
    return {{"id", n5.value("useZlib", false) ? "zlib" : "gzip"}, {"level", n5["level"]}};
  if (type == "zstd") return {{"id", "zstd"}, {"level", n5["level"]}};
  if (type == "bzip2") return {{"id", "bz2"}, {"level", n5["blockSize"]}};
  if (type == "xz")
    return {{"id", "lzma"},
            {"format", 1},
            {"check", -1},
            {"preset", n5["preset"]},
            {"filters", nullptr}};
  if (type == "lz4") return {{"id", "lz4"}, {"acceleration", 1}};
  if (type == "blosc")
    return {{"id", "blosc"},
            {"cname", n5["cname"]},
            {"clevel", n5["clevel"]},
            {"shuffle", n5["shuffle"]},
            {"blocksize", n5.value("blocksize", 0)}};
  FAIL("no numcodecs compressor for " << n5.dump());
  return nullptr;
}

// Writes every array of `store` as <dir>/<node with / as __>.bin (C order,
// little-endian) and returns the node paths; zarr-python compares against these.
std::vector<std::string> dump_arrays(const stowage::Store& store, const fs::path& dir) {
  std::vector<std::string> nodes;
  fs::create_directories(dir);
  for_each_array(store, "", [&](const std::string& node, const stowage::NodeInfo& info) {
    std::string bytes(info.element_count() * stowage::dtype_size(info.dtype), '\0');
    store.array(node).read(std::vector<uint64_t>(info.shape.size(), 0), info.shape, bytes.data());
    std::string name = node;
    for (char& c : name) c = c == '/' ? '_' : c;
    test::write_file(dir / (name + ".bin"), bytes);
    nodes.push_back(node);
  });
  return nodes;
}

// zarr-python opens `zarr_path` and compares each node with its dump.
const char* kCompareScript = R"PY(
import sys, numpy as np, zarr
root = zarr.open_group(sys.argv[1], mode="r")
dumps = sys.argv[2]
for node in sys.argv[3:]:
    a = root[node]
    want = np.fromfile(dumps + "/" + node.replace("/", "_") + ".bin", dtype=a.dtype.newbyteorder("<")).reshape(a.shape)
    assert np.array_equal(a[...], want, equal_nan=a.dtype.kind == "f"), node
    print("equal", node)
)PY";

void require_zarr_python_reads(const fs::path& zarr, const fs::path& dumps,
                               const std::vector<std::string>& nodes) {
  std::string args = q(zarr) + " " + q(dumps);
  for (const std::string& n : nodes) args += " " + test::quote(n);
  test::RunResult r = test::run_python(kCompareScript, args);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  for (const std::string& n : nodes)
    CHECK_MESSAGE(r.output.find("equal " + n + "\n") != std::string::npos, n);
}

}  // namespace

TEST_CASE(
    "N5 -> Zarr v2 keeps each codec as its numcodecs compressor; zarr-python reads the N5 values" *
    test::needs({"zarr", "n5", "gzip", "zstd", "blosc", "bzip2", "xz", "lz4"})) {
  // zarr-written.n5 has zstd (with zarr's stray "id") and blosc; java-style's
  // siblings from N5 Java 4 have lz4 (N5's LZ4Block framing) and zlib.
  for (const char* fixture : {"zarr-written.n5", "n5java-4.0.2-written.n5"}) {
    CAPTURE(fixture);
    test::TempDir tmp;
    const fs::path n5 = test::fixtures() / "n5" / fixture, zarr = tmp / "out.zarr";
    const stowage::CopyResult r = stowage::copy(n5.string(), zarr.string(), zarr_v2());
    CHECK(r.notes.empty());
    CHECK(r.open_options == json{{"zarr_version", 2}});
    const stowage::Store src = stowage::Store::open(n5.string());
    std::set<std::string> codecs;
    for_each_array(src, "", [&](const std::string& node, const stowage::NodeInfo& info) {
      CAPTURE(node);
      const json zarray = test::read_json(zarr / node / ".zarray");
      CHECK(zarray["zarr_format"] == 2);
      CHECK(unordered(zarray["compressor"]) == unordered(numcodecs_for(info.codec)));
      codecs.insert(info.codec.value("type", "raw"));
    });
    CHECK(codecs.size() >= 5);
    require_zarr_python_reads(zarr, tmp / "dumps", dump_arrays(src, tmp / "dumps"));
  }
}

TEST_CASE("a third-party codec declaring no names goes into Zarr v2 by its id (issue 32)" *
          test::needs({"zarr", "n5"})) {
  // n5testxor (tests/n5) is a codec plugin that declares no Zarr names: the
  // default rule makes its numcodecs id its plugin id, its keys pass through.
  stowage::Registry::Options options;
  options.paths = {(test::build_root() / "tests" / "n5").string()};
  stowage::Registry registry(options);
  test::TempDir tmp;
  const fs::path n5 = tmp / "xor.n5", zarr = tmp / "xor.zarr";
  std::vector<uint16_t> values(24 * 40);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint16_t>(i * 7);
  {
    stowage::Store s =
        stowage::Store::open(n5.string(), stowage::Mode::truncate, "n5", json::object(), registry);
    s.create("x", {{"kind", "array"},
                   {"dtype", "uint16"},
                   {"shape", {24, 40}},
                   {"chunks", {8, 16}},
                   {"codec", {{"type", "n5testxor"}, {"key", 77}}}});
    s.array("x").write({0, 0}, {24, 40}, values.data());
    s.close();
  }
  const stowage::CopyResult r = stowage::copy(n5.string(), zarr.string(), zarr_v2(), registry);
  CHECK(r.notes.empty());
  CHECK(unordered(test::read_json(zarr / "x" / ".zarray")["compressor"]) ==
        unordered(json{{"id", "n5testxor"}, {"key", 77}}));
  std::vector<uint16_t> back(values.size());
  stowage::Store::open(zarr.string(), stowage::Mode::read, "zarr", json::object(), registry)
      .array("x")
      .read({0, 0}, {24, 40}, back.data());
  CHECK(back == values);
}

TEST_CASE("a codec the destination refuses as UNSUPPORTED gives way to its default, with a note" *
          test::needs({"zarr", "n5", "lz4"})) {
  // An LZ4 frame has no numcodecs counterpart (numcodecs' lz4 is one size-prefixed block).
  const json frame = {{"type", "lz4"}, {"framing", "frame"}};
  test::TempDir tmp;
  const fs::path n5 = tmp / "frame.n5", zarr = tmp / "frame.zarr";
  std::vector<uint16_t> values(24 * 40);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint16_t>(i * 7);
  {
    stowage::Store s = stowage::Store::open(n5.string(), stowage::Mode::truncate, "n5");
    s.create("x", {{"kind", "array"},
                   {"dtype", "uint16"},
                   {"shape", {24, 40}},
                   {"chunks", {8, 16}},
                   {"codec", frame}});
    s.array("x").write({0, 0}, {24, 40}, values.data());
    s.close();
  }
  const stowage::CopyResult r = stowage::copy(n5.string(), zarr.string(), zarr_v2());
  CAPTURE(test::read_json(zarr / "x" / ".zarray").dump());
  CAPTURE(stowage::Store::open(n5.string()).describe_json("x").dump());
  REQUIRE(r.notes.size() == 1);
  CHECK_MESSAGE(r.notes[0].find("cannot keep the codec") != std::string::npos, r.notes[0]);
  CHECK_MESSAGE(r.notes[0].find("\"framing\":\"frame\"") != std::string::npos, r.notes[0]);
  CHECK(r.notes[0].find("wrote its default codec") != std::string::npos);
  CHECK(test::read_json(zarr / "x" / ".zarray")["compressor"].is_null());
  std::vector<uint16_t> back(values.size());
  stowage::Store::open(zarr.string(), stowage::Mode::read, "zarr")
      .array("x")
      .read({0, 0}, {24, 40}, back.data());
  CHECK(back == values);

  // Any other error is not a reason to drop the codec: --compression with a
  // codec Zarr cannot hold still fails.
  stowage::CopyOptions o = zarr_v2();
  o.compression = frame;
  TEST_REQUIRE_ERROR(stowage::copy(n5.string(), (tmp / "asked.zarr").string(), o),
                     stowage::ErrorCode::invalid_argument);
  CHECK(!fs::exists(tmp / "asked.zarr"));
}

TEST_CASE("stowage-convert: --zarr-version, --open-option and --shards, and what it refuses" *
          test::needs({"zarr", "n5"})) {
  test::TempDir tmp;
  const fs::path n5 = test::fixtures() / "n5" / "zarr-written.n5";
  auto run = [&](const std::string& args) { return test::run(convert_cmd() + " --quiet " + args); };
  auto summary = [](const std::string& out) { return json::parse(out.substr(out.find('{'))); };

  test::RunResult v2 = run(q(n5) + " " + q(tmp / "v2.zarr") + " --zarr-version 2 --json");
  REQUIRE_MESSAGE(v2.status == 0, v2.output);
  CHECK(summary(v2.output)["open_options"] == json{{"zarr_version", 2}});
  CHECK(summary(v2.output)["shards"] == json::array());
  CHECK(test::read_json(tmp / "v2.zarr" / ".zgroup") == json{{"zarr_format", 2}});
  test::RunResult generic =
      run(q(n5) + " " + q(tmp / "generic.zarr") + " --open-option zarr_version=2 --json");
  REQUIRE_MESSAGE(generic.status == 0, generic.output);
  CHECK(summary(generic.output)["open_options"] == json{{"zarr_version", 2}});
  // A new Zarr store is asked for as version 3 unless told otherwise.
  test::RunResult fresh = run(q(n5) + "::raw " + q(tmp / "default.zarr") + " --json");
  REQUIRE_MESSAGE(fresh.status == 0, fresh.output);
  CHECK(summary(fresh.output)["open_options"] == json{{"zarr_version", 3}});

  struct Refusal {
    std::string args, says;
  };
  for (
      const Refusal& c : std::vector<Refusal>{
          {q(n5) + " " + q(tmp / "a.n5") + " --zarr-version 2",
           "open option 'zarr_version': format n5 has no such option; its open options: write_empty_chunks (true or "
           "false, default true), durable (true or false, default false)"},
          {q(n5) + " " + q(tmp / "b.n5") + " --shards 8,8",
           "--shards: format n5 writes no shards; the formats that do: zarr"},
          {q(n5) + " " + q(tmp / "c.zarr") + " --zarr-version 4",
           "open option zarr_version=4: format zarr takes 2 or 3 for zarr_version"},
          {q(n5) + " " + q(tmp / "c.zarr") + " --open-option zarr_version=1",
           "open option zarr_version=1: format zarr takes 2 or 3"},
          {q(n5) + " " + q(tmp / "c.zarr") + " --open-option consolidated=yes",
           "open option consolidated=\"yes\": format zarr takes true or false for consolidated"},
          {q(n5) + " " + q(tmp / "c.zarr") + " --open-option zarr_verison=2",
           "open option 'zarr_verison': format zarr has no such option; its open options: zarr_version (2 or 3, default 3), consolidated (true or false)"},
          {q(n5) + " " + q(tmp / "d.zarr") + " --zarr-version 2 --shards 32,32",
           "takes no shards: Zarr v2 has no shards"},
          {q(n5) + "::raw/int16_2d " + q(tmp / "e.zarr") + " --shards 32,32,32",
           "--shards has 3 entries, the array has 2"},
          {q(n5) + "::raw/int16_2d " + q(tmp / "f.zarr") + " --chunks 8,8 --shards 16,12",
           "--shards [16,12] is not a multiple of the chunks [8,8] in dimension 1"},
          {q(n5) + " " + q(tmp / "g.zarr") + " --open-option novalue",
           "--open-option takes KEY=VALUE"},
      }) {
    CAPTURE(c.args);
    test::RunResult r = run(c.args);
    CHECK(r.status == 2);
    CHECK_MESSAGE(r.output.find(c.says) != std::string::npos, r.output);
  }
  for (const char* name : {"a.n5", "b.n5", "c.zarr", "d.zarr", "e.zarr", "f.zarr", "g.zarr"})
    CHECK(!fs::exists(tmp / name));

  // The help names the new options.
  test::RunResult help = test::run(convert_cmd() + " --help");
  for (const char* option : {"--zarr-version", "--shards", "--open-option"})
    CHECK_MESSAGE(help.output.find(option) != std::string::npos, option);
}

TEST_CASE(
    "formats declare what a destination takes: zarr's open options and shards, each store's conventions" *
    test::needs({"zarr", "n5"})) {
  stowage::Registry& registry = stowage::Registry::global();
  registry.load("format", "zarr", "");
  const std::optional<stowage::PluginInfo> zarr = registry.find("format", "zarr");
  REQUIRE(zarr);
  const json schema = json::parse(zarr->params_schema);
  CHECK(schema["zarr_version"]["type"] == "integer");
  CHECK(schema["zarr_version"]["default"] == 3);
  CHECK(schema["zarr_version"]["min"] == 2);
  CHECK(schema["zarr_version"]["max"] == 3);
  CHECK(schema["zarr_version"]["on_create"] == true);
  CHECK(schema["consolidated"]["type"] == "boolean");
  CHECK((zarr->capabilities & STOWAGE_CAP_SHARDS) != 0);
  registry.load("format", "n5", "");
  CHECK((registry.find("format", "n5")->capabilities & STOWAGE_CAP_SHARDS) == 0);

  // Per store, in the root's description: v2 takes no shards and says why;
  // the multiscale convention with its version; N5's n5-viewer.
  test::TempDir tmp;
  auto store_of = [&](const std::string& name, const char* format, const json& options) {
    stowage::Store s =
        stowage::Store::open((tmp / name).string(), stowage::Mode::truncate, format, options);
    json facts = s.describe("").raw["store"];
    s.close();
    return facts;
  };
  const json v2 = store_of("v2.zarr", "zarr", {{"zarr_version", 2}});
  CHECK(v2["shards"] ==
        "Zarr v2 has no shards (sharding_indexed is v3's; open with zarr_version=3)");
  CHECK(v2["multiscales"] == json{{"convention", "ome-ngff"}, {"version", "0.4"}});
  const json v3 = store_of("v3.zarr", "zarr", json::object());
  CHECK(v3["shards"] == true);
  CHECK(v3["multiscales"] == json{{"convention", "ome-ngff"}, {"version", "0.5"}});
  CHECK(store_of("x.n5", "n5", json::object()) ==
        json{{"multiscales", {{"convention", "n5-viewer"}}}});
}

TEST_CASE(
    "--shards reaches the destination's create description as \"shards\"; the zarr plugin writes them" *
    test::needs({"zarr", "n5"})) {
  test::TempDir tmp;
  const fs::path n5 = test::fixtures() / "n5" / "zarr-written.n5";
  stowage::CopyOptions o;
  o.shards = {32, 32};
  o.chunks = {16, 16};
  const fs::path out = tmp / "s.zarr";
  const stowage::CopyResult r = stowage::copy(n5.string() + "::raw/int16_2d", out.string(), o);
  CHECK(r.shards == std::vector<uint64_t>{32, 32});
  CHECK(stowage::copy_summary_json(r, "a", "b")["shards"] == json{32, 32});
  CHECK(r.open_options == json{{"zarr_version", 3}});
  // A v3 store: a grid of 32x32 shards of 16x16 inner chunks.
  const json meta = test::read_json(out / "zarr.json");
  CHECK(meta["chunk_grid"]["configuration"]["chunk_shape"] == json{32, 32});
  bool sharded = false;
  for (const json& codec : meta["codecs"])
    if (codec.value("name", "") == "sharding_indexed") {
      sharded = true;
      CHECK(codec["configuration"]["chunk_shape"] == json{16, 16});
    }
  CHECK(sharded);
  stowage::Array src = stowage::Store::open(n5.string()).array("raw/int16_2d");
  stowage::Array dst = stowage::Store::open(out.string()).array("");
  CHECK(dst.shape() == src.shape());
  std::vector<int16_t> a(src.shape()[0] * src.shape()[1]), b(a.size());
  src.read({0, 0}, src.shape(), a.data());
  dst.read({0, 0}, dst.shape(), b.data());
  CHECK(a == b);
}

TEST_CASE(
    "stowage-convert: --part runs into a sharded array are refused (two runs would rewrite one shard)" *
    test::needs({"zarr", "n5", "gzip"})) {
  test::TempDir tmp;
  const std::string source = q(test::fixtures() / "n5" / "zarr-written.n5") + "::gzip/uint16_2d";
  const fs::path out = tmp / "parts.zarr";
  test::RunResult made = test::run(convert_cmd() + " --quiet " + source + " " + q(out) +
                                   " --shards 16,32 --create-only");
  REQUIRE_MESSAGE(made.status == 0, made.output);
  const std::string before = test::read_file(out / "zarr.json");
  test::RunResult part =
      test::run(convert_cmd() + " --quiet " + source + " " + q(out) + " --part 0/2");
  CHECK(part.status != 0);
  CHECK_MESSAGE(part.output.find("is sharded, and --part runs would rewrite each other's shards") !=
                    std::string::npos,
                part.output);
  CHECK(test::read_file(out / "zarr.json") == before);
  // Unsharded, the same two part runs fill the array.
  const fs::path plain = tmp / "plain.zarr";
  REQUIRE(
      test::run(convert_cmd() + " --quiet " + source + " " + q(plain) + " --create-only").status ==
      0);
  for (const char* p : {"0/2", "1/2"}) {
    test::RunResult r =
        test::run(convert_cmd() + " --quiet " + source + " " + q(plain) + " --part " + p);
    CHECK_MESSAGE(r.status == 0, r.output);
  }
}

// ---- OME-Zarr out of n5-viewer multiscale data, and back -----------------------------------

namespace {

// An N5 group "raw" in n5-viewer's layout: s0 16x32x32 (Z, Y, X), s1 with
// factors [2,2,1] (X, Y, Z), s2 with [4,4,2]; pixelResolution on the group.
void write_n5_multiscale(const fs::path& path) {
  stowage::Store s = stowage::Store::open(path.string(), stowage::Mode::truncate, "n5");
  s.create("raw", {{"kind", "group"},
                   {"attributes", {{"pixelResolution", kPixelResolution}, {"name", "raw"}}}});
  const std::vector<std::pair<std::vector<uint64_t>, json>> levels = {
      {{16, 32, 32}, json::object()},
      {{16, 16, 16}, {{"downsamplingFactors", {2, 2, 1}}}},
      {{8, 8, 8}, {{"downsamplingFactors", {4, 4, 2}}}}};
  for (size_t k = 0; k < levels.size(); ++k) {
    const auto& [shape, attrs] = levels[k];
    const std::string node = "raw/s" + std::to_string(k);
    s.create(node, {{"kind", "array"},
                    {"dtype", "uint16"},
                    {"shape", shape},
                    {"chunks", {8, 8, 8}},
                    {"codec", {{"type", "gzip"}, {"level", 6}}},
                    {"attributes", attrs}});
    std::vector<uint16_t> v(shape[0] * shape[1] * shape[2]);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint16_t>(i * (k + 3));
    s.array(node).write({0, 0, 0}, shape, v.data());
  }
  s.close();  // a "w" store is published by its close
}

bool has_note(const stowage::CopyResult& r, const std::string& text) {
  for (const std::string& n : r.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE(
    "an n5-viewer multiscale N5 group becomes OME-Zarr 0.4 that zarr-python reads level by level, and back" *
    test::needs({"zarr", "n5", "gzip"})) {
  test::TempDir tmp;
  const fs::path n5 = tmp / "multi.n5", zarr = tmp / "multi.zarr", back = tmp / "back.n5";
  write_n5_multiscale(n5);
  const stowage::CopyResult r = stowage::copy(n5.string(), zarr.string(), zarr_v2());
  CHECK(has_note(r, "raw: wrote OME-NGFF 0.4 multiscales for its n5-viewer levels"));

  const json zattrs = test::read_json(zarr / "raw" / ".zattrs");
  json want = expected_multiscale();
  want["version"] = "0.4";
  want["name"] = "raw";
  CHECK(unordered(zattrs["multiscales"]) == unordered(json::array({want})));
  CHECK(zattrs["pixelResolution"] == kPixelResolution);  // the source's keys stay
  const bool root_has_ome =
      fs::exists(zarr / ".zattrs") && test::read_json(zarr / ".zattrs").contains("multiscales");
  CHECK(!root_has_ome);

  // zarr-python: every level the multiscales names opens, with the values of
  // the N5 level, and the metadata keeps OME-NGFF 0.4's rules.
  const stowage::Store src = stowage::Store::open(n5.string());
  const std::vector<std::string> nodes = dump_arrays(src, tmp / "dumps");
  CHECK(nodes.size() == 3);
  require_zarr_python_reads(zarr, tmp / "dumps", nodes);
  test::RunResult rules = test::run_python(R"PY(
import sys, zarr
g = zarr.open_group(sys.argv[1], mode="r")["raw"]
(ms,) = g.attrs["multiscales"]
assert ms["version"] == "0.4"
names = [a["name"] for a in ms["axes"]]
assert len(set(names)) == len(names)
space = [a for a in ms["axes"] if a["type"] == "space"]
assert 2 <= len(space) <= 3
previous = None
for d in ms["datasets"]:
    a = g[d["path"]]                                   # every path is an array of the group
    assert a.ndim == len(ms["axes"]), d["path"]
    t = d["coordinateTransformations"]
    assert t[0]["type"] == "scale" and len(t[0]["scale"]) == a.ndim
    assert all(s > 0 for s in t[0]["scale"])
    assert len(t) == 1 or (len(t) == 2 and t[1]["type"] == "translation" and len(t[1]["translation"]) == a.ndim)
    if previous is not None:                           # ordered largest to smallest
        assert all(s >= p for s, p in zip(t[0]["scale"], previous)), d["path"]
    previous = t[0]["scale"]
print("levels", len(ms["datasets"]))
)PY",
                                           q(zarr));
  REQUIRE_MESSAGE(rules.status == 0, rules.output);
  CHECK(rules.output.find("levels 3") != std::string::npos);

  // Back to N5: n5-viewer's keys from the OME metadata.
  const stowage::CopyResult r2 = stowage::copy(zarr.string(), back.string());
  CHECK(has_note(r2, "raw: wrote n5-viewer's scales, resolution and downsamplingFactors"));
  const json group = test::read_json(back / "raw" / "attributes.json");
  CHECK(unordered(group["pixelResolution"]) == unordered(kPixelResolution));
  CHECK(group["scales"] == json{{1, 1, 1}, {2, 2, 1}, {4, 4, 2}});
  CHECK(group["resolution"] == json{0.5, 0.25, 2});
  CHECK(test::read_json(back / "raw" / "s1" / "attributes.json")["downsamplingFactors"] ==
        json{2, 2, 1});
  CHECK(test::read_json(back / "raw" / "s2" / "attributes.json")["downsamplingFactors"] ==
        json{4, 4, 2});
  CHECK(test::read_json(back / "raw" / "s0" / "attributes.json")["downsamplingFactors"] ==
        json{1, 1, 1});
  const stowage::Store round = stowage::Store::open(back.string());
  for (const std::string& node : nodes) {
    std::string name = node;
    for (char& c : name) c = c == '/' ? '_' : c;
    const stowage::NodeInfo info = round.describe(node);
    std::string bytes(info.element_count() * 2, '\0');
    round.array(node).read({0, 0, 0}, info.shape, bytes.data());
    CHECK_MESSAGE(bytes == test::read_file(tmp / "dumps" / (name + ".bin")), node);
  }
}

TEST_CASE(
    "an OME-Zarr that zarr-python wrote (paths 0, 1, micrometers) becomes n5-viewer metadata in N5" *
    test::needs({"zarr", "n5"})) {
  test::TempDir tmp;
  const fs::path zarr = tmp / "ome.zarr", n5 = tmp / "ome.n5";
  test::RunResult w = test::run_python(R"PY(
import sys, numpy as np, zarr
g = zarr.open_group(sys.argv[1], mode="w")
g.create_dataset("0", data=np.arange(8 * 12, dtype="u1").reshape(8, 12), chunks=(4, 4))
g.create_dataset("1", data=np.arange(4 * 4, dtype="u1").reshape(4, 4), chunks=(4, 4))
g.attrs["multiscales"] = [{"version": "0.4", "name": "img",
    "axes": [{"name": "y", "type": "space", "unit": "micrometer"}, {"name": "x", "type": "space", "unit": "micrometer"}],
    "datasets": [{"path": "0", "coordinateTransformations": [{"type": "scale", "scale": [0.5, 0.2]}]},
                 {"path": "1", "coordinateTransformations": [{"type": "scale", "scale": [1.0, 0.6000000000000001]},
                                                             {"type": "translation", "translation": [0.25, 0.2]}]}]}]
)PY",
                                       q(zarr));
  REQUIRE_MESSAGE(w.status == 0, w.output);
  const stowage::CopyResult r = stowage::copy(zarr.string(), n5.string());
  CHECK(has_note(r, "the root group: wrote n5-viewer's"));
  const json root = test::read_json(n5 / "attributes.json");
  CHECK(unordered(root["pixelResolution"]) ==
        unordered(json{{"unit", "um"}, {"dimensions", {0.2, 0.5}}}));
  CHECK(root["scales"] == json{{1, 1}, {3, 2}});
  CHECK(test::read_json(n5 / "1" / "attributes.json")["downsamplingFactors"] == json{3, 2});
  CHECK(root.contains("multiscales"));  // kept, as every attribute is
}

TEST_CASE(
    "a group whose multiscale metadata cannot be mapped converts whole, and the notes say why" *
    test::needs({"zarr", "n5"})) {
  test::TempDir tmp;
  const fs::path n5 = tmp / "gap.n5", zarr = tmp / "gap.zarr";
  {
    stowage::Store s = stowage::Store::open(n5.string(), stowage::Mode::truncate, "n5");
    for (const char* level : {"s0", "s2"}) {
      json attrs =
          std::string(level) == "s2" ? json{{"downsamplingFactors", {4, 4}}} : json::object();
      s.create(level, {{"kind", "array"},
                       {"dtype", "uint8"},
                       {"shape", {8, 8}},
                       {"chunks", {8, 8}},
                       {"attributes", attrs}});
    }
    s.close();
  }
  const stowage::CopyResult r = stowage::copy(n5.string(), zarr.string(), zarr_v2());
  CHECK(has_note(
      r, "the root group: no multiscale metadata written: its levels are not s0..sN without gaps"));
  CHECK(!fs::exists(zarr / ".zattrs"));  // the root had no attributes, and gained none
  CHECK(test::read_json(zarr / "s2" / ".zattrs")["downsamplingFactors"] == json{4, 4});
}

TEST_CASE("into a Zarr v3 store the multiscales are OME-NGFF 0.5, under attributes.ome" *
          test::needs({"zarr", "n5", "gzip"})) {
  test::TempDir tmp;
  const fs::path n5 = tmp / "multi.n5", zarr = tmp / "multi.zarr";
  write_n5_multiscale(n5);
  const stowage::CopyResult r =
      stowage::copy(n5.string(), zarr.string());  // a new store: v3 asked for
  CHECK(r.open_options == json{{"zarr_version", 3}});
  REQUIRE(fs::exists(zarr / "zarr.json"));
  CHECK(has_note(r, "raw: wrote OME-NGFF 0.5 multiscales"));
  const json ome = test::read_json(zarr / "raw" / "zarr.json")["attributes"]["ome"];
  json want = expected_multiscale();
  want["name"] = "raw";
  CHECK(ome["version"] == "0.5");
  CHECK(unordered(ome["multiscales"]) == unordered(json::array({want})));
}

TEST_CASE("stowage-convert: Daf strings (an axis, a string matrix) into Zarr v2 and v3 and back" *
          test::needs({"zarr", "daf"})) {
  test::TempDir tmp;
  const fs::path daf = test::fixtures() / "daf" / "gen_v11_types";
  stowage::Store src = stowage::Store::open(daf.string());
  auto run = [&](const std::string& args) { return test::run(convert_cmd() + " --quiet " + args); };
  for (int version : {2, 3}) {
    CAPTURE(version);
    const fs::path z = tmp / ("v" + std::to_string(version) + ".zarr");
    for (const std::string node : {"axes/cell", "matrices/cell/gene/labels"}) {
      CAPTURE(node);
      const std::string name = node == "axes/cell" ? "cell" : "labels";
      test::RunResult r = run(q(daf) + "::" + node + " " + q(z) + "::" + name + " --zarr-version " +
                              std::to_string(version));
      REQUIRE_MESSAGE(r.status == 0, r.output);
      stowage::Store zs = stowage::Store::open(z.string());
      const stowage::NodeInfo info = zs.describe(name);
      CHECK(info.kind == stowage::NodeKind::strings);
      CHECK(info.shape == src.describe(node).shape);
      CHECK(zs.read_strings(name) == src.read_strings(node));
      CHECK(info.raw["storage"]["zarr_format"] == version);
    }
    // And back: the Zarr strings node becomes a Daf axis again.
    const fs::path back = tmp / ("back" + std::to_string(version));
    test::RunResult r = run(q(z) + "::cell " + q(back) + "::axes/cell --to daf");
    REQUIRE_MESSAGE(r.status == 0, r.output);
    CHECK(stowage::Store::open(back.string()).read_strings("axes/cell") ==
          src.read_strings("axes/cell"));
  }
}
