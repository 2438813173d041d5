// What a conversion that fails on the file system says: the destination as
// the user gave it and the system's reason, never a staging name
// (".stowage-convert.<pid>.<name>", ".<name>.stowage-tmp.<pid>.<n>"), and never
// "format X cannot hold ..." for what is a file-system error. A read-only
// directory and a full disk are small tmpfs mounts, which only root can make:
// as anyone else these cases are skipped (and say so).
#include "test_support.hpp"

#include <stowage/copy.hpp>

#include <doctest/doctest.h>

#include <sys/mount.h>
#include <unistd.h>

#include <random>

using stowage::json;
namespace fs = std::filesystem;

namespace {

// A tmpfs of `size` at `dir`, read-only if asked, unmounted at scope exit.
class Tmpfs {
 public:
  Tmpfs(const fs::path& dir, const std::string& size, bool read_only) : dir_(dir) {
    fs::create_directories(dir);
    if (::geteuid() != 0) return;
    mounted_ = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
    if (mounted_ && read_only &&
        ::mount("tmpfs", dir.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, ("size=" + size).c_str()) !=
            0)
      unmount();
  }
  ~Tmpfs() { unmount(); }
  Tmpfs(const Tmpfs&) = delete;
  Tmpfs& operator=(const Tmpfs&) = delete;
  bool mounted() const { return mounted_; }

 private:
  void unmount() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
    mounted_ = false;
  }
  fs::path dir_;
  bool mounted_ = false;
};

std::string convert_cmd() { return test::env_or("STOWAGE_CONVERT", "stowage-convert"); }

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A message in the user's words: no staging name, no format blamed.
void check_user_words(const std::string& message) {
  CHECK_FALSE(has(message, ".stowage-convert."));
  CHECK_FALSE(has(message, ".stowage-tmp."));
  CHECK_FALSE(has(message, "cannot hold"));
}

// A 400 x 400 float64 .npy of random values (1.28 MB, more than the full
// disk's 1 MiB whatever the codec).
std::string random_npy(const fs::path& dir) {
  const std::string path = (dir / "random.npy").string();
  stowage::Store s = stowage::Store::open(path, stowage::Mode::create, "npy");
  s.create("", {{"kind", "array"}, {"dtype", "float64"}, {"shape", {400, 400}}});
  std::vector<double> v(400 * 400);
  std::mt19937_64 rng(7);
  for (double& x : v) x = static_cast<double>(rng()) / 3.0;
  s.array("").write({0, 0}, {400, 400}, v.data());
  s.close();
  return path;
}

}  // namespace

TEST_CASE(
    "convert: into a read-only directory, the message names the destination and says read-only") {
  test::TempDir tmp;
  Tmpfs ro(tmp / "ro", "1m", true);
  if (!ro.mounted()) {
    MESSAGE("skipped: mounting a read-only tmpfs needs root");
    return;
  }
  const std::string src = (test::fixtures() / "n5" / "java-style.n5").string();
  for (const std::string dst :
       {(tmp / "ro" / "out.n5").string(), (tmp / "ro" / "sub" / "out.npy").string()}) {
    CAPTURE(dst);
    test::RunResult r = test::run(convert_cmd() + " --quiet --drop-metadata " +
                                  test::quote(src + (has(dst, ".npy") ? "::raw/uint8_2d" : "")) +
                                  " " + test::quote(dst));
    CHECK(r.status == 1);
    CHECK(r.output == "stowage-convert: " + dst + ": cannot write there: Read-only file system\n");
    check_user_words(r.output);
  }
}

TEST_CASE("convert: onto a full disk, the message names the destination and the system's reason") {
  test::TempDir tmp;
  const std::string src = random_npy(tmp.path());
  Tmpfs full(tmp / "full", "1m", false);
  if (!full.mounted()) {
    MESSAGE("skipped: mounting a 1 MiB tmpfs needs root");
    return;
  }
  for (const std::string name : {"out.npy", "out.n5", "out.datg"}) {
    CAPTURE(name);
    const std::string dst = (tmp / "full" / name).string();
    test::RunResult r =
        test::run(convert_cmd() + " --quiet " + test::quote(src) + " " + test::quote(dst));
    CHECK(r.status == 1);
    CHECK(r.output.rfind("stowage-convert: " + dst, 0) ==
          0);  // e.g. "out.n5/0/0: write failed: No space left on device"
    CHECK(has(r.output, ": No space left on device\n"));
    check_user_words(r.output);
    CHECK(fs::is_empty(tmp / "full"));  // nothing left behind
  }
}

TEST_CASE("bpcells: a matrix written onto a full disk names the matrix, not its staged directory") {
  test::TempDir tmp;
  Tmpfs full(tmp / "full", "1m", false);
  if (!full.mounted()) {
    MESSAGE("skipped: mounting a 1 MiB tmpfs needs root");
    return;
  }
  const std::string path = (tmp / "full" / "o.bpcells").string();
  test::Failure f = test::failure_of([&] {
    stowage::Store s = stowage::Store::open(path, stowage::Mode::create, "bpcells");
    s.create("", {{"kind", "sparse"},
                  {"dtype", "float64"},
                  {"shape", {1000, 300}},
                  {"layout", "csc"},
                  {"packed", false}});
    stowage::Sparse m = s.sparse("");
    stowage::SparseSlice slice;
    slice.indptr.push_back(0);
    for (uint64_t col = 0; col < 300; ++col) {
      for (uint32_t row = 0; row < 1000; ++row) slice.indices.push_back(row);
      slice.indptr.push_back(slice.indices.size());
    }
    slice.values.resize(slice.indices.size() * sizeof(double), 1);
    m.append(slice, 300);
    s.close();
  });
  CHECK(f.code == stowage::ErrorCode::io);
  CHECK(has(f.message, path + "/"));
  CHECK(has(f.message, "No space left on device"));
  check_user_words(f.message);
}

// The file backend's temporary of a 250-byte name passed the 255 bytes a
// name may have ("File name too long"), and the message blamed the format
// ("format npy cannot hold float64 array of rank 2: ...") and named the
// temporary. Once staged names are cut to fit, the conversion succeeds.
TEST_CASE(
    "convert: a destination name near the file system's limit is written, or fails in the user's words") {
  test::TempDir tmp;
  const std::string src = random_npy(tmp.path());
  const std::string dst = (tmp / (std::string(246, 'n') + ".npy")).string();  // a 250-byte name
  test::RunResult r =
      test::run(convert_cmd() + " --quiet " + test::quote(src) + " " + test::quote(dst));
  if (r.status == 0) {
    CHECK(fs::file_size(dst) == fs::file_size(src));
    return;
  }
  CHECK(r.status == 1);
  CHECK(r.output == "stowage-convert: " + dst + ": cannot create: File name too long\n");
  check_user_words(r.output);
}
