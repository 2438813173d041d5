// Files we write (flag 1, LZ4 frames) read back through stowage and through
// the independent Python reader, bit for bit; the writer's rules (unique
// names, column limit, no file after a failure) hold.
#include "datg_helpers.hpp"

#include <random>

using namespace datgtest;
using stowage::ErrorCode;

namespace {

// Values that must survive bit-exactly, then ordinary and repetitive ones.
std::vector<double> test_matrix(uint64_t rows, uint64_t cols, uint32_t seed) {
  const uint64_t specials[] = {0x7ff8000000000000ull, 0x7ff0000000000001ull, 0xfff8000000000000ull,
                               0x7ff8deadbeef0001ull, 0x8000000000000000ull, 0x0000000000000001ull,
                               0x000fffffffffffffull, 0x7ff0000000000000ull, 0xfff0000000000000ull,
                               0x7fefffffffffffffull, 0x0010000000000000ull};
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> m(rows * cols);
  for (size_t i = 0; i < m.size(); ++i) {
    if (i < std::size(specials))
      m[i] = from_bits(specials[i]);
    else if (i % 3 == 0)
      m[i] = 0.0;
    else
      m[i] = normal(rng);
  }
  return m;
}

std::vector<std::string> numbered(const std::string& prefix, uint64_t n) {
  std::vector<std::string> v;
  for (uint64_t i = 0; i < n; ++i) v.push_back(prefix + std::to_string(i));
  return v;
}

struct Written {
  fs::path path;
  std::vector<double> values;
  std::vector<std::string> rows, cols;
};

// Writes a matrix row by row (streaming) through the host API.
Written write_rows(const fs::path& path, uint64_t rows, uint64_t cols,
                   const json& extra = json::object(), const std::string& row_prefix = "gene_",
                   const std::string& col_prefix = "sample_") {
  Written w{path, test_matrix(rows, cols, 7), numbered(row_prefix, rows),
            numbered(col_prefix, cols)};
  stowage::Store store = stowage::Store::open(path.string(), stowage::Mode::truncate, "datg");
  json d = {{"kind", "array"},
            {"dtype", "float64"},
            {"shape", {rows, cols}},
            {"attributes",
             {{"dataset_name", "Donn\u00e9es \U0001F9EC nul:" + std::string(1, '\0') + "!"},
              {"row_entity", "genes"},
              {"column_entity", "samples"}}}};
  d.update(extra);
  store.create("", d);
  const stowage::NodeInfo info = store.describe("");
  store.write_strings(info.dims[0].labels, w.rows);
  store.write_strings(info.dims[1].labels, w.cols);
  stowage::Array a = store.array("");
  for (uint64_t r = 0; r < rows; ++r) a.write({r, 0}, {1, cols}, w.values.data() + r * cols);
  store.close();
  return w;
}

void check_round_trip(const Written& w) {
  const uint64_t rows = w.rows.size(), cols = w.cols.size();
  stowage::Store store = open_datg(w.path);
  CHECK(store.describe("").shape == std::vector<uint64_t>{rows, cols});
  CHECK(bits_of(store.array("").read_all<double>()) == bits_of(w.values));
  CHECK(store.read_strings("rows") == w.rows);
  CHECK(store.read_strings("cols") == w.cols);

  PeerRead peer = peer_read(w.path);
  CHECK(peer.bits == bits_of(w.values));
  CHECK(peer.info["flag"] == 1);
  CHECK(peer.info["row_names"] == w.rows);
  CHECK(peer.info["col_names"] == w.cols);
  CHECK(peer.info["dataset_name"] == "Donn\u00e9es \U0001F9EC nul:" + std::string(1, '\0') + "!");
  CHECK(peer.info["row_entity"] == "genes");
  CHECK(peer.info["column_entity"] == "samples");
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  CHECK(std::abs(peer.info["created"].get<int64_t>() - now) < 600);
  // The checksum file, as the reference writer makes it, verified by coreutils.
  const fs::path sums = w.path.parent_path() / (w.path.stem().string() + ".sha256");
  test::RunResult check =
      test::run("cd " + test::quote(w.path.parent_path().string()) +
                " && sha256sum --check --strict " + test::quote(sums.filename().string()));
  INFO(check.output);
  CHECK(check.status == 0);
  CHECK(test::read_file(sums).find("  " + w.path.filename().string() + "\n") != std::string::npos);
  // Blocks are in block order, the first at offset 0.
  const std::vector<int64_t> offsets = peer.info["block_offsets"];
  for (size_t b = 1; b < offsets.size(); ++b) CHECK(offsets[b] > offsets[b - 1]);
  if (!offsets.empty()) CHECK(offsets[0] == 0);
}

}  // namespace

TEST_CASE("written files round-trip through stowage and the Python reader") {
  test::TempDir dir;
  SUBCASE("default rows per block (7 columns -> 15 rows)") {
    Written w = write_rows(dir / "a.datg", 250, 7);
    CHECK(peer_read(w.path).info["rows_per_block"] == 15);
    CHECK(open_datg(w.path).describe("").chunks == std::vector<uint64_t>{15, 7});
    check_round_trip(w);
  }
  SUBCASE("wide rows (one row per block, incompressible -> stored LZ4 blocks)") {
    Written w = write_rows(dir / "wide.datg", 40, 1500);
    CHECK(peer_read(w.path).info["rows_per_block"] == 1);
    check_round_trip(w);
  }
  SUBCASE("explicit rows per block, partial last block") {
    Written w = write_rows(dir / "rpb.datg", 101, 4, {{"chunks", {10, 4}}});
    CHECK(peer_read(w.path).info["rows_per_block"] == 10);
    check_round_trip(w);
  }
  SUBCASE("the base name without .datg") {
    Written w = write_rows(dir / "base", 3, 3);
    CHECK(fs::exists(dir / "base.datg"));
    w.path = dir / "base.datg";
    check_round_trip(w);
  }
  SUBCASE("zero rows and zero columns") {
    Written none = write_rows(dir / "none.datg", 0, 5);
    check_round_trip(none);
    Written empty = write_rows(dir / "nocols.datg", 3, 0, {{"chunks", {2, 1}}});
    check_round_trip(empty);
  }
  // Only our files and no leftover temporary files.
  for (const auto& e : fs::directory_iterator(dir.path()))
    CHECK(e.path().filename().string().find("stowage-tmp") == std::string::npos);
}

// Issue 21: a non-ASCII directory and file name, and non-ASCII row and
// column names (BMP and beyond: modified UTF-8 surrogate pairs on disk), read
// back by stowage, the Python reader and sha256sum; a damaged file's error
// names it as given.
TEST_CASE("non-ASCII directory, file and names: round trip, Python reader, errors name the file") {
  test::TempDir tmp;
  const fs::path dir = tmp / "donn\u00e9es-\u03b2";
  fs::create_directories(dir);
  Written w = write_rows(dir / "\u00e9t\u00e9-\u00df.datg", 40, 6, json::object(),
                         "g\u00e8ne-\u03bc-", "\U0001F9EC-\u6f22-");
  check_round_trip(w);
  CHECK(fs::exists(dir / "\u00e9t\u00e9-\u00df.rows.txt.gz"));
  const std::string bytes = test::read_file(w.path);
  test::write_file(w.path, bytes.substr(0, bytes.size() - 10));
  try {
    open_datg(w.path).array("").read_all<double>();
    FAIL("a truncated file opened");
  } catch (const stowage::Error& e) {
    CHECK(e.code() == ErrorCode::corrupt);
    CHECK_MESSAGE(std::string(e.what()).find(w.path.string()) != std::string::npos, e.what());
  }
}

TEST_CASE("blocks written out of order, and rewritten after later rows, end up in block order") {
  test::TempDir dir;
  const uint64_t rows = 60, cols = 9;  // default rows per block: 12 -> 5 blocks
  const std::vector<double> m = test_matrix(rows, cols, 11);
  const fs::path p = dir / "order.datg";
  stowage::Store store = stowage::Store::open(p.string(), stowage::Mode::truncate, "datg");
  store.create("", {{"dtype", "float64"}, {"shape", {rows, cols}}});
  stowage::Array a = store.array("");
  // Rows in reverse, one at a time: every block is rewritten row by row.
  for (uint64_t r = rows; r-- > 30;) a.write({r, 0}, {1, cols}, m.data() + r * cols);
  // Then column slabs over the rest: every block written, then rewritten.
  std::vector<double> slab(30 * 3);
  for (uint64_t c0 = 0; c0 < cols; c0 += 3) {
    for (uint64_t r = 0; r < 30; ++r)
      for (uint64_t c = 0; c < 3; ++c) slab[r * 3 + c] = m[r * cols + c0 + c];
    a.write({0, c0}, {30, 3}, slab.data());
  }
  // Reading while writing sees what was written.
  std::vector<double> row(cols);
  a.read({31, 0}, {1, cols}, row.data());
  CHECK(bits_of(row) == bits_of(std::vector<double>(m.begin() + 31 * cols, m.begin() + 32 * cols)));
  store.close();

  PeerRead peer = peer_read(p);
  CHECK(peer.bits == bits_of(m));
  const std::vector<int64_t> offsets = peer.info["block_offsets"];
  REQUIRE(offsets.size() == 5);
  for (size_t b = 1; b < offsets.size(); ++b) CHECK(offsets[b] > offsets[b - 1]);
  // No stale copies: the blocks are back to back up to the index.
  CHECK(bits_of(open_datg(p).array("").read_all<double>()) == bits_of(m));
  // Default names were written.
  CHECK(peer.info["row_names"][0] == "row1");
  CHECK(peer.info["col_names"][8] == "col9");
}

TEST_CASE("out-of-order blocks beyond max_pending_bytes go to the file at once and are compacted") {
  test::TempDir dir;
  const uint64_t rows = 50, cols = 130;  // one row per block
  const std::vector<double> m = test_matrix(rows, cols, 5);
  const fs::path p = dir / "spill.datg";
  stowage::Store store =
      stowage::Store::open(p.string(), stowage::Mode::truncate, "datg", {{"max_pending_bytes", 0}});
  store.create("", {{"dtype", "float64"}, {"shape", {rows, cols}}});
  stowage::Array a = store.array("");
  for (uint64_t r = rows; r-- > 0;) a.write({r, 0}, {1, cols}, m.data() + r * cols);
  // Rewrite a spilled row and read it back before closing.
  a.write({7, 0}, {1, cols}, m.data() + 7 * cols);
  std::vector<double> row(cols);
  a.read({20, 0}, {1, cols}, row.data());
  CHECK(bits_of(row) == bits_of(std::vector<double>(m.begin() + 20 * cols, m.begin() + 21 * cols)));
  store.close();
  PeerRead peer = peer_read(p);
  CHECK(peer.bits == bits_of(m));
  const std::vector<int64_t> offsets = peer.info["block_offsets"];
  for (size_t b = 1; b < offsets.size(); ++b) CHECK(offsets[b] > offsets[b - 1]);
  // Compact: no stale copies, so the blocks take exactly the bytes they take
  // when written in order (LZ4 output is deterministic).
  const fs::path q = dir / "inorder.datg";
  {
    stowage::Store s = stowage::Store::open(q.string(), stowage::Mode::truncate, "datg");
    s.create("", {{"dtype", "float64"}, {"shape", {rows, cols}}});
    s.array("").write({0, 0}, {rows, cols}, m.data());
    s.close();
  }
  CHECK(peer.info["index_offset"] == peer_read(q).info["index_offset"]);
  CHECK(peer.info["block_offsets"] == peer_read(q).info["block_offsets"]);
}

TEST_CASE("a whole-matrix write (parallel blocks) and unwritten blocks holding the fill value") {
  test::TempDir dir;
  const uint64_t rows = 500, cols = 120;
  const std::vector<double> m = test_matrix(rows, cols, 3);
  const fs::path p = dir / "whole.datg";
  {
    stowage::Store store = stowage::Store::open(p.string(), stowage::Mode::truncate, "datg");
    store.create("", {{"dtype", "float64"}, {"shape", {rows, cols}}});
    store.array("").write({0, 0}, {rows, cols}, m.data());
    store.close();
  }
  CHECK(peer_read(p).bits == bits_of(m));
  const fs::path q = dir / "sparse.datg";
  {
    stowage::Store store = stowage::Store::open(q.string(), stowage::Mode::truncate, "datg");
    store.create("", {{"dtype", "float64"}, {"shape", {10, 3}}, {"fill_value", 2.5}});
    const double row[3] = {1, 2, 3};
    store.array("").write({4, 0}, {1, 3}, row);
    store.close();
  }
  const std::vector<uint64_t> bits = peer_read(q).bits;
  for (uint64_t i = 0; i < 30; ++i)
    CHECK(bits[i] == bits_of({i / 3 == 4 ? 1.0 + static_cast<double>(i % 3) : 2.5})[0]);
}

TEST_CASE("chunks of another format (not whole rows) give the default rows per block") {
  test::TempDir dir;
  const fs::path p = dir / "tiles.datg";
  std::vector<double> m(130 * 7);
  for (size_t i = 0; i < m.size(); ++i) m[i] = static_cast<double>(i);
  {
    stowage::Store store = stowage::Store::open(p.string(), stowage::Mode::truncate, "datg");
    store.create("", {{"dtype", "float64"},
                      {"shape", {130, 7}},
                      {"chunks", {64, 4}},
                      {"codec", {{"type", "gzip"}}}});
    CHECK(store.describe("").chunks == std::vector<uint64_t>{15, 7});
    store.array("").write({0, 0}, {130, 7}, m.data());
    store.close();
  }
  PeerRead peer = peer_read(p);
  CHECK(peer.info["rows_per_block"] == 15);
  CHECK(peer.bits == bits_of(m));
}

TEST_CASE("writer rules: unique names, column limit, datg-only shapes, no file after a failure") {
  test::TempDir dir;
  const fs::path p = dir / "bad.datg";
  const auto no_files = [&] {
    for (const auto& e : fs::directory_iterator(dir.path()))
      FAIL_CHECK("left behind: " << e.path());
  };
  {
    INFO("duplicate row names");
    stowage::Store store = stowage::Store::open(p.string(), stowage::Mode::truncate, "datg");
    store.create("", {{"dtype", "float64"}, {"shape", {3, 2}}});
    const std::string message = expect_error([&] { store.write_strings("rows", {"a", "b", "a"}); },
                                             ErrorCode::invalid_argument, p);
    CHECK(message.find("unique") != std::string::npos);
    const double v[6] = {1, 2, 3, 4, 5, 6};
    store.array("").write({0, 0}, {3, 2}, v);
    expect_error([&] { store.close(); }, ErrorCode::io, p);
    no_files();
  }
  {
    INFO("more than 4,194,304 columns");
    stowage::Store store = stowage::Store::open(p.string(), stowage::Mode::truncate, "datg");
    const std::string message =
        expect_error([&] { store.create("", {{"dtype", "float64"}, {"shape", {1, 4194305}}}); },
                     ErrorCode::invalid_argument, p);
    CHECK(message.find("4,194,304") != std::string::npos);
    store.close();
    no_files();
  }
  {
    INFO("names with TAB, wrong count; other dtypes; malformed chunks");
    stowage::Store store = stowage::Store::open(p.string(), stowage::Mode::truncate, "datg");
    expect_error([&] { store.create("", {{"dtype", "int32"}, {"shape", {2, 2}}}); },
                 ErrorCode::unsupported, p);
    expect_error([&] { store.create("", {{"dtype", "float64"}, {"shape", {2, 2, 2}}}); },
                 ErrorCode::invalid_argument, p);
    expect_error([&] { store.create("", {{"shape", {4, 4}}, {"chunks", {2}}}); },
                 ErrorCode::invalid_argument, p);
    store.create("", {{"dtype", "float64"}, {"shape", {2, 2}}});
    expect_error([&] { store.write_strings("cols", {"x\ty", "z"}); }, ErrorCode::invalid_argument,
                 p);
    expect_error([&] { store.write_strings("cols", {"x"}); }, ErrorCode::invalid_argument, p);
    expect_error([&] { store.close(); }, ErrorCode::io, p);
    no_files();
  }
  {
    INFO("a datg file is not changed in place");
    const fs::path src = copy_dataset("basic_4x5", dir.path(), "ro");
    stowage::Store store = stowage::Store::open(src.string(), stowage::Mode::update, "datg");
    const double v[5] = {};
    expect_error([&] { store.array("").write({0, 0}, {1, 5}, v); }, ErrorCode::unsupported, src);
    store.close();
    CHECK(peer_read(src).bits == read_le_bits(fixture("basic_4x5.expected.bin")));
  }
}
