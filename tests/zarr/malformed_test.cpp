// Bad Zarr input fails with a clear error naming the file: metadata that is
// no JSON, data types and compressors this plugin does not read, filters,
// impossible shapes and fill values, chunk files of the wrong size or that
// do not decode. And the tree's rules when writing.
#include "zarr_helpers.hpp"

using namespace zarrtest;

namespace {

// A store whose one array "a" has the .zarray `text` (and chunk "0.0" holding `chunk`, if given).
fs::path store_with(const test::TempDir& tmp, const std::string& text,
                    const std::string& chunk = "") {
  const fs::path root = tmp / "bad.zarr";
  fs::create_directories(root / "a");
  test::write_file(root / ".zgroup", R"({"zarr_format": 2})");
  test::write_file(root / "a" / ".zarray", text);
  if (!chunk.empty()) test::write_file(root / "a" / "0.0", chunk);
  return root;
}

std::string zarray(const std::string& dtype, const std::string& compressor,
                   const std::string& more = "") {
  return R"({"zarr_format":2,"shape":[4,4],"chunks":[2,2],"dtype":)" + dtype + R"(,"compressor":)" +
         compressor + R"(,"fill_value":0,"order":"C","filters":null)" + more + "}";
}

// The error of describing and of reading array "a": both must be `code`,
// naming `file` (relative to the store) and saying `words`.
void check_refused(const fs::path& root, stowage::ErrorCode code, const std::string& file,
                   const std::string& words) {
  stowage::Store store = open_zarr(root.string());
  for (int via = 0; via < 2; ++via) {
    CAPTURE(via);
    std::string message = via == 0 ? TEST_REQUIRE_ERROR(store.describe("a"), code)
                                   : TEST_REQUIRE_ERROR(read_bytes(store.array("a")), code);
    CHECK_MESSAGE(message.find((root / file).string()) != std::string::npos, message);
    CHECK_MESSAGE(message.find(words) != std::string::npos, message);
  }
}

}  // namespace

TEST_CASE("zarr malformed: bad metadata is an error naming the .zarray") {
  using stowage::ErrorCode;
  struct Case {
    std::string text;
    ErrorCode code;
    std::string words;
  };
  const std::vector<Case> cases = {
      {R"({"zarr_format":2,"shape":[4,4],)", ErrorCode::corrupt, "not valid JSON"},
      {"[1,2]", ErrorCode::corrupt, "must hold a JSON object"},
      {zarray(R"("<c32")", "null"), ErrorCode::unsupported, R"("<c32" is not supported)"},
      {zarray(R"("<f16")", "null"), ErrorCode::unsupported, R"("<f16" is not supported)"},
      {zarray(R"("|S4")", "null"), ErrorCode::unsupported, R"("|S4" is not supported)"},
      {zarray(R"([["x","<i4"]])", "null"), ErrorCode::unsupported, "structured data type"},
      {zarray(R"("uint16")", "null"), ErrorCode::corrupt, "is not a numpy type string"},
      {zarray(R"("|u2")", "null"), ErrorCode::corrupt, "has no byte order"},
      // (a compressor no codec plugin answers to: codec_names_test.cpp)
      {zarray(R"("<u2")", R"({"level":1})"), ErrorCode::corrupt,
       "\"compressor\" must be null or an object"},
      {zarray(R"("<u2")", R"({"id":"lzma","format":2})"), ErrorCode::unsupported, "\"format\" 2"},
      {zarray(R"("<u2")", R"({"id":"zlib","level":"high"})"), ErrorCode::corrupt,
       "\"level\" must be an integer"},
      // filters (filter_chain.hpp; an unknown one: codec_names_test.cpp):
      // what a filter plugin refuses in a file is CORRUPT, or UNSUPPORTED
      {zarray(R"("<u2")", "null", R"(,"filters":{"id":"delta"})"), ErrorCode::corrupt,
       R"("filters" must be null or a list)"},
      {zarray(R"("<u2")", "null", R"(,"filters":[{"dtype":"<u2"}])"), ErrorCode::corrupt,
       R"(with a string "id")"},
      {zarray(R"("<u2")", "null", R"(,"filters":[{"id":"delta","dtype":"<c8"}])"),
       ErrorCode::unsupported, R"(delta: "dtype" "<c8" is not supported)"},
      {zarray(R"("<u2")", "null", R"(,"filters":[{"id":"astype","encode_dtype":"<q4"}])"),
       ErrorCode::corrupt, R"(astype: "encode_dtype": "<q4" is no numeric numpy typestr)"},
      {zarray(R"("<u2")", "null", R"(,"filters":[{"id":"shuffle","elementsize":3}])"),
       ErrorCode::corrupt, "a chunk of 8 bytes is no whole number of 3-byte elements"},
      {zarray(R"("<u2")", "null", R"(,"filters":[{"id":"shuffle","elementsize":-1}])"),
       ErrorCode::corrupt, R"("elementsize" is -1, allowed range 0..1024)"},
      {zarray(R"("<u2")", "null", R"(,"filters":[{"id":"delta","dtype":"|b1"}])"),
       ErrorCode::unsupported, R"(delta: "dtype" "|b1" is not supported)"},
      {zarray(R"("|u1")", "null",
              R"(,"filters":[{"id":"astype","encode_dtype":"<f8","decode_dtype":"|u1"},)"
              R"({"id":"astype","encode_dtype":"<u2","decode_dtype":"|u1"}])"),
       ErrorCode::unsupported,
       "makes a chunk of 4 bytes 64 bytes long (at most 8 times as long and 2 GiB)"},
      {R"({"zarr_format":2,"shape":[4],"chunks":[2,2],"dtype":"<u2","compressor":null,"fill_value":0,"order":"C"})",
       ErrorCode::corrupt, "\"shape\" has 1 entries but \"chunks\" has 2"},
      {R"({"zarr_format":2,"shape":[4,4],"chunks":[0,2],"dtype":"<u2","compressor":null,"fill_value":0})",
       ErrorCode::corrupt, "each entry must be an integer >= 1"},
      {R"({"zarr_format":2,"shape":[9223372036854775807,9223372036854775807,9223372036854775807],)"
       R"("chunks":[1,1,1],"dtype":"<u2","compressor":null,"fill_value":0})",
       ErrorCode::corrupt, "more than 2^64 chunks"},
      {R"({"zarr_format":2,"shape":[4,4],"chunks":[65536,65536],"dtype":"<u2","compressor":null,"fill_value":0})",
       ErrorCode::unsupported, "over 2 GiB"},
      {zarray(R"("<u2")", "null", R"(,"zarr_format":3)"), ErrorCode::unsupported,
       "\"zarr_format\" 3"},
      {zarray(R"("<u2")", "null", R"(,"order":"K")"), ErrorCode::corrupt, "\"order\" must be"},
      {zarray(R"("<u2")", "null", R"(,"dimension_separator":"_")"), ErrorCode::corrupt,
       "\"dimension_separator\""},
      {zarray(R"("|u1")", "null", R"(,"fill_value":300)"), ErrorCode::corrupt,
       "\"fill_value\" 300"},
      {zarray(R"("<i2")", "null", R"(,"fill_value":1.5)"), ErrorCode::corrupt,
       "\"fill_value\" 1.5"},
      {zarray(R"("<f4")", "null", R"(,"fill_value":"nan")"), ErrorCode::corrupt,
       "\"fill_value\" \"nan\""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    test::TempDir tmp;
    check_refused(store_with(tmp, c.text), c.code, "a/.zarray", c.words);
  }
}

TEST_CASE("zarr malformed: bad .zattrs and chunk files are errors naming them") {
  using stowage::ErrorCode;
  {
    test::TempDir tmp;
    const fs::path root = store_with(tmp, zarray(R"("<u2")", "null"));
    test::write_file(root / "a" / ".zattrs", "{\"x\": ");
    stowage::Store store = open_zarr(root.string());
    std::string message = TEST_REQUIRE_ERROR(store.describe("a"), ErrorCode::corrupt);
    CHECK(message.find((root / "a" / ".zattrs").string() + ": not valid JSON") !=
          std::string::npos);
  }
  {  // an uncompressed chunk of the wrong size
    test::TempDir tmp;
    const fs::path root = store_with(tmp, zarray(R"("<u2")", "null"), std::string(7, 'x'));
    stowage::Store store = open_zarr(root.string());
    std::string message = TEST_REQUIRE_ERROR(read_bytes(store.array("a")), ErrorCode::corrupt);
    CHECK(message.find((root / "a" / "0.0").string() + ": chunk file is 7 bytes") !=
          std::string::npos);
  }
  {  // a filtered chunk (astype <u2 stored as <f8: 32 bytes) of the size of an unfiltered one
    test::TempDir tmp;
    const fs::path root = store_with(
        tmp,
        zarray(R"("<u2")", "null",
               R"(,"filters":[{"id":"astype","encode_dtype":"<f8","decode_dtype":"<u2"}])"),
        std::string(8, 'x'));
    stowage::Store store = open_zarr(root.string());
    std::string message = TEST_REQUIRE_ERROR(read_bytes(store.array("a")), ErrorCode::corrupt);
    CHECK_MESSAGE(message.find((root / "a" / "0.0").string() +
                               ": chunk file is 8 bytes; an uncompressed chunk of this "
                               "array is 32") != std::string::npos,
                  message);
  }
  if (!test::plugin_off("gzip")) {  // a compressed chunk that does not decode
    test::TempDir tmp;
    const fs::path root =
        store_with(tmp, zarray(R"("<u2")", R"({"id":"zlib","level":1})"), "not zlib at all");
    stowage::Store store = open_zarr(root.string());
    std::string message = TEST_REQUIRE_ERROR(read_bytes(store.array("a")), ErrorCode::corrupt);
    CHECK(message.find((root / "a" / "0.0").string() + ": ") != std::string::npos);
  }
  if (!test::plugin_off("lz4")) {  // numcodecs' lz4 that decodes to fewer bytes than a chunk
    test::TempDir tmp;
    const std::string short_block("\x02\x00\x00\x00\x20\x01\x02", 7);  // 2 literal bytes
    const fs::path root =
        store_with(tmp, zarray(R"("<u2")", R"({"id":"lz4","acceleration":1})"), short_block);
    stowage::Store store = open_zarr(root.string());
    std::string message = TEST_REQUIRE_ERROR(read_bytes(store.array("a")), ErrorCode::corrupt);
    CHECK(message.find((root / "a" / "0.0").string() + ": chunk decodes to 2 bytes") !=
          std::string::npos);
  }
}

TEST_CASE("zarr writing: groups, arrays, attributes, removal, moves, and what is refused") {
  using stowage::ErrorCode;
  test::TempDir tmp;
  const std::string path = (tmp / "w.zarr").string();
  // Made, then opened in place (a new store would be built in a staging directory until close).
  stowage::Store::open(path, stowage::Mode::create, "zarr", {{"zarr_version", 2}}).close();
  stowage::Store store =
      stowage::Store::open(path, stowage::Mode::create, "zarr", {{"zarr_version", 2}});
  store.create("g/h", {{"kind", "group"}, {"attributes", {{"k", "v"}}}});
  CHECK(fs::exists(tmp / "w.zarr" / "g" / ".zgroup"));  // parents become groups, as in zarr-python
  CHECK(store.describe("g/h").attributes == json{{"k", "v"}});
  const json desc = {
      {"kind", "array"}, {"dtype", "int32"}, {"shape", {5}}, {"chunks", {2}}, {"fill_value", -1}};
  store.create("g/h/a", desc);
  CHECK(store.list("g/h") == std::vector<std::string>{"a"});
  TEST_REQUIRE_ERROR(store.create("g/h/a", desc), ErrorCode::invalid_argument);
  TEST_REQUIRE_ERROR(store.create("g/h/a/inner", {{"kind", "group"}}), ErrorCode::not_found);
  TEST_REQUIRE_ERROR(store.create("x", {{"kind", "array"}, {"dtype", "float128"}, {"shape", {2}}}),
                     ErrorCode::unsupported);
  TEST_REQUIRE_ERROR(
      store.create(
          "x",
          {{"kind", "array"}, {"dtype", "int8"}, {"shape", {2}}, {"codec", {{"type", "nope"}}}}),
      ErrorCode::not_found);
  // Without a fill value it is 0, as zarr-python's default.
  store.create("u", {{"kind", "array"}, {"dtype", "uint16"}, {"shape", {3}}, {"chunks", {2}}});
  CHECK(store.describe_json("u")["fill_value"] == 0);
  std::vector<int32_t> values{1, 2, 3};
  store.array("g/h/a").write({1}, {3},
                             values.data());  // chunk 0 partly, chunk 1 whole, chunk 2 never
  std::vector<int32_t> back(5);
  store.array("g/h/a").read({0}, {5}, back.data());
  CHECK(back == std::vector<int32_t>{-1, 1, 2, 3, -1});
  CHECK_FALSE(store.array("g/h/a").chunk_exists({2}));
  store.set_attributes("g/h/a", {{"units", "m"}});
  CHECK(store.describe("g/h/a").attributes == json{{"units", "m"}});
  store.move("g/h/a", "g/b", false);
  CHECK(store.list("g") == std::vector<std::string>{"b", "h"});
  store.array("g/b").read({0}, {5}, back.data());
  CHECK(back == std::vector<int32_t>{-1, 1, 2, 3, -1});
  store.remove("g/h");
  CHECK(store.list("g") == std::vector<std::string>{"b"});
  TEST_REQUIRE_ERROR(store.describe("g/h"), ErrorCode::not_found);
  store.close();

  stowage::Store reader = open_zarr(path);
  TEST_REQUIRE_ERROR(reader.create("y", {{"kind", "group"}}), ErrorCode::invalid_argument);
  // A directory of other files is not replaced.
  fs::create_directories(tmp / "other");
  test::write_file(tmp / "other" / "notes.txt", "keep me");
  TEST_REQUIRE_ERROR(open_zarr((tmp / "other").string(), stowage::Mode::truncate),
                     ErrorCode::invalid_argument);
  CHECK(fs::exists(tmp / "other" / "notes.txt"));
}

TEST_CASE(
    "zarr: a compressed chunk file larger than its chunk (one gzip member per byte) is read whole" *
    test::needs({"gzip"})) {
  // 2048 uint16 in one chunk, stored as 4096 concatenated gzip members of
  // one byte each (about 86 KB, 21 times the chunk): a first read sized for
  // a chunk sees only part of it. zarr-python reads it too (gzip.decompress
  // reads every member).
  test::TempDir tmp;
  const fs::path root = tmp / "members.zarr";
  fs::create_directories(root / "a");
  test::write_file(root / ".zgroup", R"({"zarr_format": 2})");
  test::write_file(
      root / "a" / ".zarray",
      R"({"zarr_format":2,"shape":[2048],"chunks":[2048],"dtype":"<u2","compressor":{"id":"gzip","level":1},)"
      R"("fill_value":0,"order":"C","filters":null})");
  test::RunResult r = test::run_python(R"PY(
import gzip, sys
data = bytes((i * 7 + i // 256) % 256 for i in range(4096))
with open(sys.argv[1], "wb") as f:
    f.write(b"".join(gzip.compress(data[i:i + 1], mtime=0) for i in range(len(data))))
)PY",
                                       test::quote((root / "a" / "0").string()));
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(fs::file_size(root / "a" / "0") > 16 * 4096);
  stowage::Store store = open_zarr(root.string());
  std::string want(4096, '\0');
  for (int i = 0; i < 4096; ++i) want[i] = static_cast<char>((i * 7 + i / 256) % 256);
  CHECK(read_bytes(store.array("a")) == want);
}
