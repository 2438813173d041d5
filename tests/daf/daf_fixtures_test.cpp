// Every repository in tests/fixtures/daf reads equal to its
// <fixture>.expected.json (and the dense .bin files next to it), through the
// real stowage API and the daf plugin.
#include "daf_test_util.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <set>
#include <thread>

namespace {

using stowage::json;
using namespace daf_test;

// Scalars: every value and its Daf type, through the root's attributes.
void check_scalars(const stowage::Store& store, const json& expected) {
  json attributes = store.describe_json("")["attributes"];
  for (const auto& [name, s] : expected["scalars"].items()) {
    INFO("scalar ", name);
    REQUIRE(attributes.contains(name));
    CHECK(attributes["daf_types"][name] == s["type"]);
    if (s["value"].is_number_float() || attributes[name].is_number_float())
      CHECK(attributes[name].get<double>() == s["value"].get<double>());
    else
      CHECK(attributes[name] == s["value"]);
  }
  CHECK(attributes.size() == expected["scalars"].size() + 1);  // + daf_types
}

void check_axes(const stowage::Store& store, const json& expected) {
  std::set<std::string> listed;
  for (const std::string& a : store.list("axes")) listed.insert(a);
  CHECK(listed.size() == expected["axes"].size());
  for (const auto& [axis, a] : expected["axes"].items()) {
    INFO("axis ", axis);
    CHECK(listed.count(axis));
    CHECK(store.read_strings("axes/" + axis) == a["entries"].get<std::vector<std::string>>());
  }
}

// Reads any numeric property (dense array, densified sparse vector, or CSC
// matrix) as C-order little-endian bytes.
std::string dense_bytes(const stowage::Store& store, const std::string& node) {
  stowage::NodeInfo info = store.describe(node);
  std::string out(info.element_count() * stowage::dtype_size(info.dtype), '\0');
  if (info.kind == stowage::NodeKind::sparse) {
    store.sparse(node).read_dense(0, 0, info.shape[0], info.shape[1], out.data());
  } else {
    if (info.kind != stowage::NodeKind::array)
      throw std::runtime_error(node + " is neither array nor sparse");
    store.array(node).read(std::vector<uint64_t>(info.shape.size(), 0), info.shape, out.data());
  }
  return out;
}

// One vector or matrix: kind, element type, storage, shape and values.
void check_property(const stowage::Store& store, const std::string& node, const json& e,
                    const fs::path& dir, bool matrix) {
  INFO("property ", node);
  json d = store.describe_json(node);
  std::string eltype = e["eltype"];
  CHECK(d["storage"]["daf_eltype"] == eltype);
  CHECK(d["storage"]["daf_storage"] == e["storage"]);
  if (e.contains("indtype")) CHECK(d["storage"]["daf_indtype"] == e["indtype"]);
  if (matrix)
    CHECK(d["shape"] == e["shape"]);
  else
    CHECK(d["shape"] == json::array({e["length"]}));
  if (eltype == "String") {
    REQUIRE(d["kind"] == "strings");
    std::vector<std::string> want;
    if (matrix)
      for (const json& row : e["values_row_major"])
        for (const json& v : row) want.push_back(v);
    else
      want = e["values"].get<std::vector<std::string>>();
    CHECK(store.read_strings(node) == want);
    return;
  }
  CHECK(d["kind"] == (matrix && e["storage"] == "sparse" ? "sparse" : "array"));
  CHECK(d["dtype"] == dtype_of(eltype));
  std::string want = test::read_file(dir / e["bin"].get<std::string>());
  CHECK(want.size() == e["bin_bytes"].get<size_t>());
  CHECK(dense_bytes(store, node) == want);
}

// Packed (indexed+zipped) properties say so in their storage description.
bool is_packed(const stowage::Store& store, const std::string& node) {
  return store.describe_json(node)["storage"].value("daf_packed", false);
}

// Properties whose descriptor on disk (or one of its components) is packed.
int packed_on_disk(const fs::path& repo) {
  int n = 0;
  for (const auto& e : fs::recursive_directory_iterator(repo))
    if (e.path().extension() == ".json" && e.path().parent_path() != repo &&
        e.path().parent_path().filename() != "scalars")
      n += test::read_file(e.path()).find("\"packed_format\"") != std::string::npos;
  return n;
}

void check_fixture(const std::string& name) {
  fs::path dir = fixtures_dir();
  json expected = test::read_json(dir / (name + ".expected.json"));
  REQUIRE_FALSE(expected["must_fail"].get<bool>());
  stowage::Store store = stowage::Store::open((dir / name).string(), stowage::Mode::read, "daf");
  CHECK(store.describe_json("")["daf_version"] == expected["daf_json_version"]);
  check_scalars(store, expected);
  check_axes(store, expected);
  int packed = 0, checked = 0;
  for (const auto& [axis, props] : expected["vectors"].items()) {
    std::vector<std::string> listed = store.list("vectors/" + axis);
    CHECK(listed.size() == props.size());
    for (const auto& [prop, e] : props.items()) {
      std::string node = "vectors/" + axis + "/" + prop;
      packed += is_packed(store, node);
      check_property(store, node, e, dir, false), ++checked;
    }
  }
  for (const auto& [rows, by_cols] : expected["matrices"].items())
    for (const auto& [cols, props] : by_cols.items()) {
      CHECK(store.list("matrices/" + rows + "/" + cols).size() == props.size());
      for (const auto& [prop, e] : props.items()) {
        std::string node = "matrices/" + rows + "/" + cols + "/" + prop;
        packed += is_packed(store, node);
        check_property(store, node, e, dir, true), ++checked;
      }
    }
  MESSAGE(name, ": ", checked, " properties equal (", packed, " of them packed)");
  CHECK(checked > 0);
  CHECK(packed == packed_on_disk(dir / name));
}

}  // namespace

TEST_CASE("daf fixtures: Julia [1,0] small (real output, Bool sparse with and without .nzval)") {
  check_fixture("julia_v10_small");
}
TEST_CASE("daf fixtures: Julia [1,0] example_cells (real output, 856 x 683 UInt8 matrices)") {
  check_fixture("julia_v10_example_cells");
}
TEST_CASE("daf fixtures: Julia 0.3.0 [1,1] small (v1.1 descriptors, Int64 indices)") {
  check_fixture("julia_v11_small");
}
TEST_CASE("daf fixtures: generated [1,0] with every type") { check_fixture("gen_v10_types"); }
TEST_CASE("daf fixtures: generated [1,1] with every type") { check_fixture("gen_v11_types"); }
TEST_CASE("daf fixtures: Julia 0.3.0 packed, gzip shards (decoded through the gzip codec)") {
  check_fixture("julia_v11_packed_gzip");
}
TEST_CASE("daf fixtures: Julia 0.3.0 packed, zstd shards (decoded through the zstd codec)" *
          test::needs({"zstd"})) {
  check_fixture("julia_v11_packed_zstd");
}

TEST_CASE("daf fixtures: a packed codec we do not decode is described, and reads name the file") {
  test::TempDir tmp;
  fs::path repo = tmp / "packed";
  fs::copy(fixtures_dir() / "julia_v11_packed_zstd", repo, fs::copy_options::recursive);
  fs::path json_file = repo / "matrices/cell/gene/dense.json";
  fs::permissions(json_file, fs::perms::owner_write, fs::perm_options::add);
  std::string text = test::read_file(json_file);
  text.replace(text.find("\"zstd\""), 6, "\"zstd_bitshuffle\"");
  test::write_file(json_file, text);
  stowage::Store store = stowage::Store::open(repo.string(), stowage::Mode::read, "daf");
  CHECK(store.describe("matrices/cell/gene/dense").shape == std::vector<uint64_t>{1200, 8});
  try {
    store.array("matrices/cell/gene/dense").read_all<double>();
    FAIL("an unsupported packed codec was read");
  } catch (const stowage::Error& err) {
    CHECK(err.code() == stowage::ErrorCode::unsupported);
    CHECK(std::string(err.what()).find("dense.zip") != std::string::npos);
    CHECK(std::string(err.what()).find("zstd_bitshuffle") != std::string::npos);
  }
}

TEST_CASE("daf fixtures: bad_version_minor is refused, naming the version") {
  fs::path dir = fixtures_dir();
  json expected = test::read_json(dir / "bad_version_minor.expected.json");
  REQUIRE(expected["must_fail"].get<bool>());
  try {
    stowage::Store::open((dir / "bad_version_minor").string(), stowage::Mode::read, "daf");
    FAIL("bad_version_minor was opened");
  } catch (const stowage::Error& err) {
    CHECK(err.code() == stowage::ErrorCode::unsupported);
    CHECK(std::string(err.what()).find("1.9") != std::string::npos);
    CHECK(std::string(err.what()).find("daf.json") != std::string::npos);
  }
}

TEST_CASE("daf fixtures: format detection") {
  fs::path dir = fixtures_dir();
  CHECK(stowage::Registry::global().detect_format((dir / "julia_v10_small").string()) == "daf");
}

TEST_CASE("daf: every integer index type and both descriptor schemas, written by a Python peer") {
  test::TempDir tmp;
  fs::path repo = tmp / "peer.daf";
  fs::path script = test::source_root() / "tests" / "daf" / "daf_peer_writer.py";
  test::RunResult r = test::run(test::python() + " " + test::quote(script.string()) + " " +
                                test::quote(repo.string()));
  REQUIRE_MESSAGE(r.status == 0, r.output);
  json expected = json::parse(r.output);
  stowage::Store store = stowage::Store::open(repo.string(), stowage::Mode::read, "daf");
  for (const auto& [name, values] : expected["vectors"].items()) {
    INFO("vector ", name);
    CHECK(json(store.array("vectors/cell/" + name).read_all<double>()) == values);
  }
  for (const auto& [name, rows] : expected["matrices"].items()) {
    INFO("matrix ", name);
    std::string node = "matrices/cell/gene/" + name;
    stowage::NodeInfo info = store.describe(node);
    REQUIRE(info.kind == stowage::NodeKind::sparse);
    json got = json::array();
    if (info.dtype == stowage::DType::boolean) {
      std::vector<uint8_t> dense(6 * 4);
      store.sparse(node).read_dense(0, 0, 6, 4, dense.data());
      for (int i = 0; i < 6; ++i) {
        json row = json::array();
        for (int j = 0; j < 4; ++j) row.push_back(dense[i * 4 + j] != 0);
        got.push_back(row);
      }
    } else {
      std::vector<double> dense(6 * 4);
      store.sparse(node).read_dense(0, 0, 6, 4, dense.data());
      for (int i = 0; i < 6; ++i)
        got.push_back(std::vector<double>(dense.begin() + i * 4, dense.begin() + i * 4 + 4));
    }
    CHECK(got == rows);
  }
  CHECK(store.list("matrices/cell/gene").size() == expected["matrices"].size());
}

TEST_CASE("daf: concurrent readers of a cold store see the expected values") {
  fs::path dir = fixtures_dir();
  json expected = test::read_json(dir / "gen_v11_types.expected.json");
  stowage::Store store =
      stowage::Store::open((dir / "gen_v11_types").string(), stowage::Mode::read, "daf");
  std::vector<std::pair<std::string, std::string>> numeric;  // node, expected bytes
  for (const auto& [axis, props] : expected["vectors"].items())
    for (const auto& [prop, e] : props.items())
      if (e.contains("bin"))
        numeric.emplace_back("vectors/" + axis + "/" + prop,
                             test::read_file(dir / e["bin"].get<std::string>()));
  for (const auto& [rows, by_cols] : expected["matrices"].items())
    for (const auto& [cols, props] : by_cols.items())
      for (const auto& [prop, e] : props.items())
        if (e.contains("bin"))
          numeric.emplace_back("matrices/" + rows + "/" + cols + "/" + prop,
                               test::read_file(dir / e["bin"].get<std::string>()));
  std::atomic<int> mismatches{0}, errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      for (size_t i = 0; i < numeric.size(); ++i) {
        const auto& [node, want] = numeric[(i + t * 5) % numeric.size()];
        try {
          mismatches += dense_bytes(store, node) != want;
        } catch (const std::exception&) {
          ++errors;
        }
      }
    });
  for (std::thread& th : threads) th.join();
  CHECK(numeric.size() > 20);
  CHECK(mismatches == 0);
  CHECK(errors == 0);
}

// daf_peer.py judges the repositories stowage writes (daf_write_test.cpp).
// It is our own reading of the spec, so it is first checked here against
// every repository someone else wrote -- DataAxesFormats.jl's (julia_*) and
// daf_gen.py's (gen_*) -- value by value against their .expected.json and
// .expected/*.bin files (daf_peer_referee.py does the comparing).
// The packed fixtures (julia_v11_packed_*) store properties as .zip shards,
// which the peer does not read: it must fail on them rather than guess.
TEST_CASE("daf_peer.py reads every flat fixture exactly as expected (a check of the peer)") {
  const fs::path referee = test::source_root() / "tests" / "daf" / "daf_peer_referee.py";
  size_t fixtures = 0;
  for (const char* name : {"julia_v10_small", "julia_v11_small", "julia_v10_example_cells",
                           "gen_v10_types", "gen_v11_types"}) {
    CAPTURE(name);
    const fs::path dir = fixtures_dir() / name;
    test::RunResult r =
        test::run(test::python() + " " + test::quote(referee.string()) + " " +
                  test::quote(dir.string()) + " " + test::quote(dir.string() + ".expected.json"));
    REQUIRE_MESSAGE(r.status == 0, r.output);
    json report = json::parse(r.output);
    CHECK(report["mismatches"] == json::array());
    CHECK(report["compared"].get<int>() > 20);
    ++fixtures;
  }
  CHECK(fixtures == 5);
  for (const char* name : {"julia_v11_packed_gzip", "julia_v11_packed_zstd"}) {
    CAPTURE(name);
    const fs::path dir = fixtures_dir() / name;
    const fs::path script = test::source_root() / "tests" / "daf" / "daf_peer.py";
    test::RunResult r = test::run(test::python() + " " + test::quote(script.string()) + " " +
                                  test::quote(dir.string()));
    CHECK_MESSAGE(r.status != 0, "daf_peer.py read a packed repository it cannot decode");
  }
}
