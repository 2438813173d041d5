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
// - a datg base name (x for x.datg, not itself a file): the stat that finds
//   nothing, datadings' and datg's journals looked for, then the stat and
//   the magic of x.datg (5).
// Before the probe, each format asked on its own: 14 requests for an N5
// container, most of them the same stat again.
const Case kCases[] = {
    {"n5/java-style.n5", "n5", 4},
    {"n5/java-style.n5/raw/uint8_2d", "n5", 4},
    {"daf/julia_v11_small", "daf", 3},
    {"bpcells/double_unpacked_col", "bpcells", 4},
    {"datadings/basic.msgpack", "datadings", 5},
    {"datg/basic_4x5.datg", "datg", 3},
    {"datg/basic_4x5", "datg", 5},
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
