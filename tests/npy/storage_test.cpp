// npy on the storage layer: every file numpy writes reads from memory
// (mem://) to numpy's values and is detected there; an array written and
// updated in memory is byte for byte the one written and updated on disk,
// and the old bytes stay until close(); the plugin does no file-system I/O of
// its own and keeps no thread-local state. Reading over HTTP is in tests/http.
#include "npy_helpers.hpp"
#include "storage_checks.hpp"

using npytest::read_bytes;
using npytest::run_peer;

TEST_CASE(
    "npy in memory (mem://): every array numpy writes reads to numpy's values, and is detected") {
  test::TempDir dir;
  run_peer("write", dir.path());
  const stowage::json manifest = test::read_json(dir / "manifest.json");
  REQUIRE(manifest.size() > 200);
  for (const auto& entry : manifest) {
    const std::string name = entry["name"];
    CAPTURE(name);
    const std::string key = "mem://npy-storage-test/numpy/" + name + ".npy";
    test::copy_into_storage(dir / (name + ".npy"), key);
    const std::string expected = test::read_file(dir / (name + ".raw"));
    for (uint64_t chunk_bytes : {uint64_t{4} << 20, uint64_t{24}}) {
      stowage::Store store =
          stowage::Store::open(key, stowage::Mode::read, "", {{"chunk_bytes", chunk_bytes}});
      CHECK(store.format() == "npy");
      stowage::Array a = store.array("");
      CHECK(a.shape() == entry["shape"].get<std::vector<uint64_t>>());
      CHECK(read_bytes(a) == expected);
    }
  }
}

namespace {

// A 3-D int32 array written in slabs of 24 bytes (many chunks, so writes at
// many offsets of the staged file), then two rows patched in update mode.
// Returns what the location held just before the update's close().
std::string write_then_update(const std::string& path) {
  const std::vector<uint64_t> shape{6, 5, 3};
  std::vector<int32_t> values(6 * 5 * 3);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int32_t>(i * 7) - 100;
  {
    stowage::Store store =
        stowage::Store::open(path, stowage::Mode::truncate, "npy", {{"chunk_bytes", 24}});
    store.create("", {{"kind", "array"}, {"dtype", "int32"}, {"shape", shape}});
    stowage::Array a = store.array("");
    a.write({3, 0, 0}, {3, 5, 3}, values.data() + 3 * 15);  // the second half first
    a.write({0, 0, 0}, {3, 5, 3}, values.data());
    store.close();
  }
  stowage::Store store =
      stowage::Store::open(path, stowage::Mode::update, "npy", {{"chunk_bytes", 24}});
  stowage::Array a = store.array("");
  std::vector<int32_t> patch(2 * 5 * 3, 9999);
  a.write({2, 0, 0}, {2, 5, 3}, patch.data());
  // The store reads back what it holds staged.
  std::vector<int32_t> row(15);
  a.read({3, 0, 0}, {1, 5, 3}, row.data());
  CHECK(row == std::vector<int32_t>(15, 9999));
  const std::string before_close = test::read_from_storage(path);
  store.close();
  return before_close;
}

}  // namespace

TEST_CASE(
    "npy in memory (mem://): an array written and updated in memory is byte for byte the one on disk") {
  test::TempDir tmp;
  const std::string disk = (tmp / "a.npy").string(),
                    memory = "mem://npy-storage-test/written/a.npy";
  const std::string disk_before = write_then_update(disk);
  const std::string memory_before = write_then_update(memory);
  const std::string on_disk = test::read_file(disk);
  CHECK(test::read_from_storage(memory) == on_disk);
  // Until close() the location held the array as first written.
  CHECK(memory_before == disk_before);
  CHECK(disk_before != on_disk);
  CHECK(disk_before.size() == on_disk.size());
  // Nothing else was left beside it.
  CHECK(test::storage_for(memory).list("mem://npy-storage-test/written") ==
        std::vector<std::string>{"a.npy"});
  // numpy agrees with what was written.
  test::RunResult r = test::run_python(
      "import numpy as np, sys\na = np.load(sys.argv[1])\nb = (np.arange(90, dtype='<i4') * 7 - 100).reshape(6, 5, 3)\n"
      "b[2:4] = 9999\nassert a.dtype == np.dtype('<i4') and (a == b).all(), a\nprint('same')\n",
      test::quote(disk));
  INFO(r.output);
  CHECK(r.status == 0);
}

TEST_CASE("npy in memory (mem://): a file cut short is a clear error naming the key") {
  const std::string key = "mem://npy-storage-test/broken/cut.npy";
  const std::string good = "mem://npy-storage-test/broken/good.npy";
  {
    stowage::Store store = stowage::Store::open(good, stowage::Mode::truncate, "npy");
    store.create("", {{"kind", "array"}, {"dtype", "float64"}, {"shape", {10}}});
    std::vector<double> v(10, 1.5);
    store.array("").write({0}, {10}, v.data());
    store.close();
  }
  const std::string bytes = test::read_from_storage(good);
  test::storage_for(key).write(key, bytes.substr(0, bytes.size() - 8));
  try {
    stowage::Store::open(key, stowage::Mode::read, "npy");
    FAIL("opened a file cut short");
  } catch (const stowage::Error& e) {
    CHECK(e.code() == stowage::ErrorCode::corrupt);
    CHECK(std::string(e.what()).find(key + ": file is truncated") != std::string::npos);
  }
}

TEST_CASE("npy does no file-system I/O of its own and keeps no thread-local state") {
  CHECK(test::check_no_direct_file_io(test::source_root() / "plugins" / "formats" / "npy") >= 5);
  CHECK_FALSE(test::has_tls_segment("stowage_format_npy"));
}
