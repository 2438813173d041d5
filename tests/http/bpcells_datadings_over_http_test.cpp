// BPCells matrices and datadings datasets over HTTP: a private nginx serves
// their fixtures (tests/fixtures/bpcells, tests/fixtures/datadings), and
// every one read from its URL through the C++ API (detected over HTTP too)
// and stowage-convert equals the same read from its local path; through a
// proxy that drops connections, answers 503 and cuts bodies too. A missing
// dataset and any attempt to write are clear errors naming the URL.
#include "../bpcells/bpcells_helpers.hpp"
#include "../datadings/datadings_snapshot.hpp"
#include "flaky_proxy.hpp"
#include "nginx.hpp"
#include "tools.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using stowage::json;
using stowage::Mode;
using stowage::Store;
using Fault = test::FlakyProxy::Fault;
using test::tool;
using test::tree_of;

fs::path datadings_fixtures() { return fs::absolute(test::fixtures() / "datadings"); }
const char* const kDatasets[] = {"basic", "dtypes", "exotic", "legacy", "many"};

// nginx serving the fixtures under /bpcells/ and /datadings/ (links to the
// fixture folders, which nginx follows).
struct Server {
  test::Nginx nginx;
  Server() {
    fs::create_directory_symlink(fs::absolute(bpcells_test::fixture_dir()),
                                 nginx.root() / "bpcells");
    fs::create_directory_symlink(datadings_fixtures(), nginx.root() / "datadings");
  }
};

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

test::RunResult convert(const std::string& from, const fs::path& to, const std::string& flags) {
  return test::run(tool("stowage-convert").string() + " --quiet " + flags + " " +
                   test::quote(from) + " " + test::quote(to.string()));
}

}  // namespace

TEST_CASE(
    "bpcells over http: every fixture, detected and read through the C++ API, equals the local read") {
  Server server;
  std::vector<std::string> names = bpcells_test::fixture_names();
  REQUIRE(names.size() == 14);
  for (const std::string& name : names) {
    CAPTURE(name);
    const std::string url = server.nginx.url("bpcells/" + name);
    json want = bpcells_test::snapshot(Store::open((bpcells_test::fixture_dir() / name).string()));
    Store remote = Store::open(url);
    CHECK(remote.format() == "bpcells");
    CHECK(bpcells_test::snapshot(remote) == want);
  }
}

TEST_CASE(
    "datadings over http: every fixture, detected and read through the C++ API, equals the local read") {
  Server server;
  for (const std::string name : kDatasets) {
    CAPTURE(name);
    const std::string url = server.nginx.url("datadings/" + name + ".msgpack");
    json want = dd_test::records_snapshot(
        Store::open((datadings_fixtures() / (name + ".msgpack")).string()));
    CHECK(want["has_md5"] == true);
    CHECK(stowage::Registry::global().detect_format(url) == "datadings");
    Store remote = Store::open(url);
    CHECK(remote.format() == "datadings");
    CHECK(dd_test::records_snapshot(remote) == want);
  }
}

TEST_CASE("bpcells and datadings over http: a flaky server still yields the same values") {
  Server server;
  test::FlakyProxy proxy(server.nginx.port());
  // The registry's backend retries 4 times: every seventh request failing
  // cannot fail one for good from one thread.
  const Fault faults[] = {Fault::drop, Fault::status, Fault::cut};
  int round = 0;
  for (const char* name :
       {"uint_packed_col_multichunk", "v1_double_unpacked_row", "float_packed_col_names"}) {
    CAPTURE(name);
    proxy.misbehave(faults[round++ % 3], 7);
    int before = proxy.faults();
    json want = bpcells_test::snapshot(Store::open((bpcells_test::fixture_dir() / name).string()));
    CHECK(bpcells_test::snapshot(Store::open(proxy.url(std::string("bpcells/") + name))) == want);
    CHECK(proxy.faults() > before + 2);
  }
  for (const std::string name : {"many", "legacy", "dtypes"}) {
    CAPTURE(name);
    proxy.misbehave(faults[round++ % 3], 7);
    int before = proxy.faults();
    json want = dd_test::records_snapshot(
        Store::open((datadings_fixtures() / (name + ".msgpack")).string()));
    CHECK(dd_test::records_snapshot(Store::open(proxy.url("datadings/" + name + ".msgpack"))) ==
          want);
    CHECK(proxy.faults() > before + 2);
  }
}

TEST_CASE(
    "bpcells and datadings over http: stowage-convert from a URL writes what it writes from the path") {
  Server server;
  test::TempDir out;
  struct Case {
    std::string url, local, to, format;
  };
  const Case cases[] = {
      {server.nginx.url("bpcells/uint_packed_row_names"),
       (bpcells_test::fixture_dir() / "uint_packed_row_names").string(), "m", "bpcells"},
      {server.nginx.url("datadings/many.msgpack"), (datadings_fixtures() / "many.msgpack").string(),
       "d.msgpack", "datadings"}};
  for (const Case& c : cases) {
    CAPTURE(c.url);
    test::RunResult remote = convert(c.url, out / "http" / c.to, "--to " + c.format);
    REQUIRE_MESSAGE(remote.status == 0, remote.output);
    test::RunResult local = convert(c.local, out / "local" / c.to, "--to " + c.format);
    REQUIRE_MESSAGE(local.status == 0, local.output);
    CHECK(tree_of(out / "http") == tree_of(out / "local"));
    CHECK(tree_of(out / "http").size() >= 6);
  }
}

TEST_CASE(
    "bpcells and datadings over http: a missing dataset and any write are errors naming the URL") {
  Server server;
  for (const std::string& path :
       {std::string("bpcells/no_such_matrix"), std::string("datadings/none.msgpack")}) {
    const std::string url = server.nginx.url(path);
    CAPTURE(url);
    const std::string format = path.rfind("bpcells", 0) == 0 ? "bpcells" : "datadings";
    try {
      Store::open(url, Mode::read, format);
      FAIL("opened a dataset that is not there");
    } catch (const stowage::Error& e) {
      CHECK(e.code() == stowage::ErrorCode::not_found);
      CHECK(has(e.what(), url));
    }
  }
  fs::copy(bpcells_test::fixture_dir() / "uint_packed_col_names", server.nginx.root() / "m",
           fs::copy_options::recursive);
  std::map<std::string, std::string> before = tree_of(server.nginx.root() / "m");
  try {
    Store s = Store::open(server.nginx.url("m"), Mode::truncate, "bpcells");
    s.create("", {{"kind", "sparse"}, {"dtype", "uint32"}, {"shape", {2, 2}}});
    s.close();
    FAIL("wrote through a read-only storage");
  } catch (const stowage::Error& e) {
    CHECK(has(e.what(), server.nginx.url("m")));
  }
  CHECK(tree_of(server.nginx.root() / "m") == before);
  try {
    Store s = Store::open(server.nginx.url("d.msgpack"), Mode::truncate, "datadings");
    s.create("", {{"kind", "records"}});
    s.records().append({std::string("\x81\xa3key\xa1x", 7)});
    s.close();
    FAIL("wrote through a read-only storage");
  } catch (const stowage::Error& e) {
    CHECK(has(e.what(), server.nginx.url("d.msgpack")));
  }
  CHECK_FALSE(fs::exists(server.nginx.root() / "d.msgpack"));
}
