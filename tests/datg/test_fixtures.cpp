// Every fixture from the reference Java writers (both flavours, and real files
// from the systemsgenetics repository) reads bit-exactly equal to its
// .expected.bin, with its names, metadata and layout; the independent Python
// reader agrees on each.
#include "datg_helpers.hpp"

using namespace datgtest;

namespace {

// The names in expected.json: an inline list, or a summary for long lists.
void check_names(const std::vector<std::string>& names, const json& expected) {
  if (expected.is_array()) {
    CHECK(names == expected.get<std::vector<std::string>>());
    return;
  }
  REQUIRE(names.size() == expected["count"].get<size_t>());
  const auto first = expected["first"].get<std::vector<std::string>>();
  const auto last = expected["last"].get<std::vector<std::string>>();
  CHECK(std::vector<std::string>(names.begin(), names.begin() + first.size()) == first);
  CHECK(std::vector<std::string>(names.end() - last.size(), names.end()) == last);
  // The only summarised fixture uses the pattern r%05d.
  CHECK(expected["pattern"].get<std::string>().rfind("r%05d", 0) == 0);
  for (size_t i = 0; i < names.size(); ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "r%05zu", i);
    if (names[i] != buf) FAIL_CHECK("name " << i << " is " << names[i]);
  }
}

}  // namespace

TEST_CASE("every fixture reads bit-exactly with names, metadata and layout") {
  const std::vector<std::string> names = fixture_names();
  REQUIRE(names.size() >= 12);
  for (const std::string& name : names) {
    CAPTURE(name);
    const json expected = test::read_json(fixture(name + ".expected.json"));
    stowage::Store store = open_datg(fixture(name + ".datg"));
    CHECK(store.list("").empty());

    const stowage::NodeInfo info = store.describe("");
    const uint64_t rows = expected["shape"][0], cols = expected["shape"][1];
    CHECK(info.kind == stowage::NodeKind::array);
    CHECK(info.dtype == stowage::DType::float64);
    CHECK(info.shape == std::vector<uint64_t>{rows, cols});
    const uint64_t rpb = expected["layout"]["rows_per_block"];
    CHECK(info.chunks == std::vector<uint64_t>{std::min(rpb, rows), cols});

    const json& meta = expected["metadata"];
    CHECK(info.attributes["dataset_name"] == meta["dataset_name"]);
    CHECK(info.attributes["row_entity"] == meta["data_on_rows"]);
    CHECK(info.attributes["column_entity"] == meta["data_on_cols"]);
    CHECK(info.attributes["created_epoch_seconds"] == meta["created_epoch_seconds"]);
    const bool frames = meta["compression_flag"] == 1;
    CHECK(info.codec["type"] == "lz4");
    CHECK(info.codec.value("framing", "lz4block") == (frames ? "frame" : "lz4block"));
    REQUIRE(info.dims.size() == 2);
    CHECK(info.dims[0].name == meta["data_on_rows"].get<std::string>());
    CHECK(info.dims[1].name == meta["data_on_cols"].get<std::string>());
    check_names(store.read_strings(info.dims[0].labels), expected["row_names"]);
    check_names(store.read_strings(info.dims[1].labels), expected["col_names"]);

    const std::vector<uint64_t> want = read_le_bits(fixture(name + ".expected.bin"));
    REQUIRE(want.size() == rows * cols);
    CHECK(bits_of(store.array("").read_all<double>()) == want);
  }
}

TEST_CASE("random access: every row read alone, in reverse order, equals the fixture") {
  for (const char* name : {"few_cols_250x3", "legacy_lz4block_12x10", "wide_300x128",
                           "repo_legacy_genecor_chr6p_48x48", "special_values_3x8_rpb1"}) {
    CAPTURE(name);
    const std::vector<uint64_t> want = read_le_bits(fixture(std::string(name) + ".expected.bin"));
    stowage::Store store = open_datg(fixture(std::string(name) + ".datg"));
    stowage::Array a = store.array("");
    const uint64_t rows = a.shape()[0], cols = a.shape()[1];
    std::vector<double> row(cols);
    for (uint64_t r = rows; r-- > 0;) {
      a.read({r, 0}, {1, cols}, row.data());
      const std::vector<uint64_t> expect(want.begin() + r * cols, want.begin() + (r + 1) * cols);
      if (bits_of(row) != expect) FAIL_CHECK("row " << r << " differs");
    }
    // A column slab crosses every block.
    std::vector<double> column(rows);
    a.read({0, cols - 1}, {rows, 1}, column.data());
    for (uint64_t r = 0; r < rows; ++r) CHECK(bits_of({column[r]})[0] == want[r * cols + cols - 1]);
  }
}

TEST_CASE("special values survive bit-exactly: NaN canonical, -0.0, subnormals, Inf") {
  const std::vector<uint64_t> bits =
      bits_of(open_datg(fixture("special_values_3x8_rpb1.datg")).array("").read_all<double>());
  const json expected = test::read_json(fixture("special_values_3x8_rpb1.expected.json"));
  size_t i = 0;
  for (const json& row : expected["data_inline_hex"])
    for (const json& hex : row)
      CHECK(bits.at(i++) == std::stoull(hex.get<std::string>(), nullptr, 16));
  CHECK(i == bits.size());
  const auto has = [&](uint64_t b) { return std::find(bits.begin(), bits.end(), b) != bits.end(); };
  CHECK(has(0x7ff8000000000000ull));  // canonical NaN
  CHECK(has(0x8000000000000000ull));  // -0.0
  CHECK(has(0x0000000000000001ull));  // smallest subnormal
  CHECK(has(0x7ff0000000000000ull));  // +Inf
  CHECK(has(0xfff0000000000000ull));  // -Inf
}

TEST_CASE("the dataset opens by base name and is detected as datg") {
  const std::string base = (fixture("basic_4x5")).string();
  CHECK(stowage::Registry::global().detect_format(base + ".datg") == "datg");
  CHECK(stowage::Registry::global().detect_format(base) == "datg");
  stowage::Store store = stowage::Store::open(base);
  CHECK(store.format() == "datg");
  CHECK(store.describe("").shape == std::vector<uint64_t>{4, 5});
  CHECK(store.describe("rows").kind == stowage::NodeKind::strings);
  CHECK(store.describe("rows").shape == std::vector<uint64_t>{4});
  CHECK(store.read_strings("cols", 1, 3) == std::vector<std::string>{"col2", "col3"});
}

TEST_CASE("the independent Python reader agrees with every fixture") {
  for (const std::string& name : fixture_names()) {
    CAPTURE(name);
    PeerRead peer = peer_read(fixture(name + ".datg"));
    CHECK(peer.bits == read_le_bits(fixture(name + ".expected.bin")));
    const json expected = test::read_json(fixture(name + ".expected.json"));
    CHECK(peer.info["block_offsets"] == expected["layout"]["block_offsets"]);
    CHECK(peer.info["dataset_name"] == expected["metadata"]["dataset_name"]);
  }
}
