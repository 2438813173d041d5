// Detection of a local path whose storage fails: the message says what the
// file system said (a symlink loop, permission denied), with the path as the
// user typed it, instead of "no format plugin recognises it". Store::open and
// stowage-info give the same message. (Over HTTP: tests/http/detect_over_http_test.cpp.)
#include "test_support.hpp"

#include <stowage/stowage.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <string>

namespace {

namespace fs = std::filesystem;

std::string stowage_info() {
  return (test::build_root() / "tools" / "info" / "stowage-info").string();
}

// The error of detecting `path` through the API, checked against Store::open's.
test::Failure detection_failure(const std::string& path) {
  test::Failure f = test::failure_of([&] { stowage::Registry::global().detect_format(path); });
  test::Failure opened = test::failure_of([&] { stowage::Store::open(path); });
  CHECK(opened.code == f.code);
  CHECK(opened.message == f.message);
  return f;
}

// A small N5 container in `dir`.
void make_n5(const fs::path& dir) {
  fs::create_directories(dir);
  test::write_file(dir / "attributes.json", R"({"n5": "2.5.1"})");
}

}  // namespace

TEST_CASE("detection: a symlink loop says so, naming the path as typed") {
  test::TempDir tmp;
  const fs::path loop = tmp / "loop.n5";
  fs::create_symlink("loop.n5", loop);
  test::Failure f = detection_failure(loop.string());
  CHECK(f.code == stowage::ErrorCode::io);
  CHECK(f.message ==
        loop.string() +
            ": cannot detect its format: cannot stat: Too many levels of symbolic links");
  test::RunResult r = test::run(stowage_info() + " " + test::quote(loop.string()));
  CHECK(r.status == 1);
  CHECK(r.output == "stowage-info: " + f.message + "\n");

  // Relative, as typed: the message names it so.
  const fs::path before = fs::current_path();
  fs::current_path(tmp.path());
  f = detection_failure("./loop.n5");
  fs::current_path(before);
  CHECK(f.message ==
        "./loop.n5: cannot detect its format: cannot stat: Too many levels of symbolic links");
}

TEST_CASE("detection: a dangling symlink is not found, an unknown file is no format") {
  test::TempDir tmp;
  fs::create_symlink("gone.n5", tmp / "dangling.n5");
  test::Failure f = detection_failure((tmp / "dangling.n5").string());
  CHECK(f.code == stowage::ErrorCode::not_found);
  CHECK(f.message == (tmp / "dangling.n5").string() + ": no such file or directory");
  test::write_file(tmp / "notes.txt", "not a dataset");
  f = detection_failure((tmp / "notes.txt").string());
  CHECK(f.code == stowage::ErrorCode::unsupported);
  CHECK(f.message.rfind((tmp / "notes.txt").string() + ": no format plugin recognises it (tried: ",
                        0) == 0);
}

TEST_CASE("detection: permission denied says so") {
  // Root reads anything: as root, stowage-info runs without capabilities
  // (setpriv, of util-linux), so the mode bits stop it. It stays root rather
  // than nobody because the build tree may be private to root (CI's is 0700).
  test::TempDir tmp;
  const fs::path locked = tmp / "locked";
  make_n5(locked / "x.n5");
  const std::string path = (locked / "x.n5").string();
  std::string no_caps = ::geteuid() == 0 ? "setpriv --inh-caps=-all --bounding-set=-all " : "";
  ::chmod(locked.c_str(), 0);
  test::RunResult r = test::run(no_caps + stowage_info() + " " + test::quote(path));
  ::chmod(locked.c_str(), 0700);
  CHECK(r.status == 1);
  CHECK(r.output ==
        "stowage-info: " + path + ": cannot detect its format: cannot stat: Permission denied\n");
  if (::geteuid() != 0) {  // the API too, where the process itself is stopped
    ::chmod(locked.c_str(), 0);
    test::Failure f = detection_failure(path);
    ::chmod(locked.c_str(), 0700);
    CHECK(f.code == stowage::ErrorCode::io);
    CHECK(f.message == path + ": cannot detect its format: cannot stat: Permission denied");
  }
  CHECK(stowage::Registry::global().detect_format(path) == "n5");  // and it is an N5 container
}
