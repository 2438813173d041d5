// Malformed repositories (copies of a real Julia fixture, damaged one way
// each) are errors with the right status and a message naming the file.
#include "daf_test_util.hpp"

#include <doctest/doctest.h>

#include <functional>

namespace {

using stowage::json;
using namespace daf_test;

// A writable copy of julia_v10_small.
struct Copy {
  test::TempDir tmp;
  fs::path repo = tmp / "copy";
  Copy() {
    fs::copy(fixtures_dir() / "julia_v10_small", repo, fs::copy_options::recursive);
    for (const auto& e : fs::recursive_directory_iterator(repo))
      fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
    fs::permissions(repo, fs::perms::owner_write, fs::perm_options::add);
  }
  void write(const std::string& file, const std::string& data) {
    test::write_file(repo / file, data);
  }
  std::string read(const std::string& file) { return test::read_file(repo / file); }
};

// Runs `read` on the damaged copy and checks the error.
void expect_error(Copy& c, stowage::ErrorCode code, const std::string& file_named,
                  const std::function<void(stowage::Store&)>& read) {
  try {
    stowage::Store s = stowage::Store::open(c.repo.string(), stowage::Mode::read, "daf");
    read(s);
    FAIL("no error for a damaged " << file_named);
  } catch (const stowage::Error& e) {
    INFO(e.what());
    CHECK(e.code() == code);
    CHECK(std::string(e.what()).find(file_named) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("daf malformed: an axis without its final newline") {
  Copy c;
  std::string axis = c.read("axes/cell.txt");
  c.write("axes/cell.txt", axis.substr(0, axis.size() - 1));
  expect_error(c, stowage::ErrorCode::corrupt, "axes/cell.txt",
               [](stowage::Store& s) { s.read_strings("axes/cell"); });
}

TEST_CASE("daf malformed: a vector .txt without its final newline") {
  Copy c;
  c.write("vectors/cell/names.json", "{\"format\":\"dense\",\"eltype\":\"String\"}\n");
  c.write("vectors/cell/names.txt", "a\nb\nc\nd");
  expect_error(c, stowage::ErrorCode::corrupt, "names.txt",
               [](stowage::Store& s) { s.read_strings("vectors/cell/names"); });
}

TEST_CASE("daf malformed: axis length mismatch with a dense .data") {
  Copy c;
  c.write("axes/cell.txt", c.read("axes/cell.txt") + "E\n");
  expect_error(c, stowage::ErrorCode::corrupt, "donor.data",
               [](stowage::Store& s) { s.describe("vectors/cell/donor"); });
}

TEST_CASE("daf malformed: truncated .data of a dense matrix") {
  Copy c;
  std::string data = c.read("matrices/cell/gene/dense_m.data");
  c.write("matrices/cell/gene/dense_m.data", data.substr(0, data.size() - 3));
  expect_error(c, stowage::ErrorCode::corrupt, "dense_m.data",
               [](stowage::Store& s) { s.array("matrices/cell/gene/dense_m").read_all<double>(); });
}

TEST_CASE("daf malformed: a sparse vector index out of range") {
  Copy c;
  std::string nzind = c.read("vectors/cell/sparse_x.nzind");  // UInt32
  nzind[4] = 9;                                               // second index: 9 > 4 cells
  c.write("vectors/cell/sparse_x.nzind", nzind);
  expect_error(c, stowage::ErrorCode::corrupt, "sparse_x.nzind",
               [](stowage::Store& s) { s.array("vectors/cell/sparse_x").read_all<double>(); });
}

TEST_CASE("daf malformed: a sparse matrix row index out of range") {
  Copy c;
  std::string rowval = c.read("matrices/cell/gene/sparse_m.rowval");  // Int32
  rowval[0] = 77;
  c.write("matrices/cell/gene/sparse_m.rowval", rowval);
  expect_error(c, stowage::ErrorCode::corrupt, "sparse_m.rowval", [](stowage::Store& s) {
    std::vector<double> out(8);
    s.sparse("matrices/cell/gene/sparse_m").read_dense(0, 0, 4, 2, out.data());
  });
}

TEST_CASE("daf malformed: a colptr that does not match the stored values") {
  Copy c;
  std::string colptr = c.read("matrices/cell/gene/sparse_m.colptr");
  colptr[colptr.size() - 4] = 50;  // last entry (Int32) no longer nnz + 1
  c.write("matrices/cell/gene/sparse_m.colptr", colptr);
  expect_error(c, stowage::ErrorCode::corrupt, "sparse_m.colptr",
               [](stowage::Store& s) { s.describe("matrices/cell/gene/sparse_m"); });
}

TEST_CASE("daf malformed: a missing .nzval of a Float64 sparse vector") {
  Copy c;
  fs::remove(c.repo / "vectors/cell/sparse_x.nzval");
  expect_error(c, stowage::ErrorCode::corrupt, "sparse_x.nzval",
               [](stowage::Store& s) { s.describe("vectors/cell/sparse_x"); });
}

TEST_CASE("daf malformed: scalars, descriptors and daf.json") {
  {
    Copy c;
    c.write("scalars/pi.json", "{\"type\":\"Float64\"}\n");
    expect_error(c, stowage::ErrorCode::corrupt, "pi.json",
                 [](stowage::Store& s) { s.describe(""); });
  }
  {
    Copy c;
    c.write("scalars/cells.json", "{\"type\":\"UInt8\",\"value\":300}\n");
    expect_error(c, stowage::ErrorCode::corrupt, "cells.json",
                 [](stowage::Store& s) { s.describe(""); });
  }
  {
    Copy c;
    c.write("vectors/cell/donor.json", "{\"format\":\"dense\",\"eltype\":\"Complex64\"}\n");
    expect_error(c, stowage::ErrorCode::corrupt, "donor.json",
                 [](stowage::Store& s) { s.describe("vectors/cell/donor"); });
  }
  {
    Copy c;
    c.write("daf.json", "{\"version\":[2,0]}\n");
    expect_error(c, stowage::ErrorCode::unsupported, "2.0", [](stowage::Store&) {});
  }
  {
    Copy c;
    c.write("daf.json", "[1,0]");
    expect_error(c, stowage::ErrorCode::corrupt, "daf.json", [](stowage::Store&) {});
  }
}
