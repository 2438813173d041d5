// Mode "w" as a transaction (core/src/staging.cpp): only a close() that
// completes publishes; discard(), a store never closed and a failed open
// leave the old dataset byte for byte and nothing beside it; "w" replaces
// only a dataset of its format; messages name the user's path; formats that
// publish a whole file at close take one writer at a time.
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <vector>

namespace stowage::detail {
std::string without_temporary_names(std::string text);  // core/src/staging.hpp
}

namespace fs = std::filesystem;
using stowage::Mode;
using stowage::Store;

namespace {

// An .npy of `n` int32 values, each `value`, written through the library.
void write_npy(const std::string& path, int32_t value, uint64_t n = 6) {
  Store s = Store::open(path, Mode::truncate, "npy");
  s.create("", {{"kind", "array"}, {"dtype", "int32"}, {"shape", {n}}});
  std::vector<int32_t> v(n, value);
  s.array("").write({0}, {n}, v.data());
  s.close();
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Starts a "w" store over `path` that writes `value` everywhere, not closed.
Store half_written(const std::string& path, int32_t value) {
  Store s = Store::open(path, Mode::truncate, "npy");
  s.create("", {{"kind", "array"}, {"dtype", "int32"}, {"shape", {6}}});
  std::vector<int32_t> v(6, value);
  s.array("").write({0}, {6}, v.data());
  return s;
}

}  // namespace

TEST_CASE("mode w publishes only at a close that completes") {
  test::TempDir tmp;
  const std::string path = (tmp / "a.npy").string();
  write_npy(path, 1);
  const std::string old = test::read_file(path);

  {  // a store never closed: its destructor publishes nothing
    Store s = half_written(path, 2);
    CHECK(s.staging_location().find(".stowage-tmp.") != std::string::npos);
    CHECK(test::read_file(path) == old);
  }
  CHECK(test::read_file(path) == old);
  CHECK(names_in(tmp.path()) == std::vector<std::string>{"a.npy"});

  Store s = half_written(path, 3);  // discard(): the same, and it never throws
  s.discard();
  s.discard();
  CHECK(s.closed());
  CHECK(test::read_file(path) == old);
  CHECK(names_in(tmp.path()) == std::vector<std::string>{"a.npy"});

  Store t = half_written(path, 4);
  t.close();
  std::vector<int32_t> got(6);
  Store::open(path).array("").read({0}, {6}, got.data());
  CHECK(got == std::vector<int32_t>(6, 4));
  CHECK(names_in(tmp.path()) == std::vector<std::string>{"a.npy"});
}

TEST_CASE("mode w over a directory dataset swaps it whole, in memory too") {
  for (const std::string& root : {std::string("mem://staging-test"), std::string()}) {
    test::TempDir tmp;
    const std::string path = root.empty() ? (tmp / "c.n5").string() : root + "/c.n5";
    {
      Store s = Store::open(path, Mode::truncate, "n5");
      s.create("old", {{"kind", "group"}});
      s.close();
    }
    {
      Store s = Store::open(path, Mode::truncate, "n5");
      s.create("new", {{"kind", "group"}});
      CHECK(Store::open(path).list() ==
            std::vector<std::string>{"old"});  // readers see the old one
    }  // never closed
    CHECK(Store::open(path).list() == std::vector<std::string>{"old"});
    Store s = Store::open(path, Mode::truncate, "n5");
    s.create("new", {{"kind", "group"}});
    s.close();
    CHECK(Store::open(path).list() == std::vector<std::string>{"new"});
  }
}

TEST_CASE("mode w refuses what is not a dataset of its format") {
  test::TempDir tmp;
  const fs::path text = tmp / "results.txt";
  test::write_file(text, "keep me\n");
  try {
    Store::open(text.string(), Mode::truncate, "npy");
    FAIL("a text file was opened for replacing");
  } catch (const stowage::Error& e) {
    CHECK(e.code() == stowage::ErrorCode::invalid_argument);
    CHECK(std::string(e.what()).find(text.string() +
                                     " exists and is not a dataset of format npy") == 0);
  }
  CHECK(test::read_file(text) == "keep me\n");
  CHECK(names_in(tmp.path()) == std::vector<std::string>{"results.txt"});
  test::write_file(tmp / "empty.npy", "");  // nothing to lose
  write_npy((tmp / "empty.npy").string(), 5);
  CHECK(fs::file_size(tmp / "empty.npy") > 0);
}

TEST_CASE("errors of a store being created name the user's path") {
  test::TempDir tmp;
  const std::string path = (tmp / "named.npy").string();
  Store s = Store::open(path, Mode::truncate, "npy");
  try {
    s.create(
        "",
        {{"kind", "array"}, {"dtype", "int32"}, {"shape", {2}}, {"attributes", {{"unit", "um"}}}});
    FAIL("attributes accepted");
  } catch (const stowage::Error& e) {
    const std::string what = e.what();
    CHECK(what.find(path + ":") == 0);
    CHECK(what.find("stowage-tmp") == std::string::npos);
  }
  CHECK(stowage::detail::without_temporary_names("a/.x.npy.stowage-tmp.12.3: cannot create") ==
        "a/x.npy: cannot create");
  CHECK(stowage::detail::without_temporary_names("'.x.stowage-tmp.7.0' and .y.stowage-tmp.1") ==
        "'x' and y");
}

TEST_CASE("a format that publishes at close takes one writer at a time") {
  test::TempDir tmp;
  const std::string path = (tmp / "one.npy").string();
  write_npy(path, 1);
  Store first = Store::open(path, Mode::update);
  try {
    Store::open(path, Mode::update);
    FAIL("a second writer opened it");
  } catch (const stowage::Error& e) {
    CHECK(std::string(e.what()).find(path + ": another writer has this dataset open") == 0);
  }
  CHECK_NOTHROW(Store::open(path));  // readers are welcome
  first.close();
  CHECK_NOTHROW(Store::open(path, Mode::update).close());
  // N5 takes several (each write is published when it returns).
  Store a = Store::open((tmp / "c.n5").string(), Mode::truncate, "n5");
  a.close();
  Store b = Store::open((tmp / "c.n5").string(), Mode::update);
  CHECK_NOTHROW(Store::open((tmp / "c.n5").string(), Mode::update));
  CHECK(b.shared_writes());
}
