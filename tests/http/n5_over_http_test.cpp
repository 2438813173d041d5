// N5 over HTTP, end to end: a private nginx serves the N5 fixtures
// (tests/fixtures/n5, every container), and every container read from its
// URL through the C++ API, stowage-info and stowage-convert equals the same
// read from its local path (and the values the n5 suite checks); through a
// proxy that drops connections, answers 503 and cuts bodies too. A missing
// container or node, a chunk file cut short, a body cut short in transit and
// any attempt to write are clear errors naming the URL.
#include "flaky_proxy.hpp"
#include "nginx.hpp"
#include "test_support.hpp"
#include "tools.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using stowage::json;
using stowage::NodeKind;
using stowage::Store;
using Fault = test::FlakyProxy::Fault;

fs::path n5_fixtures() { return fs::absolute(test::fixtures() / "n5"); }

// Every container of the fixture set: the *.n5 directories.
std::vector<std::string> containers() {
  std::vector<std::string> out;
  for (const fs::directory_entry& e : fs::directory_iterator(n5_fixtures()))
    if (e.is_directory() && e.path().extension() == ".n5")
      out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

json expected_of(const std::string& container) {
  return test::read_json(n5_fixtures() / (container + ".expected.json"));
}

// nginx serving the fixtures under /n5/ (a link to tests/fixtures/n5, which
// nginx follows), and anything a test adds to its root.
struct Server {
  test::Nginx nginx;
  Server() { fs::create_directory_symlink(n5_fixtures(), nginx.root() / "n5"); }
  std::string url(const std::string& container) const { return nginx.url("n5/" + container); }
};

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

using test::Failure;
using test::failure_of;

std::string read_region(const stowage::Array& a, const std::vector<uint64_t>& offset,
                        const std::vector<uint64_t>& shape) {
  uint64_t n = stowage::dtype_size(a.dtype());
  for (uint64_t s : shape) n *= s;
  std::string out(n, '\0');
  a.read(offset, shape, out.data());
  return out;
}
std::string read_all(const stowage::Array& a) {
  return read_region(a, std::vector<uint64_t>(a.ndim(), 0), a.shape());
}

// What a walk compared, by node kind.
struct Tally {
  size_t groups = 0, arrays = 0, strings = 0, records = 0;
  std::map<std::string, std::string> array_bytes;  // node -> its whole remote read
};

void compare_array(const Store& local, const Store& remote, const std::string& node, Tally& t) {
  stowage::Array a = local.array(node), b = remote.array(node);
  std::string want = read_all(a), got = read_all(b);
  REQUIRE(got.size() == want.size());
  CHECK(got == want);
  t.array_bytes[node] = got;
  // A region that cuts through chunks: from a third of each extent, half of it.
  std::vector<uint64_t> offset, shape;
  for (uint64_t s : a.shape()) {
    offset.push_back(s / 3);
    shape.push_back(std::min<uint64_t>(std::max<uint64_t>(s / 2, 1), s - s / 3));
  }
  CHECK(read_region(b, offset, shape) == read_region(a, offset, shape));
  // Which chunks exist (absent ones read as zeros either way).
  std::vector<uint64_t> grid = a.chunk_grid(), at(grid.size(), 0);
  CHECK(b.chunk_grid() == grid);
  for (size_t n = 0;
       n < 200 && std::all_of(grid.begin(), grid.end(), [](uint64_t g) { return g > 0; }); ++n) {
    CAPTURE(json(at).dump());
    CHECK(b.chunk_exists(at) == a.chunk_exists(at));
    size_t d = at.size();
    while (d-- > 0 && ++at[d] == grid[d]) at[d] = 0;
    if (d == SIZE_MAX) break;  // wrapped: every chunk seen
  }
}

// Walks the local store from `node` and checks the remote one has the same
// nodes, descriptions and values.
void compare_node(const Store& local, const Store& remote, const std::string& node, Tally& t) {
  CAPTURE(node);
  CHECK(remote.describe_json(node) == local.describe_json(node));
  std::vector<std::string> children = local.list(node);
  CHECK(remote.list(node) == children);
  switch (local.describe(node).kind) {
    case NodeKind::group:
      ++t.groups;
      for (const std::string& c : children)
        compare_node(local, remote, node.empty() ? c : node + "/" + c, t);
      break;
    case NodeKind::array:
      ++t.arrays;
      compare_array(local, remote, node, t);
      break;
    case NodeKind::strings: {
      ++t.strings;
      std::vector<std::string> all = local.read_strings(node);
      CHECK(remote.read_strings(node) == all);
      CHECK(remote.read_strings(node, 1, all.size()) == local.read_strings(node, 1, all.size()));
      break;
    }
    case NodeKind::records: {
      ++t.records;
      stowage::Records a = local.records(node), b = remote.records(node);
      REQUIRE(b.size() == a.size());
      for (uint64_t i = 0; i < a.size(); ++i) CHECK(b.read(i) == a.read(i));
      break;
    }
    case NodeKind::sparse:
      FAIL("N5 has no sparse nodes, yet " << node << " is one");
  }
}

// The whole container at `url` against its local copy, and the values the
// n5 suite holds for it (its .expected.json and .expected.bin files).
void compare_container(const std::string& container, const Store& remote) {
  CAPTURE(container);
  Store local = Store::open((n5_fixtures() / container).string(), stowage::Mode::read, "n5");
  Tally t;
  compare_node(local, remote, "", t);
  json expected = expected_of(container);
  CHECK(t.arrays == expected["datasets"].size());
  CHECK(t.strings + t.records == expected.value("optional_datasets", json::object()).size());
  CHECK(t.groups >= 1);
  for (auto& [name, ds] : expected["datasets"].items()) {
    CAPTURE(name);
    REQUIRE(t.array_bytes.count(name));
    CHECK(t.array_bytes[name] ==
          test::read_file(n5_fixtures() / ds["expected_bin"].get<std::string>()));
  }
}

using test::replace_all;
using test::tool;
using test::tree_of;

}  // namespace

TEST_CASE("n5 over http: every fixture container reads equal to its local copy") {
  Server server;
  std::vector<std::string> all = containers();
  REQUIRE(all.size() >= 7);
  for (const std::string& container : all) {
    CAPTURE(container);
    std::string url = server.url(container);
    Store detected = Store::open(url);
    CHECK(detected.format() == "n5");
    CHECK(detected.path() == url);
    compare_container(container, detected);
    // Named, and with a trailing slash.
    compare_container(container, Store::open(url + "/", stowage::Mode::read, "n5"));
  }
}

TEST_CASE("n5 over http: stowage-info shows the same tree for the URL as for the path") {
  Server server;
  for (const std::string& container : containers()) {
    CAPTURE(container);
    std::string path = (n5_fixtures() / container).string(), url = server.url(container);
    for (const char* flags : {"", " --json"}) {
      CAPTURE(flags);
      test::RunResult local =
          test::run(tool("stowage-info").string() + flags + " " + test::quote(path));
      test::RunResult remote =
          test::run(tool("stowage-info").string() + flags + " " + test::quote(url));
      REQUIRE_MESSAGE(local.status == 0, local.output);
      CHECK_MESSAGE(remote.status == 0, remote.output);
      CHECK(has(local.output, path));  // the only difference: where it was read from
      CHECK(remote.output == replace_all(local.output, path, url));
    }
  }
  // A node inside a container, named PATH::node.
  std::string url = server.url("zarr-written.n5");
  test::RunResult r =
      test::run(tool("stowage-info").string() + " " + test::quote(url + "::gzip/uint16_2d"));
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(has(r.output, url + ": n5\n"));
  CHECK(has(r.output, "gzip/uint16_2d  array uint16 [20, 30] chunks [8, 16]"));
}

TEST_CASE("n5 over http: stowage-convert from a URL writes what it writes from the path") {
  Server server;
  test::TempDir out;
  auto convert = [&](const std::string& from, const fs::path& to, const std::string& flags = "") {
    return test::run(tool("stowage-convert").string() + " --quiet --threads 2" + flags + " " +
                     test::quote(from) + " " + test::quote(to.string()));
  };
  for (const std::string& container : containers()) {
    CAPTURE(container);
    fs::path from_path = out / ("local-" + container), from_url = out / ("http-" + container);
    test::RunResult local = convert((n5_fixtures() / container).string(), from_path);
    REQUIRE_MESSAGE(local.status == 0, local.output);
    test::RunResult remote = convert(server.url(container), from_url);
    REQUIRE_MESSAGE(remote.status == 0, remote.output);
    std::map<std::string, std::string> want = tree_of(from_path);
    CHECK(want.size() > 1);
    CHECK(tree_of(from_url) == want);
  }
  // N5 -> npy, one dataset of each container that has a numeric one.
  for (const char* spec : {"zarr-written.n5::gzip/uint16_2d", "java-style.n5::zstd/uint32_2d",
                           "n5java-4.0.2-written.n5::xz/float64_2d"}) {
    std::string s(spec);
    CAPTURE(s);
    fs::path a = out / ("local-" + std::to_string(std::hash<std::string>()(s)) + ".npy");
    fs::path b = out / ("http-" + std::to_string(std::hash<std::string>()(s)) + ".npy");
    test::RunResult local = convert((n5_fixtures() / s).string(), a, " --drop-metadata");
    REQUIRE_MESSAGE(local.status == 0, local.output);
    test::RunResult remote = convert(server.url(s), b, " --drop-metadata");
    REQUIRE_MESSAGE(remote.status == 0, remote.output);
    std::string bytes = test::read_file(a);
    CHECK(bytes.size() > 128);
    CHECK(test::read_file(b) == bytes);
  }
}

TEST_CASE("n5 over http: a flaky server still yields the same values") {
  Server server;
  test::FlakyProxy proxy(server.nginx.port());
  std::vector<std::string> all = containers();
  const Fault faults[] = {Fault::drop, Fault::status, Fault::cut};
  // The registry's backend has the default retries (4, from 50 ms doubling):
  // a request fails for good only if 5 attempts in a row fail, which every
  // ninth request failing cannot do from one thread (and, from the 2 threads
  // of a read, with a chance of about (1/9)^5).
  for (size_t i = 0; i < all.size(); ++i) {
    CAPTURE(all[i]);
    Fault fault = faults[i % 3];
    CAPTURE(static_cast<int>(fault));
    proxy.misbehave(fault, 9);
    int before = proxy.faults();
    compare_container(all[i], Store::open(proxy.url("n5/" + all[i])));
    CHECK(proxy.faults() > before + 2);
  }
  // The tools (a registry of their own) retry too.
  proxy.misbehave(Fault::cut, 3);
  test::TempDir out;
  std::string container = "zarr-written.n5";
  test::RunResult remote = test::run(tool("stowage-convert").string() + " --quiet --threads 2 " +
                                     test::quote(proxy.url("n5/" + container)) + " " +
                                     test::quote((out / "http.n5").string()));
  REQUIRE_MESSAGE(remote.status == 0, remote.output);
  test::RunResult local = test::run(tool("stowage-convert").string() + " --quiet --threads 2 " +
                                    test::quote((n5_fixtures() / container).string()) + " " +
                                    test::quote((out / "local.n5").string()));
  REQUIRE_MESSAGE(local.status == 0, local.output);
  CHECK(tree_of(out / "http.n5") == tree_of(out / "local.n5"));
}

TEST_CASE("n5 over http: missing containers and nodes are errors naming the URL") {
  Server server;
  std::string missing = server.url("missing.n5");
  Failure f = failure_of([&] { Store::open(missing); });
  CHECK(f.code == stowage::ErrorCode::not_found);
  CHECK(f.message == missing + ": no such file or directory");
  f = failure_of([&] { Store::open(missing, stowage::Mode::read, "n5"); });
  CHECK(f.code == stowage::ErrorCode::not_found);
  CHECK(has(f.message, missing + ": "));

  std::string url = server.url("zarr-written.n5");
  Store store = Store::open(url);
  f = failure_of([&] { store.array("gzip/missing"); });
  CHECK(f.code == stowage::ErrorCode::not_found);
  CHECK(has(f.message, url));
  CHECK(has(f.message, "gzip/missing"));

  test::RunResult r = test::run(tool("stowage-info").string() + " " + test::quote(missing));
  CHECK(r.status == 1);
  CHECK(r.output == "stowage-info: " + missing + ": no such file or directory\n");
  r = test::run(tool("stowage-info").string() + " " + test::quote(url + "::gzip/missing"));
  CHECK(r.status == 1);
  CHECK(has(r.output, url));
}

TEST_CASE(
    "n5 over http: a chunk file cut short is the same clear error as locally, naming the URL") {
  Server server;
  // A copy of a fixture whose chunk (0, 0) of gzip/uint16_2d and raw/int16_2d
  // lost its second half.
  fs::path cut = server.nginx.root() / "cut.n5";
  fs::copy(n5_fixtures() / "zarr-written.n5", cut, fs::copy_options::recursive);
  for (const char* chunk : {"gzip/uint16_2d/0/0", "raw/int16_2d/0/0"}) {
    std::string bytes = test::read_file(cut / chunk);
    REQUIRE(bytes.size() > 20);
    test::write_file(cut / chunk, bytes.substr(0, bytes.size() / 2));
  }
  Store local = Store::open(cut.string()), remote = Store::open(server.nginx.url("cut.n5"));
  for (const char* node : {"gzip/uint16_2d", "raw/int16_2d"}) {
    CAPTURE(node);
    Failure l = failure_of([&] { read_all(local.array(node)); });
    Failure r = failure_of([&] { read_all(remote.array(node)); });
    CHECK(l.code == stowage::ErrorCode::corrupt);
    CHECK(r.code == l.code);
    CHECK(has(r.message, server.nginx.url("cut.n5")));
    CHECK(r.message == replace_all(l.message, cut.string(), server.nginx.url("cut.n5")));
    // The chunks that are whole still read.
    stowage::Array whole = remote.array(node);
    std::vector<uint64_t> last = whole.chunk_grid();
    for (uint64_t& g : last) g -= 1;
    CHECK(whole.chunk_exists(last));
  }
}

TEST_CASE("n5 over http: a body cut short in transit is a clear error naming the URL") {
  Server server;
  test::FlakyProxy proxy(server.nginx.port());
  std::string url = proxy.url("n5/zarr-written.n5");
  Store store = Store::open(url);
  stowage::Array a = store.array("raw/uint8_1d");
  std::string want = read_all(a);  // the dataset's metadata is now known: what follows reads chunks
  proxy.misbehave(Fault::cut, 1);  // every answer: half its body, then the connection closes
  Failure f = failure_of([&] { read_all(a); });
  CAPTURE(f.message);
  CHECK(f.code == stowage::ErrorCode::corrupt);
  CHECK(has(f.message, url + "/raw/uint8_1d/"));
  CHECK(has(f.message, "truncated body"));
  CHECK(has(f.message, "(after 5 attempts)"));
  proxy.misbehave(Fault::none, 1);
  CHECK(read_all(a) == want);
  CHECK(want ==
        read_all(Store::open((n5_fixtures() / "zarr-written.n5").string()).array("raw/uint8_1d")));
}

TEST_CASE("n5 over http: writing is refused clearly, and nothing is written anywhere") {
  Server server;
  std::string url = server.url("zarr-written.n5");
  for (stowage::Mode mode :
       {stowage::Mode::update, stowage::Mode::create, stowage::Mode::truncate}) {
    CAPTURE(static_cast<int>(mode));
    for (const char* format : {"", "n5"}) {
      CAPTURE(format);
      Failure f = failure_of([&] { Store::open(url, mode, format); });
      CHECK(f.code == stowage::ErrorCode::unsupported);
      CHECK(has(f.message, url + ": "));
      CHECK(has(f.message, "read only"));
    }
  }
  std::string fresh = server.nginx.url("new.n5");
  Failure f = failure_of([&] { Store::open(fresh, stowage::Mode::create, "n5"); });
  CHECK(f.code == stowage::ErrorCode::unsupported);
  CHECK(has(f.message, fresh + ": "));

  // stowage-convert to a URL: refused before anything is written, here or
  // in the working directory (no "http:" folder).
  test::TempDir cwd;
  std::string to = server.nginx.url("copy.n5");
  test::RunResult r =
      test::run("cd " + test::quote(cwd.path().string()) + " && " +
                tool("stowage-convert").string() + " --quiet " +
                test::quote((n5_fixtures() / "zarr-written.n5").string()) + " " + test::quote(to));
  CHECK(r.status != 0);
  CHECK(has(r.output, to));
  CHECK(has(r.output, "read only"));
  CHECK(fs::is_empty(cwd.path()));
  CHECK_FALSE(fs::exists(server.nginx.root() / "copy.n5"));
}

TEST_CASE("n5 over http: PATH::node splits a URL after its host, which may hold '::'") {
  using P = std::pair<std::string, std::string>;
  CHECK(stowage::split_dataset_spec("http://127.0.0.1:8080/x.n5::a/b") ==
        P{"http://127.0.0.1:8080/x.n5", "a/b"});
  CHECK(stowage::split_dataset_spec("http://[::1]:8080/x.n5::a/b") ==
        P{"http://[::1]:8080/x.n5", "a/b"});
  CHECK(stowage::split_dataset_spec("https://[::1]/x.n5") == P{"https://[::1]/x.n5", ""});
  CHECK(stowage::split_dataset_spec("http://[::1]") == P{"http://[::1]", ""});
  CHECK(stowage::split_dataset_spec("a.n5::b://c") == P{"a.n5", "b://c"});
}
