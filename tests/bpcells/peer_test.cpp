// An independent peer: bpcells_peer.py, a numpy reader written from the
// format reference (docs/formats/bpcells.md), which also checks the rules
// BPCells' writer follows (minimal chunk widths, raw 32-bit chunks, padding,
// idx_offsets, starts, sorted indices, file set). It must agree with every BPCells fixture, then
// with every matrix stowage writes.
#include "bpcells_helpers.hpp"

#include <test_support.hpp>

#include <doctest/doctest.h>

using namespace bpcells_test;

namespace {

struct PeerResult {
  stowage::json report;
  std::string dense;
};

PeerResult run_peer(const std::string& dir) {
  test::TempDir tmp;
  fs::path out = tmp / "dense.bin";
  fs::path script = test::source_root() / "tests" / "bpcells" / "bpcells_peer.py";
  test::RunResult r = test::run(test::python() + " " + test::quote(script.string()) + " " +
                                test::quote(dir) + " " + test::quote(out.string()));
  REQUIRE_MESSAGE(r.status == 0, r.output);
  return {stowage::json::parse(r.output), test::read_file(out)};
}

void check_peer_agrees(const Matrix& m, const std::string& path) {
  PeerResult peer = run_peer(path);
  CHECK(peer.report["violations"] == stowage::json::array());
  CHECK(peer.report["shape"] == stowage::json({m.rows, m.cols}));
  CHECK(peer.report["storage_order"] == (m.csr ? "row" : "col"));
  CHECK(peer.report["nnz"] == m.indices.size());
  CHECK(peer.dense == dense_of(m));
}

}  // namespace

TEST_CASE("the Python peer decodes every BPCells fixture exactly (a check of the peer)") {
  for (const std::string& name : fixture_names()) {
    CAPTURE(name);
    stowage::json want = expected(name);
    PeerResult peer = run_peer((fixture_dir() / name).string());
    CHECK(peer.report["violations"] == stowage::json::array());
    CHECK(peer.report["version"] == want["version"]);
    CHECK(peer.report["row_names"] == want["row_names"]);
    CHECK(peer.report["col_names"] == want["col_names"]);
    CHECK(peer.dense == test::read_file(fixture_dir() / want["data"]["file"].get<std::string>()));
  }
}

TEST_CASE("matrices stowage writes follow BPCells' rules and decode to the source in the peer") {
  uint32_t seed = 100;
  for (std::string dtype : {"uint32", "float32", "float64", "uint64"})
    for (bool packed : {true, false})
      for (bool csr : {false, true}) {
        if (dtype == "uint64" && packed) continue;
        CAPTURE(dtype);
        CAPTURE(packed);
        CAPTURE(csr);
        test::TempDir tmp;
        Matrix m = random_matrix(dtype, 500, 40, csr, 0.1, ++seed);
        write_matrix(m, (tmp / "m").string(), packed, seed);
        check_peer_agrees(m, (tmp / "m").string());
      }
}

TEST_CASE("BPCells corner cases written by stowage pass the peer") {
  struct Case {
    const char* what;
    uint64_t rows, cols;
    bool csr;
    double density;
    bool all_ones;
  } cases[] = {
      {"1 x 1", 1, 1, false, 1.0, false},
      {"empty matrix (nnz = 0)", 20, 7, false, 0.0, false},
      {"exactly 128 non-zeros", 128, 1, false, 1.0, false},
      {"257 non-zeros (1 value in the last chunk)", 257, 1, false, 1.0, false},
      {"all-ones values (0-bit m1 chunks)", 300, 5, false, 0.5, true},
      {"row-major with a 70,000-wide index range", 3, 70000, true, 0.01, false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    test::TempDir tmp;
    Matrix m = random_matrix("uint32", c.rows, c.cols, c.csr, c.density, 77);
    if (c.all_ones)
      for (size_t k = 0; k < m.indices.size(); ++k) {
        uint32_t one = 1;
        std::memcpy(&m.values[k * 4], &one, 4);
      }
    write_matrix(m, (tmp / "m").string(), true, 3);
    check_peer_agrees(m, (tmp / "m").string());
    if (c.all_ones)
      CHECK(test::read_file(tmp / "m" / "val_data") == "UINT32v1");  // as BPCells: header only
  }
}

TEST_CASE("names written by stowage read back in the peer (UTF-8, tab, empty)") {
  test::TempDir tmp;
  std::string path = (tmp / "m").string();
  stowage::Store store = stowage::Store::open(path, stowage::Mode::truncate, "bpcells");
  store.create("", {{"kind", "sparse"}, {"dtype", "uint32"}, {"shape", {2, 3}}, {"layout", "csc"}});
  store.write_strings("row_names", {"gène α", "tab\there"});
  store.write_strings("col_names", {"", "b", "c"});
  stowage::SparseSlice s{{0, 1, 1, 2}, {1, 0}, std::vector<uint8_t>(8, 1)};
  store.sparse("").append(s, 3);
  store.close();
  PeerResult peer = run_peer(path);
  CHECK(peer.report["violations"] == stowage::json::array());
  CHECK(peer.report["row_names"] == stowage::json({"gène α", "tab\there"}));
  CHECK(peer.report["col_names"] == stowage::json({"", "b", "c"}));
}
