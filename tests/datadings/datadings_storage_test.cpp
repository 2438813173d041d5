// The datadings plugin on the storage layer: the fixtures copied byte for
// byte into memory (mem://) read equal to the local read, datasets written
// into memory are the files a local write makes, and the plugin (with its
// public msgpack_sample.hpp) does no file-system I/O of its own and keeps no
// thread_local state. Reading over HTTP is in the http suite
// (tests/http/bpcells_datadings_over_http_test.cpp).
#include "datadings_snapshot.hpp"

#include <storage_checks.hpp>

#include <doctest/doctest.h>

#include <map>

namespace {

using stowage::json;
using stowage::Mode;
using stowage::Store;
namespace fs = std::filesystem;

const char* const kFixtures[] = {"basic", "dtypes", "exotic", "legacy", "many"};

fs::path fixture_dir() { return test::fixtures() / "datadings"; }

// A fixture's own files (not the .expected.* ones beside them).
bool is_dataset_file(const std::string& name, const std::string& file) {
  return file.rfind(name + ".msgpack", 0) == 0 && file.find(".expected.") == std::string::npos;
}

// Writes the samples of `from` as a new dataset at `to`, in batches of 3.
void rewrite(const std::string& from, const std::string& to) {
  Store in = Store::open(from);
  Store out = Store::open(to, Mode::truncate, "datadings");
  out.create("", {{"kind", "records"}});
  std::vector<std::string> batch;
  stowage::Records r = in.records(), w = out.records();
  for (uint64_t i = 0; i < r.size(); ++i) {
    batch.push_back(r.read(i));
    if (batch.size() == 3 || i + 1 == r.size()) w.append(batch), batch.clear();
  }
  out.close();
}

}  // namespace

TEST_CASE("every datadings fixture copied into memory (mem://) reads as it does from disk") {
  for (const std::string name : kFixtures) {
    CAPTURE(name);
    const std::string local = (fixture_dir() / (name + ".msgpack")).string();
    const std::string in_memory = "mem://datadings-fixtures/" + name + ".msgpack";
    test::copy_into_storage(fixture_dir(), "mem://datadings-fixtures",
                            [&](const std::string& file) { return is_dataset_file(name, file); });
    json want = dd_test::records_snapshot(Store::open(local));
    CHECK(want["samples"].size() > 2);
    CHECK(want["has_md5"] == true);
    // From the map locally; with ranged reads locally with {"mmap": false}
    // and always in memory (it maps nothing).
    CHECK(dd_test::records_snapshot(
              Store::open(local, Mode::read, "datadings", {{"mmap", false}})) == want);
    CHECK(stowage::Registry::global().detect_format(in_memory) == "datadings");
    Store mem = Store::open(in_memory);
    CHECK(mem.format() == "datadings");
    CHECK(dd_test::records_snapshot(mem) == want);
    CHECK(dd_test::records_snapshot(
              Store::open(in_memory, Mode::read, "datadings", {{"mmap", false}})) == want);
  }
}

TEST_CASE(
    "a dataset written into memory is the files a local write makes, and reads back the same") {
  test::TempDir tmp;
  stowage::sdk::Storage memory = test::storage_for("mem://datadings-written");
  for (const std::string name : kFixtures) {
    CAPTURE(name);
    const std::string from = (fixture_dir() / (name + ".msgpack")).string();
    const std::string local = (tmp / (name + ".msgpack")).string();
    const std::string in_memory = "mem://datadings-written/" + name + ".msgpack";
    rewrite(from, local);
    rewrite(from, in_memory);
    std::map<std::string, std::string> want, got;
    for (const auto& e : fs::directory_iterator(tmp.path()))
      if (is_dataset_file(name, e.path().filename().string()))
        want[e.path().filename().string()] = test::read_file(e.path());
    for (const std::string& file : memory.list("mem://datadings-written"))
      if (is_dataset_file(name, file))
        got[file] = std::string(memory.read("mem://datadings-written/" + file).text());
    CHECK(want.size() == 6);  // data, offsets, keys, key_hashes, filter, md5
    CHECK(got == want);
    json s = dd_test::records_snapshot(Store::open(in_memory));
    CHECK(s == dd_test::records_snapshot(Store::open(local)));
    CHECK(s["verify"]["ok"] == true);
    CHECK(s["samples"] == dd_test::records_snapshot(Store::open(from))["samples"]);
  }
}

TEST_CASE("datadings does no file-system I/O of its own and keeps no thread_local state") {
  const fs::path dir = test::source_root() / "plugins" / "formats" / "datadings";
  CHECK(test::check_no_direct_file_io(dir) >= 9);  // msgpack_sample.hpp in include/stowage too
  CHECK_FALSE(test::has_tls_segment("stowage_format_datadings"));
}
