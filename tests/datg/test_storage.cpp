// datg on the storage layer: every fixture read from memory (mem://, a
// backend that cannot map, so blocks come by ranged reads) equals the read
// from disk (the file backend's map); a dataset written into memory is byte
// for byte the one written to disk; the plugin does no file-system I/O of its
// own and keeps no thread-local state. Reading over HTTP is in tests/http.
#include "datg_helpers.hpp"
#include "storage_checks.hpp"

using namespace datgtest;

namespace {

// A dataset as the API shows it: description, every value, the names.
struct Snapshot {
  json description;
  std::string values;           // the whole matrix, row by row
  std::string rows_one_by_one;  // the same, one row per read (a block each)
  std::vector<std::string> rows, cols;
  bool operator==(const Snapshot& o) const {
    return description == o.description && values == o.values &&
           rows_one_by_one == o.rows_one_by_one && rows == o.rows && cols == o.cols;
  }
};

Snapshot snapshot(const stowage::Store& store) {
  Snapshot s;
  s.description = store.describe_json("");
  stowage::Array a = store.array("");
  const std::vector<uint64_t> shape = a.shape();
  s.values.assign(shape[0] * shape[1] * 8, '\0');
  if (!s.values.empty()) a.read({0, 0}, shape, s.values.data());
  // Last row first, so no block is the one cached before.
  std::string row(shape[1] * 8, '\0');
  s.rows_one_by_one.assign(s.values.size(), '\0');
  for (uint64_t r = shape[0]; r-- > 0;) {
    if (row.empty()) break;
    a.read({r, 0}, {1, shape[1]}, row.data());
    s.rows_one_by_one.replace(r * row.size(), row.size(), row);
  }
  s.rows = store.read_strings("rows");
  s.cols = store.read_strings("cols");
  return s;
}

const char* const kFiles[] = {".datg", ".rows.txt.gz", ".cols.txt.gz"};

}  // namespace

TEST_CASE(
    "datg in memory (mem://): every fixture reads equal to the file on disk, and is detected") {
  const std::vector<std::string> names = fixture_names();
  REQUIRE(names.size() >= 8);
  for (const std::string& name : names) {
    CAPTURE(name);
    const std::string base = "mem://datg-storage-test/fixtures/" + name;
    for (const char* ext : kFiles) test::copy_into_storage(fixture(name + ext), base + ext);
    const Snapshot local = snapshot(
        stowage::Store::open(fixture(name + ".datg").string(), stowage::Mode::read, "datg"));
    stowage::Store remote =
        stowage::Store::open(base + ".datg");  // identified through the storage layer
    CHECK(remote.format() == "datg");
    const Snapshot in_memory = snapshot(remote);
    CHECK(in_memory == local);
    // And the values the fixture set holds (little-endian doubles).
    const std::vector<uint64_t> expected = read_le_bits(fixture(name + ".expected.bin"));
    std::vector<uint64_t> got(in_memory.values.size() / 8);
    if (!got.empty()) std::memcpy(got.data(), in_memory.values.data(), in_memory.values.size());
    CHECK(got == expected);
    // By base name too.
    CHECK(snapshot(stowage::Store::open(base, stowage::Mode::read, "datg")) == local);
  }
}

TEST_CASE(
    "datg in memory (mem://): a missing name file or a truncated matrix is a clear error naming the key") {
  const std::string base = "mem://datg-storage-test/broken/basic_4x5";
  test::copy_into_storage(fixture("basic_4x5.datg"), base + ".datg");
  test::copy_into_storage(fixture("basic_4x5.rows.txt.gz"), base + ".rows.txt.gz");
  try {
    stowage::Store::open(base + ".datg", stowage::Mode::read, "datg");
    FAIL("opened without its column names");
  } catch (const stowage::Error& e) {
    CHECK(e.code() == stowage::ErrorCode::not_found);
    CHECK(std::string(e.what()).find(base + ".cols.txt.gz: the datg column name file is missing") !=
          std::string::npos);
  }
  test::copy_into_storage(fixture("basic_4x5.cols.txt.gz"), base + ".cols.txt.gz");
  const std::string bytes = test::read_file(fixture("basic_4x5.datg"));
  test::storage_for(base).write(base + ".datg", bytes.substr(0, bytes.size() - 1));
  try {
    stowage::Store::open(base + ".datg", stowage::Mode::read, "datg");
    FAIL("opened a matrix cut short");
  } catch (const stowage::Error& e) {
    CHECK(e.code() == stowage::ErrorCode::corrupt);
    CHECK(std::string(e.what()).find(base + ".datg") != std::string::npos);
  }
}

namespace {

// Writes a 37 x 5 matrix (blocks of 20 rows) with blocks out of order, one
// rewritten after it reached the file and a cap on pending bytes that spills
// (so the writer reads back and compacts its staged file), at a fixed
// creation time so two writes are byte-equal.
void write_dataset(const std::string& path) {
  const uint64_t rows = 37, cols = 5;
  stowage::Store store =
      stowage::Store::open(path, stowage::Mode::truncate, "datg", {{"max_pending_bytes", 64}});
  store.create("", {{"kind", "array"},
                    {"dtype", "float64"},
                    {"shape", {rows, cols}},
                    {"chunks", {20, cols}},
                    {"attributes",
                     {{"dataset_name", "in memory"},
                      {"row_entity", "genes"},
                      {"column_entity", "samples"},
                      {"created_epoch_seconds", 1700000000}}}});
  std::vector<std::string> row_names, col_names;
  for (uint64_t r = 0; r < rows; ++r) row_names.push_back("g" + std::to_string(r));
  for (uint64_t c = 0; c < cols; ++c) col_names.push_back("s" + std::to_string(c));
  store.write_strings("rows", row_names);
  store.write_strings("cols", col_names);
  std::vector<double> values(rows * cols);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.25 * static_cast<double>(i) - 3;
  stowage::Array a = store.array("");
  a.write({20, 0}, {17, cols}, values.data() + 20 * cols);  // the second block first
  a.write({0, 0}, {20, cols}, values.data());
  values[3] = 42;
  a.write({0, 0}, {1, cols},
          values.data());  // a row of block 0 again: read, changed, appended anew
  store.close();
}

}  // namespace

TEST_CASE(
    "datg in memory (mem://): a dataset written into memory is byte for byte the one written to disk") {
  test::TempDir tmp;
  const std::string disk = (tmp / "m").string(), memory = "mem://datg-storage-test/written/m";
  write_dataset(disk + ".datg");
  write_dataset(memory + ".datg");
  for (const char* ext : {".datg", ".rows.txt.gz", ".cols.txt.gz", ".sha256"}) {
    CAPTURE(ext);
    const std::string on_disk = test::read_file(disk + ext);
    CHECK(on_disk.size() > 20);
    CHECK(test::read_from_storage(memory + ext) == on_disk);
  }
  // Nothing else was left beside them (no staged file, no journal).
  CHECK(test::storage_for(memory).list("mem://datg-storage-test/written") ==
        std::vector<std::string>{"m.cols.txt.gz", "m.datg", "m.rows.txt.gz", "m.sha256"});
  const Snapshot a = snapshot(stowage::Store::open(disk + ".datg", stowage::Mode::read, "datg"));
  const Snapshot b = snapshot(stowage::Store::open(memory + ".datg", stowage::Mode::read, "datg"));
  CHECK(a == b);
  double v;
  std::memcpy(&v, a.values.data() + 3 * 8, 8);
  CHECK(v == 42);
  std::memcpy(&v, a.values.data() + 36 * 5 * 8 + 4 * 8, 8);
  CHECK(v == 0.25 * (36 * 5 + 4) - 3);
}

TEST_CASE("datg does no file-system I/O of its own and keeps no thread-local state") {
  CHECK(test::check_no_direct_file_io(test::source_root() / "plugins" / "formats" / "datg") >= 10);
  CHECK_FALSE(test::has_tls_segment("stowage_format_datg"));
}
