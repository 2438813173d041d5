// Files we write are read by the Java decoders the reference reader uses:
// DataInput.readUTF (modified UTF-8), Commons Compress'
// FramedLZ4CompressorInputStream (LZ4 frames) and GZIPInputStream, through
// DatgJavaPeer.java (Debian: default-jdk, libcommons-compress-java, liblz4-java).
#include "datg_helpers.hpp"

using namespace datgtest;

namespace {

struct JavaRead {
  std::vector<uint64_t> bits;
  std::vector<std::string> metadata, rows, cols;
};

std::string unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

JavaRead java_read(const fs::path& datg) {
  test::TempDir tmp;
  const std::string source =
      (test::source_root() / "tests" / "datg" / "DatgJavaPeer.java").string();
  test::RunResult r = test::run(
      "java -cp /usr/share/java/commons-compress.jar:/usr/share/java/lz4-java.jar " +
      test::quote(source) + " " + test::quote(datg.string()) + " " +
      test::quote((tmp / "out.bin").string()) + " " + test::quote((tmp / "out.txt").string()));
  INFO(r.output);
  REQUIRE(r.status == 0);
  JavaRead out;
  out.bits = read_le_bits(tmp / "out.bin");
  std::istringstream lines(test::read_file(tmp / "out.txt"));
  std::string line;
  for (int i = 0; i < 3 && std::getline(lines, line); ++i) out.metadata.push_back(unhex(line));
  for (std::vector<std::string>* names : {&out.rows, &out.cols}) {
    std::getline(lines, line);
    const size_t n = std::stoul(line.substr(line.find(' ') + 1));
    for (size_t i = 0; i < n && std::getline(lines, line); ++i) names->push_back(unhex(line));
  }
  return out;
}

}  // namespace

TEST_CASE("the Java decoders read fixtures of both flavours like the expected values") {
  for (const char* name :
       {"unicode_names_4x3", "legacy_lz4block_12x10", "special_values_3x8_rpb1"}) {
    CAPTURE(name);
    JavaRead j = java_read(fixture(std::string(name) + ".datg"));
    CHECK(j.bits == read_le_bits(fixture(std::string(name) + ".expected.bin")));
    const json expected = test::read_json(fixture(std::string(name) + ".expected.json"));
    CHECK(j.metadata.at(0) == expected["metadata"]["dataset_name"].get<std::string>());
  }
}

TEST_CASE("files we write read back through the Java decoders, bit for bit") {
  test::TempDir dir;
  const uint64_t rows = 40, cols = 6;  // default 17 rows per block: 3 frames, the last short
  std::vector<double> values(rows * cols);
  const uint64_t specials[] = {0x7ff8000000000000ull, 0x8000000000000000ull, 0x0000000000000001ull,
                               0x7ff0000000000000ull, 0xfff0000000000000ull, 0x7fefffffffffffffull};
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = i < std::size(specials) ? from_bits(specials[i])
                                        : (i % 4 ? std::sin(static_cast<double>(i)) : 0.0);
  std::vector<std::string> row_names,
      col_names = {"\u00c5lesund", "\U0001F9EC-DNA", "caf\u00e9", "x", "", "z"};
  for (uint64_t r = 0; r < rows; ++r) row_names.push_back("gene\u00b7" + std::to_string(r));
  const std::string dataset = "Donn\u00e9es \U0001F9EC " + std::string(1, '\0') + " \u6e2c";
  const fs::path p = dir / "ours.datg";
  {
    stowage::Store store = stowage::Store::open(p.string(), stowage::Mode::truncate, "datg");
    store.create("", {{"dtype", "float64"},
                      {"shape", {rows, cols}},
                      {"attributes", {{"dataset_name", dataset}}},
                      {"dims", {{{"name", "g\u00e8nes"}}, {{"name", "samples"}}}}});
    store.write_strings("rows", row_names);
    store.write_strings("cols", col_names);
    store.array("").write({0, 0}, {rows, cols}, values.data());
    store.close();
  }
  JavaRead j = java_read(p);
  CHECK(j.bits == bits_of(values));
  CHECK(j.metadata == std::vector<std::string>{dataset, "g\u00e8nes", "samples"});
  CHECK(j.rows == row_names);
  CHECK(j.cols == col_names);

  const fs::path empty = dir / "empty.datg";
  {
    stowage::Store store = stowage::Store::open(empty.string(), stowage::Mode::truncate, "datg");
    store.create("", {{"dtype", "float64"}, {"shape", {0, 3}}});
    store.close();
  }
  JavaRead e = java_read(empty);
  CHECK(e.bits.empty());
  CHECK(e.cols == std::vector<std::string>{"col1", "col2", "col3"});
}
