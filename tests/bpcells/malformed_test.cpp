// Malformed BPCells directories: each is a real fixture with one defect, and
// must fail with the right status and a message naming the faulty file.
#include "bpcells_helpers.hpp"

#include <test_support.hpp>

#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <random>

using namespace bpcells_test;

namespace {

// A writable copy of a fixture.
fs::path copy_fixture(const test::TempDir& tmp, const std::string& name) {
  fs::path dir = tmp / name;
  fs::copy(fixture_dir() / name, dir);
  for (const auto& entry : fs::directory_iterator(dir))
    fs::permissions(entry.path(), fs::perms::owner_write, fs::perm_options::add);
  return dir;
}

template <class T>
void patch(const fs::path& file, size_t element, T value) {  // element index after the 8-byte magic
  std::string bytes = test::read_file(file);
  REQUIRE(8 + (element + 1) * sizeof(T) <= bytes.size());
  std::memcpy(&bytes[8 + element * sizeof(T)], &value, sizeof(T));
  test::write_file(file, bytes);
}

template <class T>
T element(const fs::path& file, size_t i) {
  std::string bytes = test::read_file(file);
  T v;
  std::memcpy(&v, &bytes[8 + i * sizeof(T)], sizeof(T));
  return v;
}

// Opens and reads everything; must throw `code` with `file` in the message.
void expect_error(const fs::path& dir, stowage::ErrorCode code, const std::string& file) {
  try {
    stowage::Store store = stowage::Store::open(dir.string(), stowage::Mode::read, "bpcells");
    read_dense(store.sparse(""));
    for (const stowage::Dim& d : store.describe("").dims)
      if (!d.labels.empty()) store.read_strings(d.labels);
    FAIL("no error for a defect in " << file);
  } catch (const stowage::Error& e) {
    CAPTURE(e.what());
    CHECK(stowage::error_code_name(e.code()) == std::string(stowage::error_code_name(code)));
    CHECK(std::string(e.what()).find((dir / file).string()) != std::string::npos);
  }
}

struct Defect {
  const char* what;
  const char* fixture;
  const char* file;  // the file the message must name
  stowage::ErrorCode code;
  std::function<void(const fs::path& dir)> apply;
};

using stowage::ErrorCode;

const Defect kDefects[] = {
    {"garbage version", "uint_unpacked_col", "version", ErrorCode::corrupt,
     [](const fs::path& d) { test::write_file(d / "version", "hello\n"); }},
    {"two-line version", "uint_unpacked_col", "version", ErrorCode::corrupt,
     [](const fs::path& d) { test::write_file(d / "version", "unpacked-uint-matrix-v2\nx\n"); }},
    {"experimental v9999", "uint_packed_col_names", "version", ErrorCode::unsupported,
     [](const fs::path& d) { test::write_file(d / "version", "packed-uint-matrix-v9999\n"); }},
    {"fragment directory", "uint_unpacked_col", "version", ErrorCode::unsupported,
     [](const fs::path& d) { test::write_file(d / "version", "unpacked-fragments-v2\n"); }},
    {"bad storage order", "uint_unpacked_col", "storage_order", ErrorCode::corrupt,
     [](const fs::path& d) { test::write_file(d / "storage_order", "diag\n"); }},
    {"shape with 3 values", "uint_unpacked_col", "shape", ErrorCode::corrupt,
     [](const fs::path& d) {
       test::write_file(d / "shape", test::read_file(d / "shape") + std::string(4, '\1'));
     }},
    {"wrong idxptr magic", "uint_unpacked_col", "idxptr", ErrorCode::corrupt,
     [](const fs::path& d) {
       std::string b = test::read_file(d / "idxptr");
       std::memcpy(&b[0], "UINT32v1", 8);
       test::write_file(d / "idxptr", b);
     }},
    {"val type differs from the version", "double_unpacked_col", "val", ErrorCode::corrupt,
     [](const fs::path& d) {
       std::string b = test::read_file(d / "val");
       std::memcpy(&b[0], "FLOATSv1", 8);
       test::write_file(d / "val", b);
     }},
    {"big-endian file", "double_unpacked_col", "val", ErrorCode::unsupported,
     [](const fs::path& d) {
       std::string b = test::read_file(d / "val");
       std::memcpy(&b[0], "1vELBUOD", 8);
       test::write_file(d / "val", b);
     }},
    {"idxptr not monotone", "uint_unpacked_col", "idxptr", ErrorCode::corrupt,
     [](const fs::path& d) {
       patch<uint64_t>(d / "idxptr", 2, element<uint64_t>(d / "idxptr", 1) - 1);
     }},
    {"idxptr past nnz", "uint_unpacked_col", "index", ErrorCode::corrupt,
     [](const fs::path& d) {
       patch<uint64_t>(d / "idxptr", 5, element<uint64_t>(d / "idxptr", 5) + 1);
     }},
    {"idxptr far past nnz (packed)", "uint_packed_col_names", "idxptr", ErrorCode::corrupt,
     [](const fs::path& d) { patch<uint64_t>(d / "idxptr", 5, 200); }},
    {"idxptr past nnz (packed, more chunks)", "uint_packed_col_multichunk", "index_idx",
     ErrorCode::corrupt, [](const fs::path& d) { patch<uint64_t>(d / "idxptr", 3, 385); }},
    {"idxptr past nnz (packed, into the padding)", "uint_packed_col_names", "index_data",
     ErrorCode::corrupt, [](const fs::path& d) { patch<uint64_t>(d / "idxptr", 5, 20); }},
    {"index out of range", "uint_unpacked_col", "index", ErrorCode::corrupt,
     [](const fs::path& d) { patch<uint32_t>(d / "index", 3, 6); }},
    {"packed index out of range", "uint_packed_col_names", "index_data", ErrorCode::corrupt,
     [](const fs::path& d) { patch<uint32_t>(d / "index_starts", 0, 1000000); }},
    {"BP-128 width not a multiple of 4 words", "uint_packed_col_names", "index_idx",
     ErrorCode::corrupt,
     [](const fs::path& d) {
       patch<uint32_t>(d / "index_idx", 1, element<uint32_t>(d / "index_idx", 1) + 1);
     }},
    {"BP-128 chunk wider than 32 bits", "uint_packed_col_names", "val_idx", ErrorCode::corrupt,
     [](const fs::path& d) { patch<uint32_t>(d / "val_idx", 1, 132); }},
    {"idx_offsets not ending at the idx length", "uint_packed_col_names", "index_idx_offsets",
     ErrorCode::corrupt, [](const fs::path& d) { patch<uint64_t>(d / "index_idx_offsets", 1, 7); }},
    {"BP-128 data truncated", "uint_packed_col_multichunk", "val_data", ErrorCode::corrupt,
     [](const fs::path& d) {
       std::string b = test::read_file(d / "val_data");
       test::write_file(d / "val_data", b.substr(0, b.size() - 16));
     }},
    {"starts too short", "float_packed_col_names", "index_starts", ErrorCode::corrupt,
     [](const fs::path& d) { test::write_file(d / "index_starts", "UINT32v1"); }},
    {"row names count mismatch", "uint_packed_col_names", "row_names", ErrorCode::corrupt,
     [](const fs::path& d) {
       test::write_file(d / "row_names", test::read_file(d / "row_names") + "extra\n");
     }},
    {"col names count mismatch (CRLF)", "legacy_crlf_packed_double", "col_names",
     ErrorCode::corrupt,
     [](const fs::path& d) { test::write_file(d / "col_names", "a\r\nb\r\n"); }},
    {"truncated header", "float_unpacked_col", "val", ErrorCode::corrupt,
     [](const fs::path& d) { test::write_file(d / "val", "FLOA"); }},
    {"partial element", "float_unpacked_col", "val", ErrorCode::corrupt,
     [](const fs::path& d) { test::write_file(d / "val", test::read_file(d / "val") + "xy"); }},
    {"missing index file", "float_unpacked_col", "index", ErrorCode::not_found,
     [](const fs::path& d) { fs::remove(d / "index"); }},
    {"v1 idxptr stored as 64-bit", "v1_uint_packed_col", "idxptr", ErrorCode::corrupt,
     [](const fs::path& d) {
       std::string b = test::read_file(d / "idxptr");
       std::memcpy(&b[0], "UINT64v1", 8);
       test::write_file(d / "idxptr", b);
     }},
};

}  // namespace

TEST_CASE("malformed BPCells directories fail with the right status, naming the file") {
  for (const Defect& defect : kDefects) {
    CAPTURE(defect.what);
    test::TempDir tmp;
    fs::path dir = copy_fixture(tmp, defect.fixture);
    defect.apply(dir);
    expect_error(dir, defect.code, defect.file);
  }
}

TEST_CASE("a path that is not a BPCells directory") {
  test::TempDir tmp;
  for (auto& [id, score] : stowage::Registry::global().identify(tmp.path().string()))
    if (id == "bpcells") CHECK(score == 0);
  try {
    stowage::Store::open((tmp / "nothing").string(), stowage::Mode::read, "bpcells");
    FAIL("opened a missing directory");
  } catch (const stowage::Error& e) {
    CHECK(e.code() == stowage::ErrorCode::not_found);
  }
  test::write_file(tmp / "file", "x");
  CHECK_THROWS_AS(stowage::Store::open((tmp / "file").string(), stowage::Mode::read, "bpcells"),
                  stowage::Error);
}

// BPCells has no checksums (docs/formats/bpcells.md), so a flipped byte in
// an index, a value or a name can read as another matrix; that cannot be
// detected and is only required to be a value or a stowage::Error naming
// the matrix (never INTERNAL, never a crash). What must be refused:
//  * a truncated binary file: every array's length is fixed by the others
//    (idxptr by the shape, index and val by nnz, packed streams by their
//    idx/offsets), so a shorter file is CORRUPT -- the text files (version,
//    storage_order, row_names, col_names) are excluded, a cut in the last
//    name can still be a valid file;
//  * any change to `version`: no other string is a version we read.
TEST_CASE("random byte damage never crashes: every outcome is a value or a stowage::Error") {
  std::mt19937 rng(2024);
  int errors = 0, reads = 0, must_fail = 0;
  for (const std::string& name : fixture_names()) {
    for (int trial = 0; trial < 25; ++trial) {
      CAPTURE(name);
      test::TempDir tmp;
      fs::path dir = copy_fixture(tmp, name);
      std::vector<std::string> files = list_files(dir);
      const std::string file = files[rng() % files.size()];
      fs::path victim = dir / file;
      std::string bytes = test::read_file(victim);
      if (bytes.empty()) continue;
      for (int flips = 1 + rng() % 3; flips > 0; --flips)
        bytes[rng() % bytes.size()] ^= char(1 + rng() % 255);
      const bool truncated = rng() % 4 == 0;
      if (truncated) bytes.resize(rng() % bytes.size());  // and sometimes truncate
      test::write_file(victim, bytes);
      const bool text = file == "version" || file == "storage_order" || file == "row_names" ||
                        file == "col_names";
      const bool refused = (truncated && !text) || file == "version";
      CAPTURE(file);
      CAPTURE(truncated);
      must_fail += refused;
      try {
        stowage::Store store = stowage::Store::open(dir.string(), stowage::Mode::read, "bpcells");
        stowage::Sparse m = store.sparse("");  // sparse, not dense: a damaged shape may be huge
        m.read(0, m.majors());
        ++reads;
        CHECK_MESSAGE(!refused, "a damaged copy that must be refused was read");
      } catch (const stowage::Error& e) {
        ++errors;
        CHECK(e.code() != stowage::ErrorCode::internal);
        if (truncated && !text) CHECK_MESSAGE(e.code() == stowage::ErrorCode::corrupt, e.what());
        CHECK(std::string(e.what()).find(dir.string()) != std::string::npos);  // names the matrix
      }
    }
  }
  CHECK(must_fail > 10);
  CHECK(errors >= must_fail);
  MESSAGE(errors << " damaged copies refused (" << must_fail << " had to be), " << reads
                 << " read (damage inside values or names)");
}
