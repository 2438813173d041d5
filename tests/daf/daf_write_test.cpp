// Repositories written through stowage are read back, with the same values,
// by the independent Python reader (daf_peer.py) and by the plugin itself;
// modes, deletes and name checks behave like Julia's FilesDaf.
#include "daf_test_util.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>

namespace {

using stowage::json;
using namespace daf_test;

const std::vector<std::string> kCells = {"c1", "c2", "β-cell", "tab\there", "cr\r"};
const std::vector<std::string> kGenes = {"g1", "g2", "g3"};

// Dense data of a given C type for a 1-D node, written through Array::write.
template <class T>
void write_vector(stowage::Store& store, const std::string& node, const char* dtype,
                  const std::vector<T>& values, json attributes = json::object()) {
  store.create(node, {{"kind", "array"},
                      {"dtype", dtype},
                      {"shape", {values.size()}},
                      {"attributes", attributes}});
  if (!values.empty()) store.array(node).write({0}, {values.size()}, values.data());
}

// The content every write test stores; returns what the peer must see.
json write_everything(stowage::Store& store) {
  json want;
  store.write_strings("axes/cell", kCells);
  store.write_strings("axes/gene", kGenes);
  store.write_strings("axes/batch", {});
  want["axes"] = {{"cell", kCells}, {"gene", kGenes}, {"batch", json::array()}};

  json scalars = {{"name", "written"}, {"flag", true},         {"i8", -8},
                  {"u16", 60000},      {"i64", -6400000000LL}, {"u64", 9000000000000000000ULL},
                  {"f32", 0.25},       {"f64", 1e20},          {"s", "h\u00e9\"llo\nworld"}};
  json types = {
      {"flag", "Bool"}, {"i8", "Int8"}, {"u16", "UInt16"}, {"u64", "UInt64"}, {"f32", "Float32"}};
  json attributes = scalars;
  attributes["daf_types"] = types;
  store.set_attributes("", attributes);
  for (const auto& [k, v] : scalars.items()) {
    std::string t = types.value(k, v.is_string()         ? "String"
                                   : v.is_number_float() ? "Float64"
                                                         : "Int64");
    want["scalars"][k] = {{"type", t}, {"value", v}};
  }

  write_vector<int8_t>(store, "vectors/cell/v_i8", "int8", {-128, 0, 1, 2, 127});
  write_vector<uint16_t>(store, "vectors/cell/v_u16", "uint16", {0, 1, 65535, 3, 4});
  write_vector<int32_t>(store, "vectors/cell/v_i32", "int32",
                        {-2147483647 - 1, 5, 0, 7, 2147483647});
  write_vector<uint64_t>(store, "vectors/cell/v_u64", "uint64",
                         {0, 1, 18446744073709551615ULL, 3, 4});
  write_vector<float>(store, "vectors/cell/v_f32", "float32", {0.5f, -1.25f, 0, 3e38f, 1e-30f});
  write_vector<double>(store, "vectors/cell/v_f64", "float64", {0.1, 0, -0.0, 1e300, 2.5});
  write_vector<uint8_t>(store, "vectors/cell/v_bool", "bool", {1, 0, 0, 1, 1});
  write_vector<double>(store, "vectors/cell/v_sparse", "float64", {0, 4.5, 0, 0, -1},
                       {{"daf_storage", "sparse"}});
  write_vector<double>(store, "vectors/batch/empty", "float64", {});
  store.write_strings("vectors/cell/v_str", {"a", "", "ü", "d e", "x"});
  want["vectors"]["cell"] = {
      {"v_i8", {{"eltype", "Int8"}, {"storage", "dense"}, {"values", {-128, 0, 1, 2, 127}}}},
      {"v_u16", {{"eltype", "UInt16"}, {"storage", "dense"}, {"values", {0, 1, 65535, 3, 4}}}},
      {"v_i32",
       {{"eltype", "Int32"},
        {"storage", "dense"},
        {"values", {-2147483648LL, 5, 0, 7, 2147483647}}}},
      {"v_u64",
       {{"eltype", "UInt64"},
        {"storage", "dense"},
        {"values", {0, 1, 18446744073709551615ULL, 3, 4}}}},
      {"v_f32",
       {{"eltype", "Float32"},
        {"storage", "dense"},
        {"values", {0.5, -1.25, 0.0, double(3e38f), double(1e-30f)}}}},
      {"v_f64",
       {{"eltype", "Float64"}, {"storage", "dense"}, {"values", {0.1, 0.0, -0.0, 1e300, 2.5}}}},
      {"v_bool",
       {{"eltype", "Bool"}, {"storage", "dense"}, {"values", {true, false, false, true, true}}}},
      {"v_sparse",
       {{"eltype", "Float64"}, {"storage", "sparse"}, {"values", {0.0, 4.5, 0.0, 0.0, -1.0}}}},
      {"v_str",
       {{"eltype", "String"}, {"storage", "dense"}, {"values", {"a", "", "ü", "d e", "x"}}}}};
  want["vectors"]["batch"] = {
      {"empty", {{"eltype", "Float64"}, {"storage", "dense"}, {"values", json::array()}}}};

  // A dense 5 x 3 matrix written in C order; stored column-major.
  std::vector<double> dense(15);
  json dense_rows = json::array();
  for (int r = 0; r < 5; ++r) {
    json row = json::array();
    for (int c = 0; c < 3; ++c) row.push_back(dense[r * 3 + c] = r * 10 + c + 0.5);
    dense_rows.push_back(row);
  }
  store.create("matrices/cell/gene/dense",
               {{"kind", "array"}, {"dtype", "float64"}, {"shape", {5, 3}}});
  store.array("matrices/cell/gene/dense").write({0, 0}, {5, 3}, dense.data());
  want["matrices"]["cell"]["gene"]["dense"] = {{"eltype", "Float64"},
                                               {"storage", "dense"},
                                               {"shape", {5, 3}},
                                               {"values_row_major", dense_rows}};

  // A square Int16 matrix on one axis.
  std::vector<int16_t> square = {1, -2, 3, 4, 5, -6, 7, 8, 32767};
  store.create("matrices/gene/gene/square",
               {{"kind", "array"}, {"dtype", "int16"}, {"shape", {3, 3}}});
  store.array("matrices/gene/gene/square").write({0, 0}, {3, 3}, square.data());
  want["matrices"]["gene"]["gene"]["square"] = {
      {"eltype", "Int16"},
      {"storage", "dense"},
      {"shape", {3, 3}},
      {"values_row_major", {{1, -2, 3}, {4, 5, -6}, {7, 8, 32767}}}};

  // A CSC Float32 matrix appended in two pieces: columns 0-1, then 2.
  store.create("matrices/cell/gene/csc",
               {{"kind", "sparse"}, {"dtype", "float32"}, {"shape", {5, 3}}, {"layout", "csc"}});
  stowage::Sparse csc = store.sparse("matrices/cell/gene/csc");
  stowage::SparseSlice a{{0, 2, 2}, {0, 4}, {}}, b{{0, 1}, {2}, {}};
  std::vector<float> va = {1.5f, -2}, vb = {7};
  a.values.assign(reinterpret_cast<uint8_t*>(va.data()), reinterpret_cast<uint8_t*>(va.data() + 2));
  b.values.assign(reinterpret_cast<uint8_t*>(vb.data()), reinterpret_cast<uint8_t*>(vb.data() + 1));
  csc.append(a, 2);
  csc.append(b, 1);
  want["matrices"]["cell"]["gene"]["csc"] = {
      {"eltype", "Float32"},
      {"storage", "sparse"},
      {"shape", {5, 3}},
      {"values_row_major",
       {{1.5, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 7.0}, {0.0, 0.0, 0.0}, {-2.0, 0.0, 0.0}}}};

  // A Bool CSC matrix whose explicit false must not be stored.
  store.create("matrices/gene/cell/mask",
               {{"kind", "sparse"}, {"dtype", "bool"}, {"shape", {3, 5}}, {"layout", "csc"}});
  stowage::SparseSlice m{{0, 1, 1, 3, 3, 3}, {1, 0, 2}, {1, 0, 1}};
  store.sparse("matrices/gene/cell/mask").append(m, 5);
  want["matrices"]["gene"]["cell"]["mask"] = {{"eltype", "Bool"},
                                              {"storage", "sparse"},
                                              {"shape", {3, 5}},
                                              {"values_row_major",
                                               {{false, false, false, false, false},
                                                {true, false, false, false, false},
                                                {false, false, true, false, false}}}};

  // A String matrix written in C order.
  std::vector<std::string> labels;
  json label_rows = json::array();
  for (int r = 0; r < 3; ++r) {
    json row = json::array();
    for (int c = 0; c < 5; ++c) {
      labels.push_back(r == 1 && c == 2 ? "" : "L" + std::to_string(r) + std::to_string(c));
      row.push_back(labels.back());
    }
    label_rows.push_back(row);
  }
  store.write_strings("matrices/gene/cell/labels", labels);
  want["matrices"]["gene"]["cell"]["labels"] = {{"eltype", "String"},
                                                {"storage", "dense"},
                                                {"shape", {3, 5}},
                                                {"values_row_major", label_rows}};
  return want;
}

// Compares the peer's view with what we wrote; floats by value.
void check_same(const json& got, const json& want, const std::string& where) {
  INFO(where);
  if (want.is_number() && got.is_number()) {
    if (want.is_number_float() || got.is_number_float()) {
      CHECK(got.get<double>() == want.get<double>());
      CHECK(std::signbit(got.get<double>()) == std::signbit(want.get<double>()));
    } else {
      CHECK(got == want);
    }
  } else if (want.is_object()) {
    REQUIRE(got.is_object());
    for (const auto& [k, v] : want.items()) {
      REQUIRE_MESSAGE(got.contains(k), (where + "/" + k + " is missing"));
      check_same(got[k], v, where + "/" + k);
    }
  } else if (want.is_array()) {
    REQUIRE(got.is_array());
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i)
      check_same(got[i], want[i], where + "[" + std::to_string(i) + "]");
  } else {
    CHECK(got == want);
  }
}

// Our own reader sees the same values (peer-shaped JSON built through the API).
void check_plugin_reads(const fs::path& repo, const json& want) {
  stowage::Store store = stowage::Store::open(repo.string(), stowage::Mode::read, "daf");
  json attributes = store.describe_json("")["attributes"];
  for (const auto& [k, s] : want["scalars"].items()) {
    CHECK(attributes["daf_types"][k] == s["type"]);
    check_same(attributes[k], s["value"], "plugin scalar " + k);
  }
  CHECK(store.read_strings("axes/cell") == kCells);
  for (const auto& [axis, props] : want["vectors"].items())
    for (const auto& [name, p] : props.items()) {
      std::string node = "vectors/" + axis + "/" + name;
      if (p["eltype"] == "String") {
        check_same(json(store.read_strings(node)), p["values"], node);
        continue;
      }
      stowage::Array arr = store.array(node);
      CHECK(arr.info().raw["storage"]["daf_storage"] == p["storage"]);
      if (p["eltype"] == "Float64") check_same(json(arr.read_all<double>()), p["values"], node);
      if (p["eltype"] == "Int8") check_same(json(arr.read_all<int8_t>()), p["values"], node);
      if (p["eltype"] == "UInt64") check_same(json(arr.read_all<uint64_t>()), p["values"], node);
    }
  std::vector<double> dense = store.array("matrices/cell/gene/dense").read_all<double>();
  CHECK(dense[1 * 3 + 2] == 12.5);
  std::vector<float> csc(15);
  store.sparse("matrices/cell/gene/csc").read_dense(0, 0, 5, 3, csc.data());
  CHECK(csc[4 * 3 + 0] == -2.0f);
  CHECK(csc[2 * 3 + 2] == 7.0f);
  CHECK(store.describe("matrices/gene/cell/mask").nnz == 2);
}

void write_and_check(const json& options, int minor) {
  test::TempDir tmp;
  fs::path repo = tmp / "written.daf";
  json want;
  {
    stowage::Store store =
        stowage::Store::open(repo.string(), stowage::Mode::truncate, "daf", options);
    want = write_everything(store);
    CHECK_FALSE(fs::exists(repo));  // built beside it, published by close()
    store.close();
  }
  REQUIRE(fs::is_directory(repo));
  json got = peer_read(repo);
  CHECK(got["version"] == json::array({1, minor}));
  CHECK(got["problems"] == json::array());
  CHECK(got["has_metadata"] == (minor == 1));
  check_same(got["axes"], want["axes"], "axes");
  check_same(got["scalars"], want["scalars"], "scalars");
  check_same(got["vectors"], want["vectors"], "vectors");
  check_same(got["matrices"], want["matrices"], "matrices");
  CHECK(got["vectors"]["cell"].size() == want["vectors"]["cell"].size());
  check_plugin_reads(repo, want);

  // The most widely readable form: exact daf.json, v1.0 descriptors, Bool
  // sparse with .nzval, Julia's number syntax.
  CHECK(test::read_file(repo / "daf.json") == "{\"version\":[1," + std::to_string(minor) + "]}\n");
  CHECK(fs::exists(repo / "matrices/gene/cell/mask.nzval"));
  CHECK(test::read_file(repo / "scalars/f64.json") == "{\"type\":\"Float64\",\"value\":1.0e20}\n");
  if (minor == 0)
    CHECK(test::read_file(repo / "matrices/cell/gene/csc.json") ==
          "{\"format\":\"sparse\",\"eltype\":\"Float32\",\"indtype\":\"UInt32\"}\n");
  else
    CHECK(test::read_file(repo / "matrices/cell/gene/csc.json").find("\"n_elements\":3") !=
          std::string::npos);
}

}  // namespace

TEST_CASE("daf write [1,0] (default): the Python reader sees every value") {
  write_and_check(json::object(), 0);
}
TEST_CASE("daf write [1,1]: metadata.json in sync, the Python reader sees every value") {
  write_and_check({{"version", {1, 1}}}, 1);
}

TEST_CASE("daf modes r, r+, w+, w follow Julia") {
  test::TempDir tmp;
  std::string repo = (tmp / "m.daf").string();
  auto code_of = [](auto&& f) {
    try {
      f();
    } catch (const stowage::Error& e) {
      return e.code();
    }
    return stowage::ErrorCode::ok;
  };
  CHECK(code_of([&] { stowage::Store::open(repo, stowage::Mode::read, "daf"); }) ==
        stowage::ErrorCode::not_found);
  CHECK(code_of([&] { stowage::Store::open(repo, stowage::Mode::update, "daf"); }) ==
        stowage::ErrorCode::not_found);
  {
    stowage::Store s = stowage::Store::open(repo, stowage::Mode::create, "daf");  // w+: created
    s.write_strings("axes/cell", {"a", "b"});
    s.write_strings("vectors/cell/keep", {"x", "y"});
    s.close();
  }
  {
    stowage::Store s = stowage::Store::open(repo, stowage::Mode::create, "daf");  // w+: kept
    CHECK(s.read_strings("vectors/cell/keep") == std::vector<std::string>{"x", "y"});
    s.close();
  }
  {
    stowage::Store s = stowage::Store::open(repo, stowage::Mode::read, "daf");  // r: no writes
    CHECK(code_of([&] { s.write_strings("axes/gene", {"g"}); }) ==
          stowage::ErrorCode::invalid_argument);
  }
  {  // r+: a partial region write keeps the rest (read-modify-write of chunks)
    stowage::Store s = stowage::Store::open(repo, stowage::Mode::update, "daf");
    s.write_strings("axes/gene", {"g1", "g2", "g3"});
    std::vector<int32_t> all = {1, 2, 3, 4, 5, 6};
    s.create("matrices/cell/gene/m", {{"kind", "array"}, {"dtype", "int32"}, {"shape", {2, 3}}});
    s.array("matrices/cell/gene/m").write({0, 0}, {2, 3}, all.data());
    s.close();
  }
  {
    stowage::Store s = stowage::Store::open(repo, stowage::Mode::update, "daf");
    int32_t v = 99;
    s.array("matrices/cell/gene/m").write({1, 1}, {1, 1}, &v);
    s.close();
    stowage::Store r = stowage::Store::open(repo, stowage::Mode::read, "daf");
    CHECK(r.array("matrices/cell/gene/m").read_all<int32_t>() ==
          std::vector<int32_t>{1, 2, 3, 4, 99, 6});
  }
  {  // w: replaced
    stowage::Store s = stowage::Store::open(repo, stowage::Mode::truncate, "daf");
    s.write_strings("axes/other", {"o"});
    s.close();
    stowage::Store r = stowage::Store::open(repo, stowage::Mode::read, "daf");
    CHECK(r.list("axes") == std::vector<std::string>{"other"});
  }
  fs::create_directories(tmp / "not_daf");
  test::write_file(tmp / "not_daf" / "precious.txt", "x");
  CHECK(code_of([&] {
          stowage::Store::open((tmp / "not_daf").string(), stowage::Mode::truncate, "daf");
        }) == stowage::ErrorCode::invalid_argument);
  CHECK(fs::exists(tmp / "not_daf" / "precious.txt"));
}

TEST_CASE("daf deletes remove every file of a property, and axes with their properties") {
  test::TempDir tmp;
  fs::path repo = tmp / "d.daf";
  stowage::Store s = stowage::Store::open(repo.string(), stowage::Mode::truncate, "daf");
  write_everything(s);
  s.close();
  s = stowage::Store::open(repo.string(), stowage::Mode::update, "daf");
  s.remove("matrices/cell/gene/csc");
  for (const char* suffix : {".json", ".colptr", ".rowval", ".nzval"})
    CHECK_FALSE(fs::exists(repo / ("matrices/cell/gene/csc" + std::string(suffix))));
  s.remove("vectors/cell/v_sparse");
  CHECK_FALSE(fs::exists(repo / "vectors/cell/v_sparse.nzind"));
  s.remove("axes/gene");
  CHECK_FALSE(fs::exists(repo / "axes/gene.txt"));
  CHECK_FALSE(fs::exists(repo / "matrices/cell/gene"));
  CHECK_FALSE(fs::exists(repo / "matrices/gene"));
  s.set_attributes("", {{"only", 1}});
  s.close();
  json got = peer_read(repo);
  CHECK(got["problems"] == json::array());
  CHECK(got["scalars"] == json{{"only", {{"type", "Int64"}, {"value", 1}}}});
  CHECK_FALSE(got["vectors"]["cell"].contains("v_sparse"));
  CHECK(got["matrices"]["gene"].is_null());
}

TEST_CASE("daf refuses names that are not file names, reserved names and bad entries") {
  test::TempDir tmp;
  stowage::Store s = stowage::Store::open((tmp / "n.daf").string(), stowage::Mode::truncate, "daf");
  s.write_strings("axes/cell", {"a", "b"});
  auto code_of = [](auto&& f) {
    try {
      f();
    } catch (const stowage::Error& e) {
      return e.code();
    }
    return stowage::ErrorCode::ok;
  };
  using stowage::ErrorCode;
  CHECK(code_of([&] { s.write_strings("vectors/cell/name", {"x", "y"}); }) ==
        ErrorCode::invalid_argument);
  CHECK(code_of([&] { s.write_strings("vectors/cell/index", {"x", "y"}); }) ==
        ErrorCode::invalid_argument);
  CHECK(code_of([&] { s.write_strings("vectors/cell/..", {"x", "y"}); }) ==
        ErrorCode::invalid_argument);
  CHECK(code_of([&] { s.write_strings("vectors/cell/a/b", {"x", "y"}); }) == ErrorCode::not_found);
  CHECK(code_of([&] { s.write_strings("axes/gene", {"g", "g"}); }) == ErrorCode::invalid_argument);
  CHECK(code_of([&] { s.write_strings("axes/gene", {"g\nh"}); }) == ErrorCode::invalid_argument);
  CHECK(code_of([&] { s.write_strings("vectors/cell/s", {"x"}); }) == ErrorCode::invalid_argument);
  CHECK(code_of([&] { s.write_strings("axes/cell", {"a", "c"}); }) == ErrorCode::invalid_argument);
  CHECK(code_of([&] { s.set_attributes("", {{"bad/name", 1}}); }) == ErrorCode::invalid_argument);
  CHECK(code_of([&] { s.set_attributes("", {{"x", 300}, {"daf_types", {{"x", "UInt8"}}}}); }) ==
        ErrorCode::invalid_argument);
  CHECK(code_of([&] { s.set_attributes("", {{"x", json::array({1})}}); }) ==
        ErrorCode::invalid_argument);
  CHECK(code_of([&] {
          s.create("vectors/cell/v", {{"kind", "array"}, {"dtype", "float64"}, {"shape", {3}}});
        }) == ErrorCode::invalid_argument);  // the axis has 2 entries
  CHECK(code_of([&] {
          s.create(
              "matrices/cell/cell/x",
              {{"kind", "sparse"}, {"dtype", "float64"}, {"shape", {2, 2}}, {"layout", "csr"}});
        }) == ErrorCode::unsupported);
  s.close();
}

TEST_CASE(
    "daf large matrices: many tiles, region writes (read-modify-write), sparse storage, read back by Python") {
  test::TempDir tmp;
  fs::path repo = tmp / "big.daf";
  const uint64_t rows = 2100,
                 cols = 130;  // Float64: tiles of 1024 x 64 -> a 3 x 3 grid with cropped edges
  std::vector<std::string> r_names(rows), c_names(cols);
  for (uint64_t i = 0; i < rows; ++i) r_names[i] = "r" + std::to_string(i);
  for (uint64_t j = 0; j < cols; ++j) c_names[j] = "c" + std::to_string(j);
  auto value = [](uint64_t r, uint64_t c) {
    return (r % 7 == 0 || c % 5 == 0) ? double(r * 1000 + c) : 0.0;
  };
  std::vector<double> m(rows * cols);
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c = 0; c < cols; ++c) m[r * cols + c] = value(r, c);
  {
    stowage::Store s = stowage::Store::open(repo.string(), stowage::Mode::truncate, "daf");
    s.write_strings("axes/row", r_names);
    s.write_strings("axes/col", c_names);
    for (const char* name : {"dense", "as_sparse"}) {
      json attrs =
          std::string(name) == "as_sparse" ? json{{"daf_storage", "sparse"}} : json::object();
      s.create(std::string("matrices/row/col/") + name, {{"kind", "array"},
                                                         {"dtype", "float64"},
                                                         {"shape", {rows, cols}},
                                                         {"attributes", attrs}});
      stowage::Array a = s.array(std::string("matrices/row/col/") + name);
      CHECK(a.chunk_grid().size() == 2);
      CHECK(a.chunk_grid()[0] * a.chunk_grid()[1] > 1);
      // Two overlapping region writes that cut through tiles.
      a.write({0, 0}, {1500, cols}, m.data());
      a.write({1500, 0}, {rows - 1500, cols}, m.data() + 1500 * cols);
    }
    s.close();
  }
  {  // r+: a region in the middle, across tile borders
    stowage::Store s = stowage::Store::open(repo.string(), stowage::Mode::update, "daf");
    std::vector<double> patch(200 * 10, -1.0);
    s.array("matrices/row/col/dense").write({1000, 60}, {200, 10}, patch.data());
    s.close();
    for (uint64_t r = 1000; r < 1200; ++r)
      for (uint64_t c = 60; c < 70; ++c) m[r * cols + c] = -1.0;
  }
  stowage::Store s = stowage::Store::open(repo.string(), stowage::Mode::read, "daf");
  CHECK(s.array("matrices/row/col/dense").read_all<double>() == m);
  CHECK(s.describe_json("matrices/row/col/as_sparse")["storage"]["daf_storage"] == "sparse");
  CHECK(fs::exists(repo / "matrices/row/col/as_sparse.colptr"));
  json got = peer_read(repo);
  CHECK(got["problems"] == json::array());
  const json& dense = got["matrices"]["row"]["col"]["dense"]["values_row_major"];
  const json& sparse = got["matrices"]["row"]["col"]["as_sparse"]["values_row_major"];
  REQUIRE(dense.size() == rows);
  REQUIRE(sparse.size() == rows);
  size_t mismatches = 0;
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c = 0; c < cols; ++c) {
      mismatches += dense[r][c].get<double>() != m[r * cols + c];
      mismatches += sparse[r][c].get<double>() != value(r, c);
    }
  CHECK(mismatches == 0);
}

// The staged .data of an array being written has its full size from the
// start: tiles never written (here everything after the first tile, and a
// whole vector) are zeros, in dense and in sparse storage.
TEST_CASE("daf chunks never written are zeros, dense and sparse, through close() and before it") {
  test::TempDir tmp;
  fs::path repo = tmp / "holes.daf";
  const uint64_t rows = 2100, cols = 130;  // Float64: a 3 x 3 tile grid of 1024 x 64
  std::vector<std::string> r_names(rows), c_names(cols);
  for (uint64_t i = 0; i < rows; ++i) r_names[i] = "r" + std::to_string(i);
  for (uint64_t j = 0; j < cols; ++j) c_names[j] = "c" + std::to_string(j);
  std::vector<double> corner(100 * 10), want(rows * cols, 0.0);
  for (uint64_t r = 0; r < 100; ++r)
    for (uint64_t c = 0; c < 10; ++c)
      corner[r * 10 + c] = want[r * cols + c] = double(r * 10 + c + 1);
  {
    stowage::Store s = stowage::Store::open(repo.string(), stowage::Mode::truncate, "daf");
    s.write_strings("axes/row", r_names);
    s.write_strings("axes/col", c_names);
    for (const char* name : {"dense", "as_sparse"}) {
      json attrs =
          std::string(name) == "as_sparse" ? json{{"daf_storage", "sparse"}} : json::object();
      std::string node = std::string("matrices/row/col/") + name;
      s.create(node, {{"kind", "array"},
                      {"dtype", "float64"},
                      {"shape", {rows, cols}},
                      {"attributes", attrs}});
      s.array(node).write({0, 0}, {100, 10}, corner.data());
      CHECK(s.array(node).read_all<double>() == want);  // pending: read back from the staged file
    }
    s.create("vectors/row/never", {{"kind", "array"}, {"dtype", "int32"}, {"shape", {rows}}});
    s.close();
  }
  CHECK(fs::file_size(repo / "matrices/row/col/dense.data") == rows * cols * 8);
  CHECK(fs::file_size(repo / "vectors/row/never.data") == rows * 4);
  stowage::Store s = stowage::Store::open(repo.string(), stowage::Mode::read, "daf");
  CHECK(s.array("matrices/row/col/dense").read_all<double>() == want);
  CHECK(s.describe_json("matrices/row/col/as_sparse")["storage"]["daf_nnz"] == 1000);
  std::vector<double> sparse(rows * cols);
  s.sparse("matrices/row/col/as_sparse").read_dense(0, 0, rows, cols, sparse.data());
  CHECK(sparse == want);
  CHECK(s.array("vectors/row/never").read_all<int32_t>() == std::vector<int32_t>(rows, 0));
  CHECK(peer_read(repo)["problems"] == json::array());
}

TEST_CASE("daf w: a failing close() leaves the existing repository untouched") {
  test::TempDir tmp;
  fs::path repo = tmp / "keep.daf";
  {
    stowage::Store s = stowage::Store::open(repo.string(), stowage::Mode::truncate, "daf");
    s.write_strings("axes/cell", {"a", "b"});
    s.close();
  }
  {
    stowage::Store s = stowage::Store::open(repo.string(), stowage::Mode::truncate, "daf");
    // A vector on an axis whose entries are never written: close() must fail.
    s.create("vectors/ghost/x", {{"kind", "array"}, {"dtype", "int32"}, {"shape", {3}}});
    try {
      s.close();
      FAIL("close() accepted a property on an axis that was never written");
    } catch (const stowage::Error& e) {
      CHECK(std::string(e.what()).find("ghost") != std::string::npos);
    }
  }
  stowage::Store r = stowage::Store::open(repo.string(), stowage::Mode::read, "daf");
  CHECK(r.read_strings("axes/cell") == std::vector<std::string>{"a", "b"});
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(tmp.path()))
    entries += e.path().filename() != "keep.daf";
  CHECK(entries == 0);  // no temporary directory left behind
}

TEST_CASE("daf option relayout: each matrix is also stored transposed, like Julia's set_matrix!") {
  test::TempDir tmp;
  fs::path repo = tmp / "relayout.daf";
  json want;
  {
    stowage::Store store =
        stowage::Store::open(repo.string(), stowage::Mode::truncate, "daf", {{"relayout", true}});
    want = write_everything(store);
    store.close();
  }
  json got = peer_read(repo);
  CHECK(got["problems"] == json::array());
  int transposed = 0;
  for (const auto& [rows, by_cols] : want["matrices"].items())
    for (const auto& [cols, props] : by_cols.items())
      for (const auto& [name, m] : props.items()) {
        INFO("relayout of matrices/", rows, "/", cols, "/", name);
        if (rows == cols) continue;  // a square matrix on one axis is stored once
        const json& t = got["matrices"][cols][rows][name];
        REQUIRE(t.is_object());
        CHECK(t["eltype"] == m["eltype"]);
        const json& a = m["values_row_major"];
        for (size_t i = 0; i < a.size(); ++i)
          for (size_t j = 0; j < a[i].size(); ++j)
            check_same(t["values_row_major"][j][i], a[i][j], name);
        ++transposed;
      }
  CHECK(transposed == 4);  // dense, csc, mask, labels (square is not relayouted)
  CHECK(fs::exists(repo / "matrices/gene/cell/csc.nzval"));
}

// Issue 21: non-ASCII everywhere a Daf name can be -- the repository's
// directory, axis names and entries, vector, matrix and scalar names -- in a
// [1,1] repository (metadata.json keys too): read back by the plugin and by
// daf_peer.py; a damaged file's error names it with its non-ASCII path.
TEST_CASE(
    "daf non-ASCII repository path, axis and property names: round trip, Python reader, errors") {
  test::TempDir tmp;
  const fs::path repo = tmp / "donn\u00e9es-\u03b2" / "r\u00e9pertoire.daf";
  fs::create_directories(repo.parent_path());
  const std::string cell = "zell\u00e9", gene = "g\u00e8ne";
  const std::vector<std::string> cells = {"\u03b1", "\u00df-1", "\U0001F9EC"},
                                 genes = {"\u6f22", "x"};
  const std::vector<double> sizes = {1.5, -0.0, 1e300};
  const std::vector<int32_t> counts = {1, 2, 3, 4, 5, 6};
  {
    stowage::Store s =
        stowage::Store::open(repo.string(), stowage::Mode::truncate, "daf", {{"version", {1, 1}}});
    s.write_strings("axes/" + cell, cells);
    s.write_strings("axes/" + gene, genes);
    s.set_attributes("", {{"na\u00efve", "\u00fcber"}});
    write_vector<double>(s, "vectors/" + cell + "/gr\u00f6\u00dfe", "float64", sizes);
    s.create("matrices/" + cell + "/" + gene + "/\u03bc",
             {{"kind", "array"}, {"dtype", "int32"}, {"shape", {3, 2}}});
    s.array("matrices/" + cell + "/" + gene + "/\u03bc").write({0, 0}, {3, 2}, counts.data());
    s.close();
  }
  {
    stowage::Store s = stowage::Store::open(repo.string(), stowage::Mode::read, "daf");
    CHECK(s.read_strings("axes/" + cell) == cells);
    CHECK(s.array("vectors/" + cell + "/gr\u00f6\u00dfe").read_all<double>() == sizes);
    CHECK(s.array("matrices/" + cell + "/" + gene + "/\u03bc").read_all<int32_t>() == counts);
    CHECK(s.describe("").attributes["na\u00efve"] == "\u00fcber");
    std::vector<std::string> vectors = s.list("vectors/" + cell);
    CHECK(std::find(vectors.begin(), vectors.end(), "gr\u00f6\u00dfe") != vectors.end());
  }
  json peer = peer_read(repo);
  CHECK_MESSAGE(peer["problems"].empty(), peer["problems"].dump());
  CHECK(peer["has_metadata"] == true);
  CHECK(peer["axes"][cell] == cells);
  CHECK(peer["axes"][gene] == genes);
  CHECK(peer["scalars"]["na\u00efve"]["value"] == "\u00fcber");
  CHECK(peer["vectors"][cell]["gr\u00f6\u00dfe"]["values"] == json(sizes));
  CHECK(peer["matrices"][cell][gene]["\u03bc"]["values_row_major"] ==
        json::array({{1, 2}, {3, 4}, {5, 6}}));
  // A truncated .data: the error names the file by its non-ASCII path.
  const fs::path data = repo / "vectors" / cell / "gr\u00f6\u00dfe.data";
  REQUIRE(fs::exists(data));
  test::write_file(data, test::read_file(data).substr(0, 12));
  try {
    stowage::Store s = stowage::Store::open(repo.string(), stowage::Mode::read, "daf");
    s.array("vectors/" + cell + "/gr\u00f6\u00dfe").read_all<double>();
    FAIL("a truncated .data was read");
  } catch (const stowage::Error& e) {
    CHECK(e.code() == stowage::ErrorCode::corrupt);
    CHECK_MESSAGE(std::string(e.what()).find(data.string()) != std::string::npos, e.what());
  }
}
