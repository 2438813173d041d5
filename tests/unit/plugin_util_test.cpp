// The SDK's file helpers every writing plugin relies on: temporaries that do
// not trip over a killed writer's leftovers, and file sets whose renames an
// interrupted writer leaves to the next opener (plugin_util.hpp).
#include "test_support.hpp"

#include <stowage/plugin_util.hpp>

#include <doctest/doctest.h>

#include <fstream>

namespace sdk = stowage::sdk;
namespace fs = std::filesystem;

namespace {
void put(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }
std::string get(const fs::path& p) { return sdk::read_file(p.string()); }
}  // namespace

TEST_CASE("a temporary whose name a killed writer holds is skipped, not an error") {
  test::TempDir tmp;
  const std::string final_path = (tmp.path() / "x.bin").string();
  // The next 64 names this process would take (".x.bin.stowage-tmp.<pid>.<n>"),
  // as a killed writer with our pid left them.
  const std::string probe = sdk::temp_path_for(final_path);
  const size_t dot = probe.rfind('.');
  const uint64_t next = std::stoull(probe.substr(dot + 1)) + 1;
  for (uint64_t n = next; n < next + 64; ++n) put(probe.substr(0, dot + 1) + std::to_string(n), "stale");
  sdk::write_file_atomic(final_path, std::string("new"));
  CHECK(get(final_path) == "new");
  std::string dir = sdk::create_temporary_directory_beside(final_path);
  CHECK(sdk::is_directory(dir));
  CHECK(get(probe.substr(0, dot + 1) + std::to_string(next)) == "stale");  // left alone
}

TEST_CASE("a file set commits as a whole; an interrupted one is finished by the next opener") {
  test::TempDir tmp;
  const fs::path a = tmp.path() / "d.msgpack", b = tmp.path() / "d.msgpack.offsets";
  put(a, "old a");
  put(b, "old b");
  {
    sdk::AtomicFile fa(a.string()), fb(b.string());
    fa.write("new a");
    fb.write("new b");
    sdk::FileSetCommit set(a.string());
    set.add(fa);
    set.add(fb);
    set.commit();
  }
  CHECK(get(a) == "new a");
  CHECK(get(b) == "new b");
  CHECK_FALSE(fs::exists(sdk::commit_journal_for(a.string())));

  // A writer killed after its first rename: the journal lists both.
  put(tmp.path() / ".t1", "newer b");
  put(a, "newer a");
  put(sdk::commit_journal_for(a.string()), ".t0\td.msgpack\n.t1\td.msgpack.offsets\n");
  CHECK(sdk::complete_file_set_commit(a.string()));
  CHECK(get(a) == "newer a");
  CHECK(get(b) == "newer b");
  CHECK_FALSE(fs::exists(sdk::commit_journal_for(a.string())));
  CHECK_FALSE(sdk::complete_file_set_commit(a.string()));  // nothing left to do
}

TEST_CASE("a commit journal naming files outside its directory is CORRUPT, and nothing is renamed") {
  test::TempDir tmp;
  const fs::path a = tmp.path() / "m.datg";
  put(a, "old");
  put(tmp.path() / ".t0", "new");
  for (const char* line : {"../x\tm.datg\n", ".t0\t/etc/passwd\n", ".t0\tsub/../../m\n", ".t0\n", "\tm.datg\n",
                           ".t0\tm.datg"}) {
    CAPTURE(line);
    put(sdk::commit_journal_for(a.string()), line);
    try {
      sdk::complete_file_set_commit(a.string());
      FAIL("accepted a bad journal");
    } catch (const sdk::Error& e) {
      CHECK(e.code() == STOWAGE_CORRUPT);
      CHECK(std::string(e.what()).find(".m.datg.stowage-commit") != std::string::npos);
    }
    CHECK(get(a) == "old");
  }
}

// Issue 21: DirectoryLock makes other processes wait (flock on the directory,
// no file created) and is released when it goes out of scope.
TEST_CASE("a DirectoryLock excludes other processes until it is released, and creates no file") {
  test::TempDir tmp;
  auto other_process_can_lock = [&] {
    pid_t pid = ::fork();
    if (pid == 0) {
      int fd = ::open(tmp.path().c_str(), O_RDONLY | O_DIRECTORY);
      ::_exit(fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0 : 1);
    }
    int st = 0;
    ::waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
  };
  CHECK(other_process_can_lock());
  {
    sdk::DirectoryLock turn(tmp.path().string());
    CHECK_FALSE(other_process_can_lock());
    CHECK(fs::is_empty(tmp.path()));
  }
  CHECK(other_process_can_lock());
  try {
    sdk::DirectoryLock missing((tmp / "missing").string());
    FAIL("locked a directory that does not exist");
  } catch (const stowage::sdk::Error& e) {
    CHECK(std::string(e.what()).find((tmp / "missing").string()) != std::string::npos);
  }
}
