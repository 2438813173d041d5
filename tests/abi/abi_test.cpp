// The plugin boundary under abuse: each deliberately broken plugin must end
// in its exact state and message, and never hide the working ones.
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <map>
#include <algorithm>
#include <sstream>

using stowage::PluginInfo;
using stowage::PluginState;

namespace {

std::vector<std::string> plugin_dirs() {
  std::vector<std::string> dirs;
  std::stringstream ss(test::env_or("STOWAGE_PLUGIN_PATH", ""));
  std::string d;
  while (std::getline(ss, d, ':'))
    if (!d.empty()) dirs.push_back(d);
  return dirs;
}

// A folder holding the raw codec alone (tests/abi/raw).
std::string raw_dir() { return test::env_or("STOWAGE_ABI_RAW_DIR", ""); }

struct Fixture {
  test::TempDir tmp;
  std::string broken = test::env_or("STOWAGE_ABI_BROKEN_DIR", "");
  std::string dup = test::env_or("STOWAGE_ABI_DUP_DIR", "");
  std::string missing = (tmp.path() / "no-such-dir").string();
  std::string junk_dir = (tmp.path() / "junk").string();
  std::unique_ptr<stowage::Registry> registry;
  std::map<std::string, PluginInfo> by_id;  // active plugins
  std::vector<PluginInfo> shadowed;

  Fixture() {
    test::fs::create_directories(junk_dir);
    // A text file with a plugin's name: not a shared library.
    test::write_file(test::fs::path(junk_dir) / "stowage_codec_notelf.so", "this is not an ELF file\n");
    // A file whose name is not a plugin's is never looked at.
    test::write_file(test::fs::path(junk_dir) / "libsomething.so", "ignored");
    stowage::Registry::Options o;
    o.paths = {raw_dir(), broken, dup, missing, junk_dir};
    o.use_environment = false;
    o.use_default_dir = false;
    registry = std::make_unique<stowage::Registry>(o);
    for (const PluginInfo& p : registry->plugins(true)) {
      if (p.state == PluginState::shadowed)
        shadowed.push_back(p);
      else
        by_id[p.id] = p;
    }
  }
};

}  // namespace

TEST_CASE("broken plugins: each has its exact state and reason") {
  Fixture f;
  REQUIRE(!f.broken.empty());
  REQUIRE(f.by_id.count("raw"));
  CHECK(f.by_id["raw"].state == PluginState::loaded);

  const PluginInfo& badabi = f.by_id["badabi"];
  CHECK(badabi.state == PluginState::failed);
  CHECK(badabi.reason == "ABI mismatch: plugin built for ABI 99, this stowage speaks 1");

  const PluginInfo& wrongid = f.by_id["wrongid"];
  CHECK(wrongid.state == PluginState::failed);
  CHECK(wrongid.reason == "id mismatch: file name says 'wrongid', descriptor says 'otherid'");

  const PluginInfo& noentry = f.by_id["noentry"];
  CHECK(noentry.state == PluginState::failed);
  CHECK(noentry.reason == "not a stowage plugin: no 'stowage_plugin_entry' symbol");

  const PluginInfo& unresolved = f.by_id["unresolved"];
  CHECK(unresolved.state == PluginState::failed);
  CHECK(unresolved.reason.rfind("cannot load: ", 0) == 0);
  CHECK(unresolved.reason.find("undefined symbol: stowage_test_undefined_function") != std::string::npos);

  const PluginInfo& notelf = f.by_id["notelf"];
  CHECK(notelf.state == PluginState::failed);
  CHECK(notelf.reason.rfind("cannot load: ", 0) == 0);
  CHECK(notelf.reason.find("stowage_codec_notelf.so") != std::string::npos);

  CHECK(f.by_id.count("something") == 0);
  CHECK(f.by_id["throws"].state == PluginState::loaded);
}

TEST_CASE("the same id in two directories: the first wins, the second is shadowed") {
  Fixture f;
  REQUIRE(f.shadowed.size() == 1);
  CHECK(f.shadowed[0].id == "raw");
  CHECK(f.shadowed[0].path.find(f.dup) == 0);
  CHECK(f.shadowed[0].reason == f.by_id["raw"].path);
  // And the winner works.
  stowage::Codec raw = f.registry->codec(R"({"type":"raw"})");
  auto out = raw.encode("abc", 3);
  CHECK(std::string(out.begin(), out.end()) == "abc");
}

TEST_CASE("a format plugin built against the first vtable loads, and a batch contains asks key by key") {
  stowage::Registry::Options o;
  o.paths = {test::env_or("STOWAGE_ABI_V1_DIR", "")};
  o.use_environment = false;
  o.use_default_dir = false;
  stowage::Registry registry(o);
  stowage::Store store = stowage::Store::open("unused", stowage::Mode::read, "v1records", stowage::json::object(),
                                              registry);
  stowage::Records r = store.records();
  CHECK(r.size() == 2);
  CHECK(r.contains("a"));
  CHECK_FALSE(r.contains("c"));
  CHECK(r.contains(std::vector<std::string_view>{"a", "c", "b", ""}) == std::vector<bool>{true, false, true, false});
}

TEST_CASE("a missing directory on the path is skipped, and reported") {
  Fixture f;
  bool seen = false;
  for (const auto& [dir, exists] : f.registry->search_path())
    if (dir == f.missing) seen = !exists;
  CHECK(seen);
}

TEST_CASE("a codec that throws gives a status and message, not a crash") {
  Fixture f;
  stowage::Codec c = f.registry->codec(R"({"type":"throws"})");
  std::vector<char> out(16);
  try {
    c.encode("abcd", 4, out.data(), out.size());
    FAIL("expected an error");
  } catch (const stowage::Error& e) {
    CHECK(e.code() == stowage::ErrorCode::internal);
    CHECK(std::string(e.what()) == "encoder exploded");
    CHECK(e.plugin() == "codec throws");
  }
  CHECK_THROWS_WITH_AS(c.decode("abcd", 4, out.data(), out.size()), "unknown exception in plugin",
                       stowage::Error);
}

TEST_CASE("using a failed plugin names the file and the reason") {
  Fixture f;
  CHECK_THROWS_WITH_AS(f.registry->codec(R"({"type":"badabi"})", "dataset x.n5"),
                       doctest::Contains("failed to load: ABI mismatch: plugin built for ABI 99"),
                       stowage::Error);
}

TEST_CASE("stowage-plugin-list shows failures, and --check turns them into exit 1") {
  std::string tool = test::env_or("STOWAGE_PLUGIN_LIST", "stowage-plugin-list");
  std::string broken = test::env_or("STOWAGE_ABI_BROKEN_DIR", "");
  std::string base = "STOWAGE_PLUGIN_PATH_ONLY=1 STOWAGE_PLUGIN_PATH= " + tool + " --plugin-path " +
                     test::quote(raw_dir()) + " --plugin-path " + test::quote(broken);
  test::RunResult plain = test::run(base);
  CHECK(plain.status == 0);
  CHECK(plain.output.find("failed: ABI mismatch: plugin built for ABI 99, this stowage speaks 1") !=
        std::string::npos);
  CHECK(plain.output.find("raw") != std::string::npos);
  CHECK(test::run(base + " --check").status == 1);
  test::RunResult js = test::run(base + " --json");
  REQUIRE(js.status == 0);
  auto j = stowage::json::parse(js.output);
  int failed = 0, loaded = 0;
  for (const auto& p : j["plugins"]) {
    failed += p["state"] == "failed";
    loaded += p["state"] == "loaded";
  }
  CHECK(failed == 4);  // badabi, wrongid, noentry, unresolved
  CHECK(loaded == 2);  // raw, throws
  CHECK(test::run(tool + " --no-such-option").status == 2);
  CHECK(test::run(tool + " --help").status == 0);
  CHECK(test::run(tool + " --version").output.find("plugin ABI 1") != std::string::npos);
}

TEST_CASE("every built plugin exports exactly one symbol and does not link libstowage") {
  int checked = 0;
  for (const std::string& dir : plugin_dirs()) {
    for (const auto& entry : test::fs::directory_iterator(dir)) {
      std::string name = entry.path().filename().string();
      if (name.rfind("stowage_", 0) != 0 || entry.path().extension() != ".so") continue;
      CAPTURE(name);
      test::RunResult nm = test::run("nm -D --defined-only " + test::quote(entry.path().string()));
      REQUIRE(nm.status == 0);
      std::vector<std::string> symbols;
      std::stringstream ss(nm.output);
      std::string line;
      while (std::getline(ss, line)) {
        std::stringstream ls(line);
        std::string addr, type, sym;
        ls >> addr >> type >> sym;
        if (!sym.empty()) symbols.push_back(sym);
      }
      CHECK(symbols == std::vector<std::string>{"stowage_plugin_entry"});
      test::RunResult re = test::run("readelf -d " + test::quote(entry.path().string()));
      REQUIRE(re.status == 0);
      CHECK(re.output.find("libstowage") == std::string::npos);
      ++checked;
    }
  }
  // Exactly the plugins meson builds (stowage_plugins in meson.build): one
  // missing from its directory, or a directory not searched, is a failure.
  const int expected = std::stoi(test::env_or("STOWAGE_EXPECTED_PLUGINS", "-1"));
  // 7 codecs + 6 formats + 3 storage backends, less those this build left
  // out (-D<id>=disabled).
  const std::string off = test::env_or("STOWAGE_PLUGINS_OFF", "");
  const int left_out = off.empty() ? 0 : 1 + int(std::count(off.begin(), off.end(), ','));
  REQUIRE(expected + left_out == 16);
  CHECK(checked == expected);
  MESSAGE("checked " << checked << " plugins");
}
