// Every format reader on broken copies of the fixtures: truncated files,
// flipped bytes, wrong magics and versions, huge declared sizes, and node
// paths that try to leave the dataset. Each gives one exact status with a
// message naming the file; flipped bytes give a value or such an error.
#include "malformed_support.hpp"

#include <random>
#include <set>
#include <tuple>

using malformed::attempt;
using malformed::expect_error;
using malformed::read_everything;
using stowage::ErrorCode;
using stowage::json;
namespace fs = std::filesystem;

namespace {

fs::path fixture(const std::string& rel) { return test::fixtures() / rel; }

// Truncates `file` (inside a dataset copy at `dataset`) at many offsets; each
// read of the dataset must fail with `code`, naming the dataset or file.
void truncations(const std::string& format, const fs::path& dataset, const fs::path& file,
                 ErrorCode code) {
  const std::string original = malformed::slurp(file);
  for (size_t cut : malformed::truncation_points(original.size())) {
    malformed::spit(file, original.substr(0, cut));
    expect_error(
        file.string() + " cut at " + std::to_string(cut),
        [&] { read_everything(dataset.string(), format); }, code, dataset.filename().string());
  }
  malformed::spit(file, original);
}

// What a successful read after one flipped byte may return.
enum class Flip {
  // The byte is covered by a checksum (or decoding ignores it): the read is
  // exactly the unflipped one, or an error.
  original_or_error,
  // The byte is one value byte stored as is: the read differs from the
  // unflipped one in exactly that one byte, or is an error.
  one_byte_or_error,
  // Nothing covers the byte: a wrong value cannot be detected here; the
  // read must only be a value or a stowage::Error naming the dataset.
  unchecked,
};

size_t differing_bytes(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return std::string::npos;
  size_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += a[i] != b[i];
  return n;
}

// Flips random bytes of `file`: the read either throws a stowage::Error
// naming the dataset (never anything else, never a crash) or succeeds, and
// then `expect(offset)` says what it must equal.
void flips(const std::string& format, const fs::path& dataset, const fs::path& file, int trials,
           const std::function<Flip(size_t)>& expect) {
  const std::string original = malformed::slurp(file);
  const std::string unflipped = malformed::snapshot_everything(dataset.string(), format);
  std::mt19937 rng(42);
  for (int t = 0; t < trials && !original.empty(); ++t) {
    std::string damaged = original;
    size_t at = rng() % damaged.size();
    damaged[at] = char(damaged[at] ^ (1 + rng() % 255));
    malformed::spit(file, damaged);
    std::string got;
    auto o = attempt([&] { got = malformed::snapshot_everything(dataset.string(), format); });
    INFO(file.string() << " byte " << at << ": " << o.message);
    if (o.threw) {
      CHECK(o.code != ErrorCode::internal);
      CHECK(o.message.find(dataset.filename().string()) != std::string::npos);
      continue;
    }
    switch (expect(at)) {
      case Flip::original_or_error:
        CHECK_MESSAGE(got == unflipped, "a checksummed byte flipped, read a wrong value");
        break;
      case Flip::one_byte_or_error:
        CHECK(differing_bytes(got, unflipped) == 1);
        break;
      case Flip::unchecked:
        break;
    }
  }
  malformed::spit(file, original);
}

// No format-level check: a wrong value read from a flip cannot be detected.
Flip unchecked(size_t) { return Flip::unchecked; }

// Node paths that would leave the dataset are INVALID_ARGUMENT.
void traversal(const std::string& format, const fs::path& dataset) {
  auto store = stowage::Store::open(dataset.string(), stowage::Mode::read, format);
  for (const std::string bad : {"..", "../x", "a/../../b", "/etc/passwd", "./a", "a//b"}) {
    CAPTURE(bad);
    auto o = attempt([&] { store.describe(bad); });
    CHECK(o.threw);
    CHECK_MESSAGE(o.code == ErrorCode::invalid_argument, stowage::error_code_name(o.code));
  }
}

}  // namespace

// ---- npy ----------------------------------------------------------------------

std::string npy_file(const std::string& header_dict, const std::string& data, char major = 1) {
  std::string header = header_dict;
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += major;
  out += '\0';
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  return out + header + data;
}

TEST_CASE("npy: truncations, wrong magic and version, huge shapes") {
  test::TempDir tmp;
  fs::path file = tmp / "a.npy";
  const std::string good = npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (3, 4), }",
                                    std::string(48, '\1'));
  malformed::spit(file, good);
  REQUIRE_NOTHROW(read_everything(file.string(), "npy"));
  truncations("npy", file, file, ErrorCode::corrupt);

  std::string bad_magic = good;
  bad_magic[1] = 'X';
  malformed::spit(file, bad_magic);
  expect_error(
      "npy magic", [&] { read_everything(file.string(), "npy"); }, ErrorCode::corrupt, "a.npy");

  malformed::spit(file, npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (3, 4), }",
                                 std::string(48, '\1'), 9));
  expect_error(
      "npy version 9", [&] { read_everything(file.string(), "npy"); }, ErrorCode::unsupported,
      "a.npy");

  malformed::spit(file, npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': "
                                 "(4611686018427387904, 4611686018427387904), }",
                                 std::string(48, '\1')));
  expect_error(
      "npy huge shape", [&] { read_everything(file.string(), "npy"); }, ErrorCode::corrupt,
      "a.npy");

  malformed::spit(file,
                  npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (1000000, 1000), }",
                           std::string(48, '\1')));
  expect_error(
      "npy shape past the end", [&] { read_everything(file.string(), "npy"); }, ErrorCode::corrupt,
      "a.npy");
  malformed::spit(file, good);
  // npy has no checksum; the header is unchecked text, but a flip in the 48
  // data bytes at the end (stored as is) changes exactly that one byte.
  const size_t data_at = good.size() - 48;
  flips("npy", file, file, 200,
        [data_at](size_t at) { return at >= data_at ? Flip::one_byte_or_error : Flip::unchecked; });
}

// ---- datg ---------------------------------------------------------------------

TEST_CASE("datg: truncations and flipped bytes of every fixture kind") {
  test::TempDir tmp;
  for (const char* name :
       {"basic_4x5.datg", "legacy_lz4block_12x10.datg", "special_values_3x8_rpb1.datg"}) {
    const std::string fixture_name = name;
    CAPTURE(fixture_name);
    fs::path file = malformed::copy_fixture(fixture(std::string("datg/") + name), tmp.path());
    const std::string stem = fs::path(name).stem().string();
    for (const char* labels : {".rows.txt.gz", ".cols.txt.gz"})
      malformed::copy_fixture(fixture("datg/" + stem + labels), tmp.path());
    REQUIRE_NOTHROW(read_everything(file.string(), "datg"));
    truncations("datg", file, file, ErrorCode::corrupt);
    // Datg's value blocks are LZ4 frames or LZ4Block streams with checksums,
    // but its header, index and metadata are not: treated as unchecked.
    flips("datg", file, file, 150, unchecked);
  }
}

// Finding of this suite, as for datadings below: datg answers another status
// than INVALID_ARGUMENT for "..", "/etc/passwd" and the like.
TEST_CASE("datg: node paths leaving the dataset are INVALID_ARGUMENT") {
  test::TempDir tmp;
  fs::path file = malformed::copy_fixture(fixture("datg/basic_4x5.datg"), tmp.path());
  for (const char* labels : {"basic_4x5.rows.txt.gz", "basic_4x5.cols.txt.gz"})
    malformed::copy_fixture(fixture(std::string("datg/") + labels), tmp.path());
  traversal("datg", file);
}

// ---- n5 -----------------------------------------------------------------------

// The codec of an expected-file dataset entry ("compressionType (legacy)": raw).
// The codec ids of `ids` whose plugins this build has.
std::set<std::string> built(std::set<std::string> ids) {
  for (auto it = ids.begin(); it != ids.end();)
    it = test::plugin_off(*it) ? ids.erase(it) : std::next(it);
  return ids;
}

std::string n5_codec(const stowage::json& ds) {
  const stowage::json& c = ds["compression"];
  return c.contains("type") ? c["type"].get<std::string>()
                            : c["compressionType (legacy)"].get<std::string>();
}

// Every chunk of every dataset of each codec folder (gzip, zlib, bzip2, xz,
// lz4, zstd, blosc, raw, sparse) of the N5 reference containers, truncated at
// every point of truncation_points: each read of the dataset is CORRUPT and
// names the chunk file. A raw chunk's payload is exactly the header's block
// (no trailing bytes in these fixtures), so any cut is short; a compressed
// payload cut anywhere either fails in its codec or decodes short, which the
// plugin's size check refuses -- with one exception, asserted exactly: an
// lz4 chunk cut just before its 21-byte LZ4Block end mark (see below).
TEST_CASE("n5: every chunk of every codec's datasets truncated") {
  test::TempDir tmp;
  size_t cuts = 0, chunks = 0, end_marks = 0;
  std::set<std::string> codecs;
  for (const char* container : {"java-style.n5", "zarr-written.n5", "n5java-4.0.2-written.n5"}) {
    const std::string container_name = container;
    CAPTURE(container_name);
    fs::path root = malformed::copy_fixture(fixture(std::string("n5/") + container), tmp.path());
    auto expected = test::read_json(fixture("n5/" + container_name + ".expected.json"));
    for (auto& [name, ds] : expected["datasets"].items()) {
      CAPTURE(name);
      if (test::plugin_off(n5_codec(ds))) continue;  // a codec plugin this build left out
      codecs.insert(n5_codec(ds));
      auto values = [&, name = name] {
        auto store = stowage::Store::open(root.string(), stowage::Mode::read, "n5");
        auto array = store.array(name);
        std::vector<uint8_t> out(array.info().element_count() * stowage::dtype_size(array.dtype()));
        array.read(std::vector<uint64_t>(array.ndim(), 0), array.shape(), out.data());
        return out;
      };
      auto read = [&] { values(); };
      const std::vector<uint8_t> whole = values();
      for (const auto& p : ds["chunks_present_n5_order"]) {
        fs::path chunk = root / name;
        for (const auto& i : p) chunk /= std::to_string(i.get<uint64_t>());
        const std::string original = malformed::slurp(chunk);
        ++chunks;
        for (size_t cut : malformed::truncation_points(original.size())) {
          malformed::spit(chunk, original.substr(0, cut));
          if (n5_codec(ds) == "lz4" && original.size() - cut == 21 &&
              original.substr(cut, 8) == "LZ4Block" &&
              original.substr(cut + 9) == std::string(12, '\0')) {
            // The one legitimate decode: a cut removing exactly the LZ4Block
            // end mark (21 bytes: "LZ4Block", a RAW token, three zero ints)
            // leaves a stream ending at a block boundary, which N5 Java 3.x
            // wrote and lz4-java reads; the values are all there.
            CHECK_MESSAGE(values() == whole, chunk.string()
                                                 << " without its end mark reads other values");
            ++end_marks;
            continue;
          }
          expect_error(chunk.string() + " cut at " + std::to_string(cut), read, ErrorCode::corrupt,
                       chunk.string());
          ++cuts;
        }
        malformed::spit(chunk, original);
      }
    }
  }
  CHECK(codecs == built({"raw", "gzip", "bzip2", "xz", "lz4", "zstd", "blosc"}));
  CHECK(chunks > 200);
  CHECK(end_marks > 10);
  MESSAGE(chunks << " chunks, " << cuts << " truncated reads refused, " << end_marks
                 << " lz4 chunks cut at their end mark read whole");
}

// A well-formed compressed payload that decodes to fewer bytes than the
// chunk header's block needs (half of them) must be CORRUPT naming the chunk,
// for every codec: only the plugin's size check can tell, since the codec
// sees a valid stream. Zero-filling the rest would read as values.
// (It reads the whole container, every codec.)
TEST_CASE("n5: a compressed chunk whose payload decodes short is CORRUPT" *
          test::needs({"zstd", "blosc"})) {
  test::TempDir tmp;
  fs::path root = malformed::copy_fixture(fixture("n5/java-style.n5"), tmp.path(), "d.n5");
  auto expected = test::read_json(fixture("n5/java-style.n5.expected.json"));
  std::set<std::string> codecs;
  for (auto& [name, ds] : expected["datasets"].items()) {
    const std::string codec_id = n5_codec(ds);
    if (codec_id == "raw") continue;
    CAPTURE(name);
    codecs.insert(codec_id);
    auto codec = stowage::Registry::global().codec(ds["compression"].dump());
    const size_t elem =
        stowage::dtype_size(stowage::parse_dtype(ds["dataType"].get<std::string>()));
    fs::path chunk = root / name;
    for (const auto& i : ds["chunks_present_n5_order"][0])
      chunk /= std::to_string(i.get<uint64_t>());
    const std::string original = malformed::slurp(chunk);
    const size_t ndim = ds["dimensions_n5_order"].size(), header = 4 + 4 * ndim;
    REQUIRE(original.size() > header);
    size_t elements = 1;
    for (size_t d = 0; d < ndim; ++d) {
      const auto* p = reinterpret_cast<const unsigned char*>(original.data()) + 4 + 4 * d;
      elements *= (size_t(p[0]) << 24) | (size_t(p[1]) << 16) | (size_t(p[2]) << 8) | p[3];
    }
    const std::string half((elements * elem) / 2, '\x11');
    auto payload = codec.encode(half.data(), half.size());
    malformed::spit(chunk,
                    original.substr(0, header) + std::string(payload.begin(), payload.end()));
    expect_error(
        chunk.string() + " decodes to half its block",
        [&] { read_everything(root.string(), "n5"); }, ErrorCode::corrupt, chunk.string());
    malformed::spit(chunk, original);
  }
  CHECK(codecs == std::set<std::string>{"gzip", "bzip2", "xz", "lz4", "zstd", "blosc"});
}

TEST_CASE("n5: flipped chunk bytes, broken attributes, path traversal" *
          test::needs({"zstd", "blosc"})) {
  test::TempDir tmp;
  fs::path root = malformed::copy_fixture(fixture("n5/java-style.n5"), tmp.path(), "d.n5");
  REQUIRE_NOTHROW(read_everything(root.string(), "n5"));
  traversal("n5", root);
  auto expected = test::read_json(fixture("n5/java-style.n5.expected.json"));
  for (auto& [name, ds] : expected["datasets"].items()) {
    CAPTURE(name);
    const std::string codec = n5_codec(ds);
    const size_t header = 4 + 4 * ds["dimensions_n5_order"].size();  // mode 0 chunks
    // gzip/zlib (CRC32/Adler-32), bzip2 (CRCs), xz (CRC64), lz4 (LZ4Block:
    // XXH32 per block) check the decoded bytes; a header flip gives another
    // mode, ndim or block size, which the plugin refuses (the payload no
    // longer decodes to the header's size). zstd frames as written here have
    // no content checksum and blosc has none: unchecked. raw: one value byte.
    std::function<Flip(size_t)> expect = unchecked;
    if (codec == "raw")
      expect = [header](size_t at) {
        return at >= header ? Flip::one_byte_or_error : Flip::unchecked;
      };
    else if (codec != "zstd" && codec != "blosc")
      expect = [](size_t) { return Flip::original_or_error; };
    for (const auto& p : ds["chunks_present_n5_order"]) {
      fs::path chunk = root / name;
      for (const auto& i : p) chunk /= std::to_string(i.get<uint64_t>());
      flips("n5", root, chunk, 8, expect);
    }
  }
  fs::path attrs = root / "raw" / "uint8_2d" / "attributes.json";
  const std::string original = malformed::slurp(attrs);
  malformed::spit(attrs, original.substr(0, original.size() / 2));
  expect_error(
      "n5 attributes cut", [&] { read_everything(root.string(), "n5"); }, ErrorCode::corrupt,
      "attributes.json");
  malformed::spit(attrs, original);
}

// ---- datadings ----------------------------------------------------------------

TEST_CASE("datadings: truncated data, offsets, keys and filter files") {
  test::TempDir tmp;
  for (const auto& e : fs::directory_iterator(fixture("datadings")))
    if (e.path().filename().string().rfind("basic.msgpack", 0) == 0)
      malformed::copy_fixture(e.path(), tmp.path());
  fs::path ds = tmp / "basic.msgpack";
  REQUIRE_NOTHROW(read_everything(ds.string(), "datadings"));
  for (const char* suffix : {"", ".offsets", ".keys"}) {
    const std::string suffix_name = suffix;
    CAPTURE(suffix_name);
    fs::path file = tmp / (std::string("basic.msgpack") + suffix);
    truncations("datadings", ds, file, ErrorCode::corrupt);
    flips("datadings", ds, file, 80, unchecked);  // msgpack: no checksum
  }
}

// Finding of this suite: the datadings plugin answers NOT_FOUND, not the
// INVALID_ARGUMENT plugin.h requires, for "..", "/etc/passwd" and the like.
TEST_CASE("datadings: node paths leaving the dataset are INVALID_ARGUMENT") {
  test::TempDir tmp;
  for (const auto& e : fs::directory_iterator(fixture("datadings")))
    if (e.path().filename().string().rfind("basic.msgpack", 0) == 0)
      malformed::copy_fixture(e.path(), tmp.path());
  traversal("datadings", tmp / "basic.msgpack");
}

// ---- bpcells ------------------------------------------------------------------

TEST_CASE("bpcells: every file of a packed and an unpacked matrix truncated") {
  test::TempDir tmp;
  for (const char* name : {"uint_packed_col_names", "double_unpacked_row"}) {
    const std::string fixture_name = name;
    CAPTURE(fixture_name);
    fs::path dir = malformed::copy_fixture(fixture(std::string("bpcells/") + name), tmp.path());
    REQUIRE_NOTHROW(read_everything(dir.string(), "bpcells"));
    for (const auto& e : fs::directory_iterator(dir)) {
      std::string file = e.path().filename().string();
      // Text files: a cut inside the last name still leaves a valid file
      // (and BPCells writes empty names files); version is checked below.
      if (file == "version" || file == "storage_order" || file == "col_names" ||
          file == "row_names")
        continue;
      CAPTURE(file);
      truncations("bpcells", dir, e.path(), ErrorCode::corrupt);
      flips("bpcells", dir, e.path(), 30, unchecked);  // no checksum (docs/formats/bpcells.md)
    }
    traversal("bpcells", dir);
  }
  fs::path dir = tmp / "uint_packed_col_names";
  const std::string col_names = malformed::slurp(dir / "col_names");
  malformed::spit(dir / "col_names", "cell1\ncell2\ncell3\n");
  expect_error(
      "bpcells 3 column names for 5 columns", [&] { read_everything(dir.string(), "bpcells"); },
      ErrorCode::corrupt, "col_names");
  malformed::spit(dir / "col_names", col_names);
  const std::string version = malformed::slurp(dir / "version");
  malformed::spit(dir / "version", "unpacked-uint-matrix-v9\n");
  expect_error(
      "bpcells version", [&] { read_everything(dir.string(), "bpcells"); }, ErrorCode::unsupported,
      "uint_packed_col_names");
  malformed::spit(dir / "version", version);
}

// ---- daf ----------------------------------------------------------------------

TEST_CASE("daf: truncated data and descriptors, wrong version") {
  test::TempDir tmp;
  fs::path dir = malformed::copy_fixture(fixture("daf/julia_v10_small"), tmp.path());
  REQUIRE_NOTHROW(read_everything(dir.string(), "daf"));
  traversal("daf", dir);
  std::vector<fs::path> daf_files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::string ext = e.path().extension().string();
    if (ext != ".data" && ext != ".json") continue;
    if (e.path().filename() == "daf.json") continue;
    CAPTURE(e.path().string());
    flips("daf", dir, e.path(), 20, unchecked);  // .data and .json of v1.0: no checksum
    daf_files.push_back(e.path());
  }
  // Every .data and .json file (but daf.json, done below) truncated at every
  // truncation point: each read is CORRUPT and names the repository. A dense
  // .data file's length is fixed by its axes, and a cut JSON object is not
  // JSON -- except the cut that removes only the final newline Julia writes
  // after it, which leaves the same valid descriptor: that one point is
  // skipped. (The sparse index files are not cut here: a Bool vector's
  // .nzind cut by a whole index is a valid vector with fewer trues.)
  REQUIRE(daf_files.size() >= 8);
  size_t cuts = 0;
  for (const fs::path& f : daf_files) {
    CAPTURE(f.string());
    const std::string original = malformed::slurp(f);
    for (size_t cut : malformed::truncation_points(original.size())) {
      if (f.extension() == ".json" && cut == original.size() - 1 && original.back() == '\n')
        continue;
      malformed::spit(f, original.substr(0, cut));
      expect_error(
          f.string() + " cut at " + std::to_string(cut),
          [&] { read_everything(dir.string(), "daf"); }, ErrorCode::corrupt, "julia_v10_small");
      ++cuts;
    }
    malformed::spit(f, original);
  }
  CHECK(cuts > 100);
  expect_error(
      "daf bad minor version fixture",
      [&] { read_everything(fixture("daf/bad_version_minor").string(), "daf"); },
      ErrorCode::unsupported, "bad_version_minor");
  const std::string daf_json = malformed::slurp(dir / "daf.json");
  malformed::spit(dir / "daf.json", R"({"version": [99, 0]})");
  expect_error(
      "daf major version 99", [&] { read_everything(dir.string(), "daf"); }, ErrorCode::unsupported,
      "julia_v10_small");
  malformed::spit(dir / "daf.json", daf_json);
}

// ---- every format: JSON arguments that are not objects ------------------------

// Open options, a create description and attributes are JSON objects
// (plugin.h); anything else is INVALID_ARGUMENT naming the argument, through
// one SDK function (sdk::parse_json_object), the same in every format.
TEST_CASE("every format: open options, descriptions and attributes that are not JSON objects") {
  test::TempDir tmp;
  const json not_an_object = json::array({1, 2});
  for (const auto& [format, name, node] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"n5", "x.n5", "a"},
           {"zarr", "x.zarr", "a"},
           {"npy", "x.npy", ""},
           {"datg", "x.datg", ""},
           {"bpcells", "x_bpcells", ""},
           {"datadings", "x.msgpack", ""},
           {"daf", "x.daf", "matrices/cell/gene/m"}}) {
    CAPTURE(format);
    const std::string path = (tmp / name).string();
    expect_error(
        format + " open options",
        [&] { stowage::Store::open(path, stowage::Mode::truncate, format, not_an_object); },
        ErrorCode::invalid_argument, "must be a JSON object, got: [1,2]");
    stowage::Store store = stowage::Store::open(path, stowage::Mode::truncate, format);
    expect_error(
        format + " create", [&] { store.create(node, not_an_object); }, ErrorCode::invalid_argument,
        "must be a JSON object, got: [1,2]");
    store.close();
  }
}
