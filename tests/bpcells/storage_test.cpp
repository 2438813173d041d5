// The bpcells plugin on the storage layer: BPCells' own directories copied
// byte for byte into memory (mem://) read equal to the local read, matrices
// written into memory are the files a local write makes, and the plugin does
// no file-system I/O of its own (a grep of its sources) and keeps no
// thread_local state. Reading over HTTP is in the http suite
// (tests/http/bpcells_datadings_over_http_test.cpp), which has the nginx it needs.
#include "bpcells_helpers.hpp"

#include <storage_checks.hpp>

#include <doctest/doctest.h>

using namespace bpcells_test;
using stowage::json;
using stowage::Mode;
using stowage::Store;

namespace {

// A snapshot without how the matrix is stored (packed or not).
json values_of(const std::string& location) {
  json s = snapshot(Store::open(location));
  s["describe"].erase("storage");
  return s;
}

// The files of a directory in a storage, name -> bytes (directories end in '/').
std::map<std::string, std::string> files_of(const std::string& location) {
  stowage::sdk::Storage storage = test::storage_for(location);
  std::map<std::string, std::string> out;
  for (const std::string& name : storage.list(location))
    out[name] = name.back() == '/' ? "" : std::string(storage.read(location + "/" + name).text());
  return out;
}

}  // namespace

TEST_CASE("every BPCells fixture copied into memory (mem://) reads as it does from disk") {
  auto names = fixture_names();
  REQUIRE(names.size() == 14);
  for (const std::string& name : names) {
    CAPTURE(name);
    const std::string local = (fixture_dir() / name).string(),
                      in_memory = "mem://bpcells-fixtures/" + name;
    test::copy_into_storage(fixture_dir() / name, in_memory);
    json want = snapshot(Store::open(local));
    // Read through the map locally; through ranged reads and windows locally
    // with {"mmap": false} and always in memory (it maps nothing).
    CHECK(snapshot(Store::open(local, Mode::read, "bpcells", {{"mmap", false}})) == want);
    CHECK(stowage::Registry::global().detect_format(in_memory) == "bpcells");
    Store mem = Store::open(in_memory);
    CHECK(mem.format() == "bpcells");
    CHECK(snapshot(mem) == want);
    CHECK(snapshot(Store::open(in_memory, Mode::read, "bpcells", {{"mmap", false}})) == want);
  }
}

TEST_CASE(
    "a matrix written into memory is the directory a local write makes, and reads back the same") {
  test::TempDir tmp;
  for (const char* name :
       {"uint_packed_col_multichunk", "double_unpacked_row", "float_packed_col_names"}) {
    for (bool packed : {true, false}) {
      CAPTURE(name);
      CAPTURE(packed);
      const std::string from = (fixture_dir() / name).string();
      const std::string local = (tmp / (std::string(name) + (packed ? "_p" : "_u"))).string();
      const std::string in_memory =
          std::string("mem://bpcells-written/") + name + (packed ? "_p" : "_u");
      copy_matrix(from, local, packed);
      copy_matrix(from, in_memory, packed);
      std::map<std::string, std::string> want;
      for (const std::string& file : list_files(local))
        want[file] = test::read_file(fs::path(local) / file);
      CHECK(files_of(in_memory) == want);
      CHECK(snapshot(Store::open(in_memory)) == snapshot(Store::open(local)));
      CHECK(values_of(in_memory) == values_of(from));
      // Written again over itself: the old matrix is replaced whole.
      copy_matrix(from, in_memory, !packed);
      CHECK(values_of(in_memory) == values_of(from));
      CHECK(Store::open(in_memory).describe_json("")["storage"]["packed"] == !packed);
    }
  }
}

TEST_CASE("a write into memory that never closes leaves nothing behind") {
  {
    Store out = Store::open("mem://bpcells-abandoned/m", Mode::truncate, "bpcells");
    out.create("", {{"kind", "sparse"}, {"dtype", "uint32"}, {"shape", {3, 2}}});
  }  // the destructor cannot commit an incomplete matrix
  // Not the matrix, nor its staged directory: nothing at all under the prefix.
  CHECK_FALSE(test::storage_for("mem://bpcells-abandoned").exists("mem://bpcells-abandoned/m"));
  CHECK_FALSE(test::storage_for("mem://bpcells-abandoned").exists("mem://bpcells-abandoned"));
}

TEST_CASE("bpcells does no file-system I/O of its own and keeps no thread_local state") {
  const fs::path dir = test::source_root() / "plugins" / "formats" / "bpcells";
  CHECK(test::check_no_direct_file_io(dir) >= 10);
  CHECK_FALSE(test::has_tls_segment("stowage_format_bpcells"));
}
