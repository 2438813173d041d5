// Container shapes no Java fixture has at this size: a flag-0 file whose
// index spans several LZ4Block chunks (more than 8192 blocks), and flag-1
// frames holding several 4 MiB LZ4 blocks (rows wider than 524,288 columns).
// The LZ4Block streams are made by the lz4 codec plugin exactly as lz4-java's
// LZ4BlockOutputStream frames them; the Python reader checks both.
#include "datg_helpers.hpp"

using namespace datgtest;

namespace {

void put_be(std::string& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

std::string encode(const json& codec, const std::string& bytes) {
  std::vector<uint8_t> e =
      stowage::Registry::global().codec(codec).encode(bytes.data(), bytes.size());
  return std::string(e.begin(), e.end());
}

}  // namespace

TEST_CASE("flag 0: an index of more than 8192 blocks spans several LZ4Block chunks") {
  test::TempDir dir;
  const uint64_t rows = 9000, cols = 8;  // rows per block 1: lz4-java's minimum chunk of 64 bytes
  std::vector<double> values(rows * cols);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i % 977) * 0.25 - 3;

  std::string file, index;
  for (uint64_t r = 0; r < rows; ++r) {
    std::string row;
    for (uint64_t c = 0; c < cols; ++c) put_be(row, bits_of({values[r * cols + c]})[0], 8);
    put_be(index, file.size(), 8);
    file += encode({{"type", "lz4"}, {"blockSize", 64}}, row);
  }
  const std::string index_stream = encode({{"type", "lz4"}}, index);  // default 64 KiB chunks
  REQUIRE(index.size() > 65536);  // so the stream has two data chunks
  const uint64_t index_offset = file.size();
  file += index_stream;
  const uint64_t metadata_offset = file.size();
  file += std::string(
      "\0\x03"
      "abc"
      "\0\x01"
      "r"
      "\0\x01"
      "c",
      11);
  put_be(file, 1700000000, 8);
  put_be(file, rows, 4);
  put_be(file, cols, 4);
  put_be(file, index_offset, 8);
  put_be(file, metadata_offset, 8);
  put_be(file, 1, 4);
  file += std::string("\0\0\0\0UMCG", 8);  // reserved, flag 0, magic
  const fs::path p = dir / "legacy.datg";
  test::write_file(p, file);
  std::string rows_text, cols_text;
  for (uint64_t r = 0; r < rows; ++r) rows_text += "g" + std::to_string(r) + "\n";
  for (uint64_t c = 0; c < cols; ++c) cols_text += "s" + std::to_string(c) + "\n";
  REQUIRE(test::run_python("import gzip, sys\n"
                           "gzip.open(sys.argv[1], 'wb').write(sys.argv[2].encode())\n"
                           "gzip.open(sys.argv[3], 'wb').write(sys.argv[4].encode())\n",
                           test::quote((dir / "legacy.rows.txt.gz").string()) + " " +
                               test::quote(rows_text) + " " +
                               test::quote((dir / "legacy.cols.txt.gz").string()) + " " +
                               test::quote(cols_text))
              .status == 0);

  stowage::Store store = open_datg(p);
  const stowage::NodeInfo info = store.describe("");
  CHECK(info.attributes["dataset_name"] == "abc");
  CHECK(info.codec["type"] == "lz4");
  CHECK(bits_of(store.array("").read_all<double>()) == bits_of(values));
  std::vector<double> row(cols);
  store.array("").read({8999, 0}, {1, cols}, row.data());
  CHECK(bits_of(row) == bits_of(std::vector<double>(values.end() - 8, values.end())));
  CHECK(peer_read(p).bits == bits_of(values));
}

TEST_CASE("flag 1: rows wider than 4 MiB are frames of several LZ4 blocks, written and read") {
  test::TempDir dir;
  const uint64_t rows = 2, cols = 600000;  // 4.8 MB per row
  std::vector<double> values(rows * cols);
  for (size_t i = 0; i < values.size(); ++i) values[i] = i % 5 == 0 ? static_cast<double>(i) : 0.0;
  const fs::path p = dir / "wide.datg";
  {
    stowage::Store store = stowage::Store::open(p.string(), stowage::Mode::truncate, "datg");
    store.create("", {{"dtype", "float64"}, {"shape", {rows, cols}}});
    store.array("").write({0, 0}, {rows, cols}, values.data());
    store.close();
  }
  CHECK(bits_of(open_datg(p).array("").read_all<double>()) == bits_of(values));
  PeerRead peer = peer_read(p);
  CHECK(peer.bits == bits_of(values));
  CHECK(peer.info["rows_per_block"] == 1);
}
