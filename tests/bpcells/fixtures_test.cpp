// The bpcells format plugin against matrices written by the real BPCells
// (0.3.1 and the 2023 v1 writer): every fixture reads as its expected dense
// values, names and attributes, column/row ranges read alone, and rewriting a
// fixture through stowage reproduces BPCells' files byte for byte.
#include "bpcells_helpers.hpp"

#include <test_support.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <random>

using namespace bpcells_test;

namespace {

void check_description(const stowage::Store& store, const stowage::json& want) {
  stowage::NodeInfo info = store.describe("");
  CHECK(info.kind == stowage::NodeKind::sparse);
  CHECK(std::string(stowage::dtype_name(info.dtype)) == want["dtype"].get<std::string>());
  CHECK(info.shape == want["shape"].get<std::vector<uint64_t>>());
  CHECK(info.csr == (want["storage_order"] == "row"));
  CHECK(info.nnz == want["nnz_stored"].get<uint64_t>());
  // How the matrix is stored is "storage", not a user attribute (it has none).
  CHECK(info.attributes.empty());
  CHECK(info.raw["storage"]["version"] == want["version"]);
  CHECK(info.raw["storage"]["storage_order"] == want["storage_order"]);
  CHECK(info.raw["storage"]["packed"] == want["packed"]);
  REQUIRE(info.dims.size() == 2);
  CHECK(info.dims[0].name == "rows");
  CHECK(info.dims[1].name == "cols");
  // Names: labels are null exactly when the names file is empty.
  const char* keys[] = {"row_names", "col_names"};
  for (int d = 0; d < 2; ++d) {
    CAPTURE(keys[d]);
    if (want[keys[d]].is_null()) {
      CHECK(info.dims[d].labels.empty());
    } else {
      REQUIRE(info.dims[d].labels == keys[d]);
      CHECK(store.read_strings(info.dims[d].labels) ==
            want[keys[d]].get<std::vector<std::string>>());
    }
  }
  CHECK(store.list("").empty());  // label nodes are hidden
}

// Dense matrix from reading each major alone, to check ranges decode in isolation.
std::string dense_by_single_majors(const stowage::Sparse& m) {
  const auto& info = m.info();
  size_t esize = stowage::dtype_size(info.dtype);
  uint64_t rows = info.shape[0], cols = info.shape[1];
  std::string dense(rows * cols * esize, '\0');
  for (uint64_t major = 0; major < m.majors(); ++major) {
    stowage::SparseSlice s = m.read(major, major + 1);
    REQUIRE(s.indptr.size() == 2);
    for (uint64_t k = 0; k < s.indptr[1]; ++k) {
      uint64_t r = info.csr ? major : s.indices[k], c = info.csr ? s.indices[k] : major;
      std::memcpy(&dense[(r * cols + c) * esize], s.values.data() + k * esize, esize);
    }
  }
  return dense;
}

}  // namespace

TEST_CASE("every BPCells fixture reads as its expected values, names and attributes") {
  auto names = fixture_names();
  REQUIRE(names.size() == 14);
  for (const std::string& name : names) {
    CAPTURE(name);
    stowage::json want = expected(name);
    std::string dir = (fixture_dir() / name).string();
    CHECK(stowage::Registry::global().detect_format(dir) == "bpcells");
    stowage::Store store = stowage::Store::open(dir);
    CHECK(store.format() == "bpcells");
    check_description(store, want);
    stowage::Sparse m = store.sparse("");
    std::string expected_bin =
        test::read_file(fixture_dir() / want["data"]["file"].get<std::string>());
    std::string dense = read_dense(m);
    CHECK(dense.size() == expected_bin.size());
    CHECK(dense == expected_bin);  // bit for bit, NaN payloads and -0.0 included
    CHECK(dense_by_single_majors(m) == expected_bin);
  }
}

TEST_CASE("random major ranges and dense windows of a multi-chunk fixture") {
  stowage::Store store =
      stowage::Store::open((fixture_dir() / "uint_packed_col_multichunk").string());
  stowage::Sparse m = store.sparse("");
  stowage::SparseSlice all = m.read(0, m.majors());
  std::string expected_bin =
      test::read_file(fixture_dir() / "uint_packed_col_multichunk.expected.bin");
  const uint64_t rows = m.info().shape[0], cols = m.info().shape[1];
  std::mt19937 rng(3);
  for (int trial = 0; trial < 50; ++trial) {
    uint64_t r0 = rng() % rows, c0 = rng() % cols;
    uint64_t nr = 1 + rng() % (rows - r0), nc = 1 + rng() % (cols - c0);
    std::vector<uint32_t> window(nr * nc);
    m.read_dense(r0, c0, nr, nc, window.data());
    for (uint64_t r = 0; r < nr; ++r)
      for (uint64_t c = 0; c < nc; ++c) {
        uint32_t want;
        std::memcpy(&want, &expected_bin[((r0 + r) * cols + c0 + c) * 4], 4);
        REQUIRE(window[r * nc + c] == want);
      }
  }
  // Every sub-range of majors equals the matching part of the full read.
  for (uint64_t b = 0; b <= m.majors(); ++b)
    for (uint64_t e = b; e <= m.majors(); ++e) {
      stowage::SparseSlice s = m.read(b, e);
      uint64_t first = all.indptr[b];
      for (uint64_t i = 0; i <= e - b; ++i) CHECK(s.indptr[i] == all.indptr[b + i] - first);
      CHECK(std::equal(s.indices.begin(), s.indices.end(), all.indices.begin() + first));
    }
}

TEST_CASE("rewriting each fixture through stowage gives BPCells' files byte for byte") {
  for (const std::string& name : fixture_names()) {
    CAPTURE(name);
    stowage::json want = expected(name);
    test::TempDir tmp;
    std::string out = (tmp / "copy").string();
    copy_matrix((fixture_dir() / name).string(), out, want["packed"].get<bool>());
    // The BP-128 arrays, values and shape: identical bytes, whatever version wrote them.
    for (const char* file : {"shape", "index", "val", "index_data", "index_idx", "index_starts",
                             "val_data", "val_idx"}) {
      fs::path theirs = fixture_dir() / name / file;
      CAPTURE(file);
      CHECK(fs::exists(theirs) == fs::exists(fs::path(out) / file));
      if (fs::exists(theirs))
        CHECK(test::read_file(fs::path(out) / file) == test::read_file(theirs));
    }
    bool current_writer =
        want["version"].get<std::string>().back() == '2' && name != "legacy_crlf_packed_double";
    if (current_writer) {
      // Same version as BPCells 0.3.1 writes: every file identical, none missing or extra.
      CHECK(list_files(out) == want["files"].get<std::vector<std::string>>());
      for (const std::string& file : list_files(out)) {
        CAPTURE(file);
        CHECK(test::read_file(fs::path(out) / file) ==
              test::read_file(fixture_dir() / name / file));
      }
    } else {
      // Written as v2: LF text, 64-bit idxptr, idx_offsets; reads back the same.
      std::string version = want["version"].get<std::string>();
      version.back() = '2';
      CHECK(test::read_file(fs::path(out) / "version") == version + "\n");
      stowage::Store copy = stowage::Store::open(out);
      CHECK(read_dense(copy.sparse("")) ==
            test::read_file(fixture_dir() / want["data"]["file"].get<std::string>()));
      for (const char* key : {"row_names", "col_names"})
        if (!want[key].is_null())
          CHECK(copy.read_strings(key) == want[key].get<std::vector<std::string>>());
    }
  }
}
