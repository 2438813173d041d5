// datg and npy over HTTP, end to end: a private nginx serves the datg
// fixtures (tests/fixtures/datg) and the .npy files numpy writes
// (tests/npy/npy_peer.py), and each reads from its URL through the C++ API,
// stowage-info and stowage-convert equal to the same read from its local
// path, also through a proxy that drops connections, answers 503 and cuts
// bodies. Writing to a URL is refused, naming it.
#include "flaky_proxy.hpp"
#include "nginx.hpp"
#include "test_support.hpp"
#include "tools.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using stowage::json;
using stowage::Store;
using Fault = test::FlakyProxy::Fault;

fs::path datg_fixtures() { return fs::absolute(test::fixtures() / "datg"); }

// Every datg fixture's base name (those with an .expected.json).
std::vector<std::string> datg_names() {
  std::vector<std::string> names;
  const std::string suffix = ".expected.json";
  for (const fs::directory_entry& e : fs::directory_iterator(datg_fixtures())) {
    const std::string file = e.path().filename().string();
    if (file.size() > suffix.size() &&
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0)
      names.push_back(file.substr(0, file.size() - suffix.size()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

// nginx serving the datg fixtures under /datg/ (a link nginx follows) and
// the arrays numpy writes under /npy/ (with numpy's values in .raw files).
struct Server {
  test::Nginx nginx;
  json npy_manifest;
  Server() {
    fs::create_directory_symlink(datg_fixtures(), nginx.root() / "datg");
    fs::create_directory(nginx.root() / "npy");
    const std::string peer = (test::source_root() / "tests" / "npy" / "npy_peer.py").string();
    test::RunResult r = test::run(test::python() + " " + test::quote(peer) + " write " +
                                  test::quote((nginx.root() / "npy").string()));
    if (r.status != 0) throw std::runtime_error("npy_peer.py write failed: " + r.output);
    npy_manifest = test::read_json(nginx.root() / "npy" / "manifest.json");
  }
  std::string url(const std::string& path) const { return nginx.url(path); }
  std::string local(const std::string& path) const { return (nginx.root() / path).string(); }
};

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A store's one array (at the root) as the API shows it: its description,
// all its values, each row read alone, and for datg the names.
json snapshot(const Store& store) {
  json s;
  s["description"] = store.describe_json("");
  stowage::Array a = store.array("");
  const std::vector<uint64_t> shape = a.shape();
  uint64_t n = stowage::dtype_size(a.dtype());
  for (uint64_t e : shape) n *= e;
  std::string all(n, '\0');
  a.read(std::vector<uint64_t>(shape.size(), 0), shape, all.data());
  s["values"] = json::binary(std::vector<uint8_t>(all.begin(), all.end()));
  if (!shape.empty() && shape[0] > 1 && n > 0) {  // rows one by one, last first
    std::vector<uint64_t> offset(shape.size(), 0), one = shape;
    one[0] = 1;
    std::string rows(n, '\0');
    const uint64_t row_bytes = n / shape[0];
    for (uint64_t r = shape[0]; r-- > 0;) {
      offset[0] = r;
      a.read(offset, one, rows.data() + r * row_bytes);
    }
    CHECK(rows == all);
  }
  if (store.format() == "datg") {
    s["rows"] = store.read_strings("rows");
    s["cols"] = store.read_strings("cols");
  }
  return s;
}

std::string convert(const std::string& from, const fs::path& to) {
  test::RunResult r = test::run(test::tool("stowage-convert").string() + " --quiet --threads 2 " +
                                test::quote(from) + " " + test::quote(to.string()));
  REQUIRE_MESSAGE(r.status == 0, r.output);
  return r.output;
}

}  // namespace

TEST_CASE(
    "datg over http: every fixture reads equal to its local copy, detected and by base name") {
  Server server;
  const std::vector<std::string> names = datg_names();
  REQUIRE(names.size() >= 8);
  for (const std::string& name : names) {
    CAPTURE(name);
    const json local = snapshot(
        Store::open((datg_fixtures() / (name + ".datg")).string(), stowage::Mode::read, "datg"));
    CHECK(local["values"].get_binary().size() ==
          fs::file_size(datg_fixtures() / (name + ".expected.bin")));
    Store detected = Store::open(server.url("datg/" + name + ".datg"));
    CHECK(detected.format() == "datg");
    CHECK(snapshot(detected) == local);
    CHECK(snapshot(Store::open(server.url("datg/" + name), stowage::Mode::read, "datg")) == local);
  }
}

TEST_CASE(
    "npy over http: every array numpy writes reads equal to its local copy and to numpy's values") {
  Server server;
  REQUIRE(server.npy_manifest.size() > 200);
  for (const json& entry : server.npy_manifest) {
    const std::string name = entry["name"];
    CAPTURE(name);
    Store remote = Store::open(server.url("npy/" + name + ".npy"));
    CHECK(remote.format() == "npy");
    const json got = snapshot(remote);
    CHECK(got == snapshot(Store::open(server.local("npy/" + name + ".npy"))));
    const std::string raw = test::read_file(server.local("npy/" + name + ".raw"));
    CHECK(static_cast<const std::vector<uint8_t>&>(got["values"].get_binary()) ==
          std::vector<uint8_t>(raw.begin(), raw.end()));
  }
  // Small slabs: many ranged reads per array.
  const std::string name = "float64_be_F_0";
  Store small = Store::open(server.url("npy/" + name + ".npy"), stowage::Mode::read, "npy",
                            {{"chunk_bytes", 24}});
  CHECK(small.array("").info().chunks !=
        Store::open(server.local("npy/" + name + ".npy")).array("").info().chunks);
  CHECK(snapshot(small)["values"] ==
        snapshot(Store::open(server.local("npy/" + name + ".npy")))["values"]);
}

TEST_CASE("datg and npy over http: stowage-info shows the same for the URL as for the path") {
  Server server;
  for (const std::string& file :
       {std::string("datg/basic_4x5.datg"), std::string("datg/many_rows_20000x1.datg"),
        std::string("npy/int16_be_F_0.npy"), std::string("npy/version_3_0.npy")}) {
    CAPTURE(file);
    const std::string path = server.local(file), url = server.url(file);
    for (const char* flags : {"", " --json"}) {
      CAPTURE(flags);
      test::RunResult local =
          test::run(test::tool("stowage-info").string() + flags + " " + test::quote(path));
      test::RunResult remote =
          test::run(test::tool("stowage-info").string() + flags + " " + test::quote(url));
      REQUIRE_MESSAGE(local.status == 0, local.output);
      CHECK_MESSAGE(remote.status == 0, remote.output);
      CHECK(has(local.output, path));  // the only difference: where it was read from
      CHECK(remote.output == test::replace_all(local.output, path, url));
    }
  }
}

TEST_CASE(
    "datg and npy over http: stowage-convert from a URL writes what it writes from the path") {
  Server server;
  test::TempDir out;
  for (const std::string& file :
       {std::string("datg/few_cols_250x3.datg"), std::string("npy/uint32_le_C_5.npy")}) {
    CAPTURE(file);
    const std::string tag = std::to_string(std::hash<std::string>()(file));
    convert(server.local(file), out / ("local-" + tag + ".n5"));
    convert(server.url(file), out / ("http-" + tag + ".n5"));
    const auto want = test::tree_of(out / ("local-" + tag + ".n5"));
    CHECK(want.size() >= 2);  // attributes.json and chunks
    CHECK(test::tree_of(out / ("http-" + tag + ".n5")) == want);
  }
}

TEST_CASE("datg and npy over http: a flaky server still yields the same values") {
  Server server;
  test::FlakyProxy proxy(server.nginx.port());
  const Fault faults[] = {Fault::drop, Fault::status, Fault::cut};
  // The backend retries 4 times from 50 ms: every seventh request failing
  // cannot fail one for good.
  std::vector<std::string> files;
  for (const std::string& name : datg_names()) files.push_back("datg/" + name + ".datg");
  for (const char* name :
       {"float64_be_F_0", "int8_na_C_1", "uint32_le_C_5", "int16_be_F_5", "version_2_0"})
    files.push_back(std::string("npy/") + name + ".npy");
  for (size_t i = 0; i < files.size(); ++i) {
    CAPTURE(files[i]);
    proxy.misbehave(faults[i % 3], 7);
    const int before = proxy.faults();
    CHECK(snapshot(Store::open(proxy.url(files[i]))) ==
          snapshot(Store::open(server.local(files[i]))));
    CHECK(proxy.faults() > before);
  }
}

TEST_CASE("datg and npy over http: writing is refused, naming the URL, and nothing is created") {
  Server server;
  for (const auto& [file, format] :
       {std::pair<std::string, std::string>{"new.datg", "datg"}, {"new.npy", "npy"}}) {
    CAPTURE(file);
    const std::string url = server.url(file);
    try {
      Store s = Store::open(url, stowage::Mode::truncate, format);
      s.create("", {{"kind", "array"}, {"dtype", "float64"}, {"shape", {2, 3}}});
      std::vector<double> v(6, 1.0);
      s.array("").write({0, 0}, {2, 3}, v.data());
      s.close();
      FAIL("wrote through a read-only storage");
    } catch (const stowage::Error& e) {
      CHECK(has(e.what(), url));
    }
    CHECK_FALSE(fs::exists(server.local(file)));
  }
  // A missing file is NOT_FOUND, naming the URL.
  const std::string missing = server.url("datg/absent.datg");
  try {
    Store::open(missing, stowage::Mode::read, "datg");
    FAIL("opened a missing file");
  } catch (const stowage::Error& e) {
    CHECK(e.code() == stowage::ErrorCode::not_found);
    CHECK(has(e.what(), missing));
  }
}
