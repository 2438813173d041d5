// The plugin boundary under abuse: each deliberately broken plugin must end
// in its exact state and message, and never hide the working ones.
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <algorithm>
#include <mutex>
#include <sstream>
#include <thread>

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
    test::write_file(test::fs::path(junk_dir) / "stowage_codec_notelf.so",
                     "this is not an ELF file\n");
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
  CHECK(badabi.reason == "ABI mismatch: built for ABI 99, this host speaks 2");

  // Every plugin built before codec contexts and per-registry host tables.
  const PluginInfo& abi1 = f.by_id["abi1"];
  CHECK(abi1.state == PluginState::failed);
  CHECK(abi1.reason == "ABI mismatch: built for ABI 1, this host speaks 2");
  CHECK(abi1.abi_version == 1);

  // A storage backend built against the flat table before the storage
  // layer came in parts (no `abi` field) is refused, naming both layouts.
  const PluginInfo& flat = f.by_id["flattable"];
  CHECK(flat.kind == "storage");
  CHECK(flat.state == PluginState::failed);
  CHECK(flat.reason == "storage ABI mismatch: built for storage ABI 1, this host speaks 2");

  // A codec vtable may grow: a larger one loads, one shorter than the first
  // version of ABI 2 does not.
  CHECK(f.by_id["future"].state == PluginState::loaded);
  const PluginInfo& tooshort = f.by_id["tooshort"];
  CHECK(tooshort.state == PluginState::failed);
  CHECK(tooshort.reason ==
        "vtable too small (" + std::to_string(STOWAGE_CODEC_VTABLE_V1_SIZE - sizeof(void*)) +
            " bytes, need " + std::to_string(STOWAGE_CODEC_VTABLE_V1_SIZE) + ")");

  const PluginInfo& wrongid = f.by_id["wrongid"];
  CHECK(wrongid.state == PluginState::failed);
  CHECK(wrongid.reason == "id mismatch: file name says 'wrongid', descriptor says 'otherid'");

  const PluginInfo& noentry = f.by_id["noentry"];
  CHECK(noentry.state == PluginState::failed);
  CHECK(noentry.reason == "not a stowage plugin: no 'stowage_plugin_entry' symbol");

  const PluginInfo& unresolved = f.by_id["unresolved"];
  CHECK(unresolved.state == PluginState::failed);
  CHECK(unresolved.reason.rfind("cannot load: ", 0) == 0);
  CHECK(unresolved.reason.find("undefined symbol: stowage_test_undefined_function") !=
        std::string::npos);

  const PluginInfo& notelf = f.by_id["notelf"];
  CHECK(notelf.state == PluginState::failed);
  CHECK(notelf.reason.rfind("cannot load: ", 0) == 0);
  CHECK(notelf.reason.find("stowage_codec_notelf.so") != std::string::npos);

  CHECK(f.by_id.count("something") == 0);
  CHECK(f.by_id["throws"].state == PluginState::loaded);
}

TEST_CASE("a codec with a larger vtable than the host knows works through its first fields") {
  Fixture f;
  stowage::Codec c = f.registry->codec(R"({"type":"future"})");
  auto out = c.encode("abc", 3);
  CHECK(std::string(out.begin(), out.end()) == "abc");
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

TEST_CASE(
    "a C format plugin with the first vtables loads; what it leaves NULL is refused, not called") {
  stowage::Registry::Options o;
  o.paths = {test::env_or("STOWAGE_ABI_V1_DIR", "")};
  o.use_environment = false;
  o.use_default_dir = false;
  stowage::Registry registry(o);
  stowage::Store store = stowage::Store::open("unused", stowage::Mode::read, "v1records",
                                              stowage::json::object(), registry);
  stowage::Records r = store.records();
  CHECK(r.size() == 2);
  CHECK(r.contains("a"));
  CHECK_FALSE(r.contains("c"));
  CHECK(r.contains(std::vector<std::string_view>{"a", "c", "b", ""}) ==
        std::vector<bool>{true, false, true, false});
  auto code_of = [](auto&& call) {
    try {
      call();
    } catch (const stowage::Error& e) {
      return e.code();
    }
    return stowage::ErrorCode::ok;
  };
  CHECK(code_of([&] { r.append({"x"}); }) == stowage::ErrorCode::unsupported);
  CHECK(code_of([&] { store.write_strings("s", {"x"}); }) == stowage::ErrorCode::unsupported);
  CHECK_FALSE(store.can_move_nodes());
  CHECK(code_of([&] { store.records("missing"); }) == stowage::ErrorCode::not_found);
  store.close();
  CHECK(code_of([&] { r.size(); }) ==
        stowage::ErrorCode::invalid_argument);  // a view of a closed store
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
  CHECK_THROWS_WITH_AS(
      f.registry->codec(R"({"type":"badabi"})", "dataset x.n5"),
      doctest::Contains("failed to load: ABI mismatch: built for ABI 99, this host speaks 2"),
      stowage::Error);
}

TEST_CASE("stowage-plugin-list shows failures, and --check turns them into exit 1") {
  std::string tool = test::env_or("STOWAGE_PLUGIN_LIST", "stowage-plugin-list");
  std::string broken = test::env_or("STOWAGE_ABI_BROKEN_DIR", "");
  std::string base = "STOWAGE_PLUGIN_PATH_ONLY=1 STOWAGE_PLUGIN_PATH= " + tool + " --plugin-path " +
                     test::quote(raw_dir()) + " --plugin-path " + test::quote(broken);
  test::RunResult plain = test::run(base);
  CHECK(plain.status == 0);
  CHECK(plain.output.find("failed: ABI mismatch: built for ABI 99, this host speaks 2") !=
        std::string::npos);
  CHECK(plain.output.find("failed: ABI mismatch: built for ABI 1, this host speaks 2") !=
        std::string::npos);
  CHECK(plain.output.find(
            "failed: storage ABI mismatch: built for storage ABI 1, this host speaks 2") !=
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
  CHECK(failed == 7);  // badabi, abi1, wrongid, noentry, unresolved, tooshort, flattable
  CHECK(loaded == 3);  // raw, throws, future
  CHECK(test::run(tool + " --no-such-option").status == 2);
  CHECK(test::run(tool + " --help").status == 0);
  CHECK(test::run(tool + " --version").output.find("plugin ABI 2") != std::string::npos);
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
  // 19 codecs (11 bytes -> bytes, 8 array -> array) + 7 formats + 4 storage
  // backends, less those this build left out (-D<id>=disabled).
  const std::string off = test::env_or("STOWAGE_PLUGINS_OFF", "");
  const int left_out = off.empty() ? 0 : 1 + int(std::count(off.begin(), off.end(), ','));
  REQUIRE(expected + left_out == 30);
  CHECK(checked == expected);
  MESSAGE("checked " << checked << " plugins");
}

// ---- one host table per registry, and the codec context pool (issue 19) ----------

namespace {

// The plugin directory holding `file` (the build puts every plugin in one).
std::string dir_of(const std::string& file) {
  for (const std::string& d : plugin_dirs())
    if (test::fs::exists(test::fs::path(d) / file)) return d;
  return "";
}

stowage::Registry::Options hosts_options() {
  stowage::Registry::Options o;
  o.paths = {test::env_or("STOWAGE_ABI_HOSTS_DIR", ""), dir_of("stowage_format_npy.so")};
  o.use_environment = false;
  o.use_default_dir = false;
  return o;
}

// A registry whose plugins log into `lines`.
struct LoggedRegistry {
  std::vector<std::string> lines;
  std::mutex mutex;
  stowage::Registry registry{hosts_options()};
  LoggedRegistry() {
    registry.set_log_sink([this](int, std::string_view m) {
      std::lock_guard<std::mutex> lock(mutex);
      lines.emplace_back(m);
    });
  }
  size_t count(const std::string& line) {
    std::lock_guard<std::mutex> lock(mutex);
    return static_cast<size_t>(std::count(lines.begin(), lines.end(), line));
  }
};

}  // namespace

TEST_CASE("two registries in one process: each plugin logs to the registry that made its object") {
  REQUIRE(!dir_of("stowage_format_npy.so").empty());
  LoggedRegistry a, b;
  // Both registries load the same hostlog .so (one copy in the process): with
  // one process-wide host table, the second load would take over the first's.
  stowage::Codec ca = a.registry.codec(R"({"type":"hostlog","tag":1})");
  stowage::Codec cb = b.registry.codec(R"({"type":"hostlog","tag":2})");
  ca.encode("x", 1);
  ca.encode("y", 1);
  cb.encode("z", 1);
  CHECK(a.lines == std::vector<std::string>{"hostlog: created tag 1", "hostlog: context tag 1",
                                            "hostlog: encode tag 1", "hostlog: encode tag 1"});
  CHECK(b.lines == std::vector<std::string>{"hostlog: created tag 2", "hostlog: context tag 2",
                                            "hostlog: encode tag 2"});

  // A format plugin: npy warns when a store made for writing closes without an array.
  test::TempDir tmp;
  const std::string pa = (tmp.path() / "a.npy").string(), pb = (tmp.path() / "b.npy").string();
  stowage::Store sa =
      stowage::Store::open(pa, stowage::Mode::truncate, "npy", stowage::json::object(), a.registry);
  stowage::Store sb =
      stowage::Store::open(pb, stowage::Mode::truncate, "npy", stowage::json::object(), b.registry);
  sa.close();
  sb.close();
  CHECK(a.lines.back() == pa + ": closed without an array; no .npy file written");
  CHECK(b.lines.back() == pb + ": closed without an array; no .npy file written");
  CHECK(a.lines.size() == 5);
  CHECK(b.lines.size() == 4);
}

TEST_CASE("the SDK reads a host table field only when struct_size covers it") {
  stowage::Registry registry(hosts_options());
  auto* vt = static_cast<const stowage_codec_vtable*>(registry.load("codec", "hostlog")->vtable);
  std::vector<std::string> got;
  stowage_host host{};
  host.abi_version = STOWAGE_PLUGIN_ABI;
  host.ctx = &got;
  host.log = [](void* ctx, int32_t, const char* m, size_t n) {
    static_cast<std::vector<std::string>*>(ctx)->emplace_back(m, n);
  };
  auto create = [&](uint32_t struct_size) {
    host.struct_size = struct_size;
    std::string canonical;
    stowage_sink sink{&canonical, [](void* ctx, const void* d, size_t n) {
                        static_cast<std::string*>(ctx)->append(static_cast<const char*>(d), n);
                        return 0;
                      }};
    stowage_codec_config config = nullptr;
    stowage_error err{};
    const std::string json = R"({"type":"hostlog","tag":5})";
    REQUIRE(vt->create(&host, json.data(), json.size(), &config, &sink, &err) == STOWAGE_OK);
    CHECK(canonical == R"({"quiet":false,"tag":5,"type":"hostlog"})");
    vt->destroy(config);
  };
  // A host whose table ends before `log` (an older, shorter table): not called.
  create(offsetof(stowage_host, log));
  CHECK(got.empty());
  create(offsetof(stowage_host, log) + sizeof(void*));
  CHECK(got == std::vector<std::string>{"hostlog: created tag 5"});
}

TEST_CASE("the registry's codec: one context per thread at a time, kept for the next call") {
  LoggedRegistry r;
  const unsigned threads = 4;
  r.registry.set_threads(threads);
  stowage::Codec c = r.registry.codec(R"({"type":"hostlog","tag":7,"quiet":true})");
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      std::string in = "thread " + std::to_string(t);
      std::vector<char> out(in.size()), back(in.size());
      for (int i = 0; i < 300; ++i) {
        try {
          c.encode(in.data(), in.size(), out.data(), out.size());
          c.decode(out.data(), out.size(), back.data(), back.size());
          if (std::string(back.begin(), back.end()) != in) ++failures;
        } catch (const stowage::Error& e) {
          ++failures;  // "one context used by two threads at once"
        }
      }
    });
  for (std::thread& w : workers) w.join();
  CHECK(failures == 0);
  // As many contexts as threads ran at once, at most: the pool keeps them.
  const size_t made = r.count("hostlog: context tag 7");
  MESSAGE(made << " contexts for " << threads << " threads x 600 calls");
  CHECK(made >= 1);
  CHECK(made <= threads);
  // A host codec used by a format plugin shares the same pool machinery;
  // the codec's canonical config comes from create().
  CHECK(c.canonical_config() == R"({"quiet":true,"tag":7,"type":"hostlog"})");
}

// Codecs keep their scratch state in host-pooled contexts, never in
// thread_local (issue 19): a codec plugin has no TLS segment.
TEST_CASE("no codec plugin has thread-local storage") {
  int checked = 0;
  for (const std::string& dir : plugin_dirs()) {
    for (const auto& entry : test::fs::directory_iterator(dir)) {
      std::string name = entry.path().filename().string();
      if (name.rfind("stowage_codec_", 0) != 0 || entry.path().extension() != ".so") continue;
      CAPTURE(name);
      test::RunResult re = test::run("readelf -lW " + test::quote(entry.path().string()));
      REQUIRE(re.status == 0);
      CHECK(re.output.find(" TLS ") == std::string::npos);
      ++checked;
    }
  }
  CHECK(checked >= 7);
}
