// Malformed datg datasets (copies of fixtures, damaged one way each) must be
// errors with the right code and a message naming the file: never a crash,
// never a wrong value.
#include "datg_helpers.hpp"

#include <random>

using namespace datgtest;
using stowage::ErrorCode;

namespace {

// Footer field offsets, counted back from the end of the file.
constexpr int64_t kRows = -36, kIndexOffset = -28, kMetadataOffset = -20, kRowsPerBlock = -12,
                  kReserved = -8, kFlag = -5, kMagic = -4;

std::string be(uint64_t v, int bytes) {
  std::string s(static_cast<size_t>(bytes), '\0');
  for (int i = bytes - 1; i >= 0; --i, v >>= 8)
    s[static_cast<size_t>(i)] = static_cast<char>(v & 0xFF);
  return s;
}

void truncate_to(const fs::path& path, size_t size) {
  test::write_file(path, test::read_file(path).substr(0, size));
}

void write_gzip_names(const fs::path& path, const std::string& text) {
  test::RunResult r = test::run_python(
      "import gzip, os, sys\ngzip.open(sys.argv[1], 'wb').write(os.fsencode(sys.argv[2]))\n",
      test::quote(path.string()) + " " + test::quote(text));
  REQUIRE(r.status == 0);
}

// Opening (and reading everything) must fail with `code`, naming `named`.
std::string open_fails(const fs::path& datg, ErrorCode code, const fs::path& named) {
  return expect_error([&] { open_datg(datg).array("").read_all<double>(); }, code, named);
}

}  // namespace

TEST_CASE("truncated files are CORRUPT") {
  test::TempDir dir;
  const size_t size = fs::file_size(fixture("basic_4x5.datg"));
  for (size_t keep : {size_t{0}, size_t{10}, size_t{43}, size_t{44}, size_t{100}, size - 1}) {
    CAPTURE(keep);
    const fs::path p = copy_dataset("basic_4x5", dir.path(), "t");
    truncate_to(p, keep);
    open_fails(p, ErrorCode::corrupt, p);
  }
  // A file that lost its head: offsets point at the wrong bytes.
  const fs::path p = copy_dataset("few_cols_250x3", dir.path(), "head");
  std::string data = test::read_file(p);
  test::write_file(p, data.substr(7));
  open_fails(p, ErrorCode::corrupt, p);
}

TEST_CASE("footer damage: magic, reserved bytes, flag, offsets, counts") {
  test::TempDir dir;
  struct Case {
    const char* what;
    int64_t at;
    std::string bytes;
    ErrorCode code;
    const char* says;
  };
  const Case cases[] = {
      {"wrong magic", kMagic, "UMCH", ErrorCode::corrupt, "magic"},
      {"reserved byte 0", kReserved, std::string("\x01", 1), ErrorCode::corrupt, "reserved"},
      {"reserved byte 2", kReserved + 2, std::string("\x80", 1), ErrorCode::corrupt, "reserved"},
      {"flag 2", kFlag, std::string("\x02", 1), ErrorCode::unsupported, "flag"},
      {"flag 0x81 (passes Java's signed check)", kFlag, std::string("\x81", 1),
       ErrorCode::unsupported, "flag"},
      {"flag 0xFF", kFlag, std::string("\xFF", 1), ErrorCode::unsupported, "flag"},
      {"negative rows", kRows, be(0xFFFFFFFF, 4), ErrorCode::corrupt, "negative"},
      {"rows beyond the file", kRows, be(1000000, 4), ErrorCode::corrupt, "cannot"},
      {"rows per block 0", kRowsPerBlock, be(0, 4), ErrorCode::corrupt, "rows per block"},
      {"index after metadata", kIndexOffset, be(120, 8), ErrorCode::corrupt, "index offset"},
      {"negative index offset", kIndexOffset, be(0xFFFFFFFFFFFFFFF0ull, 8), ErrorCode::corrupt,
       "negative"},
      {"metadata beyond footer", kMetadataOffset, be(200, 8), ErrorCode::corrupt,
       "metadata offset"},
      {"metadata strings do not end at the footer", kMetadataOffset, be(112, 8), ErrorCode::corrupt,
       "metadata"},
      {"metadata offset inside the index", kMetadataOffset, be(100, 8), ErrorCode::corrupt,
       "metadata"},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.what));
    const fs::path p = copy_dataset("basic_4x5", dir.path(), "f");
    patch(p, c.at, c.bytes);
    const std::string message = open_fails(p, c.code, p);
    CHECK(message.find(c.says) != std::string::npos);
  }
}

TEST_CASE("bad modified UTF-8 in the metadata strings is CORRUPT") {
  test::TempDir dir;
  // basic_4x5: metadata at 113, dataset name "Title" at 115.
  const std::pair<const char*, std::string> cases[] = {
      {"4-byte UTF-8 sequence", "\xF0\x9F\xA7\xAC"},
      {"lone high surrogate",
       "\xED\xA0\xBE"
       "le"},
      {"lone low surrogate",
       "\xED\xB7\xAC"
       "le"},
      {"continuation byte as lead", "\x80"},
      {"missing continuation",
       "\xC3"
       "A"},
  };
  for (const auto& [what, bytes] : cases) {
    INFO(std::string(what));
    const fs::path p = copy_dataset("basic_4x5", dir.path(), "u");
    patch(p, 115, bytes);
    const std::string message = open_fails(p, ErrorCode::corrupt, p);
    CHECK(message.find("UTF-8") != std::string::npos);
  }
  // A length running past the footer.
  const fs::path p = copy_dataset("basic_4x5", dir.path(), "len");
  patch(p, 113, be(60, 2));
  open_fails(p, ErrorCode::corrupt, p);
}

TEST_CASE("bad block index: wrong count, out of range, not increasing, not a container") {
  test::TempDir dir;
  const std::pair<const char*, std::string> cases[] = {
      {"one entry too many", "0,40"},
      {"beyond the index", "90"},
      {"inside a container", "5"},
      {"no entries", ""},
  };
  for (const auto& [what, offsets] : cases) {
    INFO(std::string(what));
    const fs::path src = copy_dataset("basic_4x5", dir.path(), "src");
    const fs::path p = dir / "i.datg";
    fs::copy_file(dir / "src.rows.txt.gz", dir / "i.rows.txt.gz",
                  fs::copy_options::overwrite_existing);
    fs::copy_file(dir / "src.cols.txt.gz", dir / "i.cols.txt.gz",
                  fs::copy_options::overwrite_existing);
    test::RunResult r = test::run(test::python() + " " + test::quote(peer_script()) +
                                  " set-index " + test::quote(src.string()) + " " +
                                  test::quote(p.string()) + " " + test::quote(offsets));
    REQUIRE(r.status == 0);
    open_fails(p, ErrorCode::corrupt, p);
  }
  // Offsets that go backwards (few_cols_250x3 has 8 blocks).
  const json layout = test::read_json(fixture("few_cols_250x3.expected.json"))["layout"];
  std::vector<uint64_t> offsets = layout["block_offsets"];
  std::swap(offsets[2], offsets[3]);
  std::string list;
  for (uint64_t o : offsets) list += (list.empty() ? "" : ",") + std::to_string(o);
  const fs::path src = copy_dataset("few_cols_250x3", dir.path(), "src8");
  const fs::path p = copy_dataset("few_cols_250x3", dir.path(), "back");
  REQUIRE(test::run(test::python() + " " + test::quote(peer_script()) + " set-index " +
                    test::quote(src.string()) + " " + test::quote(p.string()) + " " + list)
              .status == 0);
  CHECK(open_fails(p, ErrorCode::corrupt, p).find("block 2") != std::string::npos);
}

TEST_CASE("bad LZ4 containers are CORRUPT when their block is read") {
  test::TempDir dir;
  {
    INFO("frame magic of block 0");
    const fs::path p = copy_dataset("basic_4x5", dir.path(), "m");
    patch(p, 0, "\x05");
    CHECK(open_fails(p, ErrorCode::corrupt, p).find("LZ4 frame") != std::string::npos);
  }
  {
    INFO("frame payload / content checksum of block 0");
    const fs::path p = copy_dataset("basic_4x5", dir.path(), "c");
    std::string data = test::read_file(p);
    data[40] = static_cast<char>(data[40] ^ 0x5A);
    test::write_file(p, data);
    CHECK(open_fails(p, ErrorCode::corrupt, p).find("block 0") != std::string::npos);
  }
  {
    INFO("index frame content checksum");
    const fs::path p = copy_dataset("basic_4x5", dir.path(), "ic");
    std::string data = test::read_file(p);
    data[86 + 11 + 7] = static_cast<char>(data[86 + 11 + 7] ^ 0x01);  // last byte of offset 0
    test::write_file(p, data);
    CHECK(open_fails(p, ErrorCode::corrupt, p).find("index") != std::string::npos);
  }
  {
    INFO("stored-block frames: a flipped value byte fails the content checksum");
    const fs::path p = copy_dataset("wide_300x128", dir.path(), "w");
    std::string data = test::read_file(p);
    data[100] = static_cast<char>(data[100] ^ 0x01);
    test::write_file(p, data);
    stowage::Store store = open_datg(p);
    std::vector<double> row(128);
    expect_error([&] { store.array("").read({0, 0}, {1, 128}, row.data()); }, ErrorCode::corrupt,
                 p);
    store.array("").read({1, 0}, {1, 128}, row.data());  // other rows still read
  }
  {
    INFO("LZ4Block magic (flag 0)");
    const fs::path p = copy_dataset("legacy_lz4block_12x10", dir.path(), "lm");
    patch(p, 0, "LZ4Blick");
    CHECK(open_fails(p, ErrorCode::corrupt, p).find("LZ4Block") != std::string::npos);
  }
  {
    INFO("LZ4Block raw chunk payload (28-bit xxhash checksum)");
    const fs::path p = copy_dataset("legacy_lz4block_12x10", dir.path(), "lc");
    std::string data = test::read_file(p);
    data[21 + 5] = static_cast<char>(data[21 + 5] ^ 0x01);
    test::write_file(p, data);
    open_fails(p, ErrorCode::corrupt, p);
  }
  {
    INFO("a data block in a file of another flavour (flag flipped to 1)");
    const fs::path p = copy_dataset("legacy_lz4block_12x10", dir.path(), "lf");
    patch(p, kFlag, std::string("\x01", 1));
    open_fails(p, ErrorCode::corrupt, p);
  }
}

TEST_CASE("name files: count mismatch, missing, not gzip, truncated, bad UTF-8") {
  test::TempDir dir;
  struct Case {
    const char* what;
    const char* file;  // which companion file to replace
    std::string content;
    bool gzip;
  };
  const Case cases[] = {
      {"one row name short", "rows", "row1\nrow2\nrow3\n", true},
      {"one row name too many", "rows", "row1\nrow2\nrow3\nrow4\nrow5\n", true},
      {"column names empty", "cols", "", true},
      {"not gzip", "cols", "col1\ncol2\ncol3\ncol4\ncol5\n", false},
      {"bad UTF-8 name", "rows", "row1\nr\xC3\n\nrow4\n", true},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.what));
    const fs::path p = copy_dataset("basic_4x5", dir.path(), "n");
    const fs::path names = dir / (std::string("n.") + c.file + ".txt.gz");
    if (c.gzip)
      write_gzip_names(names, c.content);
    else
      test::write_file(names, c.content);
    open_fails(p, ErrorCode::corrupt, names);
  }
  {
    INFO("truncated gzip");
    const fs::path p = copy_dataset("many_rows_20000x1", dir.path(), "tg");
    const fs::path names = dir / "tg.rows.txt.gz";
    truncate_to(names, fs::file_size(names) / 2);
    open_fails(p, ErrorCode::corrupt, names);
  }
  {
    INFO("missing column names");
    const fs::path p = copy_dataset("basic_4x5", dir.path(), "mc");
    fs::remove(dir / "mc.cols.txt.gz");
    open_fails(p, ErrorCode::not_found, dir / "mc.cols.txt.gz");
  }
  {
    INFO("CRLF line ends and extra tab-separated fields are fine");
    const fs::path p = copy_dataset("basic_4x5", dir.path(), "ok");
    write_gzip_names(dir / "ok.rows.txt.gz", "row1\textra\r\nrow2\r\nrow3\trow3b\trow3c\nrow4");
    CHECK(open_datg(p).read_strings("rows") ==
          std::vector<std::string>{"row1", "row2", "row3", "row4"});
  }
}

TEST_CASE("files that are not datg at all") {
  test::TempDir dir;
  const fs::path p = dir / "random.datg";
  std::string noise(4096, '\0');
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>((i * 2654435761u) >> 13);
  test::write_file(p, noise);
  open_fails(p, ErrorCode::corrupt, p);
  CHECK(stowage::Registry::global().identify(p.string()).size() >= 1);
  expect_error([&] { open_datg(dir / "absent.datg"); }, ErrorCode::not_found, dir / "absent.datg");
}

TEST_CASE("random damage never crashes: every outcome is a value or a stowage::Error") {
  test::TempDir dir;
  std::mt19937 rng(1234);
  int errors = 0, reads = 0;
  for (const char* name : {"basic_4x5", "few_cols_250x3", "legacy_lz4block_12x10", "wide_300x128",
                           "repo_legacy_genecor_chr6p_48x48", "unicode_names_4x3"}) {
    CAPTURE(name);
    const std::string original = test::read_file(fixture(std::string(name) + ".datg"));
    for (int round = 0; round < 60; ++round) {
      const fs::path p = copy_dataset(name, dir.path(), "fz");
      std::string data = original;
      if (round % 4 == 3) {
        data.resize(rng() % data.size());  // truncation
      } else {
        for (int flips = 1 + static_cast<int>(rng() % 3); flips > 0; --flips) {
          // Half the damage lands in the tail (footer, strings, index), where it matters most.
          const size_t tail = std::min<size_t>(data.size(), 120);
          const size_t at = rng() % 2 ? data.size() - 1 - rng() % tail : rng() % data.size();
          data[at] = static_cast<char>(data[at] ^ (1 + rng() % 255));
        }
      }
      test::write_file(p, data);
      try {
        stowage::Store store = open_datg(p);
        store.array("").read_all<double>();
        store.read_strings("rows");
        ++reads;
      } catch (const stowage::Error& e) {
        ++errors;
        if (std::string(e.what()).find("fz.") == std::string::npos)
          FAIL_CHECK("error does not name the file: " << e.what());
      }
    }
  }
  CHECK(errors > 200);  // most damage is detected (checksums, magic, offsets)
  MESSAGE("damaged files: " << errors << " errors, " << reads
                            << " read (damage in values of raw blocks "
                               "or in metadata text can be undetectable)");
}
