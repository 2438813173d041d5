// The SDK as a third party sees it: install stowage into a staging
// directory, build examples/plugin-sdk out of tree finding the SDK through pkg-config
// only, then load the result with the real registry and round-trip data.
// Also: every place that reports stowage's version or plugin ABI agrees with
// the one source of each (meson.build's project version, plugin.h's ABI).
#include "codec_checks.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <numeric>

TEST_CASE("examples/plugin-sdk builds out of tree against the installed SDK and round-trips") {
  test::TempDir tmp;
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

  // Only the staged SDK: PKG_CONFIG_SYSROOT_DIR maps its /usr/local/... paths into the staging dir.
  std::string env = "PKG_CONFIG_PATH=" + test::quote(pc_dir) +
                    " PKG_CONFIG_SYSROOT_DIR=" + test::quote(dest) + " ";
  std::string src = (test::source_root() / "examples" / "plugin-sdk").string();
  std::string build = (tmp / "example-build").string();
  test::RunResult setup =
      test::run(env + "meson setup " + test::quote(build) + " " + test::quote(src));
  REQUIRE_MESSAGE(setup.status == 0, setup.output);
  test::RunResult ninja = test::run(env + "ninja -C " + test::quote(build));
  REQUIRE_MESSAGE(ninja.status == 0, ninja.output);

  stowage::Registry::Options o;
  o.paths = {build};
  o.use_environment = false;
  o.use_default_dir = false;
  stowage::Registry registry(o);
  auto info = registry.find("codec", "delta");
  REQUIRE(info.has_value());
  stowage::Codec delta = registry.codec(R"({"type":"delta","typesize":4})");
  CHECK(delta.config()["typesize"] == 4);
  CHECK(registry.find("codec", "delta")->state == stowage::PluginState::loaded);

  std::vector<uint32_t> counts(1000);
  std::iota(counts.begin(), counts.end(), 100000u);  // smooth data: deltas of 1
  auto encoded = delta.encode(counts.data(), counts.size() * 4);
  uint32_t second;
  std::memcpy(&second, encoded.data() + 4, 4);
  CHECK(second == 1);
  auto decoded = delta.decode(encoded.data(), encoded.size(), counts.size() * 4);
  CHECK(std::memcmp(decoded.data(), counts.data(), decoded.size()) == 0);
  CHECK_THROWS_WITH_AS(registry.codec(R"({"type":"delta","typesize":3})"),
                       doctest::Contains("must be 1, 2, 4 or 8"), stowage::Error);

  // The conformance checks a third party runs on its codec (tests/support/codec_checks.hpp).
  for (int typesize : {1, 2, 4, 8}) {
    codec_checks::Spec spec;
    spec.config = R"({"type":"delta","typesize":)" + std::to_string(typesize) + "}";
    spec.id = "delta";
    spec.element_size = static_cast<size_t>(typesize);
    spec.bad_configs = {{R"({"type":"delta","typesize":3})", "typesize"}};
    spec.registry = &registry;
    codec_checks::check_codec(spec);
  }

  // The one exported symbol holds for a third party's build too.
  test::RunResult nm =
      test::run("nm -D --defined-only " + test::quote(build + "/stowage_codec_delta.so"));
  CHECK(nm.output.find("stowage_plugin_entry") != std::string::npos);
  CHECK(nm.output.find("basic_string") == std::string::npos);
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
