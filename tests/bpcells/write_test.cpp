// Writing BPCells directories: round trips for every dtype, layout and
// packing, BPCells' corner cases (explicit zeros -> raw 32-bit m1 chunks,
// 2^32-1, exact chunk multiples, empty matrices), the file set BPCells
// writes, atomic replacement, and refusal of invalid input.
#include "bpcells_helpers.hpp"

#include "bp128.hpp"

#include <test_support.hpp>

#include <doctest/doctest.h>

#include <atomic>

#include <cstring>
#include <random>
#include <thread>

using namespace bpcells_test;
namespace bp = stowage::bpcells::bp128;

namespace {

void check_reads_back(const Matrix& m, const std::string& path) {
  stowage::Store store = stowage::Store::open(path);
  stowage::NodeInfo info = store.describe("");
  CHECK(std::string(stowage::dtype_name(info.dtype)) == m.dtype);
  CHECK(info.shape == std::vector<uint64_t>{m.rows, m.cols});
  CHECK(info.csr == m.csr);
  CHECK(info.nnz == m.indices.size());
  stowage::SparseSlice s = store.sparse("").read(0, m.indptr.size() - 1);
  CHECK(s.indptr == m.indptr);
  CHECK(s.indices == m.indices);
  CHECK(s.values == m.values);
}

std::vector<std::string> files_bpcells_writes(bool packed, const std::string& dtype) {
  std::vector<std::string> f = {"col_names", "idxptr",        "row_names",
                                "shape",     "storage_order", "version"};
  if (!packed) {
    f.insert(f.end(), {"index", "val"});
  } else {
    f.insert(f.end(), {"index_data", "index_idx", "index_idx_offsets", "index_starts"});
    if (dtype == "uint32")
      f.insert(f.end(), {"val_data", "val_idx", "val_idx_offsets"});
    else
      f.push_back("val");
  }
  std::sort(f.begin(), f.end());
  return f;
}

}  // namespace

TEST_CASE("round trip for every dtype, layout and packing, with BPCells' file set") {
  uint32_t seed = 1;
  for (std::string dtype : {"uint32", "float32", "float64", "uint64"}) {
    for (bool packed : {true, false}) {
      if (dtype == "uint64" && packed) continue;  // BPCells has no packed ulong
      for (bool csr : {false, true}) {
        CAPTURE(dtype);
        CAPTURE(packed);
        CAPTURE(csr);
        test::TempDir tmp;
        std::string path = (tmp / "m").string();
        Matrix m = random_matrix(dtype, 700, 90, csr, 0.08, ++seed);
        write_matrix(m, path, packed, seed);
        check_reads_back(m, path);
        CHECK(list_files(path) == files_bpcells_writes(packed, dtype));
        std::string version = std::string(packed ? "packed-" : "unpacked-") +
                              (dtype == "uint32"    ? "uint"
                               : dtype == "float32" ? "float"
                               : dtype == "float64" ? "double"
                                                    : "ulong") +
                              "-matrix-v2\n";
        CHECK(test::read_file(fs::path(path) / "version") == version);
        CHECK(test::read_file(fs::path(path) / "storage_order") == (csr ? "row\n" : "col\n"));
        CHECK(list_files(tmp.path()) == std::vector<std::string>{"m"});  // no temporary left behind
      }
    }
  }
}

TEST_CASE("packed arrays are BPCells' BP-128 encodings of the index and values") {
  // Sizes around chunk boundaries: empty, 1, 128 exactly, 257 (1 value in the last chunk).
  for (uint64_t rows : {0, 1, 128, 257}) {
    CAPTURE(rows);
    test::TempDir tmp;
    std::string path = (tmp / "m").string();
    Matrix m = random_matrix("uint32", rows, 1, false, 1.0, uint32_t(rows));
    write_matrix(m, path, true, 5);
    check_reads_back(m, path);
    auto words = [&](const char* file) {
      std::string b = test::read_file(fs::path(path) / file);
      REQUIRE(b.substr(0, 8) == "UINT32v1");
      std::vector<uint32_t> v((b.size() - 8) / 4);
      if (!v.empty()) std::memcpy(v.data(), b.data() + 8, v.size() * 4);
      return v;
    };
    std::vector<uint32_t> vals(m.indices.size());
    if (!vals.empty()) std::memcpy(vals.data(), m.values.data(), vals.size() * 4);
    bp::Encoded index =
        bp::encode(bp::Variant::d1z, m.indices.data(), m.indices.size(), bp::Isa::scalar);
    bp::Encoded val = bp::encode(bp::Variant::m1, vals.data(), vals.size(), bp::Isa::scalar);
    CHECK(words("index_data") == index.data);
    CHECK(words("index_idx") == index.idx);
    CHECK(words("index_starts") == index.starts);
    CHECK(words("val_data") == val.data);
    CHECK(words("val_idx") == val.idx);
  }
}

TEST_CASE("names are written one per line and read back; bad names are refused") {
  test::TempDir tmp;
  std::string path = (tmp / "m").string();
  Matrix m = random_matrix("float64", 3, 2, false, 0.9, 9);
  {
    stowage::Store store = stowage::Store::open(path, stowage::Mode::truncate, "bpcells");
    store.create("",
                 {{"kind", "sparse"}, {"dtype", "float64"}, {"shape", {3, 2}}, {"layout", "csc"}});
    CHECK_THROWS_AS(store.write_strings("row_names", {"a", "b"}),
                    stowage::Error);  // count mismatch
    CHECK_THROWS_AS(store.write_strings("col_names", {"x\ny", "z"}), stowage::Error);
    CHECK_THROWS_AS(store.write_strings("other", {"a"}), stowage::Error);
    store.write_strings("row_names", {"gène α", "tab\there", ""});
    stowage::SparseSlice s{m.indptr, m.indices, m.values};
    store.sparse("").append(s, 2);
    store.close();
  }
  CHECK(test::read_file(fs::path(path) / "row_names") == "gène α\ntab\there\n\n");
  CHECK(test::read_file(fs::path(path) / "col_names").empty());
  stowage::Store back = stowage::Store::open(path);
  CHECK(back.read_strings("row_names") == std::vector<std::string>{"gène α", "tab\there", ""});
  CHECK(back.describe("").dims[1].labels.empty());
  CHECK(back.describe("").raw["storage"]["packed"] == true);  // BPCells' default
}

TEST_CASE("unsorted majors are sorted; duplicates and out-of-range indices are refused") {
  test::TempDir tmp;
  std::string path = (tmp / "m").string();
  stowage::Store store = stowage::Store::open(path, stowage::Mode::truncate, "bpcells");
  store.create("",
               {{"kind", "sparse"}, {"dtype", "uint32"}, {"shape", {10, 3}}, {"layout", "csc"}});
  stowage::Sparse out = store.sparse("");
  auto slice = [](std::vector<uint64_t> p, std::vector<uint32_t> i, std::vector<uint32_t> v) {
    stowage::SparseSlice s{std::move(p), std::move(i), {}};
    s.values.resize(v.size() * 4);
    if (!v.empty()) std::memcpy(s.values.data(), v.data(), s.values.size());
    return s;
  };
  out.append(slice({0, 3}, {7, 2, 5}, {70, 20, 50}), 1);
  CHECK_THROWS_AS(out.append(slice({0, 2}, {4, 4}, {1, 2}), 1), stowage::Error);
  CHECK_THROWS_AS(out.append(slice({0, 1}, {10}, {1}), 1), stowage::Error);
  CHECK_THROWS_AS(out.append(slice({0, 0, 0, 0}, {}, {}), 3), stowage::Error);  // too many majors
  out.append(slice({0, 1, 1}, {9}, {0}), 2);
  store.close();
  stowage::SparseSlice s = stowage::Store::open(path).sparse("").read(0, 3);
  CHECK(s.indptr == std::vector<uint64_t>{0, 3, 4, 4});
  CHECK(s.indices == std::vector<uint32_t>{2, 5, 7, 9});
  CHECK(std::vector<uint32_t>(s.values_as<uint32_t>(), s.values_as<uint32_t>() + 4) ==
        std::vector<uint32_t>{20, 50, 70, 0});
}

TEST_CASE("an unfinished write leaves nothing; a finished one replaces the old matrix") {
  test::TempDir tmp;
  std::string path = (tmp / "m").string();
  Matrix old = random_matrix("uint32", 40, 6, false, 0.3, 11);
  write_matrix(old, path, true, 1);
  {
    stowage::Store store = stowage::Store::open(path, stowage::Mode::truncate, "bpcells");
    store.create("",
                 {{"kind", "sparse"}, {"dtype", "uint32"}, {"shape", {40, 6}}, {"layout", "csc"}});
    stowage::SparseSlice s{{0, 0}, {}, {}};
    store.sparse("").append(s, 1);
    CHECK_THROWS_AS(store.close(), stowage::Error);  // 1 of 6 columns
  }
  CHECK(list_files(tmp.path()) == std::vector<std::string>{"m"});
  check_reads_back(old, path);  // the old matrix is untouched

  Matrix fresh = random_matrix("float32", 20, 30, true, 0.2, 12);
  write_matrix(fresh, path, false, 2);
  check_reads_back(fresh, path);
  CHECK(list_files(tmp.path()) == std::vector<std::string>{"m"});

  // A directory that is not a BPCells matrix is never replaced: opening it
  // with mode "w" is refused before anything is written.
  fs::create_directories(tmp / "other");
  test::write_file(tmp / "other" / "precious", "x");
  CHECK_THROWS_WITH_AS(
      stowage::Store::open((tmp / "other").string(), stowage::Mode::truncate, "bpcells"),
      doctest::Contains("other exists and is not a dataset of format bpcells"), stowage::Error);
  CHECK(fs::exists(tmp / "other" / "precious"));
}

TEST_CASE("unsupported requests say so") {
  test::TempDir tmp;
  stowage::Store store =
      stowage::Store::open((tmp / "m").string(), stowage::Mode::truncate, "bpcells");
  auto code_of = [&](const stowage::json& desc) {
    try {
      store.create("", desc);
    } catch (const stowage::Error& e) {
      return e.code();
    }
    return stowage::ErrorCode::ok;
  };
  CHECK(code_of({{"kind", "sparse"}, {"dtype", "int32"}, {"shape", {2, 2}}}) ==
        stowage::ErrorCode::unsupported);
  CHECK(code_of({{"kind", "array"}, {"dtype", "uint32"}, {"shape", {2, 2}}}) ==
        stowage::ErrorCode::unsupported);
  CHECK(code_of({{"kind", "sparse"}, {"dtype", "uint64"}, {"shape", {2, 2}}, {"packed", true}}) ==
        stowage::ErrorCode::unsupported);
  CHECK(code_of({{"kind", "sparse"}, {"dtype", "uint32"}, {"shape", {5000000000ull, 2}}}) ==
        stowage::ErrorCode::invalid_argument);
  stowage::Store fixture = stowage::Store::open((fixture_dir() / "uint_unpacked_col").string());
  CHECK_THROWS_AS(fixture.create("", {{"kind", "sparse"}, {"dtype", "uint32"}, {"shape", {1, 1}}}),
                  stowage::Error);
}

// Each concurrent read takes its own windows from the store's pool: threads
// started together, reading short runs (partial chunks at both ends, decoded
// through the window) over and over, mapped and through ranged reads.
TEST_CASE("concurrent range reads of one store agree with the source") {
  test::TempDir tmp;
  std::string path = (tmp / "m").string();
  Matrix m = random_matrix("uint32", 3000, 200, false, 0.05, 21);
  write_matrix(m, path, true, 4);
  for (bool map : {true, false}) {
    CAPTURE(map);
    stowage::Store store =
        stowage::Store::open(path, stowage::Mode::read, "bpcells", {{"mmap", map}});
    stowage::Sparse mat = store.sparse("");
    std::vector<int> mismatches(4, 0);
    std::vector<std::thread> threads;
    std::atomic<int> ready{0};
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        std::mt19937 rng(t);
        stowage::SparseSlice s;
        for (++ready; ready < 4;) std::this_thread::yield();  // all start together
        for (int i = 0; i < 4000; ++i) {
          uint64_t b = rng() % 200, e = std::min<uint64_t>(200, b + rng() % (i % 2 ? 3 : 40));
          mat.read_into(b, e, s);
          uint64_t first = m.indptr[b];
          bool same = std::equal(s.indices.begin(), s.indices.end(), m.indices.begin() + first) &&
                      std::equal(s.values.begin(), s.values.end(), m.values.begin() + first * 4);
          mismatches[t] += same ? 0 : 1;
        }
      });
    for (auto& th : threads) th.join();
    CHECK(mismatches == std::vector<int>(4, 0));
  }
}

// Reads decode from maps of the packed data or, with {"mmap": false}, through
// a window on it (128 KiB, refilled as a read runs past it; a pool of them
// owned by the store); both reuse the chunk a column ended in. These matrices
// are larger than a window, and the reads walk them forwards, backwards, in
// runs of random length and interleaved across three stores.
TEST_CASE("streamed reads, mapped and through the read windows, agree with the source") {
  test::TempDir tmp;
  std::vector<Matrix> ms;
  for (uint32_t k = 0; k < 3; ++k) {
    ms.push_back(random_matrix("uint32", 3000, 1500, false, 0.05, 30 + k));
    write_matrix(ms.back(), (tmp / ("m" + std::to_string(k))).string(), true, 5 + k);
  }
  for (bool map : {true, false}) {
    CAPTURE(map);
    std::vector<stowage::Store> stores;
    for (uint32_t k = 0; k < 3; ++k)
      stores.push_back(stowage::Store::open((tmp / ("m" + std::to_string(k))).string(),
                                            stowage::Mode::read, "bpcells", {{"mmap", map}}));
    CHECK(fs::file_size(tmp / "m0" / "index_data") > 200000);  // more than a window
    auto same = [](const Matrix& m, uint64_t b, uint64_t e, const stowage::SparseSlice& s) {
      uint64_t first = m.indptr[b], last = m.indptr[e];
      for (uint64_t j = b; j <= e; ++j)
        if (s.indptr[j - b] != m.indptr[j] - first) return false;
      return s.indices.size() == last - first &&
             std::equal(s.indices.begin(), s.indices.end(), m.indices.begin() + first) &&
             std::equal(s.values.begin(), s.values.end(), m.values.begin() + first * 4);
    };
    stowage::SparseSlice s;
    int bad_forward = 0, bad_backward = 0, bad_runs = 0, bad_interleaved = 0;
    stowage::Sparse mat = stores[0].sparse("");
    for (uint64_t c = 0; c < 1500; ++c) {
      mat.read_into(c, c + 1, s);
      bad_forward += !same(ms[0], c, c + 1, s);
    }
    for (uint64_t c = 1500; c-- > 0;) {
      mat.read_into(c, c + 1, s);
      bad_backward += !same(ms[0], c, c + 1, s);
    }
    std::mt19937 rng(3);
    for (uint64_t c = 0; c < 1500;) {
      uint64_t e = std::min<uint64_t>(1500, c + rng() % 40);
      mat.read_into(c, e, s);
      bad_runs += !same(ms[0], c, e, s);
      c = e + rng() % 3;  // sometimes skip a column or two
    }
    for (uint64_t c = 0; c < 1500; ++c)
      for (int k = 0; k < 3; ++k) {
        stores[k].sparse("").read_into(c, c + 1, s);
        bad_interleaved += !same(ms[k], c, c + 1, s);
      }
    CHECK(bad_forward == 0);
    CHECK(bad_backward == 0);
    CHECK(bad_runs == 0);
    CHECK(bad_interleaved == 0);
  }
  CHECK_THROWS_AS(
      stowage::Store::open((tmp / "m0").string(), stowage::Mode::read, "bpcells", {{"mmap", 1}}),
      stowage::Error);
}
