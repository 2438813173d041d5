// The Daf plugin on the storage layer: it reads every fixture over HTTP
// (a private nginx) equal to the local read, writes and reads a repository
// in memory (mem://) equal to one on disk, and does no file-system I/O of its
// own (a grep of its sources).
#include "daf_test_util.hpp"

#include "../http/nginx.hpp"

#include <stowage/copy.hpp>

#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <sstream>

namespace {

using stowage::json;
using namespace daf_test;

// Everything a reader sees of a store: for every node, its description and
// its values (bytes of numeric data in C order, strings as they are).
json snapshot(const stowage::Store& store, const std::string& node = "") {
  json out;
  stowage::NodeInfo info = store.describe(node);
  json d = store.describe_json(node);
  out["describe"] = d;
  switch (info.kind) {
    case stowage::NodeKind::group:
      for (const std::string& child : store.list(node))
        out["children"][child] = snapshot(store, node.empty() ? child : node + "/" + child);
      break;
    case stowage::NodeKind::strings:
      out["strings"] = store.read_strings(node);
      break;
    case stowage::NodeKind::array: {
      std::vector<uint8_t> bytes(info.element_count() * stowage::dtype_size(info.dtype));
      if (!bytes.empty()) store.array(node).read(std::vector<uint64_t>(info.shape.size(), 0), info.shape, bytes.data());
      out["bytes"] = json::binary(bytes);
      break;
    }
    case stowage::NodeKind::sparse: {
      std::vector<uint8_t> bytes(info.element_count() * stowage::dtype_size(info.dtype));
      if (!bytes.empty()) store.sparse(node).read_dense(0, 0, info.shape[0], info.shape[1], bytes.data());
      out["bytes"] = json::binary(bytes);
      break;
    }
    default:
      throw std::runtime_error(node + ": a Daf node of unexpected kind");
  }
  return out;
}

// Leaves (properties and axes) in a snapshot, to know a comparison saw data.
size_t leaves(const json& s) {
  if (!s.contains("children")) return 1;
  size_t n = 0;
  for (const auto& [name, child] : s["children"].items()) n += leaves(child);
  return n;
}

// A fixture's snapshot, or the error code opening or reading it gives.
json snapshot_or_error(const std::string& location) {
  try {
    return snapshot(stowage::Store::open(location, stowage::Mode::read, "daf"));
  } catch (const stowage::Error& e) {
    return {{"error", stowage::error_code_name(e.code())}};
  }
}

std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(fixtures_dir()))
    if (e.is_directory() && fs::exists(e.path() / "daf.json")) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST_CASE("daf over http: every fixture, detected and read through the C++ API, equals the local read") {
  test::Nginx nginx;
  fs::copy(fixtures_dir(), nginx.root() / "daf", fs::copy_options::recursive);
  std::vector<std::string> names = fixture_names();
  REQUIRE(names.size() >= 7);
  size_t compared = 0;
  for (const std::string& name : names) {
    CAPTURE(name);
    json local = snapshot_or_error((fixtures_dir() / name).string());
    json remote = snapshot_or_error(nginx.url("daf/" + name));
    CHECK(remote == local);
    if (!local.contains("error")) compared += leaves(local);
    // Detection reads over HTTP too (no format given).
    if (!local.contains("error"))
      CHECK(stowage::Store::open(nginx.url("daf/" + name)).format() == "daf");
  }
  CHECK(compared > 100);  // the fixtures hold well over a hundred properties and axes
  // stowage::copy with an http source: the local result equals a copy of the local fixture.
  test::TempDir tmp;
  for (const std::string name : {"julia_v10_small", "gen_v11_types", "julia_v11_packed_zstd"}) {
    CAPTURE(name);
    stowage::CopyOptions o;
    o.from = o.to = "daf";
    const fs::path from_http = tmp / (name + "-http.daf"), from_disk = tmp / (name + "-disk.daf");
    stowage::copy(nginx.url("daf/" + name), from_http.string(), o);
    stowage::copy((fixtures_dir() / name).string(), from_disk.string(), o);
    json want = snapshot_or_error(from_disk.string());
    CHECK_FALSE(want.contains("error"));
    CHECK(snapshot_or_error(from_http.string()) == want);
  }
  // A missing repository is NOT_FOUND, naming the URL as given.
  try {
    stowage::Store::open(nginx.url("daf/nothing_here"), stowage::Mode::read, "daf");
    FAIL("opened a repository that is not there");
  } catch (const stowage::Error& e) {
    CHECK(e.code() == stowage::ErrorCode::not_found);
    CHECK(std::string(e.what()).find(nginx.url("daf/nothing_here")) != std::string::npos);
  }
  // A file missing under a repository is an error naming its URL.
  const std::string donor = "daf/julia_v10_small/vectors/cell/donor.data";
  REQUIRE(fs::exists(nginx.root() / donor));
  fs::remove(nginx.root() / donor);
  stowage::Store s = stowage::Store::open(nginx.url("daf/julia_v10_small"), stowage::Mode::read, "daf");
  try {
    s.describe("vectors/cell/donor");
    FAIL("described a property whose data file is gone");
  } catch (const stowage::Error& e) {
    CHECK(e.code() == stowage::ErrorCode::corrupt);
    CHECK(std::string(e.what()).find(nginx.url(donor)) != std::string::npos);
  }
}

TEST_CASE("daf over http: writing is refused, naming the URL") {
  test::Nginx nginx;
  fs::copy(fixtures_dir() / "julia_v10_small", nginx.root() / "r.daf", fs::copy_options::recursive);
  for (stowage::Mode mode : {stowage::Mode::update, stowage::Mode::truncate}) {
    try {
      stowage::Store s = stowage::Store::open(nginx.url("r.daf"), mode, "daf");
      s.write_strings("axes/new_axis", {"a"});
      s.close();
      FAIL("wrote through a read-only storage");
    } catch (const stowage::Error& e) {
      CHECK(std::string(e.what()).find(nginx.url("r.daf")) != std::string::npos);
    }
  }
  CHECK(snapshot_or_error(nginx.url("r.daf")) == snapshot_or_error((fixtures_dir() / "julia_v10_small").string()));
}

// A repository copied from a fixture into `location` through the plugin
// (every kind of write: axes, scalars, dense, sparse, strings), then read.
json copy_fixture_to(const std::string& fixture, const std::string& location, stowage::Registry& registry) {
  stowage::Store in = stowage::Store::open((fixtures_dir() / fixture).string(), stowage::Mode::read, "daf",
                                           json::object(), registry);
  {
    stowage::Store out = stowage::Store::open(location, stowage::Mode::truncate, "daf", {{"version", {1, 1}}}, registry);
    for (const std::string& axis : in.list("axes")) out.write_strings("axes/" + axis, in.read_strings("axes/" + axis));
    json attributes = in.describe_json("")["attributes"];
    out.set_attributes("", attributes);
    auto copy_property = [&](const std::string& node) {
      stowage::NodeInfo info = in.describe(node);
      json d = in.describe_json(node);
      if (info.kind == stowage::NodeKind::strings) return out.write_strings(node, in.read_strings(node));
      std::vector<uint8_t> bytes(info.element_count() * stowage::dtype_size(info.dtype));
      if (info.kind == stowage::NodeKind::sparse) {
        if (!bytes.empty()) in.sparse(node).read_dense(0, 0, info.shape[0], info.shape[1], bytes.data());
        d = {{"kind", "array"}, {"dtype", d["dtype"]}, {"shape", d["shape"]}, {"storage", {{"daf_storage", "sparse"}}}};
      } else if (!bytes.empty()) {
        in.array(node).read(std::vector<uint64_t>(info.shape.size(), 0), info.shape, bytes.data());
      }
      out.create(node, {{"kind", "array"}, {"dtype", d["dtype"]}, {"shape", d["shape"]}, {"storage", d["storage"]}});
      if (!bytes.empty()) out.array(node).write(std::vector<uint64_t>(info.shape.size(), 0), info.shape, bytes.data());
    };
    for (const std::string& axis : in.list("vectors"))
      for (const std::string& name : in.list("vectors/" + axis)) copy_property("vectors/" + axis + "/" + name);
    for (const std::string& rows : in.list("matrices"))
      for (const std::string& cols : in.list("matrices/" + rows))
        for (const std::string& name : in.list("matrices/" + rows + "/" + cols))
          copy_property("matrices/" + rows + "/" + cols + "/" + name);
    out.close();
  }
  return snapshot(stowage::Store::open(location, stowage::Mode::read, "daf", json::object(), registry));
}

TEST_CASE("daf in memory (mem://): a repository written and read through the memory storage equals one on disk") {
  test::TempDir tmp;
  stowage::Registry& registry = stowage::Registry::global();  // its memory backend lives as long as the process
  for (const char* fixture : {"julia_v10_small", "gen_v11_types"}) {
    CAPTURE(fixture);
    json on_disk = copy_fixture_to(fixture, (tmp / (std::string(fixture) + ".daf")).string(), registry);
    json in_memory = copy_fixture_to(fixture, std::string("mem://daf-test/") + fixture + ".daf", registry);
    CHECK(leaves(on_disk) > 10);
    CHECK(in_memory == on_disk);
  }
}

// Source text with comments and string literals blanked, so a word in a
// comment or a message is no call.
std::string code_only(const std::string& text) {
  static const std::regex comments(R"(//[^\n]*|/\*[\s\S]*?\*/|"(\\.|[^"\\\n])*")");
  return std::regex_replace(text, comments, " ");
}

TEST_CASE("daf does no file-system I/O of its own: everything goes through the storage layer") {
  // Direct POSIX calls: any of them qualified as ::name(, and the ones no
  // class would name a method unqualified (a declaration such as
  // "static ssize_t pread(" is no call: a type precedes it).
  const std::regex direct(
      R"((^|\W)::\s*(open|openat|creat|read|write|close|pread|pwrite|rename|renameat2?|unlink|unlinkat|rmdir|)"
      R"(mmap|munmap|mkdir|mkdirat|opendir|readdir|ftruncate|truncate|fsync|flock|stat|lstat|fstat|fopen)\s*\(|)"
      R"((^|[^\w.>:*&\s])\s*(openat|creat|pread|pwrite|renameat2?|unlink|unlinkat|rmdir|mmap|munmap|mkdir|mkdirat|)"
      R"(opendir|readdir|ftruncate|fsync|flock|fopen)\s*\()");
  // Headers that bring them, C++ file streams and std::filesystem, and
  // plugin_util.hpp's file helpers.
  const std::regex forbidden(
      R"(std::filesystem|[io]?fstream|<filesystem>|<fcntl\.h>|<unistd\.h>|<dirent\.h>|<sys/mman\.h>|<sys/stat\.h>|)"
      R"(sdk::(File|read_file|write_file_atomic|create_temporary\w*|replace_atomically|make_directories|)"
      R"(DirectoryLock|is_regular_file|is_directory|path_exists|commit_files|io_fail)\b)");
  const fs::path dir = test::source_root() / "plugins" / "formats" / "daf";
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (ext != ".cpp" && ext != ".hpp") continue;
    ++files;
    std::istringstream lines(code_only(test::read_file(e.path())));
    int n = 0;
    for (std::string line; std::getline(lines, line);) {
      ++n;
      CHECK_MESSAGE(!std::regex_search(line, direct), e.path().filename().string() << ":" << n << ": " << line);
      CHECK_MESSAGE(!std::regex_search(line, forbidden), e.path().filename().string() << ":" << n << ": " << line);
    }
  }
  CHECK(files >= 10);
}

}  // namespace
