// Format detection over HTTP reads the path once for all formats (the
// host's probe, stowage_probe): a stat, then a file's first and last bytes or
// a directory's listing, and only what a format still needs on top (N5's
// attributes.json, BPCells' version file, datadings' sidecar files). A proxy
// in front of nginx counts the requests each detection makes; a format that
// went back to probing the path on its own would add its own requests for
// every path, whatever its format, and fail here.
#include "flaky_proxy.hpp"
#include "nginx.hpp"
#include "tools.hpp"

#include <stowage/storage.hpp>
#include <stowage/stowage.hpp>

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// nginx serving every fixture folder under its own name.
struct Server {
  test::Nginx nginx;
  Server() {
    for (const char* folder : {"n5", "daf", "bpcells", "datadings", "datg"})
      fs::create_directory_symlink(fs::absolute(test::fixtures() / folder), nginx.root() / folder);
  }
};

std::string joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const std::string& line : lines) all += line + "\n";
  return all;
}

struct Case {
  const char* path;    // under the server's root
  const char* format;  // what detection must say
  int requests;        // at most
};

// The bounds, from what each format needs beyond the probe:
// - a directory: stat (2 HEADs: nginx redirects "x" to "x/"), list (3); N5
//   reads attributes.json and BPCells its version file (+1);
// - a file: stat, header, trailer (3; 2 when the file fits in the header);
//   a datadings dataset: its commit journal and .offsets looked for (+2);
// - a directory whose listing shows no dotfile: Zarr's .zgroup and .zarray
//   asked for by name, as nginx's JSON listing hides dotfiles (+2);
// - a datg base name (x for x.datg, not itself a file): the stat that finds
//   nothing, every format's metadata file looked for under it by name, as
//   an object store's prefix reads as absent (+8: attributes.json, .zattrs,
//   .zarray, .zgroup, zarr.json, .zmetadata, version, daf.json), datadings'
//   and datg's journals looked for, then the stat and the magic of x.datg
//   (13).
// Before the probe, each format asked on its own: 14 requests for an N5
// container, most of them the same stat again.
const Case kCases[] = {
    {"n5/java-style.n5", "n5", 6},
    {"n5/java-style.n5/raw/uint8_2d", "n5", 6},
    {"daf/julia_v11_small", "daf", 5},
    {"bpcells/double_unpacked_col", "bpcells", 6},
    {"datadings/basic.msgpack", "datadings", 5},
    {"datg/basic_4x5.datg", "datg", 3},
    {"datg/basic_4x5", "datg", 13},
};

}  // namespace

TEST_CASE("detection over http: the path is read once for all formats, a few requests each") {
  Server server;
  test::FlakyProxy proxy(server.nginx.port());
  stowage::Registry& registry = stowage::Registry::global();
  for (const Case& c : kCases) {
    CAPTURE(c.path);
    const std::string url = proxy.url(c.path);
    proxy.take_request_lines();
    CHECK(registry.detect_format(url) == c.format);
    const std::vector<std::string> lines = proxy.take_request_lines();
    INFO("requests:\n" << joined(lines));
    CHECK(static_cast<int>(lines.size()) <= c.requests);
    CHECK(!lines.empty());  // it did go to the server
  }
}

TEST_CASE("detection over http: a path no format claims is one clear error, in a few requests") {
  Server server;
  test::FlakyProxy proxy(server.nginx.port());
  stowage::Registry& registry = stowage::Registry::global();
  const std::string url = proxy.url("datg/README.md");  // a file, but none of ours
  proxy.take_request_lines();
  try {
    registry.detect_format(url);
    FAIL("detected a format in a README");
  } catch (const stowage::Error& e) {
    CHECK(std::string(e.what()).find(url) != std::string::npos);
    CHECK(std::string(e.what()).find("no format plugin recognises it") != std::string::npos);
  }
  const std::vector<std::string> lines = proxy.take_request_lines();
  INFO("requests:\n" << joined(lines));
  CHECK(static_cast<int>(lines.size()) <= 4);  // stat, header, trailer; the error's own stat
}

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// What Store::open and stowage-info say for a path whose format cannot be
// detected; both must give the same message.
void check_undetectable(const std::string& url, stowage::ErrorCode code, const std::string& reason,
                        stowage::Registry& registry = stowage::Registry::global()) {
  CAPTURE(url);
  test::Failure f = test::failure_of([&] { registry.detect_format(url); });
  CHECK(f.code == code);
  CHECK(f.message == url + ": cannot detect its format: " + reason);
  test::Failure opened =
      test::failure_of([&] { stowage::Store::open(url, stowage::Mode::read, "", {}, registry); });
  CHECK(opened.code == code);
  CHECK(opened.message == f.message);
}

}  // namespace

TEST_CASE(
    "detection over http: a server that fails is the error, with the URL and the server's reason") {
  Server server;
  const std::string error500 = server.nginx.url("status500/x.n5");
  check_undetectable(error500, stowage::ErrorCode::io,
                     "HTTP 500 Internal Server Error (after 5 attempts)");
  const std::string login = server.nginx.url("status401/x.n5");
  check_undetectable(login, stowage::ErrorCode::io,
                     "HTTP 401 Unauthorized (the server wants credentials)");
  const std::string forbidden = server.nginx.url("forbidden/x.n5");
  check_undetectable(forbidden, stowage::ErrorCode::io,
                     "HTTP 403 Forbidden (the server refuses to serve it)");
  const int port = test::free_port();
  const std::string refused = "http://127.0.0.1:" + std::to_string(port) + "/x.n5";
  test::Failure f = test::failure_of([&] { stowage::Registry::global().detect_format(refused); });
  CHECK(f.code == stowage::ErrorCode::io);
  CHECK(has(f.message, refused +
                           ": cannot detect its format: Failed to connect to 127.0.0.1 port " +
                           std::to_string(port)));
  CHECK(has(f.message, "(Connection refused) (after 5 attempts)"));

  // The same through stowage-info (exit 1, the message on standard error).
  for (const std::string& url : {error500, login, refused}) {
    test::RunResult r = test::run(test::tool("stowage-info").string() + " " + test::quote(url));
    CHECK(r.status == 1);
    CHECK(r.output.rfind("stowage-info: " + url + ": cannot detect its format: ", 0) == 0);
  }
}

TEST_CASE(
    "detection over http: a directory the server will not list says so beside \"no format\"") {
  Server server;
  const std::string url =
      server.nginx.url("forbidden/");  // nginx: 403, as for a directory without autoindex
  test::Failure f = test::failure_of([&] { stowage::Registry::global().detect_format(url); });
  CHECK(f.code == stowage::ErrorCode::unsupported);
  CHECK(f.message.rfind(url + ": no format plugin recognises it (tried: ", 0) == 0);
  CHECK(has(f.message, "); listing it failed: " + url +
                           ": HTTP 403 Forbidden (the server refuses to serve it); "
                           "name the format explicitly"));
}

TEST_CASE("detection over http: a password in the URL is never shown") {
  Server server;
  const std::string typed =
      "http://someone:s3cret-pw@127.0.0.1:" + std::to_string(server.nginx.port());
  const std::string shown = "http://someone:***@127.0.0.1:" + std::to_string(server.nginx.port());
  test::Failure f = test::failure_of([&] { stowage::Store::open(typed + "/status401/x.n5"); });
  CHECK(
      f.message ==
      shown +
          "/status401/x.n5: cannot detect its format: HTTP 401 Unauthorized (the server wants credentials)");
  f = test::failure_of([&] { stowage::Store::open(typed + "/missing.n5"); });
  CHECK(f.message == shown + "/missing.n5: no such file or directory");
  f = test::failure_of(
      [&] { stowage::Store::open(typed + "/status500/x.n5", stowage::Mode::read, "n5"); });
  CHECK_FALSE(has(f.message, "s3cret"));
  CHECK(has(f.message, shown + "/status500/x.n5"));
  // The backend's own messages too, for a host that is not the core.
  auto b = stowage::Registry::global().storage(typed);
  stowage::sdk::Storage storage(b.vtable, b.handle, b.capabilities);
  try {
    storage.read(typed + "/status401/x.n5");
    FAIL("read a file behind a 401");
  } catch (const stowage::sdk::Error& e) {
    CHECK(std::string(e.what()) ==
          shown + "/status401/x.n5: HTTP 401 Unauthorized (the server wants credentials)");
  }
  test::RunResult r =
      test::run(test::tool("stowage-info").string() + " " + test::quote(typed + "/status500/x.n5"));
  CHECK(r.status == 1);
  CHECK_FALSE(has(r.output, "s3cret"));
  CHECK(has(r.output, shown + "/status500/x.n5: cannot detect its format: HTTP 500"));
}

TEST_CASE(
    "detection over http: a stalled server and a cut body say so (STOWAGE_HTTP_OPTIONS sets the timeout)") {
  Server server;
  test::FlakyProxy proxy(server.nginx.port());
  test::TempDir dir;
  // An .npy file: detection reads its first bytes, which the proxy cuts.
  std::string npy("\x93NUMPY\x01\x00\x76\x00", 10);
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (1000,), }";
  header.resize(117, ' ');
  npy += header + "\n" + std::string(8000, '\0');
  test::write_file(server.nginx.root() / "a.npy", npy);
  ::setenv("STOWAGE_HTTP_OPTIONS", R"({"timeout_ms": 300, "retries": 1, "retry_delay_ms": 1})", 1);
  const std::string url = proxy.url("a.npy");
  stowage::Registry registry;
  registry.storage(url);  // its http backend, opened now, reads the variable
  ::unsetenv("STOWAGE_HTTP_OPTIONS");
  CHECK(registry.detect_format(url) == "npy");

  proxy.misbehave(test::FlakyProxy::Fault::cut, 1);
  check_undetectable(
      url, stowage::ErrorCode::corrupt,
      "truncated body: the connection closed before the body ended (512 of 1024 bytes) (after 2 attempts)",
      registry);

  proxy.misbehave(test::FlakyProxy::Fault::stall, 1);
  test::Failure f = test::failure_of([&] { registry.detect_format(url); });
  CHECK(f.code == stowage::ErrorCode::io);
  CHECK(has(f.message, url + ": cannot detect its format: "));
  CHECK(has(f.message,
            "timed out after"));  // libcurl: "Operation timed out after 301 milliseconds ..."
  const std::string info = "STOWAGE_HTTP_OPTIONS='{\"timeout_ms\": 300, \"retries\": 1}' " +
                           test::tool("stowage-info").string() + " " + test::quote(url);
  test::RunResult r = test::run(info);
  CHECK(r.status == 1);
  CHECK(has(r.output, "stowage-info: " + url + ": cannot detect its format: "));
  CHECK(has(r.output, "timed out after"));
  proxy.misbehave(test::FlakyProxy::Fault::none, 1);
}
