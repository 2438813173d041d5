// Daf over HTTP, end to end: a private nginx serves the Daf fixtures
// (tests/fixtures/daf, every repository), and every repository read from its
// URL through the C++ API, stowage-info, stowage-convert and stowage::copy
// equals the same read from its local path; through a proxy that drops
// connections, answers 503 and cuts bodies too. A missing repository or
// file and any attempt to write are clear errors naming the URL.
#include "../daf/daf_test_util.hpp"
#include "flaky_proxy.hpp"
#include "nginx.hpp"
#include "tools.hpp"

#include <stowage/copy.hpp>

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

namespace {

using namespace daf_test;
using Fault = test::FlakyProxy::Fault;
using test::replace_all;
using test::tool;
using test::tree_of;

// nginx serving the fixtures under /daf/ (a link to tests/fixtures/daf,
// which nginx follows), and anything a test adds to its root.
struct Server {
  test::Nginx nginx;
  Server() { fs::create_directory_symlink(fs::absolute(fixtures_dir()), nginx.root() / "daf"); }
  std::string url(const std::string& repository) const { return nginx.url("daf/" + repository); }
};

// The fixtures a reader opens (the others, such as bad_version_minor, are
// refused: over HTTP the same way, which the first test checks). A build
// without the gzip or zstd codec cannot open the packed ones.
std::vector<std::string> readable_fixtures() {
  std::vector<std::string> out;
  for (const std::string& name : fixture_names())
    if (!snapshot_or_error((fixtures_dir() / name).string()).contains("error")) out.push_back(name);
  return out;
}

// A snapshot without the nodes' "storage" descriptions (Daf element, index
// types, schema), which a copy need not keep.
json without_storage(json s) {
  if (s.contains("describe")) s["describe"].erase("storage");
  if (s.contains("children"))
    for (auto& [name, child] : s["children"].items()) child = without_storage(child);
  return s;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

test::RunResult convert(const std::string& from, const fs::path& to, const std::string& flags) {
  return test::run(tool("stowage-convert").string() + " --quiet --threads 2 " + flags + " " +
                   test::quote(from) + " " + test::quote(to.string()));
}

}  // namespace

TEST_CASE(
    "daf over http: every fixture, detected and read through the C++ API, equals the local read") {
  Server server;
  std::vector<std::string> names = fixture_names();
  REQUIRE(names.size() >= 7);
  size_t compared = 0, refused = 0;
  for (const std::string& name : names) {
    CAPTURE(name);
    json local = snapshot_or_error((fixtures_dir() / name).string());
    json remote = snapshot_or_error(server.url(name));
    CHECK(remote == local);
    if (local.contains("error")) {
      ++refused;
      continue;
    }
    compared += leaves(local);
    CHECK(stowage::Store::open(server.url(name)).format() ==
          "daf");  // detection reads over HTTP too
  }
  CHECK(compared > 100);  // the fixtures hold well over a hundred properties and axes
  CHECK(refused >= 1);    // bad_version_minor
  // A missing repository is NOT_FOUND, naming the URL as given.
  try {
    stowage::Store::open(server.url("nothing_here"), stowage::Mode::read, "daf");
    FAIL("opened a repository that is not there");
  } catch (const stowage::Error& e) {
    CHECK(e.code() == stowage::ErrorCode::not_found);
    CHECK(has(e.what(), server.url("nothing_here")));
  }
  // A file missing under a repository is an error naming its URL.
  fs::copy(fixtures_dir() / "julia_v10_small", server.nginx.root() / "cut.daf",
           fs::copy_options::recursive);
  REQUIRE(fs::remove(server.nginx.root() / "cut.daf/vectors/cell/donor.data"));
  stowage::Store s = stowage::Store::open(server.nginx.url("cut.daf"), stowage::Mode::read, "daf");
  try {
    s.describe("vectors/cell/donor");
    FAIL("described a property whose data file is gone");
  } catch (const stowage::Error& e) {
    CHECK(e.code() == stowage::ErrorCode::corrupt);
    CHECK(has(e.what(), server.nginx.url("cut.daf/vectors/cell/donor.data")));
  }
}

TEST_CASE("daf over http: stowage-info shows the same tree for the URL as for the path") {
  Server server;
  std::vector<std::string> names = readable_fixtures();
  REQUIRE(names.size() >= 5);
  for (const std::string& name : names) {
    CAPTURE(name);
    std::string path = (fixtures_dir() / name).string(), url = server.url(name);
    for (const char* flags : {"", " --json"}) {
      CAPTURE(flags);
      test::RunResult local =
          test::run(tool("stowage-info").string() + flags + " " + test::quote(path));
      test::RunResult remote =
          test::run(tool("stowage-info").string() + flags + " " + test::quote(url));
      REQUIRE_MESSAGE(local.status == 0, local.output);
      CHECK_MESSAGE(remote.status == 0, remote.output);
      CHECK(has(local.output, path));  // the only difference: where it was read from
      CHECK(local.output.size() > path.size() + 200);
      CHECK(remote.output == replace_all(local.output, path, url));
    }
  }
  // A node inside a repository, named PATH::node.
  std::string url = server.url("julia_v10_small");
  test::RunResult r =
      test::run(tool("stowage-info").string() + " " + test::quote(url + "::vectors/cell/donor"));
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(has(r.output, url + ": daf\n"));
  CHECK(has(r.output, "vectors/cell/donor  array int32 [4] chunks [4]"));
}

TEST_CASE(
    "daf over http: stowage-convert and stowage::copy from a URL write what they write from the path") {
  Server server;
  test::TempDir out;
  for (const std::string& name : readable_fixtures()) {
    CAPTURE(name);
    fs::path from_path = out / ("local-" + name), from_url = out / ("http-" + name);
    test::RunResult local = convert((fixtures_dir() / name).string(), from_path, "--to daf");
    REQUIRE_MESSAGE(local.status == 0, local.output);
    test::RunResult remote = convert(server.url(name), from_url, "--to daf");
    REQUIRE_MESSAGE(remote.status == 0, remote.output);
    std::map<std::string, std::string> want = tree_of(from_path);
    CHECK(want.size() > 5);
    CHECK(tree_of(from_url) == want);
    // And the copy holds the fixture's nodes and values (its version and
    // storage choices may differ: a copy is written [1,0], UInt32 indices).
    CHECK(without_storage(snapshot_or_error(from_url.string()))["children"] ==
          without_storage(snapshot_or_error((fixtures_dir() / name).string()))["children"]);
  }
  // Daf -> npy: a dense vector, a sparse vector and a dense matrix.
  for (const char* spec :
       {"julia_v10_small::vectors/cell/donor", "julia_v10_small::vectors/cell/sparse_x",
        "gen_v11_types::matrices/cell/gene/dense_f32"}) {
    std::string s(spec);
    CAPTURE(s);
    std::string file = replace_all(replace_all(s, "::", "-"), "/", "-") + ".npy";
    test::RunResult local =
        convert((fixtures_dir() / s).string(), out / ("local-" + file), "--to npy --drop-metadata");
    REQUIRE_MESSAGE(local.status == 0, local.output);
    test::RunResult remote =
        convert(server.url(s), out / ("http-" + file), "--to npy --drop-metadata");
    REQUIRE_MESSAGE(remote.status == 0, remote.output);
    std::string bytes = test::read_file(out / ("local-" + file));
    CHECK(bytes.size() > 128);
    CHECK(test::read_file(out / ("http-" + file)) == bytes);
  }
  // stowage::copy (the C++ API) with an http source.
  for (const std::string name : {"julia_v10_small", "gen_v11_types", "julia_v11_packed_zstd"}) {
    CAPTURE(name);
    if (name == "julia_v11_packed_zstd" && test::plugin_off("zstd")) continue;
    stowage::CopyOptions o;
    o.from = o.to = "daf";
    const fs::path from_http = out / (name + "-copy-http.daf"),
                   from_disk = out / (name + "-copy-disk.daf");
    stowage::copy(server.url(name), from_http.string(), o);
    stowage::copy((fixtures_dir() / name).string(), from_disk.string(), o);
    CHECK(tree_of(from_http) == tree_of(from_disk));
    json want = snapshot_or_error(from_disk.string());
    CHECK_FALSE(want.contains("error"));
    CHECK(snapshot_or_error(from_http.string()) == want);
  }
}

TEST_CASE("daf over http: a flaky server still yields the same values") {
  Server server;
  test::FlakyProxy proxy(server.nginx.port());
  std::vector<std::string> names = readable_fixtures();
  const Fault faults[] = {Fault::drop, Fault::status, Fault::cut};
  // The registry's backend has the default retries (4, from 50 ms doubling):
  // a request fails for good only if 5 attempts in a row fail, which every
  // ninth request failing cannot do from one thread.
  for (size_t i = 0; i < names.size(); ++i) {
    CAPTURE(names[i]);
    Fault fault = faults[i % 3];
    CAPTURE(static_cast<int>(fault));
    proxy.misbehave(fault, 9);
    int before = proxy.faults();
    json remote = snapshot_or_error(proxy.url("daf/" + names[i]));
    CHECK_FALSE(remote.contains("error"));
    CHECK(remote == snapshot_or_error((fixtures_dir() / names[i]).string()));
    CHECK(proxy.faults() > before + 2);
  }
  // The tools (a registry of their own) retry too.
  proxy.misbehave(Fault::cut, 3);
  test::TempDir out;
  const std::string name = "julia_v10_example_cells";
  test::RunResult remote = convert(proxy.url("daf/" + name), out / "http.daf", "--to daf");
  REQUIRE_MESSAGE(remote.status == 0, remote.output);
  test::RunResult local = convert((fixtures_dir() / name).string(), out / "local.daf", "--to daf");
  REQUIRE_MESSAGE(local.status == 0, local.output);
  CHECK(tree_of(out / "http.daf") == tree_of(out / "local.daf"));
}

TEST_CASE("daf over http: writing is refused, naming the URL, and nothing changes") {
  Server server;
  fs::copy(fixtures_dir() / "julia_v10_small", server.nginx.root() / "r.daf",
           fs::copy_options::recursive);
  std::map<std::string, std::string> before = tree_of(server.nginx.root() / "r.daf");
  for (stowage::Mode mode : {stowage::Mode::update, stowage::Mode::truncate}) {
    CAPTURE(static_cast<int>(mode));
    try {
      stowage::Store s = stowage::Store::open(server.nginx.url("r.daf"), mode, "daf");
      s.write_strings("axes/new_axis", {"a"});
      s.close();
      FAIL("wrote through a read-only storage");
    } catch (const stowage::Error& e) {
      CHECK(has(e.what(), server.nginx.url("r.daf")));
    }
  }
  CHECK(tree_of(server.nginx.root() / "r.daf") == before);
  // stowage-convert to a URL: refused before anything is written.
  test::TempDir cwd;
  std::string to = server.nginx.url("copy.daf");
  test::RunResult r =
      test::run("cd " + test::quote(cwd.path().string()) + " && " +
                tool("stowage-convert").string() + " --quiet --to daf " +
                test::quote((fixtures_dir() / "julia_v10_small").string()) + " " + test::quote(to));
  CHECK(r.status != 0);
  CHECK(has(r.output, to));
  CHECK(fs::is_empty(cwd.path()));
  CHECK_FALSE(fs::exists(server.nginx.root() / "copy.daf"));
}
