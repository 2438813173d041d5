// The Zarr plugin against the reference store z5 wrote (tests/fixtures/zarr),
// locally and from memory (mem://), and the plugin's sources on the storage
// layer: no file-system I/O of its own, no thread-local state.
#include "storage_checks.hpp"
#include "zarr_helpers.hpp"

using namespace zarrtest;

namespace {

const char* kFixture = "v2_uint16_blosc_slash";

// Checks the store at `path` holds the fixture: its tree, its description
// and every value, also in parts that cut across chunks.
void check_fixture(const std::string& path) {
  const json expected = test::read_json(fixture(std::string(kFixture) + ".expected.json"));
  const std::string values = test::read_file(fixture(std::string(kFixture) + ".expected.bin"));
  stowage::Store store = stowage::Store::open(path);  // detected
  CHECK(store.format() == "zarr");
  CHECK(store.list("") == std::vector<std::string>{"data"});
  CHECK(store.describe("").kind == stowage::NodeKind::group);
  CHECK(store.describe("").attributes == expected["root_attributes"]);

  const json d = store.describe_json("data");
  CAPTURE(d.dump());
  CHECK(d["kind"] == "array");
  CHECK(d["dtype"] == expected["dtype"]);
  CHECK(d["shape"] == expected["shape"]);
  CHECK(d["chunks"] == expected["chunks"]);
  CHECK(d["byte_order"] == expected["byte_order"]);
  CHECK(d["order"] == expected["order"]);
  CHECK(d["fill_value"] == expected["fill_value"]);
  CHECK(d["codec"]["type"] == expected["compressor"]);
  CHECK(d["codec"]["cname"] == "lz4");
  CHECK(d["codec"]["typesize"] == 2);
  CHECK(d["storage"]["dimension_separator"] == expected["dimension_separator"]);
  CHECK(d["storage"]["compressor"]["id"] == "blosc");
  CHECK(store.list("data").empty());

  stowage::Array a = store.array("data");
  REQUIRE(a.dtype() == stowage::DType::uint16);
  CHECK(read_bytes(a) == values);  // the host is little-endian, as the expected bytes are
  CHECK(a.chunk_exists({2, 1, 2}));

  // A block across chunk boundaries, against the same block of the expected values.
  const std::vector<uint64_t> offset{5, 13, 7}, shape{9, 11, 30};
  std::vector<uint16_t> part(9 * 11 * 30);
  a.read(offset, shape, part.data());
  size_t mismatches = 0;
  for (uint64_t i = 0; i < shape[0]; ++i)
    for (uint64_t j = 0; j < shape[1]; ++j)
      for (uint64_t k = 0; k < shape[2]; ++k) {
        uint16_t want;
        std::memcpy(
            &want,
            values.data() + 2 * (((offset[0] + i) * 30 + offset[1] + j) * 40 + offset[2] + k), 2);
        mismatches += part[(i * shape[1] + j) * shape[2] + k] != want;
      }
  CHECK(mismatches == 0);
}

}  // namespace

TEST_CASE(
    "zarr fixture: the v2 store z5 wrote (blosc lz4, '/' separator) reads equal to its expected values" *
    test::needs({"blosc"})) {
  check_fixture(fixture(std::string(kFixture) + ".zarr").string());
}

TEST_CASE(
    "zarr fixture: the same store from memory (mem://) reads the same, through the storage layer" *
    test::needs({"blosc"})) {
  const std::string key = "mem://zarr-fixtures/" + std::string(kFixture) + ".zarr";
  test::copy_into_storage(fixture(std::string(kFixture) + ".zarr"), key);
  check_fixture(key);
}

TEST_CASE(
    "zarr: the plugin does all its I/O through the storage layer and keeps no thread-local state") {
  CHECK(test::check_no_direct_file_io(test::source_root() / "plugins" / "formats" / "zarr") >= 7);
  CHECK_FALSE(test::has_tls_segment("stowage_format_zarr"));
}

TEST_CASE("zarr: detection is by the directory's names, v2 and v3") {
  test::TempDir tmp;
  // An empty directory named *.zarr is a store to create into.
  fs::create_directories(tmp / "empty.zarr");
  stowage::Store made = stowage::Store::open((tmp / "empty.zarr").string(), stowage::Mode::create,
                                             "", {{"zarr_version", 2}});
  CHECK(made.format() == "zarr");
  made.close();
  CHECK(fs::exists(tmp / "empty.zarr" / ".zgroup"));
  // An array at the root is detected from its .zarray.
  fs::create_directories(tmp / "root-array");
  test::write_file(tmp / "root-array" / ".zarray",
                   R"({"zarr_format":2,"shape":[3],"chunks":[2],"dtype":"<i2","compressor":null,)"
                   R"("fill_value":-1,"order":"C","filters":null})");
  test::write_file(tmp / "root-array" / "0", std::string("\x01\x00\x02\x00", 4));
  stowage::Store store = stowage::Store::open((tmp / "root-array").string());
  CHECK(store.format() == "zarr");
  std::vector<int16_t> values(3);
  store.array("").read({0}, {3}, values.data());
  CHECK(values == std::vector<int16_t>{1, 2, -1});  // the missing chunk 1 is the fill value
  // Zarr v3 (zarr.json) is detected too.
  fs::create_directories(tmp / "v3.zarr");
  test::write_file(tmp / "v3.zarr" / "zarr.json", R"({"zarr_format":3,"node_type":"group"})");
  CHECK(stowage::Store::open((tmp / "v3.zarr").string()).format() == "zarr");
}
